/* SPDX-License-Identifier: MIT */
/*
 * The egress relay: one host process per sandbox with an allow-list. The
 * host's rules redirect the sandbox's allowed TCP connections to it; it reads
 * the original destination (SO_ORIGINAL_DST), checks it against the policy
 * (and, for destinations allowed only by host name, the TLS SNI or HTTP
 * Host), connects from the host and copies the bytes, counting them per
 * destination. Refused packets reach it through NFLOG: it counts them and
 * writes rate-limited audit events. It exits when the sandbox's init does.
 */
#ifndef SBX_RELAY_H
#define SBX_RELAY_H

#include <stdint.h>

#include "egress.h"
#include "error.h"
#include "state.h"

struct sbx_relay_dest {
	char name[64];           /* "tcp 10.0.0.2:80", "udp 10.0.0.3:53", "icmp 10.0.0.3" */
	long long sent, received, denied;
};

struct sbx_relay_counts {
	struct sbx_relay_dest *d;    /* per destination, since the relay started */
	size_t n;
};

struct sbx_relay_cfg {
	const struct sbx_store *s;
	const char *sandbox_id;
	const struct sbx_egress *policy;
	unsigned char sandbox4[4], sandbox6[16];  /* the only peers it serves */
	int listen_fd, listen6_fd, nflog_fd, ctl_fd, init_pidfd;  /* listen6_fd: -1 without IPv6 */
};

/*
 * The host name a connection's first bytes ask for: the SNI of a TLS
 * ClientHello, or the Host header of an HTTP request (port dropped). Returns
 * 1 with name set ("" when the bytes are neither TLS nor HTTP), 0 when more
 * bytes are needed, -1 when they carry no name to check or are malformed.
 */
int sbx_relay_peek_name(const unsigned char *b, size_t n, char *name, size_t size);
/* Never returns. Drops every capability first. */
void sbx_relay_main(const struct sbx_relay_cfg *c) __attribute__((noreturn));
/* A netlink socket bound to NFLOG group, copying packet headers at once. */
int sbx_relay_nflog_open(unsigned group, struct sbx_err *e);
/*
 * Ask the relay listening on sock_path for its counters. request (or NULL):
 * "begin\tCORR" or "end\tCORR", a run of correlation ID CORR starting or
 * ending, so that the refusals in between carry its correlation ID.
 */
int sbx_relay_query(const char *sock_path, const char *request, struct sbx_relay_counts *c,
    struct sbx_err *e);
void sbx_relay_counts_free(struct sbx_relay_counts *c);

#endif
