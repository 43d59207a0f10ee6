/* SPDX-License-Identifier: MIT */
/* Sandbox and snapshot IDs: generated, validated before they become paths, read from stdin. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

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

/* Pull the value of `key:` or `"key":` out of a YAML/JSON document, without a full parse. */
static int
id_from_document(const char *doc, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);
	const char *p = doc, *v, *end;

	while ((p = strstr(p, key)) != NULL) {
		int quoted = p > doc && p[-1] == '"';
		const char *line = p - quoted;

		/* Top level only: the key starts its line (YAML) or follows '{' / ',' (JSON). */
		while (line > doc && (line[-1] == ' ' || line[-1] == '\t'))
			line--;
		v = p + klen + (quoted && p[klen] == '"');
		if ((line == doc || line[-1] == '\n' || line[-1] == '{' || line[-1] == ',') &&
		    *v == ':') {
			v++;
			v += strspn(v, " \t");
			if (*v == '"' || *v == '\'')
				v++;
			end = v + strcspn(v, "\"', \t\r\n}");
			if ((size_t)(end - v) < size && end > v) {
				memcpy(out, v, (size_t)(end - v));
				out[end - v] = '\0';
				return 0;
			}
		}
		p += klen;
	}
	return -1;
}

int
sbx_id_from_arg_or_stdin(const char *arg, const char *key, char *out, size_t size,
    struct sbx_err *e)
{
	char *buf = NULL;
	size_t len;
	int r;

	if (arg != NULL && strcmp(arg, "-") != 0) {
		if (sbx_id_check(arg, e) == -1)
			return -1;
		return sbx_path(out, size, e, "%s", arg);
	}
	if (arg == NULL && isatty(STDIN_FILENO))
		return sbx_err_set(e, SBX_EX_USAGE, "no ID given and stdin is a terminal");
	if (sbx_read_fd(STDIN_FILENO, 1 << 20, &buf, &len, "stdin", e) == -1)
		return -1;
	r = sbx_id_from_text(buf, key, out, size, e);
	free(buf);
	return r;
}

int
sbx_id_from_text(const char *text, const char *key, char *out, size_t size, struct sbx_err *e)
{
	const char *line = text + strspn(text, " \t\r\n");
	size_t n;

	if (size == 0)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "no room for an ID");
	if (strchr(line, ':') != NULL) {
		if (id_from_document(line, key, out, size) == -1)
			return sbx_err_set(e, SBX_EX_DATAERR, "stdin: document has no %s", key);
	} else {
		n = strcspn(line, " \t\r\n");
		if (n == 0)
			return sbx_err_set(e, SBX_EX_DATAERR, "stdin: no ID");
		if (n >= size)
			return sbx_err_set(e, SBX_EX_DATAERR, "stdin: ID too long");
		memcpy(out, line, n);
		out[n] = '\0';
	}
	return sbx_id_check(out, e);
}
