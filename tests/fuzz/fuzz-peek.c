/* SPDX-License-Identifier: MIT */
/* Fuzz the relay's reading of a connection's first bytes (TLS SNI, HTTP
 * Host): untrusted bytes from inside a sandbox. Property: a name it returns
 * is a plain host name that fits the buffer. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char name[64];
	size_t i;

	memset(name, 'x', sizeof name);
	if (size > 16384)
		return 0;
	if (sbx_relay_peek_name(data, size, name, sizeof name) == 1) {
		if (memchr(name, '\0', sizeof name) == NULL)
			abort();
		for (i = 0; name[i]; i++)
			if (!isalnum((unsigned char)name[i]) && !strchr(".-_", name[i]))
				abort();
	}
	return 0;
}
