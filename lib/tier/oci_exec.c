/* SPDX-License-Identifier: MIT */
/* A run in the OCI tier: `runc exec`, handed to the supervision loop. See oci.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "fdpass.h"
#include "net.h"
#include "oci.h"
#include "pty.h"
#include "quota.h"
#include "supervise.h"
#include "tier_env.h"
#include "util.h"

#define MAX_ARGS 4096

struct oci_run {
	const struct sbx_store *s;
	const struct sbx_manifest *m;
	struct oci_paths p;
	char pidfile[1300], log[1300];
	/* sbx-run -t: where the runtime sends the terminal's master, and our
	 * listening socket there (-1: none) */
	struct sockaddr_un console;
	int console_fd;
	struct sbx_supervise sv;
	struct sbx_cgroup cg;
	int have_cg;
	long long oom_before;    /* the sandbox cgroup's OOM kills before the run */
	long long pids_before;   /* and the forks its pids limit refused */
};

/* The forks the sandbox's pids limit refused so far (-1: unknown). */
static long long
pids_refused(const struct oci_run *r)
{
	struct sbx_cg_stats st;

	if (!r->have_cg || sbx_cgroup_stats(&r->cg, &st, NULL) == -1)
		return -1;
	return st.pids_max_events;
}

/* Did the kernel end gVisor's sandbox during the run (its memory limit's
 * OOM kill, or its pids limit refusing gVisor a thread, which gVisor does
 * not survive)? */
static int
runsc_killed(const struct oci_run *r)
{
	long long pids = pids_refused(r);

	return r->p.kind == OCI_RUNSC && r->have_cg &&
	    (sbx_cgroup_oom_kills(&r->cg) > r->oom_before ||
	    (pids >= 0 && r->pids_before >= 0 && pids > r->pids_before));
}

/* RUNTIME --root R [its flags] --log L --log-format json exec --pid-file F
 * --cwd W --user U [-e KV]... ID ARGV...: argv for the runtime's exec
 * process (strings are the caller's and env's). runsc's pid file is the
 * command's PID inside the sandbox (there is no host process of it). */
static const char **
exec_argv(struct oci_run *r, const struct sbx_exec *x, const char **env, size_t n_env,
    char *user)
{
	size_t n, i, argc;
	const char **v;

	for (argc = 0; x->argv[argc]; argc++)
		;
	if (argc + 2 * n_env > MAX_ARGS || (v = calloc(argc + 2 * n_env + 32, sizeof *v)) == NULL)
		return NULL;
	n = oci_argv(&r->p, v, 16);
	v[n++] = "--log";
	v[n++] = r->log;
	v[n++] = "--log-format";
	v[n++] = "json";
	v[n++] = "exec";
	/* crun's exec takes no_new_privs from its flag, not the config's. */
	if (r->p.kind == OCI_CRUN && r->m->security.no_new_privileges)
		v[n++] = "--no-new-privs";
	/* A terminal: crun makes it in the sandbox and hands us its master;
	 * runc takes a console socket only to detach, and relays the terminal
	 * itself. */
	if (x->tty)
		v[n++] = "--tty";
	if (x->tty && r->p.kind == OCI_CRUN) {
		v[n++] = "--console-socket";
		v[n++] = r->console.sun_path;
	}
	v[n++] = r->p.kind == OCI_RUNSC ? "--internal-pid-file" : "--pid-file";
	v[n++] = r->pidfile;
	v[n++] = "--cwd";
	v[n++] = x->workdir ? x->workdir : r->m->workdir;
	v[n++] = "--user";
	v[n++] = user;
	for (i = 0; i < n_env; i++) {
		v[n++] = "--env";
		v[n++] = env[i];
	}
	v[n++] = r->m->sandbox_id;
	/* The guard (oci_run.c), with TIOCSCTTY refused when our caller holds a
	 * terminal that is no session's, as the namespace tier's runs. */
	if (strcmp(r->m->security.seccomp, "unconfined") != 0) {
		v[n++] = OCI_GUEST "/exec";
		v[n++] = !x->tty && sbx_pty_stray(x->stdio) ? OCI_GUEST "/seccomp-ctty" :
		    OCI_GUEST "/seccomp";
	}
	for (i = 0; i < argc; i++)
		v[n++] = x->argv[i];
	v[n] = NULL;
	return v;
}

