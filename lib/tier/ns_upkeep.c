/* SPDX-License-Identifier: MIT */
/* The namespace tier between make and destroy: see ns.h. */
#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "id.h"
#include "layer.h"
#include "net.h"
#include "ns.h"
#include "quota.h"
#include "rootfs.h"
#include "util.h"

/* The overlay's upper directory, owners shifted back by the sandbox's ID base. */
int
sbx_ns_capture(const struct sbx_store *s, const struct sbx_manifest *m, int fd,
    const struct sbx_pack_opts *o, struct sbx_layer_info *li, struct sbx_err *e)
{
	char upper[1200];

	if (sbx_store_path(s, m->sandbox_id, "layer/upper", upper, sizeof upper, e) == -1)
		return -1;
	return sbx_layer_pack(upper, sbx_rt_int(m, "uid_base"), sbx_rt_int(m, "id_count"), fd, o, li, e);
}

/* The cgroup's memory counter, kept open: the watchdog reads it every tick. */
int
sbx_ns_memory_open(const struct sbx_store *s, const struct sbx_manifest *m)
{
	struct sbx_cg_host h;
	struct sbx_cgroup cg;

	(void)s;
	if (sbx_rt_str(m, "cgroup") == NULL || sbx_cgroup_host(&h, NULL) == -1 ||
	    sbx_cgroup_from_spec(&h, sbx_rt_str(m, "cgroup"), &cg, NULL) == -1)
		return -1;
	return sbx_cgroup_memory_fd(&cg);
}

long long
sbx_ns_memory_used(int handle)
{
	return sbx_cgroup_memory_now(handle);
}

int
sbx_ns_memory_pressure(int handle, double *some, double *full)
{
	return sbx_cgroup_memory_pressure(handle, some, full);
}

static long long du_bytes;

static int
du_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)path;
	(void)flag;
	(void)f;
	du_bytes += (long long)st->st_blocks * 512;
	return 0;
}

int
sbx_ns_usage(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_usage *u,
    struct sbx_err *e)
{
	struct sbx_cg_host h;
	struct sbx_cgroup cg;
	struct sbx_cg_now now;
	char layer[1200];
	double mb;

	u->memory_bytes = u->pids = u->disk_bytes = -1;
	u->cpu_s = -1;
	if (sbx_rt_str(m, "cgroup") != NULL && sbx_cgroup_host(&h, NULL) == 0 &&
	    sbx_cgroup_from_spec(&h, sbx_rt_str(m, "cgroup"), &cg, NULL) == 0) {
		sbx_cgroup_now(&cg, &now);
		u->memory_bytes = now.memory_bytes;
		u->pids = now.pids;
		u->cpu_s = now.cpu_s;
	}
	if (sbx_store_path(s, m->sandbox_id, "layer", layer, sizeof layer, e) == -1)
		return -1;
	/* Under a quota, its filesystem's count; else the upper directory's blocks. */
	if ((mb = sbx_quota_used_mb(layer)) >= 0) {
		u->disk_bytes = (long long)llround(mb * (1 << 20));
	} else {
		strncat(layer, "/upper", sizeof layer - strlen(layer) - 1);
		du_bytes = 0;
		if (nftw(layer, du_one, 16, FTW_PHYS | FTW_MOUNT) == 0)
			u->disk_bytes = du_bytes;
	}
	return 0;
}

int
sbx_ns_repin(const struct sbx_store *s, struct sbx_manifest *m, int *changed,
    struct sbx_err *e)
{
	if (sbx_net_refresh(s, m, changed, e) == -1)
		return -1;
	/* The names the sandbox looks up resolve to what is allowed now. */
	return *changed ? sbx_rootfs_update_hosts(s, m, e) : 0;
}

/* Cgroups of sandboxes whose state is gone (a destroy killed midway). */
static void
orphan_cgroups(const struct sbx_store *s, int dry_run, sbx_driver_report report, void *ctx)
{
	struct sbx_cg_host h;
	struct sbx_cgroup cg;
	char dir[1200];
	DIR *d;
	struct dirent *de;
	int i;

	if (sbx_cgroup_host(&h, NULL) == -1)
		return;
	if (sbx_cgroup_group_dir(&h, s->group, dir, sizeof dir) == -1)
		return;
	/* Without it (gone from the freezer's hierarchy), the group may still
	 * be in others where it was busy when removed: removed below. */
	if ((d = opendir(dir)) == NULL)
		goto group;
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
group:
	/* With no sandbox left, the state root's group goes too (busy ones stay). */
	if (!dry_run)
		sbx_cgroup_remove_group(&h, s->group, 1);
}

/* Skeletons (rootfs host) no sandbox of s names any more. */
static void
orphan_skeletons(const struct sbx_store *s, int dry_run, sbx_driver_report report, void *ctx)
{
	struct sbx_strv keep = { NULL, 0 };
	char **ids;
	size_t n, i;
	int ok = 1;

	if (sbx_store_list(s, &ids, &n, NULL) == -1)
		return;
	for (i = 0; i < n; i++) {
		struct sbx_manifest m;
		struct sbx_err e;

		if (sbx_state_load(s, ids[i], &m, &e) == 0) {
			if (sbx_rt_str(&m, "skeleton") != NULL && sbx_strv_add(&keep, sbx_rt_str(&m, "skeleton")) == -1)
				ok = 0;   /* out of memory: keep every skeleton */
			sbx_manifest_free(&m);
		} else {
			ok = 0;           /* a state being written: it may name one */
		}
		free(ids[i]);
	}
	free(ids);
	if (ok)
		sbx_rootfs_skeleton_gc(s, &keep, dry_run, report, ctx);
	sbx_strv_free(&keep);
}

void
sbx_ns_sweep(const struct sbx_store *s, int busy, int dry_run, sbx_driver_report report,
    void *ctx)
{
	/* A provision may be picking a skeleton right now (it names its
	 * skeleton in the state only when ready). */
	if (!busy)
		orphan_skeletons(s, dry_run, report, ctx);
	orphan_cgroups(s, dry_run, report, ctx);
	/* Network leases are host-wide: any root's gc clears those whose init is gone. */
	if (!s->rootless)
		sbx_net_gc(dry_run, report, ctx);
}
