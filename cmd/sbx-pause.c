/* SPDX-License-Identifier: MIT */
/* sbx-pause: freeze or thaw a sandbox — see sbx-pause(1). */
#include <getopt.h>

#include "common.h"
#include "sandbox.h"

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code, "usage: sbx-pause [-r] [-c ID] [ID | -]\n",
	    "Freeze every process of a sandbox (status paused), or thaw them.\n\n"
	    "  -r, --resume             thaw instead of freeze\n"
	    "  -c, --correlation-id ID  the correlation ID of the audit events\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "resume", no_argument, NULL, 'r' },
		{ "correlation-id", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	char id[SBX_ID_MAX + 1];
	int c, resume = 0;

	while ((c = getopt_long(argc, argv, "rc:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'r': resume = 1; break;
		case 'c': sbx_audit_set_correlation(optarg); break;
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
	if (sbx_sandbox_pause(&store, id, !resume, &e) == -1)
		sbx_die(&e, id);
	printf("%s\n", id);
	return sbx_flush_stdout();
}