/* The command's host PID (runc's pid file), if it is still in the sandbox's
 * PID namespace: never a process that took the number since. */
static pid_t
command_pid(const struct oci_run *r)
{
	char buf[32], a[96], b[96], la[64], lb[64];
	ssize_t na, nb;
	long long pid;

	if (sbx_read_str(r->pidfile, buf, sizeof buf) <= 0 || (pid = atoll(buf)) <= 1)
		return -1;
	snprintf(a, sizeof a, "/proc/%lld/ns/pid", pid);
	snprintf(b, sizeof b, "/proc/%lld/ns/pid", sbx_rt_int(r->m, "pid"));
	if ((na = readlink(a, la, sizeof la - 1)) <= 0 || (nb = readlink(b, lb, sizeof lb - 1)) <= 0)
		return -1;
	la[na] = lb[nb] = '\0';
	return strcmp(la, lb) == 0 && pid != sbx_rt_int(r->m, "pid") ? (pid_t)pid : -1;
}

/* At a deadline the command goes with the runtime's exec, which would leave
 * it; under runsc it is gVisor's process, which only runsc can signal. */
static void
run_kill_all(void *ctx)
{
	struct oci_run *r = ctx;
	char buf[32];
	pid_t pid;

	if (r->p.kind == OCI_RUNSC) {
		const char *args[] = { "kill", "--pid", buf, r->m->sandbox_id, "KILL", NULL };

		if (sbx_read_str(r->pidfile, buf, sizeof buf) > 0 && atoll(buf) > 1)
			(void)oci_call(&r->p, args, NULL, 0, NULL, 0);
		return;
	}
	if ((pid = command_pid(r)) > 0)
		kill(pid, SIGKILL);
}

/* The runtime's own failure (status 255, runsc's 128, and an error in its
 * log): the command
 * never ran; 127 not found, 126 not executable, 125 the rest. */
static int
run_failed(void *ctx, struct sbx_err *e)
{
	struct oci_run *r = ctx;
	char msg[600];
	int ws = r->sv.wait_status;

	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != (r->p.kind == OCI_RUNSC ? 128 : 255))
		return 0;
	/* gVisor's sandbox is one process to the kernel: its memory limit's
	 * OOM kill or its pids limit ends it, and runsc exec loses it
	 * (run_figures says so). */
	if (runsc_killed(r))
		return 0;
	oci_log_error(r->log, msg, sizeof msg);
	if (msg[0] == '\0')
		return 0;
	/* runc: "executable file not found", "permission denied"; crun:
	 * "executable file `X` not found in $PATH", "Operation not permitted". */
	sbx_err_set(e, strstr(msg, "not found") || strcasestr(msg, "no such file") ?
	    SBX_EX_NOTFOUND : strcasestr(msg, "permission denied") ||
	    strstr(msg, "not permitted") ? SBX_EX_NOEXEC : SBX_EX_RUNFAIL,
	    "%s exec %s: %s", oci_kind_name(r->p.kind), r->m->sandbox_id, msg);
	return 1;
}

/*
 * gVisor writes a regular file given as stdout or stderr at the offset it
 * keeps itself, from where it found it: a second run's output lands on the
 * first's. Appending is what the caller's file would get from runc or the
 * namespace tier (output written after what is there), so it is asked for.
 */
static void
runsc_stdio(void)
{
	struct stat st;
	int fd, fl;

	for (fd = 1; fd <= 2; fd++)
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    (fl = fcntl(fd, F_GETFL)) != -1 && !(fl & O_APPEND))
			(void)fcntl(fd, F_SETFL, fl | O_APPEND);
}

