/* SPDX-License-Identifier: MIT */
/* S3 client: see s3.h. */
#include <ctype.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "curl_dl.h"
#include "progress.h"
#include "s3.h"
#include "sha256.h"
#include "url.h"
#include "util.h"

#define ERR_BODY_MAX (64 * 1024)
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define PART_MIN (5LL << 20)        /* S3's smallest part (but the last) */
#define PART_DEFAULT (32LL << 20)
#define MAX_PARTS 10000
#define FLUSH_EVERY (8LL << 20)

/* URL and configuration */

static char *
trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* key's value in [section] of an INI file such as ~/.aws/credentials, or NULL. */
static char *
ini_get(const char *path, const char *section, const char *key)
{
	char line[1024], *val = NULL;
	int in = 0;
	FILE *f;

	if (path == NULL || (f = fopen(path, "re")) == NULL)
		return NULL;
	while (val == NULL && fgets(line, sizeof line, f)) {
		char *l = trim(line), *eq;

		if (*l == '#' || *l == ';' || *l == '\0')
			continue;
		if (*l == '[') {
			char *end = strchr(l, ']');

			if (end) {
				*end = '\0';
				in = strcmp(trim(l + 1), section) == 0;
			}
			continue;
		}
		if (in && (eq = strchr(l, '=')) != NULL) {
			*eq = '\0';
			if (strcmp(trim(l), key) == 0)
				val = strdup(trim(eq + 1));
		}
	}
	fclose(f);
	return val;
}

static char *
aws_file(const char *var, const char *name)
{
	const char *v = getenv(var), *home = getenv("HOME");
	char *p;

	if (v && *v)
		return strdup(v);
	if (home == NULL || asprintf(&p, "%s/.aws/%s", home, name) == -1)
		return NULL;
	return p;
}

static char *
env_dup(const char *a, const char *b)
{
	const char *v = getenv(a);

	if ((v == NULL || *v == '\0') && b)
		v = getenv(b);
	return v && *v ? strdup(v) : NULL;
}

