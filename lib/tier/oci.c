/* SPDX-License-Identifier: MIT */
/*
 * The OCI tier, with runc: sbx writes the sandbox's bundle (config.json from
 * the manifest) in the sandbox's directory, mounts its root from the same
 * layers as the namespace tier (rootfs.c) in a mount namespace of its own,
 * and lets runc make the container there; runs are `runc exec`, watched by
 * the one supervision loop. runc keeps its state in the state root's own
 * directory (oci/), never in the host's /run/runc.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "doc.h"
#include "driver.h"
#include "ids.h"
#include "layer.h"
#include "net.h"
#include "ns.h"
#include "oci.h"
#include "rootfs.h"
#include "seccomp_profile.h"
#include "snapshot.h"
#include "supervise.h"
#include "util.h"


/* What the tier cannot do yet, each a 69 naming the key. */
static int
oci_refuse(const struct sbx_manifest *m, struct sbx_err *e)
{
	const char *rt = m->runtime;

	if (m->security.landlock == 1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "security.landlock: runtime %s applies "
		    "no Landlock rules (set landlock: false for isolation_level oci)", rt);
	if (m->security.landlock_network == 1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "security.landlock_network: runtime %s "
		    "applies no Landlock rules", rt);
	if (m->res.io_mbps != SBX_UNSET_INT || m->res.io_iops != SBX_UNSET_INT)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "resource_allocation.io_mbps and io_iops: "
		    "the namespace tier's only, for now (isolation_level oci throttles no I/O)");
	return 0;
}

static int
oci_check(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	struct oci_paths p = { 0 };
	unsigned uid, gid;

	if (s->rootless)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level oci: sbx drives runtime "
		    "%s as root only (for now)", m->runtime);
	if (oci_runtime(m->runtime, &p, e) == -1 || oci_refuse(m, e) == -1 ||
	    sbx_net_check(s, m, e) == -1)
		return -1;
	if (m->security.no_new_privileges == 0 && strcmp(m->security.seccomp, "unconfined"))
		return sbx_err_set(e, SBX_EX_DATAERR, "security.no_new_privileges: false needs "
		    "seccomp: unconfined (a filter without it needs CAP_SYS_ADMIN)");
	if (sbx_manifest_user_parse(m->user, &uid, &gid) == -1)
		return sbx_err_set(e, SBX_EX_DATAERR, "user '%s' is not UID:GID", m->user);
	return sbx_rootfs_check_mounts(m, e);
}

/* The runtime's part of p, from what create kept in the state. */
static int
oci_paths_rt(const struct sbx_manifest *m, struct oci_paths *p, struct sbx_err *e)
{
	const char *path = sbx_rt_str(m, "runtime_path"), *root = sbx_rt_str(m, "runtime_root");
	const char *plat = sbx_rt_str(m, "platform");
	int k = oci_kind_parse(sbx_rt_str(m, "runtime_kind"));

	if (path == NULL || root == NULL || k < 0)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "sandbox %s: no runtime recorded",
		    m->sandbox_id);
	p->kind = (enum oci_kind)k;
	snprintf(p->runtime, sizeof p->runtime, "%s", path);
	snprintf(p->root, sizeof p->root, "%s", root);
	snprintf(p->platform_flag, sizeof p->platform_flag, "--platform=%s", plat ? plat :
	    "ptrace");
	/* runsc: gVisor's own network stack over the sandbox's veth for an
	 * allow-list, none but its loopback for deny-all. */
	snprintf(p->network_flag, sizeof p->network_flag, "--network=%s",
	    strcmp(m->network_policy, "host") == 0 ? "host" : sbx_net_wanted(m) ? "sandbox" :
	    "none");
	return 0;
}

int
oci_paths(const struct sbx_store *s, const struct sbx_manifest *m, struct oci_paths *p,
    struct sbx_err *e)
{
	if (sbx_rt_str(m, "runtime_path") != NULL && oci_paths_rt(m, p, e) == -1)
		return -1;
	snprintf(p->mnt, sizeof p->mnt, OCI_MNT "/%s/%s", s->group, m->sandbox_id);
	snprintf(p->rootfs, sizeof p->rootfs, "%s/rootfs", p->mnt);
	if (sbx_store_path(s, m->sandbox_id, "bundle", p->bundle, sizeof p->bundle, e) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "bundle/runtime.log", p->log, sizeof p->log, e) == -1)
		return -1;
	/* gVisor's network stack runs only in a network namespace it is given. */
	p->netns[0] = '\0';
	if (p->kind == OCI_RUNSC && sbx_net_wanted(m) &&
	    sbx_store_path(s, m->sandbox_id, "netns", p->netns, sizeof p->netns, e) == -1)
		return -1;
	return 0;
}

