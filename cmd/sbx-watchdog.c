/* SPDX-License-Identifier: MIT */
/* sbx-watchdog: enforce lifetimes and watch memory from outside — see sbx-watchdog(1). */
#include <getopt.h>

#include "common.h"
#include "id.h"
#include "watchdog.h"

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code,
	    "usage: sbx-watchdog [--once] [-i SECONDS] ID\n"
	    "       sbx-watchdog [--once] [-i SECONDS] --all\n",
	    "Enforce a sandbox's lifetime and watch its memory, from outside.\n\n"
	    "      --all                supervise every sandbox of the state root\n"
	    "      --once               one pass, then exit\n"
	    "  -i, --interval SECONDS   memory sampling interval, 0.01 to 60 (default 0.1)\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "once", no_argument, NULL, '1' },
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	struct sbx_wd_opts o = { 0 };
	int c, all = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "a1i:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'a': all = 1; break;
		case '1': o.once = 1; break;
		case 'i':
			o.poll_s = strtod(optarg, &end);
			if (*end != '\0' || !(o.poll_s >= 0.01 && o.poll_s <= 60))
				errx(SBX_EX_USAGE, "--interval: '%s' is not 0.01 to 60 seconds", optarg);
			break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(SBX_EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (all == (argc == 1) || argc > 1)
		usage(SBX_EX_USAGE);
	o.id = all ? NULL : argv[0];
	if (sbx_cmd_store(&store, &e) == -1)
		sbx_die(&e, "state root");
	if (sbx_watchdog(&store, &o, &e) == -1)
		sbx_die(&e, o.id ? o.id : "--all");
	return 0;
}