static pid_t
spawn(const struct oci_paths *p, const struct sbx_exec *x, const char **argv)
{
	struct sbx_err ignored;
	sigset_t held;
	pid_t pid;

	sbx_supervise_fork_begin(&held);
	if ((pid = fork()) == 0) {
		sbx_supervise_fork_child(&held);
		if (sbx_exec_stdio(x, &ignored) == -1)
			_exit(SBX_EX_RUNFAIL);
		if (p->kind == OCI_RUNSC)
			runsc_stdio();
		/* Nothing of the caller's but stdio crosses into the runtime. */
		syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
		if (oci_child_prepare(p, "exec", 0) == 0)
			execve(argv[0], (char *const *)argv, oci_runtime_env);
		_exit(SBX_EX_RUNFAIL);
	}
	sbx_supervise_fork_end(&held);
	return pid;
}

/* gVisor's own figures for the sandbox (`runsc events --stats`): CPU time in
 * ns and memory in use in bytes, -1 each where it says none. */
static void
runsc_stats(const struct oci_run *r, long long *cpu_ns, long long *mem)
{
	const char *const args[] = { "events", "--stats", r->m->sandbox_id, NULL };
	const struct sbx_node *d, *v;
	struct sbx_err ignored;
	struct sbx_node *n;
	char out[8192];

	*cpu_ns = *mem = -1;
	if (oci_call(&r->p, args, out, sizeof out, NULL, 0) != 0 ||
	    sbx_doc_parse("runsc events", out, strlen(out), &n, &ignored) == -1)
		return;
	if ((d = sbx_node_get(n, "data")) != NULL) {
		if ((v = sbx_node_get(sbx_node_get(sbx_node_get(d, "cpu"), "usage"), "total")) &&
		    v->type == SBX_SCALAR)
			*cpu_ns = strtoll(v->str, NULL, 10);
		if ((v = sbx_node_get(sbx_node_get(sbx_node_get(d, "memory"), "usage"), "usage")) &&
		    v->type == SBX_SCALAR)
			*mem = strtoll(v->str, NULL, 10);
	}
	sbx_node_free(n);
}

/* What the run used: its rusage (runc and crun's exec wait for the
 * command), or under runsc gVisor's CPU time over the run and its memory in
 * use at the end; an OOM kill counted in the sandbox's cgroup meanwhile. */
static void
run_figures(struct oci_run *r, long long cpu_before, struct sbx_trace *t)
{
	const struct rusage *ru = &r->sv.ru;
	long long cpu, mem, pids = pids_refused(r);
	char layer[1200];
	double used;

	if (r->p.kind == OCI_RUNSC) {
		runsc_stats(r, &cpu, &mem);
		if (cpu >= 0 && cpu_before >= 0)
			t->cpu_seconds_used = (double)(cpu - cpu_before) / 1e9;
		if (mem >= 0)
			t->peak_memory_mb = (double)mem / (1 << 20);
	} else {
		t->cpu_seconds_used = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
		    (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
		t->peak_memory_mb = (double)ru->ru_maxrss / 1024;
	}
	if (sbx_store_path(r->s, r->m->sandbox_id, "layer", layer, sizeof layer, NULL) == 0 &&
	    (used = sbx_quota_used_mb(layer)) >= 0)
		t->disk_used_mb = used;
	if (r->have_cg && sbx_cgroup_oom_kills(&r->cg) > r->oom_before) {
		t->oom_killed = 1;
		if (t->kill_reason == NULL)
			t->kill_reason = strdup("memory");
	}
	if (r->pids_before >= 0 && pids > r->pids_before) {
		t->pids_limit_hits = pids - r->pids_before;
		/* gVisor's sandbox does not survive its pids limit. */
		if (r->p.kind == OCI_RUNSC && t->kill_reason == NULL &&
		    WIFEXITED(r->sv.wait_status) && WEXITSTATUS(r->sv.wait_status) == 128)
			t->kill_reason = strdup("pids");
	}
}

/* The socket the runtime's exec connects to with the terminal's master: in
 * the root's mount point's directory on the host (root's only; a path a
 * socket can have). */
static int
console_listen(struct oci_run *r, struct sbx_err *e)
{
	int fd;

	r->console.sun_family = AF_UNIX;
	if ((size_t)snprintf(r->console.sun_path, sizeof r->console.sun_path, "%s/tty-%ld",
	    r->p.mnt, (long)getpid()) >= sizeof r->console.sun_path)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "sbx-run -t: %s: path too long", r->p.mnt);
	unlink(r->console.sun_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "socket");
	if (bind(fd, (struct sockaddr *)&r->console, sizeof r->console) == -1 ||
	    chmod(r->console.sun_path, 0600) == -1 || listen(fd, 1) == -1) {
		sbx_err_sys(e, SBX_EX_RUNFAIL, "sbx-run -t: %s", r->console.sun_path);
		close(fd);
		unlink(r->console.sun_path);
		return -1;
	}
	r->console_fd = fd;
	return 0;
}

