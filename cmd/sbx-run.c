/* SPDX-License-Identifier: MIT */
/* sbx-run: run a command inside a sandbox — see sbx-run(1). */
#include <getopt.h>
#include <signal.h>
#include <unistd.h>

#include "background.h"
#include "capture.h"
#include "common.h"
#include "doc.h"
#include "id.h"
#include "policy.h"
#include "provision.h"
#include "sandbox.h"
#include "util.h"
#include "snap.h"
#include "snapshot.h"

/*
 * A usage error is sbx-run's own failure too: 64 could be the command's own
 * status, so it exits 125, as timeout(1) and env(1) do.
 */
#define RUN_USAGE SBX_EX_RUNFAIL

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code,
	    "usage: sbx-run [-t] [-e K=V]... [-w DIR] [-u UID[:GID]] [-T SECONDS [-k SECONDS]]\n"
	    "               [--trace FILE|-] [--snapshot-before] [-o json|yaml [--max-output BYTES]]\n"
	    "               [-c ID] [-P POLICY] [-d]\n"
	    "               (ID | - | -m MANIFEST) -- COMMAND [ARG...]\n"
	    "       sbx-run --wait RUN [-o json|yaml] [-T SECONDS]\n"
	    "       sbx-run --signal SIG RUN\n",
	    "Run a command inside a sandbox; its exit status comes back (125: sbx failed).\n\n"
	    "  -t, --tty                give the command a terminal (stdin must be one)\n"
	    "  -e, --env NAME=VALUE     set a variable (repeatable)\n"
	    "  -w, --workdir DIR        the working directory\n"
	    "  -u, --user UID[:GID]     the user inside the sandbox\n"
	    "  -T, --timeout SECONDS    kill the run after SECONDS and exit 124\n"
	    "  -k, --kill-after SECONDS with --timeout: SIGTERM first, SIGKILL SECONDS later\n"
	    "      --trace FILE|-       write the run's trace to FILE (- : stderr)\n"
	    "      --snapshot-before    snapshot the sandbox before the command runs\n"
	    "  -o, --output FORMAT      capture stdout and stderr; print one result object\n"
	    "      --max-output BYTES   with -o: bytes kept of each stream (default 1 MiB)\n"
	    "  -d, --detach             run in the background; print the run's ID\n"
	    "      --wait RUN           wait for a background run; its output and status\n"
	    "      --signal SIG RUN     send INT, TERM or HUP to a background run\n"
	    "  -m, --manifest FILE      one-shot: provision from FILE, run, destroy\n"
	    "  -c, --correlation-id ID  the correlation ID of the audit events\n"
	    "  -P, --policy FILE        with -m: the operator's policy the manifest is held to\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

static double
seconds(const char *opt, const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v > 0) || v > 31536000)
		errx(RUN_USAGE, "%s: '%s' is not a number of seconds", opt, s);
	return v;
}

static size_t
byte_count(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || *end != '\0' || errno != 0 || s[0] == '-' || v > (1ULL << 30))
		errx(RUN_USAGE, "%s: '%s' is not a number of bytes (0 to 1 GiB)", opt, s);
	return (size_t)v;
}

/* The ID on stdin: its first record only, so the rest stays the command's input. */
static int
id_from_stdin_head(char *id, size_t size, struct sbx_err *e)
{
	struct sbx_ids ids;
	int r;

	if (isatty(STDIN_FILENO))
		return sbx_err_set(e, SBX_EX_USAGE, "no ID given and stdin is a terminal");
	if (sbx_ids_read(STDIN_FILENO, "stdin", SBX_KEYS("sandbox_id"), SBX_IDS_ONE | SBX_IDS_HEAD,
	    &ids, e) == -1)
		return -1;
	if (ids.n == 0) {
		sbx_ids_free(&ids);
		return sbx_err_set(e, SBX_EX_DATAERR, "stdin: no ID");
	}
	r = snprintf(id, size, "%s", ids.v[0]) >= (int)size ? -1 : 0;
	sbx_ids_free(&ids);
	return r;
}

/*
 * A command that sbx killed ends with a line that says why (its status alone,
 * 137, does not): the run's own kill_reason, or the sandbox's when it ended
 * under the run.
 */
