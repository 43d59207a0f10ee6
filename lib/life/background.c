/* SPDX-License-Identifier: MIT */
/* Background runs: see background.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "background.h"
#include "capture.h"
#include "sandbox.h"
#include "sha256.h"
#include "supervise.h"
#include "util.h"

#define RUN_DOC_MAX SBX_DOC_MAX

/* The tree as one line of JSON, written atomically to dir/name. */
static int
write_doc(const char *dir, const char *name, const struct sbx_node *n, struct sbx_err *e)
{
	char path[PATH_MAX], *buf;
	size_t len;
	int r;

	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "%s: path too long", dir);
	if (sbx_doc_render(n, SBX_FMT_JSON, &buf, &len) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	r = sbx_write_atomic(path, buf, len, 0600, e);
	free(buf);
	return r;
}

static struct sbx_node *
read_doc(const char *dir, const char *name, struct sbx_err *e)
{
	char path[PATH_MAX], *buf;
	struct sbx_node *n = NULL;
	size_t len;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (sbx_read_file(path, RUN_DOC_MAX, &buf, &len, e) == -1)
		return NULL;
	if (sbx_doc_parse(path, buf, len, &n, e) == -1)
		n = NULL;
	free(buf);
	return n;
}

static const char *
doc_str(const struct sbx_node *n, const char *key)
{
	const struct sbx_node *v = sbx_node_get(n, key);

	return v && v->type == SBX_SCALAR ? v->str : NULL;
}

/* A SIGKILL with no reason of the run's own: the sandbox's end, when it
 * ended under the run (its watchdog first at the deadline), as sbx-run says. */
static void
why_killed(const struct sbx_store *s, const char *id, struct sbx_exec_result *res)
{
	struct sbx_manifest m;
	struct sbx_err ignored;
	double until;
	const char *why = NULL;

	if (res->status != 128 + SIGKILL || res->trace.kill_reason != NULL ||
	    sbx_sandbox_view(s, id, &m, &ignored) == -1)
		return;
	if (m.status == SBX_STATUS_TERMINATED || m.status == SBX_STATUS_CLEANUP)
		why = m.kill_reason ? m.kill_reason : m.expires_at &&
		    sbx_time_parse(m.expires_at, &until) == 0 && until <= sbx_realtime() ?
		    "wall-clock" : NULL;
	if (why != NULL)
		res->trace.kill_reason = strdup(why);
	sbx_manifest_free(&m);
}

/* The detached process: the run, then what it wrote and its result. */
static void __attribute__((noreturn))
supervise_run(const struct sbx_store *s, const char *id, const char *run, const char *dir,
    const struct sbx_exec *x, size_t limit)
{
	struct sbx_capture c = { .stdin_fd = -1, .limit = limit };
	struct sbx_exec_result res;
	struct sbx_err e = { 0 }, ignored;
	struct sbx_node *t;
	char path[PATH_MAX];
	int r;

	/* No process title of its own: that would overwrite the program's
	 * arguments, where x's strings are. ps shows it as the sbx-run -d it was. */
	r = sbx_sandbox_run_capture(s, id, x, &c, &res, &e);
	why_killed(s, id, &res);
	snprintf(path, sizeof path, "%s/stdout", dir);
	sbx_write_atomic(path, c.out.buf ? c.out.buf : "", c.out.len, 0600, &ignored);
	snprintf(path, sizeof path, "%s/stderr", dir);
	sbx_write_atomic(path, c.err.buf ? c.err.buf : "", c.err.len, 0600, &ignored);
	if ((t = sbx_capture_tree(&c, &res, r == -1 ? e.msg : NULL, 0)) != NULL &&
	    sbx_node_add(t, "run_id", sbx_node_str(run)) == 0 &&
	    sbx_node_add(t, "sandbox_id", sbx_node_str(id)) == 0)
		write_doc(dir, "result.json", t, &ignored);
	sbx_node_free(t);
	_exit(0);
}

