/* SPDX-License-Identifier: MIT */
/* sbx: run `sbx VERB ARGS` as `sbx-VERB ARGS`, as git does — see sbx(7). */
#include <limits.h>
#include <unistd.h>

#include "common.h"
#include "id.h"

static void __attribute__((noreturn))
usage(int code)
{
	fprintf(code ? stderr : stdout,
	    "usage: sbx VERB [ARG...]\n"
	    "verbs: provision run snap fork inspect ls gc watchdog pause\n");
	exit(code);
}

int
main(int argc, char *argv[])
{
	char self[PATH_MAX], path[PATH_MAX + 64], prog[64], *slash;
	ssize_t n;

	if (argc < 2)
		usage(SBX_EX_USAGE);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
		usage(0);
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0)
		sbx_version();
	if (!sbx_id_valid(argv[1]) || strchr(argv[1], '.') != NULL)
		errx(SBX_EX_USAGE, "'%s' is not a verb", argv[1]);
	snprintf(prog, sizeof prog, "sbx-%s", argv[1]);
	argv[1] = prog;
	/* Prefer the sbx-VERB installed beside us, then PATH. */
	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			snprintf(path, sizeof path, "%s/%s", self, prog);
			execv(path, argv + 1);
		}
	}
	execvp(prog, argv + 1);
	err(errno == ENOENT ? SBX_EX_USAGE : SBX_EX_OSERR, "%s", prog);
}
