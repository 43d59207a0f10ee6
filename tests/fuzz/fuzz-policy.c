/* SPDX-License-Identifier: MIT */
/* Fuzz the seccomp policy file reader (security.seccomp: PATH). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "seccomp_profile.h"
#include "util.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static char path[64];
	struct sbx_err e;

	if (path[0] == '\0')
		snprintf(path, sizeof path, "/tmp/sbx-fuzz-policy.%ld", (long)getpid());
	if (sbx_write_atomic_nosync(path, data, size, 0600, &e) == -1)
		return 0;
	if (sbx_seccomp_check(path, &e) == -1 && e.code != SBX_EX_DATAERR &&
	    e.code != SBX_EX_NOINPUT && e.code != SBX_EX_IOERR)
		abort();
	return 0;
}
