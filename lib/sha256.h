/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 for the audit chain and content addresses, computed by OpenSSL's
 * libcrypto (with the CPU's SHA instructions where it has them: layers are
 * hashed at the speed they are compressed).
 */
#ifndef SBX_SHA256_H
#define SBX_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* OpenSSL's SHA256_CTX, by size: callers need not include OpenSSL. */
struct sbx_sha256 {
	uint32_t h[8], nl, nh, data[16];
	unsigned int num, md_len;
};

void sbx_sha256_init(struct sbx_sha256 *c);
void sbx_sha256_update(struct sbx_sha256 *c, const void *data, size_t len);
void sbx_sha256_final(struct sbx_sha256 *c, unsigned char out[32]);
/* Digest of buf as 64 lowercase hex characters plus NUL. */
void sbx_sha256_hex(const void *buf, size_t len, char out[65]);

#endif
