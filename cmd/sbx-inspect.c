/* SPDX-License-Identifier: MIT */
/* sbx-inspect: print a sandbox's state document — see sbx-inspect(1). */
#include <getopt.h>

#include "common.h"
#include "sandbox.h"

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code, "usage: sbx-inspect [-o yaml|json] [--usage] [ID | -]\n",
	    "Print a sandbox's state document (ID, or the ID or a document on stdin).\n\n"
	    "  -o, --output yaml|json   the format (default yaml; json is one line)\n"
	    "      --usage              what the sandbox uses now: memory, CPU, pids, disk\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "usage", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	struct sbx_manifest m;
	enum sbx_format fmt = SBX_FMT_YAML;
	char id[SBX_ID_MAX + 1];
	int c, use = 0;

	while ((c = getopt_long(argc, argv, "o:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'o': fmt = sbx_opt_format(optarg, SBX_EX_USAGE); break;
		case 'U': use = 1; break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(SBX_EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	sbx_id_operand(argc, argv, id, sizeof id, usage);
	if (sbx_cmd_store(&store, &e) == -1)
		sbx_die(&e, "state root");
	if (use) {
		struct sbx_node *u = sbx_sandbox_usage(&store, id, &e);

		if (u == NULL)
			sbx_die(&e, id);
		if (sbx_doc_emit_tree(stdout, u, fmt) == -1)
			errx(SBX_EX_IOERR, "stdout: write failed");
		return sbx_flush_stdout();
	}
	if (sbx_sandbox_view(&store, id, &m, &e) == -1)
		sbx_die(&e, id);
	if (sbx_manifest_emit(stdout, &m, fmt) == -1)
		errx(SBX_EX_IOERR, "stdout: write failed");
	sbx_manifest_free(&m);
	return sbx_flush_stdout();
}
