/* SPDX-License-Identifier: MIT */
/*
 * The host's side of the guest agent (vm_proto.h) and of QEMU's monitor.
 *
 * A run takes a free port (a lock file per port; with all four busy it
 * waits for one) and hands its session to a relay, a child process that
 * the supervision loop watches as the command: the relay passes the
 * caller's stdin to the guest and the command's output back, turns the
 * signals it is sent into the agent's (SIGKILL ends the relay, and with
 * its connection the agent kills the command), and ends as the command
 * did, its resource use in a pipe to the loop. With a terminal the relay
 * sits on the slave of a pty whose master the loop relays, so that
 * resizes reach it as SIGWINCH.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "net.h"
#include "pty.h"
#include "rootfs.h"
#include "supervise.h"
#include "tier_env.h"
#include "util.h"
#include "vm.h"

static int
unix_connect(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof a.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) == -1) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* One frame from fd within deadline: its type, the payload in a malloc'd
 * buffer (NUL-ended), or -1 (end, error, time). */
static int
recv_frame(int fd, double deadline, char **payload, uint32_t *len)
{
	struct vm_hdr h;
	struct pollfd pf = { fd, POLLIN, 0 };
	double left = deadline - sbx_monotonic();

	*payload = NULL;
	if (deadline > 0 && (left <= 0 || poll(&pf, 1, (int)(left * 1000) + 1) <= 0))
		return -1;
	if (vm_read_all(fd, &h, sizeof h) == -1 || h.len > VM_FRAME_MAX ||
	    (*payload = malloc(h.len + 1)) == NULL)
		return -1;
	/* a type that is no frame's (as an int, negative) is a broken stream */
	if ((h.len && vm_read_all(fd, *payload, h.len) == -1) || h.type > VM_TYPE_MAX) {
		free(*payload);
		*payload = NULL;
		return -1;
	}
	(*payload)[h.len] = '\0';
	*len = h.len;
	return (int)h.type;
}

/* A request sent with the HELLO, before its answer: one round trip to the
 * guest less (under TCG each costs some 20 ms). */
struct vm_req {
	uint32_t type;
	const void *payload;
	size_t len;
	const void *extra;
	size_t extra_len;
};