/* The runtime's last error in its JSON log (msg of the last "error" line), or "". */
void
oci_log_error(const char *log, char *msg, size_t size)
{
	char *buf = NULL, *line, *save = NULL;
	struct sbx_node *n;
	struct sbx_err ignored;

	msg[0] = '\0';
	if (sbx_read_file(log, 1 << 20, &buf, NULL, NULL) == -1)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const struct sbx_node *lv, *ms;

		/* runsc says its errors as plain lines: the last one. */
		if (line[0] != '{') {
			snprintf(msg, size, "%s", line);
			continue;
		}
		if (sbx_doc_parse("runtime.log", line, strlen(line), &n, &ignored) == -1)
			continue;
		if ((lv = sbx_node_get(n, "level")) && lv->type == SBX_SCALAR &&
		    (strcmp(lv->str, "error") == 0 || strcmp(lv->str, "fatal") == 0) &&
		    (ms = sbx_node_get(n, "msg")) && ms->type == SBX_SCALAR)
			snprintf(msg, size, "%s", ms->str);
		sbx_node_free(n);
	}
	free(buf);
}

/* The container's init, as `runc state` reports it: its PID, or -1. */
static long long
oci_state_pid(const struct oci_paths *p, const char *id, char *status, size_t size)
{
	const char *const args[] = { "state", id, NULL };
	char out[8192];
	struct sbx_node *n;
	const struct sbx_node *v;
	struct sbx_err ignored;
	long long pid = -1;

	if (oci_call(p, args, out, sizeof out, NULL, 0) != 0 ||
	    sbx_doc_parse("runtime state", out, strlen(out), &n, &ignored) == -1)
		return -1;
	if ((v = sbx_node_get(n, "pid")) && v->type == SBX_SCALAR)
		pid = strtoll(v->str, NULL, 10);
	if (status && (v = sbx_node_get(n, "status")) && v->type == SBX_SCALAR)
		snprintf(status, size, "%s", v->str);
	sbx_node_free(n);
	return pid;
}

/*
 * The sandbox's cgroup, where runc puts it: where the namespace tier puts
 * its own (cgroup.h), sbx/<group>/<id> below our cgroup in each v1
 * hierarchy (runc and runsc read a relative path so), or below the one
 * parent. crun reads any v1 path from each hierarchy's root: its sandboxes'
 * cgroups are sbx/<group>/<id> there. *cgpath is linux.cgroupsPath.
 */
static int
oci_cgroup(const struct sbx_store *s, const struct sbx_manifest *m, enum oci_kind kind,
    struct sbx_cgroup *cg, char *cgpath, size_t size, char *spec, size_t specsz,
    struct sbx_err *e)
{
	struct sbx_cg_host h;
	const char *parent = getenv("SBX_CGROUP_PARENT");
	int i, from_root;

	if (sbx_cgroup_host(&h, e) == -1)
		return -1;
	from_root = kind == OCI_CRUN && h.version == 1;
	memset(cg, 0, sizeof *cg);
	cg->version = h.version;
	for (i = 0; i < (h.version == 2 ? 1 : SBX_CG_NCTRL); i++)
		if (h.mnt[i][0])
			snprintf(cg->path[i], sizeof cg->path[i], "%s%s/sbx/%s/%s", h.mnt[i],
			    from_root ? "" : h.own[i], s->group, m->sandbox_id);
	if (from_root)
		snprintf(cgpath, size, "/sbx/%s/%s", s->group, m->sandbox_id);
	else if (h.version == 1 && (parent == NULL || *parent == '\0'))
		snprintf(cgpath, size, "sbx/%s/%s", s->group, m->sandbox_id);
	else
		snprintf(cgpath, size, "%s/sbx/%s/%s", h.own[0], s->group, m->sandbox_id);
	if (sbx_cgroup_spec(cg, &h, spec, specsz) == -1)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "cgroup path too long");
	return 0;
}

/*
 * The root's mount point, an empty directory on the host: runc runs its
 * helpers there (exec's too), and the container's root, an unprivileged
 * host ID, must be able to walk to it, which the state root (0700) forbids.
 */
