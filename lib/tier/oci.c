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
#include "oci.h"
#include "rootfs.h"
#include "seccomp_profile.h"
#include "supervise.h"
#include "util.h"


static const char *const search_dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
	"/usr/bin", "/sbin", "/bin", NULL };

int
oci_call(const char *runtime, const char *root, const char *const *args, char *out,
    size_t outsz, char *err, size_t errsz)
{
	const char *argv[40];
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, st, fd;
	size_t n = 0, no = 0, ne = 0, i;
	pid_t pid;

	argv[n++] = runtime;
	if (root != NULL) {
		argv[n++] = "--root";
		argv[n++] = root;
	}
	for (i = 0; args[i] && n < SBX_ARRAY_LEN(argv) - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe2(po, O_CLOEXEC) == -1 || pipe2(pe, O_CLOEXEC) == -1) {
		for (i = 0; i < 2; i++)
			if (po[i] != -1)
				close(po[i]);
		return -1;
	}
	if ((pid = fork()) == 0) {
		static char *const env[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:"
			"/usr/bin:/sbin:/bin", NULL };

		if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1)
			dup2(fd, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execve(runtime, (char *const *)argv, env);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	if (pid != -1) {
		struct pollfd pf[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
		char sink[512];

		while (pf[0].fd != -1 || pf[1].fd != -1) {
			if (poll(pf, 2, -1) == -1 && errno != EINTR)
				break;
			for (i = 0; i < 2; i++) {
				char *buf = i == 0 ? out : err;
				size_t size = i == 0 ? outsz : errsz, *len = i == 0 ? &no : &ne;
				ssize_t r;

				if (pf[i].fd == -1 || pf[i].revents == 0)
					continue;
				if (buf != NULL && *len + 1 < size)
					r = read(pf[i].fd, buf + *len, size - 1 - *len);
				else
					r = read(pf[i].fd, sink, sizeof sink);
				if (r > 0 && buf != NULL && *len + 1 < size)
					*len += (size_t)r;
				else if (r == 0 || (r == -1 && errno != EINTR))
					pf[i].fd = -1;
			}
		}
	}
	close(po[0]);
	close(pe[0]);
	if (out != NULL && outsz > 0)
		out[no] = '\0';
	if (err != NULL && errsz > 0) {
		err[ne] = '\0';
		while (ne > 0 && err[ne - 1] == '\n')
			err[--ne] = '\0';
	}
	if (pid == -1)
		return -1;
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * The runtime's binary: runc by name from the system's directories (never
 * the caller's PATH: sbx runs it as root), or a path, which must be root's
 * and written by no one else, and must say it is runc.
 */
static int
oci_runtime(const struct sbx_manifest *m, char *path, size_t size, struct sbx_err *e)
{
	const char *const ver[] = { "--version", NULL };
	char out[256] = "";
	struct stat st;
	size_t i;

	if (m->runtime[0] == '/') {
		snprintf(path, size, "%s", m->runtime);
		if (stat(path, &st) == -1)
			return sbx_err_sys(e, SBX_EX_UNAVAILABLE, "runtime %s", m->runtime);
		if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
		    (st.st_mode & 022) || !(st.st_mode & 0100))
			return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime %s: not an executable "
			    "file of root's that only its owner may write", m->runtime);
	} else if (strcmp(m->runtime, "runc") != 0) {
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime %s: this build drives runc only "
		    "(crun, runsc and kata-runtime are not done yet); refusing to run with another "
		    "runtime", m->runtime);
	} else {
		for (i = 0; search_dirs[i]; i++) {
			snprintf(path, size, "%s/runc", search_dirs[i]);
			if (access(path, X_OK) == 0)
				break;
		}
		if (search_dirs[i] == NULL)
			return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime runc: not installed (no "
			    "runc in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, "
			    "/bin)");
	}
	if (oci_call(path, NULL, ver, out, sizeof out, NULL, 0) != 0)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime %s: `%s --version` fails",
		    m->runtime, path);
	if (strncmp(out, "runc version ", 13) != 0)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime %s: %s is not runc (its "
		    "--version says '%.60s')", m->runtime, path, out);
	return 0;
}

