/* SPDX-License-Identifier: MIT */
/*
 * Garbage collection: reap sandboxes whose init is gone or whose lifetime is
 * over, finish half-removed state, and remove kernel objects (cgroups) that no
 * state names any more — what a crash or a reboot leaves behind.
 */
#ifndef SBX_GC_H
#define SBX_GC_H

#include "error.h"
#include "state.h"

/* Called for each thing removed (or, with dry_run, that would be). kind is
 * "sandbox", "cgroup", "state", "frozen" (a sandbox thawed after an
 * interrupted snapshot), "skeleton" (a shared root skeleton no sandbox uses
 * and the host's files have outdated), "netlease", "nft-table" or "veth". */
typedef void (*sbx_gc_report)(void *ctx, const char *kind, const char *name);

/* Destroy sandbox id, snapshotting it first when its manifest asks for
 * snapshot.before_destroy (a failed snapshot keeps the sandbox). */
int sbx_gc_destroy(const struct sbx_store *s, const char *id, struct sbx_err *e);
int sbx_gc_sweep(const struct sbx_store *s, int dry_run, sbx_gc_report report, void *ctx,
    struct sbx_err *e);

#endif
