/* SPDX-License-Identifier: MIT */
/*
 * Snapshot stores on S3-compatible object storage, shared by many hosts:
 *
 *   PREFIX/layers/sha256/HEX      a layer (or a memory checkpoint), named by
 *                                 the SHA-256 of its bytes
 *   PREFIX/snapshots/ID.yaml      a snapshot's metadata, written last
 *
 * A snapshot is visible once its metadata object is; every layer it names was
 * uploaded (and checked by the server against its signed SHA-256) before.
 * Every download is checked against its digest before it is used. Pulled
 * layers go to the local store's layers/ and are extracted once into its
 * cache, shared by every fork on this host.
 */
#ifndef SBX_REMOTE_H
#define SBX_REMOTE_H

#include "snapshot.h"

/* A store URL's syntax: file://$SBX_ROOT/snapshots or s3://BUCKET[/PREFIX]. */
int sbx_remote_is_s3(const char *url);

/* Upload snapshot id (its layers first, its metadata last). out_layers and
 * out_bytes (may be NULL) get what was uploaded; layers there already are not. */
int sbx_remote_push(const struct sbx_store *s, const char *url, const char *id,
    int *out_layers, long long *out_bytes, struct sbx_err *e);
/* Download snapshot id into the local store (nothing if it is there with the
 * same layers; exit 65 if another snapshot holds its ID). */
int sbx_remote_pull(const struct sbx_store *s, const char *url, const char *id,
    struct sbx_err *e);
/* Pull id when url is an s3:// store and id is not in the local store. */
int sbx_remote_ensure(const struct sbx_store *s, const char *url, const char *id,
    struct sbx_err *e);
/* The store's metadata of snapshot id (checked as untrusted input). */
int sbx_remote_load(const char *url, const char *id, struct sbx_snapshot *sn,
    struct sbx_err *e);
/* Delete snapshot id's metadata from the store (its layers go with retention);
 * exit 66 if the store has no such snapshot. */
int sbx_remote_remove(const char *url, const char *id, struct sbx_err *e);
/* The store's snapshots, oldest first. */
int sbx_remote_list(const char *url, struct sbx_snap_set *out, struct sbx_err *e);
/*
 * Retention on the store with the local rules (keep_last, max_age_s, chains
 * of kept snapshots and of this host's live sandboxes). A layer no kept
 * snapshot names is deleted only if it is older than the sweep's start less
 * grace_s (by the server's clock), so that a push under way on another host,
 * which uploads or refreshes its layers before its metadata, keeps them.
 * Multipart uploads older than that are aborted.
 */
int sbx_remote_retain(const struct sbx_store *s, sbx_snapshot_users_fn users, const char *url,
    long long keep_last, double max_age_s, double grace_s, int dry_run, sbx_snap_report report,
    void *ctx, struct sbx_err *e);

#endif