static int
config(struct sbx_s3 *s, struct sbx_err *e)
{
	const char *profile = getenv("AWS_PROFILE"), *v;
	char *creds = aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
	char *cfg = aws_file("AWS_CONFIG_FILE", "config"), sect[300];
	int custom;

	if (profile == NULL || *profile == '\0')
		profile = "default";
	snprintf(sect, sizeof sect, strcmp(profile, "default") ? "profile %s" : "%s", profile);
	s->access = env_dup("AWS_ACCESS_KEY_ID", NULL);
	s->secret = env_dup("AWS_SECRET_ACCESS_KEY", NULL);
	if (s->access && s->secret) {
		s->token = env_dup("AWS_SESSION_TOKEN", NULL);
	} else {
		free(s->access);
		free(s->secret);
		s->access = ini_get(creds, profile, "aws_access_key_id");
		s->secret = ini_get(creds, profile, "aws_secret_access_key");
		s->token = ini_get(creds, profile, "aws_session_token");
	}
	if ((s->region = env_dup("AWS_REGION", "AWS_DEFAULT_REGION")) == NULL)
		s->region = ini_get(cfg, sect, "region");
	if (s->region == NULL)
		s->region = strdup("us-east-1");
	s->endpoint = env_dup("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
	s->ca = env_dup("AWS_CA_BUNDLE", NULL);
	free(creds);
	free(cfg);
	if (s->access == NULL || s->secret == NULL || *s->access == '\0' || *s->secret == '\0')
		return sbx_err_set(e, SBX_EX_NOPERM, "%s: no credentials: set AWS_ACCESS_KEY_ID and "
		    "AWS_SECRET_ACCESS_KEY, or profile '%s' in the shared credentials file", s->url,
		    profile);
	if (s->region == NULL)
		return sbx_err_oom(e);
	if (strpbrk(s->access, ":\r\n") || strpbrk(s->secret, "\r\n") ||
	    (s->token && strpbrk(s->token, "\r\n")) || strpbrk(s->region, ":/\r\n"))
		return sbx_err_set(e, SBX_EX_DATAERR, "%s: the credentials or region hold a "
		    "character they may not (':' or a line break)", s->url);
	custom = s->endpoint != NULL;
	if (!custom && asprintf(&s->endpoint, "https://s3.%s.amazonaws.com", s->region) == -1) {
		s->endpoint = NULL;
		return sbx_err_oom(e);
	}
	while (strlen(s->endpoint) > 8 && s->endpoint[strlen(s->endpoint) - 1] == '/')
		s->endpoint[strlen(s->endpoint) - 1] = '\0';
	if ((strncmp(s->endpoint, "http://", 7) != 0 && strncmp(s->endpoint, "https://", 8) != 0) ||
	    strpbrk(s->endpoint + 8, "/?#@ ") != NULL)
		return sbx_err_set(e, SBX_EX_DATAERR, "endpoint '%s': not http[s]://HOST[:PORT]",
		    s->endpoint);
	/* Custom endpoints (MinIO, Ceph, Swift) mostly want path style; AWS virtual hosts. */
	s->virtual_host = !custom;
	if ((v = getenv("SBX_S3_ADDRESSING")) != NULL && *v) {
		if (strcmp(v, "virtual") == 0)
			s->virtual_host = 1;
		else if (strcmp(v, "path") == 0)
			s->virtual_host = 0;
		else
			return sbx_err_set(e, SBX_EX_DATAERR, "SBX_S3_ADDRESSING '%s': path or "
			    "virtual", v);
	}
	s->retry_s = 60;
	if ((v = getenv("SBX_S3_RETRY_S")) != NULL && *v &&
	    (sbx_duration_parse(v, &s->retry_s) == -1 || s->retry_s > 86400))
		return sbx_err_set(e, SBX_EX_DATAERR, "SBX_S3_RETRY_S '%s': not a duration", v);
	s->part_size = PART_DEFAULT;
	if ((v = getenv("SBX_S3_PART_MB")) != NULL && *v) {
		char *end;
		long long mb = strtoll(v, &end, 10);

		if (*end || mb < 5 || mb > 5120)
			return sbx_err_set(e, SBX_EX_DATAERR, "SBX_S3_PART_MB '%s': 5 to 5120", v);
		s->part_size = mb << 20;
	}
	s->workers = 4;
	if ((v = getenv("SBX_S3_PARALLEL")) != NULL && *v) {
		char *end;
		long n = strtol(v, &end, 10);

		if (*end || n < 1 || n > SBX_S3_MAX_WORKERS)
			return sbx_err_set(e, SBX_EX_DATAERR, "SBX_S3_PARALLEL '%s': 1 to %d", v,
			    SBX_S3_MAX_WORKERS);
		s->workers = (int)n;
	}
	return 0;
}

int
sbx_s3_open(struct sbx_s3 *s, const char *url, struct sbx_err *e)
{
	const char *b = url + 5, *slash;
	size_t n;

	memset(s, 0, sizeof *s);
	if (sbx_url_s3_check(url, e) == -1)
		return -1;
	slash = strchr(b, '/');
	n = slash ? (size_t)(slash - b) : strlen(b);
	s->url = strdup(url);
	s->bucket = strndup(b, n);
	if (slash && slash[1]) {
		/* The prefix ends in '/': keys are PREFIX/layers/..., PREFIX/snapshots/... */
		const char *p = slash + 1;

		if (asprintf(&s->prefix, "%s%s", p, p[strlen(p) - 1] == '/' ? "" : "/") == -1)
			s->prefix = NULL;
	} else {
		s->prefix = strdup("");
	}
	if (s->url == NULL || s->bucket == NULL || s->prefix == NULL) {
		sbx_s3_close(s);
		return sbx_err_oom(e);
	}
	while (strlen(s->url) > 5 && s->url[strlen(s->url) - 1] == '/')
		s->url[strlen(s->url) - 1] = '\0';
	if (config(s, e) == -1 || sbx_curl_load(e) == -1) {
		sbx_s3_close(s);
		return -1;
	}
	if ((s->curl = curl_easy_init()) == NULL) {
		sbx_s3_close(s);
		return sbx_err_oom(e);
	}
	/* A bar on a terminal, or the transfer's bytes as the verb's JSON lines. */
	s->progress = sbx_progress_json() || (isatty(2) && getenv("SBX_NO_PROGRESS") == NULL);
	return 0;
}

void
sbx_s3_close(struct sbx_s3 *s)
{
	if (s->curl)
		curl_easy_cleanup(s->curl);
	free(s->url);
	free(s->bucket);
	free(s->prefix);
	free(s->endpoint);
	free(s->region);
	free(s->access);
	if (s->secret)
		explicit_bzero(s->secret, strlen(s->secret));
	free(s->secret);
	free(s->token);
	free(s->ca);
	memset(s, 0, sizeof *s);
}

/* XML, as much as S3's answers need */

static void
xml_decode(const char *in, size_t n, char *out, size_t size)
{
	static const struct { const char *ent; char c; } ents[] = {
		{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' },
		{ "&apos;", '\'' },
	};
	size_t i = 0, o = 0, k;

	while (i < n && o + 1 < size) {
		for (k = 0; in[i] == '&' && k < SBX_ARRAY_LEN(ents); k++) {
			size_t l = strlen(ents[k].ent);

			if (i + l <= n && strncmp(in + i, ents[k].ent, l) == 0)
				break;
		}
		if (in[i] == '&' && k < SBX_ARRAY_LEN(ents)) {
			out[o++] = ents[k].c;
			i += strlen(ents[k].ent);
		} else {
			out[o++] = in[i++];
		}
	}
	out[o] = '\0';
}

/* The span between <tag> and </tag> after *p, moving *p past it. */
static int
xml_span(const char **p, const char *end, const char *tag, const char **s, size_t *n)
{
	char open[64], close[64];
	const char *a, *b;

	snprintf(open, sizeof open, "<%s>", tag);
	snprintf(close, sizeof close, "</%s>", tag);
	if ((a = memmem(*p, (size_t)(end - *p), open, strlen(open))) == NULL)
		return 0;
	a += strlen(open);
	if ((b = memmem(a, (size_t)(end - a), close, strlen(close))) == NULL)
		return 0;
	*s = a;
	*n = (size_t)(b - a);
	*p = b + strlen(close);
	return 1;
}

static int
xml_text_in(const char *xml, const char *end, const char *tag, char *out, size_t size)
{
	const char *s;
	size_t n;

	if (!xml_span(&xml, end, tag, &s, &n)) {
		out[0] = '\0';
		return 0;
	}
	xml_decode(s, n, out, size);
	return 1;
}

int
sbx_s3_xml_text(const char *xml, const char *tag, char *out, size_t size)
{
	return xml_text_in(xml, xml + strlen(xml), tag, out, size);
}

/* Requests */

struct prog {
	const char *label;
	long long total, base;     /* base: bytes of the parts that are done */
	double t0, last;
	int drawn;
	pthread_mutex_t mu;        /* parts go up from several threads */
};

struct xfer {
	/* what is sent: from memory, or size bytes of fd from offset */
	const char *src;
	int src_fd;
	long long src_off, src_len, src_pos;
	/* what comes back: into fd (hashed) when 2xx and dst_fd >= 0, else memory */
	int dst_fd;
	long long dst_start, max, got, flushed;
	struct sbx_sha256 sha;
	char *mem;
	size_t mem_len, mem_max;
	int too_big;
	/* the answer */
	long status;
	char etag[128];
	struct prog *prog;
	long long prog_seen;       /* bytes of this request the bar has counted */
	struct hasher *hz;         /* hashes what goes to dst_fd, or NULL: this thread */
	struct sbx_s3 *s3;
};

static void
human(char *buf, size_t size, double b)
{
	if (b >= 1 << 30)
		snprintf(buf, size, "%.2f GiB", b / (1 << 30));
	else if (b >= 1 << 20)
		snprintf(buf, size, "%.1f MiB", b / (1 << 20));
	else
		snprintf(buf, size, "%.0f KiB", b / 1024);
}

static void
prog_draw(struct prog *p, long long done, int final)
{
	double now = sbx_monotonic(), el = now - p->t0, rate = el > 0 ? done / el : 0;
	char d[32], t[32], r[32], eta[32] = "";

	if (sbx_progress_json()) {
		sbx_progress_part(done);
		return;
	}
	if (!final && now - p->last < 0.2)
		return;
	p->last = now;
	human(d, sizeof d, (double)done);
	human(t, sizeof t, (double)p->total);
	human(r, sizeof r, rate);
	if (!final && rate > 0 && p->total > done) {
		long secs = (long)((double)(p->total - done) / rate);

		snprintf(eta, sizeof eta, "  ETA %ld:%02ld", secs / 60, secs % 60);
	} else if (final) {
		snprintf(eta, sizeof eta, "  %.1f s", el);
	}
	fprintf(stderr, "\r%s  %s / %s  %s/s%s\033[K%s", p->label, d, t, r, eta, final ? "\n" : "");
	p->drawn = 1;
}

static int
on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
    curl_off_t ulnow)
{
	struct xfer *x = ctx;
	long long now = ulnow > dlnow ? ulnow : dlnow;

	(void)dltotal;
	(void)ultotal;
	if (sbx_interrupted())
		return 1;    /* curl ends the transfer: CURLE_ABORTED_BY_CALLBACK */
	if (x->prog && now != x->prog_seen) {
		pthread_mutex_lock(&x->prog->mu);
		x->prog->base += now - x->prog_seen;
		x->prog_seen = now;
		prog_draw(x->prog, x->prog->base, 0);
		pthread_mutex_unlock(&x->prog->mu);
	}
	return 0;
}

/*
 * A download's SHA-256, computed by a thread of its own that reads the file
 * back (from the page cache) as it grows: the hash then costs no time on the
 * connection's thread. One per attempt: started before it, joined after.
 */
struct hasher {
	pthread_t t;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int fd, done, failed, running;
	long long start, avail, hashed;
	struct sbx_sha256 sha;
};

static void *
hash_main(void *arg)
{
	struct hasher *h = arg;
	static const long long chunk = 1 << 20;
	char *buf = malloc((size_t)chunk);

	if (buf == NULL) {
		h->failed = 1;
		return NULL;
	}
	for (;;) {
		long long avail, n;
		ssize_t k;
		int done;

		pthread_mutex_lock(&h->mu);
		while (h->hashed == h->avail && !h->done)
			pthread_cond_wait(&h->cv, &h->mu);
		avail = h->avail;
		done = h->done;
		pthread_mutex_unlock(&h->mu);
		if (h->hashed == avail && done)
			break;
		n = avail - h->hashed < chunk ? avail - h->hashed : chunk;
		if ((k = pread(h->fd, buf, (size_t)n, h->start + h->hashed)) <= 0) {
			h->failed = 1;
			break;
		}
		sbx_sha256_update(&h->sha, buf, (size_t)k);
		h->hashed += k;
	}
	free(buf);
	return NULL;
}

static void
hasher_start(struct hasher *h, int fd, long long start)
{
	h->fd = fd;
	h->start = start;
	h->avail = h->hashed = 0;
	h->done = h->failed = 0;
	sbx_sha256_init(&h->sha);
	h->running = pthread_create(&h->t, NULL, hash_main, h) == 0;
}

static void
hasher_publish(struct hasher *h, long long avail)
{
	pthread_mutex_lock(&h->mu);
	h->avail = avail;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/* 0 when the hash covers all that was written. */
static int
hasher_stop(struct hasher *h)
{
	if (!h->running)
		return -1;
	pthread_mutex_lock(&h->mu);
	h->done = 1;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->t, NULL);
	h->running = 0;
	return h->failed || h->hashed != h->avail ? -1 : 0;
}

static size_t
on_read(char *buf, size_t size, size_t nmemb, void *ctx)
{
	struct xfer *x = ctx;
	size_t want = size * nmemb;
	long long left = x->src_len - x->src_pos;
	ssize_t n;

	if ((long long)want > left)
		want = (size_t)left;
	if (want == 0)
		return 0;
	if (x->src) {
		memcpy(buf, x->src + x->src_pos, want);
		n = (ssize_t)want;
	} else if ((n = pread(x->src_fd, buf, want, x->src_off + x->src_pos)) <= 0) {
		return CURL_READFUNC_ABORT;
	}
	x->src_pos += n;
	return (size_t)n;
}

static int
on_seek(void *ctx, curl_off_t off, int origin)
{
	struct xfer *x = ctx;

	if (origin != SEEK_SET || off < 0 || off > x->src_len)
		return CURL_SEEKFUNC_FAIL;
	x->src_pos = off;
	return CURL_SEEKFUNC_OK;
}

static size_t
on_write(char *buf, size_t size, size_t nmemb, void *ctx)
{
	struct xfer *x = ctx;
	size_t n = size * nmemb;
	long code = 0;

	curl_easy_getinfo(x->s3->curl, CURLINFO_RESPONSE_CODE, &code);
	if (x->dst_fd >= 0 && code / 100 == 2) {
		if (x->got + (long long)n > x->max) {
			x->too_big = 1;
			return 0;
		}
		if (sbx_write_all(x->dst_fd, buf, n) == -1)
			return 0;
		x->got += (long long)n;
		if (x->hz)
			hasher_publish(x->hz, x->got);
		else
			sbx_sha256_update(&x->sha, buf, n);
		/* Start writing back what has come so far, so that the fsync the
		 * caller makes at the end has little left to wait for. */
		if (x->got - x->flushed >= FLUSH_EVERY) {
			sync_file_range(x->dst_fd, x->dst_start + x->flushed, x->got - x->flushed,
			    SYNC_FILE_RANGE_WRITE);
			x->flushed = x->got;
		}
		return n;
	}
	if (x->mem_len + n > (code / 100 == 2 ? x->mem_max : ERR_BODY_MAX)) {
		if (code / 100 == 2) {
			x->too_big = 1;
			return 0;
		}
		return n;  /* an error body: keep its start */
	}
	{
		char *g = realloc(x->mem, x->mem_len + n + 1);

		if (g == NULL)
			return 0;
		x->mem = g;
	}
	memcpy(x->mem + x->mem_len, buf, n);
	x->mem_len += n;
	x->mem[x->mem_len] = '\0';
	return n;
}

static size_t
on_header(char *buf, size_t size, size_t nmemb, void *ctx)
{
	struct xfer *x = ctx;
	size_t n = size * nmemb;

	if (n > 5 && strncasecmp(buf, "etag:", 5) == 0) {
		size_t k = 5, o = 0;

		while (k < n && isspace((unsigned char)buf[k]))
			k++;
		while (k < n && buf[k] != '\r' && buf[k] != '\n' && o + 1 < sizeof x->etag)
			x->etag[o++] = buf[k++];
		x->etag[o] = '\0';
	} else if (n > 5 && strncasecmp(buf, "date:", 5) == 0 && n < 128) {
		char d[128];
		struct tm tm;

		memcpy(d, buf + 5, n - 5);
		d[n - 5] = '\0';
		memset(&tm, 0, sizeof tm);
		if (strptime(trim(d), "%a, %d %b %Y %H:%M:%S", &tm) != NULL)
			x->s3->server_time = (double)timegm(&tm);
	}
	return n;
}

/* RFC 3986 unreserved characters stay, everything else is %XX (as SigV4 wants). */
static void
pct(char *out, size_t size, const char *in, int keep_slash)
{
	size_t o = 0;

	for (; *in && o + 4 < size; in++) {
		unsigned char c = (unsigned char)*in;

		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/'))
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, size - o, "%%%02X", c);
	}
	out[o] = '\0';
}

