/* SPDX-License-Identifier: MIT */
/* Garbage collection: terminated and expired sandboxes, tombstones, and what
 * each tier's sweep finds left behind (for namespaces: cgroups, skeletons,
 * network leases, rules and veths). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "gc.h"
#include "id.h"
#include "manifest.h"
#include "quota.h"
#include "sandbox.h"
#include "snap.h"
#include "snapshot.h"
#include "util.h"

/* How long a destroyed sandbox's name is kept for a repeated destroy. */
#define GONE_KEPT_S (7 * 86400.0)

int
sbx_gc_destroy(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	struct sbx_manifest m;
	long long keep;
	int before;

	/* Destroyed already (a retried step): done, as it was the first time. */
	if (!sbx_store_exists(s, id) && sbx_store_was_gone(s, id))
		return 0;
	if (sbx_state_load(s, id, &m, e) == -1)
		return -1;
	before = m.snapshot.enabled && m.snapshot.before_destroy && m.has_rt;
	keep = m.snapshot.keep != SBX_UNSET_INT ? m.snapshot.keep : 1;
	sbx_manifest_free(&m);
	if (before) {
		struct sbx_snap_opts o = { NULL, "before-destroy", 1 };
		struct sbx_err pe;
		char snap[SBX_ID_MAX + 1];

		/* The layer is on disk even when the sandbox's processes are gone. */
		if (sbx_snap_create(s, id, &o, snap, e) == -1)
			return sbx_err_prefix(e, "snapshot.before_destroy");
		/* The last of its snapshots counts against snapshot.keep too; a
		 * prune that fails leaves the older ones to the next sweep. */
		sbx_snapshot_prune(s, sbx_sandbox_users, id, keep, &pe);
	}
	return sbx_sandbox_destroy(s, id, e);
}

int
sbx_gc_sweep(const struct sbx_store *s, int dry_run, sbx_gc_report report, void *ctx,
    struct sbx_err *e)
{
	const struct sbx_driver *const *d;
	struct sbx_manifest m;
	char **ids, p[1200];
	size_t n, i;
	int r = 0, unsettled = 0;
	DIR *dir;
	struct dirent *de;

	/* Tombstones: removals that a crash interrupted. */
	snprintf(p, sizeof p, "%s/sandboxes", s->root);
	if ((dir = opendir(p)) != NULL) {
		while ((de = readdir(dir)) != NULL) {
			char t[1500];

			if (strncmp(de->d_name, ".dead-", 6) != 0)
				continue;
			report(ctx, "state", de->d_name);
			snprintf(t, sizeof t, "%s/%s", p, de->d_name);
			if (!dry_run) {
				char layer[1600];

				snprintf(layer, sizeof layer, "%s/layer", t);
				sbx_quota_remove(layer, NULL);
				sbx_rm_rf(t, NULL);
			}
		}
		closedir(dir);
	}
	if (sbx_store_list(s, &ids, &n, e) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		struct sbx_err one;

		if (sbx_sandbox_view(s, ids[i], &m, &one) == 0) {
			if (m.status == SBX_STATUS_PROVISIONING)
				unsettled = 1;
			if (m.status == SBX_STATUS_SNAPSHOTTING) {
				/* A snapshot killed midway: thaw the sandbox, give it back. */
				report(ctx, "frozen", ids[i]);
				if (!dry_run && sbx_sandbox_recover(s, ids[i], &one) == -1 && r == 0) {
					*e = one;
					r = -1;
				}
			}
			if (m.status == SBX_STATUS_PROVISIONING || m.status == SBX_STATUS_CLEANUP) {
				/* Mid-provision or mid-destroy: abandoned if no tool holds its lock. */
				int lock = sbx_store_lock(s, ids[i], 1, 0, NULL);

				if (lock != -1) {
					close(lock);
					m.status = SBX_STATUS_TERMINATED;
				}
			}
			if (m.status == SBX_STATUS_POOLED && (m.rt.pool_key == NULL ||
			    !sbx_store_pool_has(s, m.rt.pool_key, ids[i]))) {
				/* A pool's member out of its pool: its claim died midway. */
				int lock = sbx_store_lock(s, ids[i], 1, 0, NULL);

				if (lock != -1) {
					close(lock);
					m.status = SBX_STATUS_TERMINATED;
				}
			}
			if (m.status == SBX_STATUS_TERMINATED) {
				report(ctx, "sandbox", ids[i]);
				if (!dry_run && sbx_gc_destroy(s, ids[i], &one) == -1 && r == 0) {
					*e = one;
					r = -1;
				}
			}
			sbx_manifest_free(&m);
		} else if (one.code == SBX_EX_NOINPUT) {
			/* A directory without state: a provision killed before its first write. */
			int lock = sbx_store_lock(s, ids[i], 1, 0, NULL);

			unsettled = 1;

			if (lock != -1) {
				report(ctx, "state", ids[i]);
				if (!dry_run)
					sbx_store_remove(s, ids[i], NULL);
				close(lock);
			}
		}
		free(ids[i]);
	}
	free(ids);
	sbx_store_gone_prune(s, GONE_KEPT_S, dry_run, report, ctx);
	/* What each tier left behind that no sandbox owns, unless a provision
	 * may be about to use it. */
	for (d = sbx_drivers; *d != NULL; d++)
		if ((*d)->sweep != NULL)
			(*d)->sweep(s, unsettled, dry_run, report, ctx);
	return r;
}
