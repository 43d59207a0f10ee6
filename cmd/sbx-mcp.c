/* SPDX-License-Identifier: MIT */
/* sbx-mcp: a Model Context Protocol server over stdio — see sbx-mcp(1). */
#include <getopt.h>

#include "common.h"
#include "mcp.h"
#include "policy.h"

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code,
	    "usage: sbx-mcp [--manifests DIR] [--max-sandboxes N] [--max-output BYTES]\n"
	    "               [--max-file BYTES] [--timeout SECONDS] [--max-timeout SECONDS]\n"
	    "               [--any-sandbox] [-P POLICY] [-c ID]\n",
	    "Serve the Model Context Protocol on stdin and stdout: tools that create, run in,\n"
	    "copy files into and out of, snapshot, fork and destroy sandboxes.\n\n"
	    "      --manifests DIR      named manifests (NAME.yaml) the create tool may use\n"
	    "      --max-sandboxes N    live sandboxes this server may have made (default 16)\n"
	    "      --max-output BYTES   bytes kept of each of a run's streams (default 65536)\n"
	    "      --max-file BYTES     bytes read_file returns (default 1048576)\n"
	    "      --timeout SECONDS    a run's timeout when the call names none (default 60)\n"
	    "      --max-timeout SECONDS the most a call may ask for (default 600)\n"
	    "      --any-sandbox        reach every sandbox of the state root, not only its own\n"
	    "  -P, --policy FILE        the operator's policy manifests are held to\n"
	    "  -c, --correlation-id ID  the correlation ID of the audit events\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

static double
number(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v >= lo) || v > hi)
		errx(SBX_EX_USAGE, "%s: '%s' is not a number from %g to %g", opt, s, lo, hi);
	return v;
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "manifests", required_argument, NULL, 'M' },
		{ "max-sandboxes", required_argument, NULL, 'n' },
		{ "max-output", required_argument, NULL, 'O' },
		{ "max-file", required_argument, NULL, 'F' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "max-timeout", required_argument, NULL, 'X' },
		{ "any-sandbox", no_argument, NULL, 'A' },
		{ "policy", required_argument, NULL, 'P' },
		{ "correlation-id", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_mcp_opts o = { NULL, 65536, 1 << 20, 60, 600, 16, 0 };
	struct sbx_err e = { 0 };
	struct sbx_store store;
	int c;

	while ((c = getopt_long(argc, argv, "P:c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'M': o.manifests = optarg; break;
		case 'n': o.max_sandboxes = (size_t)number("--max-sandboxes", optarg, 1, 4096); break;
		case 'O': o.max_output = (size_t)number("--max-output", optarg, 0, 1 << 30); break;
		case 'F': o.max_file = (size_t)number("--max-file", optarg, 0, 1 << 30); break;
		case 'T': o.default_timeout_s = number("--timeout", optarg, 0.001, 31536000); break;
		case 'X': o.max_timeout_s = number("--max-timeout", optarg, 0.001, 31536000); break;
		case 'A': o.any_sandbox = 1; break;
		case 'P': sbx_policy_set_path(optarg); break;
		case 'c': sbx_audit_set_correlation(optarg); break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(SBX_EX_USAGE);
		}
	}
	if (optind != argc)
		usage(SBX_EX_USAGE);
	if (o.default_timeout_s > o.max_timeout_s)
		o.default_timeout_s = o.max_timeout_s;
	/* SIGPIPE stays as it is: ignored, the commands it runs would inherit that.
	 * A client gone while we answer ends the server, as it should. */
	if (sbx_cmd_store(&store, &e) == -1)
		sbx_die(&e, "state root");
	if (sbx_mcp_serve(&store, &o, stdin, stdout, &e) == -1)
		sbx_die(&e, NULL);
	return 0;
}
