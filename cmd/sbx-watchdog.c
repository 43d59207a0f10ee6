/* SPDX-License-Identifier: MIT */
/* sbx-watchdog: enforce lifetimes and watch memory from outside — see sbx-watchdog(1). */
#include <getopt.h>

#include "common.h"
#include "id.h"
#include "pool.h"
#include "sandbox.h"
#include "util.h"
#include "watchdog.h"

struct pools {
	const struct sbx_store *s;
	char said[sizeof ((struct sbx_err *)0)->msg];
};

/* The --all watchdog is the warm pools' refiller: each second, each pool is
 * filled, its stale members retired; a failure is said once, not each time. */
static void
keep_pools(void *ctx)
{
	struct pools *p = ctx;
	struct sbx_err e = { 0 };

	if (sbx_pools_tend(p->s, SBX_POOLS_FILL | SBX_POOLS_NO_WATCHDOG, NULL, NULL, &e) == 0)
		p->said[0] = '\0';
	else if (strcmp(p->said, e.msg) != 0) {
		fprintf(stderr, "sbx-watchdog: warm pools: %s\n", e.msg);
		snprintf(p->said, sizeof p->said, "%s", e.msg);
	}
}

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code,
	    "usage: sbx-watchdog [--once] [-i SECONDS] ID\n"
	    "       sbx-watchdog [--once] [-i SECONDS] --all\n"
	    "       sbx-watchdog --extend SECONDS ID\n",
	    "Enforce a sandbox's lifetime and watch its memory, from outside.\n\n"
	    "      --all                supervise every sandbox of the state root, and keep\n"
	    "                           the policy's warm pools full\n"
	    "      --once               one pass, then exit\n"
	    "  -i, --interval SECONDS   memory sampling interval, 0.01 to 60 (default 0.1)\n"
	    "      --extend SECONDS     give a live sandbox SECONDS more, within the policy\n"
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
		{ "extend", required_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	struct sbx_wd_opts o = { 0 };
	struct pools pools = { 0 };
	int c, all = 0;
	double extend = 0, until;
	char *end, when[40];

	while ((c = getopt_long(argc, argv, "a1i:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'a': all = 1; break;
		case '1': o.once = 1; break;
		case 'i':
			o.poll_s = strtod(optarg, &end);
			if (*end != '\0' || !(o.poll_s >= 0.01 && o.poll_s <= 60))
				errx(SBX_EX_USAGE, "--interval: '%s' is not 0.01 to 60 seconds", optarg);
			break;
		case 'x':
			extend = strtod(optarg, &end);
			if (end == optarg || *end != '\0' || !(extend >= 1 && extend <= 31536000))
				errx(SBX_EX_USAGE, "--extend: '%s' is not 1 to 31536000 seconds", optarg);
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
	if (extend > 0 && (all || o.once || o.poll_s > 0))
		usage(SBX_EX_USAGE);
	if (sbx_cmd_store(&store, &e) == -1)
		sbx_die(&e, "state root");
	if (extend > 0) {
		if (sbx_id_check(o.id, &e) == -1)
			sbx_die(&e, NULL);
		if (sbx_sandbox_extend(&store, o.id, extend, &until, &e) == -1)
			sbx_die(&e, o.id);
		sbx_time_rfc3339_ms(when, sizeof when, until);
		printf("%s\n", when);
		return sbx_flush_stdout();
	}
	pools.s = &store;
	if (all && !o.once) {
		o.tick = keep_pools;
		o.tick_ctx = &pools;
	}
	if (sbx_watchdog(&store, &o, &e) == -1)
		sbx_die(&e, o.id ? o.id : "--all");
	return 0;
}
