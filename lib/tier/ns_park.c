/* SPDX-License-Identifier: MIT */
/*
 * A runner's parked entry into a namespace sandbox: see ns.h.
 *
 * The entry is a process of the worker's that has joined the sandbox's
 * user, mount, UTS, IPC, cgroup and network namespaces, and only set its
 * children's PID namespace to the sandbox's: itself it stays in the host's,
 * where nothing inside can name it (no PID there, so no signal, ptrace or
 * /proc), and it is not dumpable. It has dropped to the manifest's user and
 * confined itself as a command would (limits, capabilities, no_new_privs,
 * Landlock, the seccomp program last): a run then costs it one clone, whose
 * child inherits all of that, joins the run's cgroup, takes its stdio,
 * umask, working directory and environment, waits for the go-ahead and
 * execs. CLONE_PARENT makes the command the worker's child, which waits for
 * it as for one it forked. The channel is a socket
 * pair made in the host's network namespace, with no name; the entry ends
 * when the worker does (end of file) or the sandbox's init does (its
 * pidfd), and holds ns.park.lock shared meanwhile, which destroy waits for
 * (sbx_ns_park_wait).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "fdpass.h"
#include "id.h"
#include "ns.h"
#include "pty.h"
#include "sha256.h"
#include "util.h"

#define PARK_LOCK "ns.park.lock"
#define PARK_MAGIC 0x6b726170u   /* "park" */
/* A request's bytes: argv and the environment, as the runner's request bounds them. */
#define PARK_MSG_MAX (256 * 1024)
/* stdio, the error pipe, the go-ahead, and the run's cgroup in each hierarchy. */
#define PARK_FDS (5 + SBX_CG_NCTRL)

struct park_req {
	uint32_t magic, argc, envc, has_workdir, umask, ncg;
};

struct park_reply {
	uint32_t magic;
	int32_t pid;             /* the command's, in the host's PID namespace; -errno */
	struct sbx_err e;        /* with pid 0: why the entry could not be made */
};

static void
put_str(struct sbx_sha256 *c, const char *v)
{
	sbx_sha256_update(c, v ? v : "", strlen(v ? v : "") + 1);
}

void
sbx_ns_park_key(const struct sbx_manifest *m, unsigned char key[32])
{
	const struct sbx_security *sec = &m->security;
	struct sbx_sha256 c;
	char num[96];
	size_t i;

	sbx_sha256_init(&c);
	snprintf(num, sizeof num, "%lld %lld %d %d %d %d %d %u", sbx_rt_int(m, "pid"),
	    sbx_rt_int(m, "start_ticks"), sec->no_new_privileges, sec->landlock,
	    sec->landlock_network, m->read_only_root, strcmp(m->network_policy, "host") == 0,
	    sbx_seccomp_guard_flags(m));
	put_str(&c, num);
	put_str(&c, m->user);
	put_str(&c, sec->seccomp);
	for (i = 0; i < sec->capabilities.n; i++)
		put_str(&c, sec->capabilities.v[i]);
	put_str(&c, "\1");
	for (i = 0; i < m->n_mounts; i++) {
		put_str(&c, m->mounts[i].guest);
		put_str(&c, m->mounts[i].mode);
	}
	put_str(&c, "\1");
	for (i = 0; i < m->n_tmpfs; i++)
		put_str(&c, m->tmpfs[i].guest);
	put_str(&c, "\1");
	for (i = 0; i < m->allowed_egress.n; i++)
		put_str(&c, m->allowed_egress.v[i]);
	put_str(&c, "\1");
	for (i = 0; i < sec->bind_ports.n; i++)
		put_str(&c, sec->bind_ports.v[i]);
	sbx_sha256_final(&c, key);
}

int
sbx_ns_park_can(const struct sbx_manifest *m)
{
	/* A policy file's profile may refuse what the entry does after it
	 * (poll, recvmsg, clone, setsid, chdir): those runs fork their own. A
	 * rootless sandbox's runs need a relay process of their own. */
	return !sbx_rt_bool(m, "rootless") && m->security.seccomp[0] != '/';
}

void
sbx_ns_park_drop(struct sbx_exec_ahead *a)
{
	if (!a->have_park)
		return;
	close(a->park_fd);
	kill(a->park_pid, SIGKILL);
	while (waitpid(a->park_pid, NULL, 0) == -1 && errno == EINTR)
		;
	a->have_park = 0;
}

