/* SPDX-License-Identifier: MIT */
/*
 * The sandbox lifecycle (SPEC §4): run, pause, destroy, and the view of a
 * sandbox that ls and inspect print (provision.h makes one). Each step takes the sandbox's lock, moves
 * its status along the lifecycle, writes the state atomically and appends an
 * audit event; the tier's driver does the kernel work.
 */
#ifndef SBX_SANDBOX_H
#define SBX_SANDBOX_H

#include "driver.h"
#include "error.h"
#include "manifest.h"
#include "snapshot.h"
#include "state.h"

/*
 * Why a sandbox or a run was killed, in words for a message: a kill_reason
 * (memory, wall-clock, pids, disk, manual) with m's limit ("memory limit of
 * 256 MiB reached").
 */
void sbx_sandbox_kill_text(const char *reason, const struct sbx_manifest *m, char *buf,
    size_t size);
/* Run a command in sandbox id; the trace is saved as the sandbox's last. */
int sbx_sandbox_run(const struct sbx_store *s, const char *id, const struct sbx_exec *x,
    struct sbx_exec_result *res, struct sbx_err *e);
/* Freeze every process of the sandbox (status paused), or thaw it (ready). A
 * paused sandbox's lifetime keeps running. */
/* Between a runner worker's runs, after an answer: have the tier clear what
 * the last run left in a and make what the next one needs (x->ahead); id
 * NULL: clear it all, for good. Best effort, errors dropped. 1: the sandbox
 * is still being made, ask again shortly; else 0. */
int sbx_sandbox_ahead(const struct sbx_store *s, const char *id, struct sbx_exec_ahead *a);
int sbx_sandbox_pause(const struct sbx_store *s, const char *id, int pause, struct sbx_err *e);
/* End a sandbox's life for `reason` (wall-clock, manual...): kill everything and
 * remove its kernel objects, keep its state as terminated with the reason. */
int sbx_sandbox_expire(const struct sbx_store *s, const char *id, const char *reason,
    struct sbx_err *e);
/* Record the watchdog's last warning in the state. */
/* Resolve the allow-list's host names again and re-pin them where they moved. */
int sbx_sandbox_egress_refresh(const struct sbx_store *s, const char *id, struct sbx_err *e);
int sbx_sandbox_note(const struct sbx_store *s, const char *id, const char *warning,
    struct sbx_err *e);
/* After a snapshot was killed midway (status snapshotting, lock free): thaw
 * the sandbox and make it ready again. */
int sbx_sandbox_recover(const struct sbx_store *s, const char *id, struct sbx_err *e);
/* Kill everything, remove kernel objects and state. A missing sandbox is exit 66. */
int sbx_sandbox_destroy(const struct sbx_store *s, const char *id, struct sbx_err *e);
/*
 * The same; with SBX_DESTROY_DETACH (a one-shot's end), return as soon as
 * every process of the sandbox is dead, where the tier can say (its halt):
 * a detached child of the caller, holding the sandbox's lock, removes the
 * rest (status cleanup meanwhile; a crash leaves it to the next sweep).
 * The child is the caller's to reap, should the caller live on.
 */
enum { SBX_DESTROY_DETACH = 1 };
int sbx_sandbox_destroy_ex(const struct sbx_store *s, const char *id, int flags,
    struct sbx_err *e);
/*
 * Destroy warm-pool member id for why (pool-idle, ...) unless a claim has it:
 * 1 destroyed, 0 not (claimed, busy, gone or no member), -1 e. A member
 * whose claimer died midway (pooled, out of its pool) is retired too.
 */
int sbx_sandbox_retire(const struct sbx_store *s, const char *id, const char *why,
    struct sbx_err *e);
/* The tier's destroy, after the sandbox's watchdog is gone. */
int sbx_sandbox_teardown(const struct sbx_driver *drv, const struct sbx_store *s,
    const struct sbx_manifest *m, struct sbx_err *e);
/* The sandboxes not terminated and the rootfs each was made from
 * (sbx_snapshot_users_fn: what the snapshot store asks). */
int sbx_sandbox_users(const struct sbx_store *s, struct sbx_snapshot_users *u, struct sbx_err *e);
/* The sandboxes made from snapshot id that are not terminated. */
int sbx_sandbox_children(const struct sbx_store *s, const char *id, struct sbx_strv *kids,
    struct sbx_err *e);
/*
 * Give live sandbox id seconds more of lifetime: expires_at and
 * max_wall_clock_s move on, held to the policy's limit on
 * max_wall_clock_s (77), and what enforces the deadline learns it (its
 * init; the watchdog rereads the state). *until gets the new expires_at.
 */
int sbx_sandbox_extend(const struct sbx_store *s, const char *id, double seconds, double *until,
    struct sbx_err *e);
/*
 * What live sandbox id uses now, as sbx-inspect --usage prints it:
 * sandbox_id, status, memory_mb, cpu_seconds, pids, disk_mb (null where the
 * tier cannot tell), each limit beside it, expires_at and seconds_left.
 * A sandbox that is not live is 65.
 */
struct sbx_node *sbx_sandbox_usage(const struct sbx_store *s, const char *id, struct sbx_err *e);
/* The state document as ls and inspect show it: status reflects the kernel
 * (terminated when init is gone, expired past expires_at, executing while runs are). */
int sbx_sandbox_view(const struct sbx_store *s, const char *id, struct sbx_manifest *m,
    struct sbx_err *e);

#endif
