/* SPDX-License-Identifier: MIT */
/*
 * The namespace driver: a sandbox is an init process holding new user, mount,
 * PID, network, UTS, IPC and cgroup namespaces, in the sandbox's cgroup, with
 * an overlay root. A run joins those namespaces, drops every privilege, and
 * execs the command in a cgroup of its own.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <math.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/openat2.h>

#include "caps.h"
#include "cgroup.h"
#include "driver.h"
#include "ns.h"
#include "fdpass.h"
#include "ids.h"
#include "landlock.h"
#include "net.h"
#include "policy.h"
#include "pty.h"
#include "quota.h"
#include "rootfs.h"
#include "seccomp_profile.h"
#include "sha256.h"
#include "snapshot.h"
#include "supervise.h"
#include "util.h"

/*
 * Whether this process is chrooted, as the kernel sees it: its root is not its
 * mount namespace's (entering one's own namespace again moves one there).
 */
static int
in_chroot(void)
{
	struct statx here, top;
	pid_t pid;
	int fd, st;

	if (statx(AT_FDCWD, "/", 0, STATX_MNT_ID | STATX_INO, &here) == -1 ||
	    !(here.stx_mask & STATX_MNT_ID) || (pid = fork()) == -1)
		return 0;
	if (pid == 0) {
		fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		if (fd == -1 || setns(fd, CLONE_NEWNS) == -1 ||
		    statx(AT_FDCWD, "/", 0, STATX_MNT_ID | STATX_INO, &top) == -1)
			_exit(2);
		_exit(top.stx_mnt_id != here.stx_mnt_id || top.stx_ino != here.stx_ino);
	}
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

/*
 * The kernel refused new namespaces (err): add to e what usually causes that
 * and how to check each, the cause found on this host first.
 */
static void
userns_hint(int err, struct sbx_err *e)
{
	char buf[32] = "", found[160] = "";
	size_t n = strlen(e->msg);
	int fd;
	ssize_t r;

	if (in_chroot())
		snprintf(found, sizeof found, "this process is in a chroot, where the kernel "
		    "makes no user namespace");
	else if ((fd = open("/proc/sys/user/max_user_namespaces", O_RDONLY | O_CLOEXEC)) != -1) {
		r = read(fd, buf, sizeof buf - 1);
		close(fd);
		buf[r > 0 ? r : 0] = '\0';
		if (err == ENOSPC || atoi(buf) == 0)
			snprintf(found, sizeof found, "user.max_user_namespaces is %d, or its "
			    "count is used up", atoi(buf));
	}
	if (found[0] != '\0')
		n += (size_t)snprintf(e->msg + n, sizeof e->msg - n, " (here: %s)", found);
	if (n < sizeof e->msg)
		snprintf(e->msg + n, sizeof e->msg - n, "; the usual causes: a chroot (as root: ls -di / and "
		    "nsenter -m -t $$ ls -di / differ), user.max_user_namespaces at 0 (sysctl "
		    "user.max_user_namespaces), Ubuntu's kernel.apparmor_restrict_unprivileged_userns "
		    "= 1 for a user without an AppArmor profile that allows it (sysctl "
		    "kernel.apparmor_restrict_unprivileged_userns), a container without "
		    "CAP_SYS_ADMIN or with a seccomp profile that refuses clone (grep -E "
		    "'CapEff|Seccomp' /proc/self/status; docker run --cap-add SYS_ADMIN "
		    "--security-opt seccomp=unconfined)");
}

#define SBX_NOFILE_MAX 65536

static int
wants_cgroup_limits(const struct sbx_manifest *m)
{
	return !isnan(m->res.cpu_cores) || m->res.memory_mb != SBX_UNSET_INT ||
	    m->res.pids != SBX_UNSET_INT;
}

static int
ns_check(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	unsigned uid, gid;

	if (sbx_net_check(s, m, e) == -1)
		return -1;
	if (m->res.disk_mb != SBX_UNSET_INT && s->rootless)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "resource_allocation.disk_mb: the disk "
		    "quota needs root (a loop-mounted filesystem for the writable layer)");
	if ((m->res.io_mbps != SBX_UNSET_INT || m->res.io_iops != SBX_UNSET_INT) &&
	    m->res.disk_mb == SBX_UNSET_INT)
		return sbx_err_set(e, SBX_EX_DATAERR, "resource_allocation.%s throttles the writable "
		    "layer's own device, which only disk_mb gives it (a loop device): set disk_mb",
		    m->res.io_mbps != SBX_UNSET_INT ? "io_mbps" : "io_iops");
	if (m->security.landlock == 1 && sbx_landlock_abi() < 1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "security.landlock: the kernel has no "
		    "Landlock (set landlock: false to run without it)");
	if (m->security.landlock_network == 1 && sbx_landlock_abi() < 4)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "security.landlock_network: the kernel's "
		    "Landlock has no network rules (ABI 4, Linux 6.7)");
	if (m->security.no_new_privileges == 0 && (strcmp(m->security.seccomp, "unconfined") ||
	    m->security.landlock || m->security.landlock_network == 1))
		return sbx_err_set(e, SBX_EX_DATAERR, "security.no_new_privileges: false needs "
		    "seccomp: unconfined, landlock: false and landlock_network: false (they all "
		    "require no_new_privs)");
	if (sbx_manifest_user_parse(m->user, &uid, &gid) == -1)
		return sbx_err_set(e, SBX_EX_DATAERR, "user '%s' is not UID:GID", m->user);
	if (s->rootless && (uid != 0 || gid != 0))
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "user %s: without root, sbx maps only "
		    "your own ID into the sandbox, as 0:0", m->user);
	return sbx_rootfs_check_mounts(m, e);
}

static int
write_maps(pid_t pid, const struct sbx_manifest *m, struct sbx_err *e)
{
	char p[64], v[128];

	if (sbx_rt_bool(m, "rootless")) {
		snprintf(p, sizeof p, "/proc/%d/setgroups", (int)pid);
		if (sbx_write_str(p, "deny") == -1)
			return sbx_err_sys(e, SBX_EX_OSERR, "%s", p);
	}
	snprintf(p, sizeof p, "/proc/%d/uid_map", (int)pid);
	snprintf(v, sizeof v, "0 %lld %lld\n", sbx_rt_int(m, "uid_base"), sbx_rt_int(m, "id_count"));
	if (sbx_write_str(p, v) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", p);
	snprintf(p, sizeof p, "/proc/%d/gid_map", (int)pid);
	snprintf(v, sizeof v, "0 %lld %lld\n", sbx_rt_int(m, "gid_base"), sbx_rt_int(m, "id_count"));
	if (sbx_write_str(p, v) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", p);
	return 0;
}

/* network_policy host: the sandbox keeps the host's network namespace. */
static int
host_network(const struct sbx_manifest *m)
{
	return strcmp(m->network_policy, "host") == 0;
}

static int
loopback_up(struct sbx_err *e)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "socket");
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == -1 ||
	    (ifr.ifr_flags |= IFF_UP | IFF_RUNNING, ioctl(fd, SIOCSIFFLAGS, &ifr) == -1)) {
		close(fd);
		return sbx_err_sys(e, SBX_EX_OSERR, "bring up lo");
	}
	close(fd);
	return 0;
}

struct init_msg {
	int ok;
	struct sbx_err err;
};

/*
 * Once set up, init needs nothing but to wait: no capability, no system call
 * but those of its loop. Whatever reaches it (its memory through /proc of a
 * rootless sandbox, whose init must stay open to the caller's setns) can do
 * no more there than the sandbox's own processes; a call outside the list
 * kills it, and the sandbox with it.
 */
static int
confine_init(struct sbx_err *e)
{
	if (sbx_caps_drop_all(e) == -1 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "confine init");
	return sbx_seccomp_load_waiter(e);
}

/* The realtime second the sandbox expires (expires_at), or 0. */
static double
deadline_of(const struct sbx_manifest *m)
{
	double t;

	return m->expires_at && sbx_time_parse(m->expires_at, &t) == 0 ? t : 0;
}

/* A longer lifetime reaches init as signals SIGRTMIN+k, each adding 2^k
 * seconds, k below EXTEND_BITS (ns_extend). */
#define EXTEND_BITS 25

/*
 * PID 1 of the sandbox: reap whatever is orphaned to us until the sandbox's
 * lifetime ends, then leave, which ends every process of the PID namespace:
 * the deadline holds even with no watchdog (a second line behind it). A
 * longer lifetime (sbx-watchdog --extend) comes as SIGRTMIN+k, adding 2^k
 * seconds each, in any order, and only from outside: kill(2) from the host
 * says SI_USER with no PID here; from inside, kill(2) gives the sender's PID
 * and a queued signal cannot claim SI_USER (the kernel refuses a code of 0
 * or above from another process), so nothing inside can move the deadline.
 */