/* Is the entry still there (its end of the channel open)? */
static int
park_alive(const struct sbx_exec_ahead *a)
{
	struct pollfd pf = { a->park_fd, 0, 0 };

	return poll(&pf, 1, 0) == 0;
}

int
sbx_ns_park_kept(const struct sbx_manifest *m, struct sbx_exec_ahead *a)
{
	unsigned char key[32];

	if (!a->have_park)
		return 0;
	sbx_ns_park_key(m, key);
	if (memcmp(key, a->park_key, sizeof key) != 0 || !park_alive(a)) {
		sbx_ns_park_drop(a);
		return 0;
	}
	return 1;
}

int
sbx_ns_park_fits(const struct sbx_manifest *m, const struct sbx_exec *x,
    struct sbx_exec_ahead *a)
{
	return a != NULL && x->has_umask && !x->tty && x->user == NULL && x->stdio != NULL &&
	    !sbx_pty_stray(x->stdio) && sbx_ns_park_can(m) && sbx_ns_park_kept(m, a);
}

/* Close every descriptor but keep[0..n) (ascending). */
static void
close_but(const int *keep, size_t n)
{
	unsigned from = 3;
	size_t i;

	for (i = 0; i < n; i++) {
		if ((unsigned)keep[i] > from)
			syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

static int
int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The command's process, the entry's clone: it becomes the command. */
static void __attribute__((noreturn))
park_child(char **argv, char **env, const char *workdir, mode_t mask, const int *fds,
    size_t ncg)
{
	struct sbx_ns_child_err ce = { 0 };
	extern char **environ;
	int errfd = fds[3], gofd = fds[4], i;
	size_t k;
	ssize_t n;
	char c;

	ce.e.code = SBX_EX_RUNFAIL;
	for (i = 0; i < 3; i++)
		if (dup2(fds[i], i) == -1) {
			sbx_err_sys(&ce.e, SBX_EX_RUNFAIL, "the command's stdio");
			goto fail;
		}
	/* Itself (another's PID written there waits, now and then, for an RCU
	 * grace period: milliseconds). */
	for (k = 0; k < ncg; k++)
		if (sbx_write_all(fds[5 + k], "0", 1) == -1) {
			sbx_err_sys(&ce.e, SBX_EX_RUNFAIL, "join the run's cgroup");
			goto fail;
		}
	umask(mask);
	/* A session of its own, as a forked run's: no terminal of the caller's. */
	if (setsid() == -1) {
		sbx_err_sys(&ce.e, SBX_EX_RUNFAIL, "setsid");
		goto fail;
	}
	if (workdir != NULL && chdir(workdir) == -1) {
		sbx_err_sys(&ce.e, SBX_EX_RUNFAIL, "workdir %s", workdir);
		goto fail;
	}
	while ((n = read(gofd, &c, 1)) == -1 && errno == EINTR)
		;
	if (n != 1) {
		sbx_err_set(&ce.e, SBX_EX_RUNFAIL, "the run was called off before it started");
		goto fail;
	}
	/* Nothing but stdio crosses: the channel, the lock and the rest close
	 * with the exec. */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) == -1) {
		sbx_err_sys(&ce.e, SBX_EX_RUNFAIL, "close the caller's descriptors");
		goto fail;
	}
	environ = env;
	execvp(argv[0], argv);
	ce.stage = 1;
	ce.err = errno;
	snprintf(ce.e.msg, sizeof ce.e.msg, "%s: %s", argv[0], strerror(errno));
	ce.e.code = errno == ENOENT ? SBX_EX_NOTFOUND : SBX_EX_NOEXEC;
fail:
	sbx_write_all(errfd, &ce, sizeof ce);
	_exit(ce.e.code);
}

/* The strings of a request, n of them from *at, into v. */
static int
take_strs(char *buf, size_t len, size_t *at, char **v, size_t n)
{
	size_t i;
	char *end;

	for (i = 0; i < n; i++) {
		if (*at >= len || (end = memchr(buf + *at, '\0', len - *at)) == NULL)
			return -1;
		v[i] = buf + *at;
		*at = (size_t)(end - buf) + 1;
	}
	return 0;
}

