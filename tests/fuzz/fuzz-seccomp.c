/* SPDX-License-Identifier: MIT */
/* Fuzz the seccomp policy file reader (security.seccomp: PATH). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "seccomp_profile.h"
#include "util.h"

static char path[64];

/* Leave no trace: the scratch file goes when the run ends. */
static void
cleanup(void)
{
	unlink(path);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct sbx_err e;

	if (path[0] == '\0') {
		snprintf(path, sizeof path, "/tmp/sbx-fuzz-seccomp.%ld", (long)getpid());
		atexit(cleanup);
	}
	if (sbx_write_atomic_nosync(path, data, size, 0600, &e) == -1)
		return 0;
	if (sbx_seccomp_check(path, &e) == -1 && e.code != SBX_EX_DATAERR &&
	    e.code != SBX_EX_NOINPUT && e.code != SBX_EX_IOERR)
		abort();
	return 0;
}
