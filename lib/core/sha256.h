/* SPDX-License-Identifier: MIT */
/* SHA-256 (FIPS 180-4) for the audit chain and content addresses; HMAC-SHA256. */
#ifndef SBX_SHA256_H
#define SBX_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sbx_sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t n;
};

void sbx_sha256_init(struct sbx_sha256 *c);
void sbx_sha256_update(struct sbx_sha256 *c, const void *data, size_t len);
void sbx_sha256_final(struct sbx_sha256 *c, unsigned char out[32]);
/* Digest of buf as 64 lowercase hex characters plus NUL. */
void sbx_sha256_hex(const void *buf, size_t len, char out[65]);
/* HMAC-SHA256 (RFC 2104) of msg under key, for the audit log's keyed lines. */
void sbx_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t len,
    unsigned char out[32]);
/* For the unit test: use the portable code even where the CPU has SHA-NI. */
void sbx_sha256_force_portable(int portable);

#endif
