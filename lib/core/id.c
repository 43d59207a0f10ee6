/* SPDX-License-Identifier: MIT */
/* Sandbox and snapshot IDs: generated, validated before they become paths, read from stdin. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "doc.h"
#include "id.h"
#include "util.h"

int
sbx_id_valid(const char *id)
{
	size_t i, n = strlen(id);

	if (n == 0 || n > SBX_ID_MAX || !isalnum((unsigned char)id[0]))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)id[i]) && id[i] != '.' && id[i] != '_' && id[i] != '-')
			return 0;
	return 1;
}

int
sbx_id_check(const char *id, struct sbx_err *e)
{
	if (sbx_id_valid(id))
		return 0;
	return sbx_err_set(e, SBX_EX_DATAERR,
	    "invalid ID '%.80s': want 1-%d of A-Z a-z 0-9 . _ -, starting with a letter or digit",
	    id, SBX_ID_MAX);
}

int
sbx_id_new(const char *prefix, char *out, size_t size, struct sbx_err *e)
{
	unsigned char r[4];

	if (getrandom(r, sizeof r, 0) != sizeof r)
		return sbx_err_sys(e, SBX_EX_OSERR, "getrandom");
	return sbx_path(out, size, e, "%s%02x%02x%02x%02x", prefix, r[0], r[1], r[2], r[3]);
}

void
sbx_ids_free(struct sbx_ids *ids)
{
	while (ids->n > 0)
		free(ids->v[--ids->n]);
	free(ids->v);
	ids->v = NULL;
}

static int
ids_add(struct sbx_ids *ids, const char *id, size_t len, struct sbx_err *e)
{
	char **grown = realloc(ids->v, (ids->n + 1) * sizeof *grown);

	if (grown == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	ids->v = grown;
	if ((ids->v[ids->n] = strndup(id, len)) == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	ids->n++;
	return 0;
}

/* [p, end) without leading and trailing blanks. */
static void
trim(const char **p, const char **end)
{
	while (*p < *end && isspace((unsigned char)**p))
		(*p)++;
	while (*end > *p && isspace((unsigned char)(*end)[-1]))
		(*end)--;
}

/* Whether [p, end) is one bare ID. */
static int
is_id(const char *p, const char *end)
{
	char id[SBX_ID_MAX + 1];

	if (end - p > SBX_ID_MAX || end == p)
		return 0;
	memcpy(id, p, (size_t)(end - p));
	id[end - p] = '\0';
	return sbx_id_valid(id);
}

/* The first line of buf with text on it, trimmed; NULL when there is none. */
static const char *
first_line(const char *buf, size_t len, const char **end)
{
	const char *p = buf, *stop = buf + len, *nl;

	while (p < stop) {
		nl = memchr(p, '\n', (size_t)(stop - p));
		*end = nl ? nl : stop;
		trim(&p, end);
		if (p < *end)
			return p;
		p = nl ? nl + 1 : stop;
	}
	return NULL;
}

static int
ids_from_lines(const char *name, const char *buf, size_t len, struct sbx_ids *ids,
    struct sbx_err *e)
{
	const char *p = buf, *stop = buf + len, *nl, *end;
	char id[96];
	int line = 1;

	for (; p < stop; p = nl + 1, line++) {
		if ((nl = memchr(p, '\n', (size_t)(stop - p))) == NULL)
			nl = stop;
		end = nl;
		trim(&p, &end);
		if (p == end)
			continue;
		if (!is_id(p, end)) {
			snprintf(id, sizeof id, "%.*s", (int)(end - p), p);
			return sbx_err_set(e, SBX_EX_DATAERR, "%s:%d: '%.80s' is neither an ID nor a "
			    "YAML/JSON document", name, line, id);
		}
		if (ids_add(ids, p, (size_t)(end - p), e) == -1)
			return -1;
	}
	return 0;
}

/* keys as "a or b" for messages. */
static void
keys_text(const char *const *keys, char *out, size_t size)
{
	size_t i, n = 0;

	out[0] = '\0';
	for (i = 0; keys[i] != NULL && n < size; i++)
		n += (size_t)snprintf(out + n, size - n, "%s%s", i ? " or " : "", keys[i]);
}

static int
ids_from_docs(const char *name, const char *buf, size_t len, const char *const *keys,
    struct sbx_ids *ids, struct sbx_err *e)
{
	struct sbx_node **docs, *v = NULL;
	size_t n, i, k;
	char want[128];
	int r = -1;

	if (sbx_doc_parse_stream(name, buf, len, &docs, &n, e) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		for (k = 0; keys[k] != NULL && (v = sbx_node_get(docs[i], keys[k])) == NULL; k++)
			;
		if (v == NULL) {
			keys_text(keys, want, sizeof want);
			sbx_node_err(e, name, docs[i], "the document has no %s", want);
			goto out;
		}
		if (v->type != SBX_SCALAR || sbx_id_check(v->str, e) == -1) {
			sbx_node_err(e, name, v, "%s is not an ID", keys[k]);
			goto out;
		}
		if (ids_add(ids, v->str, strlen(v->str), e) == -1)
			goto out;
	}
	r = 0;
out:
	sbx_docs_free(docs, n);
	return r;
}

