/* SPDX-License-Identifier: MIT */
/* sbx-snap: snapshot a sandbox; list, inspect, verify, remove, restore,
 * export, import, push and pull snapshots — see sbx-snap(1). */
#include <fcntl.h>
#include <getopt.h>
#include <unistd.h>

#include "common.h"
#include "fork.h"
#include "policy.h"
#include "remote.h"
#include "sandbox.h"
#include "snap.h"
#include "snapshot.h"

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code,
	    "usage: sbx-snap [create] [--id SNAP] [-o yaml|json] [-c ID] [SANDBOX | -]\n"
	    "       sbx-snap list [--store URL] [-o yaml|json]\n"
	    "       sbx-snap inspect [--store URL] [-o yaml|json] [SNAP | -]\n"
	    "       sbx-snap verify SNAP...\n"
	    "       sbx-snap remove [--store URL] SNAP...\n"
	    "       sbx-snap restore [--id SANDBOX] [-m MANIFEST] [-P POLICY] [--store URL]\n"
	    "                        [SNAP | -]\n"
	    "       sbx-snap export [-f FILE] [SNAP | -]\n"
	    "       sbx-snap import [FILE | -]\n"
	    "       sbx-snap push --store URL [SNAP | -]\n"
	    "       sbx-snap pull --store URL [SNAP | -]\n",
	    "Snapshot a sandbox and print the snapshot's ID; list, inspect, verify, remove,\n"
	    "restore, export, import, push and pull snapshots.\n\n"
	    "  -i, --id ID              create: the snapshot's ID; restore: the sandbox's\n"
	    "  -o, --output yaml|json   print whole snapshot documents\n"
	    "  -f, --file FILE          export to FILE instead of stdout\n"
	    "      --store URL          the s3:// store of push, pull, list, inspect, remove,\n"
	    "                           restore\n"
	    "  -c, --correlation-id ID  the correlation ID of the audit events\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

static const char *const verbs[] = { "create", "list", "inspect", "verify", "remove", "restore",
	"export", "import", "push", "pull", NULL };

/* The snapshot (or sandbox) operand, or the ID on stdin. */
static void
operand(int argc, char *argv[], const char *const *keys, char *id, size_t size)
{
	struct sbx_err e = { 0 };

	if (argc > 1)
		usage(SBX_EX_USAGE);
	if (sbx_id_from_arg_or_stdin(argc ? argv[0] : NULL, keys, id, size, &e) == -1) {
		if (e.code == SBX_EX_USAGE)
			usage(SBX_EX_USAGE);
		sbx_die(&e, NULL);
	}
}

