/* SPDX-License-Identifier: MIT */
/* Documents: YAML/JSON parsed by libyaml into positioned trees, and written back. */
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "doc.h"

struct sbx_node *
sbx_node_new(enum sbx_node_type type)
{
	struct sbx_node *n = calloc(1, sizeof *n);

	if (n != NULL)
		n->type = type;
	return n;
}

static struct sbx_node *
scalar(const char *s, int plain)
{
	struct sbx_node *n = sbx_node_new(SBX_SCALAR);

	if (n == NULL)
		return NULL;
	if ((n->str = strdup(s)) == NULL) {
		free(n);
		return NULL;
	}
	n->plain = plain;
	return n;
}

struct sbx_node *sbx_node_str(const char *s) { return scalar(s, 0); }
struct sbx_node *sbx_node_raw(const char *s) { return scalar(s, 1); }
struct sbx_node *sbx_node_bool(int v) { return scalar(v ? "true" : "false", 1); }

struct sbx_node *
sbx_node_num(double v)
{
	char buf[64];

	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, sizeof buf, "%.0f", v);
	else
		snprintf(buf, sizeof buf, "%.6g", v);
	return scalar(buf, 1);
}

struct sbx_node *
sbx_node_int(long long v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%lld", v);
	return scalar(buf, 1);
}

void
sbx_node_free(struct sbx_node *n)
{
	size_t i;

	if (n == NULL)
		return;
	for (i = 0; i < n->n; i++)
		sbx_node_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

static int
push(struct sbx_node *p, struct sbx_node *k)
{
	struct sbx_node **nk = realloc(p->kids, (p->n + 1) * sizeof *nk);

	if (nk == NULL)
		return -1;
	p->kids = nk;
	p->kids[p->n++] = k;
	return 0;
}

int
sbx_node_add(struct sbx_node *parent, const char *key, struct sbx_node *v)
{
	struct sbx_node *k = NULL;

	if (v == NULL)
		return -1;
	if (key != NULL) {
		if ((k = sbx_node_str(key)) == NULL || push(parent, k) == -1) {
			sbx_node_free(k);
			sbx_node_free(v);
			return -1;
		}
	}
	if (push(parent, v) == -1) {
		if (k != NULL) {
			parent->n--;
			sbx_node_free(k);
		}
		sbx_node_free(v);
		return -1;
	}
	return 0;
}

struct sbx_node *
sbx_node_get(const struct sbx_node *map, const char *key)
{
	size_t i;

	if (map == NULL || map->type != SBX_MAP)
		return NULL;
	for (i = 0; i + 1 < map->n; i += 2)
		if (strcmp(map->kids[i]->str, key) == 0)
			return map->kids[i + 1];
	return NULL;
}

struct sbx_node *
sbx_node_scalar_copy(const struct sbx_node *n)
{
	return n->plain ? sbx_node_raw(n->str) : sbx_node_str(n->str);
}

int
sbx_node_err(struct sbx_err *e, const char *name, const struct sbx_node *n, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return sbx_err_set(e, SBX_EX_DATAERR, "%s:%d:%d: %s", name, n->line, n->col, msg);
}

/* Parsing */

struct parse {
	yaml_parser_t p;
	const char *name;
	struct sbx_err *e;
	int depth;
	int line0;              /* lines of the input before this parser's text */
};

static int
perr(struct parse *ps, const yaml_mark_t *m, const char *what)
{
	return sbx_err_set(ps->e, SBX_EX_DATAERR, "%s:%zu:%zu: %s", ps->name,
	    m->line + 1 + (size_t)ps->line0, m->column + 1, what);
}

static int
next(struct parse *ps, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&ps->p, ev)) {
		return sbx_err_set(ps->e, SBX_EX_DATAERR, "%s:%zu:%zu: %s", ps->name,
		    ps->p.problem_mark.line + 1 + (size_t)ps->line0, ps->p.problem_mark.column + 1,
		    ps->p.problem ? ps->p.problem : "invalid YAML");
	}
	return 0;
}

static int
tag_ok(const yaml_char_t *tag)
{
	static const char *ok[] = { "tag:yaml.org,2002:str", "tag:yaml.org,2002:int",
		"tag:yaml.org,2002:float", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null",
		"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", NULL };
	int i;

	if (tag == NULL)
		return 1;
	for (i = 0; ok[i]; i++)
		if (strcmp((const char *)tag, ok[i]) == 0)
			return 1;
	return 0;
}

