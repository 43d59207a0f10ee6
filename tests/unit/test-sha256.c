/* SPDX-License-Identifier: MIT */
/* SHA-256 against the FIPS 180-4 examples, portable and (where the CPU has
 * them) with the SHA extensions, and the two against each other; HMAC-SHA256
 * against RFC 4231's test cases. */
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

static void
fill(unsigned char *b, int c, size_t n)
{
	memset(b, c, n);
}

/* RFC 4231, section 4: test cases 1 to 7 (case 5's MAC is truncated to 128 bits). */
static void
hmac_vectors(const char *mode)
{
	static const struct {
		int keybyte;            /* -1: the key is "Jefe"; -2: 0x01..0x19 */
		size_t keylen;
		const char *data;       /* NULL: 50 bytes of datab */
		int datab;
		const char *mac;
	} v[] = {
		{ 0x0b, 20, "Hi There", 0,
		  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
		{ -1, 4, "what do ya want for nothing?", 0,
		  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
		{ 0xaa, 20, NULL, 0xdd,
		  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
		{ -2, 25, NULL, 0xcd,
		  "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
		{ 0x0c, 20, "Test With Truncation", 0, "a3b6167473100ee06e0c796c2955552b" },
		{ 0xaa, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 0,
		  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
		{ 0xaa, 131, "This is a test using a larger than block-size key and a larger "
		  "than block-size data. The key needs to be hashed before being used by the "
		  "HMAC algorithm.", 0,
		  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
	};
	unsigned char key[131], data[50], mac[32];
	char hex[65];
	size_t i, j;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		if (v[i].keybyte == -1)
			memcpy(key, "Jefe", 4);
		else if (v[i].keybyte == -2)
			for (j = 0; j < v[i].keylen; j++)
				key[j] = (unsigned char)(j + 1);
		else
			fill(key, v[i].keybyte, v[i].keylen);
		if (v[i].data == NULL) {
			fill(data, v[i].datab, sizeof data);
			sbx_hmac_sha256(key, v[i].keylen, data, sizeof data, mac);
		} else {
			sbx_hmac_sha256(key, v[i].keylen, v[i].data, strlen(v[i].data), mac);
		}
		for (j = 0; j < 32; j++)
			snprintf(hex + 2 * j, 3, "%02x", mac[j]);
		ok(strncmp(hex, v[i].mac, strlen(v[i].mac)) == 0, "hmac-sha256 (%s): RFC 4231 "
		    "test case %zu", mode, i + 1);
	}
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
	hmac_vectors("default");
	sbx_sha256_force_portable(1);
	vectors("portable");
	hmac_vectors("portable");
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
