/* SPDX-License-Identifier: MIT */
/*
 * sbx-agent: the microVM tier's guest agent, the guest's PID 1 once its
 * initramfs has put the root in place (contrib/guest/init). It serves the
 * host over the virtio-serial ports sbx.0 ... sbx.3 (lib/tier/vm_proto.h),
 * one session per port at a time: a command run as the host asks (its
 * user, directory, environment, streams or a terminal), its signals and
 * resizes, its exit status and resource use. The commands run in cgroups of
 * the guest's own (sbx/run-N below one sbx cgroup with the sandbox's pids
 * and memory limits, a new one for each run); a run's leftovers die with
 * it. It freezes the sandbox's processes for snapshots, keeping runs aside
 * whose host went away meanwhile (vm_proto.h, FREEZE), and with --pack DIR
 * writes the writable layer as a tar archive for the host. It reaps every
 * orphan, as a PID 1 must. Static: nothing of the guest's root is needed.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <linux/random.h>
#include <linux/route.h>
#include <linux/ipv6_route.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "vm_proto.h"

#define CG "/sys/fs/cgroup"
#define CG_SBX CG "/sbx"

struct queue {
	char *buf;
	size_t len;
};

struct session {
	int port;               /* the port's descriptor */
	int connected;
	char *in;               /* a frame being read */
	size_t in_len;
	pid_t pid;              /* the command (0: none) */
	int status, exited;
	struct rusage ru;
	int in_fd, out_fd, err_fd; /* to and from the command; -1: closed */
	int tty;
	int system;             /* VM_EXEC_SYSTEM: sbx's own, never kept aside */
	int stdin_eof;
	struct queue q;         /* stdin not yet written */
	long long oom_before, pids_before, run_pids_before, cpu_before;
	char cg[64];
};

static struct session ss[VM_CHANNELS];
extern char **environ;

/* Runs kept aside while frozen (FREEZE): their command, its output (read
 * and dropped), its cgroup; detached once a clone's thaw let them go on. */
#define MAX_KEPT 16
struct kept {
	pid_t pid;
	int out_fd, err_fd;
	int detached;
	char cg[64];
};
static struct kept kept[MAX_KEPT];
static int frozen;
/* Run cgroups whose processes were killed, to remove once they are gone. */
#define MAX_DOOMED 256
static char doomed[MAX_DOOMED][64];
/* the runs' cgroups, run-N (the sandbox's) and system-N (sbx's own) apart:
 * a pool's member warmed by one of sbx's is a fresh VM's to its runs */
static unsigned run_seq, system_seq;
/* /dev/urandom, for reseed */
static int urandom_fd = -1;

static void
say(const char *fmt, const char *arg)
{
	int fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd != -1) {
		dprintf(fd, "sbx-agent: ");
		dprintf(fd, fmt, arg);
		dprintf(fd, "\n");
		close(fd);
	}
}

static int
write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r;

	if (fd == -1)
		return -1;
	r = vm_write_all(fd, text, strlen(text));
	close(fd);
	return r;
}

/* The number after key in a "key value" file (-1: none). */
static long long
read_key(const char *path, const char *key)
{
	char buf[4096], *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t kl = strlen(key);

	if (fd == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (p = buf; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, kl) == 0 && (p[kl] == ' ' || p[kl] == ':'))
			return strtoll(p + kl + 1 + (p[kl] == ':'), NULL, 10);
	return -1;
}

