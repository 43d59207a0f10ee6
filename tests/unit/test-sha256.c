/* SPDX-License-Identifier: MIT */
/* SHA-256 against the FIPS 180-4 examples, portable and (where the CPU has
 * them) with the SHA extensions, and the two against each other. */
#include <stdlib.h>

#include "sha256.h"
#include "tap.h"

static void
digest(const unsigned char *p, size_t len, size_t chunk, char hex[65])
{
	struct sbx_sha256 c;
	unsigned char d[32];
	size_t i, k;
	int j;

	sbx_sha256_init(&c);
	for (i = 0; i < len; i += k) {
		k = len - i < chunk ? len - i : chunk;
		sbx_sha256_update(&c, p + i, k);
	}
	sbx_sha256_final(&c, d);
	for (j = 0; j < 32; j++)
		snprintf(hex + 2 * j, 3, "%02x", d[j]);
}

static void
vectors(const char *mode)
{
	char hex[65], *big;

	sbx_sha256_hex("abc", 3, hex);
	ok(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
	    "sha256 (%s): abc", mode);
	sbx_sha256_hex("", 0, hex);
	ok(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0,
	    "sha256 (%s): empty", mode);
	sbx_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	ok(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0,
	    "sha256 (%s): two blocks (56 bytes)", mode);
	big = malloc(1000000);
	memset(big, 'a', 1000000);
	digest((unsigned char *)big, 1000000, 1000, hex);
	ok(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
	    "sha256 (%s): a million 'a' in pieces", mode);
	digest((unsigned char *)big, 1000000, 1000000, hex);
	ok(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
	    "sha256 (%s): a million 'a' at once", mode);
	free(big);
}

int
main(void)
{
	static const size_t lens[] = { 0, 1, 55, 56, 63, 64, 65, 127, 128, 1000, 65537 };
	static const size_t chunks[] = { 1, 7, 64, 100, 1 << 20 };
	unsigned char *data = malloc(65537);
	char a[65], b[65];
	size_t i, j;
	int same = 1;

	vectors("default");
	sbx_sha256_force_portable(1);
	vectors("portable");
	srand(7);
	for (i = 0; i < 65537; i++)
		data[i] = (unsigned char)rand();
	for (i = 0; i < sizeof lens / sizeof lens[0]; i++)
		for (j = 0; j < sizeof chunks / sizeof chunks[0]; j++) {
			sbx_sha256_force_portable(1);
			digest(data, lens[i], chunks[j], a);
			sbx_sha256_force_portable(0);
			digest(data, lens[i], chunks[j], b);
			same &= strcmp(a, b) == 0;
		}
	ok(same, "sha256: the fast path and the portable one agree on every length and chunking");
	free(data);
	return done_testing();
}
