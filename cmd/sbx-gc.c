/* SPDX-License-Identifier: MIT */
/* sbx-gc: destroy sandboxes, reap the dead, remove orphans — see sbx-gc(1). */
#include <getopt.h>
#include <unistd.h>

#include "common.h"
#include "gc.h"
#include "id.h"
#include "pool.h"
#include "remote.h"
#include "sandbox.h"
#include "snapshot.h"
#include "util.h"

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code,
	    "usage: sbx-gc [-n] [-c ID] [ID... | -]\n"
	    "       sbx-gc [-n] [--keep-last N] [--max-age DURATION]\n"
	    "       sbx-gc --store URL [-n] [--keep-last N] [--max-age DURATION] [--grace DURATION]\n"
	    "       sbx-gc --verify-audit\n",
	    "Destroy sandboxes; with no ID, reap the dead and expired, orphans, and apply\n"
	    "snapshot retention.\n\n"
	    "  -n, --dry-run            print what would be removed; remove nothing\n"
	    "      --keep-last N        keep the newest N snapshots of each lineage\n"
	    "      --max-age DURATION   keep snapshots younger than DURATION (90s, 15m, 12h, 7d)\n"
	    "      --store URL          apply retention to an s3:// store instead\n"
	    "      --grace DURATION     with --store: spare uploads younger than this (1h)\n"
	    "      --verify-audit       check the audit log's hash chain\n"
	    "  -c, --correlation-id ID  the correlation ID of the audit events\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

static void
report(void *ctx, const char *kind, const char *name)
{
	int dry = *(int *)ctx;

	if (strcmp(kind, "sandbox") == 0 && !dry)
		printf("%s\n", name);
	else if (strcmp(kind, "frozen") == 0)
		printf("%s sandbox %s\n", dry ? "would thaw" : "thawed", name);
	else
		printf("%s%s %s\n", dry ? "would remove " : "removed ", kind, name);
}

static void
retired(void *ctx, const char *pool, const char *id, const char *why)
{
	printf("%s\n", id);
}

static int
destroy(const struct sbx_store *s, const char *id, int dry)
{
	struct sbx_err e = { 0 };

	if (sbx_id_check(id, &e) == -1 || (!dry && sbx_gc_destroy(s, id, &e) == -1) ||
	    (dry && !sbx_store_exists(s, id) &&
	    sbx_err_set(&e, SBX_EX_NOINPUT, "no such sandbox") == -1)) {
		warnx("%s: %s", id, e.msg);
		return e.code;
	}
	printf(dry ? "would destroy sandbox %s\n" : "%s\n", id);
	return 0;
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "verify-audit", no_argument, NULL, 'A' },
		{ "keep-last", required_argument, NULL, 'k' },
		{ "max-age", required_argument, NULL, 'a' },
		{ "store", required_argument, NULL, 's' },
		{ "grace", required_argument, NULL, 'g' },
		{ "correlation-id", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	int c, dry = 0, verify = 0, rc = 0, r, i, retention = 0, graced = 0;
	long long keep_last = 0;
	double max_age = 0, grace = 3600;
	const char *url = NULL;
	char *end;

	while ((c = getopt_long(argc, argv, "nc:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'n': dry = 1; break;
		case 'A': verify = 1; break;
		case 'k':
			errno = 0;
			keep_last = strtoll(optarg, &end, 10);
			if (errno || *end || end == optarg || keep_last < 1)
				errx(SBX_EX_USAGE, "--keep-last: '%s' is not a count of 1 or more",
				    optarg);
			retention = 1;
			break;
		case 'a':
			if (sbx_duration_parse(optarg, &max_age) == -1 || max_age <= 0)
				errx(SBX_EX_USAGE, "--max-age: '%s' is not a duration (30, 90s, 15m, "
				    "12h, 7d)", optarg);
			retention = 1;
			break;
		case 's': url = optarg; break;
		case 'g':
			if (sbx_duration_parse(optarg, &grace) == -1)
				errx(SBX_EX_USAGE, "--grace: '%s' is not a duration (0, 90s, 15m, 1h)",
				    optarg);
			graced = 1;
			break;
		case 'c': sbx_audit_set_correlation(optarg); break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(SBX_EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (graced && url == NULL)
		errx(SBX_EX_USAGE, "--grace applies to --store");
	if (verify && url != NULL)
		usage(SBX_EX_USAGE);
	if (sbx_cmd_store(&store, &e) == -1)
		sbx_die(&e, "state root");
	if (verify) {
		struct sbx_audit_report a;

		if (argc > 0)
			usage(SBX_EX_USAGE);
		if (sbx_audit_verify(&store, &a, &e) == -1)
			sbx_die(&e, "audit log");
		fprintf(stderr, "sbx-gc: audit log: %zu lines, chain intact, head at line %lld",
		    a.lines, a.head);
		if (a.keyed > 0 && a.key)
			fprintf(stderr, "; %zu keyed lines, their macs verified\n", a.keyed);
		else if (a.keyed > 0)
			fprintf(stderr, "; %zu keyed lines, their macs NOT verified: no key "
			    "(SBX_AUDIT_KEY)\n", a.keyed);
		else
			fprintf(stderr, "; no line is keyed\n");
		return 0;
	}
	if (url != NULL) {
		/* Retention on a shared store; this host's sandboxes are left alone
		 * (their chains are kept). */
		if (argc > 0)
			usage(SBX_EX_USAGE);
		if (!sbx_remote_is_s3(url))
			errx(SBX_EX_USAGE, "--store '%s': not an s3://BUCKET/PREFIX URL", url);
		if (sbx_remote_retain(&store, sbx_sandbox_users, url, keep_last, max_age, grace, dry,
		    report, &dry, &e) == -1)
			sbx_die(&e, NULL);
		return sbx_flush_stdout();
	}
	if (argc == 0) {
		if (sbx_gc_sweep(&store, dry, report, &dry, &e) == -1)
			sbx_die(&e, "sweep");
		/* Warm pools' members past their idle age, beyond their pool's size,
		 * or of a pool the policy no longer names (filling is the refiller's). */
		if (!dry && sbx_pools_tend(&store, 0, retired, NULL, &e) == -1)
			sbx_die(&e, "warm pools");
		/* Without --keep-last or --max-age every snapshot stays; what no
		 * snapshot names (layers, cache, temporary files) still goes. */
		if (sbx_snapshot_retain(&store, sbx_sandbox_users, keep_last, max_age, dry, report,
		    &dry, &e) == -1)
			sbx_die(&e, "snapshot retention");
		return sbx_flush_stdout();
	}
	if (retention)
		usage(SBX_EX_USAGE);
	if (argc == 1 && strcmp(argv[0], "-") == 0) {
		struct sbx_ids ids;
		size_t k;

		/* All of stdin is read and checked before anything is destroyed. */
		if (sbx_ids_read(STDIN_FILENO, "stdin", SBX_KEYS("sandbox_id"), 0, &ids, &e) == -1)
			sbx_die(&e, NULL);
		for (k = 0; k < ids.n; k++)
			if ((r = destroy(&store, ids.v[k], dry)) != 0 && rc == 0)
				rc = r;
		sbx_ids_free(&ids);
	} else {
		for (i = 0; i < argc; i++)
			if ((r = destroy(&store, argv[i], dry)) != 0 && rc == 0)
				rc = r;
	}
	r = sbx_flush_stdout();
	return rc ? rc : r;
}