static void
say_why_killed(const struct sbx_store *s, const char *id, const struct sbx_exec *x,
    const struct sbx_exec_result *res)
{
	struct sbx_manifest m;
	struct sbx_err e = { 0 };
	const char *reason = res->trace.kill_reason;
	char why[160];
	double until;

	if (reason != NULL && strcmp(reason, "timeout") == 0) {
		warnx("%s: timed out: --timeout of %g s reached", id, x->timeout_s);
		return;
	}
	if ((reason == NULL && res->status != 128 + 9) || sbx_sandbox_view(s, id, &m, &e) == -1)
		return;
	/* The watchdog may still be ending it: past its expiry, that is wall-clock. */
	if (reason == NULL && (m.status == SBX_STATUS_TERMINATED || m.status == SBX_STATUS_CLEANUP))
		reason = m.kill_reason ? m.kill_reason : m.expires_at &&
		    sbx_time_parse(m.expires_at, &until) == 0 && until <= sbx_realtime() ?
		    "wall-clock" : NULL;
	if (reason != NULL) {
		sbx_sandbox_kill_text(reason, &m, why, sizeof why);
		warnx("%s: killed: %s", id, why);
	}
	sbx_manifest_free(&m);
}

static void
write_trace(const char *path, const struct sbx_trace *t)
{
	FILE *f;

	if (path == NULL)
		return;
	f = strcmp(path, "-") == 0 ? stderr : fopen(path, "we");
	if (f == NULL) {
		warn("--trace %s", path);
		return;
	}
	sbx_trace_emit(f, t, SBX_FMT_YAML);
	if (f != stderr && fclose(f) == EOF)
		warn("--trace %s", path);
}

/* The streams kept and the result, as a run in the foreground gives them. */
static int
print_result(const struct sbx_run_result *rr, enum sbx_format fmt)
{
	struct sbx_node *n, *v, *text;
	char *t;
	size_t i;

	if (fmt == SBX_FMT_ID) {
		fwrite(rr->out, 1, rr->out_len, stdout);
		fwrite(rr->err, 1, rr->err_len, stderr);
		return 0;
	}
	/* The object of -o, its streams from the kept bytes. */
	if ((n = sbx_node_new(SBX_MAP)) == NULL)
		return -1;
	for (i = 0; i < rr->result->n; i += 2) {
		v = rr->result->kids[i + 1];
		rr->result->kids[i + 1] = NULL;
		sbx_node_add(n, rr->result->kids[i]->str, v);
		if (strcmp(rr->result->kids[i]->str, "signal") == 0) {
			t = sbx_utf8_text(rr->out, rr->out_len);
			text = t ? sbx_node_str(t) : NULL;
			free(t);
			sbx_node_add(n, "stdout", text);
			t = sbx_utf8_text(rr->err, rr->err_len);
			text = t ? sbx_node_str(t) : NULL;
			free(t);
			sbx_node_add(n, "stderr", text);
		}
	}
	return sbx_doc_emit_tree(stdout, n, fmt);
}

