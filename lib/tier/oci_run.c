/* SPDX-License-Identifier: MIT */
/* The OCI tier's container: made, run in, torn down, swept. See oci.h. */
#include <errno.h>
#include <fcntl.h>
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
#include "oci.h"
#include "quota.h"
#include "snapshot.h"
#include "supervise.h"
#include "util.h"

static char *const runtime_env[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", NULL };

/*
 * A user namespace mapping the sandbox's IDs as the container's does
 * (0 -> uid_base, id_count of them), held by its descriptor: an ID-mapped
 * mount made with it shows a layer's files, stored as owned by 0..65535, as
 * the container's own. The child that made it is gone when this returns.
 */
static int
sandbox_userns(const struct sbx_manifest *m, struct sbx_err *e)
{
	char p[64], v[64], c;
	int hold[2], fd = -1;
	pid_t pid;

	if (pipe2(hold, O_CLOEXEC) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "pipe");
	if ((pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0)) == 0) {
		close(hold[1]);
		(void)!read(hold[0], &c, 1);
		_exit(0);
	}
	close(hold[0]);
	if (pid == -1) {
		close(hold[1]);
		return sbx_err_sys(e, SBX_EX_UNAVAILABLE, "a user namespace for the root's layers");
	}
	snprintf(p, sizeof p, "/proc/%d/uid_map", (int)pid);
	snprintf(v, sizeof v, "0 %lld %lld\n", sbx_rt_int(m, "uid_base"), sbx_rt_int(m, "id_count"));
	if (sbx_write_str(p, v) == 0) {
		snprintf(p, sizeof p, "/proc/%d/gid_map", (int)pid);
		snprintf(v, sizeof v, "0 %lld %lld\n", sbx_rt_int(m, "gid_base"),
		    sbx_rt_int(m, "id_count"));
		if (sbx_write_str(p, v) == 0) {
			snprintf(p, sizeof p, "/proc/%d/ns/user", (int)pid);
			fd = open(p, O_RDONLY | O_CLOEXEC);
		}
	}
	if (fd == -1)
		sbx_err_sys(e, SBX_EX_OSERR, "map the user namespace for the root's layers");
	close(hold[1]);
	waitpid(pid, NULL, 0);
	return fd;
}

