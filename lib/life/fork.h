/* SPDX-License-Identifier: MIT */
/*
 * Forks (SPEC §7): N sandboxes from one snapshot, each on the snapshot's
 * shared read-only layers with an empty writable layer of its own, within the
 * snapshot's fork budget; and the merge step that keeps the winning branch.
 */
#ifndef SBX_FORK_H
#define SBX_FORK_H

#include "error.h"
#include "id.h"
#include "manifest.h"
#include "state.h"

/*
 * Make n sandboxes from src, a snapshot or a live sandbox (snapshotted
 * first). With prefix, the children are PREFIX-1..PREFIX-n and the snapshot
 * of a live source PREFIX-base; those that exist already are returned, not
 * made again (a retried fork). More live children than the snapshot's
 * fork.max_fork_factor is exit 75. On failure the children made are
 * destroyed. *ids gets n IDs (caller frees each and the array). The children
 * get the manifest with (no rootfs, no sandbox_id) when given, else the
 * snapshot's, which came with the snapshot and so is held to the operator's
 * policy like any other (provision does that).
 */
int sbx_fork(const struct sbx_store *s, const char *src, long n, const char *prefix,
    const struct sbx_manifest *with, char ***ids, struct sbx_err *e);
/* One sandbox from snapshot snap, named id (NULL: a fresh ID; an existing
 * sandbox of that ID is returned). *ids gets the one ID. */
int sbx_fork_restore(const struct sbx_store *s, const char *snap, const char *id,
    const struct sbx_manifest *with, char ***ids, struct sbx_err *e);
/*
 * The merge step: snapshot winner (a sandbox made from a snapshot) as the new
 * head of its lineage, destroy the other live sandboxes made from the same
 * snapshot, record the decision in the audit log. out gets the new snapshot,
 * named snap_id when not NULL: a repeat with it finds that snapshot of winner
 * made and retires what siblings are left (another sandbox's snapshot under
 * the ID is 65, as for sbx_snap_create).
 */
int sbx_fork_select(const struct sbx_store *s, const char *winner, const char *snap_id,
    char out[SBX_ID_MAX + 1], struct sbx_err *e);

#endif
