/* SPDX-License-Identifier: MIT */
/*
 * Taking a snapshot of a sandbox: the lifecycle's part (the sandbox's state,
 * freezing it through its tier's driver, pushing to its store) around the
 * snapshot store's (snapshot.h).
 */
#ifndef SBX_SNAP_H
#define SBX_SNAP_H

#include "error.h"
#include "id.h"
#include "state.h"

struct sbx_snap_opts {
	const char *id;        /* caller-chosen snapshot ID, or NULL */
	const char *reason;    /* manual, periodic, before-destroy, before-run, fork, select */
	int no_memory;         /* files only, even where the tier can checkpoint memory */
};
/*
 * Snapshot sandbox sid: freeze it, pack its writable layer, thaw it, write the
 * metadata. With opts->id naming a snapshot of the same sandbox, nothing is
 * done (an idempotent retry); of another sandbox, exit 65. out gets the ID.
 * A sandbox whose snapshot.storage_backend is an s3:// store gets the
 * snapshot pushed there too; if that fails, the snapshot stays here and the
 * error names it. A tier that cannot capture its writable layer is exit 69.
 */
int sbx_snap_create(const struct sbx_store *s, const char *sid,
    const struct sbx_snap_opts *opts, char out[SBX_ID_MAX + 1], struct sbx_err *e);

#endif