/* What the tier cannot do yet, each a 69 naming the key. */
static int
oci_refuse(const struct sbx_manifest *m, struct sbx_err *e)
{
	const char *rt = m->runtime;

	if (strcmp(m->network_policy, "egress-allow-list") == 0)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "network_policy egress-allow-list: "
		    "isolation_level oci (runtime %s) has no allow-list yet (deny-all or host)", rt);
	if (m->security.landlock == 1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "security.landlock: runtime %s applies "
		    "no Landlock rules (set landlock: false for isolation_level oci)", rt);
	if (m->security.landlock_network == 1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "security.landlock_network: runtime %s "
		    "applies no Landlock rules", rt);
	if (m->n_mounts > 0)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "filesystem_mounts: isolation_level oci "
		    "(runtime %s) has no bind mounts yet", rt);
	if (sbx_manifest_rootfs_is_snapshot(m->rootfs))
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "rootfs %s: isolation_level oci "
		    "(runtime %s) cannot start from a snapshot yet", m->rootfs, rt);
	return 0;
}

static int
oci_check(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	char path[1100];
	unsigned uid, gid;

	if (s->rootless)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level oci: sbx drives runtime "
		    "%s as root only (for now)", m->runtime);
	if (oci_runtime(m, path, sizeof path, e) == -1 || oci_refuse(m, e) == -1)
		return -1;
	if (m->security.no_new_privileges == 0 && strcmp(m->security.seccomp, "unconfined"))
		return sbx_err_set(e, SBX_EX_DATAERR, "security.no_new_privileges: false needs "
		    "seccomp: unconfined (a filter without it needs CAP_SYS_ADMIN)");
	if (sbx_manifest_user_parse(m->user, &uid, &gid) == -1)
		return sbx_err_set(e, SBX_EX_DATAERR, "user '%s' is not UID:GID", m->user);
	return 0;
}

int
oci_paths(const struct sbx_store *s, const struct sbx_manifest *m, struct oci_paths *p,
    struct sbx_err *e)
{
	const char *rt = sbx_rt_str(m, "runtime_path");

	snprintf(p->runtime, sizeof p->runtime, "%s", rt ? rt : "");
	snprintf(p->root, sizeof p->root, "%s/oci", s->root);
	snprintf(p->mnt, sizeof p->mnt, OCI_MNT "/%s/%s", s->group, m->sandbox_id);
	snprintf(p->rootfs, sizeof p->rootfs, "%s/rootfs", p->mnt);
	if (sbx_store_path(s, m->sandbox_id, "bundle", p->bundle, sizeof p->bundle, e) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "bundle/runc.log", p->log, sizeof p->log, e) == -1)
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

		if (sbx_doc_parse("runc.log", line, strlen(line), &n, &ignored) == -1)
			continue;
		if ((lv = sbx_node_get(n, "level")) && lv->type == SBX_SCALAR &&
		    (strcmp(lv->str, "error") == 0 || strcmp(lv->str, "fatal") == 0) &&
		    (ms = sbx_node_get(n, "msg")) && ms->type == SBX_SCALAR)
			snprintf(msg, size, "%s", ms->str);
		sbx_node_free(n);
	}
	free(buf);
}

/* `runtime ... args` for the sandbox: 0, or 71 naming what failed and why. */
int
oci_do(const struct oci_paths *p, const char *const *args, char *out, size_t outsz,
    struct sbx_err *e)
{
	char err[600] = "";
	int r = oci_call(p->runtime, p->root, args, out, outsz, err, sizeof err);

	if (r == 0)
		return 0;
	return sbx_err_set(e, SBX_EX_OSERR, "runc %s %s: %s", args[0], args[1] ? args[1] : "",
	    err[0] ? err : r == -1 ? strerror(errno) : "failed");
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