static void __attribute__((noreturn))
init_loop(double deadline)
{
	struct timespec ts, now;
	siginfo_t si;
	sigset_t set;
	double left;
	int k;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (k = 0; k < EXTEND_BITS; k++)
		sigaddset(&set, SIGRTMIN + k);
	for (;;) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		memset(&si, 0, sizeof si);
		if (deadline <= 0) {
			sigwaitinfo(&set, &si);
		} else {
			clock_gettime(CLOCK_REALTIME, &now);
			left = deadline - ((double)now.tv_sec + now.tv_nsec / 1e9);
			if (left <= 0)
				_exit(0);
			ts.tv_sec = (time_t)left;
			ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
			sigtimedwait(&set, &si, &ts);
		}
		k = si.si_signo - SIGRTMIN;
		if (deadline > 0 && k >= 0 && k < EXTEND_BITS && si.si_code == SI_USER &&
		    si.si_pid == 0)
			deadline += (double)(1L << k);
	}
}

/* Init's last set-up: no stdio or descriptor of the caller's, its name, its confinement. */
static int
init_settle(const struct sbx_manifest *m, struct sbx_err *e)
{
	char title[SBX_ID_MAX + 16];
	sigset_t all;
	int fd;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	/* Never keep the caller's stdio: a pipe held open would hang `$(sbx-provision)`. */
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	} else {
		close(0);
		close(1);
		close(2);
	}
	snprintf(title, sizeof title, "sbx-init %s", m->sandbox_id);
	sbx_proc_title(title);
	return confine_init(e);
}

#define GO_FDS (SBX_MAX_LAYERS + 1 + SBX_MAX_MOUNTS)

/* The go-ahead for init carries the ID-mapped layers, skeleton and mount
 * sources (send_go, recv_go). */
_Static_assert(GO_FDS <= SBX_FD_MAX, "init's go-ahead carries too many descriptors");

static int
send_go(int sock, const int *fds, size_t n)
{
	return sbx_fd_send(sock, fds, n, "g", 1);
}

static int
recv_go(int sock, int *fds, size_t n)
{
	char c = 0;

	return sbx_fd_recv(sock, fds, n, &c, 1) == 1 ? 0 : -1;
}

/*
 * Detached read-only mounts of the snapshot layers and the skeleton, ID-mapped
 * into the user namespace of pid: files a layer stores as owned by 0..65535
 * belong to the sandbox's own IDs, whichever range it got. Only the host's
 * root can make them; the sandbox's init attaches them. Returns how many.
 */
static int
idmapped_layers(pid_t pid, const struct sbx_lowers *lw, int *fds, struct sbx_err *e)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY |
		MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
	char p[64];
	size_t i, n = lw->n + (lw->skel != NULL);
	int uns;

	snprintf(p, sizeof p, "/proc/%d/ns/user", (int)pid);
	if ((uns = open(p, O_RDONLY | O_CLOEXEC)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", p);
	attr.userns_fd = (unsigned)uns;
	for (i = 0; i < n; i++) {
		const char *dir = i < lw->n ? lw->dirs[i] : lw->skel;

		if ((fds[i] = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC))
		    == -1 || mount_setattr(fds[i], "", AT_EMPTY_PATH, &attr, sizeof attr) == -1) {
			int err = errno;
			struct statfs sf;

			if (err == EINVAL)
				sbx_err_set(e, SBX_EX_UNAVAILABLE, "ID-mapped mount of %s: %s: this "
				    "kernel cannot ID-map the state root's filesystem%s; put the state "
				    "root (SBX_ROOT) on ext4, xfs or btrfs", dir, strerror(err),
				    statfs(dir, &sf) == 0 && sf.f_type == TMPFS_MAGIC ?
				    " (tmpfs, before Linux 6.3)" : "");
			else
				sbx_err_sys(e, err == ENOSYS ? SBX_EX_UNAVAILABLE : SBX_EX_OSERR,
				    "ID-mapped mount of %s", dir);
			if (fds[i] != -1)
				close(fds[i]);
			while (i-- > 0)
				close(fds[i]);
			close(uns);
			return -1;
		}
	}
	close(uns);
	return (int)n;
}

/* Mounts mapped to their owner, which the host makes (a sandbox with a range of IDs). */
static int
mapped_source(const struct sbx_manifest *m, size_t i)
{
	return !sbx_rt_bool(m, "rootless") && m->mounts[i].idmap == 1;
}

/* Every entry with idmap (sbx_rootfs_mount_tree); fds[i] is -1 for the others. */
static int
idmapped_sources(const struct sbx_store *s, const struct sbx_manifest *m, int *fds,
    struct sbx_err *e)
{
	size_t i;

	for (i = 0; i < m->n_mounts; i++)
		fds[i] = -1;
	for (i = 0; i < m->n_mounts; i++)
		if (mapped_source(m, i) && (fds[i] = sbx_rootfs_mount_tree(s, m, i, 1, e)) == -1) {
			while (i-- > 0)
				if (fds[i] != -1)
					close(fds[i]);
			return -1;
		}
	return 0;
}

static void __attribute__((noreturn))
init_main(const struct sbx_store *s, const struct sbx_manifest *m,
    const struct sbx_lowers *lw, int go, int status, const int *cgfds)
{
	struct init_msg msg = { 0 };
	struct sbx_rootfs_fds f;
	int fds[GO_FDS], srcfds[SBX_MAX_MOUNTS];
	int mapped = !sbx_rt_bool(m, "rootless") && (lw->n > 0 || lw->skel != NULL);
	size_t nl = mapped ? lw->n + (lw->skel != NULL) : 0, ns = 0, i;

	/* Closed to the sandbox's processes (/proc/1/mem, fd, environ), where the
	 * runs' setns allows it: the host's root reaches it anyway, a rootless
	 * caller only while it is dumpable (init_settle confines it instead). */
	if (!sbx_rt_bool(m, "rootless"))
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	for (i = 0; i < m->n_mounts; i++)
		ns += mapped_source(m, i);
	memset(fds, -1, sizeof fds);
	if (recv_go(go, fds, nl + ns) == -1)
		_exit(1);
	close(go);
	for (i = 0, ns = 0; i < m->n_mounts; i++)
		srcfds[i] = mapped_source(m, i) ? fds[nl + ns++] : -1;
	/* Into the sandbox's cgroup, by ourselves (see sbx_cgroup_open_join). */
	for (i = 0; i < SBX_CG_NCTRL; i++)
		if (cgfds[i] != -1 && (sbx_write_all(cgfds[i], "0", 1) == -1 || close(cgfds[i]))) {
			sbx_err_sys(&msg.err, SBX_EX_OSERR, "join the sandbox's cgroup");
			goto fail;
		}
	if (sbx_rootfs_open(s, m, lw, mapped ? fds : NULL, srcfds, &f, &msg.err) == -1)
		goto fail;
	/* Our host ID is unmapped here until we take the sandbox's root. */
	if (setresgid(0, 0, 0) == -1 || setresuid(0, 0, 0) == -1) {
		sbx_err_sys(&msg.err, SBX_EX_OSERR, "become root of the user namespace");
		goto fail;
	}
	if (unshare(CLONE_NEWCGROUP) == -1) {
		sbx_err_sys(&msg.err, SBX_EX_OSERR, "new cgroup namespace");
		goto fail;
	}
	if (sethostname(m->sandbox_id, strlen(m->sandbox_id)) == -1) {
		sbx_err_sys(&msg.err, SBX_EX_OSERR, "sethostname");
		goto fail;
	}
	if ((!host_network(m) && loopback_up(&msg.err) == -1) ||
	    sbx_rootfs_enter(m, lw, &f, &msg.err) == -1)
		goto fail;
	sbx_rootfs_fds_close(&f);
	setsid();
	if (init_settle(m, &msg.err) == -1)
		goto fail;
	msg.ok = 1;
	if (sbx_write_all(status, &msg, sizeof msg) == -1)
		_exit(1);
	syscall(SYS_close_range, 3, ~0U, 0);
	init_loop(deadline_of(m));
fail:
	sbx_write_all(status, &msg, sizeof msg);
	_exit(1);
}

static int
reap(pid_t pid)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return 0;
		if (kill(pid, 0) == -1 && errno == ESRCH)
			return 0;
		usleep(2000);
	}
	return -1;
}

static int
cgroup_of(const struct sbx_manifest *m, struct sbx_cg_host *h, struct sbx_cgroup *cg,
    struct sbx_err *e)
{
	if (sbx_rt_str(m, "cgroup") == NULL)
		return 0;
	if (sbx_cgroup_host(h, e) == -1 || sbx_cgroup_from_spec(h, sbx_rt_str(m, "cgroup"), cg, e) == -1)
		return -1;
	return 1;
}

