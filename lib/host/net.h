/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's network under network_policy egress-allow-list: a veth pair
 * whose addresses come from a host-wide pool (leases in /run/sbx/net), an
 * nftables table per sandbox on the host side that refuses everything the
 * policy does not allow and redirects the rest to the sandbox's relay
 * (relay.c). Nothing host-global is changed: no forwarding, no NAT of the
 * host's traffic.
 */
#ifndef SBX_NET_H
#define SBX_NET_H

#include <sys/types.h>

#include "error.h"
#include "manifest.h"
#include "relay.h"
#include "state.h"

#define SBX_NET_POOL_DEFAULT "10.87.0.0/16"
#define SBX_NET_POOL6_DEFAULT "fd87:5b::/96"
#define SBX_NET_RUN_DIR "/run/sbx/net"

/* Can the caller enforce m's network policy here? Exit 69 naming why not. */
int sbx_net_check(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e);
/* Before the root filesystem is made: pin host names (m->rt.egress_pins). */
int sbx_net_prepare(struct sbx_manifest *m, struct sbx_err *e);
/* After init (pid) is cloned and before it goes on: lease, veth pair,
 * addresses, relay, rules. Keeps the veth's net_addr and the relay's
 * relay_pid and relay_start_ticks in the tier's runtime state (sbx_rt_*). */
int sbx_net_create(const struct sbx_store *s, struct sbx_manifest *m, pid_t pid,
    struct sbx_err *e);
/*
 * As sbx_net_create, for a guest behind port (an interface already in pid's
 * network namespace: a VM's tap): there eth0 and port are bridged (br0),
 * with no address and no IPv6 of their own, and the sandbox's address is
 * the guest's to take (sbx_net_guest, sbx_net_guest6). The host's side,
 * rules and relay are the same.
 */
int sbx_net_create_bridged(const struct sbx_store *s, struct sbx_manifest *m, pid_t pid,
    const char *port, struct sbx_err *e);
/* The sandbox's address, its prefix and the gateway (the host's end), from
 * m's lease (network order); -1: m has no network of its own. */
int sbx_net_guest(const struct sbx_manifest *m, unsigned char addr4[4], unsigned char gw4[4],
    int *prefix);
/* Its IPv6 address, prefix and gateway when its allow-list names IPv6
 * destinations: 1; 0 when it does not; -1: no lease, or SBX_NET_POOL6 bad. */
int sbx_net_guest6(const struct sbx_manifest *m, unsigned char addr6[16], unsigned char gw6[16],
    int *prefix);
/* Remove the rules, the veth (if the kernel has not), the relay and the lease. */
int sbx_net_destroy(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e);
/*
 * Resolve m's host names again; when their addresses changed, replace the
 * pinned addresses in the rules and m's pins (*changed = 1; the caller
 * rewrites the sandbox's /etc/hosts, saves the state and signals the relay).
 */
int sbx_net_refresh(const struct sbx_store *s, struct sbx_manifest *m, int *changed,
    struct sbx_err *e);
/* After the caller saved the new pins: the relay rereads them from the state
 * and checks TLS and HTTP names against the new addresses from then on. */
void sbx_net_repinned(const struct sbx_manifest *m);
/*
 * The relay's counters now (for a run's trace). run_phase 1 or -1: a run
 * starts or ends here, and the refusals in between carry its correlation ID
 * (this process's); 0: neither.
 */
int sbx_net_counts(const struct sbx_store *s, const struct sbx_manifest *m, int run_phase,
    struct sbx_relay_counts *c, struct sbx_err *e);
/* A run's figures: what changed between two readings of the counters. */
void sbx_net_trace(const struct sbx_relay_counts *before, const struct sbx_relay_counts *after,
    struct sbx_trace *t);
/* Leases whose sandbox is gone, and tables and veths no lease names:
 * removed (or, with dry_run, reported). kind is "netlease", "nft-table" or "veth". */
int sbx_net_gc(int dry_run, void (*report)(void *ctx, const char *kind, const char *name),
    void *ctx);
/* Does m's policy give the sandbox a network of its own (a veth)? */
int sbx_net_wanted(const struct sbx_manifest *m);

#endif