static long long
read_num(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

/* The files a setup writes (etc_file): each bound at boot over the root's
 * own, empty until then, so that a setup, which a snapshot-boot or a
 * fork waits for, only rewrites them. Its unmount and mount took a
 * snapshot-boot's setup 9-34 ms of the guest's clock under TCG. */
enum { ETC_HOSTS, ETC_RESOLV };
static struct {
	const char *file, *copy;
	int bound;
} etc[] = {
	[ETC_HOSTS] = { "/etc/hosts", "/run/sbx-hosts", 0 },
	[ETC_RESOLV] = { "/etc/resolv.conf", "/run/sbx-resolv.conf", 0 },
};

/* The limits of the sandbox's cgroup a setup writes (cg_limit). */
enum { LIMIT_PIDS, LIMIT_MEMORY, LIMIT_MEMORY_HIGH, LIMITS };

static void
etc_bind(void)
{
	size_t i;
	int fd;

	for (i = 0; i < sizeof etc / sizeof etc[0]; i++) {
		if (access(etc[i].file, F_OK) == -1 ||
		    (fd = open(etc[i].copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1)
			continue;
		close(fd);
		etc[i].bound = mount(etc[i].copy, etc[i].file, NULL, MS_BIND, NULL) == 0;
	}
}

static void cg_limit(int limit, long long v);
static void boot_limits(void);

/*
 * path read into the page cache (read only: nothing of the root runs at
 * boot), and with interp, its ELF interpreter's path (PT_INTERP) there.
 */
static void
cache_file(const char *path, char *interp, size_t size)
{
	struct stat st;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, i;

	/* a regular file's only: a FIFO there would hold the boot */
	if (stat(path, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) == -1)
		return;
	/* at most 8 MiB of it: a shell or a libc is far less */
	readahead(fd, 0, st.st_size < (8 << 20) ? (size_t)st.st_size : (size_t)8 << 20);
	if (interp != NULL && pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof ph)
		for (i = 0; i < eh.e_phnum && i < 64; i++) {
			if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) !=
			    (ssize_t)sizeof ph)
				break;
			if (ph.p_type != PT_INTERP)
				continue;
			if (ph.p_filesz > 1 && ph.p_filesz < size &&
			    pread(fd, interp, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
				interp[ph.p_filesz - 1] = '\0';
			break;
		}
	close(fd);
}

/*
 * The root's /bin/sh, its ELF interpreter and the C library beside that
 * (glibc's libc.so.6; musl's interpreter is its library) read at boot:
 * saved in a boot snapshot's RAM, so that the first run of a VM started
 * from it (most are sh -c) reads them from no disk, through block and file
 * system code that TCG has not translated yet in that VM.
 */
static void
cache_shell(void)
{
	char interp[PATH_MAX] = "", real[PATH_MAX], *slash;

	cache_file("/bin/sh", interp, sizeof interp);
	if (interp[0] != '/')
		return;
	cache_file(interp, NULL, 0);
	if (realpath(interp, real) == NULL || (slash = strrchr(real, '/')) == NULL ||
	    (size_t)(slash - real) + sizeof "/libc.so.6" > sizeof real)
		return;
	memcpy(slash, "/libc.so.6", sizeof "/libc.so.6");
	cache_file(real, NULL, 0);
}

static void
setup_system(void)
{
	int i;

	mkdir("/dev/pts", 0755);
	mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620");
	unlink("/dev/ptmx");
	symlink("pts/ptmx", "/dev/ptmx");
	mkdir("/dev/shm", 01777);
	mount("shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
	mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=755");
	etc_bind();
	urandom_fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
	cache_shell();
	mount("cgroup2", CG, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	write_text(CG "/cgroup.subtree_control", "+cpu +memory +pids");
	/* The guest's RAM is small by design: an allocation is the memory
	 * limit's to refuse (an OOM kill, as on the host), not the heuristic's. */
	write_text("/proc/sys/vm/overcommit_memory", "1");
	mkdir(CG_SBX, 0755);
	write_text(CG_SBX "/cgroup.subtree_control", "+cpu +memory +pids");
	boot_limits();
	/* The loopback up: the guest's only network (it has no NIC). */
	if ((i = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) != -1) {
		struct ifreq ifr = { 0 };

		snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
		if (ioctl(i, SIOCGIFFLAGS, &ifr) == 0) {
			ifr.ifr_flags |= IFF_UP;
			ioctl(i, SIOCSIFFLAGS, &ifr);
		}
		close(i);
	}
}

/* The port named sbx.N, found by its name in sysfs. */
static int
open_port(int n)
{
	char want[16], path[300], name[32];
	struct dirent *d;
	DIR *dir;
	int fd = -1;

	if (n == VM_CTL)
		snprintf(want, sizeof want, "sbx.ctl");
	else
		snprintf(want, sizeof want, "sbx.%d", n);
	if ((dir = opendir("/sys/class/virtio-ports")) == NULL)
		return -1;
	while (fd == -1 && (d = readdir(dir)) != NULL) {
		int nf;
		ssize_t len;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/sys/class/virtio-ports/%s/name", d->d_name);
		if ((nf = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		len = read(nf, name, sizeof name - 1);
		close(nf);
		if (len <= 0)
			continue;
		name[len] = '\0';
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, want) != 0)
			continue;
		snprintf(path, sizeof path, "/dev/%s", d->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	closedir(dir);
	if (fd != -1) {
		/* SIGIO when the host connects or goes (virtio_console's fasync). */
		fcntl(fd, F_SETOWN, getpid());
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC);
	}
	return fd;
}

static void
close_fd(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

/* A run's cgroup: everything in it killed, the cgroup removed once empty. */
static void
cg_kill(char *cg)
{
	char path[96];
	int i;

	if (cg[0] == '\0')
		return;
	snprintf(path, sizeof path, "%s/cgroup.kill", cg);
	write_text(path, "1");
	for (i = 0; i < MAX_DOOMED; i++)
		if (doomed[i][0] == '\0') {
			memcpy(doomed[i], cg, sizeof doomed[i]);
			break;
		}
	cg[0] = '\0';
}

/* The doomed cgroups that are empty now, removed; whether any is left. */
static int
cg_sweep(void)
{
	int i, left = 0;

	for (i = 0; i < MAX_DOOMED; i++)
		if (doomed[i][0] != '\0') {
			if (rmdir(doomed[i]) == 0 || errno == ENOENT)
				doomed[i][0] = '\0';
			else
				left = 1;
		}
	return left;
}

/* The command and all it started, killed; its streams dropped. */
static void
session_end(struct session *s)
{
	if (s->pid > 0 && !s->exited) {
		kill(-s->pid, SIGKILL);
		kill(s->pid, SIGKILL);
	}
	cg_kill(s->cg);
	if (s->exited || s->pid <= 0)
		s->pid = 0;
	close_fd(&s->in_fd);
	close_fd(&s->out_fd);
	close_fd(&s->err_fd);
	free(s->q.buf);
	s->q.buf = NULL;
	s->q.len = 0;
	s->stdin_eof = 0;
	/* Still to be reaped: the reaper forgets it (pid stays, exited 0, no streams). */
	if (s->pid > 0)
		s->pid = -s->pid;
}

/* While frozen: s's running command kept aside, its port free (0), or -1. */
static int
keep_run(struct session *s)
{
	int k;

	if (!frozen || s->pid <= 0 || s->exited || s->system)
		return -1;
	for (k = 0; k < MAX_KEPT && (kept[k].pid != 0 || kept[k].out_fd != -1 ||
	    kept[k].err_fd != -1); k++)
		;
	if (k == MAX_KEPT)
		return -1;
	kept[k].pid = s->pid;
	kept[k].detached = 0;
	kept[k].out_fd = s->out_fd;
	kept[k].err_fd = s->err_fd;
	memcpy(kept[k].cg, s->cg, sizeof kept[k].cg);
	s->out_fd = s->err_fd = -1;
	s->cg[0] = '\0';
	s->pid = 0;
	close_fd(&s->in_fd);
	free(s->q.buf);
	s->q.buf = NULL;
	s->q.len = 0;
	s->stdin_eof = 0;
	return 0;
}

/* The host side of s went away, or a new session begins: its run ends
 * with it, unless frozen (keep_run). */
static void
session_gone(struct session *s)
{
	if (keep_run(s) == -1)
		session_end(s);
}

/* A kept run killed with all it started. */
static void
kept_kill(struct kept *k)
{
	if (k->pid > 0) {
		kill(-k->pid, SIGKILL);
		kill(k->pid, SIGKILL);
	}
	cg_kill(k->cg);
}

static int
send_frame(struct session *s, uint32_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	if (!s->connected)
		return -1;
	if (vm_send(s->port, type, a, alen, b, blen) == -1) {
		session_gone(s);
		s->connected = 0;
		return -1;
	}
	return 0;
}

static void
fail(struct session *s, int32_t status, const char *msg)
{
	send_frame(s, VM_FAILED, &status, sizeof status, msg, strlen(msg));
}

/* The strings of an EXEC frame: count of them from *p, NUL-ended, not past end. */
static char **
strings(char **p, const char *end, uint32_t count)
{
	char **v;
	uint32_t i;

	if (count > 65536 || (v = calloc(count + 1, sizeof *v)) == NULL)
		return NULL;
	for (i = 0; i < count; i++) {
		char *z = memchr(*p, '\0', (size_t)(end - *p));

		if (z == NULL) {
			free(v);
			return NULL;
		}
		v[i] = *p;
		*p = z + 1;
	}
	return v;
}

static void
child(struct session *s, const struct vm_exec *x, const char *cwd, char **argv, char **env,
    int slave, int pin[2], int pout[2], int perr[2], int report)
{
	char pid[32], path[96];
	int err;

	sigset_t all;

	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	setsid();
	snprintf(pid, sizeof pid, "%d", getpid());
	snprintf(path, sizeof path, "%s/cgroup.procs", s->cg);
	write_text(path, pid);
	if (x->tty) {
		ioctl(slave, TIOCSCTTY, 0);
		dup2(slave, 0);
		dup2(slave, 1);
		dup2(slave, 2);
	} else {
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		dup2(perr[1], 2);
	}
	if (setgroups(0, NULL) == -1 || setresgid(x->gid, x->gid, x->gid) == -1 ||
	    setresuid(x->uid, x->uid, x->uid) == -1) {
		err = errno;
		(void)!write(report, &err, sizeof err);
		_exit(125);
	}
	if (chdir(cwd) == -1) {
		err = -errno;
		(void)!write(report, &err, sizeof err);
		_exit(126);
	}
	environ = env;
	execvp(argv[0], argv);
	err = errno;
	(void)!write(report, &err, sizeof err);
	_exit(err == ENOENT ? 127 : 126);
}

static void
do_exec(struct session *s, char *p, uint32_t len)
{
	struct vm_exec x;
	char *end = p + len, *cwd, **argv = NULL, **env = NULL, msg[300], path[96];
	int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 }, rep[2];
	int master = -1, slave = -1, err = 0;
	ssize_t n;
	pid_t pid;

	if (s->pid != 0)
		return fail(s, 125, "a command is running on this port");
	if (len < sizeof x)
		return fail(s, 125, "short EXEC");
	memcpy(&x, p, sizeof x);
	/* The child would freeze in the sandbox's cgroup before it execs, and
	 * this loop with it (it waits for the exec's report). */
	if (frozen && !(x.flags & VM_EXEC_SYSTEM))
		return fail(s, 125, "the sandbox is frozen (paused, or being snapshotted)");
	p += sizeof x;
	cwd = p;
	if ((p = memchr(p, '\0', (size_t)(end - p))) == NULL)
		return fail(s, 125, "EXEC without a directory");
	p++;
	if (x.argc == 0 || (argv = strings(&p, end, x.argc)) == NULL ||
	    (env = strings(&p, end, x.envc)) == NULL) {
		free(argv);
		return fail(s, 125, "EXEC with broken strings");
	}
	if (x.tty) {
		struct winsize ws = { (unsigned short)x.rows, (unsigned short)x.cols, 0, 0 };

		if ((master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1 ||
		    grantpt(master) == -1 || unlockpt(master) == -1 ||
		    (slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1) {
			snprintf(msg, sizeof msg, "no terminal: %s", strerror(errno));
			close_fd(&master);
			goto fail;
		}
		if (ws.ws_row)
			ioctl(master, TIOCSWINSZ, &ws);
	} else if (pipe2(pin, O_CLOEXEC) == -1 || pipe2(pout, O_CLOEXEC) == -1 ||
	    pipe2(perr, O_CLOEXEC) == -1) {
		snprintf(msg, sizeof msg, "pipes: %s", strerror(errno));
		goto fail;
	}
	if (pipe2(rep, O_CLOEXEC) == -1) {
		snprintf(msg, sizeof msg, "pipe: %s", strerror(errno));
		goto fail;
	}
	if (x.flags & VM_EXEC_SYSTEM)
		snprintf(s->cg, sizeof s->cg, CG "/system-%u", system_seq++);
	else
		snprintf(s->cg, sizeof s->cg, CG_SBX "/run-%u", run_seq++);
	if (mkdir(s->cg, 0755) == -1 && errno != EEXIST) {
		snprintf(msg, sizeof msg, "%s: %s", s->cg, strerror(errno));
		s->cg[0] = '\0';
		close_fd(&rep[0]);
		close_fd(&rep[1]);
		goto fail;
	}
	snprintf(path, sizeof path, "%s/memory.events", s->cg);
	s->oom_before = read_key(path, "oom_kill");
	s->pids_before = read_key(CG_SBX "/pids.events", "max");
	snprintf(path, sizeof path, "%s/pids.events", s->cg);
	s->run_pids_before = read_key(path, "max");
	snprintf(path, sizeof path, "%s/cpu.stat", s->cg);
	s->cpu_before = read_key(path, "usage_usec");
	if ((pid = fork()) == 0)
		child(s, &x, cwd, argv, env, slave, pin, pout, perr, rep[1]);
	close(rep[1]);
	if (pid == -1) {
		close(rep[0]);
		snprintf(msg, sizeof msg, "fork: %s", strerror(errno));
		goto fail;
	}
	n = read(rep[0], &err, sizeof err);
	close(rep[0]);
	s->pid = pid;
	s->exited = 0;
	s->tty = (int)x.tty;
	s->system = (x.flags & VM_EXEC_SYSTEM) != 0;
	if (x.tty) {
		close(slave);
		s->in_fd = master;
		s->out_fd = dup(master);
		s->err_fd = -1;
	} else {
		close(pin[0]);
		close(pout[1]);
		close(perr[1]);
		s->in_fd = pin[1];
		s->out_fd = pout[0];
		s->err_fd = perr[0];
	}
	fcntl(s->in_fd, F_SETFL, O_NONBLOCK);
	if (n == (ssize_t)sizeof err) {
		int32_t st = err == ENOENT ? 127 : 126;

		if (err < 0)
			snprintf(msg, sizeof msg, "%s: %s", cwd, strerror(-err));
		else
			snprintf(msg, sizeof msg, "%s: %s", argv[0], strerror(err));
		free(argv);
		free(env);
		/* The child exits by itself; its end is reaped and dropped. */
		send_frame(s, VM_FAILED, &st, sizeof st, msg, strlen(msg));
		session_end(s);
		return;
	}
	free(argv);
	free(env);
	{
		uint32_t upid = (uint32_t)pid;

		send_frame(s, VM_STARTED, &upid, sizeof upid, NULL, 0);
	}
	return;
fail:
	free(argv);
	free(env);
	close_fd(&slave);
	close_fd(&master);
	close_fd(&pin[0]);
	close_fd(&pin[1]);
	close_fd(&pout[0]);
	close_fd(&pout[1]);
	close_fd(&perr[0]);
	close_fd(&perr[1]);
	fail(s, 125, msg);
}

/* text as the file at dst: its copy in /run rewritten (etc_bind put it
 * over the root's own at boot). A root without the file keeps without it. */
static int
etc_file(int i, const char *text, size_t len)
{
	int fd;

	if (!etc[i].bound)
		return 0;
	if ((fd = open(etc[i].copy, O_WRONLY | O_TRUNC | O_CLOEXEC)) == -1)
		return -1;
	if (vm_write_all(fd, text, len) == -1) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int
sin_ioctl(int sk, unsigned long req, const char *ifname, const uint8_t a[4])
{
	struct ifreq ifr = { 0 };
	struct sockaddr_in sin = { .sin_family = AF_INET };

	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
	memcpy(&sin.sin_addr, a, 4);
	memcpy(&ifr.ifr_addr, &sin, sizeof sin);
	return ioctl(sk, req, &ifr);
}

/* <linux/ipv6.h>'s in6_ifreq (that header does not go with glibc's). */
struct agent_in6_ifreq {
	struct in6_addr addr;
	uint32_t prefixlen;
	int ifindex;
};

/*
 * IPv6 on the NIC, where the allow-list names IPv6 destinations: the
 * address given and nothing else (no link-local one, no autoconfiguration,
 * no duplicate detection to wait for: the host's end is the only other on
 * the link), and the default route through the host's end.
 */
static int
net6_setup(const struct vm_setup *st, const char *ifn)
{
	struct agent_in6_ifreq ifr6 = { 0 };
	struct in6_rtmsg rt = { 0 };
	static const char *const off[] = { "accept_dad", "accept_ra", "autoconf" };
	char path[96];
	size_t i;
	int sk, r = -1;

	snprintf(path, sizeof path, "/proc/sys/net/ipv6/conf/%s/addr_gen_mode", ifn);
	write_text(path, "1");
	for (i = 0; i < sizeof off / sizeof off[0]; i++) {
		snprintf(path, sizeof path, "/proc/sys/net/ipv6/conf/%s/%s", ifn, off[i]);
		write_text(path, "0");
	}
	snprintf(path, sizeof path, "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifn);
	write_text(path, "0");
	if ((ifr6.ifindex = (int)if_nametoindex(ifn)) == 0 ||
	    (sk = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memcpy(&ifr6.addr, st->addr6, 16);
	ifr6.prefixlen = st->prefix6;
	if (ioctl(sk, SIOCSIFADDR, &ifr6) == -1 && errno != EEXIST)
		goto out;
	memcpy(&rt.rtmsg_gateway, st->gw6, 16);
	rt.rtmsg_flags = RTF_UP | RTF_GATEWAY;
	rt.rtmsg_metric = 1;
	rt.rtmsg_ifindex = ifr6.ifindex;
	if (ioctl(sk, SIOCADDRT, &rt) == -1 && errno != EEXIST)
		goto out;
	r = 0;
out:
	close(sk);
	return r;
}

/*
 * The NIC as the host's setup says: the MAC and address given, up, the
 * default route; IPv6 only where the setup gives an address for it
 * (nothing but its own addresses may leave it). Down first, IPv6 off: a
 * clone's interface held its parent's addresses, routes and neighbours,
 * which go with it.
 */
static int
net_setup(const struct vm_setup *st)
{
	const char *ifn = "eth0";
	struct ifreq ifr = { 0 };
	struct rtentry rt = { 0 };
	struct sockaddr_in *sin;
	uint8_t mask[4] = { 0 };
	uint32_t m = st->prefix4 ? htonl(~0u << (32 - st->prefix4)) : 0;
	int sk, r = -1;

	memcpy(mask, &m, 4);
	write_text("/proc/sys/net/ipv6/conf/eth0/disable_ipv6", "1");
	if ((sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifn);
	if (ioctl(sk, SIOCGIFFLAGS, &ifr) == -1)
		goto out;
	ifr.ifr_flags &= ~IFF_UP;
	if (ioctl(sk, SIOCSIFFLAGS, &ifr) == -1)
		goto out;
	ifr.ifr_hwaddr.sa_family = 1;   /* ARPHRD_ETHER */
	memcpy(ifr.ifr_hwaddr.sa_data, st->mac, 6);
	if (ioctl(sk, SIOCSIFHWADDR, &ifr) == -1 ||
	    sin_ioctl(sk, SIOCSIFADDR, ifn, st->addr4) == -1 ||
	    sin_ioctl(sk, SIOCSIFNETMASK, ifn, mask) == -1 ||
	    ioctl(sk, SIOCGIFFLAGS, &ifr) == -1)
		goto out;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(sk, SIOCSIFFLAGS, &ifr) == -1)
		goto out;
	sin = (struct sockaddr_in *)&rt.rt_dst;
	sin->sin_family = AF_INET;
	sin = (struct sockaddr_in *)&rt.rt_genmask;
	sin->sin_family = AF_INET;
	sin = (struct sockaddr_in *)&rt.rt_gateway;
	sin->sin_family = AF_INET;
	memcpy(&sin->sin_addr, st->gw4, 4);
	rt.rt_flags = RTF_UP | RTF_GATEWAY;
	rt.rt_dev = (char *)ifn;
	if (ioctl(sk, SIOCADDRT, &rt) == -1 && errno != EEXIST)
		goto out;
	r = st->net6 ? net6_setup(st, ifn) : 0;
out:
	close(sk);
	return r;
}

/*
 * A limit of the sandbox's cgroup (v <= 0: none), written only where it
 * changes: under TCG a write costs a setup milliseconds. What was written
 * lives in the agent's memory, which a snapshot keeps with the cgroup.
 */
static void
cg_limit(int limit, long long v)
{
	static const char *const file[LIMITS] = { [LIMIT_PIDS] = CG_SBX "/pids.max",
		[LIMIT_MEMORY] = CG_SBX "/memory.max", [LIMIT_MEMORY_HIGH] = CG_SBX "/memory.high" };
	static long long now[LIMITS];   /* 0: max, as the cgroup was made */
	char num[32];

	if (v < 0)
		v = 0;
	if (now[limit] == v)
		return;
	snprintf(num, sizeof num, "%lld", v);
	if (write_text(file[limit], v > 0 ? num : "max") == 0)
		now[limit] = v;
}

/*
 * The limits the booting VM's manifest asks for (the kernel's command line:
 * sbx_pids=N sbx_mem=BYTES), set before the boot snapshot is saved: a VM
 * that starts from it with the same limits writes none at its setup.
 */
static void
boot_limits(void)
{
	char line[1024], *w, *save = NULL;
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd == -1 ? -1 : read(fd, line, sizeof line - 1);

	if (fd != -1)
		close(fd);
	if (n <= 0)
		return;
	line[n] = '\0';
	for (w = strtok_r(line, " \n", &save); w != NULL; w = strtok_r(NULL, " \n", &save)) {
		if (strncmp(w, "sbx_pids=", 9) == 0)
			cg_limit(LIMIT_PIDS, strtoll(w + 9, NULL, 10));
		else if (strncmp(w, "sbx_mem=", 8) == 0)
			cg_limit(LIMIT_MEMORY, strtoll(w + 8, NULL, 10));
	}
}

/*
 * The host's seed into the kernel's pool, credited, and its generator
 * reseeded from the pool at once: VMs resumed from one memory image (a
 * boot snapshot, a fork's checkpoint) must not draw the same numbers.
 * Credited entropy alone does not reseed a generator that is ready; until
 * its next scheduled reseed (seconds to a minute), each would go on from
 * the image's key. /dev/urandom is held open from boot: opening it in a
 * guest just resumed is some milliseconds of code yet untranslated (TCG).
 */
static int
reseed(const uint8_t seed[32])
{
	struct {
		int count, size;
		uint8_t buf[32];
	} r = { 256, 32, { 0 } };

	if (urandom_fd == -1 && (urandom_fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	memcpy(r.buf, seed, sizeof r.buf);
	if (ioctl(urandom_fd, RNDADDENTROPY, &r) == -1)
		return -1;
	return ioctl(urandom_fd, RNDRESEEDCRNG);
}

static void
do_setup(struct session *s, const char *p, uint32_t len)
{
	struct vm_setup st;

	if (len < sizeof st)
		return fail(s, 125, "short SETUP");
	memcpy(&st, p, sizeof st);
	if (st.hosts_len > len - sizeof st || st.resolv_len > len - sizeof st - st.hosts_len)
		return fail(s, 125, "SETUP: its texts overrun it");
	if (len > sizeof st + st.hosts_len + st.resolv_len)
		sethostname(p + sizeof st + st.hosts_len + st.resolv_len,
		    len - sizeof st - st.hosts_len - st.resolv_len);
	if (st.net && net_setup(&st) == -1)
		return fail(s, 125, "SETUP: the network interface eth0");
	if ((st.hosts_len && etc_file(ETC_HOSTS, p + sizeof st, st.hosts_len) == -1) ||
	    (st.resolv_len && etc_file(ETC_RESOLV, p + sizeof st + st.hosts_len,
	    st.resolv_len) == -1))
		return fail(s, 125, "SETUP: /etc/hosts or /etc/resolv.conf");
	if (st.realtime_ns > 0) {
		struct timespec ts = { (time_t)(st.realtime_ns / 1000000000),
			(long)(st.realtime_ns % 1000000000) };

		clock_settime(CLOCK_REALTIME, &ts);
	}
	cg_limit(LIMIT_PIDS, st.pids_max);
	cg_limit(LIMIT_MEMORY, st.memory_max);
	cg_limit(LIMIT_MEMORY_HIGH, st.memory_high);
	if (reseed(st.seed) == -1)
		return fail(s, 125, "SETUP: the guest's random number generator was not reseeded");
	send_frame(s, VM_OK, NULL, 0, NULL, 0);
}

static void
do_freeze(struct session *s, const char *p, uint32_t len)
{
	struct vm_freeze f;
	int k, tries;

	if (len < sizeof f)
		return fail(s, 125, "short FREEZE");
	memcpy(&f, p, sizeof f);
	if (f.on) {
		write_text(CG_SBX "/cgroup.freeze", "1");
		for (tries = 0; read_key(CG_SBX "/cgroup.events", "frozen") != 1; tries++) {
			if (tries == 1000) {
				write_text(CG_SBX "/cgroup.freeze", "0");
				return fail(s, 125, "the sandbox's processes did not freeze in 10 s");
			}
			usleep(10000);
		}
		frozen = 1;
		sync();
	} else if (f.keep) {
		/* A clone: every run it holds was the parent's, whose callers are
		 * not this VM's; they go on detached, hang-ups seen or not. */
		for (k = 0; k < VM_CHANNELS; k++)
			if (&ss[k] != s)
				keep_run(&ss[k]);
		for (k = 0; k < MAX_KEPT; k++)
			kept[k].detached = kept[k].pid > 0;
		write_text(CG_SBX "/cgroup.freeze", "0");
		frozen = 0;
	} else {
		for (k = 0; k < MAX_KEPT; k++)
			if (!kept[k].detached)
				kept_kill(&kept[k]);
		write_text(CG_SBX "/cgroup.freeze", "0");
		frozen = 0;
	}
	send_frame(s, VM_OK, NULL, 0, NULL, 0);
}

static void
do_stat(struct session *s)
{
	struct vm_stats st = { 0 };
	struct statvfs v;
	long long total = read_key("/proc/meminfo", "MemTotal");
	long long avail = read_key("/proc/meminfo", "MemAvailable");

	st.memory_bytes = total >= 0 && avail >= 0 ? (total - avail) * 1024 : -1;
	st.pids = read_num(CG_SBX "/pids.current");
	st.cpu_us = read_key(CG_SBX "/cpu.stat", "usage_usec");
	st.disk_bytes = statvfs("/", &v) == 0 ? (int64_t)((v.f_blocks - v.f_bfree) * v.f_frsize) : -1;
	send_frame(s, VM_STATS, &st, sizeof st, NULL, 0);
}

static void
frame(struct session *s, uint32_t type, char *p, uint32_t len)
{
	uint64_t nonce;
	uint32_t u;

	switch (type) {
	case VM_HELLO: {
		struct utsname un;
		uint32_t ver = VM_PROTO_VERSION;
		char buf[12];

		session_gone(s);
		if (len < sizeof nonce)
			return;
		memcpy(&nonce, p, sizeof nonce);
		memcpy(buf, &nonce, sizeof nonce);
		memcpy(buf + sizeof nonce, &ver, sizeof ver);
		uname(&un);
		send_frame(s, VM_READY, buf, sizeof buf, un.release, strlen(un.release));
		break;
	}
	case VM_SETUP:
		do_setup(s, p, len);
		break;
	case VM_EXEC:
		do_exec(s, p, len);
		break;
	case VM_STDIN:
		if (s->in_fd == -1)
			break;
		if (len == 0) {
			s->stdin_eof = 1;
			if (s->q.len == 0 && !s->tty)
				close_fd(&s->in_fd);
			break;
		}
		if (s->q.len + len > (16u << 20))
			break;
		{
			char *nb = realloc(s->q.buf, s->q.len + len);

			if (nb == NULL)
				break;
			s->q.buf = nb;
			memcpy(nb + s->q.len, p, len);
			s->q.len += len;
		}
		break;
	case VM_SIGNAL:
		if (len >= sizeof u && s->pid > 0 && !s->exited) {
			memcpy(&u, p, sizeof u);
			kill(-s->pid, (int)u);
		}
		break;
	case VM_RESIZE:
		if (len >= 4 && s->tty && s->in_fd != -1) {
			uint16_t rc[2];
			struct winsize ws = { 0 };

			memcpy(rc, p, sizeof rc);
			ws.ws_row = rc[0];
			ws.ws_col = rc[1];
			ioctl(s->in_fd, TIOCSWINSZ, &ws);
		}
		break;
	case VM_STAT:
		do_stat(s);
		break;
	case VM_FREEZE:
		do_freeze(s, p, len);
		break;
	case VM_HOSTS:
		/* Only over the file the setup gave: a guest whose root has no
		 * /etc/hosts of its own kept without one. */
		if (!etc[ETC_HOSTS].bound)
			fail(s, 125, "HOSTS: this guest's /etc/hosts is its root's own");
		else if (etc_file(ETC_HOSTS, p, len) == -1)
			fail(s, 125, "HOSTS: /etc/hosts");
		else
			send_frame(s, VM_OK, NULL, 0, NULL, 0);
		break;
	case VM_POWEROFF:
		sync();
		reboot(RB_POWER_OFF);
		break;
	default:
		break;
	}
}

/* Bytes from the host: whole frames handled. */
static void
port_read(struct session *s)
{
	char buf[65536];
	ssize_t n = read(s->port, buf, sizeof buf);
	size_t off = 0;

	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			session_gone(s);
			s->connected = 0;
			free(s->in);
			s->in = NULL;
			s->in_len = 0;
		}
		return;
	}
	while (off < (size_t)n) {
		struct vm_hdr h;
		size_t want, take;
		char *nb;

		want = sizeof h;
		if (s->in_len >= sizeof h) {
			memcpy(&h, s->in, sizeof h);
			if (h.len > VM_FRAME_MAX) {
				/* Out of step: drop the session, the host starts again. */
				session_end(s);
				free(s->in);
				s->in = NULL;
				s->in_len = 0;
				return;
			}
			want += h.len;
		}
		take = want - s->in_len;
		if (take > (size_t)n - off)
			take = (size_t)n - off;
		if ((nb = realloc(s->in, s->in_len + take + 1)) == NULL)
			return;
		s->in = nb;
		memcpy(s->in + s->in_len, buf + off, take);
		s->in_len += take;
		off += take;
		if (s->in_len < sizeof h)
			continue;
		memcpy(&h, s->in, sizeof h);
		if (h.len <= VM_FRAME_MAX && s->in_len == sizeof h + h.len) {
			s->in[s->in_len] = '\0';
			frame(s, h.type, s->in + sizeof h, h.len);
			s->in_len = 0;
		}
	}
}

/* A stream of the command to the host; at its end, closed. */
static void
relay_out(struct session *s, int *fd, uint32_t type)
{
	char buf[32768];
	ssize_t n = read(*fd, buf, sizeof buf);

	if (n > 0) {
		send_frame(s, type, buf, (size_t)n, NULL, 0);
		return;
	}
	if (n == 0 || errno != EINTR)
		close_fd(fd);
}

static void
flush_stdin(struct session *s)
{
	ssize_t n = write(s->in_fd, s->q.buf, s->q.len);

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR) {
			s->q.len = 0;
			close_fd(&s->in_fd);
		}
		return;
	}
	memmove(s->q.buf, s->q.buf + n, s->q.len - (size_t)n);
	s->q.len -= (size_t)n;
	if (s->q.len == 0 && s->stdin_eof && !s->tty)
		close_fd(&s->in_fd);
}

/* A run is over once its command is reaped and its streams have ended. */
static void
maybe_done(struct session *s)
{
	struct vm_exit x = { 0 };
	char path[96];
	long long v;

	if (s->pid <= 0 || !s->exited || s->out_fd != -1 || s->err_fd != -1)
		return;
	x.status = s->status;
	snprintf(path, sizeof path, "%s/memory.events", s->cg);
	v = read_key(path, "oom_kill");
	x.oom_kills = v > s->oom_before && s->oom_before >= 0 ? (uint32_t)(v - s->oom_before) : 0;
	/* A refused fork is counted where the forking task is before Linux
	 * 6.13 and where the limit is after: the larger of the two. */
	v = read_key(CG_SBX "/pids.events", "max");
	x.pids_refused = v > s->pids_before && s->pids_before >= 0 ?
	    (uint32_t)(v - s->pids_before) : 0;
	snprintf(path, sizeof path, "%s/pids.events", s->cg);
	v = read_key(path, "max");
	if (v > s->run_pids_before && s->run_pids_before >= 0 &&
	    (uint32_t)(v - s->run_pids_before) > x.pids_refused)
		x.pids_refused = (uint32_t)(v - s->run_pids_before);
	x.utime_us = (int64_t)s->ru.ru_utime.tv_sec * 1000000 + s->ru.ru_utime.tv_usec;
	x.stime_us = (int64_t)s->ru.ru_stime.tv_sec * 1000000 + s->ru.ru_stime.tv_usec;
	x.maxrss_kb = s->ru.ru_maxrss;
	snprintf(path, sizeof path, "%s/cpu.stat", s->cg);
	v = read_key(path, "usage_usec");
	x.cpu_us = v >= 0 && s->cpu_before >= 0 ? v - s->cpu_before : -1;
	close_fd(&s->in_fd);
	s->pid = 0;
	cg_kill(s->cg);
	send_frame(s, VM_EXIT, &x, sizeof x, NULL, 0);
}

static void
reap(void)
{
	struct rusage ru;
	int st, i;
	pid_t pid;

	while ((pid = wait4(-1, &st, WNOHANG, &ru)) > 0) {
		for (i = 0; i < MAX_KEPT; i++)
			if (kept[i].pid == pid) {
				kept[i].pid = 0;
				kept_kill(&kept[i]);
			}
		for (i = 0; i < VM_CHANNELS; i++) {
			struct session *s = &ss[i];
			char path[96];

			if (s->pid == -pid) {
				s->pid = 0;
			} else if (s->pid == pid) {
				s->status = st;
				s->ru = ru;
				s->exited = 1;
				/* What the command left running goes with it: its
				 * streams then end. */
				snprintf(path, sizeof path, "%s/cgroup.kill", s->cg);
				write_text(path, "1");
				if (s->in_fd != -1 && !s->tty)
					close_fd(&s->in_fd);
				maybe_done(s);
			}
		}
	}
}

/*
 * --pack DIR: the tree below DIR as a pax tar archive on stdout, for the
 * host's capture of the writable layer (it checks the archive as the
 * untrusted input it is). Names, numeric owners, modes, modification
 * times, symlinks, whiteouts (character devices 0,0) and user.* attributes
 * (of overlayfs's, user.overlay.opaque alone); hard links are stored as copies; other devices,
 * FIFOs and sockets are left out (the layer format has no place for them).
 */
struct tarw {
	char buf[1 << 16];
	size_t len;
	int failed;
};

static void
tar_put(struct tarw *t, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0 && !t->failed) {
		size_t take = sizeof t->buf - t->len < n ? sizeof t->buf - t->len : n;

		memcpy(t->buf + t->len, c, take);
		t->len += take;
		c += take;
		n -= take;
		if (t->len == sizeof t->buf) {
			t->failed = vm_write_all(1, t->buf, t->len) == -1;
			t->len = 0;
		}
	}
}

static void
tar_pad(struct tarw *t, unsigned long long n)
{
	static const char zero[512];

	if (n % 512)
		tar_put(t, zero, 512 - n % 512);
}

/* One pax record "LEN key=value\n" (LEN counts itself) appended to rec. */
static int
pax_rec(char *rec, size_t *len, size_t size, const char *key, const char *val, size_t vlen)
{
	size_t body = strlen(key) + vlen + 3, n = body + 1, d;

	for (;;) {
		char num[24];

		d = (size_t)snprintf(num, sizeof num, "%zu", n);
		if (body + d == n)
			break;
		n = body + d;
	}
	if (*len + n > size)
		return -1;
	*len += (size_t)snprintf(rec + *len, size - *len, "%zu %s=", n, key);
	memcpy(rec + *len, val, vlen);
	*len += vlen;
	rec[(*len)++] = '\n';
	return 0;
}

static void
tar_header(struct tarw *t, const char *name, int type, const struct stat *st,
    unsigned long long size)
{
	char h[512];
	unsigned sum = 0;
	int i;

	memset(h, 0, sizeof h);
	snprintf(h, 100, "%.99s", name);
	snprintf(h + 100, 8, "%07o", (unsigned)(st->st_mode & 07777));
	snprintf(h + 108, 8, "%07o", (unsigned)(st->st_uid & 07777777));
	snprintf(h + 116, 8, "%07o", (unsigned)(st->st_gid & 07777777));
	snprintf(h + 124, 12, "%011llo", size < 077777777777ULL ? size : 0);
	snprintf(h + 136, 12, "%011llo", st->st_mtim.tv_sec > 0 ?
	    (unsigned long long)st->st_mtim.tv_sec & 077777777777ULL : 0);
	memset(h + 148, ' ', 8);
	h[156] = (char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (i = 0; i < 512; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
	tar_put(t, h, sizeof h);
}

/* One entry; *dir set when it is a directory (to walk below). */
static int
tar_entry(struct tarw *t, const char *path, const char *name, int *dir)
{
	static char rec[1 << 18], list[1 << 16], val[1 << 16];
	char link[4096], *k;
	size_t len = 0;
	ssize_t n, ln = 0, vn;
	struct stat st;
	int type, fd = -1;
	char num[24];

	if (lstat(path, &st) == -1)
		return -1;
	*dir = S_ISDIR(st.st_mode);
	if (S_ISREG(st.st_mode))
		type = '0';
	else if (S_ISDIR(st.st_mode))
		type = '5';
	else if (S_ISLNK(st.st_mode))
		type = '2';
	else if (S_ISCHR(st.st_mode) && st.st_rdev == 0)
		type = '3';
	else
		return 0;
	if (pax_rec(rec, &len, sizeof rec, "path", name, strlen(name)) == -1)
		return errno = ENAMETOOLONG, -1;
	if (st.st_uid > 07777777 || st.st_gid > 07777777) {
		snprintf(num, sizeof num, "%u", (unsigned)st.st_uid);
		if (pax_rec(rec, &len, sizeof rec, "uid", num, strlen(num)) == -1)
			return errno = E2BIG, -1;
		snprintf(num, sizeof num, "%u", (unsigned)st.st_gid);
		if (pax_rec(rec, &len, sizeof rec, "gid", num, strlen(num)) == -1)
			return errno = E2BIG, -1;
	}
	if (type == '2') {
		if ((ln = readlink(path, link, sizeof link - 1)) < 0 ||
		    pax_rec(rec, &len, sizeof rec, "linkpath", link, (size_t)ln) == -1)
			return -1;
	}
	if (type == '0') {
		snprintf(num, sizeof num, "%lld", (long long)st.st_size);
		if (pax_rec(rec, &len, sizeof rec, "size", num, strlen(num)) == -1)
			return -1;
	}
	if ((n = llistxattr(path, list, sizeof list)) == -1 && errno != ENOTSUP)
		return -1;
	for (k = list; n > 0 && k < list + n; k += strlen(k) + 1) {
		char key[300];

		/* overlayfs's own marks are the guest's, but for opaque directories */
		if (strncmp(k, "user.", 5) != 0 || (strncmp(k, "user.overlay.", 13) == 0 &&
		    strcmp(k, "user.overlay.opaque") != 0))
			continue;
		if ((vn = lgetxattr(path, k, val, sizeof val)) < 0)
			return -1;
		snprintf(key, sizeof key, "SCHILY.xattr.%.255s", k);
		if (pax_rec(rec, &len, sizeof rec, key, val, (size_t)vn) == -1)
			return errno = E2BIG, -1;
	}
	if (type == '0' && (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	tar_header(t, "pax", 'x', &st, len);
	tar_put(t, rec, len);
	tar_pad(t, len);
	tar_header(t, name, type, &st, type == '0' ? (unsigned long long)st.st_size : 0);
	if (type == '0') {
		unsigned long long left = (unsigned long long)st.st_size;
		char buf[65536];

		/* What it holds now, cut or padded to the size the header gave. */
		while (left > 0) {
			n = read(fd, buf, left < sizeof buf ? left : sizeof buf);
			if (n <= 0) {
				memset(buf, 0, sizeof buf);
				n = left < sizeof buf ? (ssize_t)left : (ssize_t)sizeof buf;
			}
			tar_put(t, buf, (size_t)n);
			left -= (unsigned long long)n;
		}
		close(fd);
		tar_pad(t, (unsigned long long)st.st_size);
	}
	return 0;
}

static int
tar_tree(struct tarw *t, const char *dir, const char *prefix)
{
	struct dirent **names;
	char path[4096], name[4096];
	int n, i, r = 0;

	if ((n = scandir(dir, &names, NULL, alphasort)) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		const char *d = names[i]->d_name;
		int sub = 0;

		if (r == 0 && strcmp(d, ".") != 0 && strcmp(d, "..") != 0) {
			if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, d) >= sizeof path ||
			    (size_t)snprintf(name, sizeof name, "%s%s", prefix, d) >= sizeof name - 1) {
				errno = ENAMETOOLONG;
				r = -1;
			} else if (tar_entry(t, path, name, &sub) == -1) {
				r = -1;
			} else if (sub) {
				size_t nl = strlen(name);   /* room kept above */

				name[nl] = '/';
				name[nl + 1] = '\0';
				r = tar_tree(t, path, name);
			}
		}
		free(names[i]);
	}
	free(names);
	return r;
}

static int
pack(const char *dir)
{
	static struct tarw t;
	static const char zero[1024];

	if (tar_tree(&t, dir, "") == -1) {
		fprintf(stderr, "sbx-agent: cannot pack %s: %s\n", dir, strerror(errno));
		return 1;
	}
	tar_put(&t, zero, sizeof zero);
	if (!t.failed && t.len > 0)
		t.failed = vm_write_all(1, t.buf, t.len) == -1;
	return t.failed ? 1 : 0;
}

/* VM_AGENT_WARM: a block of each disk read past every cache (the guest's
 * block and virtio paths run once; no file of the root is read). */
static int
warm(void)
{
	static char buf[4096] __attribute__((aligned(4096)));
	char path[300];
	struct dirent *d;
	DIR *dir = opendir("/sys/block");
	int fd;

	while (dir != NULL && (d = readdir(dir)) != NULL) {
		if (strncmp(d->d_name, "vd", 2) != 0)
			continue;
		snprintf(path, sizeof path, "/dev/%s", d->d_name);
		if ((fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC)) == -1)
			continue;
		(void)!pread(fd, buf, sizeof buf, 0);
		close(fd);
	}
	if (dir != NULL)
		closedir(dir);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct pollfd pf[1 + VM_CHANNELS * 4 + MAX_KEPT * 2];
	struct session *who[1 + VM_CHANNELS * 4 + MAX_KEPT * 2];
	int what[1 + VM_CHANNELS * 4 + MAX_KEPT * 2];
	sigset_t mask;
	int sfd, i;

	if (argc == 3 && strcmp(argv[1], VM_AGENT_PACK) == 0)
		return pack(argv[2]);
	if (argc == 2 && strcmp(argv[1], VM_AGENT_WARM) == 0)
		return warm();
	if (getpid() != 1)
		fprintf(stderr, "sbx-agent: not the guest's PID 1\n");
	setup_system();
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGIO);
	sigaddset(&mask, SIGPIPE);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	for (i = 0; i < MAX_KEPT; i++)
		kept[i].out_fd = kept[i].err_fd = -1;
	for (i = 0; i < VM_CHANNELS; i++) {
		ss[i].in_fd = ss[i].out_fd = ss[i].err_fd = -1;
		if ((ss[i].port = open_port(i)) == -1)
			say("no port sbx.%s", i == VM_CTL ? "ctl" : i == 0 ? "0" : i == 1 ? "1" :
			    i == 2 ? "2" : "3");
	}
	say("ready%s", "");
	for (;;) {
		nfds_t n = 0;
		int idle = 0, r;

		pf[n] = (struct pollfd){ sfd, POLLIN, 0 };
		who[n] = NULL;
		what[n++] = 0;
		for (i = 0; i < VM_CHANNELS; i++) {
			struct session *s = &ss[i];

			if (s->port == -1)
				continue;
			if (!s->connected) {
				struct pollfd t = { s->port, POLLIN, 0 };

				/* The host is there again once the port hangs up no more. */
				if (poll(&t, 1, 0) >= 0 && !(t.revents & POLLHUP))
					s->connected = 1;
				else
					idle = 1;
			}
			if (s->connected) {
				pf[n] = (struct pollfd){ s->port, POLLIN, 0 };
				who[n] = s;
				what[n++] = 1;
			}
			if (s->out_fd != -1) {
				pf[n] = (struct pollfd){ s->out_fd, POLLIN, 0 };
				who[n] = s;
				what[n++] = 2;
			}
			if (s->err_fd != -1) {
				pf[n] = (struct pollfd){ s->err_fd, POLLIN, 0 };
				who[n] = s;
				what[n++] = 3;
			}
			if (s->in_fd != -1 && s->q.len > 0) {
				pf[n] = (struct pollfd){ s->in_fd, POLLOUT, 0 };
				who[n] = s;
				what[n++] = 4;
			}
		}
		for (i = 0; i < MAX_KEPT; i++) {
			if (kept[i].out_fd != -1) {
				pf[n] = (struct pollfd){ kept[i].out_fd, POLLIN, 0 };
				who[n] = NULL;
				what[n++] = 100 + 2 * i;
			}
			if (kept[i].err_fd != -1) {
				pf[n] = (struct pollfd){ kept[i].err_fd, POLLIN, 0 };
				who[n] = NULL;
				what[n++] = 101 + 2 * i;
			}
		}
		if (cg_sweep())
			idle = 1;
		r = poll(pf, n, idle ? 20 : -1);
		if (r < 0)
			continue;
		for (i = 0; i < (int)n; i++) {
			struct session *s = who[i];

			if (pf[i].revents == 0)
				continue;
			switch (what[i]) {
			case 0: {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
					;
				reap();
				break;
			}
			case 1:
				if (pf[i].revents & POLLIN)
					port_read(s);
				else if (pf[i].revents & (POLLHUP | POLLERR)) {
					session_gone(s);
					s->connected = 0;
					s->in_len = 0;
				}
				break;
			case 2:
				if (s->out_fd != -1)
					relay_out(s, &s->out_fd, VM_STDOUT);
				maybe_done(s);
				break;
			case 3:
				if (s->err_fd != -1)
					relay_out(s, &s->err_fd, VM_STDERR);
				maybe_done(s);
				break;
			case 4:
				if (s->in_fd != -1)
					flush_stdin(s);
				break;
			default: {
				/* A kept run's output: nobody reads it now. */
				struct kept *k = &kept[(what[i] - 100) / 2];
				int *fd = (what[i] - 100) % 2 ? &k->err_fd : &k->out_fd;
				char buf[4096];
				ssize_t got = read(*fd, buf, sizeof buf);

				if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
					close_fd(fd);
				break;
			}
			}
		}
	}
}
