/* SPDX-License-Identifier: MIT */
/* The operator's policy: ceilings and defaults for every manifest. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "doc.h"
#include "policy.h"
#include "util.h"

/* Kernel filesystems that nothing may bind into a sandbox. */
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif
static const long kernel_fs[] = { PROC_SUPER_MAGIC, SYSFS_MAGIC, CGROUP_SUPER_MAGIC,
	CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC, SECURITYFS_MAGIC, BPF_FS_MAGIC,
	DEVPTS_SUPER_MAGIC, EFIVARFS_MAGIC, PSTOREFS_MAGIC, BINFMTFS_MAGIC, 0x62656570 /* configfs */,
	0x65735543 /* fusectl */, NSFS_MAGIC, SELINUX_MAGIC, SMACK_MAGIC, 0x19800202 /* mqueue */,
	0x07655821 /* resctrl */, HUGETLBFS_MAGIC };

/* Least trust first: a manifest may always claim less. */
static const char *const trusts[] = { "sensitive", "untrusted", "semi-trusted", "trusted", NULL };

/* What a manifest may add with no policy file: in the sandbox's own user
 * namespace none of these reaches past its files, processes and ports. */
static const char *const builtin_caps[] = { "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
	"CAP_NET_RAW", "CAP_SYS_CHROOT", "CAP_AUDIT_WRITE", NULL };

enum { ALLOW_UNCONFINED, ALLOW_SECCOMP_OFF = ALLOW_UNCONFINED, ALLOW_LANDLOCK_OFF,
	ALLOW_NEW_PRIVS, ALLOW_N };
static const char *const allow_keys[] = { "seccomp_unconfined", "landlock_off",
	"new_privileges", NULL };

enum { R_CPU, R_MEMORY, R_DISK, R_PIDS, R_WALL, R_TMPFS, R_LAYER, R_RATIO, R_N };
static const char *const res_keys[] = { "cpu_cores", "memory_mb", "disk_mb", "pids",
	"max_wall_clock_s", "tmpfs_mb", "layer_mb", "layer_ratio", NULL };
static const double res_max[] = { 1024, 1 << 24, 1 << 24, 4194304, 31536000, 1 << 20,
	1 << 30, 1 << 20 };

struct pmount {
	char *path;
	int rw, line;
};

struct sbx_policy {
	char *source;               /* the file; NULL: built-in */
	int max_trust, l_trust;
	struct pmount *mounts;      /* l_mounts 0: the built-in rule */
	size_t n_mounts;
	int l_mounts;
	struct sbx_strv rootfs, caps, seccomp_files, nets, egress;
	int l_rootfs, l_caps, l_seccomp_files, l_nets, l_egress;  /* 0: built-in */
	int allow[ALLOW_N], l_allow[ALLOW_N];
	double lim[R_N], def[R_N];  /* NAN: none */
	int l_lim[R_N], l_def[R_N];
	struct sbx_pool_conf *pools;
	size_t n_pools;
};

static char *policy_path;

void
sbx_policy_set_path(const char *path)
{
	free(policy_path);
	policy_path = path ? strdup(path) : NULL;
}

void
sbx_policy_free(struct sbx_policy *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n_mounts; i++)
		free(p->mounts[i].path);
	free(p->mounts);
	for (i = 0; i < p->n_pools; i++) {
		free(p->pools[i].name);
		free(p->pools[i].manifest);
	}
	free(p->pools);
	sbx_strv_free(&p->rootfs);
	sbx_strv_free(&p->caps);
	sbx_strv_free(&p->seccomp_files);
	sbx_strv_free(&p->nets);
	sbx_strv_free(&p->egress);
	free(p->source);
	free(p);
}

static struct sbx_policy *
builtin(void)
{
	struct sbx_policy *p = calloc(1, sizeof *p);
	size_t i;

	if (p == NULL)
		return NULL;
	p->max_trust = 1;   /* untrusted */
	for (i = 0; i < R_N; i++)
		p->lim[i] = p->def[i] = NAN;
	/* The seed's least privilege: 1 CPU, 512 MiB, 1 GiB disk, 300 s, and a pids limit. */
	p->def[R_CPU] = 1;
	p->def[R_MEMORY] = 512;
	p->def[R_DISK] = 1024;
	p->def[R_PIDS] = 1024;
	p->def[R_WALL] = 300;
	for (i = 0; builtin_caps[i]; i++)
		if (sbx_strv_add(&p->caps, builtin_caps[i]) == -1)
			goto fail;
	if (sbx_strv_add(&p->nets, "deny-all") == -1 ||
	    sbx_strv_add(&p->nets, "egress-allow-list") == -1)
		goto fail;
	return p;
fail:
	sbx_policy_free(p);
	return NULL;
}

/* Reading */

struct pctx {
	const char *name;
	struct sbx_err *e;
};

/* Exit 65 at n's place in the policy. */
#define perr(c, n, ...) sbx_node_err((c)->e, (c)->name, (n), __VA_ARGS__)

static int
is_null(const struct sbx_node *n)
{
	return n->type == SBX_SCALAR && n->plain &&
	    (strcmp(n->str, "null") == 0 || strcmp(n->str, "~") == 0);
}

static int
get_bool(struct pctx *c, const struct sbx_node *n, const char *key, int *out)
{
	if (n->type == SBX_SCALAR && n->plain && strcmp(n->str, "true") == 0)
		*out = 1;
	else if (n->type == SBX_SCALAR && n->plain && strcmp(n->str, "false") == 0)
		*out = 0;
	else
		return perr(c, n, "%s: expected true or false", key);
	return 0;
}