/*
 * security.seccomp PATH: the file is compiled once, now, and the program kept
 * in the sandbox's directory with its digest in the state. Runs load that
 * program: an edit of the file later changes no live sandbox.
 */
static int
keep_filter(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e)
{
	struct sbx_seccomp_prog p;
	char path[1200], hex[65];
	int r;

	if (m->security.seccomp[0] != '/')
		return 0;
	if (sbx_seccomp_compile_file(m->security.seccomp, &p, e) == -1)
		return sbx_err_prefix(e, "security.seccomp");
	sbx_sha256_hex(p.code, p.len, hex);
	r = sbx_store_path(s, m->sandbox_id, "seccomp.bpf", path, sizeof path, e) == -1 ||
	    sbx_write_atomic(path, p.code, p.len, 0600, e) == -1 ? -1 : 0;
	free(p.code);
	if (r == 0 && asprintf(&m->rt.seccomp_digest, "sha256:%s", hex) == -1) {
		m->rt.seccomp_digest = NULL;
		r = sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
	return r;
}

/* The program keep_filter kept, unless it changed since. */
static int
kept_filter(const struct sbx_store *s, const struct sbx_manifest *m,
    struct sbx_seccomp_prog *p, struct sbx_err *e)
{
	char path[1200], hex[65];

	if (sbx_store_path(s, m->sandbox_id, "seccomp.bpf", path, sizeof path, e) == -1 ||
	    sbx_seccomp_read(path, p, e) == -1)
		return -1;
	sbx_sha256_hex(p->code, p->len, hex);
	if (m->rt.seccomp_digest == NULL || strncmp(m->rt.seccomp_digest, "sha256:", 7) != 0 ||
	    strcmp(m->rt.seccomp_digest + 7, hex) != 0) {
		free(p->code);
		p->code = NULL;
		return sbx_err_set(e, SBX_EX_RUNFAIL, "%s: the sandbox's seccomp program does not "
		    "match its digest (%s)", path, m->rt.seccomp_digest ? m->rt.seccomp_digest :
		    "none recorded");
	}
	return 0;
}

static int ns_destroy(const struct sbx_store *s, const struct sbx_manifest *m,
    struct sbx_err *e);

/* Give init its go, with what only the host's root can make: the ID-mapped
 * layers, skeleton and mount sources. */
static int
go_init(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_lowers *lw,
    pid_t pid, int go, struct sbx_err *e)
{
	int fds[GO_FDS], srcs[SBX_MAX_MOUNTS], k, r = -1;
	size_t n = 0, i;

	memset(fds, -1, sizeof fds);
	if (!sbx_rt_bool(m, "rootless") && (lw->n > 0 || lw->skel != NULL)) {
		if ((k = idmapped_layers(pid, lw, fds, e)) == -1)
			return -1;
		n = (size_t)k;
	}
	if (!sbx_rt_bool(m, "rootless")) {
		if (idmapped_sources(s, m, srcs, e) == -1)
			goto out;
		for (i = 0; i < m->n_mounts; i++)
			if (srcs[i] != -1)
				fds[n++] = srcs[i];
	}
	if (send_go(go, fds, n) == -1)
		sbx_err_sys(e, SBX_EX_OSERR, "start init");
	else
		r = 0;
out:
	for (i = 0; i < n; i++)
		close(fds[i]);
	return r;
}

/*
 * The memory limit's OOM killer takes the runs' processes, never init, whose
 * end would be the sandbox's: every run volunteers (oom_score_adj 1000, in
 * run_child), and where the host's root may (CAP_SYS_RESOURCE) init is exempt.
 */
static void
protect_init(pid_t pid, const struct sbx_manifest *m)
{
	char p[64];

	if (sbx_rt_bool(m, "rootless"))
		return;
	snprintf(p, sizeof p, "/proc/%d/oom_score_adj", (int)pid);
	(void)sbx_write_str(p, "-1000");
}

/* The sandbox's limits on its cgroup cg, and the cgroup init goes into
 * (initcg, and cgfds to join it). */
static int
init_cgroup(const struct sbx_manifest *m, struct sbx_cgroup *cg, struct sbx_cgroup *initcg,
    int cgfds[SBX_CG_NCTRL], struct sbx_err *e)
{
	struct sbx_cg_limits lim = { 0 };

	lim.cpu_cores = isnan(m->res.cpu_cores) ? 0 : m->res.cpu_cores;
	if (m->res.memory_mb != SBX_UNSET_INT) {
		lim.memory_bytes = m->res.memory_mb << 20;
		lim.memory_soft_bytes = lim.memory_bytes * m->res.memory_soft_pct / 100;
	}
	lim.pids = m->res.pids != SBX_UNSET_INT ? m->res.pids : 0;
	/* On v2 processes live only in leaves (the sandbox's cgroup enables
	 * its controllers for the runs' cgroups), so init gets a child; v1
	 * has no such rule, and init stays in the sandbox's cgroup. */
	*initcg = *cg;
	if (sbx_cgroup_set_limits(cg, &lim, e) == -1 ||
	    (cg->version == 2 && sbx_cgroup_child(cg, "init", initcg, e) == -1) ||
	    sbx_cgroup_open_join(initcg, cgfds, e) == -1)
		return sbx_err_prefix(e, "resource_allocation cannot be enforced");
	return 0;
}

/* io_mbps, io_iops: on the device of the writable layer's own filesystem
 * (disk_mb's loop device, ns_check made sure), in cg (v2: the sandbox's,
 * for all below it; v1, where blkio throttles are per cgroup: each). */
static int
io_throttle(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_cgroup *cg,
    struct sbx_err *e)
{
	char p[1200];
	struct stat st;

	if (m->res.io_mbps == SBX_UNSET_INT && m->res.io_iops == SBX_UNSET_INT)
		return 0;
	if (sbx_store_path(s, m->sandbox_id, "layer", p, sizeof p, e) == -1)
		return -1;
	if (stat(p, &st) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", p);
	if (sbx_cgroup_set_io(cg, st.st_dev, m->res.io_mbps == SBX_UNSET_INT ? 0 : m->res.io_mbps,
	    m->res.io_iops == SBX_UNSET_INT ? 0 : m->res.io_iops, e) == -1)
		return sbx_err_prefix(e, "resource_allocation.io_mbps/io_iops cannot be enforced");
	return 0;
}

/* The sandbox's init, in its new namespaces and (v2) made in its cgroup cg
 * (*placed): 0 in the child, its PID in the parent, -1 (69 when the host
 * refuses user namespaces). */
static pid_t
clone_init(const struct sbx_manifest *m, const struct sbx_cgroup *cg, int *placed,
    struct sbx_err *e)
{
	pid_t pid;
	int err;

	pid = sbx_cgroup_clone(cg, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
	    (host_network(m) ? 0 : CLONE_NEWNET) | CLONE_NEWUTS | CLONE_NEWIPC, placed);
	if (pid != -1)
		return pid;
	err = errno;
	sbx_err_sys(e, err == EPERM || err == ENOSPC || err == EUSERS ?
	    SBX_EX_UNAVAILABLE : SBX_EX_OSERR, "cannot create the sandbox's namespaces");
	if (err == EPERM || err == ENOSPC || err == EUSERS)
		userns_hint(err, e);
	return -1;
}

/* Init's word that it is set up (init_msg over st), or why not. */
static int
wait_init(int st, struct sbx_err *e)
{
	struct init_msg msg;
	ssize_t n;

	n = read(st, &msg, sizeof msg);
	if (n == (ssize_t)sizeof msg && msg.ok)
		return 0;
	if (n == (ssize_t)sizeof msg)
		*e = msg.err;
	else
		sbx_err_set(e, SBX_EX_OSERR, "the sandbox's init died while setting up");
	return -1;
}

/* A failed create leaves nothing behind: init (pid, if any), the network,
 * the cgroup (cg, if any). */
static void
create_undo(const struct sbx_store *s, const struct sbx_manifest *m, pid_t pid,
    const struct sbx_cgroup *cg)
{
	struct sbx_err ignored;

	if (pid > 0) {
		kill(pid, SIGKILL);
		reap(pid);
	}
	sbx_net_destroy(s, m, &ignored);
	if (cg != NULL)
		sbx_cgroup_destroy(cg, &ignored);
}

/* The network's plan, the sandbox's IDs, its root's layers (lw) and its
 * seccomp program kept: nothing of the kernel's made yet. */
static int
create_prepare(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_lowers *lw,
    struct sbx_err *e)
{
	if (sbx_net_prepare(m, e) == -1 || sbx_tier_pick_ids(s, m, e) == -1 ||
	    sbx_rootfs_prepare(s, m, (uid_t)sbx_rt_int(m, "uid_base"),
	    (gid_t)sbx_rt_int(m, "gid_base"), lw, e) == -1)
		return -1;
	if (lw->skel != NULL && sbx_rt_set_str(m, "skeleton", strrchr(lw->skel, '/') + 1) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	return keep_filter(s, m, e);
}

static int
ns_create(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e)
{
	struct sbx_cg_host h;
	struct sbx_cgroup cg, initcg;
	struct sbx_lowers lw;
	char spec[4096];
	int go[2] = { -1, -1 }, st[2] = { -1, -1 }, have_cg = 0, placed = 0;
	int cgfds[SBX_CG_NCTRL];
	size_t i;
	pid_t pid = -1;

	m->has_rt = 1;
	if (sbx_rt_set_bool(m, "rootless", s->rootless) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	memset(&lw, 0, sizeof lw);
	memset(cgfds, -1, sizeof cgfds);
	if (create_prepare(s, m, &lw, e) == -1) {
		sbx_lowers_free(&lw);
		return -1;
	}
	/* cgroups: limits need them; without them runs are counted by rusage. */
	if (sbx_cgroup_host(&h, e) == 0 && sbx_cgroup_create(&h, s->group, m->sandbox_id, &cg, e) == 0) {
		have_cg = 1;
		if (sbx_cgroup_spec(&cg, &h, spec, sizeof spec) == -1 ||
		    sbx_rt_set_str(m, "cgroup", spec) == -1) {
			sbx_err_set(e, SBX_EX_SOFTWARE, "cgroup path too long");
			goto fail;
		}
	} else if (wants_cgroup_limits(m) || !s->rootless) {
		sbx_lowers_free(&lw);
		return sbx_err_prefix(e, "resource_allocation cannot be enforced");
	}
	sbx_crash_point("create-cgroup");
	if (have_cg && (init_cgroup(m, &cg, &initcg, cgfds, e) == -1 ||
	    io_throttle(s, m, &cg, e) == -1))
		goto fail;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) == -1 ||
	    pipe2(st, O_CLOEXEC) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "pipe");
		goto fail;
	}
	if ((pid = clone_init(m, have_cg ? &initcg : NULL, &placed, e)) == -1)
		goto fail;
	if (pid == 0) {
		close(go[1]);
		close(st[0]);
		for (i = 0; placed && i < SBX_CG_NCTRL; i++)
			if (cgfds[i] != -1) {
				close(cgfds[i]);
				cgfds[i] = -1;
			}
		init_main(s, m, &lw, go[0], st[1], cgfds);
	}
	close(go[0]);
	close(st[1]);
	go[0] = st[1] = -1;
	for (i = 0; i < SBX_CG_NCTRL; i++)
		if (cgfds[i] != -1) {
			close(cgfds[i]);
			cgfds[i] = -1;
		}
	if (sbx_rt_set_int(m, "pid", pid) == -1) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto fail;
	}
	sbx_crash_point("create-cloned");
	if (write_maps(pid, m, e) == -1)
		goto fail;
	protect_init(pid, m);
	/* The network is in place before init goes on to run anything. */
	if (sbx_net_create(s, m, pid, e) == -1)
		goto fail;
	sbx_crash_point("create-network");
	if (go_init(s, m, &lw, pid, go[1], e) == -1)
		goto fail;
	if (wait_init(st[0], e) == -1)
		goto fail;
	if (sbx_rt_set_int(m, "start_ticks", (long long)sbx_proc_starttime(pid)) == -1) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto fail;
	}
	close(go[1]);
	close(st[0]);
	sbx_lowers_free(&lw);
	return 0;
