/* SPDX-License-Identifier: MIT */
/* A run handed to the sandbox's runner: see runcall.h and runner.h. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "audit.h"
#include "fdpass.h"
#include "runcall.h"
#include "runner_proto.h"
#include "sha256.h"
#include "supervise.h"
#include "util.h"

static int
env_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
sbx_runner_env_digest(unsigned char out[32])
{
	extern char **environ;
	struct sbx_sha256 c;
	const char **v;
	size_t n = 0, i;

	for (i = 0; environ[i] != NULL; i++)
		;
	sbx_sha256_init(&c);
	if ((v = malloc((i + 1) * sizeof *v)) == NULL) {
		/* Unlike any environment's digest: such a client is declined. */
		sbx_sha256_update(&c, "\1", 1);
		sbx_sha256_final(&c, out);
		return;
	}
	for (i = 0; environ[i] != NULL; i++)
		if (strncmp(environ[i], "SBX_", 4) == 0 &&
		    strncmp(environ[i], "SBX_ROOT=", 9) != 0 &&
		    strncmp(environ[i], "SBX_CORRELATION_ID=", 19) != 0)
			v[n++] = environ[i];
	qsort(v, n, sizeof *v, env_cmp);
	for (i = 0; i < n; i++)
		sbx_sha256_update(&c, v[i], strlen(v[i]) + 1);
	sbx_sha256_final(&c, out);
	free(v);
}

int
sbx_runner_stop(const struct sbx_store *s, const struct sbx_manifest *m)
{
	char p[1200];
	int fd = -1;

	if (m->rt.runner_pid <= 0 || m->rt.runner_pid == getpid())
		return -1;
	/* Opened before the sandbox's directory goes. */
	if (sbx_store_path(s, m->sandbox_id, RUNNER_LOCK, p, sizeof p, NULL) == 0)
		fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	sbx_proc_signal_wait((pid_t)m->rt.runner_pid,
	    (unsigned long long)m->rt.runner_start_ticks, SIGKILL, 2000);
	return fd;
}

void
sbx_runner_wait(int token)
{
	int i;

	/* The runner's processes hold the lock until they exit (not until they
	 * are reaped, which is their adopter's business). A run's worker ends
	 * as soon as its answer is given. */
	for (i = 0; token != -1 && i < 500 && flock(token, LOCK_EX | LOCK_NB) == -1 &&
	    errno == EWOULDBLOCK; i++)
		usleep(10000);
	if (token != -1)
		close(token);
}

/* The request for x into buf; its length, or 0 when it does not fit. */
static size_t
request(const struct sbx_exec *x, char *buf, size_t size)
{
	struct runner_req *rq = (struct runner_req *)(void *)buf;
	size_t at = sizeof *rq, argc, i;
	mode_t mask;

	memset(rq, 0, sizeof *rq);
	for (argc = 0; x->argv[argc] != NULL; argc++)
		if (runner_put_str(buf, size, &at, x->argv[argc]) == -1)
			return 0;
	for (i = 0; i < x->n_env; i++)
		if (runner_put_str(buf, size, &at, x->env[i]) == -1)
			return 0;
	if ((x->workdir && runner_put_str(buf, size, &at, x->workdir) == -1) ||
	    (x->user && runner_put_str(buf, size, &at, x->user) == -1) ||
	    runner_put_str(buf, size, &at, sbx_audit_correlation()) == -1 ||
	    argc > RUNNER_ARGS_MAX || x->n_env > RUNNER_ARGS_MAX)
		return 0;
	mask = umask(077);
	umask(mask);
	rq->magic = RUNNER_MAGIC;
	rq->version = RUNNER_VERSION;
	rq->argc = (uint32_t)argc;
	rq->envc = (uint32_t)x->n_env;
	rq->flags = (x->workdir ? RUNNER_REQ_WORKDIR : 0) | (x->user ? RUNNER_REQ_USER : 0);
	rq->umask = (uint32_t)mask;
	rq->len = (uint32_t)(at - sizeof *rq);
	rq->timeout_s = x->timeout_s;
	rq->kill_after_s = x->kill_after_s;
	sbx_runner_env_digest(rq->env_digest);
	return at;
}