/* One snapshot on stdout; stream: one record of a stream (list). */
static int
show(const struct sbx_store *s, const char *id, enum sbx_format fmt, int stream)
{
	struct sbx_snapshot sn;
	struct sbx_err e = { 0 };

	if (fmt == SBX_FMT_ID) {
		printf("%s\n", id);
		return 0;
	}
	if (sbx_snapshot_load(s, id, &sn, &e) == -1) {
		warnx("%s: %s", id, e.msg);
		return e.code;
	}
	if (stream)
		sbx_record_start(fmt);
	if (sbx_snapshot_emit(stdout, &sn, fmt) == -1)
		errx(SBX_EX_IOERR, "stdout: write failed");
	sbx_snapshot_free(&sn);
	return 0;
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "file", required_argument, NULL, 'f' },
		{ "store", required_argument, NULL, 's' },
		{ "manifest", required_argument, NULL, 'm' },
		{ "policy", required_argument, NULL, 'P' },
		{ "correlation-id", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	enum sbx_format fmt = SBX_FMT_ID;
	const char *want = NULL, *file = NULL, *verb = "create", *url = NULL, *manifest = NULL;
	char id[SBX_ID_MAX + 1], out[SBX_ID_MAX + 1];
	int c, i, rc = 0, r;

	while ((c = getopt_long(argc, argv, "i:o:f:m:P:c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'i': want = optarg; break;
		case 'o': fmt = sbx_opt_format(optarg, SBX_EX_USAGE); break;
		case 'f': file = optarg; break;
		case 's': url = optarg; break;
		case 'm': manifest = optarg; break;
		case 'P': sbx_policy_set_path(optarg); break;
		case 'c': sbx_audit_set_correlation(optarg); break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(SBX_EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	for (i = 0; argc > 0 && verbs[i]; i++)
		if (strcmp(argv[0], verbs[i]) == 0) {
			verb = verbs[i];
			argc--;
			argv++;
			break;
		}
	if ((file && strcmp(verb, "export") != 0) || (want && strcmp(verb, "create") != 0 &&
	    strcmp(verb, "restore") != 0) || (manifest && strcmp(verb, "restore") != 0))
		usage(SBX_EX_USAGE);
	if (url && strcmp(verb, "list") && strcmp(verb, "restore") && strcmp(verb, "push") &&
	    strcmp(verb, "pull") && strcmp(verb, "remove") && strcmp(verb, "inspect"))
		usage(SBX_EX_USAGE);
	if (url == NULL && (strcmp(verb, "push") == 0 || strcmp(verb, "pull") == 0))
		errx(SBX_EX_USAGE, "%s: --store URL is required", verb);
	if (url && !sbx_remote_is_s3(url))
		errx(SBX_EX_USAGE, "--store '%s': not an s3://BUCKET/PREFIX URL", url);
	if (sbx_cmd_store(&store, &e) == -1)
		sbx_die(&e, "state root");

	if (strcmp(verb, "create") == 0) {
		struct sbx_snap_opts o = { want, "manual" };

		operand(argc, argv, SBX_KEYS("sandbox_id"), id, sizeof id);
		if (sbx_snap_create(&store, id, &o, out, &e) == -1)
			sbx_die(&e, id);
		rc = show(&store, out, fmt, 0);
	} else if (strcmp(verb, "list") == 0) {
		char **ids;
		size_t n, k;

		if (argc > 0)
			usage(SBX_EX_USAGE);
		if (url) {
			struct sbx_snap_set set;

			if (sbx_remote_list(url, &set, &e) == -1)
				sbx_die(&e, NULL);
			for (k = 0; k < set.n; k++) {
				if (fmt == SBX_FMT_ID) {
					printf("%s\n", set.v[k].snapshot_id);
					continue;
				}
				sbx_record_start(fmt);
				if (sbx_snapshot_emit(stdout, &set.v[k], fmt) == -1)
					errx(SBX_EX_IOERR, "stdout: write failed");
			}
			sbx_snapshot_set_free(&set);
			return sbx_flush_stdout();
		}
		if (sbx_snapshot_list(&store, &ids, &n, &e) == -1)
			sbx_die(&e, "snapshots");
		for (k = 0; k < n; k++) {
			if ((r = show(&store, ids[k], fmt, 1)) != 0 && rc == 0)
				rc = r;
			free(ids[k]);
		}
		free(ids);
	} else if (strcmp(verb, "inspect") == 0) {
		operand(argc, argv, SBX_KEYS("snapshot_id"), id, sizeof id);
		if (url) {
			struct sbx_snapshot sn;

			if (sbx_remote_load(url, id, &sn, &e) == -1)
				sbx_die(&e, NULL);
			if (sbx_snapshot_emit(stdout, &sn, fmt == SBX_FMT_ID ? SBX_FMT_YAML : fmt) == -1)
				errx(SBX_EX_IOERR, "stdout: write failed");
			sbx_snapshot_free(&sn);
		} else {
			rc = show(&store, id, fmt == SBX_FMT_ID ? SBX_FMT_YAML : fmt, 0);
		}
	} else if (strcmp(verb, "verify") == 0 || strcmp(verb, "remove") == 0) {
		int verify = verb[0] == 'v';

		if (argc == 0)
			usage(SBX_EX_USAGE);
		for (i = 0; i < argc; i++) {
			if (sbx_id_check(argv[i], &e) == -1 || (verify ?
			    sbx_snapshot_verify(&store, argv[i], &e) : url ?
			    sbx_remote_remove(url, argv[i], &e) :
			    sbx_snapshot_remove(&store, sbx_sandbox_users, argv[i], &e)) == -1) {
				warnx("%s: %s", argv[i], e.msg);
				if (rc == 0 || (rc == SBX_EX_NO && e.code != SBX_EX_NO))
					rc = e.code;
				continue;
			}
			if (verify)
				fprintf(stderr, "sbx-snap: %s: every layer matches its digest\n", argv[i]);
			else
				printf("%s\n", argv[i]);
		}
	} else if (strcmp(verb, "restore") == 0) {
		struct sbx_manifest with;
		char **ids;

		operand(argc, argv, SBX_KEYS("snapshot_id"), id, sizeof id);
		if (manifest != NULL && sbx_manifest_load(manifest, &with, &e) == -1)
			sbx_die(&e, NULL);
		if (sbx_remote_ensure(&store, url, id, &e) == -1 ||
		    sbx_fork_restore(&store, id, want, manifest ? &with : NULL, &ids, &e) == -1)
			sbx_die(&e, id);
		if (manifest != NULL)
			sbx_manifest_free(&with);
		printf("%s\n", ids[0]);
		free(ids[0]);
		free(ids);
	} else if (strcmp(verb, "export") == 0) {
		int fd = 1;

		operand(argc, argv, SBX_KEYS("snapshot_id"), id, sizeof id);
		if (file == NULL && isatty(1))
			errx(SBX_EX_USAGE, "export: stdout is a terminal; redirect it or use -f FILE");
		if (file != NULL && (fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0600)) == -1)
			err(SBX_EX_CANTCREAT, "%s", file);
		if (sbx_snapshot_export(&store, id, fd, &e) == -1) {
			if (file != NULL)
				unlink(file);
			sbx_die(&e, id);
		}
		if (file != NULL && (fsync(fd) == -1 || close(fd) == -1))
			err(SBX_EX_IOERR, "%s", file);
	} else if (strcmp(verb, "push") == 0) {
		long long bytes = 0;
		int layers = 0;

		operand(argc, argv, SBX_KEYS("snapshot_id"), id, sizeof id);
		if (sbx_remote_push(&store, url, id, &layers, &bytes, &e) == -1)
			sbx_die(&e, NULL);
		if (isatty(2))
			fprintf(stderr, "sbx-snap: %s: %d layer%s, %lld bytes uploaded to %s\n", id,
			    layers, layers == 1 ? "" : "s", bytes, url);
		printf("%s\n", id);
	} else if (strcmp(verb, "pull") == 0) {
		operand(argc, argv, SBX_KEYS("snapshot_id"), id, sizeof id);
		if (sbx_remote_pull(&store, url, id, &e) == -1)
			sbx_die(&e, NULL);
		rc = show(&store, id, fmt, 0);
	} else {
		int fd = 0;

		if (argc > 1)
			usage(SBX_EX_USAGE);
		if (argc == 1 && strcmp(argv[0], "-") != 0 &&
		    (fd = open(argv[0], O_RDONLY | O_CLOEXEC)) == -1)
			err(errno == ENOENT ? SBX_EX_NOINPUT : SBX_EX_NOPERM, "%s", argv[0]);
		if (fd == 0 && isatty(0))
			usage(SBX_EX_USAGE);
		if (sbx_snapshot_import(&store, fd, out, &e) == -1)
			sbx_die(&e, argc ? argv[0] : "<stdin>");
		rc = show(&store, out, fmt, 0);
	}
	r = sbx_flush_stdout();
	return rc ? rc : r;
}
