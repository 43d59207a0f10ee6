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
	    "usage: sbx-snap [create] [--id SNAP] [--no-memory] [-o yaml|json] [-c ID]\n"
	    "                [--progress json|bar|none] [SANDBOX | -]\n"
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
	    "      --no-memory          create: the files only, where the tier could also\n"
	    "                           checkpoint the memory (runsc)\n"
	    "  -o, --output yaml|json   print whole snapshot documents\n"
	    "  -f, --file FILE          export to FILE instead of stdout\n"
	    "      --store URL          the s3:// store of push, pull, list, inspect, remove,\n"
	    "                           restore\n"
	    "      --progress MODE      create, restore, export, import, push, pull: json\n"
	    "                           (lines on stderr), bar (a terminal's) or none\n"
	    "  -c, --correlation-id ID  the correlation ID of the audit events\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

/* What the options said, and the operands left for the verb. */
struct args {
	struct sbx_store store;
	enum sbx_format fmt;
	const char *want, *file, *url, *manifest, *progress;
	int no_memory;
	int argc;
	char **argv;
};

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

static int
do_create(struct args *a)
{
	struct sbx_snap_opts o = { a->want, "manual", a->no_memory };
	struct sbx_err e = { 0 };
	char id[SBX_ID_MAX + 1], out[SBX_ID_MAX + 1];

	operand(a->argc, a->argv, SBX_KEYS("sandbox_id"), id, sizeof id);
	if (sbx_snap_create(&a->store, id, &o, out, &e) == -1)
		sbx_die(&e, id);
	return show(&a->store, out, a->fmt, 0);
}

static int
list_remote(struct args *a)
{
	struct sbx_snap_set set;
	struct sbx_err e = { 0 };
	size_t k;

	if (sbx_remote_list(a->url, &set, &e) == -1)
		sbx_die(&e, NULL);
	for (k = 0; k < set.n; k++) {
		if (a->fmt == SBX_FMT_ID) {
			printf("%s\n", set.v[k].snapshot_id);
			continue;
		}
		sbx_record_start(a->fmt);
		if (sbx_snapshot_emit(stdout, &set.v[k], a->fmt) == -1)
			errx(SBX_EX_IOERR, "stdout: write failed");
	}
	sbx_snapshot_set_free(&set);
	return 0;
}

static int
do_list(struct args *a)
{
	struct sbx_err e = { 0 };
	char **ids;
	size_t n, k;
	int rc = 0, r;

	if (a->argc > 0)
		usage(SBX_EX_USAGE);
	if (a->url)
		return list_remote(a);
	if (sbx_snapshot_list(&a->store, &ids, &n, &e) == -1)
		sbx_die(&e, "snapshots");
	for (k = 0; k < n; k++) {
		if ((r = show(&a->store, ids[k], a->fmt, 1)) != 0 && rc == 0)
			rc = r;
		free(ids[k]);
	}
	free(ids);
	return rc;
}

static int
do_inspect(struct args *a)
{
	enum sbx_format fmt = a->fmt == SBX_FMT_ID ? SBX_FMT_YAML : a->fmt;
	struct sbx_snapshot sn;
	struct sbx_err e = { 0 };
	char id[SBX_ID_MAX + 1];

	operand(a->argc, a->argv, SBX_KEYS("snapshot_id"), id, sizeof id);
	if (a->url == NULL)
		return show(&a->store, id, fmt, 0);
	if (sbx_remote_load(a->url, id, &sn, &e) == -1)
		sbx_die(&e, NULL);
	if (sbx_snapshot_emit(stdout, &sn, fmt) == -1)
		errx(SBX_EX_IOERR, "stdout: write failed");
	sbx_snapshot_free(&sn);
	return 0;
}

