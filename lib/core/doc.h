/* SPDX-License-Identifier: MIT */
/*
 * Documents: YAML or JSON parsed by libyaml into a tree whose nodes remember
 * their line and column, and trees written back as YAML or JSON. Aliases,
 * custom tags, duplicate keys, several documents and inputs over 1 MiB are
 * refused here, so every reader above gets the same strictness.
 */
#ifndef SBX_DOC_H
#define SBX_DOC_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

#define SBX_DOC_MAX (1 << 20)

enum sbx_node_type { SBX_SCALAR, SBX_SEQ, SBX_MAP };

struct sbx_node {
	enum sbx_node_type type;
	char *str;              /* scalar text */
	int plain;              /* scalar was (or is to be written) unquoted */
	int line, col;          /* 1-based position in the source, 0 when built */
	struct sbx_node **kids; /* SEQ: items; MAP: key, value, key, value... */
	size_t n;
};

enum sbx_format { SBX_FMT_ID, SBX_FMT_YAML, SBX_FMT_JSON };

/* Parse buf (named `name` in messages). Errors are "name:line:col: reason", code 65. */
int sbx_doc_parse(const char *name, const char *buf, size_t len, struct sbx_node **root,
    struct sbx_err *e);
/*
 * Every document of buf: a YAML stream ("---" between documents), or JSON
 * objects one a line (which YAML alone would refuse after the first). Each must
 * be a mapping; the same strictness as sbx_doc_parse, 1 MiB for the whole.
 * Zero documents is no error. Free with sbx_docs_free.
 */
int sbx_doc_parse_stream(const char *name, const char *buf, size_t len, struct sbx_node ***docs,
    size_t *n, struct sbx_err *e);
void sbx_docs_free(struct sbx_node **docs, size_t n);
void sbx_node_free(struct sbx_node *n);

/* Building trees for output. Functions return NULL only when out of memory. */
struct sbx_node *sbx_node_new(enum sbx_node_type type);
struct sbx_node *sbx_node_str(const char *s);          /* quoted string */
struct sbx_node *sbx_node_raw(const char *s);          /* plain: number, bool, null */
struct sbx_node *sbx_node_num(double v);
struct sbx_node *sbx_node_int(long long v);
struct sbx_node *sbx_node_bool(int v);
/* Append to a SEQ (key NULL) or a MAP; takes ownership of v; -1 when out of memory. */
int sbx_node_add(struct sbx_node *parent, const char *key, struct sbx_node *v);
/* The value under key in a MAP, or NULL. */
struct sbx_node *sbx_node_get(const struct sbx_node *map, const char *key);
/* A copy of a scalar, plain or quoted as it was; NULL: out of memory. */
struct sbx_node *sbx_node_scalar_copy(const struct sbx_node *n);
/* Exit 65 naming the document and n's place in it: "NAME:LINE:COL: message". */
int sbx_node_err(struct sbx_err *e, const char *name, const struct sbx_node *n,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Write the tree to f as a YAML block document or as one line of JSON. */
int sbx_doc_emit(FILE *f, const struct sbx_node *root, enum sbx_format fmt);
/* The same for a tree just built, which it frees (NULL, a failed build: -1). */
int sbx_doc_emit_tree(FILE *f, struct sbx_node *root, enum sbx_format fmt);
/* The tree as text in *buf (malloc'd, *len bytes, NUL-terminated; JSON's
 * one line without its newline); -1 when out of memory. */
int sbx_doc_render(const struct sbx_node *root, enum sbx_format fmt, char **buf, size_t *len);
/* Parse "yaml" / "json" (the -o option). */
int sbx_format_parse(const char *s, enum sbx_format *fmt);

#endif
