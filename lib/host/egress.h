/* SPDX-License-Identifier: MIT */
/*
 * The egress allow-list: a manifest's allowed_egress entries as address
 * ranges and port ranges, with host names resolved on the host and pinned.
 * Both the host's firewall rules (net.c) and the relay (relay.c) decide from
 * this one form.
 */
#ifndef SBX_EGRESS_H
#define SBX_EGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "manifest.h"

struct sbx_egress_rule {
	int family;              /* AF_INET or AF_INET6 */
	unsigned char addr[16];  /* network byte order (IPv4: the first 4 bytes), masked */
	int prefix;              /* 32 or 128 for one address */
	unsigned port_lo, port_hi;
	char *name;              /* the host name this address was pinned for, or NULL */
};

struct sbx_egress {
	struct sbx_egress_rule *r;
	size_t n;
};

/*
 * Parse allowed_egress. Host-name entries take their addresses from pins
 * ("NAME ADDR" lines, as sbx_egress_resolve makes them); with pins NULL they
 * are resolved now.
 */
int sbx_egress_parse(const struct sbx_strv *entries, const struct sbx_strv *pins,
    struct sbx_egress *p, struct sbx_err *e);
/* Resolve the host names of entries into pins ("NAME ADDR"), replacing its
 * contents: IPv4 addresses, and IPv6 ones too with ipv6. */
int sbx_egress_resolve(const struct sbx_strv *entries, int ipv6, struct sbx_strv *pins,
    struct sbx_err *e);
/* Does the list name an IPv6 destination (then the sandbox gets IPv6 too)? */
int sbx_egress_wants_ipv6(const struct sbx_strv *entries);
void sbx_egress_free(struct sbx_egress *p);

enum { SBX_EGRESS_NO, SBX_EGRESS_ADDR, SBX_EGRESS_NAME };
/*
 * May a connection to addr:port go? SBX_EGRESS_ADDR: an address or CIDR entry
 * allows it; SBX_EGRESS_NAME: only host-name entries do, and then only for a
 * host name in names (NULL-terminated, those entries' names) — the caller
 * checks the TLS SNI or HTTP Host against them.
 */
int sbx_egress_match(const struct sbx_egress *p, int family, const void *addr, unsigned port,
    const char **names, size_t max_names);
/* An address entry (no CIDR, no name) with port 53: the resolver to name in resolv.conf. */
const struct sbx_egress_rule *sbx_egress_resolver(const struct sbx_egress *p);

#endif
