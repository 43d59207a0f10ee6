/* SPDX-License-Identifier: MIT */
/* Fuzz the audit log verifier with arbitrary logs: it must answer, never crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "util.h"

static struct sbx_store s;

/* Leave no trace: the scratch directory goes when the run ends. */
static void
cleanup(void)
{
	sbx_rm_rf(s.root, NULL);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct sbx_audit_report r;
	struct sbx_err e;
	char path[1100];

	if (s.root[0] == '\0') {
		snprintf(s.root, sizeof s.root, "/tmp/sbx-fuzz-audit.%ld", (long)getpid());
		sbx_mkdir_p(s.root, 0700, NULL);
		atexit(cleanup);
	}
	snprintf(path, sizeof path, "%s/audit.log", s.root);
	if (sbx_write_atomic_nosync(path, data, size, 0600, &e) == -1)
		return 0;
	if (sbx_audit_verify(&s, &r, &e) == -1 && e.code != SBX_EX_NO &&
	    e.code != SBX_EX_DATAERR && e.code != SBX_EX_IOERR)
		abort();
	return 0;
}