static int parse_node(struct parse *ps, yaml_event_t *ev, struct sbx_node **out);

static int
parse_children(struct parse *ps, struct sbx_node *n, yaml_event_type_t end)
{
	yaml_event_t ev;
	struct sbx_node *k;
	size_t i;

	for (;;) {
		if (next(ps, &ev) == -1)
			return -1;
		if (ev.type == end) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (parse_node(ps, &ev, &k) == -1 || k == NULL)
			return -1;
		if (n->type == SBX_MAP && n->n % 2 == 0) {
			if (k->type != SBX_SCALAR) {
				yaml_mark_t m = { 0, (size_t)k->line - 1, (size_t)k->col - 1 };

				sbx_node_free(k);
				return perr(ps, &m, "mapping keys must be plain strings");
			}
			for (i = 0; i < n->n; i += 2) {
				if (strcmp(n->kids[i]->str, k->str) == 0) {
					yaml_mark_t m = { 0, (size_t)k->line - 1, (size_t)k->col - 1 };
					char msg[256];

					snprintf(msg, sizeof msg, "duplicate key '%.100s'", k->str);
					sbx_node_free(k);
					return perr(ps, &m, msg);
				}
			}
		}
		if (push(n, k) == -1) {
			sbx_node_free(k);
			return sbx_err_set(ps->e, SBX_EX_OSERR, "out of memory");
		}
	}
}

/* Consumes ev. */
static int
parse_node(struct parse *ps, yaml_event_t *ev, struct sbx_node **out)
{
	struct sbx_node *n = NULL;
	yaml_mark_t m = ev->start_mark;
	const yaml_char_t *tag = NULL, *anchor = NULL;
	int r = 0;

	*out = NULL;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		yaml_event_delete(ev);
		return perr(ps, &m, "YAML aliases are not allowed");
	case YAML_SCALAR_EVENT:
		tag = ev->data.scalar.tag;
		anchor = ev->data.scalar.anchor;
		break;
	case YAML_SEQUENCE_START_EVENT:
		tag = ev->data.sequence_start.tag;
		anchor = ev->data.sequence_start.anchor;
		break;
	case YAML_MAPPING_START_EVENT:
		tag = ev->data.mapping_start.tag;
		anchor = ev->data.mapping_start.anchor;
		break;
	default:
		yaml_event_delete(ev);
		return perr(ps, &m, "unexpected YAML event");
	}
	if (anchor != NULL) {
		yaml_event_delete(ev);
		return perr(ps, &m, "YAML anchors and aliases are not allowed");
	}
	if (!tag_ok(tag)) {
		yaml_event_delete(ev);
		return perr(ps, &m, "YAML tags other than the core schema's are not allowed");
	}
	if (++ps->depth > 32) {
		yaml_event_delete(ev);
		return perr(ps, &m, "document nested too deeply");
	}
	if (ev->type == YAML_SCALAR_EVENT) {
		n = scalar((const char *)ev->data.scalar.value,
		    ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && tag == NULL);
		if (n != NULL && strlen(n->str) != ev->data.scalar.length) {
			sbx_node_free(n);
			yaml_event_delete(ev);
			return perr(ps, &m, "NUL byte in a string");
		}
	} else {
		n = sbx_node_new(ev->type == YAML_MAPPING_START_EVENT ? SBX_MAP : SBX_SEQ);
	}
	if (n == NULL) {
		yaml_event_delete(ev);
		return sbx_err_set(ps->e, SBX_EX_OSERR, "out of memory");
	}
	n->line = (int)m.line + 1 + ps->line0;
	n->col = (int)m.column + 1;
	if (ev->type == YAML_SEQUENCE_START_EVENT)
		r = parse_children(ps, n, YAML_SEQUENCE_END_EVENT);
	else if (ev->type == YAML_MAPPING_START_EVENT)
		r = parse_children(ps, n, YAML_MAPPING_END_EVENT);
	yaml_event_delete(ev);
	ps->depth--;
	if (r == -1) {
		sbx_node_free(n);
		return -1;
	}
	*out = n;
	return 0;
}