static int
agent_open(const struct vm_paths *p, int n, double deadline, const struct vm_req *req,
    char *release, size_t size, struct sbx_err *e)
{
	uint64_t nonce;
	uint32_t ver = VM_PROTO_VERSION, len;
	char hello[12], *reply;
	int fd = -1, type;

	if (getrandom(&nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce)
		return sbx_err_sys(e, SBX_EX_OSERR, "getrandom");
	/* QEMU makes the socket at its start; the guest answers once booted. */
	while ((fd = unix_connect(p->port[n])) == -1) {
		if ((errno != ENOENT && errno != ECONNREFUSED) || sbx_monotonic() > deadline)
			return sbx_err_sys(e, SBX_EX_OSERR, "the guest agent's port %s", p->port[n]);
		usleep(5000);
	}
	memcpy(hello, &nonce, sizeof nonce);
	memcpy(hello + sizeof nonce, &ver, sizeof ver);
	if (vm_send(fd, VM_HELLO, hello, sizeof hello, NULL, 0) == -1 || (req != NULL &&
	    vm_send(fd, req->type, req->payload, req->len, req->extra, req->extra_len) == -1)) {
		close(fd);
		return sbx_err_sys(e, SBX_EX_OSERR, "the guest agent's port %s", p->port[n]);
	}
	for (;;) {
		type = recv_frame(fd, deadline, &reply, &len);
		if (type == -1) {
			close(fd);
			return sbx_err_set(e, SBX_EX_OSERR, "the guest agent did not answer on %s",
			    p->port[n]);
		}
		/* Anything before our READY is what an earlier session left. */
		if (type == VM_READY && len >= sizeof hello && memcmp(reply, &nonce, sizeof nonce) == 0)
			break;
		free(reply);
	}
	memcpy(&ver, reply + sizeof nonce, sizeof ver);
	if (release != NULL)
		snprintf(release, size, "%s", reply + sizeof hello);
	free(reply);
	if (ver != VM_PROTO_VERSION) {
		close(fd);
		return sbx_err_set(e, SBX_EX_SOFTWARE, "the guest agent speaks version %u, sbx %u",
		    ver, VM_PROTO_VERSION);
	}
	return fd;
}

int
vm_agent_open(const struct vm_paths *p, int n, double deadline, char *release, size_t size,
    struct sbx_err *e)
{
	return agent_open(p, n, deadline, NULL, release, size, e);
}

/* Expect one frame of type want within 30 s; a VM_FAILED's message is the error. */
static int
expect(int fd, uint32_t want, void *out, size_t size, const char *what, struct sbx_err *e)
{
	char *payload;
	uint32_t len;
	int type = recv_frame(fd, sbx_monotonic() + 30, &payload, &len);

	if (type == VM_FAILED && len > sizeof(int32_t)) {
		sbx_err_set(e, SBX_EX_OSERR, "the guest agent: %s", payload + sizeof(int32_t));
		free(payload);
		return -1;
	}
	if (type != (int)want || len < size) {
		free(payload);
		return sbx_err_set(e, SBX_EX_OSERR, "the guest agent gave no %s", what);
	}
	if (size)
		memcpy(out, payload, size);
	free(payload);
	return 0;
}

/*
 * With a network of its own (the allow-list's, through the VM's tap), the
 * guest's NIC takes the sandbox's address, a MAC made from it (unique on
 * the sandbox's bridge, new in each clone); with any network or none,
 * /etc/hosts (its own name too) and resolv.conf as the namespace tier
 * writes them.
 */
static char *
setup_net(const struct sbx_manifest *m, struct vm_setup *st, size_t *len, struct sbx_err *e)
{
	char resolv[200], *hosts, *tail;
	int prefix = 0, r;

	*len = strlen(m->sandbox_id);
	if (vm_nic(m) == VM_NIC_NONE) {
		/* no NIC: the texts alone */
	} else if (vm_nic(m) == VM_NIC_USER) {
		/* QEMU's user-mode network: its fixed guest address and gateway */
		memcpy(st->addr4, (const uint8_t[]){ 10, 0, 2, 15 }, 4);
		memcpy(st->gw4, (const uint8_t[]){ 10, 0, 2, 2 }, 4);
		prefix = 24;
	} else if (sbx_net_guest(m, st->addr4, st->gw4, &prefix) == -1) {
		sbx_err_set(e, SBX_EX_SOFTWARE, "sandbox %s: no network lease recorded",
		    m->sandbox_id);
		return NULL;
	}
	if (vm_nic(m) != VM_NIC_NONE) {
		st->net = 1;
		st->prefix4 = (uint8_t)prefix;
		memcpy(st->mac, (const uint8_t[]){ 0x02, 0x73 }, 2);
		memcpy(st->mac + 2, st->addr4, 4);
	}
	/* IPv6 too, where the allow-list names IPv6 destinations */
	if (vm_nic(m) == VM_NIC_TAP) {
		if ((r = sbx_net_guest6(m, st->addr6, st->gw6, &prefix)) == -1) {
			sbx_err_set(e, SBX_EX_SOFTWARE, "sandbox %s: no IPv6 address for its "
			    "network lease", m->sandbox_id);
			return NULL;
		}
		st->net6 = (uint8_t)r;
		st->prefix6 = (uint8_t)(r ? prefix : 0);
	}
	sbx_rootfs_resolv_text(m, resolv, sizeof resolv);
	if ((hosts = sbx_rootfs_hosts_text(m)) == NULL ||
	    (tail = malloc(strlen(hosts) + strlen(resolv) + *len + 1)) == NULL) {
		free(hosts);
		sbx_err_oom(e);
		return NULL;
	}
	st->hosts_len = (uint32_t)strlen(hosts);
	st->resolv_len = (uint32_t)strlen(resolv);
	*len += st->hosts_len + st->resolv_len;
	snprintf(tail, *len + 1, "%s%s%s", hosts, resolv, m->sandbox_id);
	free(hosts);
	return tail;
}

void
vm_limits(const struct sbx_manifest *m, int64_t *pids, int64_t *memory)
{
	*pids = m->res.pids != SBX_UNSET_INT ? m->res.pids : 0;
	/* No memory.high: with no swap in the guest, its throttling holds a
	 * process at the soft limit for minutes instead of letting the hard
	 * limit kill it. The soft limit is the watchdog's warning, from the
	 * VMM's cgroup. */
	*memory = m->res.memory_mb != SBX_UNSET_INT ? (int64_t)m->res.memory_mb << 20 : 0;
}

int
vm_agent_setup(const struct vm_paths *p, const struct sbx_manifest *m, double deadline,
    char *release, size_t size, struct sbx_err *e)
{
	struct vm_setup st = { 0 };
	struct vm_req req = { VM_SETUP, &st, sizeof st, NULL, 0 };
	char *tail;
	int fd, r;

	vm_limits(m, &st.pids_max, &st.memory_max);
	if (getrandom(st.seed, sizeof st.seed, 0) != (ssize_t)sizeof st.seed)
		return sbx_err_sys(e, SBX_EX_OSERR, "getrandom");
	st.realtime_ns = (int64_t)(sbx_realtime() * 1e9);
	if ((tail = setup_net(m, &st, &req.extra_len, e)) == NULL)
		return -1;
	req.extra = tail;
	fd = agent_open(p, 0, deadline, &req, release, size, e);
	free(tail);
	if (fd == -1)
		return -1;
	r = expect(fd, VM_OK, NULL, 0, "answer to its setup", e);
	close(fd);
	return r;
}

/* The lock file at path, held (waited for). */
static int
lock_wait(const char *path, struct sbx_err *e)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", path);
	while (flock(fd, LOCK_EX) == -1)
		if (errno != EINTR) {
			close(fd);
			return sbx_err_sys(e, SBX_EX_OSERR, "%s", path);
		}
	return fd;
}