static int
oci_mnt_dir(const struct sbx_store *s, const struct oci_paths *p, struct sbx_err *e)
{
	char dir[256];

	snprintf(dir, sizeof dir, OCI_MNT "/%s", s->group);
	if ((mkdir(OCI_MNT, 0711) == -1 && errno != EEXIST) ||
	    (mkdir(dir, 0711) == -1 && errno != EEXIST) ||
	    (mkdir(p->mnt, 0711) == -1 && errno != EEXIST) ||
	    (mkdir(p->rootfs, 0711) == -1 && errno != EEXIST))
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p->rootfs);
	return 0;
}

/* The runtime's part of the state, chosen at create. */
static int
oci_keep_runtime(const struct sbx_store *s, struct sbx_manifest *m, struct oci_paths *p,
    struct sbx_err *e)
{
	const char *plat = oci_runsc_platform();

	if (oci_runtime(m->runtime, p, e) == -1)
		return -1;
	snprintf(p->root, sizeof p->root, "%s/oci/%s", s->root, oci_kind_name(p->kind));
	if (sbx_rt_set_str(m, "runtime_path", p->runtime) == -1 ||
	    sbx_rt_set_str(m, "runtime_kind", oci_kind_name(p->kind)) == -1 ||
	    sbx_rt_set_str(m, "runtime_root", p->root) == -1 ||
	    (p->kind == OCI_RUNSC && sbx_rt_set_str(m, "platform", plat) == -1))
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	return oci_paths_rt(m, p, e);
}

/* The container's root layers and bundle. */
static int
oci_prepare(const struct sbx_store *s, struct sbx_manifest *m, struct oci_paths *p,
    struct sbx_lowers *lw, const char *cgpath, struct sbx_err *e)
{
	uid_t ub = (uid_t)sbx_rt_int(m, "uid_base");
	gid_t gb = (gid_t)sbx_rt_int(m, "gid_base");

