/* SPDX-License-Identifier: MIT */
/*
 * Snapshots (SPEC §7): a sandbox's writable layer captured as a
 * content-addressed layer while the sandbox is frozen, with metadata naming
 * the whole chain of layers it stacks on. The store extends the state root:
 *
 *   $SBX_ROOT/snapshots/ID.yaml     metadata, written last and atomically
 *   $SBX_ROOT/snapshots/ID.index    what the layer's tree held (for the next diff)
 *   $SBX_ROOT/layers/HEX.tar.zst    layers (and memory checkpoints, packed
 *                                   the same way), one file per SHA-256, shared
 *   $SBX_ROOT/cache/HEX/            a layer extracted once, mounted read-only
 *                                   (or a checkpoint, read by its tier)
 *   $SBX_ROOT/snapshots/.lock       shared while snapshots are made or used,
 *                                   exclusive while retention removes them
 *
 * A snapshot exists once its metadata file does; everything it names was
 * fsynced before. Anything else in layers/ or cache/ that no snapshot names
 * is garbage for sbx_snapshot_retain().
 */
#ifndef SBX_SNAPSHOT_H
#define SBX_SNAPSHOT_H

#include <stdio.h>

#include "doc.h"
#include "error.h"
#include "id.h"
#include "layer.h"
#include "manifest.h"
#include "state.h"

#define SBX_MAX_LAYERS 128
#define SBX_MAX_DIFFS 8       /* diff layers on one full one, then a full one again */

struct sbx_snap_layer {
	char digest[SBX_DIGEST_HEX + 1];
	long long size, unpacked;
};

struct sbx_snapshot {
	char *snapshot_id, *parent, *lineage, *source_sandbox, *base_rootfs, *created_at, *reason;
	struct sbx_snap_layer *layers;     /* bottom first, each once; the last is the
	                                    * snapshot's own (or the same tree already there) */
	size_t n_layers;
	struct sbx_manifest manifest;      /* the source sandbox's, without state keys */
	/* The sandbox's memory, when its tier could checkpoint it: a directory
	 * the tier wrote, packed as a layer is (but never stacked), restorable
	 * only by the tier that wrote it (memory_tier: tier/runtime, "oci/runsc"). */
	struct sbx_snap_layer memory;
	int has_memory;
	char *memory_tier;
};

/* The blobs a snapshot names in layers/: its layers, bottom first, then its
 * checkpoint. The i-th, or NULL past the last; what (may be NULL) gets
 * "layer" or "checkpoint", for messages. Not a chain: only layers stack. */
const struct sbx_snap_layer *sbx_snapshot_blob(const struct sbx_snapshot *sn, size_t i,
    const char **what);

/*
 * Who stands on which snapshot. The store cannot tell a live sandbox (that is
 * the lifecycle's and its tiers' knowledge): the caller hands it a function
 * that lists every sandbox not terminated and the rootfs it was made from
 * (sandbox[i] on root[i]), which it calls under the store's lock.
 */
struct sbx_snapshot_users {
	struct sbx_strv sandbox, root;
};
typedef int (*sbx_snapshot_users_fn)(const struct sbx_store *s, struct sbx_snapshot_users *u,
    struct sbx_err *e);
void sbx_snapshot_users_free(struct sbx_snapshot_users *u);

/* Lock the snapshot store: shared to make or use snapshots, exclusive to remove. */
int sbx_snapshot_lock(const struct sbx_store *s, int exclusive, struct sbx_err *e);
/* Set this process's bounds on what a layer read from outside may expand to
 * from the operator's policy (layer.h; the policy's limits: layer_mb, layer_ratio). */
int sbx_snapshot_limits(const struct sbx_store *s, struct sbx_err *e);
int sbx_snapshot_exists(const struct sbx_store *s, const char *id);
int sbx_snapshot_load(const struct sbx_store *s, const char *id, struct sbx_snapshot *sn,
    struct sbx_err *e);
