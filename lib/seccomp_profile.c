/* SPDX-License-Identifier: MIT */
/* seccomp profiles: allow-lists with ENOSYS for the unknown, EPERM for the dangerous. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp_profile.h"
#include "sha256.h"
#include "util.h"

/* What ordinary programs need. Names this libseccomp does not know are skipped. */
static const char *const allowed[] = {
	"accept", "accept4", "access", "alarm", "arch_prctl", "bind", "brk", "capget",
	"capset", "chdir", "chmod", "chown", "clock_getres", "clock_gettime", "clock_nanosleep",
	"close", "close_range", "connect", "copy_file_range", "creat", "dup", "dup2", "dup3",
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2", "epoll_wait",
	"eventfd", "eventfd2", "execve", "execveat", "exit", "exit_group", "faccessat",
	"faccessat2", "fadvise64", "fallocate", "fchdir", "fchmod", "fchmodat", "fchmodat2",
	"fchown", "fchownat", "fcntl", "fdatasync", "fgetxattr", "flistxattr", "flock", "fork",
	"fremovexattr", "fsetxattr", "fstat", "fstatfs", "fsync", "ftruncate", "futex",
	"futex_waitv", "futimesat", "getcpu", "getcwd", "getdents", "getdents64", "getegid",
	"geteuid", "getgid", "getgroups", "getitimer", "getpeername", "getpgid", "getpgrp",
	"getpid", "getppid", "getpriority", "getrandom", "getresgid", "getresuid", "getrlimit",
	"get_robust_list", "getrusage", "getsid", "getsockname", "getsockopt", "gettid",
	"gettimeofday", "getuid", "getxattr", "inotify_add_watch", "inotify_init",
	"inotify_init1", "inotify_rm_watch", "io_cancel", "io_destroy", "io_getevents",
	"io_pgetevents", "io_setup", "io_submit", "ioprio_get", "ioprio_set", "kill",
	"landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self", "lchown",
	"lgetxattr", "link", "linkat", "listen", "listxattr", "llistxattr", "lremovexattr",
	"lseek", "lsetxattr", "lstat", "madvise", "membarrier", "memfd_create", "mincore",
	"mkdir", "mkdirat", "mknod", "mknodat", "mlock", "mlock2", "mlockall", "mmap",
	"mprotect", "mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive", "mq_timedsend",
	"mq_unlink", "mremap", "msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock",
	"munlockall", "munmap", "name_to_handle_at", "nanosleep", "newfstatat", "open", "openat",
	"openat2", "pause", "pidfd_getfd", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2",
	"poll", "ppoll", "prctl", "pread64", "preadv", "preadv2", "prlimit64", "pselect6",
	"pwrite64", "pwritev", "pwritev2", "read", "readahead", "readlink", "readlinkat", "readv",
	"recvfrom", "recvmmsg", "recvmsg", "remap_file_pages", "removexattr", "rename",
	"renameat", "renameat2", "restart_syscall", "rmdir", "rseq", "rt_sigaction",
	"rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend",
	"rt_sigtimedwait", "rt_tgsigqueueinfo", "sched_getaffinity", "sched_getattr",
	"sched_getparam", "sched_get_priority_max", "sched_get_priority_min",
	"sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity", "sched_setattr",
	"sched_setparam", "sched_setscheduler", "sched_yield", "select", "semctl", "semget",
	"semop", "semtimedop", "sendfile", "sendmmsg", "sendmsg", "sendto", "setfsgid",
	"setfsuid", "setgid", "setgroups", "setitimer", "setpgid", "setpriority", "setregid",
	"setresgid", "setresuid", "setreuid", "setrlimit", "set_robust_list", "setsid",
	"setsockopt", "set_tid_address", "setuid", "setxattr", "shmat", "shmctl", "shmdt",
	"shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4", "socket", "socketpair",
	"splice", "stat", "statfs", "statx", "symlink", "symlinkat", "sync", "sync_file_range",
	"syncfs", "sysinfo", "tee", "tgkill", "time", "timer_create", "timer_delete",
	"timer_getoverrun", "timer_gettime", "timer_settime", "timerfd_create",
	"timerfd_gettime", "timerfd_settime", "times", "tkill", "truncate", "umask", "uname",
	"unlink", "unlinkat", "utime", "utimensat", "utimes", "vfork", "vmsplice", "wait4",
	"waitid", "write", "writev", "cachestat", "map_shadow_stack", "process_mrelease",
	NULL
};

