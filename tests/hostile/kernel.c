/* SPDX-License-Identifier: MIT */
/*
 * Threat: reaching the kernel's dangerous interfaces. Each system call a
 * sandbox must refuse, with arguments that would do something if allowed.
 * Prints "NAME blocked (ERRNO)" or "NAME ESCAPED".
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void
try(const char *name, long r)
{
	if (r >= 0)
		printf("%s ESCAPED\n", name);
	else
		printf("%s blocked (%s)\n", name, strerrorname_np(errno));
}

int
main(void)
{
	char buf[256] = { 0 };
	long r;

	try("mount", syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL));
	try("umount", syscall(SYS_umount2, "/proc", 2));
	try("pivot_root", syscall(SYS_pivot_root, "/tmp", "/tmp"));
	try("chroot", syscall(SYS_chroot, "/tmp"));
	try("ptrace-attach-init", syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, 1, 0, 0));
	try("process_vm_readv", syscall(SYS_process_vm_readv, 1, buf, 1, buf, 1, 0));
	try("bpf", syscall(SYS_bpf, 0, buf, 48));
	try("perf_event_open", syscall(SYS_perf_event_open, buf, 0, -1, -1, 0));
	try("keyctl", syscall(SYS_keyctl, 0, 0, 0));
	try("add_key", syscall(SYS_add_key, "user", "k", "v", 1, -2));
	try("io_uring_setup", syscall(SYS_io_uring_setup, 1, buf));
	try("userfaultfd", syscall(SYS_userfaultfd, 0));
	try("unshare-user", syscall(SYS_unshare, CLONE_NEWUSER));
	try("unshare-net", syscall(SYS_unshare, CLONE_NEWNET));
	try("setns", syscall(SYS_setns, 0, 0));
	try("init_module", syscall(SYS_init_module, buf, 1, ""));
	try("finit_module", syscall(SYS_finit_module, 0, "", 0));
	try("delete_module", syscall(SYS_delete_module, "ext4", 0));
	try("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
	try("reboot", syscall(SYS_reboot, 0xfee1dead, 672274793, 0x4321fedc, NULL));
	try("swapon", syscall(SYS_swapon, "/tmp/x", 0));
	try("open_by_handle_at", syscall(SYS_open_by_handle_at, 0, buf, 0));
	try("clock_settime", syscall(SYS_clock_settime, 0, buf));
	try("settimeofday", syscall(SYS_settimeofday, buf, NULL));
	try("sethostname", syscall(SYS_sethostname, "evil", 4));
	try("syslog-read", syscall(SYS_syslog, 3, buf, sizeof buf));
	/* a node is a threat where it opens a device: gVisor makes nodes of
	 * none in its own memory (ENXIO) */
	r = syscall(SYS_mknodat, -100, "/tmp/mem", 020600, 0x0101);
	if (r == 0 && (r = open("/tmp/mem", O_RDONLY)) >= 0)
		close((int)r);
	try("mknod-char", r);
	try("iopl", syscall(SYS_iopl, 3));
	/* clone with a new user namespace: EPERM, and nothing may come out of it */
	r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	try("clone-newuser", r);
	return 0;
}
