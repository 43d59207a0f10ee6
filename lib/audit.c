/* SPDX-License-Identifier: MIT */
/* Audit log: hash-chained JSON lines, appended under a lock. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "doc.h"
#include "id.h"
#include "sha256.h"
#include "util.h"

static char correlation[128];

void
sbx_audit_set_correlation(const char *id)
{
	snprintf(correlation, sizeof correlation, "%s", id);
}

const char *
sbx_audit_correlation(void)
{
	const char *env;

	if (correlation[0] == '\0') {
		if ((env = getenv("SBX_CORRELATION_ID")) != NULL && *env)
			sbx_audit_set_correlation(env);
		else if (sbx_id_new("c-", correlation, sizeof correlation, NULL) == -1)
			snprintf(correlation, sizeof correlation, "c-%ld", (long)getpid());
	}
	return correlation;
}

static void
json_str(FILE *f, const char *s)
{
	struct sbx_node n = { .type = SBX_SCALAR, .str = (char *)s };

	sbx_doc_emit(f, &n, SBX_FMT_JSON);
}

/* The body of a line: everything before ,"hash":"...". */
static char *
body_of(const char *line, char hash[65])
{
	const char *h = strstr(line, ",\"hash\":\"");
	char *b;

	if (h == NULL || strlen(h) != 9 + 64 + 2 || strcmp(h + 9 + 64, "\"}") != 0)
		return NULL;
	memcpy(hash, h + 9, 64);
	hash[64] = '\0';
	if ((b = strndup(line, (size_t)(h - line))) == NULL)
		return NULL;
	return b;
}

/* Last line's hash and seq (zeros for an empty log). */
static int
tail(int fd, char prev[65], long long *seq)
{
	char buf[8192], *line, *body;
	off_t end = lseek(fd, 0, SEEK_END), start;
	ssize_t n;
	char *p;

	memset(prev, '0', 64);
	prev[64] = '\0';
	*seq = 0;
	if (end <= 0)
		return 0;
	start = end > (off_t)sizeof buf - 1 ? end - (off_t)sizeof buf + 1 : 0;
	if ((n = pread(fd, buf, (size_t)(end - start), start)) <= 0)
		return -1;
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	line = (p = strrchr(buf, '\n')) ? p + 1 : buf;
	if ((body = body_of(line, prev)) == NULL)
		return -1;
	p = strstr(body, "{\"seq\":");
	*seq = p ? strtoll(p + 7, NULL, 10) : 0;
	free(body);
	return 0;
}

static int
append(const struct sbx_store *s, const char *sandbox, const char *event,
    const char *outcome, const char *detail, int sync, struct sbx_err *e)
{
	char path[1100], prev[65], hash[65], now[32];
	char *body = NULL;
	size_t len = 0;
	long long seq;
	FILE *f;
	int fd, r = -1;

	snprintf(path, sizeof path, "%s/audit.log", s->root);
	if ((fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", path);
	if (flock(fd, LOCK_EX) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "lock %s", path);
		goto out;
	}
	if (tail(fd, prev, &seq) == -1) {
		sbx_err_set(e, SBX_EX_SOFTWARE, "%s: last line is damaged; see sbx-gc --verify-audit",
		    path);
		goto out;
	}
	sbx_time_rfc3339(now, sizeof now, time(NULL));
	if ((f = open_memstream(&body, &len)) == NULL) {
		sbx_err_sys(e, SBX_EX_OSERR, "open_memstream");
		goto out;
	}
	fprintf(f, "{\"seq\":%lld,\"time\":\"%s\",\"sandbox\":", seq + 1, now);
	json_str(f, sandbox ? sandbox : "");
	fputs(",\"event\":", f);
	json_str(f, event);
	fputs(",\"correlation_id\":", f);
	json_str(f, sbx_audit_correlation());
	fputs(",\"outcome\":", f);
	json_str(f, outcome);
	if (detail != NULL) {
		fputs(",\"detail\":", f);
		json_str(f, detail);
	}
	fprintf(f, ",\"pid\":%ld,\"prev\":\"%s\"", (long)getpid(), prev);
	fclose(f);
	/* json_str ends each value with a newline: strip them. */
	{
		char *w = body, *q;

		for (q = body; *q; q++)
			if (*q != '\n')
				*w++ = *q;
		*w = '\0';
	}
	sbx_sha256_hex(body, strlen(body), hash);
	if (dprintf(fd, "%s,\"hash\":\"%s\"}\n", body, hash) < 0 || (sync && fdatasync(fd) == -1)) {
		sbx_err_sys(e, SBX_EX_IOERR, "%s", path);
		goto out;
	}
	r = 0;
out:
	free(body);
	close(fd);
	return r;
}

int
sbx_audit(const struct sbx_store *s, const char *sandbox, const char *event,
    const char *outcome, const char *detail, struct sbx_err *e)
{
	return append(s, sandbox, event, outcome, detail, 1, e);
}

int
sbx_audit_deferred(const struct sbx_store *s, const char *sandbox, const char *event,
    const char *outcome, const char *detail, struct sbx_err *e)
{
	return append(s, sandbox, event, outcome, detail, 0, e);
}

int
sbx_audit_verify(const struct sbx_store *s, size_t *lines, struct sbx_err *e)
{
	char path[1100], prev[65], hash[65], calc[65], want[80], *buf, *line, *next, *body;
	size_t len, n = 0;
	long long seq;
	int r = 0;

	*lines = 0;
	snprintf(path, sizeof path, "%s/audit.log", s->root);
	if (access(path, F_OK) == -1)
		return 0;
	if (sbx_read_file(path, (size_t)1 << 31, &buf, &len, e) == -1)
		return -1;
	memset(prev, '0', 64);
	prev[64] = '\0';
	for (line = buf; *line; line = next) {
		next = strchr(line, '\n');
		if (next == NULL) {
			r = sbx_err_set(e, SBX_EX_NO, "%s:%zu: last line is incomplete", path, n + 1);
			break;
		}
		*next++ = '\0';
		n++;
		if ((body = body_of(line, hash)) == NULL) {
			r = sbx_err_set(e, SBX_EX_NO, "%s:%zu: not an audit line", path, n);
			break;
		}
		sbx_sha256_hex(body, strlen(body), calc);
		snprintf(want, sizeof want, "\"prev\":\"%s\"", prev);
		seq = strncmp(body, "{\"seq\":", 7) == 0 ? strtoll(body + 7, NULL, 10) : -1;
		if (strcmp(calc, hash) != 0)
			r = sbx_err_set(e, SBX_EX_NO, "%s:%zu: line was altered (hash mismatch)",
			    path, n);
		else if (strstr(body, want) == NULL)
			r = sbx_err_set(e, SBX_EX_NO, "%s:%zu: chain broken (a line before it was "
			    "removed, added or altered)", path, n);
		else if (seq != (long long)n)
			r = sbx_err_set(e, SBX_EX_NO, "%s:%zu: sequence number %lld, expected %zu",
			    path, n, seq, n);
		free(body);
		if (r == -1)
			break;
		memcpy(prev, hash, sizeof prev);
	}
	free(buf);
	*lines = n;
	return r;
}