	if (sbx_rootfs_prepare(s, m, ub, gb, lw, e) == -1)
		return -1;
	if (lw->skel != NULL && sbx_rt_set_str(m, "skeleton", strrchr(lw->skel, '/') + 1) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if (lw->skel != NULL && sbx_rootfs_own_lower(s, m, ub, gb, e) == -1)
		return -1;
	if (sbx_mkdir_p(p->root, 0700, e) == -1 || sbx_mkdir_p(p->bundle, 0700, e) == -1 ||
	    oci_mnt_dir(s, p, e) == -1 || oci_write_config(s, m, lw, p, cgpath, e) == -1)
		return -1;
	return 0;
}

/* The container running: its first process's PID (runsc: the sandbox's) kept. */
static int
oci_running(struct sbx_manifest *m, const struct oci_paths *p, struct sbx_err *e)
{
	char status[32] = "";
	long long pid;

	if ((pid = oci_state_pid(p, m->sandbox_id, status, sizeof status)) <= 0 ||
	    strcmp(status, "running") != 0)
		return sbx_err_set(e, SBX_EX_OSERR, "%s state %s: the container is %s",
		    oci_kind_name(p->kind), m->sandbox_id, status[0] ? status : "not there");
	if (sbx_rt_set_int(m, "pid", pid) == -1 ||
	    sbx_rt_set_int(m, "start_ticks", (long long)sbx_proc_starttime((pid_t)pid)) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	/* runc's and crun's init is the last the memory limit's OOM killer
	 * takes; gVisor's sandbox process is the whole sandbox, whose limit the
	 * kernel enforces on it like on any other. */
	if (p->kind != OCI_RUNSC)
		oci_protect_init((pid_t)pid);
	return 0;
}

/*
 * An allow-list's network, made as the namespace tier's (net.h) once the
 * container is created and before it starts: the veth into the network
 * namespace of its first process (runc's and crun's init, gVisor's sandbox,
 * whose network stack takes the interfaces it finds there at start), the
 * host's rules and the relay, which ends with that process.
 */
static int
oci_network(const struct sbx_store *s, struct sbx_manifest *m, const struct oci_paths *p,
    struct sbx_err *e)
{
	char status[32] = "";
	long long pid;

	if (!sbx_net_wanted(m))
		return 0;
	if ((pid = oci_state_pid(p, m->sandbox_id, status, sizeof status)) <= 0)
		return sbx_err_set(e, SBX_EX_OSERR, "%s state %s: no process to give a network",
		    oci_kind_name(p->kind), m->sandbox_id);
	return sbx_net_create(s, m, (pid_t)pid, e);
}

/* Make the container, or with ckpt set restore it from that checkpoint. */
static int
oci_start(const struct sbx_store *s, struct sbx_manifest *m, const char *ckpt,
    struct sbx_err *e)
{
	struct sbx_lowers lw;
	struct oci_paths p = { 0 };
	struct sbx_cgroup cg;
	char cgpath[1200], spec[4096];
	const char *start[] = { "start", m->sandbox_id, NULL };
	struct sbx_err ignored;

	m->has_rt = 1;
	memset(&lw, 0, sizeof lw);
	if (oci_keep_runtime(s, m, &p, e) == -1 || sbx_tier_pick_ids(s, m, e) == -1 ||
	    sbx_net_prepare(m, e) == -1 ||
	    oci_paths(s, m, &p, e) == -1 || oci_cgroup(s, m, p.kind, &cg, cgpath,
	    sizeof cgpath, spec, sizeof spec, e) == -1)
		return -1;
	if (sbx_rt_set_str(m, "cgroup", spec) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if (oci_prepare(s, m, &p, &lw, cgpath, e) == -1)
		goto fail;
	/* Set before the container exists: a failure from here on undoes it. */
	if (sbx_rt_set_str(m, "container", m->sandbox_id) == -1) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto fail;
	}
	sbx_crash_point("oci-config");
	if ((p.netns[0] && oci_netns_make(&p, e) == -1) || oci_make(s, m, &lw, &p, ckpt, e) == -1 || (ckpt == NULL && (oci_network(s, m, &p,
	    e) == -1 || oci_do(&p, start, NULL, 0, e) == -1)) || oci_running(m, &p, e) == -1)
		goto fail;
	sbx_lowers_free(&lw);
	return 0;
fail:
	sbx_lowers_free(&lw);
	oci_teardown(s, m, &ignored);
	return -1;
}

static int
oci_create(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e)
{
	return oci_start(s, m, NULL, e);
}

static int
oci_alive(const struct sbx_manifest *m)
{
	return sbx_rt_int(m, "pid") > 0 && sbx_proc_alive((pid_t)sbx_rt_int(m, "pid"),
	    (unsigned long long)sbx_rt_int(m, "start_ticks"));
}

static int
oci_freeze(const struct sbx_manifest *m, int frozen, struct sbx_err *e)
{
	const char *args[] = { frozen ? "pause" : "resume", m->sandbox_id, NULL };
	struct oci_paths p = { 0 };

	/* The driver is given no state root here: create kept the runtime's. */
	if (oci_paths_rt(m, &p, e) == -1)
		return -1;
	return oci_do(&p, args, NULL, 0, e);
}

static int
oci_restore(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
    struct sbx_err *e)
{
	struct oci_paths p = { 0 };

	if (oci_runtime(m->runtime, &p, e) == -1)
		return -1;
	if (p.kind != OCI_RUNSC)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime %s restores no memory "
		    "checkpoint (only runsc does)", m->runtime);
	if (sbx_net_wanted(m))
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "network_policy egress-allow-list: "
		    "runsc restores no memory checkpoint into an allow-list's network (restore "
		    "a snapshot taken with sbx-snap --no-memory)");
	return oci_start(s, m, dir, e);
}

static int
oci_can_checkpoint(const struct sbx_manifest *m)
{
	const char *k = sbx_rt_str(m, "runtime_kind");

	/* gVisor's network stack takes the veth it finds at start: a restore
	 * finds none, and the relay ends with the checkpointed sandbox. */
	return k != NULL && strcmp(k, "runsc") == 0 && !sbx_net_wanted(m);
}

/* The layers the sandbox's root was made of, as create found them. */
static int
oci_lowers(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_lowers *lw,
    struct sbx_err *e)
{
	const char *skel = sbx_rt_str(m, "skeleton");

	memset(lw, 0, sizeof *lw);
	if (sbx_manifest_rootfs_is_snapshot(m->rootfs)) {
		if (sbx_snapshot_lowers(s, m->rootfs, &lw->dirs, &lw->n, &lw->base, e) == -1)
			return -1;
	} else if ((lw->base = strdup(m->rootfs)) == NULL) {
		return sbx_err_oom(e);
	}
	if (strcmp(lw->base, "host") == 0 && (skel == NULL ||
	    asprintf(&lw->skel, "%s/skel/%s", s->root, skel) == -1)) {
		lw->skel = NULL;
		return sbx_err_set(e, SBX_EX_SOFTWARE, "sandbox %s: no skeleton recorded",
		    m->sandbox_id);
	}
	return 0;
}

/*
 * gVisor's checkpoint stops the sandbox; runsc's own --leave-running makes
 * it again where its root is not mounted, and waits on it. The lifecycle
 * reads the files while it is stopped, then restarts it (oci_restart).
 * runsc cannot checkpoint a paused sandbox and stop it cleanly after: it
 * runs for the moment between resume and its own pause for the checkpoint,
 * before anything is read.
 */
