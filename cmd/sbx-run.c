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
#include "session.h"
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
	    "               [-c ID] [-P POLICY] [-d | --once KEY]\n"
	    "               (ID | - | -m MANIFEST) -- COMMAND [ARG...]\n"
	    "       sbx-run --session NAME [--restart] [-o json|yaml] [-T SECONDS] ID [-- LINE...]\n"
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
	    "      --once KEY           run once for KEY: a repeat replays the recorded result\n"
	    "      --wait RUN           wait for a background run; its output and status\n"
	    "      --signal SIG RUN     send INT, TERM or HUP to a background run\n"
	    "      --session NAME       run the line in persistent shell NAME of the sandbox\n"
	    "      --restart            with --session: end the shell first\n"
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

/* Past the ID operand and the "--" after it, if any. */
static void
skip_id(int *argc, char ***argv)
{
	(*argc)--;
	(*argv)++;
	if (*argc > 0 && strcmp((*argv)[0], "--") == 0) {
		(*argc)--;
		(*argv)++;
	}
}

/* A line's result in session name: the streams, or -o's object. */
static int
print_session(const char *name, const struct sbx_session_result *sr, enum sbx_format fmt)
{
	struct sbx_node *n;
	char *out, *err;
	int r;

	if (fmt == SBX_FMT_ID) {
		fwrite(sr->out, 1, sr->out_len, stdout);
		fwrite(sr->err, 1, sr->err_len, stderr);
		return 0;
	}
	out = sbx_utf8_text(sr->out, sr->out_len);
	err = sbx_utf8_text(sr->err, sr->err_len);
	n = sbx_node_new(SBX_MAP);
	if (out == NULL || err == NULL || n == NULL ||
	    sbx_node_add(n, "exit_code", sbx_node_int(sr->status)) == -1 ||
	    sbx_node_add(n, "stdout", sbx_node_str(out)) == -1 ||
	    sbx_node_add(n, "stderr", sbx_node_str(err)) == -1 ||
	    sbx_node_add(n, "stdout_bytes", sbx_node_int((long long)sr->out_total)) == -1 ||
	    sbx_node_add(n, "stderr_bytes", sbx_node_int((long long)sr->err_total)) == -1 ||
	    sbx_node_add(n, "truncated", sbx_node_bool(sr->out_total > sr->out_len ||
	    sr->err_total > sr->err_len)) == -1 ||
	    sbx_node_add(n, "session", sbx_node_str(name)) == -1 ||
	    sbx_node_add(n, "ended", sbx_node_bool(sr->ended)) == -1) {
		sbx_node_free(n);
		n = NULL;
	}
	r = sbx_doc_emit_tree(stdout, n, fmt);
	free(out);
	free(err);
	return r;
}

/* --session NAME [--restart] ID [LINE...]: the words of LINE joined by spaces. */
static int
session_verb(const char *name, int restart, int argc, char **argv, enum sbx_format fmt,
    size_t limit, double timeout_s)
{
	struct sbx_err e = { 0 };
	struct sbx_store store;
	struct sbx_session_result sr;
	char id[SBX_ID_MAX + 1], *line = NULL;
	size_t len = 0, i;
	FILE *f;
	int status;

	if (argc < 1 || (!restart && argc < 2))
		usage(RUN_USAGE);
	if (sbx_id_from_arg_or_stdin(argv[0], NULL, id, sizeof id, &e) == -1)
		errx(SBX_EX_RUNFAIL, "%s", e.msg);
	skip_id(&argc, &argv);
	if (sbx_cmd_store(&store, &e) == -1)
		errx(SBX_EX_RUNFAIL, "state root: %s", e.msg);
	if (restart && sbx_session_end(&store, id, name, &e) == -1)
		errx(SBX_EX_RUNFAIL, "%s: %s", id, e.msg);
	if (argc == 0)
		return 0;
	if ((f = open_memstream(&line, &len)) == NULL)
		err(SBX_EX_RUNFAIL, NULL);
	for (i = 0; i < (size_t)argc; i++)
		fprintf(f, "%s%s", i ? " " : "", argv[i]);
	if (fclose(f) == EOF)
		err(SBX_EX_RUNFAIL, NULL);
	if (sbx_session_call(&store, id, name, line, limit, timeout_s, &sr, &e) == -1)
		errx(SBX_EX_RUNFAIL, "%s: %s", id, e.msg);
	free(line);
	status = sr.status;
	if (status == SBX_EX_TIMEOUT && sr.out == NULL)
		warnx("%s: session %s: timed out: --timeout of %g s reached; the session ended",
		    id, name, timeout_s);
	else if (print_session(name, &sr, fmt) == -1)
		status = SBX_EX_RUNFAIL;
	sbx_session_result_free(&sr);
	fflush(stdout);
	return status;
}

