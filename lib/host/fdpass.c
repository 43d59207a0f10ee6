/* SPDX-License-Identifier: MIT */
/* Descriptors passed over a unix socket (SCM_RIGHTS). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

union fd_cmsg {
	char buf[CMSG_SPACE(sizeof(int) * SBX_FD_MAX)];
	struct cmsghdr align;
};

int
sbx_fd_send(int sock, const int *fds, size_t n, const void *data, size_t len)
{
	union fd_cmsg u;
	struct iovec iov = { (void *)data, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t r;

	if (n > SBX_FD_MAX || len == 0) {
		errno = EINVAL;
		return -1;
	}
	if (n > 0) {
		memset(u.buf, 0, sizeof u.buf);
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		if ((cm = CMSG_FIRSTHDR(&msg)) == NULL) {
			errno = EINVAL;
			return -1;
		}
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	}
	if ((r = sendmsg(sock, &msg, MSG_NOSIGNAL)) == -1)
		return -1;
	if ((size_t)r != len) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* Close what a message brought but the caller did not ask for. */
static void
close_passed(struct msghdr *msg)
{
	struct cmsghdr *cm;
	size_t i, k;
	int fd;

	for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
			close(fd);
		}
	}
}

ssize_t
sbx_fd_recv_upto(int sock, int *fds, size_t max, size_t *n, void *data, size_t len)
{
	union fd_cmsg u;
	struct iovec iov = { data, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
		.msg_controllen = sizeof u.buf };
	struct cmsghdr *cm;
	ssize_t r;
	size_t k = 0;

	if (max > SBX_FD_MAX) {
		errno = EINVAL;
		return -1;
	}
	*n = 0;
	if ((r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) <= 0)
		return r;
	if ((cm = CMSG_FIRSTHDR(&msg)) != NULL)
		k = cm->cmsg_len >= CMSG_LEN(0) ? (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int) : max + 1;
	if ((msg.msg_flags & MSG_CTRUNC) || (cm != NULL && (cm->cmsg_level != SOL_SOCKET ||
	    cm->cmsg_type != SCM_RIGHTS || k > max || CMSG_NXTHDR(&msg, cm) != NULL))) {
		close_passed(&msg);
		errno = EPROTO;
		return -1;
	}
	if (k > 0)
		memcpy(fds, CMSG_DATA(cm), sizeof(int) * k);
	*n = k;
	return r;
}

ssize_t
sbx_fd_recv(int sock, int *fds, size_t n, void *data, size_t len)
{
	size_t got, i;
	ssize_t r;

	if ((r = sbx_fd_recv_upto(sock, fds, n, &got, data, len)) <= 0 || got == n)
		return r;
	for (i = 0; i < got; i++)
		close(fds[i]);
	errno = EPROTO;
	return -1;
}
