/* SPDX-License-Identifier: MIT */
/*
 * Warm pools kept (sbx-policy(5) pools): each pool's unclaimed members
 * counted, those past max_idle_s or beyond size retired, the missing ones
 * made; members of pools the policy no longer names (or whose manifest
 * changed: its key is another) retired. Claiming is sbx_provision's.
 */
#ifndef SBX_POOL_H
#define SBX_POOL_H

#include "error.h"
#include "state.h"

/*
 * SBX_POOLS_FILL: make the missing members (else only retire); NO_WATCHDOG:
 * made without their own watchdog (a sbx-watchdog --all tends them); SWEEP:
 * also retire pooled sandboxes that no pool lists (their claimer died), which
 * reads every sandbox's state. report (may be NULL) gets each member made
 * ("made") or retired ("pool-idle", "pool-size", "pool-gone", "orphan").
 * A pool that cannot be kept is named in e (-1) after the others are kept.
 */
enum { SBX_POOLS_FILL = 1, SBX_POOLS_NO_WATCHDOG = 2, SBX_POOLS_SWEEP = 4 };
typedef void (*sbx_pool_report_fn)(void *ctx, const char *pool, const char *id,
    const char *what);
int sbx_pools_tend(const struct sbx_store *s, int flags, sbx_pool_report_fn report, void *ctx,
    struct sbx_err *e);

#endif
