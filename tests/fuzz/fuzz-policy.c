/* SPDX-License-Identifier: MIT */
/* Fuzz the operator's policy reader (sbx-policy(5)). */
#include <stdlib.h>

#include "policy.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct sbx_policy *p = NULL;
	struct sbx_err e;

	if (sbx_policy_parse("fuzz.yaml", (const char *)data, size, &p, &e) == 0)
		sbx_policy_free(p);
	else if (e.code != SBX_EX_DATAERR)
		abort();
	return 0;
}