fail:
	for (i = 0; i < SBX_CG_NCTRL; i++)
		if (cgfds[i] != -1)
			close(cgfds[i]);
	sbx_lowers_free(&lw);
	if (go[0] != -1) close(go[0]);
	if (go[1] != -1) close(go[1]);
	if (st[0] != -1) close(st[0]);
	if (st[1] != -1) close(st[1]);
	create_undo(s, m, pid, have_cg ? &cg : NULL);
	return -1;
}

static int
ns_alive(const struct sbx_manifest *m)
{
	return sbx_rt_int(m, "pid") > 0 && sbx_proc_alive((pid_t)sbx_rt_int(m, "pid"),
	    (unsigned long long)sbx_rt_int(m, "start_ticks"));
}

/* Init's own deadline seconds later (init_loop): 2^k for each bit k of them. */
static int
ns_extend(const struct sbx_manifest *m, double seconds, struct sbx_err *e)
{
	long s = (long)ceil(seconds);
	pid_t pid = (pid_t)sbx_rt_int(m, "pid");
	int k;

	if (!ns_alive(m))
		return sbx_err_set(e, SBX_EX_DATAERR, "its init is gone");
	if (s <= 0 || s >= 1L << EXTEND_BITS)
		return sbx_err_set(e, SBX_EX_USAGE, "%g s: 1 to %ld", seconds,
		    (1L << EXTEND_BITS) - 1);
	for (k = 0; k < EXTEND_BITS; k++)
		if ((s & (1L << k)) && kill(pid, SIGRTMIN + k) == -1)
			return sbx_err_sys(e, SBX_EX_OSERR, "tell init its new deadline");
	return 0;
}

/* Init's end is its PID namespace's: once init is a zombie, the kernel has
 * killed and reaped every other process in it. */
static int
ns_halt(const struct sbx_manifest *m, struct sbx_err *e)
{
	struct sbx_cg_host h;
	struct sbx_cgroup cg;
	struct sbx_cg_now now;

	/*
	 * Where the sandbox's cgroup counts one task, init alone (a run's
	 * processes go with its cgroup when its figures are read), init's death
	 * is not waited for: the teardown of its namespaces is destroy's, which
	 * waits for it. Otherwise init takes the rest with it, waited for.
	 */
	if (cgroup_of(m, &h, &cg, NULL) == 1) {
		sbx_cgroup_now(&cg, &now);
		if (now.pids == 1) {
			(void)sbx_proc_signal_wait((pid_t)sbx_rt_int(m, "pid"),
			    (unsigned long long)sbx_rt_int(m, "start_ticks"), SIGKILL, 0);
			return 0;
		}
	}
	return sbx_driver_halt_pid(m, "init", e);
}

static int
ns_destroy(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	struct sbx_cg_host h;
	struct sbx_cgroup cg;
	int r = 0, i;

	/* Killing init ends its PID namespace: the kernel kills every process in it
	 * and init dies last, and with it go the mounts and the network namespace.
	 * Waiting for that (on a pidfd, no polling) first leaves the cgroup empty,
	 * so the freeze-kill-thaw below is only for what escaped (nothing should). */
	if (sbx_rt_int(m, "pid") > 0)
		sbx_proc_signal_wait((pid_t)sbx_rt_int(m, "pid"),
		    (unsigned long long)sbx_rt_int(m, "start_ticks"), SIGKILL, 5000);
	switch (cgroup_of(m, &h, &cg, e)) {
	case -1:
		r = -1;
		break;
	case 1:
		if (sbx_cgroup_destroy(&cg, e) == -1)
			r = -1;
		/* The state root's group goes with its last sandbox (no waiting:
		 * with other sandboxes, their watchdogs keep it busy). */
		else if (s->group[0])
			sbx_cgroup_remove_group(&h, s->group, 0);
		break;
	}
	for (i = 0; i < 1000 && ns_alive(m); i++)
		usleep(1000);
	if (ns_alive(m))
		return sbx_err_set(e, SBX_EX_OSERR, "init %lld survived SIGKILL", sbx_rt_int(m, "pid"));
	/* Runners' parked entries leave as soon as init does; the namespaces
	 * they hold go with them. */
	sbx_ns_park_wait(s, m->sandbox_id);
	/* The veth went with init's network namespace; the rules, relay and lease go now. */
	{
		struct sbx_err ne;

		if (sbx_net_destroy(s, m, &ne) == -1 && r == 0) {
			*e = ne;
			r = -1;
		}
	}
	/* A disk quota's filesystem: its loop device clears itself once unmounted. */
	{
		char layer[1200];

		if (sbx_store_path(s, m->sandbox_id, "layer", layer, sizeof layer, e) == -1 ||
		    sbx_quota_remove(layer, e) == -1)
			r = -1;
	}
	return r;
}

/* Running a command */

