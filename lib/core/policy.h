/* SPDX-License-Identifier: MIT */
/*
 * The operator's policy (sbx-policy(5)): the ceilings every manifest is held
 * to, whoever wrote it (an operator, an agent, a snapshot from a bucket), and
 * the defaults a manifest gets for what it leaves out. It is read from
 * $SBX_ROOT/policy.yaml, or the file named by sbx_policy_set_path() or
 * $SBX_POLICY; without a file, the built-in policy holds. Some paths are
 * never mountable, whatever a policy says: /, /proc, /sys, /dev, /run, /boot,
 * the state root and its ancestors, and any kernel filesystem.
 */
#ifndef SBX_POLICY_H
#define SBX_POLICY_H

#include "error.h"
#include "manifest.h"
#include "state.h"

/* Name the policy file (the CLI's --policy); NULL: $SBX_POLICY, else the state root's. */
void sbx_policy_set_path(const char *path);

struct sbx_policy;

/*
 * The policy for store s, read once per process. A named file that is missing
 * is exit 66; one that others may write, or owned by someone but root or the
 * caller, exit 77; a malformed one 65 with FILE:LINE:COL.
 */
const struct sbx_policy *sbx_policy_get(const struct sbx_store *s, struct sbx_err *e);
/* Parse a policy document (for tests and the fuzzer); name is used in messages. */
int sbx_policy_parse(const char *name, const char *buf, size_t len, struct sbx_policy **out,
    struct sbx_err *e);
void sbx_policy_free(struct sbx_policy *p);
/* What a snapshot layer read from outside may expand to (limits: layer_mb,
 * layer_ratio): 0 and -1 where the policy sets none (layer.h's defaults). */
void sbx_policy_layer_limits(const struct sbx_policy *p, long long *max_mb, long long *ratio);

/* Fill the resource keys m leaves out with the policy's defaults, and the
 * idmap of rw mounts (true where the policy allows it); filled gets the
 * limits so set ("cpu_cores 1, memory_mb 512"), for messages. */
void sbx_policy_defaults(const struct sbx_policy *p, const struct sbx_store *s,
    struct sbx_manifest *m, char *filled, size_t size);
/*
 * Hold m (defaults applied) to the policy: exit 77 naming the manifest key
 * and the policy line (or the built-in rule) it goes beyond. base is what the
 * root stacks on: "host" or a directory (a snapshot's base_rootfs for a root
 * made from a snapshot).
 */
int sbx_policy_check(const struct sbx_policy *p, const struct sbx_store *s,
    const struct sbx_manifest *m, const char *base, struct sbx_err *e);
/* Only m's resource_allocation against the policy's limits (77 as above):
 * what a live sandbox's new lifetime is held to. */
int sbx_policy_check_limits(const struct sbx_policy *p, const struct sbx_store *s,
    const struct sbx_manifest *m, struct sbx_err *e);
/*
 * A warm pool (pools: in the policy): size members made from the manifest
 * file, each destroyed after max_idle_s unclaimed; refill_on_claim: a claim
 * starts the member that replaces it (else only the refiller does).
 */
struct sbx_pool_conf {
	char *name, *manifest;
	long long size, max_idle_s;
	int refill_on_claim, line;
};
/* The policy's pools, in its order: their number; *out is the policy's array. */
size_t sbx_policy_pools(const struct sbx_policy *p, const struct sbx_pool_conf **out);

/*
 * Refuse (77) a host path that is never mountable, checked on the opened
 * object fd (O_PATH), so a path swapped after the policy check cannot slip
 * in: what lies on /proc, /sys, /dev, /run or any kernel filesystem, what is
 * /, inside /boot or the state root, or holds the state root. path is what
 * fd was opened from (for a file, its directory is walked); what names it.
 */
int sbx_policy_never_fd(const struct sbx_store *s, int fd, const char *path, const char *what,
    struct sbx_err *e);

#endif