static int
get_num(struct pctx *c, const struct sbx_node *n, const char *key, double max, int whole,
    double *out)
{
	char *end;
	double v;

	if (n->type != SBX_SCALAR || !n->plain)
		return perr(c, n, "%s: expected a number", key);
	errno = 0;
	v = strtod(n->str, &end);
	if (end == n->str || *end || errno || !isfinite(v) || v < (whole ? 1 : 0.01) || v > max ||
	    (whole && v != floor(v)) || strspn(n->str, "0123456789.eE+") != strlen(n->str))
		return perr(c, n, "%s: '%.40s' is not a number from %s to %.10g", key, n->str,
		    whole ? "1" : "0.01", max);
	*out = v;
	return 0;
}

/* An absolute, normalized path (as the manifest wants them). */
static int
good_path(const char *s)
{
	const char *p;

	if (s[0] != '/' || strlen(s) >= 1024)
		return 0;
	for (p = s; *p; p++)
		if (*p == '/' && (p[1] == '/' || (p[1] == '\0' && p != s) ||
		    (p[1] == '.' && (p[2] == '/' || p[2] == '\0')) ||
		    (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
			return 0;
	return 1;
}

enum { V_ANY, V_PATH, V_CAP, V_NET, V_EGRESS };

static int egress_split(const char *s, int *family, unsigned char *addr, int *prefix,
    char *name, size_t name_size, unsigned *port);

static int
get_strv(struct pctx *c, const struct sbx_node *n, const char *key, int what,
    struct sbx_strv *out)
{
	unsigned char addr[16];
	char name[256];
	unsigned port;
	int fam, prefix;
	cap_value_t cv;
	size_t i;

	if (n->type != SBX_SEQ)
		return perr(c, n, "%s: expected a list", key);
	sbx_strv_free(out);
	for (i = 0; i < n->n; i++) {
		const struct sbx_node *it = n->kids[i];

		if (it->type != SBX_SCALAR || is_null(it))
			return perr(c, it, "%s: expected a string", key);
		if ((what == V_PATH && !good_path(it->str)) ||
		    (what == V_CAP && cap_from_name(it->str, &cv) != 0) ||
		    (what == V_NET && strcmp(it->str, "deny-all") && strcmp(it->str, "host") &&
		    strcmp(it->str, "egress-allow-list")) ||
		    (what == V_EGRESS && egress_split(it->str, &fam, addr, &prefix, name,
		    sizeof name, &port) == -1))
			return perr(c, it, "%s: '%.100s' is not %s", key, it->str,
			    what == V_PATH ? "an absolute, normalized path" : what == V_CAP ?
			    "a capability name" : what == V_NET ? "deny-all, egress-allow-list or host" :
			    "HOST:PORT, *.DOMAIN:PORT, CIDR:PORT or CIDR:*");
		if (sbx_strv_add(out, it->str) == -1)
			return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
	}
	return 0;
}

static int
get_mounts(struct pctx *c, const struct sbx_node *n, struct sbx_policy *p)
{
	size_t i, j;

	if (n->type != SBX_SEQ)
		return perr(c, n, "mounts: expected a list of {path, mode}");
	if ((p->mounts = calloc(n->n + 1, sizeof *p->mounts)) == NULL)
		return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
	for (i = 0; i < n->n; i++) {
		const struct sbx_node *it = n->kids[i];
		struct pmount *pm = &p->mounts[i];

		p->n_mounts = i + 1;
		pm->line = it->line;
		if (it->type != SBX_MAP)
			return perr(c, it, "mounts: expected {path: PREFIX, mode: ro|rw}");
		for (j = 0; j < it->n; j += 2) {
			const char *k = it->kids[j]->str;
			const struct sbx_node *v = it->kids[j + 1];

			if (strcmp(k, "path") == 0 && v->type == SBX_SCALAR && good_path(v->str)) {
				free(pm->path);
				if ((pm->path = strdup(v->str)) == NULL)
					return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
			} else if (strcmp(k, "mode") == 0 && v->type == SBX_SCALAR &&
			    (strcmp(v->str, "ro") == 0 || strcmp(v->str, "rw") == 0)) {
				pm->rw = strcmp(v->str, "rw") == 0;
			} else {
				return perr(c, it->kids[j], "mounts: '%s' must be path: an absolute, "
				    "normalized path, or mode: ro or rw", k);
			}
		}
		if (pm->path == NULL)
			return perr(c, it, "mounts: an entry needs a path");
	}
	return 0;
}

/* A pool's name: what a directory and a log line can hold as it is. */
static int
good_name(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 32 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_") == n &&
	    s[0] != '-';
}

static int
get_pools(struct pctx *c, const struct sbx_node *n, struct sbx_policy *p)
{
	size_t i, j;
	double v;

	if (n->type != SBX_SEQ)
		return perr(c, n, "pools: expected a list of {name, manifest, size, max_idle_s, "
		    "refill}");
	if ((p->pools = calloc(n->n + 1, sizeof *p->pools)) == NULL)
		return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
	for (i = 0; i < n->n; i++) {
		const struct sbx_node *it = n->kids[i];
		struct sbx_pool_conf *pc = &p->pools[i];

		p->n_pools = i + 1;
		pc->line = it->line;
		pc->size = 1;
		pc->max_idle_s = 3600;
		if (it->type != SBX_MAP)
			return perr(c, it, "pools: expected {name, manifest, size, max_idle_s, refill}");
		for (j = 0; j < it->n; j += 2) {
			const char *k = it->kids[j]->str;
			const struct sbx_node *val = it->kids[j + 1];
			char **slot = strcmp(k, "name") == 0 ? &pc->name : strcmp(k, "manifest") == 0 ?
			    &pc->manifest : NULL;

			if (slot != NULL) {
				if (val->type != SBX_SCALAR || (slot == &pc->name ? !good_name(val->str) :
				    !good_path(val->str)))
					return perr(c, val, "pools: %s: '%.80s' is not %s", k, val->type ==
					    SBX_SCALAR ? val->str : "", slot == &pc->name ? "a name (1 to 32 "
					    "of a-z, 0-9, - and _)" : "an absolute, normalized path");
				free(*slot);
				if ((*slot = strdup(val->str)) == NULL)
					return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
			} else if (strcmp(k, "size") == 0) {
				/* 0 keeps a pool's name while it makes no members. */
				if (val->type == SBX_SCALAR && strcmp(val->str, "0") == 0)
					v = 0;
				else if (get_num(c, val, "pools: size", 256, 1, &v) == -1)
					return -1;
				pc->size = (long long)v;
			} else if (strcmp(k, "max_idle_s") == 0) {
				if (get_num(c, val, "pools: max_idle_s", 31536000, 1, &v) == -1)
					return -1;
				pc->max_idle_s = (long long)v;
			} else if (strcmp(k, "refill") == 0 && val->type == SBX_SCALAR &&
			    (strcmp(val->str, "watchdog") == 0 || strcmp(val->str, "claim") == 0)) {
				pc->refill_on_claim = strcmp(val->str, "claim") == 0;
			} else {
				return perr(c, it->kids[j], "pools: '%.80s' must be name, manifest, size, "
				    "max_idle_s, or refill: watchdog or claim", k);
			}
		}
		if (pc->name == NULL || pc->manifest == NULL)
			return perr(c, it, "pools: an entry needs a name and a manifest");
		for (j = 0; j < i; j++)
			if (strcmp(p->pools[j].name, pc->name) == 0)
				return perr(c, it, "pools: %s is named twice (line %d)", pc->name,
				    p->pools[j].line);
	}
	return 0;
}

size_t
sbx_policy_pools(const struct sbx_policy *p, const struct sbx_pool_conf **out)
{
	*out = p->pools;
	return p->n_pools;
}

static int
get_res(struct pctx *c, const struct sbx_node *n, const char *where, int limits,
    struct sbx_policy *p)
{
	size_t i;
	int k;

	if (n->type != SBX_MAP)
		return perr(c, n, "%s: expected a mapping", where);
	for (i = 0; i < n->n; i += 2) {
		const char *key = n->kids[i]->str;
		const struct sbx_node *v = n->kids[i + 1];
		double *slot;

		for (k = 0; res_keys[k] && strcmp(res_keys[k], key) != 0; k++)
			;
		if (res_keys[k] == NULL || (!limits && k >= R_TMPFS))
			return perr(c, n->kids[i], "%s: unknown key '%.80s' (known: cpu_cores, "
			    "memory_mb, disk_mb, pids, max_wall_clock_s%s)", where, key,
			    limits ? ", tmpfs_mb, layer_mb, layer_ratio" : "");
		slot = limits ? &p->lim[k] : &p->def[k];
		(limits ? p->l_lim : p->l_def)[k] = n->kids[i]->line;
		/* null: no limit, or no default (the wall clock always has one). */
		if (is_null(v) && !(k == R_WALL && !limits))
			*slot = NAN;
		else if (get_num(c, v, key, res_max[k], k != R_CPU, slot) == -1)
			return -1;
	}
	return 0;
}

static int
get_allow(struct pctx *c, const struct sbx_node *n, struct sbx_policy *p)
{
	size_t i;
	int k;

	if (n->type != SBX_MAP)
		return perr(c, n, "allow: expected a mapping");
	for (i = 0; i < n->n; i += 2) {
		for (k = 0; allow_keys[k] && strcmp(allow_keys[k], n->kids[i]->str) != 0; k++)
			;
		if (allow_keys[k] == NULL)
			return perr(c, n->kids[i], "allow: unknown key '%.80s' (known: "
			    "seccomp_unconfined, landlock_off, new_privileges)", n->kids[i]->str);
		p->l_allow[k] = n->kids[i]->line;
		if (get_bool(c, n->kids[i + 1], allow_keys[k], &p->allow[k]) == -1)
			return -1;
	}
	return 0;
}

static int
parse_key(struct pctx *c, const struct sbx_node *k, const struct sbx_node *v,
    struct sbx_policy *p)
{
	const char *key = k->str;
	int i;

	if (strcmp(key, "max_trust") == 0) {
		for (i = 0; trusts[i] && (v->type != SBX_SCALAR || strcmp(trusts[i], v->str)); i++)
			;
		if (trusts[i] == NULL)
			return perr(c, v, "max_trust: expected trusted, semi-trusted, untrusted or "
			    "sensitive");
		p->max_trust = i;
		p->l_trust = k->line;
		return 0;
	}
	if (strcmp(key, "mounts") == 0) {
		p->l_mounts = k->line;
		return get_mounts(c, v, p);
	}
#define LIST(name, field, what) \
	if (strcmp(key, name) == 0) { \
		p->l_##field = k->line; \
		return get_strv(c, v, name, what, &p->field); \
	}
	LIST("rootfs", rootfs, V_PATH)
	LIST("capabilities", caps, V_CAP)
	LIST("seccomp_files", seccomp_files, V_PATH)
	LIST("network_policies", nets, V_NET)
	LIST("allowed_egress", egress, V_EGRESS)
#undef LIST
	if (strcmp(key, "allow") == 0)
		return get_allow(c, v, p);
	if (strcmp(key, "pools") == 0)
		return get_pools(c, v, p);
	if (strcmp(key, "limits") == 0)
		return get_res(c, v, "limits", 1, p);
	if (strcmp(key, "defaults") == 0)
		return get_res(c, v, "defaults", 0, p);
	return perr(c, k, "unknown key '%.80s' (known: max_trust, mounts, rootfs, capabilities, "
	    "seccomp_files, allow, network_policies, allowed_egress, limits, defaults, pools)", key);
}

int
sbx_policy_parse(const char *name, const char *buf, size_t len, struct sbx_policy **out,
    struct sbx_err *e)
{
	struct pctx c = { name, e };
	struct sbx_node *root;
	struct sbx_policy *p;
	size_t i;
	int r = 0, k;

	*out = NULL;
	if (sbx_doc_parse(name, buf, len, &root, e) == -1)
		return -1;
	if ((p = builtin()) == NULL || (p->source = strdup(name)) == NULL) {
		sbx_policy_free(p);
		sbx_node_free(root);
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
	if (root->type != SBX_MAP)
		r = perr(&c, root, "a policy is a mapping (sbx-policy(5))");
	for (i = 0; r == 0 && i < root->n; i += 2)
		r = parse_key(&c, root->kids[i], root->kids[i + 1], p);
	/* A default past its own limit would refuse every manifest that leaves it
	 * out: a built-in one comes down to the limit, the file's own is an error. */
	for (k = 0; r == 0 && k < R_N; k++)
		if (!isnan(p->lim[k]) && !isnan(p->def[k]) && p->def[k] > p->lim[k] &&
		    p->l_def[k] == 0)
			p->def[k] = p->lim[k];
		else if (!isnan(p->lim[k]) && !isnan(p->def[k]) && p->def[k] > p->lim[k])
			r = sbx_err_set(e, SBX_EX_DATAERR, "%s:%d:1: defaults: %s %.10g is above "
			    "limits: %s %.10g", name, p->l_def[k] ? p->l_def[k] : p->l_lim[k],
			    res_keys[k], p->def[k], res_keys[k], p->lim[k]);
	sbx_node_free(root);
	if (r == -1) {
		sbx_policy_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

/* The policy file must be the operator's: root's or the caller's, and no one else's to write. */
static int
load_file(const char *path, int named, struct sbx_policy **out, struct sbx_err *e)
{
	struct stat st;
	char *buf;
	size_t len;
	int fd, r;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		if (errno == ENOENT && !named)
			return 0;
		return sbx_err_sys(e, 0, "policy %s", path);
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return sbx_err_set(e, SBX_EX_DATAERR, "policy %s: not a regular file", path);
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		close(fd);
		return sbx_err_set(e, SBX_EX_NOPERM, "policy %s: %s; it must be root's or yours and "
		    "writable by its owner alone (chmod go-w)", path, st.st_mode & 022 ?
		    "others may write it" : "owned by another user");
	}
	r = sbx_read_fd(fd, SBX_DOC_MAX, &buf, &len, path, e);
	close(fd);
	if (r == -1)
		return -1;
	r = sbx_policy_parse(path, buf, len, out, e);
	free(buf);
	return r;
}

const struct sbx_policy *
sbx_policy_get(const struct sbx_store *s, struct sbx_err *e)
{
	static struct sbx_policy *cached;
	static char cached_for[1100];
	const char *env = getenv("SBX_POLICY");
	char path[1100];
	int named = policy_path != NULL || (env != NULL && *env);

	if (named)
		snprintf(path, sizeof path, "%s", policy_path ? policy_path : env);
	else if (sbx_path(path, sizeof path, e, "%s/policy.yaml", s->root) == -1)
		return NULL;
	if (cached != NULL && strcmp(cached_for, path) == 0)
		return cached;
	sbx_policy_free(cached);
	cached = NULL;
	if (load_file(path, named, &cached, e) == -1)
		return NULL;
	if (cached == NULL && (cached = builtin()) == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		return NULL;
	}
	snprintf(cached_for, sizeof cached_for, "%s", path);
	return cached;
}

void
sbx_policy_layer_limits(const struct sbx_policy *p, long long *max_mb, long long *ratio)
{
	*max_mb = isnan(p->lim[R_LAYER]) ? 0 : (long long)p->lim[R_LAYER];
	*ratio = isnan(p->lim[R_RATIO]) ? -1 : (long long)p->lim[R_RATIO];
}

/* Defaults */

/* path is prefix or below it. */
static int
below(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strcmp(prefix, "/") == 0)
		return 1;
	return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* May a rw mount of path be mapped to its owner without asking? Where the
 * operator granted the path, or for a rootless caller (whose one ID writes as
 * itself anyway). */
static int
may_map(const struct sbx_policy *p, const struct sbx_store *s, const char *path)
{
	size_t j;

	if (s->rootless)
		return 1;
	for (j = 0; p->l_mounts && j < p->n_mounts; j++)
		if (p->mounts[j].rw && below(path, p->mounts[j].path))
			return 1;
	return 0;
}

void
sbx_policy_defaults(const struct sbx_policy *p, const struct sbx_store *s,
    struct sbx_manifest *m, char *filled, size_t size)
{
	struct sbx_resources *r = &m->res;
	size_t i;

	/* A rw workspace is written as its owner where the policy allows that,
	 * and as the sandbox's own host IDs elsewhere (as an explicit idmap:
	 * false): the default never asks for more than the policy gives. */
	for (i = 0; i < m->n_mounts; i++)
		if (m->mounts[i].idmap == -1 && m->mounts[i].mode != NULL)
			m->mounts[i].idmap = strcmp(m->mounts[i].mode, "rw") == 0 &&
			    may_map(p, s, m->mounts[i].host);

	if (size > 0)
		filled[0] = '\0';
#define NOTE(k) \
	snprintf(filled + strlen(filled), size - strlen(filled), "%s%s %.10g", \
	    filled[0] ? ", " : "", res_keys[k], p->def[k])
	if (isnan(r->cpu_cores) && !isnan(p->def[R_CPU])) {
		r->cpu_cores = p->def[R_CPU];
		NOTE(R_CPU);
	}
#define DEF(field, k) \
	if (r->field == SBX_UNSET_INT && !isnan(p->def[k])) { \
		r->field = (long long)p->def[k]; \
		if (k != R_WALL) \
			NOTE(k); \
	}
	DEF(memory_mb, R_MEMORY)
	DEF(pids, R_PIDS)
	DEF(max_wall_clock_s, R_WALL)
	/* Only a writable root writes to the host's disk; a read-only one has no
	 * layer to fill (its /tmp is a bounded tmpfs). */
	if (m->read_only_root == 0)
		DEF(disk_mb, R_DISK)
#undef DEF
#undef NOTE
}

/* Checks */

static int refuse(const struct sbx_policy *p, const struct sbx_store *s, int line,
    const char *rule, struct sbx_err *e, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* "WHAT: not allowed by FILE:LINE (RULE)", or by the built-in policy. */
static int
refuse(const struct sbx_policy *p, const struct sbx_store *s, int line, const char *rule,
    struct sbx_err *e, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (p->source != NULL && line > 0)
		return sbx_err_set(e, SBX_EX_NOPERM, "%s: not allowed by the policy (%s:%d: %s)",
		    what, p->source, line, rule);
	if (p->source != NULL)
		return sbx_err_set(e, SBX_EX_NOPERM, "%s: not allowed by the policy (%s, which "
		    "keeps the built-in rule: %s)", what, p->source, rule);
	return sbx_err_set(e, SBX_EX_NOPERM, "%s: not allowed by the built-in policy (%s); an "
	    "operator grants it in %s/policy.yaml (sbx-policy(5))", what, rule, s->root);
}

static int
rank(const char *trust)
{
	int i;

	for (i = 0; trusts[i] && strcmp(trusts[i], trust) != 0; i++)
		;
	return trusts[i] ? i : 1;
}

static int
in_strv(const struct sbx_strv *sv, const char *s)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}

static void
join(const struct sbx_strv *sv, char *buf, size_t size)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < sv->n; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "", sv->v[i]);
	if (sv->n == 0)
		snprintf(buf, size, "none");
}


static int
under_any(const char *path, const struct sbx_strv *prefixes)
{
	size_t i;

	for (i = 0; i < prefixes->n; i++)
		if (below(path, prefixes->v[i]))
			return 1;
	return 0;
}

/* Refuse if the object at path is never mountable (see the header). */
static int
never_path(const struct sbx_store *s, const char *path, const char *what, struct sbx_err *e)
{
	int fd = open(path, O_PATH | O_CLOEXEC), r;

	if (fd == -1)
		return 0;   /* missing: the driver's check names it */
	r = sbx_policy_never_fd(s, fd, path, what, e);
	close(fd);
	return r;
}

/*
 * With no mounts list. A mount mapped to its owner (idmap) lets the sandbox
 * write as that owner, host root for a root caller: only a policy grants
 * that. A rootless sandbox's root is its caller, so any rw mount writes as
 * the caller: never the caller's home itself nor what lies below one of its
 * dot-directories (keys, shell start-up files, configuration). The host's
 * shared /tmp and /var/tmp (others' sockets and files) are never given.
 */
static int
builtin_mount_ok(const struct sbx_store *s, const struct sbx_mount *mt, char *why, size_t size)
{
	const char *home = getenv("HOME");
	size_t n;

	if (strcmp(mt->host, "/tmp") == 0 || strcmp(mt->host, "/var/tmp") == 0) {
		snprintf(why, size, "the host's shared %s (other users' files and sockets)", mt->host);
		return 0;
	}
	if (mt->idmap == 1 && !s->rootless) {
		snprintf(why, size, "a mount mapped to its owner (idmap), whose files the sandbox "
		    "would write as their host owner: the operator grants it with mounts: [{path: "
		    "%.200s, mode: rw}], or the manifest says idmap: false", mt->host);
		return 0;
	}
	if (s->rootless && strcmp(mt->mode, "rw") == 0 && home != NULL && home[0] == '/' &&
	    (n = strlen(home)) > 1 && strncmp(mt->host, home, n) == 0 &&
	    (mt->host[n] == '\0' || (mt->host[n] == '/' && mt->host[n + 1] == '.'))) {
		snprintf(why, size, "your home directory, or what lies below one of its "
		    "dot-directories, writable by the sandbox as you");
		return 0;
	}
	return 1;
}

static int
check_mounts(const struct sbx_policy *p, const struct sbx_store *s,
    const struct sbx_manifest *m, struct sbx_err *e)
{
	char what[1200], why[256];
	size_t i, j;

	for (i = 0; i < m->n_mounts; i++) {
		const struct sbx_mount *mt = &m->mounts[i];
		int rw = strcmp(mt->mode, "rw") == 0;

		snprintf(what, sizeof what, "filesystem_mounts[%zu]: host %s", i, mt->host);
		if (never_path(s, mt->host, what, e) == -1)
			return -1;
		if (p->l_mounts) {
			for (j = 0; j < p->n_mounts; j++)
				if (below(mt->host, p->mounts[j].path) && (p->mounts[j].rw || !rw))
					break;
			if (j == p->n_mounts)
				return refuse(p, s, p->l_mounts, "mounts: the prefixes listed there", e,
				    "%s (mode %s)", what, mt->mode);
		} else if (!builtin_mount_ok(s, mt, why, sizeof why)) {
			return refuse(p, s, 0, why, e, "%s", what);
		}
	}
	return 0;
}

static int
check_security(const struct sbx_policy *p, const struct sbx_store *s,
    const struct sbx_manifest *m, struct sbx_err *e)
{
	const struct sbx_security *sec = &m->security;
	char list[1024];
	size_t i;

	for (i = 0; i < sec->capabilities.n; i++) {
		cap_value_t want, have;
		size_t j;

		cap_from_name(sec->capabilities.v[i], &want);
		for (j = 0; j < p->caps.n; j++)
			if (cap_from_name(p->caps.v[j], &have) == 0 && have == want)
				break;
		if (j == p->caps.n) {
			join(&p->caps, list, sizeof list);
			snprintf(list + strlen(list), sizeof list - strlen(list), " may be added");
			return refuse(p, s, p->l_caps, list, e, "security.capabilities: %s",
			    sec->capabilities.v[i]);
		}
	}
	if (strcmp(sec->seccomp, "unconfined") == 0 && !p->allow[ALLOW_SECCOMP_OFF])
		return refuse(p, s, p->l_allow[ALLOW_SECCOMP_OFF], "allow: {seccomp_unconfined: "
		    "true} is needed", e, "security.seccomp: unconfined");
	if (sec->seccomp[0] == '/' && !under_any(sec->seccomp, &p->seccomp_files)) {
		join(&p->seccomp_files, list, sizeof list);
		return refuse(p, s, p->l_seccomp_files, p->l_seccomp_files ? "seccomp_files: only "
		    "files below those listed" : "seccomp_files: none, so no custom profile", e,
		    "security.seccomp: %s", sec->seccomp);
	}
	/* A microVM's guest has a kernel of its own, not the host's to guard
	 * with Landlock: off there is the tier, not a weakening. */
	if (sec->landlock == 0 && !p->allow[ALLOW_LANDLOCK_OFF] &&
	    strcmp(m->isolation_level ? m->isolation_level : "namespace", "microvm") != 0)
		return refuse(p, s, p->l_allow[ALLOW_LANDLOCK_OFF], "allow: {landlock_off: true} is "
		    "needed", e, "security.landlock: false");
	if (sec->no_new_privileges == 0 && !p->allow[ALLOW_NEW_PRIVS])
		return refuse(p, s, p->l_allow[ALLOW_NEW_PRIVS], "allow: {new_privileges: true} is "
		    "needed", e, "security.no_new_privileges: false");
	return 0;
}

int
sbx_policy_check_limits(const struct sbx_policy *p, const struct sbx_store *s,
    const struct sbx_manifest *m, struct sbx_err *e)
{
	const struct sbx_resources *r = &m->res;
	double have[R_N] = { r->cpu_cores, NAN, NAN, NAN, NAN, NAN };
	char rule[128];
	size_t i;
	int k;

	have[R_MEMORY] = r->memory_mb != SBX_UNSET_INT ? (double)r->memory_mb : NAN;
	have[R_DISK] = r->disk_mb != SBX_UNSET_INT ? (double)r->disk_mb : NAN;
	have[R_PIDS] = r->pids != SBX_UNSET_INT ? (double)r->pids : NAN;
	have[R_WALL] = r->max_wall_clock_s != SBX_UNSET_INT ? (double)r->max_wall_clock_s : NAN;
	for (k = 0; k < R_N; k++) {
		/* A read-only root has no layer for disk_mb to bound. */
		if (isnan(p->lim[k]) || k >= R_TMPFS || (k == R_DISK && m->read_only_root))
			continue;
		snprintf(rule, sizeof rule, "limits: %s %.10g", res_keys[k], p->lim[k]);
		/* A key with a limit must be set (no default filled it): unlimited is more. */
		if (isnan(have[k]))
			return refuse(p, s, p->l_lim[k], rule, e, "resource_allocation.%s: unlimited",
			    res_keys[k]);
		if (have[k] > p->lim[k])
			return refuse(p, s, p->l_lim[k], rule, e, "resource_allocation.%s: %.10g",
			    res_keys[k], have[k]);
	}
	for (i = 0; !isnan(p->lim[R_TMPFS]) && i < m->n_tmpfs; i++)
		if ((double)m->tmpfs[i].size_mb > p->lim[R_TMPFS]) {
			snprintf(rule, sizeof rule, "limits: tmpfs_mb %.10g", p->lim[R_TMPFS]);
			return refuse(p, s, p->l_lim[R_TMPFS], rule, e, "tmpfs[%zu]: size_mb %lld", i,
			    m->tmpfs[i].size_mb);
		}
	return 0;
}

/*
 * An allow-list entry, as family + address + prefix (0 for a name, then in
 * name) and port (0: any). IPv6 in brackets.
 */
static int
egress_split(const char *s, int *family, unsigned char *addr, int *prefix, char *name,
    size_t name_size, unsigned *port)
{
	const char *colon = strrchr(s, ':');
	char host[300], *slash, *end;
	long v;

	if (colon == NULL || colon == s || (size_t)(colon - s) >= sizeof host)
		return -1;
	if (strcmp(colon + 1, "*") == 0) {
		*port = 0;
	} else {
		v = strtol(colon + 1, &end, 10);
		if (*end || end == colon + 1 || v < 1 || v > 65535)
			return -1;
		*port = (unsigned)v;
	}
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	*prefix = -1;
	if ((slash = strchr(host, '/')) != NULL) {
		v = strtol(slash + 1, &end, 10);
		if (*end || end == slash + 1 || v < 0 || v > 128)
			return -1;
		*prefix = (int)v;
		*slash = '\0';
	}
	if (host[0] == '[') {
		size_t n = strlen(host);

		if (n < 3 || host[n - 1] != ']')
			return -1;
		host[n - 1] = '\0';
		memmove(host, host + 1, n - 1);
		*family = AF_INET6;
	} else {
		*family = strchr(host, ':') ? AF_INET6 : AF_INET;
	}
	if (inet_pton(*family, host, addr) == 1) {
		if (*prefix == -1)
			*prefix = *family == AF_INET ? 32 : 128;
		if (*prefix > (*family == AF_INET ? 32 : 128))
			return -1;
		name[0] = '\0';
		return 0;
	}
	/* A host name (or *.domain in a policy): no range. */
	if (*prefix != -1 || *family == AF_INET6 || strlen(host) >= name_size || host[0] == '\0')
		return -1;
	for (end = host; *end; end++)
		if (!isalnum((unsigned char)*end) && !strchr(".-_*", *end))
			return -1;
	snprintf(name, name_size, "%s", host);
	*prefix = 0;
	return 0;
}

static int
prefix_in(const unsigned char *a, int alen, const unsigned char *net, int nlen)
{
	int full = nlen / 8, rest = nlen % 8;

	if (alen < nlen)
		return 0;
	if (memcmp(a, net, (size_t)full) != 0)
		return 0;
	return rest == 0 || ((a[full] ^ net[full]) & (0xff << (8 - rest))) == 0;
}

/* Is manifest entry want inside policy entry have? */
static int
egress_covered(const char *want, const char *have)
{
	unsigned char wa[16], ha[16];
	char wn[256], hn[256];
	unsigned wp, hp;
	int wf, hf, wl, hl;

	if (egress_split(want, &wf, wa, &wl, wn, sizeof wn, &wp) == -1 ||
	    egress_split(have, &hf, ha, &hl, hn, sizeof hn, &hp) == -1)
		return 0;
	if (hp != 0 && wp != hp)
		return 0;
	if (wn[0] || hn[0]) {
		size_t a, b;

		if (!wn[0] || !hn[0])
			return 0;
		if (strcasecmp(wn, hn) == 0)
			return 1;
		/* *.example.com: any name below example.com */
		if (strncmp(hn, "*.", 2) != 0)
			return 0;
		a = strlen(wn);
		b = strlen(hn + 1);
		return a > b && strcasecmp(wn + a - b, hn + 1) == 0;
	}
	return wf == hf && prefix_in(wa, wl, ha, hl);
}

static int
check_network(const struct sbx_policy *p, const struct sbx_store *s,
    const struct sbx_manifest *m, struct sbx_err *e)
{
	char list[1024];
	size_t i, j;

	if (!in_strv(&p->nets, m->network_policy)) {
		join(&p->nets, list, sizeof list);
		snprintf(list + strlen(list), sizeof list - strlen(list), " only");
		return refuse(p, s, p->l_nets, list, e, "network_policy: %s", m->network_policy);
	}
	for (i = 0; p->l_egress && i < m->allowed_egress.n; i++) {
		for (j = 0; j < p->egress.n; j++)
			if (egress_covered(m->allowed_egress.v[i], p->egress.v[j]))
				break;
		if (j == p->egress.n)
			return refuse(p, s, p->l_egress, "allowed_egress: only within the entries "
			    "listed there", e, "allowed_egress: %s", m->allowed_egress.v[i]);
	}
	return 0;
}

int
sbx_policy_check(const struct sbx_policy *p, const struct sbx_store *s,
    const struct sbx_manifest *m, const char *base, struct sbx_err *e)
{
	char rule[128];

	if (rank(m->trust) > p->max_trust) {
		snprintf(rule, sizeof rule, "max_trust: %s", trusts[p->max_trust]);
		return refuse(p, s, p->l_trust, rule, e, "trust: %s", m->trust);
	}
	if (strcmp(base, "host") != 0) {
		const char *what = sbx_manifest_rootfs_is_snapshot(m->rootfs) ?
		    "the snapshot's base_rootfs" : "rootfs";

		if (never_path(s, base, what, e) == -1)
			return sbx_err_prefix(e, "%s %s", what, base);
		if (!under_any(base, &p->rootfs))
			return refuse(p, s, p->l_rootfs, p->l_rootfs ? "rootfs: only directories "
			    "below those listed" : "rootfs: none, so no directory root", e, "%s %s",
			    what, base);
	}
	if (check_network(p, s, m, e) == -1 || check_mounts(p, s, m, e) == -1 ||
	    check_security(p, s, m, e) == -1 || sbx_policy_check_limits(p, s, m, e) == -1)
		return -1;
	return 0;
}

/* Never mountable */

struct ident {
	dev_t dev;
	ino_t ino;
};

static int
ident_of(const char *path, struct ident *id)
{
	struct stat st;

	if (stat(path, &st) == -1)
		return -1;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

/* The directory to walk up from: fd itself, or for anything else the parent
 * its path names (opened without following a link). */
static int
walk_start(int fd, const struct stat *st, const char *path)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS };
	char dir[1100], *slash;

	if (S_ISDIR(st->st_mode))
		return dup(fd);
	snprintf(dir, sizeof dir, "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL)
		return -1;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
}

int
sbx_policy_never_fd(const struct sbx_store *s, int fd, const char *path, const char *what,
    struct sbx_err *e)
{
	/* Trees nothing may come from; [0] is filled with the state root. */
	const char *trees[] = { NULL, "/proc", "/sys", "/dev", "/run", "/boot" };
	struct ident tree[SBX_ARRAY_LEN(trees)], up[64], top;
	char real[PATH_MAX];
	int own_fs[SBX_ARRAY_LEN(trees)];
	struct statfs sf;
	struct stat st, o;
	char p[1100];
	size_t i, nup = 0;
	int cur, next, depth;

	if (fstat(fd, &st) == -1 || fstatfs(fd, &sf) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", what);
	for (i = 0; i < SBX_ARRAY_LEN(kernel_fs); i++)
		if ((long)sf.f_type == kernel_fs[i])
			return sbx_err_set(e, SBX_EX_NOPERM, "%s: a kernel filesystem (proc, sysfs, "
			    "cgroup...) is never mountable into a sandbox", what);
	/* The state root and every directory that holds it, up to /, by its
	 * real path (a symbolic link in SBX_ROOT hides none of them). */
	if (realpath(s->root, real) == NULL || strlen(real) >= sizeof p)
		snprintf(p, sizeof p, "%s", s->root);
	else
		snprintf(p, sizeof p, "%s", real);
	while (nup < SBX_ARRAY_LEN(up) && ident_of(p, &up[nup]) == 0) {
		nup++;
		if (strcmp(p, "/") == 0)
			break;
		*strrchr(p, '/') = '\0';
		if (p[0] == '\0')
			snprintf(p, sizeof p, "/");
	}
	for (i = 0; i < nup; i++)
		if (up[i].dev == st.st_dev && up[i].ino == st.st_ino)
			return sbx_err_set(e, SBX_EX_NOPERM, "%s: %s, which is never mountable into "
			    "a sandbox", what, i == 0 ? "the state root" : i + 1 == nup ?
			    "the host's /" : "a directory holding the state root");
	if (ident_of("/", &top) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "/");
	trees[0] = s->root;
	for (i = 0; i < SBX_ARRAY_LEN(trees); i++) {
		struct stat t, parent;

		own_fs[i] = 0;
		tree[i].dev = 0;
		tree[i].ino = 0;
		if (stat(trees[i], &t) == -1)
			continue;
		tree[i].dev = t.st_dev;
		tree[i].ino = t.st_ino;
		/* A filesystem of its own (a tmpfs /run, devtmpfs /dev): all of it,
		 * wherever else it is bound. */
		snprintf(p, sizeof p, "%s/..", trees[i]);
		own_fs[i] = stat(p, &parent) == 0 && parent.st_dev != t.st_dev;
		if (own_fs[i] && st.st_dev == t.st_dev)
			return sbx_err_set(e, SBX_EX_NOPERM, "%s: on the filesystem of %s, which is "
			    "never mountable into a sandbox", what, i == 0 ? "the state root" :
			    trees[i]);
	}
	/* Inside one of them: walk up from the object to /, all the way: a walk
	 * that cannot reach / proves nothing, and is a refusal. */
	cur = walk_start(fd, &st, path);
	for (depth = 0; cur != -1 && depth < 4096; depth++) {
		if (fstat(cur, &o) == -1)
			break;
		if (o.st_dev == top.dev && o.st_ino == top.ino) {
			close(cur);
			return 0;
		}
		for (i = 0; i < SBX_ARRAY_LEN(trees); i++)
			if (tree[i].ino != 0 && o.st_dev == tree[i].dev && o.st_ino == tree[i].ino) {
				close(cur);
				return sbx_err_set(e, SBX_EX_NOPERM, "%s: inside %s, which is never "
				    "mountable into a sandbox", what, i == 0 ? "the state root" :
				    trees[i]);
			}
		next = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	if (cur != -1)
		close(cur);
	return sbx_err_set(e, SBX_EX_NOPERM, "%s: its place below / could not be followed "
	    "(too deep, or not reachable), so it is not mounted", what);
}