	if (oci_call(p->runtime, p->root, args, out, sizeof out, NULL, 0) != 0 ||
	    sbx_doc_parse("runc state", out, strlen(out), &n, &ignored) == -1)
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
 * hierarchy (runc reads a relative path so), or below the one parent. *cgpath
 * is runc's linux.cgroupsPath.
 */
static int
oci_cgroup(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_cgroup *cg,
    char *cgpath, size_t size, char *spec, size_t specsz, struct sbx_err *e)
{
	struct sbx_cg_host h;
	const char *parent = getenv("SBX_CGROUP_PARENT");
	int i;

	if (sbx_cgroup_host(&h, e) == -1)
		return -1;
	memset(cg, 0, sizeof *cg);
	cg->version = h.version;
	for (i = 0; i < (h.version == 2 ? 1 : SBX_CG_NCTRL); i++)
		if (h.mnt[i][0])
			snprintf(cg->path[i], sizeof cg->path[i], "%s%s/sbx/%s/%s", h.mnt[i],
			    h.own[i], s->group, m->sandbox_id);
	if (h.version == 1 && (parent == NULL || *parent == '\0'))
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

static int
oci_create(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e)
{
	struct sbx_lowers lw;
	struct oci_paths p = { 0 };
	struct sbx_cgroup cg;
	char rt[1100], cgpath[1200], spec[4096], status[32] = "";
	const char *start[] = { "start", m->sandbox_id, NULL };
	long long pid;

	m->has_rt = 1;
	memset(&lw, 0, sizeof lw);
	if (oci_runtime(m, rt, sizeof rt, e) == -1 || sbx_tier_pick_ids(s, m, e) == -1 ||
	    oci_paths(s, m, &p, e) == -1 ||
	    oci_cgroup(s, m, &cg, cgpath, sizeof cgpath, spec, sizeof spec, e) == -1)
		return -1;
	if (sbx_rt_set_str(m, "runtime_path", rt) == -1 || sbx_rt_set_str(m, "cgroup", spec) == -1 ||
	    sbx_rt_set_str(m, "runc_root", p.root) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	snprintf(p.runtime, sizeof p.runtime, "%s", rt);
	if (sbx_rootfs_prepare(s, m, (uid_t)sbx_rt_int(m, "uid_base"),
	    (gid_t)sbx_rt_int(m, "gid_base"), &lw, e) == -1)
		goto fail;
	if (lw.skel != NULL && sbx_rt_set_str(m, "skeleton", strrchr(lw.skel, '/') + 1) == -1) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto fail;
	}
	if (lw.skel != NULL && sbx_rootfs_own_lower(s, m, (uid_t)sbx_rt_int(m, "uid_base"),
	    (gid_t)sbx_rt_int(m, "gid_base"), e) == -1)
		goto fail;
	if (sbx_mkdir_p(p.root, 0700, e) == -1 || sbx_mkdir_p(p.bundle, 0700, e) == -1 ||
	    oci_mnt_dir(s, &p, e) == -1 || oci_write_config(s, m, &lw, &p, cgpath, e) == -1)
		goto fail;
	/* Set before the container exists: a failure from here on undoes it. */
	if (sbx_rt_set_str(m, "container", m->sandbox_id) == -1) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto fail;
	}
	sbx_crash_point("oci-config");
	if (oci_make(s, m, &lw, &p, e) == -1 || oci_do(&p, start, NULL, 0, e) == -1)
		goto fail;
	if ((pid = oci_state_pid(&p, m->sandbox_id, status, sizeof status)) <= 0 ||
	    strcmp(status, "running") != 0) {
		sbx_err_set(e, SBX_EX_OSERR, "runc state %s: the container is %s", m->sandbox_id,
		    status[0] ? status : "not there");
		goto fail;
	}
	if (sbx_rt_set_int(m, "pid", pid) == -1 ||
	    sbx_rt_set_int(m, "start_ticks", (long long)sbx_proc_starttime((pid_t)pid)) == -1) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto fail;
	}
	oci_protect_init((pid_t)pid);
	sbx_lowers_free(&lw);
	return 0;
fail:
	sbx_lowers_free(&lw);
	{
		struct sbx_err ignored;

		oci_teardown(s, m, &ignored);
	}
	return -1;
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

	/* The driver is given no state root here: create kept the runtime's root. */
	if (sbx_rt_str(m, "runc_root") == NULL || sbx_rt_str(m, "runtime_path") == NULL)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "sandbox %s: no runtime recorded",
		    m->sandbox_id);
	snprintf(p.runtime, sizeof p.runtime, "%s", sbx_rt_str(m, "runtime_path"));
	snprintf(p.root, sizeof p.root, "%s", sbx_rt_str(m, "runc_root"));
	return oci_do(&p, args, NULL, 0, e);
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

static int
oci_memory_open(const struct sbx_store *s, const struct sbx_manifest *m)
{
	struct sbx_cg_host h;
	struct sbx_cgroup cg;

	(void)s;
	if (sbx_rt_str(m, "cgroup") == NULL || sbx_cgroup_host(&h, NULL) == -1 ||
	    sbx_cgroup_from_spec(&h, sbx_rt_str(m, "cgroup"), &cg, NULL) == -1)
		return -1;
	return sbx_cgroup_memory_fd(&cg);
}

static long long
oci_memory_used(int handle)
{
	return sbx_cgroup_memory_now(handle);
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
	.memory_open = oci_memory_open,
	.memory_used = oci_memory_used,
	.sweep = oci_sweep,
	/* No checkpoint or restore (runc would need CRIU), no allow-list to re-pin. */
};