/* A free port's lock (held while its session lasts), or wait for one. */
static int
lock_port(const struct vm_paths *p, int *n, struct sbx_err *e)
{
	char path[1300];
	int i, fd;

	for (i = 0; i < VM_PORTS; i++) {
		snprintf(path, sizeof path, "%s.%d", p->lock, i);
		if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
			return sbx_err_sys(e, SBX_EX_OSERR, "%s", path);
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			*n = i;
			return fd;
		}
		close(fd);
	}
	*n = (int)(getpid() % VM_PORTS);
	snprintf(path, sizeof path, "%s.%d", p->lock, *n);
	return lock_wait(path, e);
}

/* The control port's lock (sbx's own requests take turns there). */
static int
lock_ctl(const struct vm_paths *p, int *n, struct sbx_err *e)
{
	char path[1300];

	*n = VM_CTL;
	snprintf(path, sizeof path, "%s.ctl", p->lock);
	return lock_wait(path, e);
}

int
vm_agent_stats(const struct vm_paths *p, struct vm_stats *st, struct sbx_err *e)
{
	struct vm_req req = { VM_STAT, NULL, 0, NULL, 0 };
	int n, lock, fd, r;

	if ((lock = lock_ctl(p, &n, e)) == -1)
		return -1;
	if ((fd = agent_open(p, n, sbx_monotonic() + 10, &req, NULL, 0, e)) == -1) {
		close(lock);
		return -1;
	}
	r = expect(fd, VM_STATS, st, sizeof *st, "figures", e);
	close(fd);
	close(lock);
	return r;
}

/* A line from QMP (its answers and events are one JSON object a line). */
static int
qmp_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		struct pollfd pf = { fd, POLLIN, 0 };

		if (poll(&pf, 1, 30000) <= 0 || read(fd, buf + n, 1) != 1)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

/* The next answer (an object with "return" or "error"), events skipped. */
static int
qmp_answer(int fd, char *buf, size_t size)
{
	do {
		if (qmp_line(fd, buf, size) == -1)
			return -1;
	} while (strstr(buf, "\"return\"") == NULL && strstr(buf, "\"error\"") == NULL);
	return 0;
}

int
vm_qmp_open(const char *sock, struct sbx_err *e)
{
	static const char caps[] = "{\"execute\":\"qmp_capabilities\"}\n";
	char reply[512];
	int fd = unix_connect(sock);

	if (fd == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "the VMM's monitor %s", sock);
	if (qmp_line(fd, reply, sizeof reply) == -1 ||
	    sbx_write_all(fd, caps, sizeof caps - 1) == -1 ||
	    qmp_answer(fd, reply, sizeof reply) == -1) {
		close(fd);
		return sbx_err_set(e, SBX_EX_OSERR, "the VMM's monitor %s did not answer", sock);
	}
	return fd;
}