/* INT, TERM or HUP (with or without SIG); -1 for another. */
static int
signal_named(const char *name)
{
	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	return strcmp(name, "INT") == 0 ? SIGINT : strcmp(name, "TERM") == 0 ? SIGTERM :
	    strcmp(name, "HUP") == 0 ? SIGHUP : -1;
}

/* --wait RUN and --signal SIG RUN. */
static int
background_verb(const char *wait_run, const char *sig_name, int argc, char **argv,
    enum sbx_format fmt, double timeout_s)
{
	struct sbx_err e = { 0 };
	struct sbx_store store;
	struct sbx_run_result rr;
	int status, sig;

	if ((wait_run != NULL) == (sig_name != NULL) || argc != (sig_name != NULL))
		usage(RUN_USAGE);
	if (sbx_cmd_store(&store, &e) == -1)
		errx(SBX_EX_RUNFAIL, "state root: %s", e.msg);
	if (sig_name != NULL) {
		if ((sig = signal_named(sig_name)) == -1)
			errx(RUN_USAGE, "--signal: '%s': INT, TERM or HUP (what a run passes on)",
			    sig_name);
		if (sbx_run_signal(&store, argv[0], sig, &e) == -1)
			errx(SBX_EX_RUNFAIL, "%s", e.msg);
		return 0;
	}
	if (sbx_run_wait(&store, wait_run, timeout_s, NULL, &rr, &e) == -1)
		errx(SBX_EX_RUNFAIL, "%s", e.msg);
	status = rr.status;
	if (print_result(&rr, fmt) == -1)
		status = SBX_EX_RUNFAIL;
	sbx_run_result_free(&rr);
	fflush(stdout);
	return status;
}

static volatile sig_atomic_t forward;

static void
on_signal(int sig)
{
	forward = sig;
}

/* A caller's key: 1 to 256 bytes, none a control character. */
static int
key_valid(const char *key)
{
	size_t i, n = strlen(key);

	for (i = 0; i < n; i++)
		if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
			return 0;
	return n > 0 && n <= 256;
}

/*
 * --once KEY: the key's run, started or joined, waited for; what it
 * recorded is what this prints and exits with, the first time and every
 * time after. INT, TERM and HUP meanwhile are the run's.
 */
static int
once_verb(const struct sbx_store *s, const char *id, const char *key, const struct sbx_exec *x,
    size_t limit, enum sbx_format fmt, const char *trace)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sbx_err e = { 0 };
	struct sbx_run_result rr;
	const struct sbx_node *t;
	char run[SBX_ID_MAX + 1];
	FILE *f;
	int status;

	if (!key_valid(key))
		errx(RUN_USAGE, "--once: the key must be 1 to 256 bytes, none a control character");
	if (sbx_run_once(s, id, key, x, limit, run, &e) == -1) {
		warnx("%s: %s", id, e.msg);
		return e.code == SBX_EX_DATAERR ? SBX_EX_DATAERR : SBX_EX_RUNFAIL;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (sbx_run_wait(s, run, 0, &forward, &rr, &e) == -1)
		errx(SBX_EX_RUNFAIL, "--once %s: %s; whether the command ran is unknown: "
		    "another key runs it again", key, e.msg);
	status = rr.status;
	if (print_result(&rr, fmt) == -1)
		status = SBX_EX_RUNFAIL;
	if (trace != NULL && (t = sbx_node_get(rr.result, "trace")) != NULL) {
		if ((f = strcmp(trace, "-") == 0 ? stderr : fopen(trace, "we")) == NULL ||
		    sbx_doc_emit(f, t, SBX_FMT_YAML) == -1 || (f != stderr && fclose(f) == EOF))
			warn("--trace %s", trace);
	}
	sbx_run_result_free(&rr);
	fflush(stdout);
	return status;
}

struct run_opts {
	struct sbx_exec x;
	struct sbx_capture cap;
	enum sbx_format out_fmt;   /* SBX_FMT_ID: the streams are the caller's */
	const char *manifest, *trace, *wait_run, *sig_name, *session, *once;
	char **env;
	int snap_before, detach, restart;
};