void sbx_snapshot_free(struct sbx_snapshot *sn);
/* Every snapshot ID, sorted by creation time (oldest first). */
int sbx_snapshot_list(const struct sbx_store *s, char ***ids, size_t *n, struct sbx_err *e);
int sbx_snapshot_emit(FILE *f, const struct sbx_snapshot *sn, enum sbx_format fmt);

/*
 * Under the sandbox's lock: pack its writable layer into the store (pack
 * writes it to fd in the layer format, layer.h; the tier's capture) and fill
 * sn's layers, parent, lineage and base from m. The layer is a diff on the
 * sandbox's previous snapshot (m's snapshot.last_snapshot_id) when there is a
 * usable one, else the whole writable layer on the snapshot m was made from.
 * With whole, what pack writes is everything the sandbox has over its base
 * root, even when m was made from a snapshot (a microVM's clone, whose disk
 * holds its parent's files): it stacks on none of the parent's layers, which
 * is still its parent and lineage.
 */
typedef int (*sbx_snapshot_pack_fn)(void *ctx, int fd, const struct sbx_pack_opts *o,
    struct sbx_layer_info *li, struct sbx_err *e);
int sbx_snapshot_capture(const struct sbx_store *s, const struct sbx_manifest *m,
    double frozen_at, int whole, sbx_snapshot_pack_fn pack, void *ctx, struct sbx_snapshot *sn,
    struct sbx_err *e);
/*
 * Under the store's shared lock, as capture: pack the memory checkpoint its
 * tier wrote in dir (owned by the store's owner: root, or a rootless caller)
 * into the store and name it in sn, written by tier ("oci/runsc": words of
 * A-Z a-z 0-9 . _ + - joined by '/', none beginning with a dot, at most 64
 * bytes; else 70). Called after sbx_snapshot_capture, before
 * sbx_snapshot_save.
 */
int sbx_snapshot_memory_pack(const struct sbx_store *s, const char *dir, const char *tier,
    struct sbx_snapshot *sn, struct sbx_err *e);
/* The checkpoint of sn extracted into the cache (checked against its digest
 * the first time, as layers are), its directory in dir; the tier reads it,
 * never writes, under the store's shared lock (retention removes what no
 * snapshot names). A snapshot without memory is 66; a damaged checkpoint 65. */
int sbx_snapshot_memory_dir(const struct sbx_store *s, const struct sbx_snapshot *sn, char *dir,
    size_t size, struct sbx_err *e);
/* Recompute every layer's (and the checkpoint's) digest and check what mounting needs (a chain
 * overlayfs can stack, a base root that is there); damage is exit 1 naming
 * the layer. */
int sbx_snapshot_verify(const struct sbx_store *s, const char *id, struct sbx_err *e);
/* Remove a snapshot's metadata (its layers go with retention). A snapshot a
 * live sandbox was made from is exit 75. */
int sbx_snapshot_remove(const struct sbx_store *s, sbx_snapshot_users_fn users, const char *id,
    struct sbx_err *e);
/* A snapshot and every layer of its chain (and its checkpoint) as one tar archive on fd. */
int sbx_snapshot_export(const struct sbx_store *s, const char *id, int fd, struct sbx_err *e);
/* The reverse, checking every digest and every entry; out gets the ID. */
int sbx_snapshot_import(const struct sbx_store *s, int fd, char out[SBX_ID_MAX + 1],
    struct sbx_err *e);

/*
 * What a sandbox made from snapshot id mounts: the layer cache directories,
 * bottom first (extracting layers not cached yet), and the base root
 * ("host" or a directory). Caller frees dirs[i], dirs and *base.
 */
int sbx_snapshot_lowers(const struct sbx_store *s, const char *id, char ***dirs, size_t *n,
    char **base, struct sbx_err *e);