static int
transient_http(long status, const char *code)
{
	return status >= 500 || status == 429 || status == 408 ||
	    strcmp(code, "SlowDown") == 0 || strcmp(code, "RequestTimeout") == 0 ||
	    strcmp(code, "XAmzContentSHA256Mismatch") == 0 || strcmp(code, "BadDigest") == 0 ||
	    strcmp(code, "InternalError") == 0;
}

static int
transient_curl(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

static int
http_code_exit(long status)
{
	switch (status) {
	case 401:
	case 403:
		return SBX_EX_NOPERM;
	case 404:
		return SBX_EX_NOINPUT;
	case 409:
		return SBX_EX_TEMPFAIL;
	default:
		return status >= 500 ? SBX_EX_IOERR : SBX_EX_DATAERR;
	}
}

/* The URL of a full key (bucket-relative) with an optional sorted query. */
static int
make_url(const struct sbx_s3 *s, const char *fullkey, const char *query, char **out)
{
	char path[2048];
	const char *host = strstr(s->endpoint, "://") + 3;
	size_t scheme = (size_t)(host - s->endpoint);
	int n;

	pct(path, sizeof path, fullkey, 1);
	if (s->virtual_host)
		n = asprintf(out, "%.*s%s.%s/%s%s%s", (int)scheme, s->endpoint, s->bucket, host,
		    path, query ? "?" : "", query ? query : "");
	else
		n = asprintf(out, "%s/%s/%s%s%s", s->endpoint, s->bucket, path, query ? "?" : "",
		    query ? query : "");
	return n == -1 ? -1 : 0;
}

struct req {
	const char *method;          /* GET HEAD PUT POST DELETE */
	const char *fullkey;         /* bucket-relative */
	const char *query;           /* sorted, encoded; NULL for none */
	const char *payload_sha;     /* hex, or NULL for an empty body */
	const char *const *headers;  /* extra headers, NULL-terminated, or NULL */
	int body;                    /* x carries a body to send */
};

/* Typed wrappers of the variadic curl_easy_setopt (one place for each kind). */
static void
set_long(CURL *c, CURLoption o, long v)
{
	curl_easy_setopt(c, o, v);
}

static void
set_off(CURL *c, CURLoption o, curl_off_t v)
{
	curl_easy_setopt(c, o, v);
}

static void
set_ptr(CURL *c, CURLoption o, const void *v)
{
	curl_easy_setopt(c, o, v);
}

static int
attempt(struct sbx_s3 *s, const struct req *r, struct xfer *x, CURLcode *rc, char *errbuf)
{
	struct curl_slist *h = NULL, *t;
	char line[512], *url = NULL;
	CURL *c = s->curl;
	size_t i;
	int ok = 0;

	curl_easy_reset(c);
	if (make_url(s, r->fullkey, r->query, &url) == -1)
		return -1;
	snprintf(line, sizeof line, "x-amz-content-sha256: %s",
	    r->payload_sha ? r->payload_sha : EMPTY_SHA);
	if ((h = curl_slist_append(NULL, line)) == NULL)
		goto out;
	if (s->token) {
		char *tok;

		if (asprintf(&tok, "x-amz-security-token: %s", s->token) == -1)
			goto out;
		t = curl_slist_append(h, tok);
		free(tok);
		if (t == NULL)
			goto out;
	}
	for (i = 0; r->headers && r->headers[i]; i++)
		if (curl_slist_append(h, r->headers[i]) == NULL)
			goto out;
	snprintf(line, sizeof line, "aws:amz:%s:s3", s->region);
	set_ptr(c, CURLOPT_URL, url);
	set_ptr(c, CURLOPT_AWS_SIGV4, line);
	set_ptr(c, CURLOPT_USERNAME, s->access);
	set_ptr(c, CURLOPT_PASSWORD, s->secret);
	set_ptr(c, CURLOPT_HTTPHEADER, h);
	set_ptr(c, CURLOPT_ERRORBUFFER, errbuf);
	set_long(c, CURLOPT_NOSIGNAL, 1L);
	set_long(c, CURLOPT_CONNECTTIMEOUT, 10L);
	set_long(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	set_long(c, CURLOPT_LOW_SPEED_TIME, 30L);
	set_ptr(c, CURLOPT_PROTOCOLS_STR, "http,https");
	set_long(c, CURLOPT_BUFFERSIZE, 256L * 1024);
	set_long(c, CURLOPT_UPLOAD_BUFFERSIZE, 1024L * 1024);
	if (s->ca)
		set_ptr(c, CURLOPT_CAINFO, s->ca);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	set_ptr(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	set_ptr(c, CURLOPT_HEADERDATA, x);
	/* Always: a SIGINT or SIGTERM ends the transfer there. */
	set_long(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	set_ptr(c, CURLOPT_XFERINFODATA, x);
	if (r->body) {
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		set_ptr(c, CURLOPT_READDATA, x);
		curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek);
		set_ptr(c, CURLOPT_SEEKDATA, x);
	}
	if (strcmp(r->method, "HEAD") == 0) {
		set_long(c, CURLOPT_NOBODY, 1L);
	} else if (strcmp(r->method, "PUT") == 0) {
		set_long(c, CURLOPT_UPLOAD, 1L);
		set_off(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)(r->body ? x->src_len : 0));
		if (!r->body)
			curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		set_ptr(c, CURLOPT_READDATA, x);
	} else if (strcmp(r->method, "POST") == 0) {
		set_long(c, CURLOPT_POST, 1L);
		set_off(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(r->body ? x->src_len : 0));
		if (!r->body)
			set_ptr(c, CURLOPT_POSTFIELDS, "");
	} else if (strcmp(r->method, "GET") != 0) {
		set_ptr(c, CURLOPT_CUSTOMREQUEST, r->method);
	}
	*rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x->status);
	ok = 1;
out:
	curl_slist_free_all(h);
	free(url);
	return ok ? 0 : -1;
}

static void
xfer_rewind(struct xfer *x)
{
	x->src_pos = 0;
	x->got = 0;
	x->flushed = 0;
	x->mem_len = 0;
	if (x->mem)
		x->mem[0] = '\0';
	x->too_big = 0;
	x->status = 0;
	x->etag[0] = '\0';
	if (x->prog && x->prog_seen) {
		/* a retry: what this attempt sent or got is sent or got again */
		pthread_mutex_lock(&x->prog->mu);
		x->prog->base -= x->prog_seen;
		pthread_mutex_unlock(&x->prog->mu);
		x->prog_seen = 0;
	}
	sbx_sha256_init(&x->sha);
	if (x->dst_fd >= 0) {
		if (ftruncate(x->dst_fd, x->dst_start) == -1) { /* checked by the write that follows */
		}
		lseek(x->dst_fd, x->dst_start, SEEK_SET);
	}
}

/*
 * One request, retried while it fails transiently and time is left. 0 when
 * the server answered 2xx; else -1 with e naming the object and the server's
 * error code. A 404 is reported as exit 66, so callers can tell "absent".
 */
static int
request_retried(struct sbx_s3 *s, const struct req *r, struct xfer *x, struct sbx_err *e)
{
	double t0 = sbx_monotonic(), delay = 0.1;
	char errbuf[CURL_ERROR_SIZE], code[128], msg[256];
	unsigned tries = 0;

	x->s3 = s;
	for (;;) {
		CURLcode rc = CURLE_OK;
		int transient;

		errbuf[0] = '\0';
		xfer_rewind(x);
		tries++;
		if (x->hz)
			hasher_start(x->hz, x->dst_fd, x->dst_start);
		if (attempt(s, r, x, &rc, errbuf) == -1) {
			if (x->hz)
				hasher_stop(x->hz);
			return sbx_err_oom(e);
		}
		if (x->hz && hasher_stop(x->hz) == -1 && rc == CURLE_OK && x->status / 100 == 2)
			return sbx_err_set(e, SBX_EX_IOERR, "%s: %s: cannot read back what was "
			    "written", s->url, r->fullkey);
		code[0] = msg[0] = '\0';
		if (x->mem && x->status / 100 != 2) {
			sbx_s3_xml_text(x->mem, "Code", code, sizeof code);
			sbx_s3_xml_text(x->mem, "Message", msg, sizeof msg);
		}
		if (rc == CURLE_OK && x->status / 100 == 2)
			return 0;
		if (sbx_interrupt_check(e) == -1)
			return -1;
		if (x->too_big)
			return sbx_err_set(e, SBX_EX_DATAERR, "%s/%s: larger than the %lld bytes "
			    "expected", s->url, r->fullkey + strlen(s->prefix),
			    x->dst_fd >= 0 ? x->max : (long long)x->mem_max);
		transient = rc != CURLE_OK ? transient_curl(rc) : transient_http(x->status, code);
		if (rc != CURLE_OK)
			sbx_err_set(e, SBX_EX_IOERR, "%s s3://%s/%s: %s", r->method, s->bucket,
			    r->fullkey, errbuf[0] ? errbuf : curl_easy_strerror(rc));
		else
			sbx_err_set(e, transient ? SBX_EX_IOERR : http_code_exit(x->status),
			    "%s s3://%s/%s: %ld %s%s%s", r->method, s->bucket, r->fullkey, x->status,
			    code[0] ? code : (x->status == 404 ? "NotFound" :
			    x->status == 403 ? "Forbidden" : "error"), msg[0] ? ": " : "", msg);
		if (!transient)
			return -1;
		if (sbx_monotonic() - t0 + delay > s->retry_s)
			return sbx_err_prefix(e, "gave up after %u attempts in %.1f s", tries,
			    sbx_monotonic() - t0);
		{
			double d = delay * (0.5 + (double)rand() / RAND_MAX / 2);
			struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };

			nanosleep(&ts, NULL);
		}
		delay = delay * 2 > 5 ? 5 : delay * 2;
	}
}

