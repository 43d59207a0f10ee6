/* SPDX-License-Identifier: MIT */
/* Audit log: hash-chained JSON lines, appended under a lock, with a head record,
 * an optional operator key and an optional syslog sink. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "doc.h"
#include "id.h"
#include "sha256.h"
#include "util.h"

#define KEY_MIN 32
#define KEY_MAX 1024
#define HASH_KEY ",\"hash\":\""
#define MAC_KEY "\",\"mac\":\""
#define NO_MAC "----------------------------------------------------------------"
/* The head record: one fixed-size line, overwritten in place. */
#define HEAD_FMT "sbx-audit-head 1 seq=%020lld size=%020lld hash=%.64s"
#define HEAD_SIZE 207

struct audit_cfg {
	int loaded;
	char root[1024];                 /* the state root the settings were checked for */
	unsigned char key[KEY_MAX];
	size_t keylen;                   /* 0: lines carry no mac */
	char sink[sizeof ((struct sockaddr_un *)0)->sun_path];   /* "": no syslog sink */
};

static struct audit_cfg cfg;
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

/* The operator's key: a file outside the state root that only its owner can read. */
static int
key_load(const char *root, const char *path, struct audit_cfg *c, struct sbx_err *e)
{
	char real[PATH_MAX], rroot[PATH_MAX];
	struct stat st;
	size_t l;
	int fd, r = -1;

	if (path[0] != '/')
		return sbx_err_set(e, SBX_EX_USAGE, "SBX_AUDIT_KEY: '%s' is not an absolute path",
		    path);
	if (realpath(path, real) == NULL)
		return sbx_err_sys(e, 0, "audit key %s", path);
	if (realpath(root, rroot) != NULL && (l = strlen(rroot)) > 0 &&
	    strncmp(real, rroot, l) == 0 && (real[l] == '/' || real[l] == '\0' ||
	    strcmp(rroot, "/") == 0))
		return sbx_err_set(e, SBX_EX_NOPERM, "audit key %s: inside the state root %s, where "
		    "whoever can rewrite the log can read it: keep it elsewhere", path, root);
	if ((fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return sbx_err_sys(e, 0, "audit key %s", path);
	if (fstat(fd, &st) == -1) {
		sbx_err_sys(e, 0, "audit key %s", path);
	} else if (!S_ISREG(st.st_mode)) {
		sbx_err_set(e, SBX_EX_DATAERR, "audit key %s: not a regular file", path);
	} else if (st.st_mode & 077) {
		sbx_err_set(e, SBX_EX_NOPERM, "audit key %s: mode %03o lets others than its owner "
		    "in (chmod 600)", path, (unsigned)(st.st_mode & 0777));
	} else if (st.st_size < KEY_MIN || st.st_size > KEY_MAX) {
		sbx_err_set(e, SBX_EX_DATAERR, "audit key %s: %lld bytes; a key is %d to %d bytes "
		    "(head -c 32 /dev/urandom)", path, (long long)st.st_size, KEY_MIN, KEY_MAX);
	} else if (read(fd, c->key, (size_t)st.st_size) != (ssize_t)st.st_size) {
		sbx_err_sys(e, SBX_EX_IOERR, "audit key %s", path);
	} else {
		c->keylen = (size_t)st.st_size;
		r = 0;
	}
	close(fd);
	return r;
}

/*
 * Every audit setting is read here and nowhere else: the key ($SBX_AUDIT_KEY,
 * else for root /etc/sbx/audit.key when it exists) and the syslog socket
 * ($SBX_AUDIT_SYSLOG).
 */
static int
config_read(const char *root, struct audit_cfg *c, struct sbx_err *e)
{
	const char *key = getenv("SBX_AUDIT_KEY"), *sink = getenv("SBX_AUDIT_SYSLOG");

	explicit_bzero(c, sizeof *c);
	snprintf(c->root, sizeof c->root, "%s", root);
	if ((key == NULL || *key == '\0') && geteuid() == 0 &&
	    access(SBX_AUDIT_KEY_DEFAULT, F_OK) == 0)
		key = SBX_AUDIT_KEY_DEFAULT;
	if (key != NULL && *key != '\0' && key_load(root, key, c, e) == -1)
		return -1;
	if (sink != NULL && *sink != '\0') {
		if (sink[0] != '/')
			return sbx_err_set(e, SBX_EX_USAGE, "SBX_AUDIT_SYSLOG: '%s' is not the absolute "
			    "path of a syslog socket (such as /dev/log)", sink);
		if (strlen(sink) >= sizeof c->sink)
			return sbx_err_set(e, SBX_EX_USAGE, "SBX_AUDIT_SYSLOG: '%s' is too long for a "
			    "socket path", sink);
		memcpy(c->sink, sink, strlen(sink) + 1);
	}
	c->loaded = 1;
	return 0;
}

int
sbx_audit_open(const struct sbx_store *s, struct sbx_err *e)
{
	if (cfg.loaded && strcmp(cfg.root, s->root) == 0)
		return 0;
	return config_read(s->root, &cfg, e);
}

static void
mac_hex(const struct audit_cfg *c, const char *msg, size_t len, char out[65])
{
	unsigned char d[32];

	sbx_hmac_sha256(c->key, c->keylen, msg, len, d);
	sbx_hex(d, sizeof d, out);
}

/* Not a timing oracle, for what it is worth offline. */
static int
same_hex(const char *a, const char *b)
{
	unsigned char diff = 0;
	int i;

	for (i = 0; i < 64; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

static void
json_str(FILE *f, const char *s)
{
	struct sbx_node n = { .type = SBX_SCALAR, .str = (char *)s };

	sbx_doc_emit(f, &n, SBX_FMT_JSON);
}

struct line {
	size_t body;             /* the body: the line's first body bytes */
	char hash[65], mac[65];  /* mac "" when the line carries none */
	long long seq;
};

/* A line: BODY,"hash":"H"} or BODY,"hash":"H","mac":"M"} (no newline). */
static int
parse_line(const char *text, struct line *l)
{
	const char *h = strstr(text, HASH_KEY), *p;
	size_t rest;

	if (h == NULL)
		return -1;
	l->body = (size_t)(h - text);
	h += strlen(HASH_KEY);
	rest = strlen(h);
	l->mac[0] = '\0';
	if (rest == 64 + 9 + 64 + 2 && strncmp(h + 64, MAC_KEY, 9) == 0 &&
	    strcmp(h + 64 + 9 + 64, "\"}") == 0) {
		memcpy(l->mac, h + 64 + 9, 64);
		l->mac[64] = '\0';
	} else if (rest != 64 + 2 || strcmp(h + 64, "\"}") != 0) {
		return -1;
	}
	memcpy(l->hash, h, 64);
	l->hash[64] = '\0';
	p = strncmp(text, "{\"seq\":", 7) == 0 ? text + 7 : NULL;
	l->seq = p ? strtoll(p, NULL, 10) : -1;
	return 0;
}

/* Last line's hash and seq (zeros for an empty log). */
static int
tail(int fd, char prev[65], long long *seq)
{
	char buf[8192], *line, *p;
	off_t end = lseek(fd, 0, SEEK_END), start;
	struct line l;
	ssize_t n;

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
	if (parse_line(line, &l) == -1)
		return -1;
	memcpy(prev, l.hash, 65);
	*seq = l.seq < 0 ? 0 : l.seq;
	return 0;
}

/* The body of line seq: every field but its own hash and mac, on one line. */
static char *
make_body(long long seq, const char *prev, const char *sandbox, const char *event,
    const char *outcome, const char *detail)
{
	char now[32], *body = NULL, *w, *q;
	size_t len = 0;
	FILE *f;

	sbx_time_rfc3339(now, sizeof now, time(NULL));
	if ((f = open_memstream(&body, &len)) == NULL)
		return NULL;
	fprintf(f, "{\"seq\":%lld,\"time\":\"%s\",\"sandbox\":", seq, now);
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
	if (fclose(f) != 0) {
		free(body);
		return NULL;
	}
	/* json_str ends each value with a newline: strip them. */
	for (w = q = body; *q; q++)
		if (*q != '\n')
			*w++ = *q;
	*w = '\0';
	return body;
}

static int
head_path(const char *root, char *buf, size_t size, struct sbx_err *e)
{
	return sbx_path(buf, size, e, "%s/audit.head", root);
}

/*
 * Overwrite the head record in place, after its line was synced, and without
 * a sync of its own: a crash may leave it behind the log, never ahead. Only
 * its first creation is synced (with its directory), once per state root.
 */
static int
head_write(const struct audit_cfg *c, long long seq, long long size, const char *hash,
    struct sbx_err *e)
{
	char path[1100], rec[HEAD_SIZE + 1], mac[65];
	int n, fd, created = 0, r = -1;

	if (head_path(c->root, path, sizeof path, e) == -1)
		return -1;
	n = snprintf(rec, sizeof rec, HEAD_FMT, seq, size, hash);
	if (c->keylen > 0)
		mac_hex(c, rec, (size_t)n, mac);
	else
		memcpy(mac, NO_MAC, sizeof mac);
	snprintf(rec + n, sizeof rec - (size_t)n, " mac=%s\n", mac);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) == -1 && errno == ENOENT &&
	    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) != -1)
		created = 1;
	if (fd == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", path);
	if (pwrite(fd, rec, HEAD_SIZE, 0) != HEAD_SIZE)
		sbx_err_sys(e, SBX_EX_IOERR, "%s", path);
	else if (created && fsync(fd) == -1)
		sbx_err_sys(e, SBX_EX_IOERR, "%s", path);
	else
		r = 0;
	close(fd);
	if (r == 0 && created && (fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		fsync(fd);
		close(fd);
	}
	return r;
}

struct head {
	long long seq, size;
	char hash[65], mac[65];     /* mac NO_MAC when unkeyed */
	char text[HEAD_SIZE + 1];   /* the part the mac covers, NUL-terminated */
};

/* 0: read, 1: there is none, -1: unreadable or not a head record. */
static int
head_read(const char *root, struct head *h, struct sbx_err *e)
{
	char path[1100], buf[HEAD_SIZE + 2], again[HEAD_SIZE + 1];
	ssize_t n;
	int fd;

	if (head_path(root, path, sizeof path, e) == -1)
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return errno == ENOENT ? 1 : sbx_err_sys(e, 0, "%s", path);
	n = pread(fd, buf, sizeof buf - 1, 0);
	close(fd);
	if (n == -1)
		return sbx_err_sys(e, SBX_EX_IOERR, "%s", path);
	buf[n] = '\0';
	/* Exactly what head_write writes, or it is not a head record. */
	if (n != HEAD_SIZE || sscanf(buf, "sbx-audit-head 1 seq=%20lld size=%20lld hash=%64[0-9a-f] "
	    "mac=%64[0-9a-f-]", &h->seq, &h->size, h->hash, h->mac) != 4 ||
	    snprintf(again, sizeof again, HEAD_FMT " mac=%s\n", h->seq, h->size, h->hash,
	    h->mac) != HEAD_SIZE || memcmp(again, buf, HEAD_SIZE) != 0 || h->seq < 0)
		return sbx_err_set(e, SBX_EX_NO, "%s: not a head record (damaged or replaced)", path);
	snprintf(h->text, sizeof h->text, "%.*s", (int)(strstr(buf, " mac=") - buf), buf);
	return 0;
}

/* One datagram to the syslog socket, as syslog(3) sends it (RFC 3164). */
static int
sink_send(const char *sock, const char *outcome, const char *line, size_t len,
    struct sbx_err *e)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char hdr[96], stamp[32];
	struct iovec iov[2];
	struct msghdr mh = { .msg_name = &sun, .msg_namelen = sizeof sun, .msg_iov = iov,
		.msg_iovlen = 2 };
	struct timeval tv = { 1, 0 };
	time_t now = time(NULL);
	struct tm tm;
	int fd, n, r = 0;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%b %e %H:%M:%S", &tm);
	n = snprintf(hdr, sizeof hdr, "<%d>%s sbx-audit[%ld]: ", LOG_AUTHPRIV |
	    (strcmp(outcome, "ok") == 0 ? LOG_INFO : LOG_WARNING), stamp, (long)getpid());
	memcpy(sun.sun_path, sock, strlen(sock) + 1);
	iov[0] = (struct iovec){ hdr, (size_t)n };
	iov[1] = (struct iovec){ (void *)line, len };
	/* A reader that is behind (the socket queues ten datagrams) is waited for,
	 * one that is stuck for a second at most: the line is in the log. */
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == -1 ||
	    sendmsg(fd, &mh, MSG_NOSIGNAL) == -1)
		r = sbx_err_sys(e, SBX_EX_IOERR, "audit line written, but not sent to the syslog "
		    "socket %s", sock);
	if (fd != -1)
		close(fd);
	return r;
}

/* Write line seq (body, its hash, its mac with a key), then the head and the sink. */
static int
write_line(int fd, const struct audit_cfg *c, long long seq, const char *body,
    const char *outcome, int sync, struct sbx_err *e)
{
	char hash[65], mac[65] = "", *line;
	off_t end;
	int n, r = -1;

	sbx_sha256_hex(body, strlen(body), hash);
	if (c->keylen > 0)
		mac_hex(c, body, strlen(body), mac);
	if ((n = asprintf(&line, "%s" HASH_KEY "%s%s%s\"}\n", body, hash, c->keylen ? MAC_KEY : "",
	    c->keylen ? mac : "")) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if (sbx_write_all(fd, line, (size_t)n) == -1 || (sync && fdatasync(fd) == -1)) {
		sbx_err_sys(e, SBX_EX_IOERR, "%s/audit.log", c->root);
		goto out;
	}
	/* A deferred line leaves the head where it was: it may yet be lost. */
	if (sync && ((end = lseek(fd, 0, SEEK_END)) == -1 ||
	    head_write(c, seq, (long long)end, hash, e) == -1))
		goto out;
	if (c->sink[0] && sink_send(c->sink, outcome, line, (size_t)n - 1, e) == -1)
		goto out;
	r = 0;
out:
	free(line);
	return r;
}

static int
append(const struct sbx_store *s, const char *sandbox, const char *event,
    const char *outcome, const char *detail, int sync, struct sbx_err *e)
{
	char path[1100], prev[65];
	char *body = NULL;
	long long seq;
	int fd, r = -1;

	if (sbx_audit_open(s, e) == -1)
		return -1;
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
	if ((body = make_body(seq + 1, prev, sandbox, event, outcome, detail)) == NULL) {
		sbx_err_sys(e, SBX_EX_OSERR, "audit line");
		goto out;
	}
	r = write_line(fd, &cfg, seq + 1, body, outcome, sync, e);
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
sbx_audit_sync(const struct sbx_store *s, struct sbx_err *e)
{
	char path[1100], last[65];
	long long seq;
	off_t end;
	int fd, r = -1;

	if (sbx_audit_open(s, e) == -1)
		return -1;
	snprintf(path, sizeof path, "%s/audit.log", s->root);
	if ((fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC)) == -1)
		return sbx_err_sys(e, SBX_EX_IOERR, "%s", path);
	if (flock(fd, LOCK_EX) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "lock %s", path);
		goto out;
	}
	if (tail(fd, last, &seq) == -1) {
		sbx_err_set(e, SBX_EX_SOFTWARE, "%s: last line is damaged; see sbx-gc --verify-audit",
		    path);
		goto out;
	}
	if (fdatasync(fd) == -1 || (end = lseek(fd, 0, SEEK_END)) == -1) {
		sbx_err_sys(e, SBX_EX_IOERR, "%s", path);
		goto out;
	}
	r = seq == 0 ? 0 : head_write(&cfg, seq, (long long)end, last, e);
out:
	close(fd);
	return r;
}

/* What verification notes of the line the head record names. */
struct at {
	long long seq;
	char hash[65];
	long long end;
	int keyed;
};

/* One line's hash, mac, chain link and number. */
static int
check_line(const char *path, size_t n, const char *text, const char *prev, int keyed_before,
    struct line *l, struct sbx_err *e)
{
	char calc[65], want[80];

	if (parse_line(text, l) == -1)
		return sbx_err_set(e, SBX_EX_NO, "%s:%zu: not an audit line", path, n);
	sbx_sha256_hex(text, l->body, calc);
	snprintf(want, sizeof want, "\"prev\":\"%s\"", prev);
	if (strcmp(calc, l->hash) != 0)
		return sbx_err_set(e, SBX_EX_NO, "%s:%zu: line was altered (hash mismatch)", path, n);
	if (memmem(text, l->body, want, strlen(want)) == NULL)
		return sbx_err_set(e, SBX_EX_NO, "%s:%zu: chain broken (a line before it was "
		    "removed, added or altered)", path, n);
	if (l->seq != (long long)n)
		return sbx_err_set(e, SBX_EX_NO, "%s:%zu: sequence number %lld, expected %zu", path, n,
		    l->seq, n);
	if (l->mac[0] == '\0' && keyed_before)
		return sbx_err_set(e, SBX_EX_NO, "%s:%zu: no mac after keyed lines (lines were "
		    "rewritten without the key)", path, n);
	if (l->mac[0] != '\0' && cfg.keylen > 0) {
		mac_hex(&cfg, text, l->body, calc);
		if (!same_hex(calc, l->mac))
			return sbx_err_set(e, SBX_EX_NO, "%s:%zu: mac mismatch (the line was rewritten, "
			    "or written with another key)", path, n);
	}
	return 0;
}

/* Every line of buf, in order; notes the line the head names in *at. */
static int
verify_lines(const char *path, char *buf, struct at *at, struct sbx_audit_report *r,
    struct sbx_err *e)
{
	char prev[65], *text, *next;
	struct line l = { 0 };
	size_t n = 0;

	memset(prev, '0', 64);
	prev[64] = '\0';
	for (text = buf; *text; text = next) {
		if ((next = strchr(text, '\n')) == NULL)
			return sbx_err_set(e, SBX_EX_NO, "%s:%zu: last line is incomplete", path, n + 1);
		*next++ = '\0';
		n++;
		if (check_line(path, n, text, prev, r->keyed > 0, &l, e) == -1)
			return -1;
		r->keyed += l.mac[0] != '\0';
		r->lines = n;
		memcpy(prev, l.hash, sizeof prev);
		if ((long long)n == at->seq) {
			memcpy(at->hash, l.hash, sizeof at->hash);
			at->end = (long long)(next - buf);
			at->keyed = l.mac[0] != '\0';
		}
	}
	if (n > 0 && cfg.keylen > 0 && l.mac[0] == '\0')
		return sbx_err_set(e, SBX_EX_NO, "%s:%zu: the last line carries no mac though a key "
		    "is set: the log was rewritten without the key, or nothing was logged since "
		    "the key was installed", path, n);
	return 0;
}

/* The head record against the log: a log shorter than its head was cut. */
static int
verify_head(const char *root, int found, const struct head *h, const struct at *at,
    const struct sbx_audit_report *r, struct sbx_err *e)
{
	char path[1100], calc[65];

	if (head_path(root, path, sizeof path, e) == -1)
		return -1;
	if (!found)
		return r->lines == 0 ? 0 : sbx_err_set(e, SBX_EX_NO, "%s: missing, so the log's end "
		    "cannot be checked (removed, or the log was written by an sbx that kept no "
		    "head)", path);
	if (h->seq > (long long)r->lines)
		return sbx_err_set(e, SBX_EX_NO, "%s: names line %lld, but the log has %zu: the log "
		    "was truncated", path, h->seq, r->lines);
	if (h->seq > 0 && (strcmp(h->hash, at->hash) != 0 || h->size != at->end))
		return sbx_err_set(e, SBX_EX_NO, "%s: head mismatch: line %lld of the log is not the "
		    "line it names (the log was rewritten)", path, h->seq);
	if (strcmp(h->mac, NO_MAC) == 0) {
		if (cfg.keylen > 0 && at->keyed)
			return sbx_err_set(e, SBX_EX_NO, "%s: no mac though line %lld has one: it was "
			    "rewritten without the key", path, h->seq);
	} else if (cfg.keylen > 0) {
		mac_hex(&cfg, h->text, strlen(h->text), calc);
		if (!same_hex(calc, h->mac))
			return sbx_err_set(e, SBX_EX_NO, "%s: mac mismatch (rewritten, or written with "
			    "another key)", path);
	}
	return 0;
}

int
sbx_audit_verify(const struct sbx_store *s, struct sbx_audit_report *r, struct sbx_err *e)
{
	char path[1100], empty[1] = "", *buf = NULL;
	struct head h = { 0 };
	struct at at = { 0 };
	size_t len = 0;
	int fd, found, rc = -1;

	memset(r, 0, sizeof *r);
	if (sbx_audit_open(s, e) == -1)
		return -1;
	r->key = cfg.keylen > 0;
	snprintf(path, sizeof path, "%s/audit.log", s->root);
	/* Shared: no line or head is half-written while we read them. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 && errno != ENOENT)
		return sbx_err_sys(e, 0, "%s", path);
	if (fd != -1 && flock(fd, LOCK_SH) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "lock %s", path);
		goto out;
	}
	if (fd != -1 && sbx_read_fd(fd, (size_t)1 << 31, &buf, &len, path, e) == -1)
		goto out;
	if (buf != NULL && strlen(buf) != len) {
		sbx_err_set(e, SBX_EX_NO, "%s: a NUL byte at offset %zu", path, strlen(buf));
		goto out;
	}
	if ((found = head_read(s->root, &h, e)) == -1)
		goto out;
	at.seq = found == 0 ? h.seq : -1;
	if (verify_lines(path, buf ? buf : empty, &at, r, e) == -1 ||
	    verify_head(s->root, found == 0, &h, &at, r, e) == -1)
		goto out;
	r->head = found == 0 ? h.seq : 0;
	rc = 0;
out:
	free(buf);
	if (fd != -1)
		close(fd);
	return rc;
}
