/* SPDX-License-Identifier: MIT */
/* A sandbox's runner, its manager and workers: see runner.h. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "cgroup.h"
#include "fdpass.h"
#include "id.h"
#include "runcall.h"
#include "runner.h"
#include "runner_proto.h"
#include "sandbox.h"
#include "util.h"

/* Runs at once, each a worker's; a client past them waits for one to end. */
#define RUNNER_WORKERS_MAX 128
/* Workers kept waiting once done: runs one after another fork none. */
#define RUNNER_IDLE_KEEP 2

struct runner {
	const struct sbx_store *s;
	char id[SBX_ID_MAX + 1];
	int dfd;                 /* the sandbox's state directory (O_PATH) */
	int lfd;                 /* the listening socket (non-blocking) */
	int lk;                  /* RUNNER_LOCK, held shared */
	int need[2];             /* workers to the manager: one more is wanted */
	int alive[2];            /* the manager's life: its end reads EOF to the workers */
	atomic_int *idle;        /* shared: workers waiting for a client */
	unsigned char digest[32];
	/* The cgroups the runner started in, before its @watchdog one. */
	struct sbx_cg_host h;
	int have_h;
};

/* The socket, bound in the sandbox's directory (the state root's owner's
 * alone) and listening. */
static int
runner_listen(struct runner *rn)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[1200];
	mode_t old;
	int r;

	if (sbx_store_path(rn->s, rn->id, NULL, dir, sizeof dir, NULL) == -1 ||
	    (rn->dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (rn->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1)
		return -1;
	snprintf(sun.sun_path, sizeof sun.sun_path, "/proc/self/fd/%d/" RUNNER_SOCK, rn->dfd);
	/* Ours and our workers' (they inherit it) until we have all exited. */
	if ((rn->lk = openat(rn->dfd, RUNNER_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) == -1 || flock(rn->lk, LOCK_SH) == -1)
		return -1;
	(void)unlinkat(rn->dfd, RUNNER_SOCK, 0);
	old = umask(077);
	r = bind(rn->lfd, (struct sockaddr *)&sun, sizeof sun);
	umask(old);
	return r == -1 ? -1 : listen(rn->lfd, 64);
}

/*
 * Is the peer a process of the host's own user and mount namespaces, run
 * by our user? Nothing inside a sandbox is: not in a namespace tier's (its
 * own user namespace), not in a container's (its own mount namespace).
 */
static int
peer_ok(int c)
{
	static const char *const ns[] = { "user", "mnt" };
	struct ucred cr;
	socklen_t len = sizeof cr;
	struct stat theirs, ours;
	char p[64];
	size_t i;

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1 || cr.uid != geteuid() ||
	    cr.pid <= 0)
		return 0;
	for (i = 0; i < SBX_ARRAY_LEN(ns); i++) {
		snprintf(p, sizeof p, "/proc/%ld/ns/%s", (long)cr.pid, ns[i]);
		if (stat(p, &theirs) == -1)
			return 0;
		snprintf(p, sizeof p, "/proc/self/ns/%s", ns[i]);
		if (stat(p, &ours) == -1 || theirs.st_ino != ours.st_ino ||
		    theirs.st_dev != ours.st_dev)
			return 0;
	}
	return 1;
}

/* A reply of kind, with the run's outcome when it is a result. */
static void
reply(int c, int kind, int r, const struct sbx_exec_result *res, const struct sbx_err *e)
{
	static char buf[RUNNER_MSG_MAX];
	struct runner_reply *rp = (struct runner_reply *)(void *)buf;
	const struct sbx_trace *t = &res->trace;
	size_t at = sizeof *rp, i;

	memset(rp, 0, sizeof *rp);
	rp->magic = RUNNER_MAGIC;
	rp->kind = kind;
	rp->r = r;
	rp->status = res->status;
	rp->code = r == -1 ? e->code : 0;
	rp->has_trace = t->start_time != NULL;
	rp->has_kill_reason = t->kill_reason != NULL;
	rp->oom_killed = t->oom_killed;
	rp->timed_out = t->timed_out;
	rp->elapsed_s = t->elapsed_s;
	rp->cpu_seconds_used = t->cpu_seconds_used;
	rp->peak_memory_mb = t->peak_memory_mb;
	rp->disk_written_mb = t->disk_written_mb;
	rp->disk_used_mb = t->disk_used_mb;
	rp->exit_code = t->exit_code;
	rp->signal = t->signal;
	rp->pids_limit_hits = t->pids_limit_hits;
	rp->egress_denied = t->egress_denied;
	rp->egress_sent_bytes = t->egress_sent_bytes;
	rp->egress_received_bytes = t->egress_received_bytes;
	(void)runner_put_str(buf, sizeof buf, &at, r == -1 ? e->msg : "");
	(void)runner_put_str(buf, sizeof buf, &at, t->start_time ? t->start_time : "");
	if (t->kill_reason != NULL)
		(void)runner_put_str(buf, sizeof buf, &at, t->kill_reason);
	/* Destinations past the message's room are left out of the client's copy. */
	for (i = 0; i < t->egress_destinations.n &&
	    runner_put_str(buf, sizeof buf, &at, t->egress_destinations.v[i]) == 0; i++)
		rp->n_dest++;
	rp->len = (uint32_t)(at - sizeof *rp);
	(void)send(c, buf, at, MSG_NOSIGNAL);
}

/* One run's client and whether it has its answer. */
struct served {
	int c, replied;
};

static void
ended(void *ctx, int r, const struct sbx_exec_result *res, const struct sbx_err *e)
{
	struct served *sv = ctx;

	reply(sv->c, RUNNER_RESULT, r, res, e);
	sv->replied = 1;
}

/* The request in buf (n bytes) as x (argv and env point into buf); -1 when
 * it is not one this build sends. */
static int
parse_request(char *buf, size_t n, struct sbx_exec *x, char ***argv, const char **corr,
    mode_t *mask)
{
	struct runner_req *rq = (struct runner_req *)(void *)buf;
	size_t at = sizeof *rq, i;
	unsigned u, g;

	if (n < sizeof *rq || rq->magic != RUNNER_MAGIC || rq->version != RUNNER_VERSION ||
	    rq->len != n - sizeof *rq || rq->argc == 0 || rq->argc > RUNNER_ARGS_MAX ||
	    rq->envc > RUNNER_ARGS_MAX || !isfinite(rq->timeout_s) || rq->timeout_s < 0 ||
	    !isfinite(rq->kill_after_s) || rq->kill_after_s < 0 || rq->umask > 0777 ||
	    (*argv = calloc(rq->argc + rq->envc + 2, sizeof **argv)) == NULL)
		return -1;
	for (i = 0; i < rq->argc + rq->envc; i++)
		if (((*argv)[i + (i >= rq->argc)] = runner_next_str(buf, n, &at)) == NULL)
			return -1;
	x->argv = *argv;
	x->env = *argv + rq->argc + 1;
	x->n_env = rq->envc;
	for (i = 0; i < x->n_env; i++)
		if (strchr(x->env[i], '=') == NULL || x->env[i][0] == '=')
			return -1;
	if (((rq->flags & RUNNER_REQ_WORKDIR) &&
	    ((x->workdir = runner_next_str(buf, n, &at)) == NULL || x->workdir[0] != '/')) ||
	    ((rq->flags & RUNNER_REQ_USER) && ((x->user = runner_next_str(buf, n, &at)) == NULL ||
	    sbx_manifest_user_parse(x->user, &u, &g) == -1)) ||
	    (*corr = runner_next_str(buf, n, &at)) == NULL || at != n)
		return -1;
	x->timeout_s = rq->timeout_s;
	x->kill_after_s = rq->kill_after_s;
	*mask = (mode_t)rq->umask;
	return 0;
}

/* One client: its request read and run, its answer sent. */
static void
serve(struct runner *rn, int c, struct sbx_exec_ahead *ahead)
{
	static char buf[RUNNER_MSG_MAX];
	struct sbx_exec x = { 0 };
	struct sbx_exec_result res;
	struct sbx_err e = { 0 };
	struct served sv = { c, 0 };
	const struct runner_req *rq = (const struct runner_req *)(void *)buf;
	char **argv = NULL;
	const char *corr;
	int fds[3] = { -1, -1, -1 }, i, r;
	ssize_t n;
	mode_t mask, old;

	sbx_trace_init(&res.trace);
	res.status = SBX_EX_RUNFAIL;
	/* Read first, so that a declined client has its request taken and reads
	 * the answer (the descriptors it sent are closed unused). */
	n = sbx_fd_recv(c, fds, 3, buf, sizeof buf);
	if (n <= 0 || fds[2] == -1 ||
	    parse_request(buf, (size_t)n, &x, &argv, &corr, &mask) == -1)
		goto out;
	/* Another client, or another environment, runs the command itself,
	 * with what it can do itself. */
	if (!peer_ok(c) || memcmp(rq->env_digest, rn->digest, sizeof rn->digest) != 0) {
		reply(c, RUNNER_DECLINE, 0, &res, &e);
		goto out;
	}
	x.stdio = fds;
	x.ctl = c;
	x.in_runner = 1;
	x.has_umask = 1;
	x.umask = mask;
	x.ended = ended;
	x.ended_ctx = &sv;
	x.ahead = ahead;
	sbx_audit_set_correlation(corr);
	old = umask(mask);
	r = sbx_sandbox_run(rn->s, rn->id, &x, &res, &e);
	umask(old);
	if (!sv.replied)
		reply(c, RUNNER_RESULT, r, &res, &e);
out:
	for (i = 0; i < 3; i++)
		if (fds[i] != -1)
			close(fds[i]);
	sbx_trace_free(&res.trace);
	free(argv);
}

/* Back to the cgroups the runner started in (as read before it entered
 * @watchdog: read now, the host's layout would name that), and the state
 * root's group removed when this was its last process. */
static void
leave_cgroup(const struct runner *rn)
{
	if (rn->have_h && sbx_cgroup_return(&rn->h) == 0)
		sbx_cgroup_remove_group(&rn->h, rn->s->group, 0);
}

/* The next client, -1 once the manager is gone (its sandbox is being
 * destroyed, or was): then this worker ends; -2 when ms (not -1) passed
 * without one. */
static int
next_client(struct runner *rn, int ms)
{
	int c, n;

	for (;;) {
		struct pollfd pf[2] = { { rn->lfd, POLLIN, 0 }, { rn->alive[0], POLLIN, 0 } };

		if ((n = poll(pf, 2, ms)) == -1 && errno != EINTR)
			return -1;
		if (n == 0)
			return -2;
		if (pf[1].revents)
			return -1;
		/* Another worker may have taken it: then wait again. */
		if (pf[0].revents &&
		    (c = accept4(rn->lfd, NULL, NULL, SOCK_CLOEXEC)) != -1)
			return c;
	}
}

/*
 * A warm pool's member has the time: the second worker, which its
 * claimer's first run would have the manager fork beside it, is asked for
 * now (once), while it waits.
 */
static void
pool_spare(struct runner *rn, const struct sbx_exec_ahead *ahead, int *asked)
{
	if (!ahead->pooled || *asked || atomic_load(rn->idle) >= RUNNER_IDLE_KEEP)
		return;
	(void)!write(rn->need[1], "n", 1);
	*asked = 1;
}

/*
 * A worker: one client at a time; the one that leaves no worker waiting
 * asks the manager for the next, and one that finds another waiting when
 * it is done ends. A run under way when the manager is gone still gets its
 * answer (the sandbox's end ends its command).
 */
static void __attribute__((noreturn))
worker(struct runner *rn)
{
	struct sbx_exec_ahead ahead = { 0 };
	int c, ms = -1, spare = 0;

	close(rn->need[0]);
	close(rn->alive[1]);
	/* The next run's preparation, made while we wait for it; a sandbox still
	 * being made (the first worker starts before its state is saved ready)
	 * is looked at again after 1, 2, 4... 128 ms. */
	if (sbx_sandbox_ahead(rn->s, rn->id, &ahead) == 1)
		ms = 1;
	atomic_fetch_add(rn->idle, 1);
	pool_spare(rn, &ahead, &spare);
	while ((c = next_client(rn, ms)) != -1) {
		if (c == -2) {
			ms = sbx_sandbox_ahead(rn->s, rn->id, &ahead) == 1 ? (ms < 128 ? ms * 2 : ms) : -1;
			pool_spare(rn, &ahead, &spare);
			continue;
		}
		if (atomic_fetch_sub(rn->idle, 1) == 1)
			(void)!write(rn->need[1], "n", 1);
		serve(rn, c, &ahead);
		close(c);
		if (atomic_fetch_add(rn->idle, 1) >= RUNNER_IDLE_KEEP) {
			atomic_fetch_sub(rn->idle, 1);
			break;
		}
		ms = sbx_sandbox_ahead(rn->s, rn->id, &ahead) == 1 ? 1 : -1;
	}
	sbx_sandbox_ahead(rn->s, NULL, &ahead);
	leave_cgroup(rn);
	_exit(0);
}

/* The manager: a worker waiting at all times (up to the bound), until the
 * sandbox's directory is gone. */
static int
manage(struct runner *rn)
{
	struct stat st;
	int workers = 0, want = 1;
	pid_t pid;
	char b[64];

	for (;;) {
		struct pollfd pf = { rn->need[0], POLLIN, 0 };

		while (waitpid(-1, NULL, WNOHANG) > 0)
			workers--;
		if (fstatat(rn->dfd, "", &st, AT_EMPTY_PATH) == -1 || st.st_nlink == 0)
			return 0;
		if (want && workers < RUNNER_WORKERS_MAX) {
			if ((pid = fork()) == 0)
				worker(rn);
			if (pid > 0)
				workers++;
			want = 0;
		}
		if (poll(&pf, 1, 1000) > 0 && read(rn->need[0], b, sizeof b) > 0)
			want = 1;
	}
}

/* The runner's process: detached from its starter, beside the watchdogs. */
static int
runner_main(const struct sbx_store *s, const char *id)
{
	struct runner rn = { .s = s, .dfd = -1, .lfd = -1, .lk = -1, .need = { -1, -1 },
		.alive = { -1, -1 } };
	struct sbx_cgroup cg;
	char title[SBX_ID_MAX + 16];
	int r;

	(void)sbx_detach(-1);
	snprintf(title, sizeof title, "sbx-runner %s", id);
	sbx_proc_title(title);
	if (!s->rootless && sbx_cgroup_host(&rn.h, NULL) == 0 &&
	    sbx_cgroup_create(&rn.h, s->group, "@watchdog", &cg, NULL) == 0 &&
	    sbx_cgroup_enter(&cg, 0, NULL) == 0)
		rn.have_h = 1;
	snprintf(rn.id, sizeof rn.id, "%s", id);
	sbx_runner_env_digest(rn.digest);
	if ((rn.idle = mmap(NULL, sizeof *rn.idle, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED ||
	    pipe2(rn.need, O_CLOEXEC) == -1 || pipe2(rn.alive, O_CLOEXEC) == -1 ||
	    runner_listen(&rn) == -1)
		return 1;
	atomic_store(rn.idle, 0);
	r = manage(&rn);
	leave_cgroup(&rn);
	return r;
}

int
sbx_runner_spawn(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e)
{
	pid_t pid;

	if ((pid = fork()) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "start the runner");
	if (pid == 0)
		_exit(runner_main(s, m->sandbox_id));
	m->rt.runner_pid = pid;
	m->rt.runner_start_ticks = (long long)sbx_proc_starttime(pid);
	return 0;
}