static char **
build_env(const struct sbx_manifest *m, const struct sbx_exec *x, unsigned uid)
{
	size_t cap = m->n_env + x->n_env + 8, n = 0, i, j;
	char **env = calloc(cap, sizeof *env), *s;
	const char *term = getenv("TERM");

	if (env == NULL)
		return NULL;
#define PUT(...) do { if (asprintf(&s, __VA_ARGS__) == -1) goto fail; env[n++] = s; } while (0)
	PUT("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	PUT("HOME=%s", uid == 0 ? "/root" : uid == 1000 ? "/home/sandbox" : "/");
	PUT("HOSTNAME=%s", m->sandbox_id);
	if (x->tty && term)
		PUT("TERM=%s", term);
	for (i = 0; i < m->n_env; i++)
		PUT("%s=%s", m->env[i].key, m->env[i].val);
	for (i = 0; i < x->n_env; i++)
		PUT("%s", x->env[i]);
#undef PUT
	/* Later entries win: drop earlier ones with the same name. */
	for (i = 0; i < n; i++) {
		size_t klen = strcspn(env[i], "=");

		for (j = i + 1; j < n; j++)
			if (strncmp(env[i], env[j], klen + 1) == 0) {
				free(env[i]);
				env[i] = NULL;
				break;
			}
	}
	for (i = j = 0; i < n; i++)
		if (env[i])
			env[j++] = env[i];
	env[j] = NULL;
	return env;
fail:
	while (n > 0)
		free(env[--n]);
	free(env);
	return NULL;
}

static size_t
writable_paths(const struct sbx_manifest *m, const char **w, size_t max)
{
	size_t n = 0, i;

	if (!m->read_only_root && n < max)
		w[n++] = "/";
	for (i = 0; i < m->n_mounts && n < max; i++)
		if (strcmp(m->mounts[i].mode, "rw") == 0)
			w[n++] = m->mounts[i].guest;
	for (i = 0; i < m->n_tmpfs && n < max; i++)
		w[n++] = m->tmpfs[i].guest;
	if (n + 2 <= max) {
		w[n++] = "/tmp";
		w[n++] = "/dev/shm";
	}
	return n;
}

/* Landlock for a run: the filesystem's rules, and with landlock_network the
 * TCP ports of allowed_egress to connect to and bind_ports to bind. */
static int
restrict_landlock(const struct sbx_manifest *m, const char **w, size_t max, struct sbx_err *e)
{
	unsigned connect[256], bind[256];
	struct sbx_landlock_net net = { connect, 0, bind, 0 };
	size_t i, j;

	for (i = 0; i < m->allowed_egress.n && net.n_connect < SBX_ARRAY_LEN(connect); i++) {
		unsigned port = (unsigned)strtoul(strrchr(m->allowed_egress.v[i], ':') + 1, NULL, 10);

		for (j = 0; j < net.n_connect && connect[j] != port; j++)
			;
		if (j == net.n_connect)
			connect[net.n_connect++] = port;
	}
	for (i = 0; i < m->security.bind_ports.n && i < SBX_ARRAY_LEN(bind); i++)
		bind[net.n_bind++] = (unsigned)strtoul(m->security.bind_ports.v[i], NULL, 10);
	return sbx_landlock_restrict(m->security.landlock ? w : NULL,
	    m->security.landlock ? writable_paths(m, w, max) : 0,
	    m->security.landlock_network == 1 ? &net : NULL, e);
}

int
sbx_ns_run_oom(struct sbx_err *e)
{
	if (sbx_write_str("/proc/self/oom_score_adj", "1000") == -1)
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "oom_score_adj");
	return 0;
}

/*
 * No core dumps (they would land in the sandbox's layer, or leak memory to
 * a host handler); open files bounded; the first to go when memory runs
 * out, before init (protect_init): a parked entry, outside the sandbox's
 * /proc, has done that before it joined (sbx_ns_run_oom).
 */
static void
run_limits(void)
{
	struct rlimit core0 = { 0, 0 }, nofile;

	setrlimit(RLIMIT_CORE, &core0);
	(void)sbx_write_str("/proc/self/oom_score_adj", "1000");
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
		if (nofile.rlim_max > SBX_NOFILE_MAX)
			nofile.rlim_max = SBX_NOFILE_MAX;
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
}

/* The caller's word that the command may start (its audit line is on disk
 * then); nothing of the command has run yet. */
static int
run_wait_go(int gofd, struct sbx_err *e)
{
	ssize_t n;
	char c;

	while ((n = read(gofd, &c, 1)) == -1 && errno == EINTR)
		;
	if (n != 1)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "the run was called off before it started");
	close(gofd);
	return 0;
}

int
sbx_ns_confine(const struct sbx_manifest *m, unsigned uid, unsigned gid, const char *workdir,
    const struct sbx_seccomp_prog *prog, struct sbx_err *e)
{
	const char *w[64];

	run_limits();
	if (sbx_caps_become(uid, gid, !sbx_rt_bool(m, "rootless"), m->security.capabilities.v,
	    m->security.capabilities.n, e) == -1)
		return -1;
	if (workdir != NULL && chdir(workdir) == -1)
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "workdir %s", workdir);
	if (m->security.no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "no_new_privs");
	if ((m->security.landlock || m->security.landlock_network == 1) &&
	    restrict_landlock(m, w, SBX_ARRAY_LEN(w), e) == -1)
		return -1;
	/* Last: from here on, only the profile's calls work. */
	return sbx_seccomp_load_program(prog, e);
}

static void __attribute__((noreturn))
run_child(const struct sbx_manifest *m, const struct sbx_exec *x, int initfd, int nsflags,
    int cgfds[SBX_CG_NCTRL], int errfd, int ttysock, int gofd, const struct sbx_seccomp_prog *prog)
{
	struct sbx_ns_child_err ce = { 0 };
	unsigned uid, gid;
	char **env;
	int i;
	extern char **environ;

	if (sbx_exec_stdio(x, &ce.e) == -1)
		goto fail;
	for (i = 0; i < SBX_CG_NCTRL; i++)
		if (cgfds[i] != -1 && (sbx_write_all(cgfds[i], "0", 1) == -1 || close(cgfds[i]))) {
			sbx_err_sys(&ce.e, SBX_EX_RUNFAIL, "join the run's cgroup");
			goto fail;
		}
	/* All at once, through init's pidfd: the kernel checks them all first. */
	if (setns(initfd, nsflags) == -1) {
		sbx_err_sys(&ce.e, SBX_EX_RUNFAIL, "join the sandbox's namespaces");
		goto fail;
	}
	close(initfd);
	if (chdir("/") == -1) {
		sbx_err_sys(&ce.e, SBX_EX_RUNFAIL, "chdir /");
		goto fail;
	}
	/* Tests hold a run here: in the sandbox's namespaces, not confined yet. */
	sbx_pause_point("run-joined");
	/* A session of its own: with no controlling terminal, the command cannot
	 * TIOCSTI into the caller's terminal even where seccomp would let it. */
	if (x->tty) {
		if (sbx_pty_child(ttysock, &ce.e) == -1)
			goto fail;
	} else if (setsid() == -1) {
		sbx_err_sys(&ce.e, SBX_EX_RUNFAIL, "setsid");
		goto fail;
	}
	if (ttysock != -1)
		close(ttysock);
	sbx_manifest_user_parse(x->user ? x->user : m->user, &uid, &gid);
	if ((env = build_env(m, x, uid)) == NULL) {
		sbx_err_set(&ce.e, SBX_EX_RUNFAIL, "out of memory");
		goto fail;
	}
	if (sbx_ns_confine(m, uid, gid, x->workdir ? x->workdir : m->workdir, prog,
	    &ce.e) == -1)
		goto fail;
	if (run_wait_go(gofd, &ce.e) == -1)
		goto fail;
	/* Nothing of the caller's but stdio crosses: whatever else it left open
	 * (a file, a directory of the host) closes with the exec. */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) == -1) {
		sbx_err_sys(&ce.e, SBX_EX_RUNFAIL, "close the caller's descriptors");
		goto fail;
	}
	environ = env;
	execvp(x->argv[0], x->argv);
	ce.stage = 1;
	ce.err = errno;
	snprintf(ce.e.msg, sizeof ce.e.msg, "%s: %s", x->argv[0], strerror(errno));
	ce.e.code = errno == ENOENT ? SBX_EX_NOTFOUND : SBX_EX_NOEXEC;
fail:
	/* Whatever failed in setting up (caps, IDs, Landlock...), it is sbx's
	 * failure: 125, never a status the command could have meant. */
	if (ce.stage == 0)
		ce.e.code = SBX_EX_RUNFAIL;
	sbx_write_all(errfd, &ce, sizeof ce);
	_exit(ce.e.code);
}

static pid_t relay_target;

static void
relay_signal(int sig)
{
	if (relay_target > 0)
		kill(relay_target, sig);
}

/*
 * Rootless runs: join the user and PID namespaces, fork the command, and pass
 * its fate on as our own, so the caller sees the command's status. The command
 * dies with us (PDEATHSIG), which is how a timeout reaches it without a cgroup.
 */
