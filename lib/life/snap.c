/* SPDX-License-Identifier: MIT */
/* Taking a snapshot of a sandbox: see snap.h. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "driver.h"
#include "id.h"
#include "progress.h"
#include "remote.h"
#include "sandbox.h"
#include "snap.h"
#include "snapshot.h"
#include "util.h"

struct pack_ctx {
	const struct sbx_driver *drv;
	const struct sbx_store *s;
	const struct sbx_manifest *m;
};

/* The store's packer: the tier writes its writable layer. */
static int
pack(void *ctx, int fd, const struct sbx_pack_opts *o, struct sbx_layer_info *li,
    struct sbx_err *e)
{
	const struct pack_ctx *c = ctx;

	return c->drv->capture(c->s, c->m, fd, o, li, e);
}

/*
 * The frozen sandbox's memory, where its tier can checkpoint it, into the
 * sandbox's own checkpoint/ directory (*dir: its path, "" when none was
 * taken): packed into the store once the sandbox runs again.
 */
static int
take_memory(const struct sbx_store *s, const struct sbx_driver *drv, struct sbx_manifest *m,
    const struct sbx_snap_opts *opts, char *dir, size_t size, struct sbx_err *e)
{
	dir[0] = '\0';
	if (opts->no_memory || drv->can_checkpoint == NULL || !drv->can_checkpoint(m))
		return 0;
	if (sbx_store_path(s, m->sandbox_id, "checkpoint", dir, size, e) == -1 ||
	    sbx_rm_rf(dir, e) == -1)
		return -1;
	if (mkdir(dir, 0700) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", dir);
	if (drv->checkpoint(s, m, dir, e) == -1) {
		sbx_rm_rf(dir, NULL);
		dir[0] = '\0';
		return sbx_err_prefix(e, "memory checkpoint");
	}
	return 0;
}

/* The checkpoint in dir into the store, as sn's memory; dir removed. */
static int
keep_memory(const struct sbx_store *s, const struct sbx_manifest *m, const char *dir,
    struct sbx_snapshot *sn, struct sbx_err *e)
{
	char tier[128];
	int r;

	if (dir[0] == '\0')
		return 0;
	snprintf(tier, sizeof tier, "%s/%s", m->isolation_level,
	    sbx_rt_str(m, "runtime_kind") ? sbx_rt_str(m, "runtime_kind") : m->isolation_level);
	r = sbx_snapshot_memory_pack(s, dir, tier, sn, e);
	sbx_rm_rf(dir, NULL);
	return r;
}

/* The source's manifest, as a snapshot keeps it: no state keys, no ID. */
static int
copy_manifest(const struct sbx_manifest *m, struct sbx_manifest *out, struct sbx_err *e)
{
	int r = sbx_manifest_copy(m, out, e);

	if (r == 0) {
		sbx_manifest_strip_state(out);
		free(out->sandbox_id);
		out->sandbox_id = NULL;
	}
	return r;
}

/*
 * A retried step: the snapshot ID it names was saved already, and is the
 * answer if it is this sandbox's. A snapshot killed before it gave the
 * sandbox back left it SNAPSHOTTING: given back now.
 */
static int
retried(const struct sbx_store *s, const char *sid, const char *id, struct sbx_snapshot *sn,
    struct sbx_manifest *m, struct sbx_err *e)
{
	const struct sbx_driver *drv;

	if (sbx_snapshot_load(s, id, sn, e) == -1)
		return -1;
	if (sn->source_sandbox == NULL || strcmp(sn->source_sandbox, sid) != 0)
		return sbx_err_set(e, SBX_EX_DATAERR, "snapshot ID %s is taken by a snapshot of "
		    "sandbox %s", id, sn->source_sandbox);
	if (sbx_sandbox_view(s, sid, m, e) == -1)
		return -1;
	if (m->status != SBX_STATUS_SNAPSHOTTING)
		return 0;
	if ((drv = sbx_driver_for(m, e)) == NULL || drv->freeze(m, 0, e) == -1)
		return -1;
	m->status = SBX_STATUS_READY;
	free(m->snapshot.last_snapshot_id);
	if ((m->snapshot.last_snapshot_id = strdup(id)) == NULL)
		return sbx_err_oom(e);
	return sbx_state_save(s, m, e);
}

static int
new_snapshot_id(const struct sbx_store *s, char id[SBX_ID_MAX + 1], struct sbx_err *e)
{
	int tries;

	for (tries = 0; tries < 16; tries++) {
		if (sbx_id_new("snap-", id, SBX_ID_MAX + 1, e) == -1)
			return -1;
		if (!sbx_snapshot_exists(s, id))
			return 0;
	}
	return sbx_err_set(e, SBX_EX_CANTCREAT, "cannot allocate a snapshot ID");
}

static int
create_local(const struct sbx_store *s, const char *sid, const struct sbx_snap_opts *opts,
    char out[SBX_ID_MAX + 1], char **backend, struct sbx_err *e)
{
	const struct sbx_driver *drv = NULL;
	struct pack_ctx pc;
	struct sbx_snapshot sn;
	struct sbx_manifest m;
	char id[SBX_ID_MAX + 1], ckpt[1200] = "";
	enum sbx_status was = SBX_STATUS_NONE;
	int slock = -1, lock = -1, frozen = 0, r = -1;
	double frozen_at;

	memset(&sn, 0, sizeof sn);
	sbx_manifest_init(&sn.manifest);
	sbx_manifest_init(&m);
	if (sbx_id_check(sid, e) == -1)
		return -1;
	if (opts->id != NULL) {
		if (sbx_id_check(opts->id, e) == -1)
			return sbx_err_prefix(e, "snapshot ID");
		snprintf(id, sizeof id, "%s", opts->id);
	}
	if ((slock = sbx_snapshot_lock(s, 0, e)) == -1)
		return -1;
	if ((lock = sbx_store_lock(s, sid, 1, 1, e)) == -1)
		goto out;
	if (opts->id != NULL && sbx_snapshot_exists(s, id)) {
		r = retried(s, sid, id, &sn, &m, e);
		if (r == 0)
			snprintf(out, SBX_ID_MAX + 1, "%s", id);
		goto out;
	}
	if (opts->id == NULL && new_snapshot_id(s, id, e) == -1)
		goto out;
	if (sbx_sandbox_view(s, sid, &m, e) == -1 || (drv = sbx_driver_for(&m, e)) == NULL)
		goto out;
	if (!m.has_rt || m.status == SBX_STATUS_NONE || m.status == SBX_STATUS_PROVISIONING ||
	    m.status == SBX_STATUS_CLEANUP) {
		sbx_err_set(e, SBX_EX_TEMPFAIL, "sandbox is %s; try again",
		    m.status ? sbx_status_name(m.status) : "being made");
		goto out;
	}
	/* A running sandbox is frozen while its layer is read; a paused one is
	 * frozen already; a terminated one has nothing running. */
	if (sbx_interrupt_check(e) == -1)
		goto out;
	sbx_progress_phase("freeze", -1, "");
	frozen_at = sbx_realtime();
	/* A snapshot killed midway left it so (we hold its lock: that one is
	 * gone); it was ready, and is frozen again and thawed as by this one. */
	if (m.status == SBX_STATUS_SNAPSHOTTING) {
		was = SBX_STATUS_READY;
		if (drv->freeze(&m, 1, e) == -1) {
			sbx_err_prefix(e, "cannot freeze the sandbox for a consistent snapshot");
			goto restore;
		}
		frozen = 1;
	} else if (m.status == SBX_STATUS_READY || m.status == SBX_STATUS_EXECUTING) {
		was = m.status = SBX_STATUS_READY;
		if (sbx_state_transition(&m, SBX_STATUS_SNAPSHOTTING, e) == -1 ||
		    sbx_state_save(s, &m, e) == -1)
			goto out;
		if (drv->freeze(&m, 1, e) == -1) {
			sbx_err_prefix(e, "cannot freeze the sandbox for a consistent snapshot");
			goto restore;
		}
		frozen = 1;
		sbx_crash_point("snap-frozen");
	}
	if ((sn.snapshot_id = strdup(id)) == NULL || (sn.source_sandbox = strdup(sid)) == NULL ||
	    (sn.reason = strdup(opts->reason ? opts->reason : "manual")) == NULL ||
	    sbx_time_set(&sn.created_at, sbx_realtime()) == -1) {
		sbx_err_oom(e);
		goto restore;
	}
	pc.drv = drv;
	pc.s = s;
	pc.m = &m;
	if (drv->capture == NULL) {
		sbx_driver_cannot(drv, "capture its writable layer", e);
		goto restore;
	}
	/* Memory first: the checkpoint stops the sandbox, and the files are
	 * read as it left them. Past it, the sandbox runs again before the
	 * work may stop. */
	sbx_pause_point("snap-frozen");
	if (sbx_interrupt_check(e) == -1)
		goto restore;
	sbx_progress_phase("memory", -1, "");
	if (frozen && take_memory(s, drv, &m, opts, ckpt, sizeof ckpt, e) == -1)
		goto restore;
	if (ckpt[0] != '\0')
		frozen = 0;
	sbx_progress_phase("pack", -1, "bytes");
	r = sbx_snapshot_capture(s, &m, frozen_at, drv->whole_layer, pack, &pc, &sn, e);
	if (ckpt[0] != '\0' && drv->restart(s, &m, ckpt, r == 0 ? e : NULL) == -1) {
		if (r == 0)
			sbx_err_prefix(e, "restarting the sandbox from its checkpoint");
		r = -1;
	}
	if (r == -1) {
		if (ckpt[0] != '\0')
			sbx_rm_rf(ckpt, NULL);
		goto restore;
	}
	r = -1;
	if (frozen) {
		struct sbx_err te;

		if (drv->freeze(&m, 0, &te) == 0)
			frozen = 0;
	}
	sbx_progress_phase("save", -1, "");
	if (keep_memory(s, &m, ckpt, &sn, e) == -1 || copy_manifest(&m, &sn.manifest, e) == -1 ||
	    sbx_snapshot_save(s, &sn, e) == -1)
		goto restore;
	sbx_crash_point("snap-saved");
	snprintf(out, SBX_ID_MAX + 1, "%s", id);
	r = 0;
restore:
	if (frozen && drv->freeze(&m, 0, r == 0 ? e : NULL) == -1 && r == 0)
		r = -1;
	if (was != SBX_STATUS_NONE) {
		struct sbx_err se;

		m.status = was;
		if (r == 0) {
			free(m.snapshot.last_snapshot_id);
			m.snapshot.last_snapshot_id = strdup(id);
		}
		if (sbx_state_save(s, &m, r == 0 ? e : &se) == -1)
			r = -1;
	} else if (r == 0 && m.status != SBX_STATUS_TERMINATED) {
		free(m.snapshot.last_snapshot_id);
		m.snapshot.last_snapshot_id = strdup(id);
		sbx_state_save(s, &m, NULL);
	}
	sbx_audit(s, sid, "snapshot", r == 0 ? "ok" : "error", r == 0 ? id : e->msg, NULL);
	if (r == 0 && sbx_remote_is_s3(m.snapshot.storage_backend) &&
	    (*backend = strdup(m.snapshot.storage_backend)) == NULL)
		r = sbx_err_oom(e);
out:
	sbx_snapshot_free(&sn);
	sbx_manifest_free(&m);
	if (lock != -1)
		close(lock);
	close(slock);
	return r;
}

int
sbx_snap_create(const struct sbx_store *s, const char *sid,
    const struct sbx_snap_opts *opts, char out[SBX_ID_MAX + 1], struct sbx_err *e)
{
	char *backend = NULL;
	int r;

	if (create_local(s, sid, opts, out, &backend, e) == -1)
		return -1;
	if (backend == NULL)
		return 0;
	/* The sandbox's snapshots go to its store; this host keeps them too. */
	r = sbx_remote_push(s, backend, out, NULL, NULL, e);
	if (r == -1)
		sbx_err_prefix(e, "snapshot %s was made here but not pushed to %s", out, backend);
	free(backend);
	return r;
}