/* The options into o; returns the index of the first operand. */
static int
parse_opts(int argc, char *argv[], struct run_opts *o)
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
		{ "session", required_argument, NULL, 'N' },
		{ "restart", no_argument, NULL, 'R' },
		{ "once", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_exec *x = &o->x;
	char **grown;
	unsigned u, g;
	int c;

	while ((c = getopt_long(argc, argv, "+tm:e:w:u:T:k:c:P:o:dhV", opts, NULL)) != -1) {
		switch (c) {
		case 't': x->tty = 1; break;
		case 'm': o->manifest = optarg; break;
		case 'e':
			if (strchr(optarg, '=') == NULL || optarg[0] == '=')
				errx(RUN_USAGE, "--env: '%s' is not NAME=VALUE", optarg);
			if ((grown = realloc(o->env, (x->n_env + 1) * sizeof *o->env)) == NULL)
				err(SBX_EX_OSERR, NULL);
			o->env = grown;
			o->env[x->n_env++] = optarg;
			break;
		case 'w':
			if (optarg[0] != '/')
				errx(RUN_USAGE, "--workdir: '%s' is not an absolute path", optarg);
			x->workdir = optarg;
			break;
		case 'u':
			if (sbx_manifest_user_parse(optarg, &u, &g) == -1)
				errx(RUN_USAGE, "--user: '%s' is not UID[:GID] (0-65535)", optarg);
			x->user = optarg;
			break;
		case 'T': x->timeout_s = seconds("--timeout", optarg); break;
		case 'k': x->kill_after_s = seconds("--kill-after", optarg); break;
		case 'r': o->trace = optarg; break;
		case 'S': o->snap_before = 1; break;
		case 'c': sbx_audit_set_correlation(optarg); break;
		case 'P': sbx_policy_set_path(optarg); break;
		case 'o':
			if (sbx_format_parse(optarg, &o->out_fmt) == -1)
				errx(RUN_USAGE, "--output: '%s' is not json or yaml", optarg);
			break;
		case 'M': o->cap.limit = byte_count("--max-output", optarg); break;
		case 'd': o->detach = 1; break;
		case 'W': o->wait_run = optarg; break;
		case 'G': o->sig_name = optarg; break;
		case 'N': o->session = optarg; break;
		case 'R': o->restart = 1; break;
		case 'O': o->once = optarg; break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(RUN_USAGE);
		}
	}
	x->env = o->env;
	return optind;
}

