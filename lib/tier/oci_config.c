/* SPDX-License-Identifier: MIT */
/*
 * The bundle's config.json (OCI runtime spec 1.0), built as a document tree
 * from the manifest: every value of the manifest's is a node of its own,
 * never text pasted into JSON. See oci.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "doc.h"
#include "oci.h"
#include "seccomp_profile.h"
#include "util.h"

/* Add v under key (NULL: to a sequence); a failed build is NULL, and stays so. */
static struct sbx_node *
put(struct sbx_node *parent, const char *key, struct sbx_node *v)
{
	if (parent == NULL || v == NULL || sbx_node_add(parent, key, v) == -1) {
		sbx_node_free(v);
		return NULL;
	}
	return v;
}

static int
strs(struct sbx_node *map, const char *key, const char *const *v, size_t n)
{
	struct sbx_node *seq = put(map, key, sbx_node_new(SBX_SEQ));
	size_t i;

	for (i = 0; seq && i < n; i++)
		if (put(seq, NULL, sbx_node_str(v[i])) == NULL)
			return -1;
	return seq ? 0 : -1;
}

static int
add_mount(struct sbx_node *mounts, const char *dest, const char *type, const char *src,
    const char *const *opts, size_t n)
{
	struct sbx_node *mt = put(mounts, NULL, sbx_node_new(SBX_MAP));

	if (put(mt, "destination", sbx_node_str(dest)) == NULL ||
	    put(mt, "type", sbx_node_str(type)) == NULL ||
	    put(mt, "source", sbx_node_str(src)) == NULL)
		return -1;
	return strs(mt, "options", opts, n);
}

static int
add_tmpfs(struct sbx_node *mounts, const char *dest, long long mb)
{
	const char *opts[] = { "nosuid", "nodev", "mode=1777", NULL };
	char size[40];

	snprintf(size, sizeof size, "size=%lldm", mb);
	opts[3] = size;
	return add_mount(mounts, dest, "tmpfs", "tmpfs", opts, 4);
}

static int
covered(const struct sbx_manifest *m, const char *guest)
{
	size_t i;

	for (i = 0; i < m->n_tmpfs; i++)
		if (strcmp(m->tmpfs[i].guest, guest) == 0)
			return 1;
	return 0;
}

/* /proc, a small /dev, the host's system directories (rootfs host), tmpfs. */
static int
mounts(struct sbx_node *cfg, const struct sbx_manifest *m, const struct sbx_lowers *lw,
    const struct oci_paths *p)
{
	static const char *const dev[] = { "nosuid", "strictatime", "mode=755", "size=1024k" };
	static const char *const pts[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666",
		"mode=0620" };
	static const char *const shm[] = { "nosuid", "noexec", "nodev", "mode=1777",
		"size=65536k" };
	static const char *const proc[] = { "nosuid", "noexec", "nodev" };
	static const char *const ro[] = { "rbind", "ro", "nosuid", "nodev" };
	const char *const *dirs = sbx_rootfs_host_dirs();
	struct sbx_node *mt = put(cfg, "mounts", sbx_node_new(SBX_SEQ));
	struct stat st;
	size_t i;

	if (mt == NULL || add_mount(mt, "/proc", "proc", "proc", proc, 3) == -1 ||
	    add_mount(mt, "/dev", "tmpfs", "tmpfs", dev, 4) == -1 ||
	    add_mount(mt, "/dev/pts", "devpts", "devpts", pts, 5) == -1 ||
	    add_mount(mt, "/dev/shm", "tmpfs", "shm", shm, 5) == -1)
		return -1;
	for (i = 0; strcmp(lw->base, "host") == 0 && dirs[i]; i++)
		if (lstat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode) &&
		    add_mount(mt, dirs[i], "bind", dirs[i], ro, 4) == -1)
			return -1;
	/* filesystem_mounts: the trees oci_run.c made of the sources, read-only
	 * unless rw there already, and here too. */
	for (i = 0; i < m->n_mounts; i++) {
		const char *opts[] = { "bind", strcmp(m->mounts[i].mode, "rw") == 0 ? "rw" : "ro",
			"nosuid", "nodev" };
		char src[300];

		snprintf(src, sizeof src, "%s/m%zu", p->mnt, i);
		if (add_mount(mt, m->mounts[i].guest, "bind", src, opts, 4) == -1)
			return -1;
	}
	for (i = 0; i < m->n_tmpfs; i++)
		if (add_tmpfs(mt, m->tmpfs[i].guest, m->tmpfs[i].size_mb) == -1)
			return -1;
	/* The seccomp guard's loader every run goes through (oci_run.c). */
	if (strcmp(m->security.seccomp, "unconfined") != 0) {
		char src[300];

		snprintf(src, sizeof src, "%s/guest", p->mnt);
		if (add_mount(mt, OCI_GUEST, "bind", src, ro, 4) == -1)
			return -1;
	}
	/* A read-only root still needs a scratch /tmp, as in the namespace tier. */
	if (m->read_only_root && !covered(m, "/tmp") && add_tmpfs(mt, "/tmp", 64) == -1)
		return -1;
	return 0;
}

