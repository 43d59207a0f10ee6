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
/*
 * The ID operand of a program: arg itself, or when arg is NULL or "-", the first
 * line of stdin (a bare ID, or a YAML/JSON state document's sandbox_id). When
 * stdin is a terminal and no operand was given, the error code is 64.
 */
int sbx_id_from_arg_or_stdin(const char *arg, const char *key, char *out, size_t size,
    struct sbx_err *e);
/* The ID in text: a bare ID on its first line, or a document's `key`. */
int sbx_id_from_text(const char *text, const char *key, char *out, size_t size,
    struct sbx_err *e);

#endif
