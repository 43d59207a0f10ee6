/* SPDX-License-Identifier: MIT */
/* Netlink requests: see netlink.h. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "netlink.h"

int
sbx_nl_socket(int protocol)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
	struct timeval tv = { 5, 0 };

	if (fd != -1)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return fd;
}

void
sbx_nl_init(struct sbx_nlbuf *b, unsigned short type, unsigned short flags, const void *hdr,
    size_t len)
{
	memset(b, 0, sizeof *b);
	b->h.nlmsg_type = type;
	b->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	b->h.nlmsg_len = (unsigned)NLMSG_LENGTH(len);
	memcpy(NLMSG_DATA(&b->h), hdr, len);
}

struct rtattr *
sbx_nla_put(struct sbx_nlbuf *b, unsigned short type, const void *d, size_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)&b->h + NLMSG_ALIGN(b->h.nlmsg_len));

	if (NLMSG_ALIGN(b->h.nlmsg_len) + RTA_SPACE(len) > sizeof *b)
		return NULL;
	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), d, len);
	b->h.nlmsg_len = (unsigned)(NLMSG_ALIGN(b->h.nlmsg_len) + RTA_SPACE(len));
	return a;
}

void
sbx_nla_end(struct sbx_nlbuf *b, struct rtattr *a)
{
	a->rta_len = (unsigned short)((char *)&b->h + b->h.nlmsg_len - (char *)a);
}

int
sbx_nl_talk(int fd, struct sbx_nlbuf *b)
{
	static unsigned seq;
	char rbuf[4096];
	struct nlmsghdr *h;
	ssize_t n;

	b->h.nlmsg_seq = ++seq;
	if (send(fd, &b->h, b->h.nlmsg_len, 0) == -1)
		return -errno;
	for (;;) {
		if ((n = recv(fd, rbuf, sizeof rbuf, 0)) == -1) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != b->h.nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
		}
	}
}