/* The same; on failure the answer's body is freed already. */
static int
request(struct sbx_s3 *s, const struct req *r, struct xfer *x, struct sbx_err *e)
{
	if (request_retried(s, r, x, e) == 0)
		return 0;
	free(x->mem);
	x->mem = NULL;
	x->mem_len = 0;
	return -1;
}

static void
xfer_init(struct xfer *x)
{
	memset(x, 0, sizeof *x);
	x->src_fd = -1;
	x->dst_fd = -1;
	x->mem_max = 16 << 20;
}

static int
full_key(const struct sbx_s3 *s, const char *key, char *buf, size_t size, struct sbx_err *e)
{
	if (!sbx_url_s3_key_ok(key)) {
		sbx_err_set(e, SBX_EX_SOFTWARE, "bad object key '%s'", key);
		return -1;
	}
	if (sbx_path(buf, size, e, "%s%s", s->prefix, key) == -1)
		return -1;
	return 0;
}

int
sbx_s3_head(struct sbx_s3 *s, const char *key, long long *size, struct sbx_err *e)
{
	struct req r = { .method = "HEAD" };
	struct xfer x;
	char k[1200];
	curl_off_t len = -1;
	int rv;

	if (full_key(s, key, k, sizeof k, e) == -1)
		return -1;
	r.fullkey = k;
	xfer_init(&x);
	rv = request(s, &r, &x, e);
	free(x.mem);
	if (rv == -1)
		return e && e->code == SBX_EX_NOINPUT ? 0 : -1;
	curl_easy_getinfo(s->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
	if (size)
		*size = (long long)len;
	return 1;
}

int
sbx_s3_get_mem(struct sbx_s3 *s, const char *key, size_t max, char **buf, size_t *len,
    struct sbx_err *e)
{
	struct req r = { .method = "GET" };
	struct xfer x;
	char k[1200];

	*buf = NULL;
	*len = 0;
	if (full_key(s, key, k, sizeof k, e) == -1)
		return -1;
	r.fullkey = k;
	xfer_init(&x);
	x.mem_max = max;
	if (request(s, &r, &x, e) == -1)
		return -1;
	if (x.mem == NULL && (x.mem = calloc(1, 1)) == NULL)
		return sbx_err_oom(e);
	*buf = x.mem;
	*len = x.mem_len;
	return 0;
}

int
sbx_s3_get_file(struct sbx_s3 *s, const char *key, int fd, long long max, char hex[65],
    long long *size, const char *label, struct sbx_err *e)
{
	struct req r = { .method = "GET" };
	struct prog p = { .label = label, .total = max, .mu = PTHREAD_MUTEX_INITIALIZER };
	struct hasher hz = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	unsigned char d[32];
	struct xfer x;
	char k[1200];
	int rv;

	if (full_key(s, key, k, sizeof k, e) == -1)
		return -1;
	r.fullkey = k;
	xfer_init(&x);
	x.dst_fd = fd;
	x.max = max;
	if ((x.dst_start = lseek(fd, 0, SEEK_END)) == -1)
		return sbx_err_sys(e, SBX_EX_IOERR, "seek");
	if (s->progress && label) {
		p.t0 = sbx_monotonic();
		x.prog = &p;
	}
	x.hz = &hz;
	rv = request(s, &r, &x, e);
	pthread_mutex_destroy(&hz.mu);
	pthread_cond_destroy(&hz.cv);
	if (rv == 0 && x.prog)
		prog_draw(&p, x.got, 1);
	else if (x.prog && p.drawn)
		fputc('\n', stderr);
	free(x.mem);
	if (rv == -1)
		return -1;
	sbx_sha256_final(&hz.sha, d);
	sbx_hex(d, sizeof d, hex);
	*size = x.got;
	return 0;
}

static int
put(struct sbx_s3 *s, const char *fullkey, const char *query, struct xfer *x, const char *sha,
    const char *const *headers, const char *method, struct sbx_err *e)
{
	struct req r = { .method = method, .fullkey = fullkey, .query = query,
		.payload_sha = sha, .headers = headers, .body = 1 };

	return request(s, &r, x, e);
}

int
sbx_s3_put_mem(struct sbx_s3 *s, const char *key, const void *buf, size_t len,
    struct sbx_err *e)
{
	struct xfer x;
	char k[1200], sha[65];
	int rv;

	if (full_key(s, key, k, sizeof k, e) == -1)
		return -1;
	sbx_sha256_hex(buf, len, sha);
	xfer_init(&x);
	x.src = buf;
	x.src_len = (long long)len;
	rv = put(s, k, NULL, &x, sha, NULL, "PUT", e);
	free(x.mem);
	return rv;
}

static void
abort_upload(struct sbx_s3 *s, const char *fullkey, const char *upload)
{
	struct req r = { .method = "DELETE", .fullkey = fullkey };
	char q[600], enc[400];
	struct xfer x;
	double keep = s->retry_s;

	pct(enc, sizeof enc, upload, 0);
	snprintf(q, sizeof q, "uploadId=%s", enc);
	r.query = q;
	xfer_init(&x);
	if (s->retry_s > 10)
		s->retry_s = 10;
	request(s, &r, &x, NULL);
	s->retry_s = keep;
	free(x.mem);
}

/* Parts of a multipart upload, shared by the workers that send them. */
struct parts {
	struct sbx_s3 *s;
	const char *fullkey, *enc;
	int fd;
	long long size, nparts, next;
	char (*etags)[128];
	struct prog *prog;
	pthread_mutex_t mu;
	int failed;
	struct sbx_err err;
};

/* A part's SHA-256, read from the file (from the page cache, mostly). */
static int
part_sha(int fd, long long off, long long n, char hex[65])
{
	static const size_t chunk = 1 << 20;
	unsigned char d[32], *buf = malloc(chunk);
	struct sbx_sha256 c;

	if (buf == NULL)
		return -1;
	sbx_sha256_init(&c);
	while (n > 0) {
		ssize_t k = pread(fd, buf, n < (long long)chunk ? (size_t)n : chunk, off);

		if (k <= 0) {
			free(buf);
			return -1;
		}
		sbx_sha256_update(&c, buf, (size_t)k);
		off += k;
		n -= k;
	}
	free(buf);
	sbx_sha256_final(&c, d);
	sbx_hex(d, sizeof d, hex);
	return 0;
}

static void *
part_worker(void *arg)
{
	struct parts *ps = arg;
	struct sbx_s3 w = *ps->s;   /* the same store, a connection of its own */
	struct sbx_err e = { 0 };
	char q[600], sha[65];

	if ((w.curl = curl_easy_init()) == NULL) {
		sbx_err_set(&e, SBX_EX_OSERR, "out of memory");
		goto fail;
	}
	for (;;) {
		struct xfer x;
		long long num, off, n;

		pthread_mutex_lock(&ps->mu);
		num = ps->failed ? ps->nparts + 1 : ++ps->next;
		pthread_mutex_unlock(&ps->mu);
		if (num > ps->nparts)
			break;
		off = (num - 1) * w.part_size;
		n = ps->size - off < w.part_size ? ps->size - off : w.part_size;
		if (part_sha(ps->fd, off, n, sha) == -1) {
			sbx_err_sys(&e, SBX_EX_IOERR, "read");
			goto fail;
		}
		xfer_init(&x);
		x.src_fd = ps->fd;
		x.src_off = off;
		x.src_len = n;
		x.prog = ps->prog;
		snprintf(q, sizeof q, "partNumber=%lld&uploadId=%s", num, ps->enc);
		if (put(&w, ps->fullkey, q, &x, sha, NULL, "PUT", &e) == -1)
			goto fail;
		free(x.mem);
		if (x.etag[0] == '\0') {
			sbx_err_set(&e, SBX_EX_IOERR, "%s: %s: part %lld: no ETag in the answer",
			    w.url, ps->fullkey, num);
			goto fail;
		}
		pthread_mutex_lock(&ps->mu);
		snprintf(ps->etags[num - 1], sizeof ps->etags[num - 1], "%s", x.etag);
		pthread_mutex_unlock(&ps->mu);
		sbx_crash_point("s3-part");
	}
	curl_easy_cleanup(w.curl);
	return NULL;
fail:
	if (w.curl)
		curl_easy_cleanup(w.curl);
	pthread_mutex_lock(&ps->mu);
	if (!ps->failed) {
		ps->failed = 1;
		ps->err = e;
	}
	pthread_mutex_unlock(&ps->mu);
	return NULL;
}

static int
multipart(struct sbx_s3 *s, const char *fullkey, int fd, long long size, struct prog *p,
    struct sbx_err *e)
{
	char upload[300], enc[400], q[600], sha[65];
	char *done = NULL;
	size_t done_len = 0;
	FILE *xml = NULL;
	long long nparts = (size + s->part_size - 1) / s->part_size, num;
	struct parts ps;
	pthread_t tids[SBX_S3_MAX_WORKERS];
	int nt = 0, k, rv = -1;
	struct xfer x;

	if (nparts > MAX_PARTS)
		return sbx_err_set(e, SBX_EX_DATAERR, "%s: %lld bytes is more than %d parts of "
		    "SBX_S3_PART_MB", s->url, size, MAX_PARTS);
	xfer_init(&x);
	x.src = "";
	if (put(s, fullkey, "uploads=", &x, NULL, NULL, "POST", e) == -1)
		return -1;
	if (x.mem == NULL || !sbx_s3_xml_text(x.mem, "UploadId", upload, sizeof upload) ||
	    upload[0] == '\0') {
		free(x.mem);
		return sbx_err_set(e, SBX_EX_IOERR, "%s: %s: no UploadId in the answer", s->url,
		    fullkey);
	}
	free(x.mem);
	pct(enc, sizeof enc, upload, 0);
	memset(&ps, 0, sizeof ps);
	ps.s = s;
	ps.fullkey = fullkey;
	ps.enc = enc;
	ps.fd = fd;
	ps.size = size;
	ps.nparts = nparts;
	ps.prog = p;
	if ((ps.etags = calloc((size_t)nparts, sizeof *ps.etags)) == NULL) {
		sbx_err_oom(e);
		goto out;
	}
	pthread_mutex_init(&ps.mu, NULL);
	/* Parts go up side by side, each on a connection of its own. */
	for (k = 0; k < s->workers && k < nparts; k++)
		if (pthread_create(&tids[nt], NULL, part_worker, &ps) == 0)
			nt++;
	if (nt == 0)
		part_worker(&ps);
	for (k = 0; k < nt; k++)
		pthread_join(tids[k], NULL);
	pthread_mutex_destroy(&ps.mu);
	if (ps.failed) {
		if (e)
			*e = ps.err;
		goto out;
	}
	if ((xml = open_memstream(&done, &done_len)) == NULL) {
		sbx_err_oom(e);
		goto out;
	}
	fputs("<CompleteMultipartUpload>", xml);
	for (num = 1; num <= nparts; num++)
		fprintf(xml, "<Part><PartNumber>%lld</PartNumber><ETag>%s</ETag></Part>", num,
		    ps.etags[num - 1]);
	fputs("</CompleteMultipartUpload>", xml);
	if (fclose(xml) != 0) {
		xml = NULL;
		sbx_err_oom(e);
		goto out;
	}
	xml = NULL;
	sbx_sha256_hex(done, done_len, sha);
	xfer_init(&x);
	x.src = done;
	x.src_len = (long long)done_len;
	snprintf(q, sizeof q, "uploadId=%s", enc);
	if (put(s, fullkey, q, &x, sha, NULL, "POST", e) == -1)
		goto out;
	/* CompleteMultipartUpload can fail after its 200 has been sent. */
	if (x.mem && strstr(x.mem, "<Error>")) {
		char code[128];

		sbx_s3_xml_text(x.mem, "Code", code, sizeof code);
		sbx_err_set(e, SBX_EX_IOERR, "%s: completing %s: %s", s->url, fullkey, code);
		free(x.mem);
		goto out;
	}
	free(x.mem);
	rv = 0;
out:
	if (xml)
		fclose(xml);
	free(done);
	free(ps.etags);
	if (rv == -1)
		abort_upload(s, fullkey, upload);
	return rv;
}

int
sbx_s3_put_file(struct sbx_s3 *s, const char *key, int fd, long long size, const char *sha_hex,
    const char *label, struct sbx_err *e)
{
	struct prog p = { .label = label, .total = size, .mu = PTHREAD_MUTEX_INITIALIZER };
	struct xfer x;
	char k[1200];
	int rv;

	if (full_key(s, key, k, sizeof k, e) == -1)
		return -1;
	if (s->progress && label)
		p.t0 = sbx_monotonic();
	if (size > s->part_size) {
		rv = multipart(s, k, fd, size, s->progress && label ? &p : NULL, e);
	} else {
		xfer_init(&x);
		x.src_fd = fd;
		x.src_len = size;
		x.prog = s->progress && label ? &p : NULL;
		rv = put(s, k, NULL, &x, sha_hex, NULL, "PUT", e);
		free(x.mem);
	}
	if (s->progress && label) {
		if (rv == 0)
			prog_draw(&p, size, 1);
		else if (p.drawn)
			fputc('\n', stderr);
	}
	return rv;
}

int
sbx_s3_delete(struct sbx_s3 *s, const char *key, struct sbx_err *e)
{
	struct req r = { .method = "DELETE" };
	struct xfer x;
	char k[1200];
	int rv;

	if (full_key(s, key, k, sizeof k, e) == -1)
		return -1;
	r.fullkey = k;
	xfer_init(&x);
	rv = request(s, &r, &x, e);
	free(x.mem);
	return rv;
}

int
sbx_s3_touch(struct sbx_s3 *s, const char *key, struct sbx_err *e)
{
	char k[1200], src[1400], hdr[1500];
	const char *headers[] = { hdr, "x-amz-metadata-directive: REPLACE", NULL };
	struct req r = { .method = "PUT", .headers = headers };
	struct xfer x;
	int rv;

	if (full_key(s, key, k, sizeof k, e) == -1)
		return -1;
	pct(src, sizeof src, k, 1);
	snprintf(hdr, sizeof hdr, "x-amz-copy-source: /%s/%s", s->bucket, src);
	r.fullkey = k;
	xfer_init(&x);
	rv = request(s, &r, &x, e);
	if (rv == 0 && x.mem && strstr(x.mem, "<Error>"))
		rv = sbx_err_set(e, SBX_EX_IOERR, "%s: refreshing %s failed", s->url, key);
	free(x.mem);
	return rv;
}

int
sbx_s3_list(struct sbx_s3 *s, const char *key_prefix, sbx_s3_each each, void *ctx,
    struct sbx_err *e)
{
	char k[1200], enc[1600], tok[1200], enctok[1800], q[4000];
	size_t plen = strlen(s->prefix);
	int more = 1;

	if (full_key(s, key_prefix, k, sizeof k, e) == -1)
		return -1;
	pct(enc, sizeof enc, k, 0);
	tok[0] = '\0';
	while (more) {
		struct req r = { .method = "GET", .fullkey = "" , .query = q };
		struct xfer x;
		const char *p, *end, *b;
		size_t n;

		if (tok[0]) {
			pct(enctok, sizeof enctok, tok, 0);
			snprintf(q, sizeof q, "continuation-token=%s&list-type=2&max-keys=1000&"
			    "prefix=%s", enctok, enc);
		} else {
			snprintf(q, sizeof q, "list-type=2&max-keys=1000&prefix=%s", enc);
		}
		xfer_init(&x);
		if (request(s, &r, &x, e) == -1)
			return -1;
		p = x.mem ? x.mem : "";
		end = p + x.mem_len;
		while (xml_span(&p, end, "Contents", &b, &n)) {
			char key[1200], sz[32], lm[64];
			double t = 0;

			xml_text_in(b, b + n, "Key", key, sizeof key);
			xml_text_in(b, b + n, "Size", sz, sizeof sz);
			xml_text_in(b, b + n, "LastModified", lm, sizeof lm);
			if (strncmp(key, s->prefix, plen) != 0)
				continue;
			if (sbx_time_parse(lm, &t) == -1)
				t = 0;
			if (each(ctx, key + plen, strtoll(sz, NULL, 10), t) == -1) {
				/* Never a partial listing: retention would take it as whole. */
				free(x.mem);
				return sbx_err_oom(e);
			}
		}
		{
			char trunc[16];

			xml_text_in(x.mem ? x.mem : "", end, "IsTruncated", trunc, sizeof trunc);
			more = strcmp(trunc, "true") == 0 && x.mem &&
			    xml_text_in(x.mem, end, "NextContinuationToken", tok, sizeof tok) &&
			    tok[0];
		}
		free(x.mem);
	}
	return 0;
}

int
sbx_s3_abort_stale(struct sbx_s3 *s, const char *key_prefix, double before, int dry_run,
    int *count, struct sbx_err *e)
{
	char k[1200], enc[1600], q[2000];
	struct req r = { .method = "GET", .fullkey = "", .query = q };
	struct xfer x;
	const char *p, *end, *b;
	size_t n;

	*count = 0;
	if (full_key(s, key_prefix, k, sizeof k, e) == -1)
		return -1;
	pct(enc, sizeof enc, k, 0);
	snprintf(q, sizeof q, "prefix=%s&uploads=", enc);
	xfer_init(&x);
	if (request(s, &r, &x, e) == -1)
		return -1;
	p = x.mem ? x.mem : "";
	end = p + x.mem_len;
	while (xml_span(&p, end, "Upload", &b, &n)) {
		char key[1200], id[300], when[64];
		double t;

		xml_text_in(b, b + n, "Key", key, sizeof key);
		xml_text_in(b, b + n, "UploadId", id, sizeof id);
		xml_text_in(b, b + n, "Initiated", when, sizeof when);
		if (strncmp(key, k, strlen(k)) != 0 || sbx_time_parse(when, &t) == -1 || t >= before)
			continue;
		if (!dry_run)
			abort_upload(s, key, id);
		(*count)++;
	}
	free(x.mem);
	return 0;
}
