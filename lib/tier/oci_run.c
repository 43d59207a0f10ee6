/* SPDX-License-Identifier: MIT */
/* The OCI tier's container: made, run in, torn down, swept. See oci.h. */
#include <dirent.h>
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
#include "ids.h"
#include "net.h"
#include "oci.h"
#include "quota.h"
#include "seccomp_profile.h"
#include "snapshot.h"
#include "supervise.h"
#include "util.h"

/*
 * A user namespace mapping the sandbox's IDs as the container's does
 * (0 -> uid_base, id_count of them), by its descriptor: an ID-mapped mount
 * made with it shows a layer's files, stored as owned by 0..65535, as the
 * container's own.
 */
static int
sandbox_userns(const struct sbx_manifest *m, struct sbx_err *e)
{
	char um[64], gm[64];

	snprintf(um, sizeof um, "0 %lld %lld\n", sbx_rt_int(m, "uid_base"),
	    sbx_rt_int(m, "id_count"));
	snprintf(gm, sizeof gm, "0 %lld %lld\n", sbx_rt_int(m, "gid_base"),
	    sbx_rt_int(m, "id_count"));
	return sbx_userns_open(um, gm, "the root's layers", e);
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

/* runsc's gofer binds OCI_GUEST onto the root, read-only: its mount point is
 * in a lower layer of its own, above the others, so that no sandbox's layer
 * gets it. The number of lowers it adds (0 or 1), in *fd. */
static int
guest_point(const struct oci_paths *p, const struct sbx_manifest *m, int *fd, struct sbx_err *e)
{
	char dir[400];

	if (p->kind != OCI_RUNSC || strcmp(m->security.seccomp, "unconfined") == 0)
		return 0;
	snprintf(dir, sizeof dir, "%s/top", p->mnt);
	if (mkdir(dir, 0755) == -1 || (snprintf(dir, sizeof dir, "%s/top/dev", p->mnt),
	    mkdir(dir, 0755)) == -1 || (snprintf(dir, sizeof dir, "%s/top" OCI_GUEST, p->mnt),
	    mkdir(dir, 0755)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", dir);
	snprintf(dir, sizeof dir, "%s/top", p->mnt);
	if ((*fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", dir);
	return 1;
}

/*
 * filesystem_mounts' mount points in the root (mfd), the container root's
 * (the runtime would make them so), never through a symbolic link of the
 * layers'. Then runsc's read-only root is made so: its gofer cannot remount
 * the root read-only over locked nosuid and nodev, nor make mount points in
 * a read-only one.
 */
static int
mount_points(const struct sbx_manifest *m, const struct oci_paths *p, int mfd,
    struct sbx_err *e)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	char src[300];
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < m->n_mounts; i++) {
		snprintf(src, sizeof src, "%s/m%zu", p->mnt, i);
		if (stat(src, &st) == -1)
			return sbx_err_sys(e, SBX_EX_OSERR, "%s", src);
		if ((fd = sbx_rootfs_beneath(mfd, m->mounts[i].guest, S_ISDIR(st.st_mode),
		    (uid_t)sbx_rt_int(m, "uid_base"), (gid_t)sbx_rt_int(m, "gid_base"), e)) == -1)
			return -1;
		close(fd);
	}
	if (p->kind == OCI_RUNSC && m->read_only_root &&
	    mount_setattr(mfd, "", AT_EMPTY_PATH, &ro, sizeof ro) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "make the root read-only");
	return 0;
}

/* An empty directory, or file, at path: where a tree is attached. */
static int
attach_point(const char *path, int is_dir)
{
	int fd;

	if (is_dir)
		return mkdir(path, 0700);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1)
		return -1;
	return close(fd);
}

/* filesystem_mounts' sources, each a tree (sbx_rootfs_mount_tree) attached at
 * p->mnt/mN, where the runtime's bind mounts of them find them. */
static int
mount_sources(const struct sbx_store *s, const struct sbx_manifest *m,
    const struct oci_paths *p, struct sbx_err *e)
{
	char at[300];
	struct stat st;
	size_t i;
	int tree, r;

	for (i = 0; i < m->n_mounts; i++) {
		if ((tree = sbx_rootfs_mount_tree(s, m, i, m->mounts[i].idmap == 1, e)) == -1)
			return -1;
		snprintf(at, sizeof at, "%s/m%zu", p->mnt, i);
		r = fstat(tree, &st) == -1 || attach_point(at, S_ISDIR(st.st_mode)) == -1 ||
		    move_mount(tree, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) == -1 ? -1 : 0;
		if (r == -1)
			sbx_err_sys(e, SBX_EX_OSERR, "filesystem_mounts: host %s", m->mounts[i].host);
		close(tree);
		if (r == -1)
			return -1;
	}
	return 0;
}

/* The overlay, mounted at p->rootfs (in the caller's own mount namespace). */
static int
mount_root(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_lowers *lw,
    const struct oci_paths *p, int uns, struct sbx_err *e)
{
	int fds[SBX_MAX_LAYERS + 3], n, i, fs = -1, mfd = -1, up = -1, wk = -1;
	char opts[4096], path[1200];
	size_t len = 0;

	if (mount("tmpfs", p->mnt, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "mode=0711,size=64k") == -1 || mkdir(p->rootfs, 0711) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", p->mnt);
	memset(fds, -1, sizeof fds);
	if (mount_sources(s, m, p, e) == -1 || (n = guest_point(p, m, fds, e)) == -1 ||
	    (i = lowers(s, m, lw, p->mnt, uns, fds + n, e)) == -1)
		return -1;
	n += i;
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
	return mount_points(m, p, mfd, e);
}

/*
 * The guard every run's command loads through sbx-guest-exec (OCI_GUEST),
 * as the namespace tier's runs have it: TIOCSTI and TIOCLINUX on the 32 bits
 * the kernel reads, vsock and set-ID modes by the manifest, and in a second
 * program TIOCSCTTY too, for a run whose caller holds a terminal that is no
 * session's (sbx_pty_stray). runc and crun apply the profile from
 * linux.seccomp to every process, so the guard comes alone; runsc applies it
 * to the container's first process only, so the profile comes with it.
 */
static int
guest_programs(const struct sbx_store *s, const struct sbx_manifest *m,
    const struct oci_paths *p, struct sbx_seccomp_prog out[2], struct sbx_err *e)
{
	struct sbx_seccomp_prog prof = { 0 };
	unsigned flags = sbx_seccomp_guard_flags(m);
	int r = 0;

	if (strcmp(m->security.seccomp, "unconfined") == 0)
		return 0;
	if (p->kind == OCI_RUNSC)
		r = m->security.seccomp[0] == '/' ? sbx_seccomp_compile_file(m->security.seccomp,
		    &prof, e) : sbx_seccomp_program(s, m->security.seccomp, &prof, e);
	if (r == 0 && p->kind == OCI_RUNSC)
		r = sbx_seccomp_guard(&prof, flags, &out[0], e) == -1 ||
		    sbx_seccomp_guard(&prof, flags | SBX_GUARD_NO_CTTY, &out[1], e) == -1 ? -1 : 0;
	else if (r == 0)
		r = sbx_seccomp_guard_only(flags, &out[0], e) == -1 ||
		    sbx_seccomp_guard_only(flags | SBX_GUARD_NO_CTTY, &out[1], e) == -1 ? -1 : 0;
	free(prof.code);
	return r == -1 ? sbx_err_prefix(e, "security.seccomp") : 0;
}

/* The loader and its programs in p->mnt/guest (in make_child's namespace). */
static int
guest_files(const struct oci_paths *p, const struct sbx_seccomp_prog prog[2], struct sbx_err *e)
{
	const char *dir = getenv("SBX_LIBEXEC");
	char src[1200], dst[400], *buf = NULL;
	size_t len = 0;

	if (prog[0].code == NULL)
		return 0;
	snprintf(src, sizeof src, "%s/sbx-guest-exec", dir && *dir ? dir : SBX_LIBEXEC);
	/* A tmpfs of its own: the root's is noexec. */
	snprintf(dst, sizeof dst, "%s/guest", p->mnt);
	if (mkdir(dst, 0755) == -1 || mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV,
	    "mode=0755,size=2m") == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", dst);
	if (sbx_read_file(src, 16 << 20, &buf, &len, e) == -1)
		return sbx_err_prefix(e, "the seccomp loader (make installs it)");
	snprintf(dst, sizeof dst, "%s/guest/exec", p->mnt);
	if (sbx_write_atomic_nosync(dst, buf, len, 0755, e) == -1) {
		free(buf);
		return -1;
	}
	free(buf);
	snprintf(dst, sizeof dst, "%s/guest/seccomp", p->mnt);
	if (sbx_write_atomic_nosync(dst, prog[0].code, prog[0].len, 0644, e) == -1)
		return -1;
	snprintf(dst, sizeof dst, "%s/guest/seccomp-ctty", p->mnt);
	return sbx_write_atomic_nosync(dst, prog[1].code, prog[1].len, 0644, e);
}

/* The runtime's create (or restore) argv, in v. */
static void
make_argv(const struct sbx_manifest *m, const struct oci_paths *p, const char *ckpt,
    const char **v, size_t cap)
{
	size_t n = oci_argv(p, v, cap);

	/* runc and crun log errors as JSON lines there; runsc says them on
	 * stderr, which is the log then. */
	if (p->kind != OCI_RUNSC) {
		v[n++] = "--log";
		v[n++] = p->log;
		v[n++] = "--log-format";
		v[n++] = "json";
	}
	if (ckpt == NULL) {
		v[n++] = "create";
	} else {
		v[n++] = "restore";
		v[n++] = "--detach";
		v[n++] = "--image-path";
		v[n++] = ckpt;
	}
	v[n++] = "--bundle";
	v[n++] = p->bundle;
	v[n++] = m->sandbox_id;
	v[n] = NULL;
}

/* In a mount namespace of its own: the root mounted, then the runtime execs. */
static void __attribute__((noreturn))
make_child(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_lowers *lw,
    const struct oci_paths *p, const char *ckpt, const struct sbx_seccomp_prog prog[2], int uns,
    int errfd)
{
	const char *argv[32];
	struct sbx_err e = { 0 };
	int fd, lfd;

	make_argv(m, p, ckpt, argv, SBX_ARRAY_LEN(argv));
	if (unshare(CLONE_NEWNS) == -1 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
	    oci_child_prepare(p, ckpt ? "restore" : "create", 1) == -1) {
		sbx_err_sys(&e, SBX_EX_OSERR, "a mount namespace for the container's root");
		goto fail;
	}
	if (mount_root(s, m, lw, p, uns, &e) == -1 || guest_files(p, prog, &e) == -1)
		goto fail;
	/* The runtime hands its stdio to the container's init: none of ours. */
	if ((fd = open("/dev/null", O_RDWR)) == -1 || dup2(fd, 0) == -1 || dup2(fd, 1) == -1 ||
	    (lfd = p->kind == OCI_RUNSC ? open(p->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0600) : fd) == -1 || dup2(lfd, 2) == -1) {
		sbx_err_sys(&e, SBX_EX_OSERR, "/dev/null");
		goto fail;
	}
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	execve(p->runtime, (char *const *)argv, oci_runtime_env);
	sbx_err_sys(&e, SBX_EX_UNAVAILABLE, "%s", p->runtime);
fail:
	sbx_write_all(errfd, &e, sizeof e);
	_exit(1);
}

int
oci_make(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_lowers *lw,
    const struct oci_paths *p, const char *ckpt, struct sbx_err *e)
{
	struct sbx_seccomp_prog prog[2] = { { 0 }, { 0 } };
	char msg[512];
	int st[2], uns, ws = 0;
	ssize_t n;
	pid_t pid;

	unlink(p->log);
	if (guest_programs(s, m, p, prog, e) == -1 || (uns = sandbox_userns(m, e)) == -1) {
		free(prog[0].code);
		free(prog[1].code);
		return -1;
	}
	if (pipe2(st, O_CLOEXEC) == -1) {
		close(uns);
		free(prog[0].code);
		free(prog[1].code);
		return sbx_err_sys(e, SBX_EX_OSERR, "pipe");
	}
	if ((pid = fork()) == 0) {
		close(st[0]);
		make_child(s, m, lw, p, ckpt, prog, uns, st[1]);
	}
	close(st[1]);
	close(uns);
	free(prog[0].code);
	free(prog[1].code);
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
	return sbx_err_set(e, SBX_EX_OSERR, "%s %s %s: %s", oci_kind_name(p->kind),
	    ckpt ? "restore" : "create", m->sandbox_id, msg[0] ? msg : "failed");
}

int
oci_netns_make(const struct oci_paths *p, struct sbx_err *e)
{
	int fd, ws = 0;
	pid_t pid;

	if ((fd = open(p->netns, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", p->netns);
	close(fd);
	if ((pid = fork()) == 0)
		_exit(unshare(CLONE_NEWNET) == -1 || mount("/proc/self/ns/net", p->netns, NULL,
		    MS_BIND, NULL) == -1 ? 1 : 0);
	if (pid == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "fork");
	while (waitpid(pid, &ws, 0) == -1 && errno == EINTR)
		;
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		return sbx_err_set(e, SBX_EX_OSERR, "a network namespace for runsc at %s",
		    p->netns);
	return 0;
}

/* The namespace's binding, if there is one: it lives as long as the sandbox does. */
static void
netns_remove(const char *netns)
{
	if (netns[0] == '\0')
		return;
	(void)umount2(netns, MNT_DETACH | UMOUNT_NOFOLLOW);
	unlink(netns);
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
	struct dirent *de;
	DIR *d;

	/* the terminal sockets of runs killed before they removed them */
	if ((d = opendir(p->mnt)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (strncmp(de->d_name, "tty-", 4) == 0)
				(void)unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
	rmdir(p->rootfs);
	rmdir(p->mnt);
	snprintf(dir, sizeof dir, OCI_MNT "/%s", s->group);
	rmdir(dir);
}

/*
 * The container's cgroup and its group's directory in every hierarchy
 * sbx does not manage (cpuset, devices, name=systemd..., a hybrid host's
 * unified v2 one), once empty:
 * the runtimes delete the container's own, not their parents. Where each
 * runtime puts them: below our cgroup in each hierarchy, crun below its root
 * (oci.c's oci_cgroup).
 */
static void
cgroup_leftovers(const struct sbx_store *s, const char *id, enum oci_kind kind)
{
	char *buf = NULL, *line, *save = NULL, *ctrl, *path, dir[1400], unified[] = "unified";
	size_t len = 0;
	int v2;

	if (sbx_read_file("/proc/self/cgroup", 1 << 16, &buf, &len, NULL) == -1)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if ((ctrl = strchr(line, ':')) == NULL || (path = strchr(++ctrl, ':')) == NULL)
			continue;
		/* "0::PATH", cgroup v2's: on a hybrid host mounted at unified/,
		 * where runc makes the container's cgroup too (on a v2 host
		 * there is no such directory, and sbx removes its own). */
		v2 = path == ctrl;
		*path++ = '\0';
		if (v2)
			ctrl = unified;
		else if (strncmp(ctrl, "name=", 5) == 0)
			ctrl += 5;
		ctrl[strcspn(ctrl, ",")] = '\0';
		if (kind == OCI_CRUN || strcmp(path, "/") == 0)
			path = "";
		snprintf(dir, sizeof dir, "/sys/fs/cgroup/%s%s/sbx/%s/%s", ctrl, path, s->group, id);
		rmdir(dir);
		*strrchr(dir, '/') = '\0';
		rmdir(dir);
	}
	free(buf);
}

int
oci_teardown(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	const char *kill_args[] = { "kill", m->sandbox_id, "KILL", NULL };
	const char *del[] = { "delete", "--force", m->sandbox_id, NULL };
	struct oci_paths p = { 0 };
	struct sbx_cg_host h;
	struct sbx_cgroup cg;
	char layer[1200];
	int r = 0;

	if (oci_paths(s, m, &p, e) == -1)
		return -1;
	if (sbx_rt_str(m, "container") != NULL && p.runtime[0] != '\0') {
		(void)oci_call(&p, kill_args, NULL, 0, NULL, 0);
		if (oci_do(&p, del, NULL, 0, e) == -1) {
			const char *const state[] = { "state", m->sandbox_id, NULL };

			/* Gone already is fine; still there is not. */
			if (oci_call(&p, state, NULL, 0, NULL, 0) == 0)
				r = -1;
		}
	}
	if (sbx_rt_int(m, "pid") > 0)
		sbx_proc_signal_wait((pid_t)sbx_rt_int(m, "pid"),
		    (unsigned long long)sbx_rt_int(m, "start_ticks"), SIGKILL, 5000);
	/* The veth went with the container's network namespace; the rules,
	 * relay and lease go now. */
	if (sbx_net_wanted(m) && sbx_net_destroy(s, m, r == 0 ? e : NULL) == -1)
		r = -1;
	if (sbx_rt_str(m, "cgroup") != NULL && sbx_cgroup_host(&h, NULL) == 0 &&
	    sbx_cgroup_from_spec(&h, sbx_rt_str(m, "cgroup"), &cg, NULL) == 0) {
		if (sbx_cgroup_destroy(&cg, r == 0 ? e : NULL) == -1)
			r = -1;
		else if (s->group[0])
			sbx_cgroup_remove_group(&h, s->group, 0);
	}
	if (p.runtime[0] != '\0')
		cgroup_leftovers(s, m->sandbox_id, p.kind);
	netns_remove(p.netns);
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

/* Each runtime's containers in the state root's oci/<runtime> that no
 * sandbox of s owns any more. */
void
oci_sweep(const struct sbx_store *s, int busy, int dry_run, sbx_driver_report report,
    void *ctx)
{
	const char *const list[] = { "list", "--quiet", NULL };
	char out[65536], *id, *save = NULL;
	struct oci_paths p;
	struct stat st;
	int k;

	/* A container being made has no state yet: leave them all then. */
	if (busy || s->rootless)
		return;
	/* Host-wide: the leases, rules and veths whose sandbox's process is gone. */
	sbx_net_gc(dry_run, report, ctx);
	for (k = OCI_RUNC; k <= OCI_KATA; k++) {
		memset(&p, 0, sizeof p);
		p.kind = (enum oci_kind)k;
		snprintf(p.root, sizeof p.root, "%s/oci/%s", s->root, oci_kind_name(p.kind));
		snprintf(p.platform_flag, sizeof p.platform_flag, "--platform=%s",
		    oci_runsc_platform());
		snprintf(p.network_flag, sizeof p.network_flag, "--network=none");
		if (stat(p.root, &st) == -1 || oci_find(oci_kind_name(p.kind), p.runtime,
		    sizeof p.runtime) == -1 || oci_call(&p, list, out, sizeof out, NULL, 0) != 0)
			continue;
		for (id = strtok_r(out, "\n", &save); id; id = strtok_r(NULL, "\n", &save)) {
			const char *const del[] = { "delete", "--force", id, NULL };

			if (sbx_store_exists(s, id))
				continue;
			report(ctx, "container", id);
			if (!dry_run)
				(void)oci_call(&p, del, NULL, 0, NULL, 0);
		}
	}
}
