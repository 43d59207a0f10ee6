/* SPDX-License-Identifier: MIT */
/* Fuzz the reader of IDs on stdin (IDs one a line, or documents' sandbox_id or
 * snapshot_id). Property: what it accepts is valid IDs, so they are safe to become paths. */
#include <stdlib.h>
#include <string.h>

#include "id.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct sbx_ids ids;
	struct sbx_err e;
	size_t i;

	if (sbx_ids_parse("stdin", (const char *)data, size, SBX_KEYS("sandbox_id", "snapshot_id"),
	    0, &ids, &e) == -1)
		return 0;
	for (i = 0; i < ids.n; i++)
		if (!sbx_id_valid(ids.v[i]) || strchr(ids.v[i], '/') != NULL ||
		    strstr(ids.v[i], "..") == ids.v[i])
			abort();
	sbx_ids_free(&ids);
	return 0;
}
