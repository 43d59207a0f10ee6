/* SPDX-License-Identifier: MIT */
/*
 * Provision: a manifest held to the operator's policy and the host's
 * abilities, made into a sandbox by its tier's driver, with a watchdog.
 */
#ifndef SBX_PROVISION_H
#define SBX_PROVISION_H

#include "error.h"
#include "manifest.h"
#include "policy.h"
#include "state.h"

/*
 * Create a sandbox from m (a manifest; state keys are dropped). With a
 * sandbox_id that exists, nothing is created and m becomes that sandbox's
 * state (*existed = 1). With dry_run, only defaults and checks are applied.
 * SBX_PROV_ONE_SHOT marks a sandbox that lives only as long as its caller
 * (sbx-run -m): no watchdog; its runs keep no trace in the state, destroy
 * records no cleanup step, and its audit lines are synced only before its
 * command starts and when it is gone (with sbx_set_durable(0), its state is
 * not synced either).
 */
enum { SBX_PROV_DRY_RUN = 1, SBX_PROV_NO_WATCHDOG = 2, SBX_PROV_ONE_SHOT = 4 };
int sbx_provision(const struct sbx_store *s, struct sbx_manifest *m, int flags,
    int *existed, struct sbx_err *e);

/*
 * Warm pools (sbx-policy(5) pools): sbx_provision claims a member of the pool
 * whose manifest is m's (m names no sandbox_id), made ready with its lifetime
 * starting at the claim, before it makes one. member: make one member of pool
 * pc (pooled: unclaimed, living max_idle_s), its ID in id; flags may hold
 * SBX_PROV_NO_WATCHDOG. key: the digest that pc's members are filed under
 * (pools/KEY in the state root), pc's manifest as the policy makes it.
 */
int sbx_provision_member(const struct sbx_store *s, const struct sbx_pool_conf *pc, int flags,
    char *id, size_t size, struct sbx_err *e);
int sbx_provision_key(const struct sbx_store *s, const struct sbx_pool_conf *pc, char key[65],
    struct sbx_err *e);

#endif