int
vm_qmp_cmd(int fd, const char *cmd, int sendfd, char *reply, size_t size, struct sbx_err *e)
{
	struct iovec iov = { (void *)cmd, strlen(cmd) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (sendfd != -1) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof u);
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof u.buf;
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &sendfd, sizeof(int));
	}
	while ((n = sendmsg(fd, &msg, MSG_NOSIGNAL)) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)iov.iov_len || sbx_write_all(fd, "\n", 1) == -1 ||
	    qmp_answer(fd, reply, size) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "the VMM's monitor did not answer %s", cmd);
	if (strstr(reply, "\"error\"") != NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "the VMM refused %s: %s", cmd, reply);
	return 0;
}

int
vm_qmp(const char *sock, const char *cmd, char *reply, size_t size, struct sbx_err *e)
{
	int fd = vm_qmp_open(sock, e), r;

	if (fd == -1)
		return -1;
	r = vm_qmp_cmd(fd, cmd, -1, reply, size, e);
	close(fd);
	return r;
}

/* One of sbx's own requests on the control port, answered by VM_OK (or
 * VM_FAILED and the agent's message); what names it in an error. */
static int
ctl_request(const struct vm_paths *p, const struct vm_req *req, const char *what,
    struct sbx_err *e)
{
	char answer[64];
	int n, lock, fd, r;

	if ((lock = lock_ctl(p, &n, e)) == -1)
		return -1;
	if ((fd = agent_open(p, n, sbx_monotonic() + 10, req, NULL, 0, e)) == -1) {
		close(lock);
		return -1;
	}
	snprintf(answer, sizeof answer, "answer to %s", what);
	r = expect(fd, VM_OK, NULL, 0, answer, e);
	close(fd);
	close(lock);
	return r;
}

int
vm_agent_freeze(const struct vm_paths *p, int on, int keep, struct sbx_err *e)
{
	struct vm_freeze f = { (uint32_t)on, (uint32_t)keep };
	struct vm_req req = { VM_FREEZE, &f, sizeof f, NULL, 0 };

	return ctl_request(p, &req, on ? "freeze" : "thaw", e);
}

int
vm_agent_hosts(const struct vm_paths *p, const char *text, struct sbx_err *e)
{
	struct vm_req req = { VM_HOSTS, text, strlen(text), NULL, 0 };

	return ctl_request(p, &req, "the new /etc/hosts", e);
}

/* What the relay tells the loop once the command has ended. */
struct relay_end {
	int kind;                /* 1: the command ended (x), 2: it never ran (status, msg) */
	struct vm_exit x;
	int32_t status;
	char msg[256];
};

struct vm_run {
	struct sbx_supervise sv;
	int result;              /* the relay's pipe */
	struct relay_end end;
	int have_end;
};

static volatile sig_atomic_t relay_sig, relay_winch;

static void
relay_catch(int sig)
{
	if (sig == SIGWINCH)
		relay_winch = 1;
	else
		relay_sig = sig;
}

