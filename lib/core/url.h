/* SPDX-License-Identifier: MIT */
/*
 * The syntax of storage URLs, for whoever reads one: the manifest's
 * snapshot.storage_backend and the S3 client. No I/O.
 */
#ifndef SBX_URL_H
#define SBX_URL_H

#include "error.h"

/* Is url s3://BUCKET[/PREFIX] with a bucket name S3 takes and a prefix sbx
 * writes? Exit 65 naming the URL and what is wrong. */
int sbx_url_s3_check(const char *url, struct sbx_err *e);
/* A key part sbx writes: letters, digits, and . _ - / with no empty, . or ..
 * component. */
int sbx_url_s3_key_ok(const char *k);

#endif
