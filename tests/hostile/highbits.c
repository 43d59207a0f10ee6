/* SPDX-License-Identifier: MIT */
/*
 * Threat: arguments a filter reads as 64 bits and the kernel as 32. Every
 * rule of sbx's seccomp guard, tried plain and with the high word of the
 * argument set: terminal injection (TIOCSTI, TIOCLINUX) and taking a
 * terminal as the controlling one (TIOCSCTTY) on standard input, and
 * AF_VSOCK sockets, which no namespace confines (the socket is only made,
 * never connected). Prints "NAME blocked (ERRNO)" or "NAME ESCAPED", and for
 * the controls, which must keep working, "NAME allowed".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HIGH (1UL << 32)

static void
try(const char *name, long r)
{
	if (r >= 0)
		printf("%s ESCAPED\n", name);
	else
		printf("%s blocked (%s)\n", name, strerrorname_np(errno));
	if (r >= 0 && strncmp(name, "vsock", 5) == 0)
		close((int)r);
}

static void
control(const char *name, long r)
{
	if (r >= 0 || errno != EPERM)
		printf("%s allowed\n", name);
	else
		printf("%s refused (%s)\n", name, strerrorname_np(errno));
}

int
main(int argc, char *argv[])
{
	char c = '!';
	struct winsize ws;

	if (argc > 1 && strcmp(argv[1], "tty") == 0) {
		/* a session of our own first, so that the terminal could become ours */
		setsid();
		try("tiocsctty", syscall(SYS_ioctl, 0, (unsigned long)TIOCSCTTY, 0));
		try("tiocsctty-high", syscall(SYS_ioctl, 0, HIGH | TIOCSCTTY, 0));
		try("tiocsti", syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI, &c));
		try("tiocsti-high", syscall(SYS_ioctl, 0, HIGH | TIOCSTI, &c));
		try("tiocsti-all-high", syscall(SYS_ioctl, 0, 0xffffffff00000000UL | TIOCSTI, &c));
		try("tioclinux-high", syscall(SYS_ioctl, 0, HIGH | TIOCLINUX, &c));
		control("tiocgwinsz-high", syscall(SYS_ioctl, 0, HIGH | TIOCGWINSZ, &ws));
		return 0;
	}
	try("vsock-stream", syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0));
	try("vsock-dgram", syscall(SYS_socket, AF_VSOCK, SOCK_DGRAM, 0));
	try("vsock-high", syscall(SYS_socket, HIGH | AF_VSOCK, SOCK_STREAM, 0));
	control("unix-socket", syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0));
	return 0;
}