/* One request: the command cloned, its PID (or why not) sent back. */
static void
park_serve(int sock, char *buf)
{
	struct park_reply rp = { PARK_MAGIC, 0, { 0, "" } };
	const struct park_req *rq = (const struct park_req *)(void *)buf;
	int fds[PARK_FDS];
	char **v = NULL, *workdir = NULL;
	size_t nfd = 0, at = sizeof *rq, i;
	ssize_t n;
	pid_t pid;

	if ((n = sbx_fd_recv_upto(sock, fds, PARK_FDS, &nfd, buf, PARK_MSG_MAX)) == 0)
		_exit(0);
	rp.pid = -EPROTO;
	if (n < (ssize_t)sizeof *rq || rq->magic != PARK_MAGIC || rq->umask > 0777 ||
	    rq->ncg > SBX_CG_NCTRL || nfd != 5 + rq->ncg ||
	    rq->argc == 0 || rq->argc > PARK_MSG_MAX / 2 ||
	    rq->envc > PARK_MSG_MAX / 2 ||
	    (v = calloc((size_t)rq->argc + rq->envc + 2, sizeof *v)) == NULL ||
	    take_strs(buf, (size_t)n, &at, v, rq->argc) == -1 ||
	    take_strs(buf, (size_t)n, &at, v + rq->argc + 1, rq->envc) == -1 ||
	    (rq->has_workdir && take_strs(buf, (size_t)n, &at, &workdir, 1) == -1))
		goto out;
	/* argv and env end with calloc's NULLs. The worker's child, in the
	 * sandbox's PID namespace (ours for children). */
	pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == 0)
		park_child(v, v + rq->argc + 1, workdir, (mode_t)rq->umask, fds, rq->ncg);
	rp.pid = pid == -1 ? -errno : pid;
out:
	(void)send(sock, &rp, sizeof rp, MSG_NOSIGNAL);
	for (i = 0; i < nfd; i++)
		close(fds[i]);
	free(v);
}

/* The entry's process: set up, say so, serve until the worker or init ends. */
static void __attribute__((noreturn))
park_main(const struct sbx_manifest *m, int sock, int initfd, int nsflags,
    const struct sbx_seccomp_prog *prog, const char *lock)
{
	struct park_reply rp = { PARK_MAGIC, 0, { 0, "" } };
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	char title[SBX_ID_MAX + 16], *buf;
	sigset_t none;
	unsigned uid, gid;
	int keep[3], lk, sig;

	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	snprintf(title, sizeof title, "sbx-park %s", m->sandbox_id);
	sbx_proc_title(title);
	/* Held until we exit: destroy waits for it once init is gone. */
	if ((lk = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1 ||
	    flock(lk, LOCK_SH) == -1) {
		sbx_err_sys(&rp.e, SBX_EX_RUNFAIL, "%s", lock);
		goto fail;
	}
	/* 0, 1 and 2 taken, so that what requests bring lands above them. */
	for (sig = 0; sig < 3; sig++)
		if (fcntl(sig, F_GETFD) == -1 && open("/dev/null", O_RDWR) != sig) {
			sbx_err_sys(&rp.e, SBX_EX_RUNFAIL, "/dev/null");
			goto fail;
		}
	keep[0] = sock;
	keep[1] = initfd;
	keep[2] = lk;
	qsort(keep, 3, sizeof *keep, int_cmp);
	close_but(keep, 3);
	if ((buf = malloc(PARK_MSG_MAX)) == NULL) {
		sbx_err_set(&rp.e, SBX_EX_RUNFAIL, "out of memory");
		goto fail;
	}
	if (sbx_ns_run_oom(&rp.e) == -1)
		goto fail;
	if (setns(initfd, nsflags | CLONE_NEWPID) == -1) {
		sbx_err_sys(&rp.e, SBX_EX_RUNFAIL, "join the sandbox's namespaces");
		goto fail;
	}
	if (chdir("/") == -1) {
		sbx_err_sys(&rp.e, SBX_EX_RUNFAIL, "chdir /");
		goto fail;
	}
	sbx_manifest_user_parse(m->user, &uid, &gid);
	if (sbx_ns_confine(m, uid, gid, NULL, prog, &rp.e) == -1)
		goto fail;
	rp.pid = 1;
	if (send(sock, &rp, sizeof rp, MSG_NOSIGNAL) == -1)
		_exit(1);
	for (;;) {
		struct pollfd pf[2] = { { sock, POLLIN, 0 }, { initfd, POLLIN, 0 } };

		if (poll(pf, 2, -1) == -1 && errno != EINTR)
			_exit(1);
		if (pf[1].revents || (pf[0].revents & (POLLHUP | POLLERR)))
			_exit(0);
		if (pf[0].revents & POLLIN)
			park_serve(sock, buf);
	}
fail:
	rp.pid = 0;
	(void)send(sock, &rp, sizeof rp, MSG_NOSIGNAL);
	_exit(1);
}

int
sbx_ns_park_make(const struct sbx_store *s, const struct sbx_manifest *m, int initfd,
    int nsflags, const struct sbx_seccomp_prog *prog, const unsigned char key[32],
    struct sbx_exec_ahead *a, struct sbx_err *e)
{
	struct park_reply rp;
	char lock[1200];
	int sp[2];
	pid_t pid;
	ssize_t n;

	if (sbx_store_path(s, m->sandbox_id, PARK_LOCK, lock, sizeof lock, e) == -1)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1)
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "socketpair");
	if ((pid = fork()) == 0) {
		close(sp[0]);
		park_main(m, sp[1], initfd, nsflags, prog, lock);
	}
	close(sp[1]);
	if (pid == -1) {
		close(sp[0]);
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "fork");
	}
	a->have_park = 1;
	a->park_fd = sp[0];
	a->park_pid = pid;
	memcpy(a->park_key, key, sizeof a->park_key);
	while ((n = recv(sp[0], &rp, sizeof rp, 0)) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof rp || rp.magic != PARK_MAGIC || rp.pid != 1) {
		if (n == (ssize_t)sizeof rp && rp.magic == PARK_MAGIC)
			*e = rp.e;
		else
			sbx_err_set(e, SBX_EX_RUNFAIL, "the parked entry ended while it was made");
		sbx_ns_park_drop(a);
		return -1;
	}
	return 0;
}

