/* SPDX-License-Identifier: MIT */
/* Netlink requests, written by hand: rtnetlink (net.c) and nfnetlink (relay.c). */
#ifndef SBX_NETLINK_H
#define SBX_NETLINK_H

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stddef.h>

struct sbx_nlbuf {
	struct nlmsghdr h;
	char data[2048];
};

/* A socket of protocol (NETLINK_ROUTE, NETLINK_NETFILTER) whose reads give up after 5 s. */
int sbx_nl_socket(int protocol);
/* Start a request of type with its fixed header (ifinfomsg, nfgenmsg...); it asks for an ack. */
void sbx_nl_init(struct sbx_nlbuf *b, unsigned short type, unsigned short flags, const void *hdr,
    size_t len);
/* Append an attribute (d may be NULL for a nest, closed by sbx_nla_end); NULL when full. */
struct rtattr *sbx_nla_put(struct sbx_nlbuf *b, unsigned short type, const void *d, size_t len);
void sbx_nla_end(struct sbx_nlbuf *b, struct rtattr *a);
/* Send one request and read its acknowledgement: 0, or -errno. */
int sbx_nl_talk(int fd, struct sbx_nlbuf *b);

#endif