/* One document of the stream, its DOCUMENT-START consumed: a mapping. */
static int
parse_document(struct parse *ps, struct sbx_node **out)
{
	yaml_event_t ev;
	struct sbx_node *doc = NULL;

	*out = NULL;
	if (next(ps, &ev) == -1 || parse_node(ps, &ev, &doc) == -1 || doc == NULL)
		return -1;
	if (next(ps, &ev) == -1) {
		sbx_node_free(doc);
		return -1;
	}
	yaml_event_delete(&ev);  /* DOCUMENT-END */
	if (doc->type != SBX_MAP) {
		sbx_err_set(ps->e, SBX_EX_DATAERR, "%s:%d:%d: the document must be a mapping",
		    ps->name, doc->line, doc->col);
		sbx_node_free(doc);
		return -1;
	}
	*out = doc;
	return 0;
}

/* Every document of buf, at most max; line0: lines before buf in its input. */
static int
parse_stream(const char *name, int line0, const char *buf, size_t len, size_t max,
    struct sbx_node ***docs, size_t *n, struct sbx_err *e)
{
	struct parse ps = { .name = name, .e = e, .line0 = line0 };
	yaml_event_t ev;
	struct sbx_node *doc, **grown;
	size_t first = *n;
	int r = -1;

	if (!yaml_parser_initialize(&ps.p))
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	yaml_parser_set_input_string(&ps.p, (const unsigned char *)buf, len);
	if (next(&ps, &ev) == -1)
		goto out;
	yaml_event_delete(&ev);  /* STREAM-START */
	for (;;) {
		if (next(&ps, &ev) == -1)
			goto out;
		if (ev.type == YAML_STREAM_END_EVENT)
			break;
		if (*n - first == max) {
			perr(&ps, &ev.start_mark, max == 1 ? "only one document is allowed" :
			    "too many documents");
			yaml_event_delete(&ev);
			goto out;
		}
		yaml_event_delete(&ev);  /* DOCUMENT-START */
		if (parse_document(&ps, &doc) == -1)
			goto out;
		if ((grown = realloc(*docs, (*n + 1) * sizeof *grown)) == NULL) {
			sbx_node_free(doc);
			sbx_err_set(e, SBX_EX_OSERR, "out of memory");
			goto out;
		}
		*docs = grown;
		(*docs)[(*n)++] = doc;
	}
	yaml_event_delete(&ev);
	r = 0;
out:
	yaml_parser_delete(&ps.p);
	return r;
}

static void
docs_free(struct sbx_node **docs, size_t n)
{
	while (n > 0)
		sbx_node_free(docs[--n]);
	free(docs);
}

int
sbx_doc_parse(const char *name, const char *buf, size_t len, struct sbx_node **root,
    struct sbx_err *e)
{
	struct sbx_node **docs = NULL;
	size_t n = 0;

	*root = NULL;
	if (len > SBX_DOC_MAX)
		return sbx_err_set(e, SBX_EX_DATAERR, "%s:1:1: document is larger than 1 MiB", name);
	if (parse_stream(name, 0, buf, len, 1, &docs, &n, e) == -1) {
		docs_free(docs, n);
		return -1;
	}
	if (n == 0) {
		free(docs);
		return sbx_err_set(e, SBX_EX_DATAERR, "%s:1:1: empty document", name);
	}
	*root = docs[0];
	free(docs);
	return 0;
}

/* The first byte of [p, end) that is no blank (space, tab, CR; newlines too if nl). */
static const char *
skip_blank(const char *p, const char *end, int nl)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || (nl && *p == '\n')))
		p++;
	return p;
}

/* Whether buf starts with a JSON object alone on its line, as JSON streams print them. */
static int
json_line(const char *buf, size_t len)
{
	const char *p = skip_blank(buf, buf + len, 1), *nl;
	struct sbx_node **docs = NULL;
	struct sbx_err e;
	size_t n = 0;
	int r;

	if (p == buf + len || *p != '{')
		return 0;
	nl = memchr(p, '\n', (size_t)(buf + len - p));
	r = parse_stream("", 0, p, nl ? (size_t)(nl - p) : (size_t)(buf + len - p), 1, &docs, &n,
	    &e) == 0 && n == 1;
	docs_free(docs, n);
	return r;
}

int
sbx_doc_parse_stream(const char *name, const char *buf, size_t len, struct sbx_node ***docs,
    size_t *n, struct sbx_err *e)
{
	const char *p, *end = buf + len, *nl;
	int line = 0;

	*docs = NULL;
	*n = 0;
	if (len > SBX_DOC_MAX)
		return sbx_err_set(e, SBX_EX_DATAERR, "%s:1:1: input is larger than 1 MiB", name);
	if (!json_line(buf, len)) {
		if (parse_stream(name, 0, buf, len, SIZE_MAX, docs, n, e) == 0)
			return 0;
		goto fail;
	}
	/* JSON lines: each a document of its own (YAML would refuse the second). */
	for (p = buf; p < end; p = nl + 1, line++) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if (skip_blank(p, nl, 0) < nl &&
		    parse_stream(name, line, p, (size_t)(nl - p), 1, docs, n, e) == -1)
			goto fail;
	}
	return 0;