static int
oci_checkpoint(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
    struct sbx_err *e)
{
	const char *ck[] = { "checkpoint", "--image-path", dir, m->sandbox_id, NULL };
	const char *resume[] = { "resume", m->sandbox_id, NULL };
	struct oci_paths p = { 0 };

	if (oci_paths(s, m, &p, e) == -1)
		return -1;
	if (p.kind != OCI_RUNSC)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime %s keeps no memory checkpoint "
		    "(only runsc does; sbx-snap --no-memory takes the files)", m->runtime);
	if (oci_do(&p, resume, NULL, 0, e) == -1 || oci_do(&p, ck, NULL, 0, e) == -1)
		return -1;
	sbx_crash_point("oci-checkpointed");
	return 0;
}

/* The sandbox stopped at its checkpoint, restored from it where its root is
 * mounted. Its processes go on where they were. */
static int
oci_restart(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
    struct sbx_err *e)
{
	const char *del[] = { "delete", "--force", m->sandbox_id, NULL };
	struct oci_paths p = { 0 };
	struct sbx_lowers lw;
	int r;

	if (oci_paths(s, m, &p, e) == -1)
		return -1;
	memset(&lw, 0, sizeof lw);
	if (oci_do(&p, del, NULL, 0, e) == -1 || oci_lowers(s, m, &lw, e) == -1) {
		sbx_lowers_free(&lw);
		return sbx_err_prefix(e, "the sandbox stopped at its checkpoint");
	}
	r = oci_make(s, m, &lw, &p, dir, e) == -1 || oci_running(m, &p, e) == -1 ? -1 : 0;
	sbx_lowers_free(&lw);
	return r == -1 ? sbx_err_prefix(e, "the sandbox stopped at its checkpoint") : 0;
}

static int
oci_destroy(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	return oci_teardown(s, m, e);
}

static uid_t wh_uid;
static gid_t wh_gid;

static int
whiteout_owner(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	if (S_ISCHR(st->st_mode) && st->st_rdev == 0 && st->st_uid == 0 &&
	    lchown(path, wh_uid, wh_gid) == -1)
		return -1;
	return 0;
}

/*
 * The upper directory, as the namespace tier's: owners shifted back by the
 * ID base. The overlay is mounted by the host's root, who owns the
 * whiteouts it makes (a deleted file): they become the sandbox root's first,
 * as the namespace tier's overlay, mounted in the sandbox's user namespace,
 * makes them. The sandbox is frozen meanwhile: nothing moves in the tree.
 */
static int
oci_capture(const struct sbx_store *s, const struct sbx_manifest *m, int fd,
    const struct sbx_pack_opts *o, struct sbx_layer_info *li, struct sbx_err *e)
{
	char upper[1200];

	if (sbx_store_path(s, m->sandbox_id, "layer/upper", upper, sizeof upper, e) == -1)
		return -1;
	wh_uid = (uid_t)sbx_rt_int(m, "uid_base");
	wh_gid = (gid_t)sbx_rt_int(m, "gid_base");
	if (nftw(upper, whiteout_owner, 32, FTW_PHYS) == -1)
		return sbx_err_sys(e, SBX_EX_IOERR, "%s: the whiteouts' owner", upper);
	return sbx_layer_pack(upper, sbx_rt_int(m, "uid_base"), sbx_rt_int(m, "id_count"), fd, o,
	    li, e);
}

const struct sbx_driver sbx_driver_oci = {
	.name = "oci",
	.check = oci_check,
	.create = oci_create,
	.exec = oci_exec,
	.alive = oci_alive,
	.freeze = oci_freeze,
	.destroy = oci_destroy,
	.capture = oci_capture,
	/* The cgroup's counter, read as the namespace tier's (the state's cgroup). */
	.memory_open = sbx_ns_memory_open,
	.memory_used = sbx_ns_memory_used,
	.memory_pressure = sbx_ns_memory_pressure,
	.usage = sbx_ns_usage,
	.sweep = oci_sweep,
	/* runsc only: runc and crun would need CRIU, which fails on this kernel. */
	.can_checkpoint = oci_can_checkpoint,
	.checkpoint = oci_checkpoint,
	.restart = oci_restart,
	.restore = oci_restore,
	/* The allow-list's network is the namespace tier's. */
	.repin = sbx_ns_repin,
	.repinned = sbx_net_repinned,
};