/* Called for what retention removes (or would). kind: snapshot, layer, cache, temp. */
typedef void (*sbx_snap_report)(void *ctx, const char *kind, const char *name);
/*
 * Retention: keep the newest keep_last snapshots of each lineage (0: all) and
 * those younger than max_age_s (0: no age limit; with both, a snapshot kept by
 * either stays), plus the snapshot each live sandbox was made from; remove the
 * rest, then layers and cache entries no remaining snapshot names, and
 * temporary files crashes left. A kept snapshot keeps the layers of its whole
 * chain (its metadata lists them), not its parents' metadata.
 */
int sbx_snapshot_retain(const struct sbx_store *s, sbx_snapshot_users_fn users,
    long long keep_last, double max_age_s, int dry_run, sbx_snap_report report, void *ctx, struct sbx_err *e);
/* snapshot.keep: keep only the newest keep of sandbox sid's periodic and
 * before-destroy snapshots (the others of its snapshots stay), with the same
 * sweep of what no remaining snapshot names. */
int sbx_snapshot_prune(const struct sbx_store *s, sbx_snapshot_users_fn users, const char *sid,
    long long keep, struct sbx_err *e);


/* The store's parts, for stores elsewhere (remote.c) */

/* Parse metadata read from name (untrusted: every field is checked, and a
 * chain that names a layer twice is refused). sbx_snapshot_load reads this
 * store's own metadata more kindly: a layer an earlier sbx named twice is
 * kept once, at its topmost place (the same tree; see chain_dedupe). */
int sbx_snapshot_parse(const char *name, const char *buf, size_t len, struct sbx_snapshot *sn,
    struct sbx_err *e);
/* Whether overlayfs can stack sn's chain: 1 to SBX_MAX_LAYERS layers, none twice (65). */
int sbx_snapshot_chain_check(const char *name, const struct sbx_snapshot *sn,
    struct sbx_err *e);
/* Write a snapshot's metadata, never in place of one (two snapshots given the
 * same ID at once: the second fails, errno EEXIST). */
int sbx_snapshot_save(const struct sbx_store *s, const struct sbx_snapshot *sn,
    struct sbx_err *e);
/* Whether two snapshots stack the same layers (and hold the same checkpoint). */
int sbx_snapshot_same_layers(const struct sbx_snapshot *a, const struct sbx_snapshot *b);
/* Whether snapshot sn is in the store: 1 with the same layers, 0 not there;
 * another snapshot under its ID is -1 (exit 65). */
int sbx_snapshot_have(const struct sbx_store *s, const struct sbx_snapshot *sn,
    struct sbx_err *e);
int sbx_snapshot_layer_path(const struct sbx_store *s, const char *hex, char *buf, size_t size,
    struct sbx_err *e);
/* A temporary file in layers/ (removed by retention if a crash leaves it); its fd. */
int sbx_snapshot_layer_tmp(const struct sbx_store *s, const char *hex, char *path, size_t size,
    struct sbx_err *e);
/* Move a checked, fsynced temporary file into the store as layer hex. */
int sbx_snapshot_layer_commit(const struct sbx_store *s, const char *tmp, const char *hex,
    struct sbx_err *e);

/* Snapshots as retention sees them: sorted oldest first, and what stays. */
struct sbx_snap_set {
	struct sbx_snapshot *v;
	size_t n;
	char *keep;             /* 1 kept by the rules, 2 needed by a live sandbox */
};
void sbx_snapshot_set_free(struct sbx_snap_set *a);
long sbx_snapshot_set_find(const struct sbx_snap_set *a, const char *id);
/* Whether a kept snapshot names blob hex (a layer or a checkpoint). */
int sbx_snapshot_set_names(const struct sbx_snap_set *a, const char *hex);
/* Retention's rules (see sbx_snapshot_retain) applied to a, with the live
 * sandboxes users lists in store live (either NULL: none) pinning the
 * snapshots they run on. When users cannot say, -1: nothing is to go. */
int sbx_snapshot_set_choose(struct sbx_snap_set *a, const struct sbx_store *live,
    sbx_snapshot_users_fn users, long long keep_last, double max_age_s, double now,
    struct sbx_err *e);

#endif
