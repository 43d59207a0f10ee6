/* SPDX-License-Identifier: MIT */
/* The environment a run gets where the tier starts it from outside (oci, microvm). */
#ifndef SBX_TIER_ENV_H
#define SBX_TIER_ENV_H

#include <stddef.h>

#include "driver.h"

/* The command's environment, as the namespace tier's (later entries win):
 * PATH, HOME (by uid), HOSTNAME, the manifest's env, then x's; pointers into
 * one block, *pool, which the caller frees with the array. NULL: no memory. */
const char **sbx_tier_env(const struct sbx_manifest *m, const struct sbx_exec *x, unsigned uid,
    size_t *count, char **pool);

#endif
