/* SPDX-License-Identifier: MIT */
/*
 * The host IDs of a sandbox's user namespace, one allocation for every tier
 * (a range in use by a namespace sandbox is never given to an OCI one): a
 * 65536-wide slice of root's subordinate range (/etc/subuid) or of a default
 * range, never host root, recorded in the sandbox's directory ("ids"); without
 * root, the caller's own ID. Sets runtime_state's uid_base, gid_base and
 * id_count of m's tier.
 */
#ifndef SBX_IDS_H
#define SBX_IDS_H

#include "error.h"
#include "manifest.h"
#include "state.h"

int sbx_tier_pick_ids(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e);
/*
 * A new user namespace with the maps uid_map and gid_map (uid_map's text,
 * "INSIDE OUTSIDE COUNT" lines), by a descriptor: what an ID-mapped mount is
 * made with. The child that held it while it was mapped is gone on return.
 * what names it in an error.
 */
int sbx_userns_open(const char *uid_map, const char *gid_map, const char *what,
    struct sbx_err *e);

#endif