pid_t
sbx_ns_park_start(struct sbx_exec_ahead *a, char *const *argv, char *const *env,
    const char *workdir, mode_t mask, const int stdio[3], const int cgfds[SBX_CG_NCTRL],
    int errfd, int gofd)
{
	struct park_req *rq;
	struct park_reply rp;
	int fds[PARK_FDS], i;
	size_t at = sizeof *rq, nfd = 5, len;
	char *buf;
	ssize_t n;

	if ((buf = malloc(PARK_MSG_MAX)) == NULL)
		return -1;
	rq = (struct park_req *)(void *)buf;
	memset(rq, 0, sizeof *rq);
	rq->magic = PARK_MAGIC;
	rq->umask = (uint32_t)mask;
#define PUT(str) do { len = strlen(str) + 1; if (len > PARK_MSG_MAX - at) goto nope; \
	memcpy(buf + at, (str), len); at += len; } while (0)
	for (; argv[rq->argc] != NULL; rq->argc++)
		PUT(argv[rq->argc]);
	for (; env[rq->envc] != NULL; rq->envc++)
		PUT(env[rq->envc]);
	if (workdir != NULL) {
		rq->has_workdir = 1;
		PUT(workdir);
	}
#undef PUT
	memcpy(fds, stdio, 3 * sizeof *fds);
	fds[3] = errfd;
	fds[4] = gofd;
	for (i = 0; i < SBX_CG_NCTRL; i++)
		if (cgfds[i] != -1)
			fds[nfd++] = cgfds[i];
	rq->ncg = (uint32_t)(nfd - 5);
	/* One the socket cannot carry is run the other way; the entry stays. */
	if (sbx_fd_send(a->park_fd, fds, nfd, buf, at) == -1) {
		if (errno == EMSGSIZE || errno == ENOBUFS)
			goto nope;
		goto gone;
	}
	while ((n = recv(a->park_fd, &rp, sizeof rp, 0)) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof rp || rp.magic != PARK_MAGIC || rp.pid <= 0)
		goto gone;
	free(buf);
	return rp.pid;
gone:
	/* Whatever it started, if anything, waits for a go-ahead that does not
	 * come (the caller's end closes) and reports to no one. */
	sbx_ns_park_drop(a);
nope:
	free(buf);
	return -1;
}

void
sbx_ns_park_wait(const struct sbx_store *s, const char *id)
{
	char lock[1200];
	int fd, i;

	if (sbx_store_path(s, id, PARK_LOCK, lock, sizeof lock, NULL) == -1 ||
	    (fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
	for (i = 0; i < 2000 && flock(fd, LOCK_EX | LOCK_NB) == -1 && errno == EWOULDBLOCK; i++)
		usleep(1000);
	close(fd);
}