static int
caps(struct sbx_node *proc, const struct sbx_manifest *m, unsigned uid)
{
	static const char *const sets[] = { "bounding", "effective", "permitted", "inheritable",
		"ambient" };
	struct sbx_node *c = put(proc, "capabilities", sbx_node_new(SBX_MAP));
	char **upper = calloc(m->security.capabilities.n + 1, sizeof *upper);
	size_t i, j;
	int r = c == NULL || upper == NULL ? -1 : 0;

	/* The manifest may name them cap_net_bind_service; OCI as CAP_NET_BIND_SERVICE. */
	for (i = 0; r == 0 && i < m->security.capabilities.n; i++) {
		const char *name = m->security.capabilities.v[i];

		if (asprintf(&upper[i], "%s%s", strncasecmp(name, "cap_", 4) == 0 ? "" : "CAP_",
		    name) == -1) {
			upper[i] = NULL;
			r = -1;
			break;
		}
		for (j = 0; upper[i][j]; j++)
			if (upper[i][j] >= 'a' && upper[i][j] <= 'z')
				upper[i][j] = (char)(upper[i][j] - 'a' + 'A');
	}
	/* Ambient only for a user other than root, who keeps them over exec so. */
	for (i = 0; r == 0 && i < SBX_ARRAY_LEN(sets); i++)
		r = strs(c, sets[i], (const char *const *)upper, i == 4 && uid == 0 ? 0 :
		    m->security.capabilities.n);
	for (i = 0; upper && i < m->security.capabilities.n; i++)
		free(upper[i]);
	free(upper);
	return r;
}