/* Named so the denial is EPERM, not ENOSYS: the threat list of sbx(7). */
static const char *const denied[] = {
	"mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "ptrace",
	"process_vm_readv", "process_vm_writev", "bpf", "keyctl", "add_key", "request_key",
	"perf_event_open", "kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "reboot", "swapon", "swapoff", "open_by_handle_at", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "unshare", "setns",
	"clock_settime", "clock_adjtime", "settimeofday", "adjtimex", "stime", "acct",
	"quotactl", "quotactl_fd", "lookup_dcookie", "fanotify_init", "fanotify_mark",
	"kcmp", "syslog", "uselib", "personality", "vhangup", "sethostname", "setdomainname",
	"iopl", "ioperm", "create_module", "get_kernel_syms", "query_module", "nfsservctl",
	"_sysctl", "sysfs", "ustat", "pkey_alloc", "pkey_free", "pkey_mprotect",
	"set_mempolicy", "mbind", "migrate_pages", "move_pages", "get_mempolicy",
	"mseal", "lsm_set_self_attr", "lsm_get_self_attr", "lsm_list_modules",
	NULL
};

static int
add_names(scmp_filter_ctx ctx, const char *const *names, uint32_t action)
{
	int nr;

	for (; *names; names++) {
		if ((nr = seccomp_syscall_resolve_name(*names)) == __NR_SCMP_ERROR)
			continue;
		if (seccomp_rule_add(ctx, action, nr, 0) < 0)
			return -1;
	}
	return 0;
}

#define NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | \
	CLONE_NEWIPC | CLONE_NEWCGROUP | CLONE_NEWTIME)

static int
add_common(scmp_filter_ctx ctx, int strict)
{
	/* clone: threads and forks yes, new namespaces no. clone3 hides its flags in
	 * memory, so it is left to the default ENOSYS and libc falls back to clone. */
	static const unsigned long ns_flags[] = { CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID,
		CLONE_NEWNET, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWCGROUP, CLONE_NEWTIME };
	size_t i;

	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0)) < 0)
		return -1;
	for (i = 0; i < SBX_ARRAY_LEN(ns_flags); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i])) < 0)
			return -1;
	/* Terminal injection: TIOCSTI pushes input into a terminal, TIOCLINUX can
	 * too. The kernel reads the command as 32 bits, so the rules compare only
	 * those, and since libseccomp lets an unconditional allow override a
	 * conditional deny, ioctl is allowed by ranges that leave the two out. */
	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
	    SCMP_A1_32(SCMP_CMP_LT, TIOCSTI)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
	    SCMP_A1_32(SCMP_CMP_GT, TIOCLINUX)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	    SCMP_A1_32(SCMP_CMP_EQ, TIOCSTI)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	    SCMP_A1_32(SCMP_CMP_EQ, TIOCLINUX)) < 0)
		return -1;
	for (i = TIOCSTI + 1; i < TIOCLINUX; i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
		    SCMP_A1_32(SCMP_CMP_EQ, i)) < 0)
			return -1;
	if (strict) {
		/* strict: no sockets but AF_UNIX. */
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
		    SCMP_A0(SCMP_CMP_EQ, AF_UNIX)) < 0 ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
		    SCMP_A0(SCMP_CMP_NE, AF_UNIX)) < 0)
			return -1;
	}
	return 0;
}

static int
add_policy_file(scmp_filter_ctx ctx, const char *path, struct sbx_err *e)
{
	char *buf, *line, *save = NULL, verb[16], name[64];
	int nr, n = 0, r = 0;

	if (sbx_read_file(path, 1 << 20, &buf, NULL, e) == -1)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		n++;
		line += strspn(line, " \t");
		if (*line == '#' || *line == '\0')
			continue;
		if (sscanf(line, "%15s %63s", verb, name) != 2 ||
		    (strcmp(verb, "allow") != 0 && strcmp(verb, "deny") != 0)) {
			r = sbx_err_set(e, SBX_EX_DATAERR, "%s:%d:1: want 'allow NAME' or 'deny NAME'",
			    path, n);
			break;
		}
		if ((nr = seccomp_syscall_resolve_name(name)) == __NR_SCMP_ERROR) {
			r = sbx_err_set(e, SBX_EX_DATAERR, "%s:%d:1: unknown system call '%s'", path,
			    n, name);
			break;
		}
		if (ctx != NULL && seccomp_rule_add(ctx, strcmp(verb, "allow") == 0 ?
		    SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EPERM), nr, 0) < 0) {
			r = sbx_err_set(e, SBX_EX_SOFTWARE, "%s:%d:1: cannot add rule for %s", path,
			    n, name);
			break;
		}
	}
	free(buf);
	return r;
}

int
sbx_seccomp_check(const char *profile, struct sbx_err *e)
{
	if (strcmp(profile, "default") == 0 || strcmp(profile, "strict") == 0 ||
	    strcmp(profile, "unconfined") == 0)
		return 0;
	return add_policy_file(NULL, profile, e);
}