static void __attribute__((noreturn))
relay_child(const struct sbx_manifest *m, const struct sbx_exec *x, int initfd, int nsflags,
    int cgfds[SBX_CG_NCTRL], int errfd, int ttysock, int gofd, const struct sbx_seccomp_prog *prog)
{
	struct sbx_ns_child_err ce = { 0 };
	struct sigaction sa = { 0 };
	struct rlimit core0 = { 0, 0 };
	int status;
	pid_t pid;

	if (setns(initfd, CLONE_NEWUSER | CLONE_NEWPID) == -1) {
		sbx_err_sys(&ce.e, SBX_EX_RUNFAIL, "join the sandbox's user and pid namespaces");
		ce.e.code = SBX_EX_RUNFAIL;
		sbx_write_all(errfd, &ce, sizeof ce);
		_exit(SBX_EX_RUNFAIL);
	}
	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() == 1)
			_exit(SBX_EX_RUNFAIL);
		run_child(m, x, initfd, nsflags & ~(CLONE_NEWUSER | CLONE_NEWPID), cgfds, errfd,
		    ttysock, gofd, prog);
	}
	/* Nothing of the caller's but what the command needs: a pipe end kept
	 * here (a captured run's stdin, a copy's stream) would never close. */
	syscall(SYS_close_range, 3, ~0U, 0);
	relay_target = pid;
	sa.sa_handler = relay_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			_exit(SBX_EX_RUNFAIL);
	if (WIFSIGNALED(status)) {
		setrlimit(RLIMIT_CORE, &core0);
		signal(WTERMSIG(status), SIG_DFL);
		kill(getpid(), WTERMSIG(status));
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : SBX_EX_RUNFAIL);
}

/* Close *fd if open, and mark it closed. */
static void
close_fd(int *fd)
{
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

/* A pidfd of the sandbox's init, which the runs join the namespaces through. */
static int
open_init(const struct sbx_manifest *m, struct sbx_err *e)
{
	long long pid = sbx_rt_int(m, "pid");
	int fd = pid > 0 ? (int)syscall(SYS_pidfd_open, (pid_t)pid, 0) : -1;

	if (fd == -1 && pid > 0 && errno != ESRCH)
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "the sandbox's init %lld", pid);
	/* Its PID may belong to another process by now: the pidfd pins whichever
	 * it is, then the start time tells. */
	if (fd == -1 || !ns_alive(m)) {
		if (fd != -1)
			close(fd);
		return sbx_err_set(e, SBX_EX_RUNFAIL, "the sandbox's init is gone (run sbx-gc)");
	}
	return fd;
}

/* The profile (compiled once per state root), and before it the guard of
 * flags (sbx_seccomp_guard). */
static int
profile_filter(const struct sbx_store *s, const struct sbx_manifest *m, unsigned flags,
    struct sbx_seccomp_prog *prog, struct sbx_err *e)
{
	struct sbx_seccomp_prog profile = { NULL, 0 };
	int r;

	if ((m->security.seccomp[0] == '/' ? kept_filter(s, m, &profile, e) :
	    sbx_seccomp_program(s, m->security.seccomp, &profile, e)) == -1) {
		e->code = SBX_EX_RUNFAIL;
		return -1;
	}
	r = sbx_seccomp_guard(&profile, flags, prog, e);
	free(profile.code);
	if (r == -1)
		e->code = SBX_EX_RUNFAIL;
	return r;
}

/* The run's seccomp program: the guard this sandbox and this run need. */
static int
run_filter(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_exec *x,
    struct sbx_seccomp_prog *prog, struct sbx_err *e)
{
	unsigned flags = sbx_seccomp_guard_flags(m);

	if (!x->tty && sbx_pty_stray(x->stdio))
		flags |= SBX_GUARD_NO_CTTY;
	return profile_filter(s, m, flags, prog, e);
}

/* The namespaces a run joins, PID aside. */
static int
run_nsflags(const struct sbx_manifest *m)
{
	return CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWCGROUP |
	    (host_network(m) ? 0 : CLONE_NEWNET);
}

/*
 * What the run used, from its cgroup (runcg, killed first: a run ends with
 * its command), or without one from its rusage. killed: the run's end has a
 * reason already (an OOM kill then does not replace it).
 */
static void
run_figures(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_cgroup *runcg,
    const struct sbx_cgroup *sbcg, long long oom_before, const struct rusage *ru, int killed,
    struct sbx_trace *t)
{
	struct sbx_cg_stats stats;
	char layer[1200];
	double used;

	if (sbx_store_path(s, m->sandbox_id, "layer", layer, sizeof layer, NULL) == 0 &&
	    (used = sbx_quota_used_mb(layer)) >= 0)
		t->disk_used_mb = used;
	if (runcg == NULL) {
		t->cpu_seconds_used = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
		    (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
		t->peak_memory_mb = (double)ru->ru_maxrss / 1024;
		return;
	}
	sbx_cgroup_kill(runcg, NULL);
	if (sbx_cgroup_stats(runcg, &stats, NULL) == -1)
		return;
	t->cpu_seconds_used = stats.cpu_s;
	t->peak_memory_mb = (double)stats.peak_memory_bytes / (1 << 20);
	t->disk_written_mb = (double)stats.io_write_bytes / (1 << 20);
	t->pids_limit_hits = stats.pids_max_events;
	/* On v1 an OOM under the sandbox's limit is counted where the limit is:
	 * compare the sandbox's counter too. */
	if (stats.oom_kills > 0 || (t->signal == SIGKILL && sbx_cgroup_oom_kills(sbcg) > oom_before)) {
		t->oom_killed = 1;
		if (!killed) {
			free(t->kill_reason);
			t->kill_reason = strdup("memory");
		}
	}
}

/* One run of ns_exec: what its steps made, for the next ones and the cleanup. */
struct ns_run {
	const struct sbx_store *s;
	const struct sbx_manifest *m;
	const struct sbx_exec *x;
	struct sbx_cgroup sbcg, runcg;
	long long oom_before;
	int have_cg, runcg_live, emptied, have_net, nsflags;
	struct sbx_relay_counts net_before;
	struct sbx_seccomp_prog prog;
	int initfd, cgfds[SBX_CG_NCTRL], errp[2], go[2], sp[2], selfpid;
	struct sbx_supervise sv;
};

/* At a deadline, the run's cgroup goes with the command. */
static void
run_kill_all(void *ctx)
{
	struct ns_run *r = ctx;

	if (r->have_cg)
		sbx_cgroup_kill(&r->runcg, NULL);
}

/* What run_child reported before it died: the command never ran. */
static int
run_failed(void *ctx, struct sbx_err *e)
{
	struct ns_run *r = ctx;
	struct sbx_ns_child_err ce;

	if (read(r->errp[0], &ce, sizeof ce) != (ssize_t)sizeof ce)
		return 0;
	*e = ce.e;
	return 1;
}

static void
run_init(struct ns_run *r, const struct sbx_store *s, const struct sbx_manifest *m,
    const struct sbx_exec *x)
{
	int i;

	memset(r, 0, sizeof *r);
	r->s = s;
	r->m = m;
	r->x = x;
	r->nsflags = run_nsflags(m);
	r->initfd = r->selfpid = -1;
	for (i = 0; i < SBX_CG_NCTRL; i++)
		r->cgfds[i] = -1;
	r->errp[0] = r->errp[1] = r->go[0] = r->go[1] = r->sp[0] = r->sp[1] = -1;
	sbx_supervise_init(&r->sv);
	r->sv.timeout_s = x->timeout_s;
	r->sv.kill_after_s = x->kill_after_s;
	r->sv.lifetime_s = x->lifetime_s;
	if (x->ctl > 2)
		r->sv.ctl = x->ctl;
	/* Init ends the sandbox at its deadline too (init_loop). */
	r->sv.expires_at = deadline_of(m);
	r->sv.ctx = r;
	r->sv.kill_all = run_kill_all;
	r->sv.failed = run_failed;
}

/* The sandbox's cgroup (1), none (0), or -1: through the host's layout as
 * a runner's worker read it once (a), or read now. */
static int
run_cgroup_of(const struct sbx_manifest *m, struct sbx_exec_ahead *a, struct sbx_cgroup *cg,
    struct sbx_err *e)
{
	struct sbx_cg_host h;