int
main(int argc, char *argv[])
{
	struct run_opts o = { .cap = { .stdin_fd = STDIN_FILENO, .limit = 1 << 20 },
		.out_fmt = SBX_FMT_ID };
	struct sbx_err e = { 0 };
	struct sbx_store store;
	struct sbx_exec_result res;
	struct sbx_manifest m;
	char id[SBX_ID_MAX + 1];
	int r, existed;

	r = parse_opts(argc, argv, &o);
	argc -= r;
	argv += r;
	if (o.wait_run != NULL || o.sig_name != NULL) {
		free(o.env);
		return background_verb(o.wait_run, o.sig_name, argc, argv, o.out_fmt,
		    o.x.timeout_s);
	}
	if (o.session != NULL || o.restart) {
		if (o.session == NULL || o.manifest != NULL || o.detach || o.x.tty ||
		    o.snap_before || o.x.n_env > 0 || o.x.workdir || o.x.user)
			errx(RUN_USAGE, "--session: with an ID and a line only (-o, -T, --max-output, "
			    "--restart)");
		free(o.env);
		return session_verb(o.session, o.restart, argc, argv, o.out_fmt, o.cap.limit,
		    o.x.timeout_s);
	}
	if (o.manifest == NULL) {
		if (argc == 0)
			usage(RUN_USAGE);
		r = strcmp(argv[0], "-") == 0 ? id_from_stdin_head(id, sizeof id, &e) :
		    sbx_id_from_arg_or_stdin(argv[0], NULL, id, sizeof id, &e);
		if (r == -1) {
			if (e.code == SBX_EX_USAGE)
				usage(RUN_USAGE);
			errx(SBX_EX_RUNFAIL, "%s", e.msg);
		}
		skip_id(&argc, &argv);
	} else if (argc > 0 && strcmp(argv[0], "--") == 0) {
		argc--;
		argv++;
	}
	if (argc == 0)
		usage(RUN_USAGE);
	o.x.argv = argv;
	/* A pty cannot pass on the end of piped input: the command would wait
	 * for more for ever. No terminal then, as ssh does. */
	if (o.x.tty && o.out_fmt != SBX_FMT_ID)
		errx(RUN_USAGE, "-t and --output: a terminal's output cannot be captured");
	if (o.x.tty && !isatty(STDIN_FILENO)) {
		warnx("stdin is not a terminal: running without one (-t ignored)");
		o.x.tty = 0;
	}
	/* From here on every failure of sbx itself is 125: the command's own
	 * statuses (1-124, 126-255) must never be mistaken for ours. */
	if (sbx_cmd_store(&store, &e) == -1)
		errx(SBX_EX_RUNFAIL, "state root: %s", e.msg);
	if (o.once != NULL) {
		if (o.manifest != NULL || o.detach || o.x.tty || o.snap_before)
			errx(RUN_USAGE, "--once: not with -m, -d, -t or --snapshot-before");
		r = once_verb(&store, id, o.once, &o.x, o.cap.limit, o.out_fmt, o.trace);
		free(o.env);
		return r;
	}
	if (o.manifest != NULL) {
		if (sbx_manifest_load(o.manifest, &m, &e) == -1)
			errx(SBX_EX_RUNFAIL, "%s", e.msg);
		free(m.sandbox_id);
		m.sandbox_id = NULL;  /* a one-shot always gets a fresh sandbox */
		/* A one-shot's lifetime is bounded by sbx-run itself: no watchdog needed,
		 * and no state worth an fsync (it is gone when we are). */
		sbx_set_durable(0);
		if (sbx_provision(&store, &m, SBX_PROV_ONE_SHOT, &existed, &e) == -1)
			errx(SBX_EX_RUNFAIL, "%s: %s", o.manifest, e.msg);
		snprintf(id, sizeof id, "%s", m.sandbox_id);
		sbx_manifest_free(&m);
	}
	if (o.detach) {
		char run[SBX_ID_MAX + 1];

		if (o.manifest != NULL || o.x.tty || o.snap_before || o.out_fmt != SBX_FMT_ID)
			errx(RUN_USAGE, "-d: not with -m, -t, --snapshot-before or -o");
		if (sbx_run_detach(&store, id, &o.x, o.cap.limit, run, &e) == -1)
			errx(SBX_EX_RUNFAIL, "%s: %s", id, e.msg);
		printf("%s\n", run);
		free(o.env);
		return sbx_flush_stdout() == 0 ? 0 : SBX_EX_RUNFAIL;
	}
	if (o.snap_before) {
		/* Snapshot before mutating: the command runs only once it is written. */
		struct sbx_snap_opts so = { NULL, "before-run", 1 };
		char snap[SBX_ID_MAX + 1];

		if (sbx_snap_create(&store, id, &so, snap, &e) == -1)
			errx(SBX_EX_RUNFAIL, "%s: --snapshot-before: %s", id, e.msg);
		fprintf(stderr, "sbx-run: %s: snapshot %s\n", id, snap);
	}
	r = o.out_fmt == SBX_FMT_ID ? sbx_sandbox_run(&store, id, &o.x, &res, &e) :
	    sbx_sandbox_run_capture(&store, id, &o.x, &o.cap, &res, &e);
	if (r == -1)
		warnx("%s: %s", id, e.msg);
	else
		say_why_killed(&store, id, &o.x, &res);
	/* The result object whenever the command was started (its exec failing is one). */
	if (o.out_fmt != SBX_FMT_ID && (r == 0 || res.status == SBX_EX_NOEXEC ||
	    res.status == SBX_EX_NOTFOUND) &&
	    sbx_doc_emit_tree(stdout, sbx_capture_tree(&o.cap, &res, r == -1 ? e.msg : NULL, 1),
	    o.out_fmt) == -1) {
		warnx("%s: --output: out of memory", id);
		res.status = SBX_EX_RUNFAIL;
	}
	sbx_capture_free(&o.cap);
	if (r == 0 || res.status == SBX_EX_NOEXEC || res.status == SBX_EX_NOTFOUND)
		write_trace(o.trace, &res.trace);
	sbx_trace_free(&res.trace);
	if (o.manifest != NULL) {
		struct sbx_err de = { 0 };

		/* Back to the caller once the sandbox's processes are dead; its
		 * directories and cgroups go in a child that outlives us. */
		if (sbx_sandbox_destroy_ex(&store, id, SBX_DESTROY_DETACH, &de) == -1) {
			warnx("%s: destroy: %s", id, de.msg);
			if (r == 0)
				res.status = SBX_EX_RUNFAIL;
		}
	}
	free(o.env);
	fflush(stdout);
	return res.status;
}