static int
build(const char *profile, scmp_filter_ctx *out, struct sbx_err *e)
{
	scmp_filter_ctx ctx;
	int r = -1, strict = strcmp(profile, "strict") == 0;

	*out = NULL;
	if ((ctx = seccomp_init(SCMP_ACT_ERRNO(ENOSYS))) == NULL) {
		sbx_err_set(e, SBX_EX_SOFTWARE, "seccomp_init failed");
		return -1;
	}
	/* Calls of a foreign architecture (int 0x80 on x86_64) kill the process. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0)
		goto out;
	if (profile[0] == '/') {
		if (add_policy_file(ctx, profile, e) == -1)
			goto out_quiet;
	} else {
		if (add_names(ctx, denied, SCMP_ACT_ERRNO(EPERM)) == -1 ||
		    add_names(ctx, allowed, SCMP_ACT_ALLOW) == -1 ||
		    add_common(ctx, strict) == -1)
			goto out;
	}
	*out = ctx;
	return 0;
out:
	sbx_err_set(e, SBX_EX_SOFTWARE, "cannot build the seccomp profile '%s'", profile);
out_quiet:
	seccomp_release(ctx);
	return r;
}

int
sbx_seccomp_load(const char *profile, struct sbx_err *e)
{
	scmp_filter_ctx ctx = NULL;
	int r;

	if (strcmp(profile, "unconfined") == 0)
		return 0;
	if (build(profile, &ctx, e) == -1)
		return -1;
	r = seccomp_load(ctx) < 0 ? sbx_err_set(e, SBX_EX_SOFTWARE, "cannot load the seccomp "
	    "profile '%s'", profile) : 0;
	seccomp_release(ctx);
	return r;
}

/*
 * The cache's name for a profile: the built-in ones by name, a policy file by
 * its content, both with this build's and libseccomp's versions (which decide
 * the program).
 */
static int
cache_path(const struct sbx_store *s, const char *profile, char *path, size_t size,
    struct sbx_err *e)
{
	const struct scmp_version *v = seccomp_version();
	char key[65], what[200];
	char *text = NULL;
	size_t len = 0;

	if (profile[0] == '/') {
		if (sbx_read_file(profile, 1 << 20, &text, &len, e) == -1)
			return -1;
		sbx_sha256_hex(text, len, key);
		free(text);
	} else {
		snprintf(key, sizeof key, "%s", profile);
	}
	snprintf(what, sizeof what, "%s-%s-%u.%u.%u", key, SBX_VERSION, v ? v->major : 0,
	    v ? v->minor : 0, v ? v->micro : 0);
	if (snprintf(path, size, "%s/seccomp/%s.bpf", s->root, what) >= (int)size)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "state root path too long");
	return 0;
}

int
sbx_seccomp_program(const struct sbx_store *s, const char *profile, struct sbx_seccomp_prog *p,
    struct sbx_err *e)
{
	scmp_filter_ctx ctx = NULL;
	char path[1400], dir[1200], tmp[1500];
	size_t len = 0;
	int fd, r = -1;

	p->code = NULL;
	p->len = 0;
	if (strcmp(profile, "unconfined") == 0)
		return 0;
	if (cache_path(s, profile, path, sizeof path, e) == -1)
		return -1;
	if (sbx_read_file(path, 8 * 4096, &p->code, &len, NULL) == 0) {
		if (len > 0 && len % 8 == 0) {
			p->len = len;
			return 0;
		}
		free(p->code);
		p->code = NULL;
	}
	/* Not made yet: build it, keep it for the next runs. */
	if (build(profile, &ctx, e) == -1)
		return -1;
	snprintf(dir, sizeof dir, "%s/seccomp", s->root);
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	if (sbx_mkdir_p(dir, 0700, e) == -1)
		goto out;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) == -1) {
		sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", tmp);
		goto out;
	}
	if (seccomp_export_bpf(ctx, fd) < 0 || close(fd) == -1 || rename(tmp, path) == -1) {
		sbx_err_sys(e, SBX_EX_IOERR, "%s", path);
		unlink(tmp);
		goto out;
	}
	if (sbx_read_file(path, 8 * 4096, &p->code, &len, e) == -1)
		goto out;
	if (len == 0 || len % 8 != 0) {
		sbx_err_set(e, SBX_EX_SOFTWARE, "%s: not a seccomp program", path);
		goto out;
	}
	p->len = len;
	r = 0;
out:
	seccomp_release(ctx);
	if (r == -1) {
		free(p->code);
		p->code = NULL;
	}
	return r;
}

int
sbx_seccomp_load_program(const struct sbx_seccomp_prog *p, struct sbx_err *e)
{
	struct sock_fprog prog = { (unsigned short)(p->len / 8), (struct sock_filter *)p->code };

	if (p->code == NULL)
		return 0;
	/* As libseccomp loads it: no flags (no_new_privs is set by the caller). */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == -1)
		return sbx_err_sys(e, SBX_EX_SOFTWARE, "load the seccomp profile");
	return 0;
}
