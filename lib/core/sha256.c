/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4) for the audit chain and content addresses: portable C,
 * and the x86 SHA extensions when the CPU has them (snapshot layers are
 * hashed as fast as they are compressed; no library to load at start-up).
 */
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_SHANI_CODE 1
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>   /* glibc 2.33+: its own CPUID results */
#endif
#endif

#include "sha256.h"
#include "util.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
block_portable(uint32_t *hs, const unsigned char *p)
{
	uint32_t w[64], a, b, cc, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 64; i++)
		w[i] = (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10)) + w[i - 7] +
		    (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 16];
	a = hs[0]; b = hs[1]; cc = hs[2]; d = hs[3];
	e = hs[4]; f = hs[5]; g = hs[6]; h = hs[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
		h = g; g = f; f = e; e = d + t1; d = cc; cc = b; b = a; a = t1 + t2;
	}
	hs[0] += a; hs[1] += b; hs[2] += cc; hs[3] += d;
	hs[4] += e; hs[5] += f; hs[6] += g; hs[7] += h;
}

#ifdef HAVE_SHANI_CODE
/* n blocks with SHA-NI: the state kept as ABEF/CDGH, four rounds a step,
 * the message schedule in four registers (Intel's SHA extensions paper). */
__attribute__((target("sha,sse4.1,ssse3")))
static void
blocks_shani(uint32_t *hs, const unsigned char *p, size_t n)
{
	const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i s0, s1, t, m[4], msg, abef, cdgh;
	int g;

	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)&hs[0]), 0xB1);
	s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)&hs[4]), 0x1B);
	s0 = _mm_alignr_epi8(t, s1, 8);         /* ABEF */
	s1 = _mm_blend_epi16(s1, t, 0xF0);      /* CDGH */
	for (; n > 0; n--, p += 64) {
		abef = s0;
		cdgh = s1;
		for (g = 0; g < 16; g++) {
			if (g < 4)
				m[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)
				    (p + 16 * g)), mask);
			else
				m[g & 3] = _mm_sha256msg2_epu32(_mm_add_epi32(
				    _mm_sha256msg1_epu32(m[g & 3], m[(g + 1) & 3]),
				    _mm_alignr_epi8(m[(g + 3) & 3], m[(g + 2) & 3], 4)), m[(g + 3) & 3]);
			msg = _mm_add_epi32(m[g & 3], _mm_loadu_si128((const __m128i *)(const void *)
			    &K[4 * g]));
			s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
			s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(msg, 0x0E));
		}
		s0 = _mm_add_epi32(s0, abef);
		s1 = _mm_add_epi32(s1, cdgh);
	}
	t = _mm_shuffle_epi32(s0, 0x1B);        /* FEBA */
	s1 = _mm_shuffle_epi32(s1, 0xB1);       /* DCHG */
	s0 = _mm_blend_epi16(t, s1, 0xF0);      /* DCBA */
	s1 = _mm_alignr_epi8(s1, t, 8);         /* HGFE */
	_mm_storeu_si128((__m128i *)(void *)&hs[0], s0);
	_mm_storeu_si128((__m128i *)(void *)&hs[4], s1);
}

/*
 * Where glibc says, its answer: it ran CPUID when the program started, and
 * CPUID is costly where a hypervisor traps it (tens of microseconds a call).
 */
static int
cpu_has_shani(void)
{
#ifdef CPU_FEATURE_ACTIVE
	return CPU_FEATURE_ACTIVE(SHA) && CPU_FEATURE_ACTIVE(SSE4_1) && CPU_FEATURE_ACTIVE(SSSE3);
#else
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3))
		return 0;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
#endif
}
#endif

/* -1: not decided yet; then 0 or 1. The unit test forces each path. */
static int use_shani = -1;

void
sbx_sha256_force_portable(int portable)
{
	use_shani = portable ? 0 : -1;
}

static void
blocks(uint32_t *hs, const unsigned char *p, size_t n)
{
#ifdef HAVE_SHANI_CODE
	if (use_shani == -1)
		use_shani = cpu_has_shani();
	if (use_shani) {
		blocks_shani(hs, p, n);
		return;
	}
#endif
	for (; n > 0; n--, p += 64)
		block_portable(hs, p);
}

void
sbx_sha256_init(struct sbx_sha256 *c)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memcpy(c->h, iv, sizeof iv);
	c->len = 0;
	c->n = 0;
}

void
sbx_sha256_update(struct sbx_sha256 *c, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t k;

	c->len += len;
	if (c->n > 0) {
		k = 64 - c->n < len ? 64 - c->n : len;
		memcpy(c->buf + c->n, p, k);
		c->n += k;
		p += k;
		len -= k;
		if (c->n < 64)
			return;
		blocks(c->h, c->buf, 1);
		c->n = 0;
	}
	if (len >= 64) {
		blocks(c->h, p, len / 64);
		p += len - len % 64;
		len %= 64;
	}
	memcpy(c->buf, p, len);
	c->n = len;
}

void
sbx_sha256_final(struct sbx_sha256 *c, unsigned char out[32])
{
	uint64_t bits = c->len * 8;
	unsigned char pad[72] = { 0x80 };
	size_t padlen = c->n < 56 ? 56 - c->n : 120 - c->n;
	int i;

	for (i = 0; i < 8; i++)
		pad[padlen + i] = (unsigned char)(bits >> (56 - 8 * i));
	sbx_sha256_update(c, pad, padlen + 8);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(c->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)c->h[i];
	}
}

void
sbx_sha256_hex(const void *buf, size_t len, char out[65])
{
	struct sbx_sha256 c;
	unsigned char d[32];

	sbx_sha256_init(&c);
	sbx_sha256_update(&c, buf, len);
	sbx_sha256_final(&c, d);
	sbx_hex(d, sizeof d, out);
}

void
sbx_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t len,
    unsigned char out[32])
{
	unsigned char k[64] = { 0 }, pad[64], inner[32];
	struct sbx_sha256 c;
	int i;

	if (keylen > sizeof k) {
		sbx_sha256_init(&c);
		sbx_sha256_update(&c, key, keylen);
		sbx_sha256_final(&c, k);
	} else if (keylen > 0) {
		memcpy(k, key, keylen);
	}
	for (i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	sbx_sha256_init(&c);
	sbx_sha256_update(&c, pad, sizeof pad);
	sbx_sha256_update(&c, msg, len);
	sbx_sha256_final(&c, inner);
	for (i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	sbx_sha256_init(&c);
	sbx_sha256_update(&c, pad, sizeof pad);
	sbx_sha256_update(&c, inner, sizeof inner);
	sbx_sha256_final(&c, out);
	explicit_bzero(k, sizeof k);
	explicit_bzero(pad, sizeof pad);
}
