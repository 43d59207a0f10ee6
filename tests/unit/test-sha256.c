/* SPDX-License-Identifier: MIT */
/* SHA-256 against the FIPS 180-4 examples. */
#include <stdlib.h>

#include "sha256.h"
#include "tap.h"

int
main(void)
{
	char hex[65], *big;
	struct sbx_sha256 c;
	unsigned char d[32];
	int i;

	sbx_sha256_hex("abc", 3, hex);
	ok(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
	    "sha256: abc");
	sbx_sha256_hex("", 0, hex);
	ok(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0,
	    "sha256: empty");
	sbx_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	ok(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0,
	    "sha256: two blocks (56 bytes)");
	big = malloc(1000000);
	memset(big, 'a', 1000000);
	sbx_sha256_init(&c);
	for (i = 0; i < 1000; i++)
		sbx_sha256_update(&c, big + i * 1000, 1000);
	sbx_sha256_final(&c, d);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	ok(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
	    "sha256: a million 'a' in pieces");
	free(big);
	return done_testing();
}