	if (a == NULL)
		return cgroup_of(m, &h, cg, e);
	if (sbx_rt_str(m, "cgroup") == NULL)
		return 0;
	if (!a->have_host) {
		if (sbx_cgroup_host(&a->host, e) == -1)
			return -1;
		a->have_host = 1;
	}
	return sbx_cgroup_from_spec(&a->host, sbx_rt_str(m, "cgroup"), cg, e) == -1 ? -1 : 1;
}

/* The sandbox to join: its init, and its cgroup if it has one. */
static int
run_join(struct ns_run *r, struct sbx_err *e)
{
	const struct sbx_manifest *m = r->m;
	const struct sbx_exec *x = r->x;

	if (sbx_rt_bool(m, "rootless") && x->user != NULL) {
		unsigned uid, gid;

		if (sbx_manifest_user_parse(x->user, &uid, &gid) == 0 && (uid != 0 || gid != 0))
			return sbx_err_set(e, SBX_EX_RUNFAIL, "--user %s: a rootless sandbox maps "
			    "one ID, yours (host uid %lld, gid %lld), as 0:0 inside; there is no "
			    "user %u in it", x->user, sbx_rt_int(m, "uid_base"),
			    sbx_rt_int(m, "gid_base"), uid);
	}
	if ((r->initfd = open_init(m, e)) == -1)
		return -1;
	return (r->have_cg = run_cgroup_of(m, x->ahead, &r->sbcg, e)) == -1 ? -1 : 0;
}

/* A run's cgroup, named name below the sandbox's sbcg, made and opened
 * for the child to join (fds); on failure what was made is in runcg. */
static int
run_cgroup(const struct sbx_store *s, const struct sbx_manifest *m,
    const struct sbx_cgroup *sbcg, const char *name, struct sbx_cgroup *runcg,
    int fds[SBX_CG_NCTRL], struct sbx_err *e)
{
	if (sbx_cgroup_child(sbcg, name, runcg, e) == -1)
		return -1;
	sbx_crash_point("run-cgroup");
	/* v1's blkio throttle is not hierarchical: each run gets it too. */
	if ((runcg->version == 1 && io_throttle(s, m, runcg, e) == -1) ||
	    sbx_cgroup_open_join(runcg, fds, e) == -1)
		return -1;
	return 0;
}

/* Is cg a cgroup made just below parent, in each of its hierarchies? */
static int
just_below(const struct sbx_cgroup *cg, const struct sbx_cgroup *parent)
{
	size_t n;
	int i;

	if (cg->version != parent->version)
		return 0;
	for (i = 0; i < SBX_CG_NCTRL; i++) {
		n = strlen(parent->path[i]);
		if (n == 0 ? cg->path[i][0] != '\0' : strncmp(cg->path[i], parent->path[i], n) != 0 ||
		    cg->path[i][n] != '/' || strchr(cg->path[i] + n + 1, '/') != NULL)
			return 0;
	}
	return 1;
}

static void
close_fds(int fds[SBX_CG_NCTRL])
{
	int i;

	for (i = 0; i < SBX_CG_NCTRL; i++)
		close_fd(&fds[i]);
}

/* The next run's cgroup made ahead, closed and removed. */
static void
ahead_drop(struct sbx_exec_ahead *a)
{
	close_fds(a->next_fds);
	sbx_cgroup_destroy(&a->next, NULL);
	a->have_next = 0;
}

/* The run's cgroup made ahead, taken when there is one for this sandbox
 * (and still there): 1; else 0, and the run makes its own. */
static int
ahead_take(struct ns_run *r)
{
	struct sbx_exec_ahead *a = r->x->ahead;
	struct stat st;

	if (a == NULL || !a->have_next)
		return 0;
	if (!just_below(&a->next, &r->sbcg) || stat(a->next.path[0][0] ? a->next.path[0] :
	    a->next.path[SBX_CG_FREEZER], &st) == -1) {
		ahead_drop(a);
		return 0;
	}
	a->have_next = 0;
	r->runcg = a->next;
	memcpy(r->cgfds, a->next_fds, sizeof r->cgfds);
	return 1;
}

/* The worker's parked entry (ns_park.c), made again when the one it has is
 * gone or made for another key. */
static void
park_ahead(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_exec_ahead *a)
{
	struct sbx_seccomp_prog prog = { NULL, 0 };
	unsigned char key[32];
	struct sbx_err e;
	int initfd;

	/* A one-shot's sandbox runs one command: an entry would never serve. */
	if (!sbx_ns_park_can(m) || m->rt.one_shot) {
		sbx_ns_park_drop(a);
		return;
	}
	/* Not before this worker's first run, unless its sandbox waits in a
	 * warm pool: one run once would pay for it and never use it, and its
	 * making would compete with that run; a pool's member has the time,
	 * and its claimer's first run takes it. */
	if ((a->runs == 0 && m->status != SBX_STATUS_POOLED) || sbx_ns_park_kept(m, a))
		return;
	sbx_ns_park_key(m, key);
	if ((initfd = open_init(m, &e)) == -1)
		return;
	if (profile_filter(s, m, sbx_seccomp_guard_flags(m), &prog, &e) == 0)
		(void)sbx_ns_park_make(s, m, initfd, run_nsflags(m), &prog, key, a, &e);
	free(prog.code);
	close(initfd);
}

/*
 * The driver's ahead: the last run's cgroup (emptied by its run) removed,
 * and the next one's made, named after the worker and a count (the last
 * one's is still there while the next is made), and opened; the worker's
 * parked entry kept, or made again.
 */
static void
ns_ahead(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_exec_ahead *a)
{
	struct sbx_cgroup sbcg;
	char name[64];
	int i;

	if (a->have_spent) {
		sbx_cgroup_destroy(&a->spent, NULL);
		a->have_spent = 0;
	}
	if (m == NULL) {
		sbx_ns_park_drop(a);
		if (a->have_next)
			ahead_drop(a);
		return;
	}
	park_ahead(s, m, a);
	if (a->have_next)
		return;
	for (i = 0; i < SBX_CG_NCTRL; i++)
		a->next_fds[i] = -1;
	if (run_cgroup_of(m, a, &sbcg, NULL) != 1)
		return;
	snprintf(name, sizeof name, "run-%ld.%u", (long)getpid(), a->seq++);
	if (run_cgroup(s, m, &sbcg, name, &a->next, a->next_fds, NULL) == -1)
		ahead_drop(a);
	else
		a->have_next = 1;
}

/* The run's cgroup, its counters before, its seccomp program, and the
 * channels to the child. */
static int
run_prepare(struct ns_run *r, struct sbx_err *e)
{
	char name[64];

	if (r->have_cg) {
		/* Live from here: what a failure made is removed with the rest. */
		r->runcg_live = 1;
		if (!ahead_take(r)) {
			snprintf(name, sizeof name, "run-%ld", (long)getpid());
			if (run_cgroup(r->s, r->m, &r->sbcg, name, &r->runcg, r->cgfds, e) == -1)
				return -1;
		}
		r->oom_before = sbx_cgroup_oom_kills(&r->sbcg);
	}
	if (sbx_net_wanted(r->m)) {
		if (sbx_net_counts(r->s, r->m, 1, &r->net_before, e) == -1)
			return -1;
		r->have_net = 1;
	}
	if (pipe2(r->errp, O_CLOEXEC) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->go) == -1 ||
	    (r->x->tty && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->sp) == -1))
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "pipe");
	return 0;
}

/* No thread but the caller (/proc/self/task holds ., .. and one a thread). */
static int
single_threaded(void)
{
	struct stat st;

	return stat("/proc/self/task", &st) == 0 && st.st_nlink == 3;
}

/* In the child: our ends of the channels close, the child's stay. */
static void
run_child_fds(struct ns_run *r)
{
	close(r->errp[0]);
	close(r->go[1]);
	if (r->sp[0] != -1)
		close(r->sp[0]);
}

/* The command's process pid, made: our ends of its channels closed, and
 * it handed to the loop. After a failure no child is left. */
static int
run_started(struct ns_run *r, pid_t pid, struct sbx_err *e)
{
	int i;

	close_fd(&r->errp[1]);
	close_fd(&r->go[0]);
	for (i = 0; i < SBX_CG_NCTRL; i++)
		close_fd(&r->cgfds[i]);
	close_fd(&r->sp[1]);
	sbx_crash_point("run-forked");
	return sbx_supervise_adopt(&r->sv, pid, e);
}

