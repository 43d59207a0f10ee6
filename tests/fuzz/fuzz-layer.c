/* SPDX-License-Identifier: MIT */
/*
 * Fuzz layer unpacking with arbitrary bytes, as a store or an import would
 * hand them over: the check must answer 65 (or 74) and never crash; what it
 * accepts is extracted into a private directory, and nothing may appear
 * outside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layer.h"
#include "util.h"

static char base[256];

/* Leave no trace: the scratch directory goes when the run ends. */
static void
cleanup(void)
{
	sbx_rm_rf(base, NULL);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct sbx_layer_info li;
	struct sbx_err e;
	char dir[300], outside[300];
	int fd;

	if (base[0] == '\0') {
		snprintf(base, sizeof base, "/tmp/sbx-fuzz-layer.%ld", (long)getpid());
		sbx_mkdir_p(base, 0700, NULL);
		atexit(cleanup);
		/* Bound what an accepted input may unpack to. */
		setenv("SBX_LAYER_MAX_MB", "64", 1);
	}
	if ((fd = memfd_create("layer", MFD_CLOEXEC)) == -1)
		return 0;
	if (sbx_write_all(fd, data, size) == -1 || lseek(fd, 0, SEEK_SET) == -1) {
		close(fd);
		return 0;
	}
	if (sbx_layer_unpack(fd, NULL, NULL, 0, &li, &e) == -1) {
		if (e.code != SBX_EX_DATAERR && e.code != SBX_EX_IOERR)
			abort();
		close(fd);
		return 0;
	}
	/* Accepted: extract it into base/t, then base holds t alone. */
	snprintf(dir, sizeof dir, "%s/t", base);
	snprintf(outside, sizeof outside, "%s/escaped", base);
	sbx_rm_rf(dir, NULL);
	if (mkdir(dir, 0700) == 0 && lseek(fd, 0, SEEK_SET) == 0 &&
	    sbx_layer_unpack(fd, NULL, dir, 0, &li, &e) == -1 &&
	    e.code != SBX_EX_DATAERR && e.code != SBX_EX_IOERR)
		abort();
	if (access(outside, F_OK) == 0)
		abort();
	sbx_rm_rf(dir, NULL);
	close(fd);
	return 0;
}