/* process: the container's init (the runs are runc exec's), as the manifest's user. */
static int
process(struct sbx_node *cfg, const struct sbx_manifest *m)
{
	static const char *const env[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" };
	const char *args[] = { "/bin/sh", "-c", "while :; do sleep 3600; done" };
	struct sbx_node *proc = put(cfg, "process", sbx_node_new(SBX_MAP)), *user, *rl, *r;
	unsigned uid = 0, gid = 0;

	sbx_manifest_user_parse(m->user, &uid, &gid);
	if (put(proc, "terminal", sbx_node_bool(0)) == NULL ||
	    (user = put(proc, "user", sbx_node_new(SBX_MAP))) == NULL ||
	    put(user, "uid", sbx_node_int(uid)) == NULL ||
	    put(user, "gid", sbx_node_int(gid)) == NULL ||
	    strs(proc, "args", args, 3) == -1 || strs(proc, "env", env, 1) == -1 ||
	    put(proc, "cwd", sbx_node_str("/")) == NULL || caps(proc, m, uid) == -1 ||
	    put(proc, "noNewPrivileges", sbx_node_bool(m->security.no_new_privileges != 0)) ==
	    NULL || (rl = put(proc, "rlimits", sbx_node_new(SBX_SEQ))) == NULL)
		return -1;
	/* No core dumps (they would land in the root's layer), as the namespace tier. */
	if ((r = put(rl, NULL, sbx_node_new(SBX_MAP))) == NULL ||
	    put(r, "type", sbx_node_str("RLIMIT_CORE")) == NULL ||
	    put(r, "hard", sbx_node_int(0)) == NULL || put(r, "soft", sbx_node_int(0)) == NULL)
		return -1;
	return 0;
}

static int
id_map(struct sbx_node *linux_, const char *key, long long base, long long count)
{
	struct sbx_node *seq = put(linux_, key, sbx_node_new(SBX_SEQ)), *e;

	if ((e = put(seq, NULL, sbx_node_new(SBX_MAP))) == NULL ||
	    put(e, "containerID", sbx_node_int(0)) == NULL ||
	    put(e, "hostID", sbx_node_int(base)) == NULL ||
	    put(e, "size", sbx_node_int(count)) == NULL)
		return -1;
	return 0;
}

/* linux.resources: memory, CPU, pids, and no device but runc's defaults. */
static int
resources(struct sbx_node *linux_, const struct sbx_manifest *m, const struct oci_paths *p)
{
	struct sbx_node *res = put(linux_, "resources", sbx_node_new(SBX_MAP)), *v, *dv;

	if ((dv = put(res, "devices", sbx_node_new(SBX_SEQ))) == NULL ||
	    (v = put(dv, NULL, sbx_node_new(SBX_MAP))) == NULL ||
	    put(v, "allow", sbx_node_bool(0)) == NULL || put(v, "access", sbx_node_str("rwm")) ==
	    NULL)
		return -1;
	if (m->res.memory_mb != SBX_UNSET_INT) {
		long long lim = m->res.memory_mb << 20;

		/* Swap as much as memory: no swap beyond the limit (v1 memsw). */
		if ((v = put(res, "memory", sbx_node_new(SBX_MAP))) == NULL ||
		    put(v, "limit", sbx_node_int(lim)) == NULL ||
		    put(v, "swap", sbx_node_int(lim)) == NULL ||
		    put(v, "reservation", sbx_node_int(lim / 100 * m->res.memory_soft_pct)) == NULL)
			return -1;
	}
	/* The kernel's smallest quota is 1 ms a period. */
	if (!isnan(m->res.cpu_cores) && ((v = put(res, "cpu", sbx_node_new(SBX_MAP))) == NULL ||
	    put(v, "period", sbx_node_int(100000)) == NULL ||
	    put(v, "quota", sbx_node_int(m->res.cpu_cores * 100000 < 1000 ? 1000 :
	    (long long)(m->res.cpu_cores * 100000))) == NULL))
		return -1;
	/* gVisor's sandbox has host tasks of its own besides those its
	 * processes make (Go's threads, the ptrace platform's tracees): the
	 * limit leaves room for them (OCI_RUNSC_TASKS). */
	if (m->res.pids != SBX_UNSET_INT && ((v = put(res, "pids", sbx_node_new(SBX_MAP))) ==
	    NULL || put(v, "limit", sbx_node_int(m->res.pids + (p->kind == OCI_RUNSC ?
	    OCI_RUNSC_TASKS : 0))) == NULL))
		return -1;
	return 0;
}

/* linux.namespaces: all of them new, the network's unless network_policy host
 * (or p->netns, made by sbx). */
static int
namespaces(struct sbx_node *linux_, const struct sbx_manifest *m, const struct oci_paths *p)
{
	static const char *const types[] = { "pid", "mount", "ipc", "uts", "user", "cgroup",
		"network" };
	struct sbx_node *ns = put(linux_, "namespaces", sbx_node_new(SBX_SEQ)), *v;
	size_t i, n = SBX_ARRAY_LEN(types) - (strcmp(m->network_policy, "host") == 0);

	for (i = 0; i < n; i++)
		if ((v = put(ns, NULL, sbx_node_new(SBX_MAP))) == NULL ||
		    put(v, "type", sbx_node_str(types[i])) == NULL ||
		    (strcmp(types[i], "network") == 0 && p->netns[0] &&
		    put(v, "path", sbx_node_str(p->netns)) == NULL))
			return -1;
	return ns ? 0 : -1;
}

/* /proc's masked names (rootfs.c's list) and its read-only parts. */
static int
proc_paths(struct sbx_node *linux_)
{
	static const char *const ro[] = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
		"/proc/sysrq-trigger" };
	const char *const *masked = sbx_rootfs_proc_masked();
	struct sbx_node *seq = put(linux_, "maskedPaths", sbx_node_new(SBX_SEQ));
	char p[128];
	size_t i;

	for (i = 0; seq && masked[i]; i++) {
		snprintf(p, sizeof p, "/proc/%s", masked[i]);
		if (put(seq, NULL, sbx_node_str(p)) == NULL)
			return -1;
	}
	return seq ? strs(linux_, "readonlyPaths", ro, SBX_ARRAY_LEN(ro)) : -1;
}