/* verify and remove: each operand on its own, the worst code at the end. */
static int
do_each(struct args *a, int verify)
{
	struct sbx_err e = { 0 };
	int i, rc = 0;

	if (a->argc == 0)
		usage(SBX_EX_USAGE);
	for (i = 0; i < a->argc; i++) {
		const char *id = a->argv[i];

		if (sbx_id_check(id, &e) == -1 || (verify ?
		    sbx_snapshot_verify(&a->store, id, &e) : a->url ?
		    sbx_remote_remove(a->url, id, &e) :
		    sbx_snapshot_remove(&a->store, sbx_sandbox_users, id, &e)) == -1) {
			warnx("%s: %s", id, e.msg);
			if (rc == 0 || (rc == SBX_EX_NO && e.code != SBX_EX_NO))
				rc = e.code;
			continue;
		}
		if (verify)
			fprintf(stderr, "sbx-snap: %s: every layer matches its digest\n", id);
		else
			printf("%s\n", id);
	}
	return rc;
}

static int
do_verify(struct args *a)
{
	return do_each(a, 1);
}

static int
do_remove(struct args *a)
{
	return do_each(a, 0);
}

static int
do_restore(struct args *a)
{
	struct sbx_manifest with;
	struct sbx_err e = { 0 };
	char id[SBX_ID_MAX + 1], **ids;

	operand(a->argc, a->argv, SBX_KEYS("snapshot_id"), id, sizeof id);
	if (a->manifest != NULL && sbx_manifest_load(a->manifest, &with, &e) == -1)
		sbx_die(&e, NULL);
	if (sbx_remote_ensure(&a->store, a->url, id, &e) == -1 ||
	    sbx_fork_restore(&a->store, id, a->want, a->manifest ? &with : NULL, &ids, &e) == -1)
		sbx_die(&e, id);
	if (a->manifest != NULL)
		sbx_manifest_free(&with);
	printf("%s\n", ids[0]);
	free(ids[0]);
	free(ids);
	return 0;
}

