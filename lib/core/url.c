/* SPDX-License-Identifier: MIT */
/* Storage URLs: see url.h. */
#include <ctype.h>
#include <string.h>

#include "url.h"

static int
bucket_ok(const char *b, size_t n)
{
	size_t i;

	if (n < 3 || n > 63 || !isalnum((unsigned char)b[0]) || !isalnum((unsigned char)b[n - 1]))
		return 0;
	for (i = 0; i < n; i++)
		if (!(islower((unsigned char)b[i]) || isdigit((unsigned char)b[i]) || b[i] == '-' ||
		    b[i] == '.') || (b[i] == '.' && b[i + 1] == '.'))
			return 0;
	return 1;
}

int
sbx_url_s3_key_ok(const char *k)
{
	const char *c = k, *q;

	if (*k == '\0')
		return 1;
	for (q = k; *q; q++)
		if (!(isalnum((unsigned char)*q) || *q == '.' || *q == '_' || *q == '-' || *q == '/'))
			return 0;
	for (;;) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return c[n] == '\0' && n == 0 && c != k;
		if (c[n] == '\0')
			return 1;
		c += n + 1;
	}
}

int
sbx_url_s3_check(const char *url, struct sbx_err *e)
{
	const char *b, *slash;
	size_t n;

	if (strncmp(url, "s3://", 5) != 0)
		return sbx_err_set(e, SBX_EX_DATAERR, "'%s': not an s3://BUCKET/PREFIX URL", url);
	b = url + 5;
	slash = strchr(b, '/');
	n = slash ? (size_t)(slash - b) : strlen(b);
	if (!bucket_ok(b, n))
		return sbx_err_set(e, SBX_EX_DATAERR, "'%s': '%.*s' is not a bucket name (3 to 63 "
		    "of a-z 0-9 . -)", url, (int)n, b);
	if (slash && (strlen(slash + 1) > 512 || !sbx_url_s3_key_ok(slash + 1)))
		return sbx_err_set(e, SBX_EX_DATAERR, "'%s': the prefix may hold letters, digits and "
		    ". _ - / (no empty, . or .. parts, at most 512)", url);
	return 0;
}