static struct sbx_node *
run_doc(const char *run, const char *id, const struct sbx_exec *x, pid_t pid)
{
	struct sbx_node *n = sbx_node_new(SBX_MAP), *cmd = sbx_node_new(SBX_SEQ);
	char now[40];
	size_t i;

	sbx_time_rfc3339_ms(now, sizeof now, sbx_realtime());
	for (i = 0; cmd != NULL && x->argv[i] != NULL; i++)
		sbx_node_add(cmd, NULL, sbx_node_str(x->argv[i]));
	if (n == NULL || cmd == NULL || sbx_node_add(n, "run_id", sbx_node_str(run)) == -1 ||
	    sbx_node_add(n, "sandbox_id", sbx_node_str(id)) == -1 ||
	    sbx_node_add(n, "command", cmd) == -1 || (cmd = NULL,
	    sbx_node_add(n, "started_at", sbx_node_str(now)) == -1) ||
	    sbx_node_add(n, "pid", sbx_node_int(pid)) == -1 ||
	    sbx_node_add(n, "pid_start", sbx_node_int((long long)sbx_proc_starttime(pid))) == -1) {
		sbx_node_free(cmd);
		sbx_node_free(n);
		return NULL;
	}
	return n;
}

/*
 * Start run's supervisor (dir exists): a process of its own session that
 * writes run.json before it lets go of the caller's descriptors (a lock the
 * caller holds among them), then runs x.
 */