int
sbx_ids_parse(const char *name, const char *buf, size_t len, const char *const *keys, int flags,
    struct sbx_ids *ids, struct sbx_err *e)
{
	const char *line, *end;
	int r;

	ids->v = NULL;
	ids->n = 0;
	if (len > SBX_DOC_MAX)
		return sbx_err_set(e, SBX_EX_DATAERR, "%s: larger than 1 MiB", name);
	/* A bare ID on the first line with text makes a list of IDs; anything
	 * else is documents (an ID has no ':', '{', '-' or '#' to start it). */
	if ((line = first_line(buf, len, &end)) == NULL)
		r = 0;
	else if (is_id(line, end))
		r = ids_from_lines(name, buf, len, ids, e);
	else
		r = ids_from_docs(name, buf, len, keys, ids, e);
	if (r == 0 && (flags & SBX_IDS_ONE) && ids->n != 1)
		r = ids->n == 0 ? sbx_err_set(e, SBX_EX_DATAERR, "%s: no ID", name) :
		    sbx_err_set(e, SBX_EX_DATAERR, "%s: %zu IDs, where one is wanted", name, ids->n);
	if (r == -1)
		sbx_ids_free(ids);
	return r;
}

/* Append one line of fd (its newline too) to b, byte by byte; 0 at the end. */
static int
read_line(int fd, char **b, size_t *len, size_t *cap, struct sbx_err *e)
{
	char c, *grown;
	ssize_t r;
	size_t start = *len;

	for (;;) {
		if ((r = read(fd, &c, 1)) == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return sbx_err_sys(e, SBX_EX_IOERR, "stdin");
		if (r == 0)
			return *len > start;
		if (*len + 2 > *cap) {
			if (*cap > SBX_DOC_MAX)
				return sbx_err_set(e, SBX_EX_DATAERR, "stdin: larger than 1 MiB");
			if ((grown = realloc(*b, *cap * 2 + 256)) == NULL)
				return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
			*b = grown;
			*cap = *cap * 2 + 256;
		}
		(*b)[(*len)++] = c;
		(*b)[*len] = '\0';
		if (c == '\n')
			return 1;
	}
}

static int
is_marker(const char *p, size_t n, const char *marker)
{
	const char *end = p + n;

	trim(&p, &end);
	return (size_t)(end - p) == strlen(marker) && memcmp(p, marker, strlen(marker)) == 0;
}

/*
 * The first record of fd and no more: a line with an ID or a JSON object, or a
 * YAML document up to the next "---" (read, not kept) or "...", or the end.
 */
static int
read_head(int fd, char **b, size_t *len, struct sbx_err *e)
{
	size_t cap = 0, start;
	const char *end, *p;
	int r, content = 0;

	*b = NULL;
	*len = 0;
	for (;;) {
		start = *len;
		if ((r = read_line(fd, b, len, &cap, e)) <= 0)
			return r;
		p = *b + start;
		end = *b + *len;
		trim(&p, &end);
		if (p == end)
			continue;
		if (!content && (*p == '{' || is_id(p, end)))
			return 0;
		if (is_marker(p, (size_t)(end - p), "---")) {
			if (!content)
				continue;
			*len = start;
			(*b)[start] = '\0';
			return 0;
		}
		if (is_marker(p, (size_t)(end - p), "..."))
			return 0;
		content = 1;
	}
}

int
sbx_ids_read(int fd, const char *name, const char *const *keys, int flags, struct sbx_ids *ids,
    struct sbx_err *e)
{
	char *buf = NULL;
	size_t len = 0;
	int r;

	ids->v = NULL;
	ids->n = 0;
	r = flags & SBX_IDS_HEAD ? read_head(fd, &buf, &len, e) :
	    sbx_read_fd(fd, SBX_DOC_MAX, &buf, &len, name, e);
	if (r == 0)
		r = sbx_ids_parse(name, buf ? buf : "", len, keys, flags, ids, e);
	free(buf);
	return r;
}

int
sbx_id_from_arg_or_stdin(const char *arg, const char *const *keys, char *out, size_t size,
    struct sbx_err *e)
{
	struct sbx_ids ids;
	int r;

	if (arg != NULL && strcmp(arg, "-") != 0) {
		if (sbx_id_check(arg, e) == -1)
			return -1;
		return sbx_path(out, size, e, "%s", arg);
	}
	if (arg == NULL && isatty(STDIN_FILENO))
		return sbx_err_set(e, SBX_EX_USAGE, "no ID given and stdin is a terminal");
	if (sbx_ids_read(STDIN_FILENO, "stdin", keys, SBX_IDS_ONE, &ids, e) == -1)
		return -1;
	if (ids.n == 0) {
		sbx_ids_free(&ids);
		return sbx_err_set(e, SBX_EX_DATAERR, "stdin: no ID");
	}
	r = sbx_path(out, size, e, "%s", ids.v[0]);
	sbx_ids_free(&ids);
	return r;
}