/* The runner's socket of sandbox id, connected; -1: none answers. */
static int
connect_runner(const struct sbx_store *s, const char *id)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[1200];
	int dfd, sock = -1;

	if (sbx_store_path(s, id, NULL, dir, sizeof dir, NULL) == -1 ||
	    (dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	/* Through the directory's descriptor: a long state root fits sun_path. */
	snprintf(sun.sun_path, sizeof sun.sun_path, "/proc/self/fd/%d/" RUNNER_SOCK, dfd);
	if ((sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) != -1 &&
	    connect(sock, (struct sockaddr *)&sun, sizeof sun) == -1) {
		close(sock);
		sock = -1;
	}
	close(dfd);
	return sock;
}

/*
 * The reply, read while the command runs; the caller's SIGINT, SIGTERM and
 * SIGHUP meanwhile go to the runner, one byte each. Its length, 0 when the
 * runner ended first, -1 on an error.
 */
static ssize_t
await_reply(int sock, char *buf, size_t size)
{
	struct sbx_supervise sv;
	sigset_t hold, old;
	ssize_t n;
	unsigned char b;
	int sig;

	sbx_supervise_init(&sv);
	sbx_supervise_catch(&sv);
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGHUP);
	sigprocmask(SIG_BLOCK, &hold, &old);
	for (;;) {
		struct pollfd pf = { sock, POLLIN, 0 };

		if ((sig = sbx_supervise_pending()) != 0) {
			b = (unsigned char)sig;
			(void)send(sock, &b, 1, MSG_NOSIGNAL);
		}
		/* Signals are let in only while waiting: none is missed between. */
		if (ppoll(&pf, 1, NULL, &old) == -1 && errno != EINTR) {
			n = -1;
			break;
		}
		if (pf.revents == 0)
			continue;
		while ((n = recv(sock, buf, size, 0)) == -1 && errno == EINTR)
			;
		break;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	sbx_supervise_release(&sv);
	return n;
}

/* The reply into res and e; -1 for one that does not parse. */
static int
take_reply(char *buf, size_t n, struct sbx_exec_result *res, struct sbx_err *e)
{
	const struct runner_reply *rp = (const struct runner_reply *)(void *)buf;
	struct sbx_trace *t = &res->trace;
	const char *msg, *start, *reason = NULL, *d;
	size_t at = sizeof *rp, i;

	if (n < sizeof *rp || rp->len != n - sizeof *rp || rp->n_dest > RUNNER_MSG_MAX ||
	    (msg = runner_next_str(buf, n, &at)) == NULL || (start = runner_next_str(buf, n, &at)) == NULL ||
	    (rp->has_kill_reason && (reason = runner_next_str(buf, n, &at)) == NULL))
		return -1;
	res->status = rp->status;
	if (rp->r == -1) {
		e->code = rp->code;
		snprintf(e->msg, sizeof e->msg, "%s", msg);
	}
	if (!rp->has_trace)
		return 0;
	t->start_time = start[0] ? strdup(start) : NULL;
	t->elapsed_s = rp->elapsed_s;
	t->cpu_seconds_used = rp->cpu_seconds_used;
	t->peak_memory_mb = rp->peak_memory_mb;
	t->disk_written_mb = rp->disk_written_mb;
	t->disk_used_mb = rp->disk_used_mb;
	t->exit_code = rp->exit_code;
	t->signal = rp->signal;
	t->pids_limit_hits = rp->pids_limit_hits;
	t->oom_killed = rp->oom_killed;
	t->timed_out = rp->timed_out;
	t->kill_reason = reason ? strdup(reason) : NULL;
	t->egress_denied = rp->egress_denied;
	t->egress_sent_bytes = rp->egress_sent_bytes;
	t->egress_received_bytes = rp->egress_received_bytes;
	for (i = 0; i < rp->n_dest; i++)
		if ((d = runner_next_str(buf, n, &at)) == NULL || sbx_strv_add(&t->egress_destinations, d) == -1)
			return -1;
	return 0;
}

int
sbx_runner_call(const struct sbx_store *s, const char *id, const struct sbx_exec *x,
    struct sbx_exec_result *res, struct sbx_err *e)
{
	static const int own[3] = { 0, 1, 2 };
	const struct runner_reply *rp;
	char *buf;
	size_t len;
	ssize_t n;
	int sock, r = 0;

	if (x->tty || x->in_runner || (sock = connect_runner(s, id)) == -1)
		return 0;
	if ((buf = malloc(RUNNER_MSG_MAX)) == NULL) {
		close(sock);
		return 0;
	}
	/* Not sent: nothing ran, and the caller runs it itself. */
	if ((len = request(x, buf, RUNNER_MSG_MAX)) == 0 ||
	    sbx_fd_send(sock, x->stdio ? x->stdio : own, 3, buf, len) == -1)
		goto out;
	n = await_reply(sock, buf, RUNNER_MSG_MAX);
	rp = (const struct runner_reply *)(void *)buf;
	if (n >= (ssize_t)sizeof *rp && rp->magic == RUNNER_MAGIC && rp->kind == RUNNER_DECLINE)
		goto out;
	res->status = SBX_EX_RUNFAIL;
	if (n <= 0 || rp->magic != RUNNER_MAGIC || rp->kind != RUNNER_RESULT) {
		r = sbx_err_set(e, SBX_EX_RUNFAIL, "the sandbox's runner ended before the run did "
		    "(whether the command ran is unknown)");
		goto out;
	}
	if (take_reply(buf, (size_t)n, res, e) == -1) {
		res->status = SBX_EX_RUNFAIL;
		r = sbx_err_set(e, SBX_EX_RUNFAIL, "the sandbox's runner answered what does not "
		    "parse");
		goto out;
	}
	r = rp->r == 0 ? 1 : -1;
out:
	free(buf);
	close(sock);
	return r;
}
