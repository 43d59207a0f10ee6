/* SPDX-License-Identifier: MIT */
/* Fuzz the ID reader (a bare ID, or a document's sandbox_id). Property: what it
 * accepts is a valid ID, so it is safe to become a path. */
#include <stdlib.h>
#include <string.h>

#include "id.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = malloc(size + 1), out[SBX_ID_MAX + 1];
	struct sbx_err e;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (sbx_id_from_text(text, "sandbox_id", out, sizeof out, &e) == 0 &&
	    (!sbx_id_valid(out) || strchr(out, '/') != NULL || strstr(out, "..") == out))
		abort();
	free(text);
	return 0;
}