static int
linux_part(struct sbx_node *cfg, const struct sbx_manifest *m, const struct oci_paths *p,
    const char *cgpath, struct sbx_err *e)
{
	struct sbx_node *lx = put(cfg, "linux", sbx_node_new(SBX_MAP)), *sc;

	if (lx == NULL || id_map(lx, "uidMappings", sbx_rt_int(m, "uid_base"),
	    sbx_rt_int(m, "id_count")) == -1 || id_map(lx, "gidMappings",
	    sbx_rt_int(m, "gid_base"), sbx_rt_int(m, "id_count")) == -1 ||
	    namespaces(lx, m, p) == -1 || resources(lx, m, p) == -1 ||
	    put(lx, "cgroupsPath", sbx_node_str(cgpath)) == NULL || proc_paths(lx) == -1 ||
	    /* The host's later mounts and unmounts stay out of the container. */
	    put(lx, "rootfsPropagation", sbx_node_str("private")) == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if (sbx_seccomp_oci(m->security.seccomp, &sc, e) == -1)
		return sbx_err_prefix(e, "security.seccomp");
	if (sc != NULL && put(lx, "seccomp", sc) == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	return 0;
}

int
oci_write_config(const struct sbx_store *s, const struct sbx_manifest *m,
    const struct sbx_lowers *lw, const struct oci_paths *p, const char *cgpath,
    struct sbx_err *e)
{
	struct sbx_node *cfg = sbx_node_new(SBX_MAP), *root;
	char path[1300], *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r = -1;

	(void)s;
	if (put(cfg, "ociVersion", sbx_node_str("1.0.2")) == NULL || process(cfg, m) == -1 ||
	    (root = put(cfg, "root", sbx_node_new(SBX_MAP))) == NULL ||
	    put(root, "path", sbx_node_str(p->rootfs)) == NULL ||
	    /* runsc's gofer, in a user namespace, cannot remount the root
	     * read-only over its locked nosuid and nodev: it is mounted so. */
	    put(root, "readonly", sbx_node_bool(m->read_only_root != 0 && p->kind != OCI_RUNSC)) ==
	    NULL ||
	    put(cfg, "hostname", sbx_node_str(m->sandbox_id)) == NULL || mounts(cfg, m, lw, p) == -1) {
		sbx_node_free(cfg);
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
	if (linux_part(cfg, m, p, cgpath, e) == -1) {
		sbx_node_free(cfg);
		return -1;
	}
	if ((f = open_memstream(&buf, &len)) == NULL) {
		sbx_node_free(cfg);
		return sbx_err_sys(e, SBX_EX_OSERR, "open_memstream");
	}
	r = sbx_doc_emit_tree(f, cfg, SBX_FMT_JSON);
	if (fclose(f) != 0 || r == -1) {
		free(buf);
		return sbx_err_set(e, SBX_EX_OSERR, "config.json: out of memory");
	}
	snprintf(path, sizeof path, "%s/config.json", p->bundle);
	r = sbx_write_atomic(path, buf, len, 0600, e);
	free(buf);
	return r;
}