static int
do_export(struct args *a)
{
	struct sbx_err e = { 0 };
	char id[SBX_ID_MAX + 1];
	int fd = 1;

	operand(a->argc, a->argv, SBX_KEYS("snapshot_id"), id, sizeof id);
	if (a->file == NULL && isatty(1))
		errx(SBX_EX_USAGE, "export: stdout is a terminal; redirect it or use -f FILE");
	if (a->file != NULL && (fd = open(a->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		err(SBX_EX_CANTCREAT, "%s", a->file);
	if (sbx_snapshot_export(&a->store, id, fd, &e) == -1) {
		if (a->file != NULL)
			unlink(a->file);
		sbx_die(&e, id);
	}
	if (a->file != NULL && (fsync(fd) == -1 || close(fd) == -1))
		err(SBX_EX_IOERR, "%s", a->file);
	return 0;
}

static int
do_push(struct args *a)
{
	struct sbx_err e = { 0 };
	char id[SBX_ID_MAX + 1];
	long long bytes = 0;
	int layers = 0;

	operand(a->argc, a->argv, SBX_KEYS("snapshot_id"), id, sizeof id);
	if (sbx_remote_push(&a->store, a->url, id, &layers, &bytes, &e) == -1)
		sbx_die(&e, NULL);
	if (isatty(2))
		fprintf(stderr, "sbx-snap: %s: %d layer%s, %lld bytes uploaded to %s\n", id,
		    layers, layers == 1 ? "" : "s", bytes, a->url);
	printf("%s\n", id);
	return 0;
}

static int
do_pull(struct args *a)
{
	struct sbx_err e = { 0 };
	char id[SBX_ID_MAX + 1];

	operand(a->argc, a->argv, SBX_KEYS("snapshot_id"), id, sizeof id);
	if (sbx_remote_pull(&a->store, a->url, id, &e) == -1)
		sbx_die(&e, NULL);
	return show(&a->store, id, a->fmt, 0);
}

static int
do_import(struct args *a)
{
	struct sbx_err e = { 0 };
	char out[SBX_ID_MAX + 1];
	int fd = 0;

	if (a->argc > 1)
		usage(SBX_EX_USAGE);
	if (a->argc == 1 && strcmp(a->argv[0], "-") != 0 &&
	    (fd = open(a->argv[0], O_RDONLY | O_CLOEXEC)) == -1)
		err(errno == ENOENT ? SBX_EX_NOINPUT : SBX_EX_NOPERM, "%s", a->argv[0]);
	if (fd == 0 && isatty(0))
		usage(SBX_EX_USAGE);
	if (sbx_snapshot_import(&a->store, fd, out, &e) == -1)
		sbx_die(&e, a->argc ? a->argv[0] : "<stdin>");
	return show(&a->store, out, a->fmt, 0);
}

/* Each verb, and the options it takes besides -o, -P and -c. */
static const struct verb {
	const char *name;
	int (*run)(struct args *a);
	int id, file, store, manifest;   /* --id, --file, --store, --manifest */
	int phases;                      /* of its progress; 0: no --progress */
} verbs[] = {
	{ "create", do_create, 1, 0, 0, 0, 4 },
	{ "list", do_list, 0, 0, 1, 0, 0 },
	{ "inspect", do_inspect, 0, 0, 1, 0, 0 },
	{ "verify", do_verify, 0, 0, 0, 0, 0 },
	{ "remove", do_remove, 0, 0, 1, 0, 0 },
	{ "restore", do_restore, 1, 0, 1, 1, 3 },
	{ "export", do_export, 0, 1, 0, 0, 1 },
	{ "import", do_import, 0, 0, 0, 0, 1 },
	{ "push", do_push, 0, 0, 1, 0, 2 },
	{ "pull", do_pull, 0, 0, 1, 0, 2 },
	{ NULL, NULL, 0, 0, 0, 0, 0 }
};

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
		{ "no-memory", no_argument, NULL, 'M' },
		{ "progress", required_argument, NULL, 'G' },
		{ "correlation-id", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct args a = { .fmt = SBX_FMT_ID };
	struct sbx_err e = { 0 };
	const struct verb *v = &verbs[0];
	int c, rc, r;

	while ((c = getopt_long(argc, argv, "i:o:f:m:P:c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'i': a.want = optarg; break;
		case 'o': a.fmt = sbx_opt_format(optarg, SBX_EX_USAGE); break;
		case 'f': a.file = optarg; break;
		case 's': a.url = optarg; break;
		case 'm': a.manifest = optarg; break;
		case 'P': sbx_policy_set_path(optarg); break;
		case 'M': a.no_memory = 1; break;
		case 'G': a.progress = optarg; break;
		case 'c': sbx_audit_set_correlation(optarg); break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(SBX_EX_USAGE);
		}
	}
	a.argc = argc - optind;
	a.argv = argv + optind;
	for (r = 0; a.argc > 0 && verbs[r].name; r++)
		if (strcmp(a.argv[0], verbs[r].name) == 0) {
			v = &verbs[r];
			a.argc--;
			a.argv++;
			break;
		}
	if ((a.file && !v->file) || (a.want && !v->id) || (a.manifest && !v->manifest) ||
	    (a.url && !v->store) || (a.no_memory && v->run != do_create) ||
	    (a.progress && !v->phases))
		usage(SBX_EX_USAGE);
	if (a.url == NULL && (v->run == do_push || v->run == do_pull))
		errx(SBX_EX_USAGE, "%s: --store URL is required", v->name);
	if (a.url && !sbx_remote_is_s3(a.url))
		errx(SBX_EX_USAGE, "--store '%s': not an s3://BUCKET/PREFIX URL", a.url);
	if (sbx_cmd_store(&a.store, &e) == -1)
		sbx_die(&e, "state root");
	if (v->phases)
		sbx_cmd_progress(a.progress, v->run == do_create ? "snapshot" : v->name,
		    v->run == do_restore && a.url ? 5 : v->phases);
	rc = v->run(&a);
	if (rc == 0)
		sbx_progress_end(1);
	r = sbx_flush_stdout();
	return rc ? rc : r;
}
