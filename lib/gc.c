/* SPDX-License-Identifier: MIT */
/* Garbage collection: terminated and expired sandboxes, tombstones, orphaned cgroups,
 * network leases, rules and veths. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "gc.h"
#include "id.h"
#include "manifest.h"
#include "net.h"
#include "quota.h"
#include "rootfs.h"
#include "sandbox.h"
#include "snapshot.h"
#include "util.h"

int
sbx_gc_destroy(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	struct sbx_manifest m;
	long long keep;
	int before;

	if (sbx_state_load(s, id, &m, e) == -1)
		return -1;
	before = m.snapshot.enabled && m.snapshot.before_destroy && m.has_rt;
	keep = m.snapshot.keep != SBX_UNSET_INT ? m.snapshot.keep : 1;
	sbx_manifest_free(&m);
	if (before) {
		struct sbx_snap_opts o = { NULL, "before-destroy" };
		struct sbx_err pe;
		char snap[SBX_ID_MAX + 1];

		/* The layer is on disk even when the sandbox's processes are gone. */
		if (sbx_snapshot_create(s, id, &o, snap, e) == -1)
			return sbx_err_prefix(e, "snapshot.before_destroy");
		/* The last of its snapshots counts against snapshot.keep too; a
		 * prune that fails leaves the older ones to the next sweep. */
		sbx_snapshot_prune(s, id, keep, &pe);
	}
	return sbx_sandbox_destroy(s, id, e);
}

static int
orphan_cgroups(const struct sbx_store *s, int dry_run, sbx_gc_report report, void *ctx)
{
	struct sbx_cg_host h;
	struct sbx_cgroup cg;
	char dir[1200];
	DIR *d;
	struct dirent *de;
	int i;

	if (sbx_cgroup_host(&h, NULL) == -1)
		return 0;
	if (sbx_cgroup_group_dir(&h, s->group, dir, sizeof dir) == -1 || (d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || !sbx_id_valid(de->d_name) ||
		    sbx_store_exists(s, de->d_name))
			continue;
		report(ctx, "cgroup", de->d_name);
		if (dry_run)
			continue;
		memset(&cg, 0, sizeof cg);
		cg.version = h.version;
		for (i = 0; i < (h.version == 2 ? 1 : SBX_CG_NCTRL); i++)
			if (h.mnt[i][0])
				snprintf(cg.path[i], sizeof cg.path[i], "%s%s/sbx/%s/%s", h.mnt[i],
				    h.own[i], s->group, de->d_name);
		sbx_cgroup_destroy(&cg, NULL);
	}
	closedir(d);
	/* With no sandbox left, the state root's group goes too (busy ones stay). */
	sbx_cgroup_remove_group(&h, s->group, 1);
	return 0;
}

int
sbx_gc_sweep(const struct sbx_store *s, int dry_run, sbx_gc_report report, void *ctx,
    struct sbx_err *e)
{
	struct sbx_manifest m;
	struct sbx_strv skels = { 0 };
	char **ids, p[1200];
	size_t n, i;
	int r = 0, unsettled = 0;
	DIR *d;
	struct dirent *de;

	/* Tombstones: removals that a crash interrupted. */
	snprintf(p, sizeof p, "%s/sandboxes", s->root);
	if ((d = opendir(p)) != NULL) {
		while ((de = readdir(d)) != NULL) {
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
		closedir(d);
	}
	if (sbx_store_list(s, &ids, &n, e) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		struct sbx_err one;

		if (sbx_sandbox_view(s, ids[i], &m, &one) == 0) {
			if (m.rt.skeleton != NULL && sbx_strv_add(&skels, m.rt.skeleton) == -1)
				unsettled = 1;   /* out of memory: keep every skeleton */
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
	/* Skeletons no sandbox uses any more, unless a provision may be picking
	 * one right now (it names its skeleton in the state only when ready). */
	if (!unsettled)
		sbx_rootfs_skeleton_gc(s, &skels, dry_run, report, ctx);
	sbx_strv_free(&skels);
	orphan_cgroups(s, dry_run, report, ctx);
	/* Network leases are host-wide: any root's gc clears those whose init is gone. */
	if (!s->rootless)
		sbx_net_gc(dry_run, report, ctx);
	return r;
}
