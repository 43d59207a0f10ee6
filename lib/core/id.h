/* SPDX-License-Identifier: MIT */
/* Sandbox and snapshot IDs: generated, validated before they become paths, read from stdin. */
#ifndef SBX_ID_H
#define SBX_ID_H

#include <stddef.h>

#include "error.h"

#define SBX_ID_MAX 64

/* An ID is 1..64 of [A-Za-z0-9._-], starting with a letter or digit. */
int sbx_id_valid(const char *id);
/* Same, with an error naming what was wrong (exit 65). */
int sbx_id_check(const char *id, struct sbx_err *e);
/* A fresh random ID: prefix + 8 hex digits ("sbx-a1b2c3d4"). */
int sbx_id_new(const char *prefix, char *out, size_t size, struct sbx_err *e);
/* A list of keys for the functions below: SBX_KEYS("snapshot_id", "sandbox_id"). */
#define SBX_KEYS(...) ((const char *const[]){ __VA_ARGS__, NULL })

enum {
	SBX_IDS_ONE = 1,        /* exactly one ID: more, or none, is an error */
	SBX_IDS_HEAD = 2,       /* read the first record only, leave the rest of fd unread */
};

struct sbx_ids {
	char **v;
	size_t n;
};

/*
 * What a program reads where its ID operands are missing or "-" (SPEC §2):
 * IDs one a line, or state documents (a YAML document or stream, JSON objects
 * one a line), each of which is one operand: its ID is the value of the first
 * of keys that the document has. Which of the two buf is, its first line with
 * text decides (a bare ID, or not). Empty input is no ID. Errors are 65,
 * naming the line: a line that is no ID in a list, a document without the
 * keys, more than 1 MiB.
 */
int sbx_ids_parse(const char *name, const char *buf, size_t len, const char *const *keys,
    int flags, struct sbx_ids *ids, struct sbx_err *e);
/* The same read from fd; with SBX_IDS_HEAD only up to the first record's end
 * (a line, or a YAML document's "---" or "..."), so the rest stays for others. */
int sbx_ids_read(int fd, const char *name, const char *const *keys, int flags,
    struct sbx_ids *ids, struct sbx_err *e);
void sbx_ids_free(struct sbx_ids *ids);
/*
 * The one ID operand of a program: arg itself, or when arg is NULL or "-",
 * the one ID on stdin (sbx_ids_read). When stdin is a terminal and no operand
 * was given, the error code is 64.
 */
int sbx_id_from_arg_or_stdin(const char *arg, const char *const *keys, char *out, size_t size,
    struct sbx_err *e);

#endif
