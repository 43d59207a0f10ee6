/* SPDX-License-Identifier: MIT */
/*
 * The state store (SPEC §4): one directory per sandbox under $SBX_ROOT, holding
 * its state document (manifest + status + runtime), its writable layer and its
 * run markers. Every change is an atomic write under the sandbox's lock, and
 * only the lifecycle's transitions are allowed. Snapshots extend this store
 * with a sibling tree (snapshots/, layers/).
 *
 *   $SBX_ROOT/sandboxes/ID/state.yaml   the state document
 *   $SBX_ROOT/sandboxes/ID/layer/       writable layer (upper/, work/)
 *   $SBX_ROOT/sandboxes/ID/lower/       synthesized lower layer (rootfs: host)
 *   $SBX_ROOT/sandboxes/ID/root/        mount point of the sandbox's root
 *   $SBX_ROOT/audit.log                 hash-chained audit log
 */
#ifndef SBX_STATE_H
#define SBX_STATE_H

#include <stddef.h>

#include "error.h"
#include "manifest.h"

struct sbx_store {
	char root[1024];
	char group[16];           /* names this root's kernel objects ("r" + 12 hex) */
	int rootless;             /* not running as host root */
};

/* Open (creating) the state root: $SBX_ROOT, else /var/lib/sbx or $XDG_STATE_HOME/sbx. */
int sbx_store_open(struct sbx_store *s, struct sbx_err *e);
/* The same, creating nothing (a dry run: where the root and its policy would be). */
int sbx_store_locate(struct sbx_store *s, struct sbx_err *e);
/* Path of a sandbox's directory, or of `sub` inside it (sub may be NULL). */
int sbx_store_path(const struct sbx_store *s, const char *id, const char *sub, char *buf,
    size_t size, struct sbx_err *e);
int sbx_store_exists(const struct sbx_store *s, const char *id);
/*
 * Lock a sandbox: an exclusive lock for lifecycle changes, shared for runs.
 * Returns the lock fd (close it to unlock). Without wait, a held lock is exit 75.
 * A sandbox removed while we waited is exit 66.
 */
int sbx_store_lock(const struct sbx_store *s, const char *id, int exclusive, int wait,
    struct sbx_err *e);
/* Create the sandbox directory (exit 75 if it appeared meanwhile); returns its lock. */
int sbx_store_create(const struct sbx_store *s, const char *id, struct sbx_err *e);
int sbx_state_load(const struct sbx_store *s, const char *id, struct sbx_manifest *m,
    struct sbx_err *e);
int sbx_state_save(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e);
/* As sbx_state_save, atomic but not synced: for a state no host crash could
 * make matter (the crash ends the sandbox, and the sweep takes it whatever
 * the disk says). */
int sbx_state_save_nosync(const struct sbx_store *s, const struct sbx_manifest *m,
    struct sbx_err *e);
/* Move m to status `to`, refusing transitions the lifecycle does not have (exit 65). */
int sbx_state_transition(struct sbx_manifest *m, enum sbx_status to, struct sbx_err *e);
/* Remove a sandbox's directory (its kernel objects must be gone already). */
int sbx_store_remove(const struct sbx_store *s, const char *id, struct sbx_err *e);
/* Its first half: rename the directory to a tombstone (its path in tomb),
 * out of the store, for sbx_rm_rf (or a sweep) to remove. 1: no directory. */
int sbx_store_bury(const struct sbx_store *s, const char *id, char *tomb, size_t size,
    struct sbx_err *e);
/*
 * Destroyed sandboxes' names, so that a repeated destroy of one (a retried
 * step) is the success it was: gone/ID in the state root, made before the
 * sandbox's directory goes, removed when a sandbox of that ID is made
 * again, pruned by the sweep after a week. Marking returns -1 with errno.
 */
int sbx_store_mark_gone(const struct sbx_store *s, const char *id);
int sbx_store_was_gone(const struct sbx_store *s, const char *id);
void sbx_store_unmark_gone(const struct sbx_store *s, const char *id);
/* Marks older than max_age_s removed (each named to report); dry: none. */
void sbx_store_gone_prune(const struct sbx_store *s, double max_age_s, int dry,
    void (*report)(void *ctx, const char *kind, const char *name), void *ctx);
/* The IDs of every sandbox, sorted; caller frees each and the array. */
int sbx_store_list(const struct sbx_store *s, char ***ids, size_t *n, struct sbx_err *e);
/*
 * Warm pools' members, by the pool's key (its manifest's digest): an empty
 * file pools/KEY/ID per member that is unclaimed. Taking it (unlinking) is
 * the claim: one caller wins. add: -1 with e; take: 0 this caller took it,
 * -1 it was not there. list: the members of key, or (key NULL) the keys
 * with a directory; a root with none is no error. prune: an empty key's
 * directory goes.
 */
int sbx_store_pool_add(const struct sbx_store *s, const char *key, const char *id,
    struct sbx_err *e);
int sbx_store_pool_take(const struct sbx_store *s, const char *key, const char *id);
int sbx_store_pool_has(const struct sbx_store *s, const char *key, const char *id);
int sbx_store_pool_list(const struct sbx_store *s, const char *key, char ***ids, size_t *n,
    struct sbx_err *e);
void sbx_store_pool_prune(const struct sbx_store *s, const char *key);

#endif
