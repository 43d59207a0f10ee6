/* SPDX-License-Identifier: MIT */
/* sbx-provision: create a sandbox from a manifest — see sbx-provision(1). */
#include <getopt.h>
#include <unistd.h>

#include "common.h"
#include "policy.h"
#include "pool.h"
#include "provision.h"
#include "sandbox.h"

/* --fill-pools: each member made, as "POOL ID". */
static void
made(void *ctx, const char *pool, const char *id, const char *what)
{
	if (strcmp(what, "made") == 0)
		printf("%s %s\n", pool, id);
}

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code,
	    "usage: sbx-provision [-n] [--no-watchdog] [-o yaml|json] [-c ID] [-P POLICY]\n"
	    "                     [FILE | -]\n"
	    "       sbx-provision --fill-pools [--no-watchdog] [-P POLICY]\n",
	    "Make a sandbox from the manifest FILE (or stdin) and print its ID.\n\n"
	    "  -n, --dry-run            check the manifest and the policy, print it with\n"
	    "                           defaults; make nothing\n"
	    "      --no-watchdog        start no watchdog (a sbx-watchdog --all supervises it)\n"
	    "      --fill-pools         make the members the policy's warm pools lack, retire\n"
	    "                           stale ones; print each member made\n"
	    "  -o, --output yaml|json   print the state document instead of the ID\n"
	    "  -c, --correlation-id ID  the correlation ID of the audit events\n"
	    "  -P, --policy FILE        the operator's policy (default: the state root's)\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "no-watchdog", no_argument, NULL, 'W' },
		{ "fill-pools", no_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "correlation-id", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	struct sbx_manifest m;
	enum sbx_format fmt = SBX_FMT_ID;
	int c, dry = 0, no_wd = 0, fill = 0, existed;
	const char *file;

	while ((c = getopt_long(argc, argv, "no:c:P:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'n': dry = 1; break;
		case 'W': no_wd = 1; break;
		case 'F': fill = 1; break;
		case 'o': fmt = sbx_opt_format(optarg, SBX_EX_USAGE); break;
		case 'c': sbx_audit_set_correlation(optarg); break;
		case 'P': sbx_policy_set_path(optarg); break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(SBX_EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1 || (fill && (argc > 0 || dry || fmt != SBX_FMT_ID)))
		usage(SBX_EX_USAGE);
	if (fill) {
		if (sbx_cmd_store(&store, &e) == -1)
			sbx_die(&e, "state root");
		if (sbx_pools_tend(&store, SBX_POOLS_FILL | (no_wd ? SBX_POOLS_NO_WATCHDOG : 0), made,
		    NULL, &e) == -1)
			sbx_die(&e, "warm pools");
		return sbx_flush_stdout();
	}
	file = argc ? argv[0] : "-";
	if (argc == 0 && isatty(STDIN_FILENO))
		usage(SBX_EX_USAGE);
	if (sbx_manifest_load(file, &m, &e) == -1)
		sbx_die(&e, NULL);
	if ((dry ? sbx_store_locate(&store, &e) : sbx_cmd_store(&store, &e)) == -1)
		sbx_die(&e, "state root");
	if (sbx_provision(&store, &m, (dry ? SBX_PROV_DRY_RUN : 0) |
	    (no_wd ? SBX_PROV_NO_WATCHDOG : 0), &existed, &e) == -1)
		sbx_die(&e, strcmp(file, "-") ? file : "<stdin>");
	/* A microVM's is QEMU's user-mode network: out as the host, nothing in. */
	if (strcmp(m.network_policy, "host") == 0)
		fprintf(stderr, "sbx-provision: WARNING: %s%sshares the host's network (network_policy "
		    "host, trust: trusted): it can reach everything this host can%s\n",
		    dry ? "" : m.sandbox_id, dry ? "" : " ",
		    m.isolation_level && strcmp(m.isolation_level, "microvm") == 0 ? "" :
		    ", and listen on its addresses");
	if (fmt == SBX_FMT_ID && !dry)
		printf("%s\n", m.sandbox_id);
	else if (sbx_manifest_emit(stdout, &m, fmt == SBX_FMT_ID ? SBX_FMT_YAML : fmt) == -1)
		errx(SBX_EX_IOERR, "stdout: write failed");
	sbx_manifest_free(&m);
	return sbx_flush_stdout();
}
