/* SPDX-License-Identifier: MIT */
/* Descriptor passing: what goes over the socket comes out as the same open
 * files, and a message with the wrong number of them is refused with
 * nothing left open. */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdpass.h"
#include "tap.h"

static int
same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	    sa.st_ino == sb.st_ino;
}

/* The lowest descriptor free now: one leaked by a refused message would take it. */
static int
lowest_free(void)
{
	int fd = dup(0);

	if (fd != -1)
		close(fd);
	return fd;
}

int
main(void)
{
	int sp[2], fds[3], got[3] = { -1, -1, -1 }, i, low;
	char buf[8] = { 0 };

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1)
		return 1;
	fds[0] = open("/", O_RDONLY | O_DIRECTORY);
	fds[1] = open("/dev/null", O_RDONLY);
	fds[2] = sp[0];
	ok(sbx_fd_send(sp[0], fds, 3, "abc", 3) == 0, "three descriptors and three bytes sent");
	ok(sbx_fd_recv(sp[1], got, 3, buf, sizeof buf) == 3 && memcmp(buf, "abc", 3) == 0,
	    "three bytes received");
	for (i = 0; i < 3; i++)
		ok(got[i] != fds[i] && same_file(got[i], fds[i]), "descriptor %d is the file sent", i);
	ok((fcntl(got[1], F_GETFD) & FD_CLOEXEC) != 0, "received close-on-exec");
	for (i = 0; i < 3; i++)
		close(got[i]);

	ok(sbx_fd_send(sp[0], NULL, 0, "g", 1) == 0 &&
	    sbx_fd_recv(sp[1], NULL, 0, buf, 1) == 1 && buf[0] == 'g', "no descriptors, one byte");

	low = lowest_free();
	ok(sbx_fd_send(sp[0], fds, 2, "x", 1) == 0, "two sent");
	errno = 0;
	ok(sbx_fd_recv(sp[1], got, 1, buf, 1) == -1 && errno == EPROTO, "two where one was asked: EPROTO");
	ok(lowest_free() == low, "the two refused are closed");
	ok(sbx_fd_send(sp[0], NULL, 0, "y", 1) == 0, "none sent");
	errno = 0;
	ok(sbx_fd_recv(sp[1], got, 1, buf, 1) == -1 && errno == EPROTO, "none where one was asked: EPROTO");

	{
		size_t n = 9;

		ok(sbx_fd_send(sp[0], fds, 2, "u", 1) == 0 &&
		    sbx_fd_recv_upto(sp[1], got, 3, &n, buf, 1) == 1 && n == 2 &&
		    same_file(got[0], fds[0]) && same_file(got[1], fds[1]), "upto 3: the two sent");
		close(got[0]);
		close(got[1]);
		ok(sbx_fd_send(sp[0], NULL, 0, "v", 1) == 0 &&
		    sbx_fd_recv_upto(sp[1], got, 3, &n, buf, 1) == 1 && n == 0, "upto 3: none");
		low = lowest_free();
		ok(sbx_fd_send(sp[0], fds, 3, "w", 1) == 0, "three sent");
		errno = 0;
		ok(sbx_fd_recv_upto(sp[1], got, 2, &n, buf, 1) == -1 && errno == EPROTO && n == 0 &&
		    lowest_free() == low, "upto 2 when three came: EPROTO, all closed");
	}
	errno = 0;
	ok(sbx_fd_send(sp[0], fds, SBX_FD_MAX + 1, "z", 1) == -1 && errno == EINVAL, "too many: EINVAL");
	close(sp[0]);
	ok(sbx_fd_recv(sp[1], got, 1, buf, 1) == 0, "end of file: 0");
	close(sp[1]);
	close(fds[0]);
	close(fds[1]);
	return done_testing();
}