static int
start_run(const struct sbx_store *s, const char *id, const char *run, const char *dir,
    const struct sbx_exec *x, size_t limit, struct sbx_err *e)
{
	struct sbx_err ignored;
	struct sbx_node *doc;
	pid_t child;
	char ok = 0;
	int p[2], st, fd, r;

	if (pipe2(p, O_CLOEXEC) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "pipe");
	if ((child = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return sbx_err_sys(e, SBX_EX_OSERR, "fork");
	}
	if (child == 0) {
		/* Twice, so that no one waits for it: its own session, no stdio. */
		close(p[0]);
		setsid();
		if (fork() != 0)
			_exit(0);
		/* Signalled as soon as run.json names it: kept for the command. */
		sbx_supervise_hold();
		doc = run_doc(run, id, x, getpid());
		ok = doc != NULL && write_doc(dir, "run.json", doc, &ignored) == 0;
		sbx_node_free(doc);
		if (write(p[1], &ok, 1) != 1 || !ok)
			_exit(1);
		if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		syscall(SYS_close_range, 3, ~0U, 0);
		supervise_run(s, id, run, dir, x, limit);
	}
	close(p[1]);
	while (waitpid(child, &st, 0) == -1 && errno == EINTR)
		;
	r = (int)read(p[0], &ok, 1);
	close(p[0]);
	if (r != 1 || !ok)
		return sbx_err_set(e, SBX_EX_OSERR, "the background run did not start");
	return 0;
}

/* The sandbox can take a run now. */
static int
ready(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	struct sbx_manifest m;
	int r;

	if (sbx_sandbox_view(s, id, &m, e) == -1)
		return -1;
	r = m.status == SBX_STATUS_READY || m.status == SBX_STATUS_EXECUTING;
	sbx_manifest_free(&m);
	return r ? 0 : sbx_err_set(e, SBX_EX_RUNFAIL, "sandbox is not ready (sbx-inspect %s)", id);
}

int
sbx_run_detach(const struct sbx_store *s, const char *id, const struct sbx_exec *x,
    size_t limit, char run[SBX_ID_MAX + 1], struct sbx_err *e)
{
	char runs[PATH_MAX], dir[PATH_MAX];

	if (x->tty)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "a background run has no terminal");
	if (ready(s, id, e) == -1)
		return -1;
	if (sbx_id_new("run-", run, SBX_ID_MAX + 1, e) == -1 ||
	    sbx_store_path(s, id, "runs", runs, sizeof runs, e) == -1)
		return -1;
	snprintf(dir, sizeof dir, "%s/%s", runs, run);
	if ((mkdir(runs, 0700) == -1 && errno != EEXIST) || mkdir(dir, 0700) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", dir);
	return start_run(s, id, run, dir, x, limit, e);
}

/* The directory of run, and its sandbox's ID; 66 when there is none. */
static int
find_run(const struct sbx_store *s, const char *run, char *dir, size_t size, struct sbx_err *e)
{
	struct stat st;
	char **ids;
	size_t n, i;
	int found = 0;

	if (strncmp(run, "run-", 4) != 0 || !sbx_id_valid(run))
		return sbx_err_set(e, SBX_EX_DATAERR, "'%s' is not a run ID (run-XXXXXXXX)", run);
	if (sbx_store_list(s, &ids, &n, e) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		char sub[SBX_ID_MAX + 8];

		snprintf(sub, sizeof sub, "runs/%s", run);
		if (!found && sbx_store_path(s, ids[i], sub, dir, size, NULL) == 0 &&
		    lstat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			found = 1;
		free(ids[i]);
	}
	free(ids);
	return found ? 0 : sbx_err_set(e, SBX_EX_NOINPUT, "%s: no such run", run);
}

/* Is the run's supervisor still there? From run.json's pid and start time. */
static int
supervisor_alive(const char *dir)
{
	struct sbx_err ignored;
	struct sbx_node *doc = read_doc(dir, "run.json", &ignored);
	const char *pid, *start;
	int alive = 1;

	/* run.json is written just after the start: until then it is starting. */
	if (doc != NULL && (pid = doc_str(doc, "pid")) != NULL &&
	    (start = doc_str(doc, "pid_start")) != NULL)
		alive = sbx_proc_alive((pid_t)strtol(pid, NULL, 10), strtoull(start, NULL, 10));
	sbx_node_free(doc);
	return alive;
}

static int
has(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* A key's run: "run-" and 16 hex digits of its hash, found like any run's. */
static void
once_run_id(const char *key, char run[SBX_ID_MAX + 1])
{
	struct sbx_sha256 h;
	unsigned char d[32];

	sbx_sha256_init(&h);
	sbx_sha256_update(&h, "sbx-run --once\n", 15);
	sbx_sha256_update(&h, key, strlen(key));
	sbx_sha256_final(&h, d);
	memcpy(run, "run-", 4);
	sbx_hex(d, 8, run + 4);
}

static struct sbx_node *
str_seq(char *const *v, size_t n)
{
	struct sbx_node *seq = sbx_node_new(SBX_SEQ);
	size_t i;

	for (i = 0; seq != NULL && i < n; i++)
		if (sbx_node_add(seq, NULL, sbx_node_str(v[i])) == -1) {
			sbx_node_free(seq);
			return NULL;
		}
	return seq;
}

/* What a key stands for: everything that makes the run what it is. */
static struct sbx_node *
once_input(const char *id, const struct sbx_exec *x, size_t limit)
{
	struct sbx_node *n = sbx_node_new(SBX_MAP);
	size_t argc = 0;

	while (x->argv[argc] != NULL)
		argc++;
	if (n == NULL || sbx_node_add(n, "sandbox_id", sbx_node_str(id)) == -1 ||
	    sbx_node_add(n, "command", str_seq(x->argv, argc)) == -1 ||
	    sbx_node_add(n, "env", str_seq(x->env, x->n_env)) == -1 ||
	    sbx_node_add(n, "workdir", x->workdir ? sbx_node_str(x->workdir) :
	    sbx_node_raw("null")) == -1 ||
	    sbx_node_add(n, "user", x->user ? sbx_node_str(x->user) : sbx_node_raw("null")) == -1 ||
	    sbx_node_add(n, "timeout_s", sbx_node_num(x->timeout_s)) == -1 ||
	    sbx_node_add(n, "kill_after_s", sbx_node_num(x->kill_after_s)) == -1 ||
	    sbx_node_add(n, "max_output", sbx_node_int((long long)limit)) == -1) {
		sbx_node_free(n);
		return NULL;
	}
	return n;
}

/* Each key of want as once.json in dir recorded it; 65 naming the first that differs. */
static int
once_same(const char *dir, const char *key, const char *run, const struct sbx_node *want,
    struct sbx_err *e)
{
	struct sbx_node *doc = read_doc(dir, "once.json", e), *had;
	const char *had_key;
	char *a = NULL, *b = NULL;
	size_t i, la, lb;
	int r = 0;

	if (doc == NULL)
		return e->code == SBX_EX_NOINPUT ? sbx_err_set(e, SBX_EX_DATAERR,
		    "%s: %s holds no once.json", key, run) : -1;
	had_key = doc_str(doc, "once_key");
	if (had_key == NULL || strcmp(had_key, key) != 0) {
		sbx_node_free(doc);
		return sbx_err_set(e, SBX_EX_DATAERR, "%s: %s is the run of another key", key, run);
	}
	had = sbx_node_get(doc, "input");
	for (i = 0; r == 0 && i < want->n; i += 2) {
		const char *name = want->kids[i]->str;
		const struct sbx_node *h = had ? sbx_node_get(had, name) : NULL;

		if (sbx_doc_render(want->kids[i + 1], SBX_FMT_JSON, &a, &la) == -1 ||
		    (h != NULL && sbx_doc_render(h, SBX_FMT_JSON, &b, &lb) == -1))
			r = sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		else if (h == NULL || strcmp(a, b) != 0)
			r = sbx_err_set(e, SBX_EX_DATAERR, "--once %s: the key names run %s, whose %s "
			    "was %s, not %s (one key, one run: another run takes another key)", key, run,
			    name, b ? b : "unrecorded", a);
		free(a);
		free(b);
		a = b = NULL;
	}
	sbx_node_free(doc);
	return r;
}

/*
 * Join run (in dir, with the same input): a run whose supervisor has
 * written run.json is under way or done; one whose starter holds the lock
 * is starting; one whose lock is free and has no run.json was never
 * started (its starter died first), so it is started now.
 */
static int
once_join(const struct sbx_store *s, const char *id, const char *run, const char *dir,
    const struct sbx_exec *x, size_t limit, struct sbx_err *e)
{
	char lock[PATH_MAX];
	int fd, r = 0;

	if (has(dir, "run.json"))
		return 0;
	snprintf(lock, sizeof lock, "%s/once.lock", dir);
	if ((fd = sbx_lock_file(lock, 1, e)) == -1)
		return -1;
	if (!has(dir, "run.json"))
		r = ready(s, id, e) == -1 ? -1 : start_run(s, id, run, dir, x, limit, e);
	close(fd);
	return r;
}

/* Make run's directory whole (once.json, its lock held) under a temporary
 * name, then give it its name; 1 when another caller gave it first. */
static int
once_make(const struct sbx_store *s, const char *id, const char *run, const char *key,
    const struct sbx_node *in, const struct sbx_exec *x, size_t limit, struct sbx_err *e)
{
	char runs[PATH_MAX], tmp[PATH_MAX], dir[PATH_MAX], lock[PATH_MAX + 16];
	struct sbx_node *doc = sbx_node_new(SBX_MAP);
	struct sbx_node *copy = NULL;
	struct sbx_err ignored;
	char *text = NULL;
	size_t len;
	int fd = -1, r = -1;

	if (ready(s, id, e) == -1 || sbx_store_path(s, id, "runs", runs, sizeof runs, e) == -1)
		goto out;
	snprintf(tmp, sizeof tmp, "%s/.%s.%ld", runs, run, (long)getpid());
	snprintf(dir, sizeof dir, "%s/%s", runs, run);
	/* The input again, as a tree of its own for once.json. */
	if (doc == NULL || sbx_doc_render(in, SBX_FMT_JSON, &text, &len) == -1 ||
	    sbx_doc_parse("once input", text, len, &copy, e) == -1 ||
	    sbx_node_add(doc, "once_key", sbx_node_str(key)) == -1 ||
	    sbx_node_add(doc, "run_id", sbx_node_str(run)) == -1 ||
	    sbx_node_add(doc, "input", copy) == -1) {
		copy = NULL;
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	copy = NULL;
	sbx_rm_rf(tmp, &ignored);
	if ((mkdir(runs, 0700) == -1 && errno != EEXIST) || mkdir(tmp, 0700) == -1) {
		sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", tmp);
		goto out;
	}
	snprintf(lock, sizeof lock, "%s/once.lock", tmp);
	if (write_doc(tmp, "once.json", doc, e) == -1 || (fd = sbx_lock_file(lock, 1, e)) == -1)
		goto out;
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_NOREPLACE) == -1) {
		r = errno == EEXIST ? 1 : sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", dir);
		goto out;
	}
	sbx_crash_point("once-made");
	r = start_run(s, id, run, dir, x, limit, e);
out:
	if (fd != -1)
		close(fd);
	if (r != 0)
		sbx_rm_rf(tmp, &ignored);
	sbx_node_free(copy);
	sbx_node_free(doc);
	free(text);
	return r;
}

int
sbx_run_once(const struct sbx_store *s, const char *id, const char *key,
    const struct sbx_exec *x, size_t limit, char run[SBX_ID_MAX + 1], struct sbx_err *e)
{
	char dir[PATH_MAX];
	struct sbx_node *in;
	int r = 1, tries;

	if (x->tty)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "a background run has no terminal");
	memset(run, 0, SBX_ID_MAX + 1);
	once_run_id(key, run);
	if ((in = once_input(id, x, limit)) == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	/* Two callers with one key: one makes the run, the other joins it. */
	for (tries = 0; r == 1 && tries < 3; tries++) {
		if (find_run(s, run, dir, sizeof dir, NULL) == 0)
			r = once_same(dir, key, run, in, e) == -1 ? -1 :
			    once_join(s, id, run, dir, x, limit, e);
		else
			r = once_make(s, id, run, key, in, x, limit, e);
	}
	sbx_node_free(in);
	return r == 1 ? sbx_err_set(e, SBX_EX_TEMPFAIL, "--once %s: busy", key) : r;
}

int
sbx_run_wait(const struct sbx_store *s, const char *run, double timeout_s,
    volatile sig_atomic_t *forward, struct sbx_run_result *r, struct sbx_err *e)
{
	char dir[PATH_MAX], path[PATH_MAX + 8];
	struct sbx_err ignored;
	const char *code;
	double t0 = sbx_monotonic();
	int sig;

	memset(r, 0, sizeof *r);
	if (find_run(s, run, dir, sizeof dir, e) == -1)
		return -1;
	while (!has(dir, "result.json")) {
		if (!supervisor_alive(dir) && !has(dir, "result.json"))
			return sbx_err_set(e, SBX_EX_RUNFAIL, "%s: its supervisor is gone and left no "
			    "result (killed, or the host restarted)", run);
		if (timeout_s > 0 && sbx_monotonic() - t0 >= timeout_s)
			return sbx_err_set(e, SBX_EX_TEMPFAIL, "%s: still running after %g s", run,
			    timeout_s);
		if (forward != NULL && (sig = *forward) != 0) {
			*forward = 0;
			sbx_run_signal(s, run, sig, &ignored);
		}
		poll(NULL, 0, 20);
	}
	if ((r->result = read_doc(dir, "result.json", e)) == NULL)
		return -1;
	snprintf(path, sizeof path, "%s/stdout", dir);
	if (sbx_read_file(path, SIZE_MAX / 2, &r->out, &r->out_len, e) == -1)
		goto fail;
	snprintf(path, sizeof path, "%s/stderr", dir);
	if (sbx_read_file(path, SIZE_MAX / 2, &r->err, &r->err_len, e) == -1)
		goto fail;
	code = doc_str(r->result, "exit_code");
	r->status = code ? (int)strtol(code, NULL, 10) : SBX_EX_RUNFAIL;
	return 0;
fail:
	sbx_run_result_free(r);
	return -1;
}

void
sbx_run_result_free(struct sbx_run_result *r)
{
	sbx_node_free(r->result);
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof *r);
}

int
sbx_run_signal(const struct sbx_store *s, const char *run, int sig, struct sbx_err *e)
{
	char dir[PATH_MAX];
	struct sbx_node *doc;
	const char *pid, *start;
	int r;

	if (sig != SIGINT && sig != SIGTERM && sig != SIGHUP)
		return sbx_err_set(e, SBX_EX_USAGE, "a run passes on SIGINT, SIGTERM and SIGHUP");
	if (find_run(s, run, dir, sizeof dir, e) == -1)
		return -1;
	if (has(dir, "result.json"))
		return sbx_err_set(e, SBX_EX_DATAERR, "%s: has ended", run);
	if ((doc = read_doc(dir, "run.json", e)) == NULL)
		return -1;
	pid = doc_str(doc, "pid");
	start = doc_str(doc, "pid_start");
	if (pid == NULL || start == NULL ||
	    !sbx_proc_alive((pid_t)strtol(pid, NULL, 10), strtoull(start, NULL, 10)))
		r = sbx_err_set(e, SBX_EX_DATAERR, "%s: has ended", run);
	else if (kill((pid_t)strtol(pid, NULL, 10), sig) == -1)
		r = sbx_err_sys(e, SBX_EX_OSERR, "%s: kill", run);
	else
		r = 0;
	sbx_node_free(doc);
	return r;
}

static int
by_start(const void *a, const void *b)
{
	const char *x = doc_str(*(struct sbx_node *const *)a, "started_at");
	const char *y = doc_str(*(struct sbx_node *const *)b, "started_at");

	return strcmp(x ? x : "", y ? y : "");
}

int
sbx_run_list(const struct sbx_store *s, const char *id, struct sbx_node **list,
    struct sbx_err *e)
{
	char runs[PATH_MAX], dir[PATH_MAX + NAME_MAX + 2];
	struct sbx_node **docs = NULL, **grown, *res;
	struct sbx_err ignored;
	struct dirent *d;
	size_t n = 0, i;
	DIR *dp;

	if (!sbx_store_exists(s, id))
		return sbx_err_set(e, SBX_EX_NOINPUT, "%s: no such sandbox", id);
	if (sbx_store_path(s, id, "runs", runs, sizeof runs, e) == -1)
		return -1;
	if ((*list = sbx_node_new(SBX_SEQ)) == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if ((dp = opendir(runs)) == NULL)
		return 0;  /* no run yet */
	while ((d = readdir(dp)) != NULL) {
		struct sbx_node *doc, *once;
		const char *code;

		if (strncmp(d->d_name, "run-", 4) != 0)
			continue;
		snprintf(dir, sizeof dir, "%s/%s", runs, d->d_name);
		if ((doc = read_doc(dir, "run.json", &ignored)) == NULL)
			continue;
		if ((once = read_doc(dir, "once.json", &ignored)) != NULL &&
		    doc_str(once, "once_key") != NULL)
			sbx_node_add(doc, "once_key", sbx_node_str(doc_str(once, "once_key")));
		sbx_node_free(once);
		res = has(dir, "result.json") ? read_doc(dir, "result.json", &ignored) : NULL;
		code = res ? doc_str(res, "exit_code") : NULL;
		sbx_node_add(doc, "state", sbx_node_str(res ? "exited" :
		    supervisor_alive(dir) ? "running" : "lost"));
		sbx_node_add(doc, "exit_code", code ? sbx_node_raw(code) : sbx_node_raw("null"));
		sbx_node_free(res);
		if ((grown = realloc(docs, (n + 1) * sizeof *docs)) == NULL) {
			sbx_node_free(doc);
			break;
		}
		docs = grown;
		docs[n++] = doc;
	}
	closedir(dp);
	if (n > 0)
		qsort(docs, n, sizeof *docs, by_start);
	for (i = 0; i < n; i++)
		if (sbx_node_add(*list, NULL, docs[i]) == -1)
			sbx_node_free(docs[i]);
	free(docs);
	return 0;
}