/*
 * The terminal's master from the runtime's exec, which connects once it has
 * made the terminal; the runtime gone first (it failed) is no terminal, and
 * its own error is what the run reports.
 */
static int
console_master(struct oci_run *r, struct sbx_err *e)
{
	struct pollfd pf[2] = { { r->console_fd, POLLIN, 0 }, { r->sv.pidfd, POLLIN, 0 } };
	char name[256];
	int c, fd = -1, n;

	while ((n = poll(pf, 2, 60000)) == -1 && errno == EINTR)
		;
	if (n <= 0 || !(pf[0].revents & POLLIN))
		return n == 0 ? sbx_err_set(e, SBX_EX_RUNFAIL, "sbx-run -t: %s exec made no "
		    "terminal in 60 s", oci_kind_name(r->p.kind)) : 0;
	if ((c = accept4(r->console_fd, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "sbx-run -t: accept");
	if (sbx_fd_recv(c, &fd, 1, name, sizeof name) <= 0)
		fd = -1;
	close(c);
	if (fd == -1)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "sbx-run -t: no terminal came from %s exec",
		    oci_kind_name(r->p.kind));
	r->sv.master = fd;
	return 0;
}

static void
console_close(struct oci_run *r)
{
	if (r->console_fd == -1)
		return;
	close(r->console_fd);
	r->console_fd = -1;
	unlink(r->console.sun_path);
}

static int
run_start(struct oci_run *r, const struct sbx_exec *x, struct sbx_exec_result *res,
    struct sbx_err *e)
{
	char user[64], *pool = NULL;
	const char **argv, **env;
	unsigned uid = 0, gid = 0;
	size_t n_env = 0;
	pid_t pid;

	sbx_manifest_user_parse(x->user ? x->user : r->m->user, &uid, &gid);
	snprintf(user, sizeof user, "%u:%u", uid, gid);
	if ((env = sbx_tier_env(r->m, x, uid, &n_env, &pool)) == NULL)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "out of memory");
	if ((argv = exec_argv(r, x, env, n_env, user)) == NULL) {
		free(env);
		free(pool);
		return sbx_err_set(e, SBX_EX_RUNFAIL, "out of memory (or over %d arguments)",
		    MAX_ARGS);
	}
	if (x->starting != NULL)
		x->starting(x->starting_ctx);
	sbx_supervise_start(&r->sv, &res->trace);
	pid = spawn(&r->p, x, argv);
	free(argv);
	free(env);
	free(pool);
	if (pid == -1)
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "fork");
	return sbx_supervise_adopt(&r->sv, pid, e);
}

int
oci_exec(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_exec *x,
    struct sbx_exec_result *res, struct sbx_err *e)
{
	struct sbx_relay_counts net_before = { NULL, 0 };
	struct oci_run r;
	struct sbx_cg_host h;
	long long cpu_before = -1, mem;
	double t;
	int ret = -1;