/* --wait RUN and --signal SIG RUN. */
static int
background_verb(const char *wait_run, const char *sig_name, int argc, char **argv,
    enum sbx_format fmt, double timeout_s)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "INT", SIGINT }, { "TERM", SIGTERM }, { "HUP", SIGHUP } };
	struct sbx_err e = { 0 };
	struct sbx_store store;
	struct sbx_run_result rr;
	size_t i;
	int status;

	if ((wait_run != NULL) == (sig_name != NULL) || argc != (sig_name != NULL))
		usage(RUN_USAGE);
	if (sbx_cmd_store(&store, &e) == -1)
		errx(SBX_EX_RUNFAIL, "state root: %s", e.msg);
	if (sig_name != NULL) {
		if (strncmp(sig_name, "SIG", 3) == 0)
			sig_name += 3;
		for (i = 0; i < SBX_ARRAY_LEN(sigs) && strcmp(sigs[i].name, sig_name) != 0; i++)
			;
		if (i == SBX_ARRAY_LEN(sigs))
			errx(RUN_USAGE, "--signal: '%s': INT, TERM or HUP (what a run passes on)",
			    sig_name);
		if (sbx_run_signal(&store, argv[0], sigs[i].sig, &e) == -1)
			errx(SBX_EX_RUNFAIL, "%s", e.msg);
		return 0;
	}
	if (sbx_run_wait(&store, wait_run, timeout_s, &rr, &e) == -1)
		errx(SBX_EX_RUNFAIL, "%s", e.msg);
	status = rr.status;
	if (print_result(&rr, fmt) == -1)
		status = SBX_EX_RUNFAIL;
	sbx_run_result_free(&rr);
	fflush(stdout);
	return status;
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "tty", no_argument, NULL, 't' },
		{ "manifest", required_argument, NULL, 'm' },
		{ "env", required_argument, NULL, 'e' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "user", required_argument, NULL, 'u' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "kill-after", required_argument, NULL, 'k' },
		{ "trace", required_argument, NULL, 'r' },
		{ "snapshot-before", no_argument, NULL, 'S' },
		{ "correlation-id", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "max-output", required_argument, NULL, 'M' },
		{ "detach", no_argument, NULL, 'd' },
		{ "wait", required_argument, NULL, 'W' },
		{ "signal", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	struct sbx_exec x = { 0 };
	struct sbx_exec_result res;
	struct sbx_manifest m;
	const char *manifest = NULL, *trace = NULL, *wait_run = NULL, *sig_name = NULL;
	struct sbx_capture cap = { .stdin_fd = STDIN_FILENO, .limit = 1 << 20 };
	enum sbx_format out_fmt = SBX_FMT_ID;  /* SBX_FMT_ID: the streams are the caller's */
	char id[SBX_ID_MAX + 1], **env = NULL, **grown;
	unsigned u, g;
	int c, r, existed, snap_before = 0, detach = 0;

	while ((c = getopt_long(argc, argv, "+tm:e:w:u:T:k:c:P:o:dhV", opts, NULL)) != -1) {
		switch (c) {
		case 't': x.tty = 1; break;
		case 'm': manifest = optarg; break;
		case 'e':
			if (strchr(optarg, '=') == NULL || optarg[0] == '=')
				errx(RUN_USAGE, "--env: '%s' is not NAME=VALUE", optarg);
			if ((grown = realloc(env, (x.n_env + 1) * sizeof *env)) == NULL)
				err(SBX_EX_OSERR, NULL);
			env = grown;
			env[x.n_env++] = optarg;
			break;
		case 'w':
			if (optarg[0] != '/')
				errx(RUN_USAGE, "--workdir: '%s' is not an absolute path", optarg);
			x.workdir = optarg;
			break;
		case 'u':
			if (sbx_manifest_user_parse(optarg, &u, &g) == -1)
				errx(RUN_USAGE, "--user: '%s' is not UID[:GID] (0-65535)", optarg);
			x.user = optarg;
			break;
		case 'T': x.timeout_s = seconds("--timeout", optarg); break;
		case 'k': x.kill_after_s = seconds("--kill-after", optarg); break;
		case 'r': trace = optarg; break;
		case 'S': snap_before = 1; break;
		case 'c': sbx_audit_set_correlation(optarg); break;
		case 'P': sbx_policy_set_path(optarg); break;
		case 'o':
			if (sbx_format_parse(optarg, &out_fmt) == -1)
				errx(RUN_USAGE, "--output: '%s' is not json or yaml", optarg);
			break;
		case 'M': cap.limit = byte_count("--max-output", optarg); break;
		case 'd': detach = 1; break;
		case 'W': wait_run = optarg; break;
		case 'G': sig_name = optarg; break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(RUN_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	x.env = env;
	if (wait_run != NULL || sig_name != NULL)
		return background_verb(wait_run, sig_name, argc, argv, out_fmt, x.timeout_s);
	if (manifest == NULL) {
		if (argc == 0)
			usage(RUN_USAGE);
		r = strcmp(argv[0], "-") == 0 ? id_from_stdin_head(id, sizeof id, &e) :
		    sbx_id_from_arg_or_stdin(argv[0], NULL, id, sizeof id, &e);
		if (r == -1) {
			if (e.code == SBX_EX_USAGE)
				usage(RUN_USAGE);
			errx(SBX_EX_RUNFAIL, "%s", e.msg);
		}
		argc--;
		argv++;
	}
	if (argc > 0 && strcmp(argv[0], "--") == 0) {
		argc--;
		argv++;
	}
	if (argc == 0)
		usage(RUN_USAGE);
	x.argv = argv;
	/* A pty cannot pass on the end of piped input: the command would wait
	 * for more for ever. No terminal then, as ssh does. */
	if (x.tty && out_fmt != SBX_FMT_ID)
		errx(RUN_USAGE, "-t and --output: a terminal's output cannot be captured");
	if (x.tty && !isatty(STDIN_FILENO)) {
		warnx("stdin is not a terminal: running without one (-t ignored)");
		x.tty = 0;
	}
	/* From here on every failure of sbx itself is 125: the command's own
	 * statuses (1-124, 126-255) must never be mistaken for ours. */
	if (sbx_cmd_store(&store, &e) == -1)
		errx(SBX_EX_RUNFAIL, "state root: %s", e.msg);
	if (manifest != NULL) {
		if (sbx_manifest_load(manifest, &m, &e) == -1)
			errx(SBX_EX_RUNFAIL, "%s", e.msg);
		free(m.sandbox_id);
		m.sandbox_id = NULL;  /* a one-shot always gets a fresh sandbox */
		/* A one-shot's lifetime is bounded by sbx-run itself: no watchdog needed,
		 * and no state worth an fsync (it is gone when we are). */
		sbx_set_durable(0);
		if (sbx_provision(&store, &m, SBX_PROV_ONE_SHOT, &existed, &e) == -1)
			errx(SBX_EX_RUNFAIL, "%s: %s", manifest, e.msg);
		snprintf(id, sizeof id, "%s", m.sandbox_id);
		sbx_manifest_free(&m);
	}
	if (detach) {
		char run[SBX_ID_MAX + 1];

		if (manifest != NULL || x.tty || snap_before || out_fmt != SBX_FMT_ID)
			errx(RUN_USAGE, "-d: not with -m, -t, --snapshot-before or -o");
		if (sbx_run_detach(&store, id, &x, cap.limit, run, &e) == -1)
			errx(SBX_EX_RUNFAIL, "%s: %s", id, e.msg);
		printf("%s\n", run);
		free(env);
		return sbx_flush_stdout() == 0 ? 0 : SBX_EX_RUNFAIL;
	}
	if (snap_before) {
		/* Snapshot before mutating: the command runs only once it is written. */
		struct sbx_snap_opts o = { NULL, "before-run", 1 };
		char snap[SBX_ID_MAX + 1];

		if (sbx_snap_create(&store, id, &o, snap, &e) == -1)
			errx(SBX_EX_RUNFAIL, "%s: --snapshot-before: %s", id, e.msg);
		fprintf(stderr, "sbx-run: %s: snapshot %s\n", id, snap);
	}
	r = out_fmt == SBX_FMT_ID ? sbx_sandbox_run(&store, id, &x, &res, &e) :
	    sbx_sandbox_run_capture(&store, id, &x, &cap, &res, &e);
	if (r == -1)
		warnx("%s: %s", id, e.msg);
	else
		say_why_killed(&store, id, &x, &res);
	/* The result object whenever the command was started (its exec failing is one). */
	if (out_fmt != SBX_FMT_ID && (r == 0 || res.status == SBX_EX_NOEXEC ||
	    res.status == SBX_EX_NOTFOUND) &&
	    sbx_doc_emit_tree(stdout, sbx_capture_tree(&cap, &res, r == -1 ? e.msg : NULL, 1),
	    out_fmt) == -1) {
		warnx("%s: --output: out of memory", id);
		res.status = SBX_EX_RUNFAIL;
	}
	sbx_capture_free(&cap);
	if (r == 0 || res.status == SBX_EX_NOEXEC || res.status == SBX_EX_NOTFOUND)
		write_trace(trace, &res.trace);
	sbx_trace_free(&res.trace);
	if (manifest != NULL) {
		struct sbx_err de = { 0 };

		if (sbx_sandbox_destroy(&store, id, &de) == -1) {
			warnx("%s: destroy: %s", id, de.msg);
			if (r == 0)
				res.status = SBX_EX_RUNFAIL;
		}
	}
	free(env);
	fflush(stdout);
	return res.status;
}