fail:
	docs_free(*docs, *n);
	*docs = NULL;
	*n = 0;
	return -1;
}

void
sbx_docs_free(struct sbx_node **docs, size_t n)
{
	docs_free(docs, n);
}

/* Emitting */

static void
emit_string(FILE *f, const char *s)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void
emit_scalar(FILE *f, const struct sbx_node *n)
{
	if (n->plain)
		fputs(n->str, f);
	else
		emit_string(f, n->str);
}

static void
emit_json(FILE *f, const struct sbx_node *n)
{
	size_t i;

	if (n->type == SBX_SCALAR) {
		emit_scalar(f, n);
		return;
	}
	fputc(n->type == SBX_MAP ? '{' : '[', f);
	for (i = 0; i < n->n; i++) {
		if (i > 0)
			fputc(n->type == SBX_MAP && i % 2 ? ':' : ',', f);
		emit_json(f, n->kids[i]);
	}
	fputc(n->type == SBX_MAP ? '}' : ']', f);
}

static int
is_flat(const struct sbx_node *n)
{
	size_t i;

	for (i = 0; i < n->n; i++)
		if (n->kids[i]->type != SBX_SCALAR)
			return 0;
	return n->type == SBX_SEQ || n->n == 0;
}

/* first_inline: the first entry continues the current line ("- key: v"). */
static void
emit_yaml(FILE *f, const struct sbx_node *n, int indent, int first_inline)
{
	size_t i;

	for (i = 0; i < n->n; i += n->type == SBX_MAP ? 2 : 1) {
		const struct sbx_node *v = n->type == SBX_MAP ? n->kids[i + 1] : n->kids[i];

		if (i > 0 || !first_inline)
			fprintf(f, "%*s", indent, "");
		if (n->type == SBX_MAP) {
			fputs(n->kids[i]->str, f);
			fputc(':', f);
		} else {
			fputc('-', f);
		}
		if (v->type == SBX_SCALAR) {
			fputc(' ', f);
			emit_scalar(f, v);
			fputc('\n', f);
		} else if (is_flat(v)) {
			/* Short lists and empty mappings read best in flow style. */
			fputc(' ', f);
			emit_json(f, v);
			fputc('\n', f);
		} else if (n->type == SBX_SEQ && v->type == SBX_MAP) {
			fputc(' ', f);
			emit_yaml(f, v, indent + 2, 1);
		} else {
			fputc('\n', f);
			emit_yaml(f, v, indent + 2, 0);
		}
	}
}

int
sbx_doc_emit(FILE *f, const struct sbx_node *root, enum sbx_format fmt)
{
	if (fmt == SBX_FMT_JSON) {
		emit_json(f, root);
		fputc('\n', f);
	} else {
		emit_yaml(f, root, 0, 0);
	}
	return ferror(f) ? -1 : 0;
}

int
sbx_format_parse(const char *s, enum sbx_format *fmt)
{
	if (strcmp(s, "yaml") == 0)
		*fmt = SBX_FMT_YAML;
	else if (strcmp(s, "json") == 0)
		*fmt = SBX_FMT_JSON;
	else if (strcmp(s, "id") == 0)
		*fmt = SBX_FMT_ID;
	else
		return -1;
	return 0;
}

int
sbx_doc_emit_tree(FILE *f, struct sbx_node *root, enum sbx_format fmt)
{
	int r;

	if (root == NULL)
		return -1;
	r = sbx_doc_emit(f, root, fmt);
	sbx_node_free(root);
	return r;
}

int
sbx_doc_render(const struct sbx_node *root, enum sbx_format fmt, char **buf, size_t *len)
{
	FILE *f;
	int r;

	*buf = NULL;
	*len = 0;
	if ((f = open_memstream(buf, len)) == NULL)
		return -1;
	r = sbx_doc_emit(f, root, fmt);
	if (fclose(f) == EOF || r == -1) {
		free(*buf);
		*buf = NULL;
		return -1;
	}
	if (fmt == SBX_FMT_JSON && *len > 0 && (*buf)[*len - 1] == '\n')
		(*buf)[--*len] = '\0';
	return 0;
}
