/* SPDX-License-Identifier: MIT */
/* SHA-256 through libcrypto's one-shot context (no allocation, nothing to free). */
/* SHA256_Init and friends are deprecated in OpenSSL 3.0 in favour of EVP,
 * whose contexts are allocated; these are neither going away nor slower. */
#define OPENSSL_API_COMPAT 0x10101000L
#include <openssl/sha.h>
#include <string.h>

#include "sha256.h"

_Static_assert(sizeof(struct sbx_sha256) == sizeof(SHA256_CTX), "SHA256_CTX size");
_Static_assert(_Alignof(struct sbx_sha256) >= _Alignof(SHA256_CTX), "SHA256_CTX alignment");

void
sbx_sha256_init(struct sbx_sha256 *c)
{
	SHA256_Init((SHA256_CTX *)(void *)c);
}

void
sbx_sha256_update(struct sbx_sha256 *c, const void *data, size_t len)
{
	SHA256_Update((SHA256_CTX *)(void *)c, data, len);
}

void
sbx_sha256_final(struct sbx_sha256 *c, unsigned char out[32])
{
	SHA256_Final(out, (SHA256_CTX *)(void *)c);
}

void
sbx_sha256_hex(const void *buf, size_t len, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char d[32];
	int i;

	SHA256((const unsigned char *)buf, len, d);
	for (i = 0; i < 32; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
}