/* A pty pair of the host's own for the relay (its slave) and the loop. */
static int
open_pty(int *master, int *slave)
{
	if ((*master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1)
		return -1;
	if (grantpt(*master) == -1 || unlockpt(*master) == -1 ||
	    (*slave = open(ptsname(*master), O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1) {
		close(*master);
		return -1;
	}
	return 0;
}

/* The EXEC frame's payload. */
static char *
exec_payload(const struct sbx_manifest *m, const struct sbx_exec *x, int tty, uint32_t flags,
    size_t *len)
{
	struct vm_exec h = { 0 };
	const char *cwd = x->workdir ? x->workdir : m->workdir ? m->workdir : "/";
	const char **env;
	char *pool = NULL, *buf, *w;
	size_t n_env = 0, i, size;
	unsigned uid = 0, gid = 0;
	struct winsize ws = { 0 };

	sbx_manifest_user_parse(x->user ? x->user : m->user, &uid, &gid);
	if ((env = sbx_tier_env(m, x, uid, &n_env, &pool)) == NULL)
		return NULL;
	h.uid = uid;
	h.gid = gid;
	h.tty = (uint32_t)tty;
	h.flags = flags;
	if (tty && ioctl(0, TIOCGWINSZ, &ws) == 0) {
		h.rows = ws.ws_row;
		h.cols = ws.ws_col;
	}
	size = sizeof h + strlen(cwd) + 1 + (tty ? 16 : 0);
	for (i = 0; x->argv[i]; i++)
		size += strlen(x->argv[i]) + 1;
	h.argc = (uint32_t)i;
	for (i = 0; i < n_env; i++)
		size += strlen(env[i]) + 1;
	h.envc = (uint32_t)n_env + (tty ? 1 : 0);
	if (size > VM_FRAME_MAX || (buf = w = malloc(size)) == NULL) {
		free(env);
		free(pool);
		return NULL;
	}
	memcpy(w, &h, sizeof h);
	w += sizeof h;
	w = stpcpy(w, cwd) + 1;
	for (i = 0; x->argv[i]; i++)
		w = stpcpy(w, x->argv[i]) + 1;
	for (i = 0; i < n_env; i++)
		w = stpcpy(w, env[i]) + 1;
	if (tty)
		w = stpcpy(w, "TERM=xterm") + 1;
	*len = (size_t)(w - buf);
	free(env);
	free(pool);
	return buf;
}

/* The relay ends as the command did. */
static void __attribute__((noreturn))
relay_exit(int result, const struct relay_end *end)
{
	struct rlimit none = { 0, 0 };
	int st = end->kind == 1 ? end->x.status : 0;

	(void)!write(result, end, sizeof *end);
	if (end->kind == 2)
		_exit(end->status);
	if (WIFSIGNALED(st)) {
		sigset_t all;

		setrlimit(RLIMIT_CORE, &none);
		signal(WTERMSIG(st), SIG_DFL);
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		kill(getpid(), WTERMSIG(st));
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 125);
}

/* The relay's loop: in (the caller's stdin or the pty slave), out and err
 * (where the command's output goes), fd (the agent's session). */
static void __attribute__((noreturn))
relay(int fd, int in, int out, int err, int tty, int result)
{
	struct relay_end end = { 0 };
	struct sigaction sa = { .sa_handler = relay_catch };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };
	sigset_t none;
	size_t i;
	int in_open = 1;

	for (i = 0; i < SBX_ARRAY_LEN(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (;;) {
		struct pollfd pf[2] = { { fd, POLLIN, 0 }, { in_open ? in : -1, POLLIN, 0 } };
		char buf[32768], *payload;
		uint32_t len, u;
		int type;
		ssize_t n;

		if (relay_sig) {
			u = (uint32_t)relay_sig;
			relay_sig = 0;
			vm_send(fd, VM_SIGNAL, &u, sizeof u, NULL, 0);
		}
		if (relay_winch) {
			struct winsize ws;

			relay_winch = 0;
			if (ioctl(in, TIOCGWINSZ, &ws) == 0) {
				uint16_t rc[2] = { ws.ws_row, ws.ws_col };

				vm_send(fd, VM_RESIZE, rc, sizeof rc, NULL, 0);
			}
		}
		if (poll(pf, 2, -1) == -1)
			continue;
		if (pf[1].revents) {
			n = read(in, buf, sizeof buf);
			if (n > 0) {
				vm_send(fd, VM_STDIN, buf, (size_t)n, NULL, 0);
			} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				in_open = 0;
				if (!tty)
					vm_send(fd, VM_STDIN, NULL, 0, NULL, 0);
			}
		}
		if (!pf[0].revents)
			continue;
		if ((type = recv_frame(fd, 0, &payload, &len)) == -1) {
			/* The VM went (the watchdog, a destroy): the command with it. */
			end.kind = 1;
			end.x.status = SIGKILL;
			relay_exit(result, &end);
		}
		switch (type) {
		case VM_STDOUT:
			sbx_write_all(out, payload, len);
			break;
		case VM_STDERR:
			sbx_write_all(err, payload, len);
			break;
		case VM_EXIT:
			end.kind = 1;
			if (len >= sizeof end.x)
				memcpy(&end.x, payload, sizeof end.x);
			relay_exit(result, &end);
		case VM_FAILED:
			end.kind = 2;
			end.status = 125;
			if (len >= sizeof end.status)
				memcpy(&end.status, payload, sizeof end.status);
			snprintf(end.msg, sizeof end.msg, "%s", len > sizeof end.status ?
			    payload + sizeof end.status : "the guest agent could not run it");
			relay_exit(result, &end);
		default:
			break;
		}
		free(payload);
	}
}

static int
run_wait(void *ctx, int *status, struct rusage *ru, struct sbx_err *e)
{
	struct vm_run *r = ctx;

	(void)e;
	while (waitpid(r->sv.pid, status, 0) == -1)
		if (errno != EINTR)
			return sbx_err_sys(e, SBX_EX_RUNFAIL, "waitpid");
	memset(ru, 0, sizeof *ru);
	if (read(r->result, &r->end, sizeof r->end) == (ssize_t)sizeof r->end) {
		r->have_end = 1;
		if (r->end.kind == 1) {
			ru->ru_utime.tv_sec = r->end.x.utime_us / 1000000;
			ru->ru_utime.tv_usec = r->end.x.utime_us % 1000000;
			ru->ru_stime.tv_sec = r->end.x.stime_us / 1000000;
			ru->ru_stime.tv_usec = r->end.x.stime_us % 1000000;
			ru->ru_maxrss = r->end.x.maxrss_kb;
		}
	}
	return 0;
}

static int
run_failed(void *ctx, struct sbx_err *e)
{
	struct vm_run *r = ctx;

	if (!r->have_end || r->end.kind != 2)
		return 0;
	sbx_err_set(e, r->end.status, "%s", r->end.msg);
	return 1;
}

/* The run's relay, in a child of its own: the command's streams (the
 * caller's, x->stdio, or the terminal's slave) to and from the agent. */
static void __attribute__((noreturn))
relay_child(int fd, const struct sbx_exec *x, int slave, int result)
{
	int in = 0, out = 1, err = 2;

	if (x->tty) {
		struct termios tio;

		setsid();
		ioctl(slave, TIOCSCTTY, 0);
		if (tcgetattr(slave, &tio) == 0) {
			cfmakeraw(&tio);
			tcsetattr(slave, TCSANOW, &tio);
		}
		in = out = err = slave;
	} else if (x->stdio != NULL) {
		in = x->stdio[0];
		out = x->stdio[1];
		err = x->stdio[2];
	}
	relay(fd, in, out, err, x->tty, result);
}

/* A run's share of the relay's counters: taken as it starts (1; 0: no
 * network, or sbx's own command; -1 e), its figures into t at its end. */
static int
net_begin(const struct sbx_store *s, const struct sbx_manifest *m, uint32_t flags,
    struct sbx_relay_counts *before, struct sbx_err *e)
{
	if ((flags & VM_EXEC_SYSTEM) || !sbx_net_wanted(m))
		return 0;
	return sbx_net_counts(s, m, 1, before, e) == -1 ? -1 : 1;
}

static void
net_end(const struct sbx_store *s, const struct sbx_manifest *m,
    struct sbx_relay_counts *before, struct sbx_trace *t)
{
	struct sbx_relay_counts after;

	if (sbx_net_counts(s, m, -1, &after, NULL) == 0) {
		sbx_net_trace(before, &after, t);
		sbx_relay_counts_free(&after);
	}
	sbx_relay_counts_free(before);
}

int
vm_exec(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_exec *x,
    struct sbx_exec_result *res, struct sbx_err *e)
{
	return vm_exec_flags(s, m, x, 0, res, e);
}

int
vm_exec_flags(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_exec *x,
    uint32_t flags, struct sbx_exec_result *res, struct sbx_err *e)
{
	struct vm_paths p;
	struct vm_run r;
	struct vm_req req = { VM_EXEC, NULL, 0, NULL, 0 };
	struct sbx_relay_counts net_before;
	char *payload;
	size_t plen = 0;
	int lock, port = 0, fd, pipefd[2], master = -1, slave = -1, ret;
	int have_net = 0;
	double t;
	pid_t pid;

	sbx_trace_init(&res->trace);
	memset(&r, 0, sizeof r);
	if (sbx_rt_int(m, "pid") <= 0 || !sbx_proc_alive((pid_t)sbx_rt_int(m, "pid"),
	    (unsigned long long)sbx_rt_int(m, "start_ticks")))
		return sbx_err_set(e, SBX_EX_RUNFAIL, "the sandbox's VM is gone (run sbx-gc)");
	if (vm_paths(s, m, &p, e) == -1 || (lock = (flags & VM_EXEC_SYSTEM) ?
	    lock_ctl(&p, &port, e) : lock_port(&p, &port, e)) == -1)
		return -1;
	if ((payload = exec_payload(m, x, x->tty, flags, &plen)) == NULL) {
		close(lock);
		return sbx_err_set(e, SBX_EX_RUNFAIL, "out of memory (or a command over 1 MiB)");
	}
	if (x->tty && open_pty(&master, &slave) == -1) {
		free(payload);
		close(lock);
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "sbx-run -t: a terminal");
	}
	if (pipe2(pipefd, O_CLOEXEC) == -1) {
		free(payload);
		close(lock);
		if (master != -1) {
			close(master);
			close(slave);
		}
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "pipe");
	}
	sbx_supervise_init(&r.sv);
	r.sv.timeout_s = x->timeout_s;
	r.sv.kill_after_s = x->kill_after_s;
	r.sv.lifetime_s = x->lifetime_s;
	if (x->ctl > 2)
		r.sv.ctl = x->ctl;
	if (m->expires_at && sbx_time_parse(m->expires_at, &t) == 0)
		r.sv.expires_at = t;
	r.sv.ctx = &r;
	r.sv.wait = run_wait;
	r.sv.failed = run_failed;
	r.result = pipefd[0];
	if (x->starting != NULL)
		x->starting(x->starting_ctx);
	sbx_supervise_start(&r.sv, &res->trace);
	/* the command goes with the HELLO, the run's clock going; the relay's
	 * counters before and after it: the run's traffic and refusals */
	req.payload = payload;
	req.len = plen;
	fd = (have_net = net_begin(s, m, flags, &net_before, e)) == -1 ? -1 :
	    agent_open(&p, port, sbx_monotonic() + 30, &req, NULL, 0, e);
	free(payload);
	if (fd == -1) {
		if (have_net == 1)
			net_end(s, m, &net_before, &res->trace);
		close(pipefd[0]);
		close(pipefd[1]);
		close(lock);
		if (master != -1) {
			close(master);
			close(slave);
		}
		return -1;
	}
	if ((pid = fork()) == 0) {
		close(pipefd[0]);
		relay_child(fd, x, slave, pipefd[1]);
	}
	close(pipefd[1]);
	close(fd);
	if (slave != -1)
		close(slave);
	if (pid == -1) {
		if (have_net)
			net_end(s, m, &net_before, &res->trace);
		close(pipefd[0]);
		close(lock);
		if (master != -1)
			close(master);
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "fork");
	}
	r.sv.pid = pid;
	r.sv.master = master;
	if ((r.sv.pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (have_net)
			net_end(s, m, &net_before, &res->trace);
		close(pipefd[0]);
		close(lock);
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "pidfd_open");
	}
	sbx_supervise_catch(&r.sv);
	ret = sbx_supervise_run(&r.sv, &res->status, &res->trace, e);
	sbx_supervise_release(&r.sv);
	if (r.have_end && r.end.kind == 1) {
		const struct vm_exit *v = &r.end.x;

		res->trace.cpu_seconds_used = v->cpu_us >= 0 ? (double)v->cpu_us / 1e6 :
		    (double)(v->utime_us + v->stime_us) / 1e6;
		res->trace.peak_memory_mb = (double)v->maxrss_kb / 1024;
		res->trace.oom_killed = r.end.x.oom_kills > 0;
		res->trace.pids_limit_hits = r.end.x.pids_refused;
		/* The guest's OOM killer took it (or a process of the run). */
		if (r.end.x.oom_kills > 0) {
			free(res->trace.kill_reason);
			res->trace.kill_reason = strdup("memory");
		}
	}
	if (have_net)
		net_end(s, m, &net_before, &res->trace);
	close(r.sv.pidfd);
	if (r.sv.master != -1)
		close(r.sv.master);
	close(pipefd[0]);
	close(lock);
	if (ret == -1 && res->status == 0)
		res->status = SBX_EX_RUNFAIL;
	return ret;
}
