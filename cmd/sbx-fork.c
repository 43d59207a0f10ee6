/* SPDX-License-Identifier: MIT */
/* sbx-fork: N sandboxes from a snapshot, or keep the winning branch — see sbx-fork(1). */
#include <getopt.h>

#include "common.h"
#include "fork.h"
#include "policy.h"
#include "remote.h"
#include "sandbox.h"
#include "snapshot.h"

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code,
	    "usage: sbx-fork [-n N] [--id PREFIX] [-m MANIFEST] [-P POLICY] [--store URL]\n"
	    "                [-o yaml|json] [--progress json|bar|none] [-c ID] [SNAP | SANDBOX | -]\n"
	    "       sbx-fork --select WINNER [--id SNAP]\n",
	    "Make N sandboxes from a snapshot (or a live sandbox, snapshotted first).\n\n"
	    "  -n, --count N            how many children, 1 to 10000 (default 1)\n"
	    "  -i, --id PREFIX          name the children PREFIX-1 to PREFIX-N\n"
	    "                           (with --select: the new head snapshot's ID)\n"
	    "      --store URL          pull SNAP from this s3:// store when it is not here\n"
	    "      --select WINNER      keep WINNER's branch, retire its siblings\n"
	    "  -m, --manifest FILE      the children's manifest instead of the snapshot's\n"
	    "  -P, --policy FILE        the operator's policy the children are held to\n"
	    "  -o, --output yaml|json   print the children's state documents\n"
	    "      --progress MODE      json (lines on stderr), bar (a terminal's) or none\n"
	    "  -c, --correlation-id ID  the correlation ID of the audit events\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "id", required_argument, NULL, 'i' },
		{ "select", required_argument, NULL, 'S' },
		{ "store", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "manifest", required_argument, NULL, 'm' },
		{ "policy", required_argument, NULL, 'P' },
		{ "correlation-id", required_argument, NULL, 'c' },
		{ "progress", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	enum sbx_format fmt = SBX_FMT_ID;
	const char *prefix = NULL, *winner = NULL, *url = NULL, *manifest = NULL, *progress = NULL;
	struct sbx_manifest with;
	char id[SBX_ID_MAX + 1], out[SBX_ID_MAX + 1], **ids, *end;
	long n = 1, k;
	int c, rc = 0, r;

	while ((c = getopt_long(argc, argv, "n:i:o:m:P:c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || n < 1 || n > 10000)
				errx(SBX_EX_USAGE, "-n: '%s' is not a count from 1 to 10000", optarg);
			break;
		case 'i': prefix = optarg; break;
		case 'S': winner = optarg; break;
		case 's': url = optarg; break;
		case 'o': fmt = sbx_opt_format(optarg, SBX_EX_USAGE); break;
		case 'm': manifest = optarg; break;
		case 'P': sbx_policy_set_path(optarg); break;
		case 'G': progress = optarg; break;
		case 'c': sbx_audit_set_correlation(optarg); break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(SBX_EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (sbx_cmd_store(&store, &e) == -1)
		sbx_die(&e, "state root");
	if (winner != NULL) {
		if (argc > 0 || url != NULL || manifest != NULL || progress != NULL)
			usage(SBX_EX_USAGE);
		if (sbx_id_check(winner, &e) == -1 || (prefix != NULL && sbx_id_check(prefix, &e) == -1) ||
		    sbx_fork_select(&store, winner, prefix, out, &e) == -1)
			sbx_die(&e, winner);
		printf("%s\n", out);
		return sbx_flush_stdout();
	}
	if (argc > 1)
		usage(SBX_EX_USAGE);
	/* A snapshot's document, or a sandbox's (forked from a snapshot of it). */
	if (sbx_id_from_arg_or_stdin(argc ? argv[0] : NULL, SBX_KEYS("snapshot_id", "sandbox_id"),
	    id, sizeof id, &e) == -1) {
		if (e.code == SBX_EX_USAGE)
			usage(SBX_EX_USAGE);
		sbx_die(&e, NULL);
	}
	if (url && !sbx_remote_is_s3(url))
		errx(SBX_EX_USAGE, "--store '%s': not an s3://BUCKET/PREFIX URL", url);
	sbx_cmd_progress(progress, "fork", url && !sbx_store_exists(&store, id) &&
	    !sbx_snapshot_exists(&store, id) ? 5 : 3);
	/* A snapshot only in the store is pulled first (a sandbox here is forked as ever). */
	if (url && !sbx_store_exists(&store, id) && sbx_remote_ensure(&store, url, id, &e) == -1)
		sbx_die(&e, NULL);
	/* The children's manifest from this side, not the snapshot's (both are
	 * held to the policy). */
	if (manifest != NULL && sbx_manifest_load(manifest, &with, &e) == -1)
		sbx_die(&e, NULL);
	if (sbx_fork(&store, id, n, prefix, manifest ? &with : NULL, &ids, &e) == -1)
		sbx_die(&e, id);
	if (manifest != NULL)
		sbx_manifest_free(&with);
	sbx_progress_end(1);
	for (k = 0; k < n; k++) {
		if (fmt == SBX_FMT_ID) {
			printf("%s\n", ids[k]);
		} else {
			struct sbx_manifest m;

			/* The child exists either way: name it even when its document fails. */
			if (sbx_sandbox_view(&store, ids[k], &m, &e) == -1) {
				warnx("%s: %s", ids[k], e.msg);
				rc = e.code;
			} else {
				sbx_record_start(fmt);
				sbx_manifest_emit(stdout, &m, fmt);
				sbx_manifest_free(&m);
			}
		}
		free(ids[k]);
	}
	free(ids);
	r = sbx_flush_stdout();
	return rc ? rc : r;
}
