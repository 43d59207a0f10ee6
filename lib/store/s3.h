/* SPDX-License-Identifier: MIT */
/*
 * An S3 client over libcurl: AWS Signature V4 (libcurl's, with the payload's
 * SHA-256 sent in x-amz-content-sha256 and query strings sorted and
 * percent-encoded, as strict servers require), path-style or virtual-host
 * addressing, HTTP or HTTPS, multipart upload, retries of transient failures
 * with backoff within a bounded total time, and a progress bar on a terminal.
 *
 * Configuration comes from the standard places: AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION (or
 * AWS_DEFAULT_REGION), AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_CA_BUNDLE,
 * and the shared credentials and config files (AWS_SHARED_CREDENTIALS_FILE,
 * AWS_CONFIG_FILE, ~/.aws/...) under AWS_PROFILE. sbx's own knobs:
 * SBX_S3_ADDRESSING (path or virtual), SBX_S3_RETRY_S, SBX_S3_PART_MB,
 * SBX_S3_PARALLEL.
 *
 * Keys given to these calls are relative to the store's prefix.
 */
#ifndef SBX_S3_H
#define SBX_S3_H

#include <stddef.h>

#include "error.h"

#define SBX_S3_MAX_WORKERS 16

struct sbx_s3 {
	char *url;                 /* s3://BUCKET[/PREFIX] as given, for messages */
	char *bucket, *prefix;     /* prefix "" or ending in '/' */
	char *endpoint;            /* scheme://host[:port], no trailing '/' */
	char *region, *access, *secret, *token, *ca;
	int virtual_host;
	double retry_s;            /* total time transient failures are retried for */
	long long part_size;       /* multipart above this size */
	int workers;               /* parts sent at once */
	int progress;              /* draw a progress bar on stderr */
	double server_time;        /* the Date of the server's last answer (0: none) */
	void *curl;
};

/* Parse url and find endpoint, region and credentials; load libcurl.
 * No request is made. Missing credentials are exit 77. */
int sbx_s3_open(struct sbx_s3 *s, const char *url, struct sbx_err *e);
void sbx_s3_close(struct sbx_s3 *s);

/* 1 and the size when key exists, 0 when not, -1 on error. */
int sbx_s3_head(struct sbx_s3 *s, const char *key, long long *size, struct sbx_err *e);
/* The object as a NUL-terminated buffer of at most max bytes. */
int sbx_s3_get_mem(struct sbx_s3 *s, const char *key, size_t max, char **buf, size_t *len,
    struct sbx_err *e);
/*
 * The object appended to fd (which is truncated back on a retry), at most max
 * bytes; hex gets the SHA-256 of what was written. label names the transfer
 * on the progress bar.
 */
int sbx_s3_get_file(struct sbx_s3 *s, const char *key, int fd, long long max,
    char hex[65], long long *size, const char *label, struct sbx_err *e);
int sbx_s3_put_mem(struct sbx_s3 *s, const char *key, const void *buf, size_t len,
    struct sbx_err *e);
/*
 * Upload size bytes of fd from offset 0; sha_hex is their SHA-256 (signed, so
 * the server checks it). Above the part size: a multipart upload, each part
 * with its own SHA-256, aborted on failure.
 */
int sbx_s3_put_file(struct sbx_s3 *s, const char *key, int fd, long long size,
    const char *sha_hex, const char *label, struct sbx_err *e);
int sbx_s3_delete(struct sbx_s3 *s, const char *key, struct sbx_err *e);
/* Copy an object onto itself, so that its LastModified becomes now. */
int sbx_s3_touch(struct sbx_s3 *s, const char *key, struct sbx_err *e);

/* Called per object under a key prefix: its key (relative), size and
 * LastModified (seconds since the epoch). -1 (out of memory) fails the listing. */
typedef int (*sbx_s3_each)(void *ctx, const char *key, long long size, double mtime);
int sbx_s3_list(struct sbx_s3 *s, const char *key_prefix, sbx_s3_each each, void *ctx,
    struct sbx_err *e);
/* Multipart uploads under a key prefix that were begun before `before`
 * (seconds since the epoch) are aborted (unless dry_run); count gets how many. */
int sbx_s3_abort_stale(struct sbx_s3 *s, const char *key_prefix, double before, int dry_run,
    int *count, struct sbx_err *e);

/* For tests: the text of the first <tag>...</tag> in xml, entities decoded. */
int sbx_s3_xml_text(const char *xml, const char *tag, char *out, size_t size);

#endif