	sbx_trace_init(&res->trace);
	memset(&r, 0, sizeof r);
	r.s = s;
	r.m = m;
	r.console_fd = -1;
	if (oci_paths(s, m, &r.p, e) == -1)
		return -1;
	/* runsc (2022)'s exec makes no terminal from its flags (only for a
	 * process.json, which did not give one here). */
	if (x->tty && r.p.kind == OCI_RUNSC)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "sbx-run -t: runtime %s gives a run no "
		    "terminal (runc and crun do)", m->runtime);
	if (sbx_rt_int(m, "pid") <= 0 || !sbx_proc_alive((pid_t)sbx_rt_int(m, "pid"),
	    (unsigned long long)sbx_rt_int(m, "start_ticks")))
		return sbx_err_set(e, SBX_EX_RUNFAIL, "the sandbox's container is gone (run sbx-gc)");
	snprintf(r.pidfile, sizeof r.pidfile, "%s/exec-%ld.pid", r.p.bundle, (long)getpid());
	snprintf(r.log, sizeof r.log, "%s/exec-%ld.log", r.p.bundle, (long)getpid());
	unlink(r.pidfile);
	unlink(r.log);
	if (sbx_rt_str(m, "cgroup") != NULL && sbx_cgroup_host(&h, NULL) == 0 &&
	    sbx_cgroup_from_spec(&h, sbx_rt_str(m, "cgroup"), &r.cg, NULL) == 0) {
		r.have_cg = 1;
		r.oom_before = sbx_cgroup_oom_kills(&r.cg);
	}
	r.pids_before = pids_refused(&r);
	sbx_supervise_init(&r.sv);
	r.sv.timeout_s = x->timeout_s;
	r.sv.kill_after_s = x->kill_after_s;
	r.sv.lifetime_s = x->lifetime_s;
	if (x->ctl > 2)
		r.sv.ctl = x->ctl;
	if (m->expires_at && sbx_time_parse(m->expires_at, &t) == 0)
		r.sv.expires_at = t;
	r.sv.ctx = &r;
	r.sv.kill_all = run_kill_all;
	r.sv.failed = run_failed;
	if (r.p.kind == OCI_RUNSC)
		runsc_stats(&r, &cpu_before, &mem);
	/* An allow-list's counters, and its refusals meanwhile the run's. */
	if (sbx_net_wanted(m) && sbx_net_counts(s, m, 1, &net_before, e) == -1)
		return -1;
	if (x->tty && r.p.kind == OCI_CRUN && console_listen(&r, e) == -1)
		goto out;
	if (run_start(&r, x, res, e) == 0) {
		sbx_supervise_catch(&r.sv);
		if (r.console_fd != -1 && console_master(&r, e) == -1) {
			kill(r.sv.pid, SIGKILL);
			run_kill_all(&r);
			waitpid(r.sv.pid, NULL, 0);
			sbx_supervise_release(&r.sv);
			close(r.sv.pidfd);
			goto out;
		}
		console_close(&r);
		ret = sbx_supervise_run(&r.sv, &res->status, &res->trace, e);
		run_figures(&r, cpu_before, &res->trace);
		/* runsc exec lost the sandbox the kernel killed: the command was
		 * killed with it, as SIGKILL. */
		if (r.p.kind == OCI_RUNSC && res->status == 128 && (res->trace.oom_killed ||
		    (res->trace.kill_reason && strcmp(res->trace.kill_reason, "pids") == 0))) {
			res->status = 128 + SIGKILL;
			res->trace.exit_code = 128 + SIGKILL;
		}
		sbx_supervise_release(&r.sv);
		close(r.sv.pidfd);
		if (r.sv.master != -1)
			close(r.sv.master);
	}
out:
	console_close(&r);
	if (sbx_net_wanted(m)) {
		struct sbx_relay_counts after;

		if (sbx_net_counts(s, m, -1, &after, NULL) == 0) {
			sbx_net_trace(&net_before, &after, &res->trace);
			sbx_relay_counts_free(&after);
		}
		sbx_relay_counts_free(&net_before);
	}
	unlink(r.pidfile);
	unlink(r.log);
	if (ret == -1 && res->status == 0)
		res->status = SBX_EX_RUNFAIL;
	return ret;
}