/* A read-only layer dir, ID-mapped with uns, attached at at; an O_PATH of it. */
static int
mapped_layer(const char *dir, int uns, const char *at, struct sbx_err *e)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY |
		MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, .userns_fd = (unsigned)uns };
	int tree, fd;

	if (mkdir(at, 0700) == -1 ||
	    (tree = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "layer %s", dir);
	if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof attr) == -1 ||
	    move_mount(tree, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) == -1) {
		sbx_err_sys(e, errno == EINVAL ? SBX_EX_UNAVAILABLE : SBX_EX_OSERR, "ID-mapped "
		    "mount of %s", dir);
		close(tree);
		return -1;
	}
	close(tree);
	if ((fd = open(at, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", at);
	return fd;
}

/* The overlay's lower layers, top first, as descriptors: the snapshot layers
 * and the skeleton ID-mapped, the sandbox's own lower layer and a rootfs
 * directory as they are. Returns how many. */
static int
lowers(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_lowers *lw,
    const char *mnt, int uns, int *fds, struct sbx_err *e)
{
	char at[512], p[1200];
	size_t i, n = 0;

	for (i = lw->n; i-- > 0;) {
		snprintf(at, sizeof at, "%s/l%zu", mnt, i);
		if ((fds[n++] = mapped_layer(lw->dirs[i], uns, at, e)) == -1)
			return -1;
	}
	if (strcmp(lw->base, "host") == 0) {
		if (sbx_store_path(s, m->sandbox_id, "lower", p, sizeof p, e) == -1 ||
		    (fds[n++] = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
			return sbx_err_sys(e, SBX_EX_OSERR, "%s", p);
		snprintf(at, sizeof at, "%s/skel", mnt);
		if ((fds[n++] = mapped_layer(lw->skel, uns, at, e)) == -1)
			return -1;
	} else if ((fds[n++] = open(lw->base, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		return sbx_err_sys(e, SBX_EX_OSERR, "rootfs %s", lw->base);
	}
	return (int)n;
}

/* The overlay, mounted at p->rootfs (in the caller's own mount namespace). */
static int
mount_root(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_lowers *lw,
    const struct oci_paths *p, int uns, struct sbx_err *e)
{
	int fds[SBX_MAX_LAYERS + 2], n, i, fs = -1, mfd = -1, up = -1, wk = -1;
	char opts[4096], path[1200];
	size_t len = 0;

	if (mount("tmpfs", p->mnt, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "mode=0711,size=64k") == -1 || mkdir(p->rootfs, 0711) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", p->mnt);
	memset(fds, -1, sizeof fds);
	if ((n = lowers(s, m, lw, p->mnt, uns, fds, e)) == -1)
		return -1;
	for (i = 0; i < n && len < sizeof opts; i++)
		len += (size_t)snprintf(opts + len, sizeof opts - len, "%s/proc/self/fd/%d",
		    i ? ":" : "", fds[i]);
	if (len >= sizeof opts)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "overlay options too long");
	if (sbx_store_path(s, m->sandbox_id, "layer/upper", path, sizeof path, e) == -1 ||
	    (up = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "layer/work", path, sizeof path, e) == -1 ||
	    (wk = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", path);
	/* userxattr: whiteouts as the namespace tier's overlay keeps them, which
	 * snapshots read (sbx_layer_pack). */
	if ((fs = fsopen("overlay", FSOPEN_CLOEXEC)) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", opts, 0) == -1 ||
	    (snprintf(opts, sizeof opts, "/proc/self/fd/%d", up),
	    fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", opts, 0)) == -1 ||
	    (snprintf(opts, sizeof opts, "/proc/self/fd/%d", wk),
	    fsconfig(fs, FSCONFIG_SET_STRING, "workdir", opts, 0)) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
	    (mfd = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) == -1 ||
	    move_mount(mfd, "", AT_FDCWD, p->rootfs, MOVE_MOUNT_F_EMPTY_PATH) == -1)
		return sbx_err_sys(e, errno == ENODEV ? SBX_EX_UNAVAILABLE : SBX_EX_OSERR,
		    "overlay root");
	return 0;
}

/* In a mount namespace of its own: the root mounted, then runc create execs. */
static void __attribute__((noreturn))
make_child(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_lowers *lw,
    const struct oci_paths *p, int uns, int errfd)
{
	const char *argv[] = { p->runtime, "--root", p->root, "--log", p->log, "--log-format",
		"json", "create", "--bundle", p->bundle, m->sandbox_id, NULL };
	struct sbx_err e = { 0 };
	int fd;

	if (unshare(CLONE_NEWNS) == -1 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1) {
		sbx_err_sys(&e, SBX_EX_OSERR, "a mount namespace for the container's root");
		goto fail;
	}
	if (mount_root(s, m, lw, p, uns, &e) == -1)
		goto fail;
	/* runc create hands its stdio to the container's init: none of ours. */
	if ((fd = open("/dev/null", O_RDWR)) == -1 || dup2(fd, 0) == -1 || dup2(fd, 1) == -1 ||
	    dup2(fd, 2) == -1) {
		sbx_err_sys(&e, SBX_EX_OSERR, "/dev/null");
		goto fail;
	}
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	execve(p->runtime, (char *const *)argv, runtime_env);
	sbx_err_sys(&e, SBX_EX_UNAVAILABLE, "%s", p->runtime);
fail:
	sbx_write_all(errfd, &e, sizeof e);
	_exit(1);
}

int
oci_make(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_lowers *lw,
    const struct oci_paths *p, struct sbx_err *e)
{
	char msg[512];
	int st[2], uns, ws = 0;
	ssize_t n;
	pid_t pid;

	unlink(p->log);
	if ((uns = sandbox_userns(m, e)) == -1)
		return -1;
	if (pipe2(st, O_CLOEXEC) == -1) {
		close(uns);
		return sbx_err_sys(e, SBX_EX_OSERR, "pipe");
	}
	if ((pid = fork()) == 0) {
		close(st[0]);
		make_child(s, m, lw, p, uns, st[1]);
	}
	close(st[1]);
	close(uns);
	if (pid == -1) {
		close(st[0]);
		return sbx_err_sys(e, SBX_EX_OSERR, "fork");
	}
	while ((n = read(st[0], e, sizeof *e)) == -1 && errno == EINTR)
		;
	close(st[0]);
	while (waitpid(pid, &ws, 0) == -1 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof *e)
		return -1;
	if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0)
		return 0;
	oci_log_error(p->log, msg, sizeof msg);
	return sbx_err_set(e, SBX_EX_OSERR, "runc create %s: %s", m->sandbox_id,
	    msg[0] ? msg : "failed");
}

void
oci_protect_init(pid_t pid)
{
	char p[64];

	snprintf(p, sizeof p, "/proc/%d/oom_score_adj", (int)pid);
	(void)sbx_write_str(p, "-1000");
}

/* The root's empty mount point, and its group's directory once empty. */
static void
mnt_remove(const struct sbx_store *s, const struct oci_paths *p)
{
	char dir[256];

	rmdir(p->rootfs);
	rmdir(p->mnt);
	snprintf(dir, sizeof dir, OCI_MNT "/%s", s->group);
	rmdir(dir);
}

#define MAX_HIER 16

/*
 * The group's directories runc made in every hierarchy (cpuset, devices,
 * name=systemd... beyond those sbx manages), from its state.json: runc
 * delete removes the container's cgroups, not their parents, which go once
 * empty. Only a parent named as the state root's group is kept.
 */
static size_t
runc_group_dirs(const struct oci_paths *p, const struct sbx_store *s, const char *id,
    char dirs[MAX_HIER][1024])
{
	char path[1400], *buf = NULL, *slash;
	struct sbx_node *doc;
	const struct sbx_node *cg;
	struct sbx_err ignored;
	size_t len, i, n = 0;

	snprintf(path, sizeof path, "%s/%s/state.json", p->root, id);
	if (sbx_read_file(path, SBX_DOC_MAX, &buf, &len, NULL) == -1)
		return 0;
	if (sbx_doc_parse(path, buf, len, &doc, &ignored) == -1) {
		free(buf);
		return 0;
	}
	free(buf);
	if ((cg = sbx_node_get(doc, "cgroup_paths")) != NULL && cg->type == SBX_MAP)
		for (i = 1; i < cg->n && n < MAX_HIER; i += 2) {
			if (cg->kids[i]->type != SBX_SCALAR)
				continue;
			snprintf(dirs[n], sizeof dirs[n], "%s", cg->kids[i]->str);
			if ((slash = strrchr(dirs[n], '/')) != NULL && strcmp(slash + 1, id) == 0) {
				*slash = '\0';
				if ((slash = strrchr(dirs[n], '/')) != NULL &&
				    strcmp(slash + 1, s->group) == 0)
					n++;
			}
		}
	sbx_node_free(doc);
	return n;
}

int
oci_teardown(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	const char *kill_args[] = { "kill", m->sandbox_id, "KILL", NULL };
	const char *del[] = { "delete", "--force", m->sandbox_id, NULL };
	struct oci_paths p = { 0 };
	struct sbx_cg_host h;
	struct sbx_cgroup cg;
	char dirs[MAX_HIER][1024], layer[1200];
	size_t ndirs = 0, i;
	int r = 0;

	if (oci_paths(s, m, &p, e) == -1)
		return -1;
	if (sbx_rt_str(m, "container") != NULL && p.runtime[0] != '\0') {
		ndirs = runc_group_dirs(&p, s, m->sandbox_id, dirs);
		(void)oci_call(p.runtime, p.root, kill_args, NULL, 0, NULL, 0);
		if (oci_do(&p, del, NULL, 0, e) == -1) {
			const char *const state[] = { "state", m->sandbox_id, NULL };

			/* Gone already is fine; still there is not. */
			if (oci_call(p.runtime, p.root, state, NULL, 0, NULL, 0) == 0)
				r = -1;
		}
	}
	if (sbx_rt_int(m, "pid") > 0)
		sbx_proc_signal_wait((pid_t)sbx_rt_int(m, "pid"),
		    (unsigned long long)sbx_rt_int(m, "start_ticks"), SIGKILL, 5000);
	if (sbx_rt_str(m, "cgroup") != NULL && sbx_cgroup_host(&h, NULL) == 0 &&
	    sbx_cgroup_from_spec(&h, sbx_rt_str(m, "cgroup"), &cg, NULL) == 0) {
		if (sbx_cgroup_destroy(&cg, r == 0 ? e : NULL) == -1)
			r = -1;
		else if (s->group[0])
			sbx_cgroup_remove_group(&h, s->group, 0);
	}
	for (i = 0; i < ndirs; i++)
		rmdir(dirs[i]);
	if (sbx_rm_rf(p.bundle, r == 0 ? e : NULL) == -1)
		r = -1;
	mnt_remove(s, &p);
	/* disk_mb: the writable layer's own filesystem (rootfs.c made it), as
	 * the namespace tier's; its loop device clears itself once unmounted. */
	if (sbx_store_path(s, m->sandbox_id, "layer", layer, sizeof layer, NULL) == 0 &&
	    sbx_quota_remove(layer, r == 0 ? e : NULL) == -1)
		r = -1;
	return r;
}

void
oci_sweep(const struct sbx_store *s, int busy, int dry_run, sbx_driver_report report,
    void *ctx)
{
	static const char *const dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
		"/usr/bin", "/sbin", "/bin", NULL };
	const char *const list[] = { "list", "--quiet", NULL };
	char root[1100], runtime[1100], out[65536], *id, *save = NULL;
	struct stat st;
	size_t i;

	/* A container being made has no state yet: leave them all then. */
	snprintf(root, sizeof root, "%s/oci", s->root);
	if (busy || s->rootless || stat(root, &st) == -1)
		return;
	for (i = 0; dirs[i]; i++) {
		snprintf(runtime, sizeof runtime, "%s/runc", dirs[i]);
		if (access(runtime, X_OK) == 0)
			break;
	}
	if (dirs[i] == NULL || oci_call(runtime, root, list, out, sizeof out, NULL, 0) != 0)
		return;
	for (id = strtok_r(out, "\n", &save); id; id = strtok_r(NULL, "\n", &save)) {
		const char *const del[] = { "delete", "--force", id, NULL };

		if (sbx_store_exists(s, id))
			continue;
		report(ctx, "container", id);
		if (!dry_run)
			(void)oci_call(runtime, root, del, NULL, 0, NULL, 0);
	}
}