static void
free_env(char **env)
{
	size_t i;

	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

/* The command started by the worker's parked entry (ns_park.c), when it has
 * one that serves this run: 0, or -1 with e set; 1: none, nothing started,
 * and the run forks its own. */
static int
run_parked(struct ns_run *r, struct sbx_err *e)
{
	const struct sbx_exec *x = r->x;
	unsigned uid, gid;
	char **env;
	pid_t pid;

	if (!sbx_ns_park_fits(r->m, x, x->ahead))
		return 1;
	sbx_manifest_user_parse(r->m->user, &uid, &gid);
	if ((env = build_env(r->m, x, uid)) == NULL)
		return 1;
	pid = sbx_ns_park_start(x->ahead, x->argv, env, x->workdir ? x->workdir : r->m->workdir,
	    x->umask, x->stdio, r->cgfds, r->errp[1], r->go[0]);
	free_env(env);
	return pid <= 0 ? 1 : run_started(r, pid, e);
}

/* The command's process, forked: it joins the sandbox and confines itself. */
static int
run_fork(struct ns_run *r, struct sbx_err *e)
{
	const struct sbx_manifest *m = r->m;
	sigset_t held;
	pid_t pid;
	int i, placed = 0;

	/* Compiled once per state root, not in every run's child. */
	if (run_filter(r->s, r->m, r->x, &r->prog, e) == -1)
		return -1;
	/*
	 * The child is visible in the sandbox's PID namespace from its birth,
	 * and holds our privileges, descriptors and executable until it has
	 * confined itself and exec'd: non-dumpable, no process of the sandbox
	 * (even one given CAP_SYS_PTRACE) can reach it through /proc meanwhile.
	 * The exec makes the command dumpable again as its credentials allow.
	 */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	sbx_supervise_fork_begin(&held);
	if (sbx_rt_bool(m, "rootless")) {
		/* Without root, joining the PID namespace needs its user namespace
		 * first, and there is no way back: a child of ours does both. */
		if ((pid = fork()) == 0) {
			sbx_supervise_fork_child(&held);
			run_child_fds(r);
			relay_child(m, r->x, r->initfd, r->nsflags, r->cgfds, r->errp[1], r->sp[1],
			    r->go[0], &r->prog);
		}
	} else {
		/* Only the child goes into the sandbox's PID namespace: anything we
		 * fork later (a sanitizer's helper thread, say) stays out. */
		if ((r->selfpid = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC)) == -1 ||
		    setns(r->initfd, CLONE_NEWPID) == -1) {
			sbx_supervise_fork_end(&held);
			return sbx_err_sys(e, SBX_EX_RUNFAIL, "join the sandbox's pid namespace");
		}
		/* Made in the run's cgroup where that works (sbx_cgroup_clone);
		 * a caller with threads (a capture's) forks with glibc's care. */
		if (single_threaded())
			pid = sbx_cgroup_clone(&r->runcg, 0, &placed);
		else
			pid = fork();
		if (pid == 0) {
			sbx_supervise_fork_child(&held);
			for (i = 0; placed && i < SBX_CG_NCTRL; i++)
				close_fd(&r->cgfds[i]);
			run_child_fds(r);
			run_child(m, r->x, r->initfd, r->nsflags, r->cgfds, r->errp[1], r->sp[1],
			    r->go[0], &r->prog);
		}
		if (setns(r->selfpid, CLONE_NEWPID) == -1 && pid > 0) {
			sbx_err_sys(e, SBX_EX_RUNFAIL, "leave the sandbox's pid namespace");
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			sbx_supervise_fork_end(&held);
			return -1;
		}
	}
	sbx_supervise_fork_end(&held);
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (pid == -1)
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "fork");
	return run_started(r, pid, e);
}

/* The go-ahead to the child, the terminal it sends back, the loop, and
 * what the run used. */
static int
run_watch(struct ns_run *r, struct sbx_exec_result *res, struct sbx_err *e)
{
	const struct sbx_exec *x = r->x;
	int ret;

	/* While the child sets itself up, the caller does its part (the run-start
	 * line, synced); then the command may exec. A child already gone just
	 * misses the word: its error comes through errp. */
	if (x->starting != NULL)
		x->starting(x->starting_ctx);
	(void)send(r->go[1], "g", 1, MSG_NOSIGNAL);
	close_fd(&r->go[1]);
	sbx_supervise_catch(&r->sv);
	if (x->tty && (r->sv.master = sbx_pty_recv(r->sp[0], e)) == -1) {
		kill(r->sv.pid, SIGKILL);
		waitpid(r->sv.pid, NULL, 0);
		sbx_supervise_release(&r->sv);
		return -1;
	}
	ret = sbx_supervise_run(&r->sv, &res->status, &res->trace, e);
	run_figures(r->s, r->m, r->have_cg ? &r->runcg : NULL, &r->sbcg, r->oom_before, &r->sv.ru,
	    res->trace.timed_out || res->trace.kill_reason != NULL, &res->trace);
	r->emptied = r->have_cg;
	if (r->have_net) {
		struct sbx_relay_counts after;

		if (sbx_net_counts(r->s, r->m, -1, &after, NULL) == 0) {
			sbx_net_trace(&r->net_before, &after, &res->trace);
			sbx_relay_counts_free(&after);
		}
	}
	sbx_supervise_release(&r->sv);
	return ret;
}

static void
run_cleanup(struct ns_run *r)
{
	int i;

	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	sbx_relay_counts_free(&r->net_before);
	free(r->prog.code);
	close_fd(&r->initfd);
	for (i = 0; i < SBX_CG_NCTRL; i++)
		close_fd(&r->cgfds[i]);
	for (i = 0; i < 2; i++) {
		close_fd(&r->errp[i]);
		close_fd(&r->go[i]);
		close_fd(&r->sp[i]);
	}
	close_fd(&r->sv.master);
	close_fd(&r->sv.pidfd);
	close_fd(&r->selfpid);
	/* A run's cgroup never outlives it, whatever went wrong; one its
	 * figures emptied may wait for the worker to remove it after the
	 * answer (ns_ahead). */
	if (r->runcg_live && r->emptied && r->x->ahead != NULL && !r->x->ahead->have_spent) {
		r->x->ahead->spent = r->runcg;
		r->x->ahead->have_spent = 1;
	} else if (r->runcg_live) {
		sbx_cgroup_destroy(&r->runcg, NULL);
	}
}

/* Join the sandbox, fork the command into it, hand it to the supervision
 * loop, collect what it used. */
static int
ns_exec(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_exec *x,
    struct sbx_exec_result *res, struct sbx_err *e)
{
	struct ns_run r;
	int ret = -1, p;

	sbx_trace_init(&res->trace);
	run_init(&r, s, m, x);
	if (x->ahead != NULL)
		x->ahead->runs++;
	if (run_join(&r, e) == -1) {
		close_fd(&r.initfd);
		return -1;
	}
	if (run_prepare(&r, e) == 0) {
		sbx_supervise_start(&r.sv, &res->trace);
		if ((p = run_parked(&r, e)) == 0 || (p == 1 && run_fork(&r, e) == 0))
			ret = run_watch(&r, res, e);
	}
	run_cleanup(&r);
	if (ret == -1 && res->status == 0)
		res->status = SBX_EX_RUNFAIL;
	return ret;
}

/*
 * Does the sandbox run nothing but its init? No other process of the host
 * is in its PID namespace (a run's command is the child of sbx-run, outside
 * it, not of init). Without a cgroup to ask, /proc is.
 */
static int
only_init(const struct sbx_manifest *m)
{
	char p[96], mine[64], theirs[64];
	struct dirent *de;
	ssize_t n;
	DIR *d;
	int alone = 1;

	if (!ns_alive(m))
		return 1;
	snprintf(p, sizeof p, "/proc/%lld/ns/pid", sbx_rt_int(m, "pid"));
	if ((n = readlink(p, mine, sizeof mine - 1)) <= 0 || (d = opendir("/proc")) == NULL)
		return 0;
	mine[n] = '\0';
	while (alone && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || atoll(de->d_name) == sbx_rt_int(m, "pid"))
			continue;
		snprintf(p, sizeof p, "/proc/%s/ns/pid", de->d_name);
		if ((n = readlink(p, theirs, sizeof theirs - 1)) > 0) {
			theirs[n] = '\0';
			alone = strcmp(mine, theirs) != 0;
		}
	}
	closedir(d);
	return alone;
}

static int
ns_freeze(const struct sbx_manifest *m, int frozen, struct sbx_err *e)
{
	struct sbx_cg_host h;
	struct sbx_cgroup cg;

	switch (cgroup_of(m, &h, &cg, e)) {
	case -1:
		return -1;
	case 0:
		/* Without a cgroup (rootless, none delegated) nothing can be frozen;
		 * a sandbox running nothing but init has nothing to freeze. The
		 * caller holds its lock, so no run starts meanwhile. */
		if (only_init(m))
			return 0;
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "freezing needs the sandbox's cgroup, "
		    "and this sandbox has none (rootless, no delegated cgroup) while processes "
		    "run in it");
	}
	return sbx_cgroup_freeze(&cg, frozen, e);
}

const struct sbx_driver sbx_driver_namespace = {
	.name = "namespace",
	.check = ns_check,
	.create = ns_create,
	.exec = ns_exec,
	.alive = ns_alive,
	.freeze = ns_freeze,
	.destroy = ns_destroy,
	.halt = ns_halt,
	.ahead = ns_ahead,
	.capture = sbx_ns_capture,
	.memory_open = sbx_ns_memory_open,
	.memory_used = sbx_ns_memory_used,
	.memory_pressure = sbx_ns_memory_pressure,
	.usage = sbx_ns_usage,
	.extend = ns_extend,
	.repin = sbx_ns_repin,
	.repinned = sbx_net_repinned,
	.sweep = sbx_ns_sweep,
	/* No checkpoint or restore: CRIU is what this tier would need. */
};
