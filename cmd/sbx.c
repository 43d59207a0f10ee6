/* SPDX-License-Identifier: MIT */
/* sbx: run `sbx VERB ARGS` as `sbx-VERB ARGS`, as git does — see sbx(7). */
#include <limits.h>
#include <unistd.h>

#include "common.h"
#include "id.h"
#include "util.h"

static const char *const verbs[] = { "provision", "run", "snap", "fork", "inspect", "ls", "gc",
	"watchdog", "pause", "cp", "mcp", NULL };

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code,
	    "usage: sbx VERB [ARG...]\n"
	    "verbs: provision run snap fork inspect ls gc watchdog pause cp mcp\n",
	    "Run sbx-VERB with the arguments, as git does (sbx-VERB -h for each).\n\n"
	    "  provision  make a sandbox from a manifest, print its ID\n"
	    "  run        run a command inside a sandbox\n"
	    "  snap       snapshot a sandbox; list, restore, push and pull snapshots\n"
	    "  fork       make sandboxes from a snapshot; keep the winning branch\n"
	    "  inspect    print a sandbox's state document\n"
	    "  ls         list sandboxes or snapshots\n"
	    "  gc         destroy sandboxes, reap the dead, apply snapshot retention\n"
	    "  watchdog   enforce lifetimes and watch memory from outside\n"
	    "  pause      freeze or thaw a sandbox\n"
	    "  cp         copy files into and out of a live sandbox\n"
	    "  mcp        serve the Model Context Protocol to an agent on stdio\n"
	    "  -h, --help, -V, --version\n");
}

/* An unknown verb: say so, name the nearest one and every one, exit 64. */
static void __attribute__((noreturn))
unknown(const char *verb)
{
	const char *near = sbx_nearest(verb, verbs);
	size_t i;

	fprintf(stderr, "sbx: '%.64s' is not a verb", verb);
	if (near != NULL)
		fprintf(stderr, "; did you mean '%s'?", near);
	fputs("\nverbs:", stderr);
	for (i = 0; verbs[i] != NULL; i++)
		fprintf(stderr, " %s", verbs[i]);
	fputs(" (sbx -h)\n", stderr);
	exit(SBX_EX_USAGE);
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
		unknown(argv[1]);
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
	if (errno == ENOENT)
		unknown(prog + 4);
	err(SBX_EX_OSERR, "%s", prog);
}
