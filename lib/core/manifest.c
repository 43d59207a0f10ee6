/* SPDX-License-Identifier: MIT */
/* The manifest and state document: one table of keys drives parsing, checking and output. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <unistd.h>

#include "id.h"
#include "manifest.h"
#include "sha256.h"
#include "url.h"
#include "util.h"

enum ftype { F_STR, F_INT, F_NUM, F_BOOL, F_MAP, F_STRV, F_MOUNTS, F_TMPFS, F_ENV, F_LABELS, F_USER,
	F_PORTS, F_STATUS, F_TIER, F_TIER_OLD };

typedef int (*check_fn)(const char *s, char *why, size_t size);

struct field {
	const char *key;
	enum ftype type;
	size_t off;
	double min, max;
	const char *const *choices;   /* F_STR: allowed values */
	check_fn check;               /* F_STR, F_STRV items: extra check */
	const struct field *sub;      /* F_MAP */
	size_t present_off;           /* F_MAP: int set to 1 when the key is there (0: none) */
	int nullable;                 /* null means unset, and unset is written as null */
};

#define END { NULL, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0 }

static const char *const levels[] = { "namespace", "oci", "microvm", "auto", NULL };
static const char *const trusts[] = { "trusted", "semi-trusted", "untrusted", "sensitive", NULL };
static const char *const policies[] = { "deny-all", "egress-allow-list", "host", NULL };
static const char *const modes[] = { "ro", "rw", NULL };
static const char *const reasons[] = { "wall-clock", "timeout", "memory", "pids", "disk",
	"manual", "pool-idle", NULL };

/* Paths: absolute, no "." or ".." parts, no empty parts, no trailing slash. */
static int
check_abs_path(const char *s, char *why, size_t size)
{
	const char *p;

	if (s[0] != '/') {
		snprintf(why, size, "'%.200s' is not an absolute path", s);
		return -1;
	}
	if (strlen(s) >= 1024) {
		snprintf(why, size, "path is longer than 1023 bytes");
		return -1;
	}
	for (p = s; *p; p++) {
		if (*p != '/')
			continue;
		if (p[1] == '/' || (p[1] == '\0' && p != s) ||
		    (p[1] == '.' && (p[2] == '/' || p[2] == '\0')) ||
		    (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))) {
			snprintf(why, size, "path '%.200s' must be normalized (no '.', '..', '//' "
			    "or trailing '/')", s);
			return -1;
		}
	}
	return 0;
}

int
sbx_manifest_path_normal(const char *s)
{
	char why[256];

	return check_abs_path(s, why, sizeof why) == 0;
}

static int
check_guest_path(const char *s, char *why, size_t size)
{
	static const char *const reserved[] = { "/proc", "/dev", "/sys", NULL };
	int i;
	size_t n;

	if (check_abs_path(s, why, size) == -1)
		return -1;
	if (strcmp(s, "/") == 0) {
		snprintf(why, size, "cannot mount over the sandbox's root");
		return -1;
	}
	for (i = 0; reserved[i]; i++) {
		n = strlen(reserved[i]);
		if (strncmp(s, reserved[i], n) == 0 && (s[n] == '\0' || s[n] == '/')) {
			snprintf(why, size, "'%.200s' is inside %s, which sbx manages", s, reserved[i]);
			return -1;
		}
	}
	return 0;
}

static int
check_id(const char *s, char *why, size_t size)
{
	if (sbx_id_valid(s))
		return 0;
	snprintf(why, size, "invalid ID '%.80s': want 1-64 of A-Z a-z 0-9 . _ -, starting "
	    "with a letter or digit", s);
	return -1;
}

int
sbx_manifest_rootfs_is_snapshot(const char *rootfs)
{
	return rootfs != NULL && strcmp(rootfs, "host") != 0 && rootfs[0] != '/';
}

static int
check_rootfs(const char *s, char *why, size_t size)
{
	if (strcmp(s, "host") == 0 || sbx_id_valid(s))
		return 0;
	return check_abs_path(s, why, size);
}

static int
check_backend(const char *s, char *why, size_t size)
{
	struct sbx_err e;

	if (strncmp(s, "file:///", 8) == 0)
		return check_abs_path(s + 7, why, size);
	if (strncmp(s, "s3://", 5) == 0) {
		if (sbx_url_s3_check(s, &e) == 0)
			return 0;
		snprintf(why, size, "%s", e.msg);
		return -1;
	}
	snprintf(why, size, "storage_backend must be file:///PATH or s3://BUCKET/PREFIX, not "
	    "'%.100s'", s);
	return -1;
}

static int
check_seccomp(const char *s, char *why, size_t size)
{
	if (strcmp(s, "default") == 0 || strcmp(s, "strict") == 0 || strcmp(s, "unconfined") == 0)
		return 0;
	if (s[0] == '/')
		return check_abs_path(s, why, size);
	snprintf(why, size, "seccomp must be default, strict, unconfined or an absolute path, "
	    "not '%.100s'", s);
	return -1;
}

/* runtime: an OCI runtime by name, or the absolute path of one. */
static int
check_runtime(const char *s, char *why, size_t size)
{
	if (strcmp(s, "crun") == 0 || strcmp(s, "runc") == 0 || strcmp(s, "runsc") == 0 ||
	    strcmp(s, "kata-runtime") == 0)
		return 0;
	if (s[0] == '/')
		return check_abs_path(s, why, size);
	snprintf(why, size, "runtime must be runc, crun, runsc, kata-runtime or an absolute "
	    "path, not '%.100s'", s);
	return -1;
}

static int
check_cap(const char *s, char *why, size_t size)
{
	cap_value_t c;

	if (cap_from_name(s, &c) == 0)
		return 0;
	snprintf(why, size, "unknown capability '%.80s'", s);
	return -1;
}

/* HOST:PORT, IP:PORT, [IPv6]:PORT, CIDR:PORT or CIDR:* */
static int
check_egress(const char *s, char *why, size_t size)
{
	const char *colon = strrchr(s, ':');
	size_t i;
	char *end;
	long port;

	if (colon == NULL || colon == s || colon[1] == '\0')
		goto bad;
	if (strcmp(colon + 1, "*") != 0) {
		errno = 0;
		port = strtol(colon + 1, &end, 10);
		if (*end != '\0' || port < 1 || port > 65535 || errno)
			goto bad;
	}
	for (i = 0; s + i < colon; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr(".-:/[]_", s[i]))
			goto bad;
	return 0;
bad:
	snprintf(why, size, "'%.100s' is not HOST:PORT, IP:PORT, CIDR:PORT or CIDR:*", s);
	return -1;
}

static int
check_port(const char *s, char *why, size_t size)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s && *end == '\0' && !errno && v >= 1 && v <= 65535 && isdigit((unsigned char)*s))
		return 0;
	snprintf(why, size, "'%.40s' is not a port from 1 to 65535", s);
	return -1;
}

static int
check_user(const char *s, char *why, size_t size)
{
	unsigned u, g;

	if (sbx_manifest_user_parse(s, &u, &g) == 0)
		return 0;
	snprintf(why, size, "user must be UID or UID:GID with numbers from 0 to 65535, not '%.40s'",
	    s);
	return -1;
}

static int
check_env_key(const char *s, char *why, size_t size)
{
	const char *p;

	for (p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			break;
	if (*s && !isdigit((unsigned char)*s) && *p == '\0')
		return 0;
	snprintf(why, size, "'%.80s' is not a valid environment variable name", s);
	return -1;
}

int
sbx_manifest_user_parse(const char *s, unsigned *uid, unsigned *gid)
{
	char *end;
	unsigned long u, g;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	u = strtoul(s, &end, 10);
	g = u;
	if (*end == ':') {
		if (!isdigit((unsigned char)end[1]))
			return -1;
		g = strtoul(end + 1, &end, 10);
	}
	if (*end != '\0' || errno || u > 65535 || g > 65535)
		return -1;
	*uid = (unsigned)u;
	*gid = (unsigned)g;
	return 0;
}

#define M(f) offsetof(struct sbx_manifest, f)
#define R(f) offsetof(struct sbx_manifest, res.f)
#define S(f) offsetof(struct sbx_manifest, snapshot.f)
#define C(f) offsetof(struct sbx_manifest, security.f)
#define T(f) offsetof(struct sbx_manifest, trace.f)
#define RT(f) offsetof(struct sbx_manifest, rt.f)

static const struct field res_fields[] = {
	{ "cpu_cores", F_NUM, R(cpu_cores), 0.01, 1024, NULL, NULL, NULL, 0, 0 },
	{ "memory_mb", F_INT, R(memory_mb), 8, 1 << 24, NULL, NULL, NULL, 0, 0 },
	{ "memory_soft_pct", F_INT, R(memory_soft_pct), 1, 100, NULL, NULL, NULL, 0, 0 },
	{ "disk_mb", F_INT, R(disk_mb), 1, 1 << 24, NULL, NULL, NULL, 0, 0 },
	{ "io_mbps", F_INT, R(io_mbps), 1, 1 << 20, NULL, NULL, NULL, 0, 0 },
	{ "io_iops", F_INT, R(io_iops), 1, 1 << 24, NULL, NULL, NULL, 0, 0 },
	{ "pids", F_INT, R(pids), 1, 4194304, NULL, NULL, NULL, 0, 0 },
	{ "max_wall_clock_s", F_INT, R(max_wall_clock_s), 1, 31536000, NULL, NULL, NULL, 0, 0 },
	END
};

static const struct field snap_fields[] = {
	{ "enabled", F_BOOL, S(enabled), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "interval_s", F_INT, S(interval_s), 1, 31536000, NULL, NULL, NULL, 0, 0 },
	{ "keep", F_INT, S(keep), 1, 1000000, NULL, NULL, NULL, 0, 0 },
	{ "before_destroy", F_BOOL, S(before_destroy), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "storage_backend", F_STR, S(storage_backend), 0, 0, NULL, check_backend, NULL, 0, 0 },
	{ "last_snapshot_id", F_STR, S(last_snapshot_id), 0, 0, NULL, check_id, NULL, 0, 0 },
	END
};

static const struct field fork_fields[] = {
	{ "max_fork_factor", F_INT, M(max_fork_factor), 1, 10000, NULL, NULL, NULL, 0, 0 },
	END
};

static const struct field sec_fields[] = {
	{ "seccomp", F_STR, C(seccomp), 0, 0, NULL, check_seccomp, NULL, 0, 0 },
	{ "capabilities", F_STRV, C(capabilities), 0, 0, NULL, check_cap, NULL, 0, 0 },
	{ "no_new_privileges", F_BOOL, C(no_new_privileges), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "landlock", F_BOOL, C(landlock), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "landlock_network", F_BOOL, C(landlock_network), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "bind_ports", F_PORTS, C(bind_ports), 0, 0, NULL, check_port, NULL, 0, 0 },
	END
};

static const struct field trace_fields[] = {
	{ "start_time", F_STR, T(start_time), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "elapsed_s", F_NUM, T(elapsed_s), 0, 1e12, NULL, NULL, NULL, 0, 0 },
	{ "cpu_seconds_used", F_NUM, T(cpu_seconds_used), 0, 1e12, NULL, NULL, NULL, 0, 0 },
	{ "peak_memory_mb", F_NUM, T(peak_memory_mb), 0, 1e12, NULL, NULL, NULL, 0, 0 },
	{ "disk_written_mb", F_NUM, T(disk_written_mb), 0, 1e12, NULL, NULL, NULL, 0, 0 },
	{ "exit_code", F_INT, T(exit_code), 0, 255, NULL, NULL, NULL, 0, 1 },
	{ "signal", F_INT, T(signal), 1, 64, NULL, NULL, NULL, 0, 1 },
	{ "oom_killed", F_BOOL, T(oom_killed), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "pids_limit_hits", F_INT, T(pids_limit_hits), 0, 9e18, NULL, NULL, NULL, 0, 0 },
	{ "disk_used_mb", F_NUM, T(disk_used_mb), 0, 1e12, NULL, NULL, NULL, 0, 0 },
	{ "timed_out", F_BOOL, T(timed_out), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "kill_reason", F_STR, T(kill_reason), 0, 0, reasons, NULL, NULL, 0, 1 },
	{ "egress_denied", F_INT, T(egress_denied), 0, 9e18, NULL, NULL, NULL, 0, 0 },
	{ "egress_sent_bytes", F_INT, T(egress_sent_bytes), 0, 9e18, NULL, NULL, NULL, 0, 0 },
	{ "egress_received_bytes", F_INT, T(egress_received_bytes), 0, 9e18, NULL, NULL, NULL, 0,
	    0 },
	{ "egress_destinations", F_STRV, T(egress_destinations), 0, 0, NULL, NULL, NULL, 0, 0 },
	END
};

static const struct field rt_fields[] = {
	{ "watchdog_pid", F_INT, RT(watchdog_pid), 1, 4194304, NULL, NULL, NULL, 0, 0 },
	{ "watchdog_start_ticks", F_INT, RT(watchdog_start_ticks), 0, 9e18, NULL, NULL, NULL, 0, 0 },
	{ "runner_pid", F_INT, RT(runner_pid), 1, 4194304, NULL, NULL, NULL, 0, 0 },
	{ "runner_start_ticks", F_INT, RT(runner_start_ticks), 0, 9e18, NULL, NULL, NULL, 0, 0 },
	{ "one_shot", F_BOOL, RT(one_shot), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "egress_pins", F_STRV, RT(egress_pins), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "seccomp_digest", F_STR, RT(seccomp_digest), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "pool", F_STR, RT(pool), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "pool_key", F_STR, RT(pool_key), 0, 0, NULL, NULL, NULL, 0, 0 },
	/* Each tier's own, under its name (one per sandbox). */
	{ "namespace", F_TIER, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "oci", F_TIER, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "microvm", F_TIER, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	/* Where a build before the tiers' keys wrote the namespace tier's
	 * state: read into runtime_state.namespace, written there. */
	{ "pid", F_TIER_OLD, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "start_ticks", F_TIER_OLD, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "uid_base", F_TIER_OLD, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "gid_base", F_TIER_OLD, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "id_count", F_TIER_OLD, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "cgroup", F_TIER_OLD, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "rootless", F_TIER_OLD, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "skeleton", F_TIER_OLD, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "net_addr", F_TIER_OLD, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "relay_pid", F_TIER_OLD, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "relay_start_ticks", F_TIER_OLD, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	END
};

static const struct field top_fields[] = {
	{ "sandbox_id", F_STR, M(sandbox_id), 0, 0, NULL, check_id, NULL, 0, 0 },
	{ "isolation_level", F_STR, M(isolation_level), 0, 0, levels, NULL, NULL, 0, 0 },
	{ "trust", F_STR, M(trust), 0, 0, trusts, NULL, NULL, 0, 0 },
	{ "runtime", F_STR, M(runtime), 0, 0, NULL, check_runtime, NULL, 0, 0 },
	{ "rootfs", F_STR, M(rootfs), 0, 0, NULL, check_rootfs, NULL, 0, 0 },
	{ "status", F_STATUS, M(status), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "created_at", F_STR, M(created_at), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "expires_at", F_STR, M(expires_at), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "kill_reason", F_STR, M(kill_reason), 0, 0, reasons, NULL, NULL, 0, 0 },
	{ "killed_at", F_STR, M(killed_at), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "last_warning", F_STR, M(last_warning), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "resource_allocation", F_MAP, 0, 0, 0, NULL, NULL, res_fields, 0, 0 },
	{ "network_policy", F_STR, M(network_policy), 0, 0, policies, NULL, NULL, 0, 0 },
	{ "allowed_egress", F_STRV, M(allowed_egress), 0, 0, NULL, check_egress, NULL, 0, 0 },
	{ "egress_refresh_s", F_INT, M(egress_refresh_s), 0, 86400, NULL, NULL, NULL, 0, 0 },
	{ "filesystem_mounts", F_MOUNTS, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "tmpfs", F_TMPFS, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "read_only_root", F_BOOL, M(read_only_root), 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "snapshot", F_MAP, 0, 0, 0, NULL, NULL, snap_fields, 0, 0 },
	{ "fork", F_MAP, 0, 0, 0, NULL, NULL, fork_fields, 0, 0 },
	{ "security", F_MAP, 0, 0, 0, NULL, NULL, sec_fields, 0, 0 },
	{ "user", F_USER, M(user), 0, 0, NULL, check_user, NULL, 0, 0 },
	{ "env", F_ENV, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "labels", F_LABELS, 0, 0, 0, NULL, NULL, NULL, 0, 0 },
	{ "workdir", F_STR, M(workdir), 0, 0, NULL, check_abs_path, NULL, 0, 0 },
	{ "execution_trace", F_MAP, 0, 0, 0, NULL, NULL, trace_fields, M(has_trace), 0 },
	{ "runtime_state", F_MAP, 0, 0, 0, NULL, NULL, rt_fields, M(has_rt), 0 },
	END
};

/* A field of the manifest by its offsetof(): the table's one trick. */
#define AT(base, off, type) ((type *)(void *)((char *)(base) + (off)))
#define CAT(base, off, type) ((const type *)(const void *)((const char *)(base) + (off)))

struct ctx {
	const char *name;
	struct sbx_err *e;
};

/* Exit 65 at n's place in the document. */
#define nerr(c, n, ...) sbx_node_err((c)->e, (c)->name, (n), __VA_ARGS__)

static int
is_null(const struct sbx_node *n)
{
	return n->type == SBX_SCALAR && n->plain &&
	    (strcmp(n->str, "null") == 0 || strcmp(n->str, "~") == 0 || n->str[0] == '\0');
}

static int
want(struct ctx *c, const struct sbx_node *n, enum sbx_node_type t, const char *key)
{
	static const char *names[] = { "a scalar", "a list", "a mapping" };

	if (n->type == t)
		return 0;
	return nerr(c, n, "%s: expected %s", key, names[t]);
}

static int
get_str(struct ctx *c, const struct sbx_node *n, const char *key, const char *const *choices,
    check_fn check, char **out)
{
	char why[512];
	int i;

	if (want(c, n, SBX_SCALAR, key) == -1)
		return -1;
	if (n->plain && (is_null(n) || strcmp(n->str, "true") == 0 || strcmp(n->str, "false") == 0))
		return nerr(c, n, "%s: expected a string, not '%s'", key, n->str);
	if (choices != NULL) {
		for (i = 0; choices[i]; i++)
			if (strcmp(n->str, choices[i]) == 0)
				break;
		if (choices[i] == NULL) {
			char list[256] = "";

			for (i = 0; choices[i]; i++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
				    i ? ", " : "", choices[i]);
			return nerr(c, n, "%s: '%.80s' is not one of %s", key, n->str, list);
		}
	}
	if (check != NULL && check(n->str, why, sizeof why) == -1)
		return nerr(c, n, "%s: %s", key, why);
	free(*out);
	if ((*out = strdup(n->str)) == NULL)
		return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
	return 0;
}

static int
get_status(struct ctx *c, const struct sbx_node *n, const char *key, enum sbx_status *out)
{
	char *s = NULL, list[256] = "";
	const char *name;
	int i, r;

	if (get_str(c, n, key, NULL, NULL, &s) == -1)
		return -1;
	r = sbx_status_parse(s, out);
	free(s);
	if (r == 0)
		return 0;
	for (i = SBX_STATUS_NONE + 1; (name = sbx_status_name(i)) != NULL; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
		    i > SBX_STATUS_NONE + 1 ? ", " : "", name);
	return nerr(c, n, "%s: '%.80s' is not one of %s", key, n->str, list);
}

static int
get_num(struct ctx *c, const struct sbx_node *n, const struct field *f, int integer, double *out)
{
	char *end;
	double v;

	if (want(c, n, SBX_SCALAR, f->key) == -1)
		return -1;
	if (!n->plain)
		return nerr(c, n, "%s: expected a number, not a quoted string", f->key);
	errno = 0;
	v = strtod(n->str, &end);
	if (end == n->str || *end != '\0' || errno || !isfinite(v) ||
	    strspn(n->str, "0123456789.-+eE") != strlen(n->str))
		return nerr(c, n, "%s: expected a number, not '%.40s'", f->key, n->str);
	if (integer && v != floor(v))
		return nerr(c, n, "%s: expected a whole number, not '%.40s'", f->key, n->str);
	if (v < f->min || v > f->max)
		return nerr(c, n, "%s: %.40s is out of range (%.10g to %.10g)", f->key, n->str, f->min,
		    f->max);
	*out = v;
	return 0;
}

static int parse_map(struct ctx *c, const struct sbx_node *map, const struct field *fields,
    struct sbx_manifest *m, const char *where);

int
sbx_strv_add(struct sbx_strv *sv, const char *s)
{
	char **nv = realloc(sv->v, (sv->n + 1) * sizeof *nv);

	if (nv == NULL)
		return -1;
	sv->v = nv;
	if ((sv->v[sv->n] = strdup(s)) == NULL)
		return -1;
	sv->n++;
	return 0;
}

void
sbx_strv_free(struct sbx_strv *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}

static int
get_bool(struct ctx *c, const struct sbx_node *n, const char *key, int *out)
{
	if (want(c, n, SBX_SCALAR, key) == -1)
		return -1;
	if (n->plain && strcmp(n->str, "true") == 0)
		*out = 1;
	else if (n->plain && strcmp(n->str, "false") == 0)
		*out = 0;
	else
		return nerr(c, n, "%s: expected true or false, not '%.40s'", key, n->str);
	return 0;
}

static int
parse_mounts(struct ctx *c, const struct sbx_node *n, struct sbx_manifest *m)
{
	size_t i, j, k;

	if (want(c, n, SBX_SEQ, "filesystem_mounts") == -1)
		return -1;
	if (n->n > SBX_MAX_MOUNTS)
		return nerr(c, n, "filesystem_mounts: %zu entries, more than %d", n->n,
		    SBX_MAX_MOUNTS);
	if ((m->mounts = calloc(n->n + 1, sizeof *m->mounts)) == NULL)
		return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
	for (i = 0; i < n->n; i++) {
		const struct sbx_node *it = n->kids[i];
		struct sbx_mount *mt = &m->mounts[i];

		m->n_mounts = i + 1;
		mt->idmap = -1;
		if (want(c, it, SBX_MAP, "filesystem_mounts entry") == -1)
			return -1;
		for (j = 0; j < it->n; j += 2) {
			const char *key = it->kids[j]->str;
			const struct sbx_node *v = it->kids[j + 1];
			int r;

			if (strcmp(key, "host") == 0)
				r = get_str(c, v, "host", NULL, check_abs_path, &mt->host);
			else if (strcmp(key, "guest") == 0)
				r = get_str(c, v, "guest", NULL, check_guest_path, &mt->guest);
			else if (strcmp(key, "mode") == 0)
				r = get_str(c, v, "mode", modes, NULL, &mt->mode);
			else if (strcmp(key, "idmap") == 0)
				r = get_bool(c, v, "idmap", &mt->idmap);
			else
				r = nerr(c, it->kids[j], "filesystem_mounts: unknown key '%.80s' "
				    "(known: host, guest, mode, idmap)", key);
			if (r == -1)
				return -1;
		}
		if (mt->host == NULL || mt->guest == NULL)
			return nerr(c, it, "filesystem_mounts entry needs host and guest");
		if (mt->mode == NULL && (mt->mode = strdup("ro")) == NULL)
			return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
		for (k = 0; k < i; k++)
			if (strcmp(m->mounts[k].guest, mt->guest) == 0)
				return nerr(c, it, "filesystem_mounts: guest '%s' appears twice",
				    mt->guest);
	}
	return 0;
}

static int
parse_tmpfs(struct ctx *c, const struct sbx_node *n, struct sbx_manifest *m)
{
	static const struct field size_f = { "size_mb", F_INT, 0, 1, 1 << 20, NULL, NULL, NULL,
		0, 0 };
	size_t i, j;
	double v = 0;

	if (want(c, n, SBX_SEQ, "tmpfs") == -1)
		return -1;
	if ((m->tmpfs = calloc(n->n + 1, sizeof *m->tmpfs)) == NULL)
		return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
	for (i = 0; i < n->n; i++) {
		const struct sbx_node *it = n->kids[i];
		struct sbx_tmpfs *t = &m->tmpfs[i];

		m->n_tmpfs = i + 1;
		t->size_mb = SBX_UNSET_INT;
		if (want(c, it, SBX_MAP, "tmpfs entry") == -1)
			return -1;
		for (j = 0; j < it->n; j += 2) {
			const char *key = it->kids[j]->str;
			const struct sbx_node *val = it->kids[j + 1];

			if (strcmp(key, "guest") == 0) {
				if (get_str(c, val, "guest", NULL, check_guest_path, &t->guest) == -1)
					return -1;
			} else if (strcmp(key, "size_mb") == 0) {
				if (get_num(c, val, &size_f, 1, &v) == -1)
					return -1;
				t->size_mb = (long long)v;
			} else {
				return nerr(c, it->kids[j], "tmpfs: unknown key '%.80s' (known: guest, "
				    "size_mb)", key);
			}
		}
		if (t->guest == NULL)
			return nerr(c, it, "tmpfs entry needs guest");
		if (t->size_mb == SBX_UNSET_INT)
			t->size_mb = 64;
	}
	return 0;
}

static int
parse_env(struct ctx *c, const struct sbx_node *n, struct sbx_manifest *m)
{
	char why[256];
	size_t i;

	if (want(c, n, SBX_MAP, "env") == -1)
		return -1;
	if ((m->env = calloc(n->n / 2 + 1, sizeof *m->env)) == NULL)
		return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
	for (i = 0; i < n->n; i += 2) {
		struct sbx_kv *kv = &m->env[i / 2];

		if (check_env_key(n->kids[i]->str, why, sizeof why) == -1)
			return nerr(c, n->kids[i], "env: %s", why);
		if (want(c, n->kids[i + 1], SBX_SCALAR, n->kids[i]->str) == -1)
			return -1;
		if ((kv->key = strdup(n->kids[i]->str)) == NULL ||
		    (kv->val = strdup(n->kids[i + 1]->str)) == NULL)
			return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
		m->n_env = i / 2 + 1;
	}
	return 0;
}

#define SBX_LABELS_MAX 64

/* A label's name: 1-63 of [a-z0-9._/-], starting with a letter or digit. */
static int
check_label_key(const char *s, char *why, size_t size)
{
	const char *p;

	for (p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    (p > s && strchr("._/-", *p) != NULL)))
			break;
	if (*s == '\0' || *p != '\0' || p - s > 63) {
		snprintf(why, size, "'%s' is not a label name (1-63 of a-z, 0-9, '.', '_', '/', '-', "
		    "a letter or digit first)", s);
		return -1;
	}
	return 0;
}

static int
parse_labels(struct ctx *c, const struct sbx_node *n, struct sbx_manifest *m)
{
	char why[256];
	const char *p;
	size_t i;

	if (want(c, n, SBX_MAP, "labels") == -1)
		return -1;
	if (n->n / 2 > SBX_LABELS_MAX)
		return nerr(c, n, "labels: at most %d", SBX_LABELS_MAX);
	if ((m->labels = calloc(n->n / 2 + 1, sizeof *m->labels)) == NULL)
		return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
	for (i = 0; i < n->n; i += 2) {
		struct sbx_kv *kv = &m->labels[i / 2];
		const struct sbx_node *v = n->kids[i + 1];

		if (check_label_key(n->kids[i]->str, why, sizeof why) == -1)
			return nerr(c, n->kids[i], "labels: %s", why);
		if (want(c, v, SBX_SCALAR, n->kids[i]->str) == -1)
			return -1;
		for (p = v->str; *p && (unsigned char)*p >= 0x20 && *p != 0x7f; p++)
			;
		if (*p != '\0' || p - v->str > 256)
			return nerr(c, v, "labels: %s: at most 256 printable characters",
			    n->kids[i]->str);
		if ((kv->key = strdup(n->kids[i]->str)) == NULL || (kv->val = strdup(v->str)) == NULL)
			return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
		m->n_labels = i / 2 + 1;
	}
	return 0;
}

/* runtime_state.<tier>: kept as written, a map of plain words and strings. */
static int
parse_tier(struct ctx *c, const struct sbx_node *v, const char *key, struct sbx_manifest *m)
{
	struct sbx_node *copy;
	size_t i;

	if (want(c, v, SBX_MAP, key) == -1)
		return -1;
	if (m->rt.tier_state != NULL)
		return nerr(c, v, "runtime_state: %s and %s: one tier's state only", m->rt.tier, key);
	if ((copy = sbx_node_new(SBX_MAP)) == NULL)
		return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
	for (i = 0; i < v->n; i += 2) {
		const struct sbx_node *val = v->kids[i + 1];
		struct sbx_node *n;

		char name[128];

		snprintf(name, sizeof name, "runtime_state.%s.%s", key, v->kids[i]->str);
		if (want(c, val, SBX_SCALAR, name) == -1) {
			sbx_node_free(copy);
			return -1;
		}
		n = sbx_node_scalar_copy(val);
		if (n == NULL || sbx_node_add(copy, v->kids[i]->str, n) == -1) {
			sbx_node_free(copy);
			return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
		}
	}
	snprintf(m->rt.tier, sizeof m->rt.tier, "%s", key);
	m->rt.tier_state = copy;
	return 0;
}

static int
parse_tier_old(struct ctx *c, const struct sbx_node *v, const char *key, struct sbx_manifest *m)
{
	if (want(c, v, SBX_SCALAR, key) == -1)
		return -1;
	if (m->rt.tier_state != NULL && strcmp(m->rt.tier, "namespace") != 0)
		return nerr(c, v, "runtime_state: %s and %s: one tier's state only", m->rt.tier,
		    "namespace");
	if (m->rt.tier_state == NULL) {
		if ((m->rt.tier_state = sbx_node_new(SBX_MAP)) == NULL)
			return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
		snprintf(m->rt.tier, sizeof m->rt.tier, "namespace");
	}
	if (sbx_node_get(m->rt.tier_state, key) != NULL)
		return nerr(c, v, "runtime_state: %s twice", key);
	if (sbx_node_add(m->rt.tier_state, key, sbx_node_scalar_copy(v)) == -1)
		return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
	return 0;
}

static int
parse_field(struct ctx *c, const struct sbx_node *v, const struct field *f, struct sbx_manifest *m,
    void *base)
{
	double d = 0;
	size_t i;

	if (f->nullable && is_null(v))
		return 0;
	switch (f->type) {
	case F_STR:
		return get_str(c, v, f->key, f->choices, f->check, AT(base, f->off, char *));
	case F_STATUS:
		return get_status(c, v, f->key, AT(base, f->off, enum sbx_status));
	case F_USER:
		/* A bare number is a UID; keep the string form either way. */
		if (want(c, v, SBX_SCALAR, f->key) == -1)
			return -1;
		{
			char why[256];

			if (check_user(v->str, why, sizeof why) == -1)
				return nerr(c, v, "%s: %s", f->key, why);
		}
		free(*AT(base, f->off, char *));
		if ((*AT(base, f->off, char *) = strdup(v->str)) == NULL)
			return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
		return 0;
	case F_INT:
		if (get_num(c, v, f, 1, &d) == -1)
			return -1;
		*AT(base, f->off, long long) = (long long)d;
		return 0;
	case F_NUM:
		if (get_num(c, v, f, 0, &d) == -1)
			return -1;
		*AT(base, f->off, double) = d;
		return 0;
	case F_BOOL:
		return get_bool(c, v, f->key, AT(base, f->off, int));
	case F_MAP:
		if (f->present_off)
			*AT(m, f->present_off, int) = 1;
		return parse_map(c, v, f->sub, m, f->key);
	case F_STRV:
	case F_PORTS: {
		struct sbx_strv *sv = AT(base, f->off, struct sbx_strv);
		char why[512];

		if (want(c, v, SBX_SEQ, f->key) == -1)
			return -1;
		sbx_strv_free(sv);
		for (i = 0; i < v->n; i++) {
			char *tmp = NULL;

			if (f->type == F_PORTS && (want(c, v->kids[i], SBX_SCALAR, f->key) == -1 ||
			    !v->kids[i]->plain))
				return nerr(c, v->kids[i], "%s: expected a port number", f->key);
			if (get_str(c, v->kids[i], f->key, NULL, NULL, &tmp) == -1)
				return -1;
			free(tmp);
			if (f->check && f->check(v->kids[i]->str, why, sizeof why) == -1)
				return nerr(c, v->kids[i], "%s: %s", f->key, why);
			if (sbx_strv_add(sv, v->kids[i]->str) == -1)
				return sbx_err_set(c->e, SBX_EX_OSERR, "out of memory");
		}
		return 0;
	}
	case F_MOUNTS:
		return parse_mounts(c, v, m);
	case F_TMPFS:
		return parse_tmpfs(c, v, m);
	case F_ENV:
		return parse_env(c, v, m);
	case F_LABELS:
		return parse_labels(c, v, m);
	case F_TIER:
		return parse_tier(c, v, f->key, m);
	case F_TIER_OLD:
		return parse_tier_old(c, v, f->key, m);
	}
	return 0;
}

static int
parse_map(struct ctx *c, const struct sbx_node *map, const struct field *fields,
    struct sbx_manifest *m, const char *where)
{
	const struct field *f;
	size_t i;

	if (want(c, map, SBX_MAP, where) == -1)
		return -1;
	for (i = 0; i < map->n; i += 2) {
		const char *key = map->kids[i]->str;

		for (f = fields; f->key; f++)
			if (strcmp(f->key, key) == 0)
				break;
		if (f->key == NULL) {
			char known[640] = "", hint[128] = "";
			const char *keys[64], *near;
			size_t k = 0;

			for (f = fields; f->key; f++) {
				snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
				    f == fields ? "" : ", ", f->key);
				if (k + 1 < SBX_ARRAY_LEN(keys))
					keys[k++] = f->key;
			}
			keys[k] = NULL;
			if ((near = sbx_nearest(key, keys)) != NULL)
				snprintf(hint, sizeof hint, ": did you mean '%s'?", near);
			return nerr(c, map->kids[i], "%s%sunknown key '%.80s'%s (known: %s)",
			    where ? where : "", where ? ": " : "", key, hint, known);
		}
		if (parse_field(c, map->kids[i + 1], f, m, m) == -1)
			return -1;
	}
	return 0;
}

void
sbx_trace_init(struct sbx_trace *t)
{
	memset(t, 0, sizeof *t);
	t->exit_code = SBX_UNSET_INT;
	t->signal = SBX_UNSET_INT;
	t->disk_used_mb = NAN;
	t->egress_denied = t->egress_sent_bytes = t->egress_received_bytes = SBX_UNSET_INT;
}

void
sbx_manifest_init(struct sbx_manifest *m)
{
	memset(m, 0, sizeof *m);
	m->res.cpu_cores = NAN;
	m->res.memory_mb = m->res.memory_soft_pct = m->res.disk_mb = SBX_UNSET_INT;
	m->res.pids = m->res.max_wall_clock_s = SBX_UNSET_INT;
	m->res.io_mbps = m->res.io_iops = SBX_UNSET_INT;
	m->read_only_root = -1;
	m->snapshot.enabled = m->snapshot.before_destroy = -1;
	m->snapshot.interval_s = m->snapshot.keep = SBX_UNSET_INT;
	m->max_fork_factor = SBX_UNSET_INT;
	m->egress_refresh_s = SBX_UNSET_INT;
	m->security.no_new_privileges = m->security.landlock = m->security.landlock_network = -1;
	sbx_trace_init(&m->trace);
	m->rt.watchdog_pid = m->rt.watchdog_start_ticks = SBX_UNSET_INT;
	m->rt.runner_pid = m->rt.runner_start_ticks = SBX_UNSET_INT;
}

void
sbx_trace_free(struct sbx_trace *t)
{
	free(t->start_time);
	free(t->kill_reason);
	sbx_strv_free(&t->egress_destinations);
	sbx_trace_init(t);
}

void
sbx_manifest_strip_state(struct sbx_manifest *m)
{
	free(m->created_at);
	free(m->expires_at);
	free(m->killed_at);
	free(m->kill_reason);
	free(m->last_warning);
	free(m->snapshot.last_snapshot_id);
	m->status = SBX_STATUS_NONE;
	m->created_at = m->expires_at = m->killed_at = NULL;
	m->kill_reason = m->last_warning = m->snapshot.last_snapshot_id = NULL;
	sbx_trace_free(&m->trace);
	m->has_trace = 0;
	m->has_rt = 0;
	m->rt.watchdog_pid = m->rt.watchdog_start_ticks = SBX_UNSET_INT;
	m->rt.runner_pid = m->rt.runner_start_ticks = SBX_UNSET_INT;
	m->rt.one_shot = 0;
	free(m->rt.seccomp_digest);
	free(m->rt.pool);
	free(m->rt.pool_key);
	m->rt.seccomp_digest = m->rt.pool = m->rt.pool_key = NULL;
	sbx_strv_free(&m->rt.egress_pins);
	sbx_node_free(m->rt.tier_state);
	m->rt.tier_state = NULL;
	m->rt.tier[0] = '\0';
}

/* The tier's runtime state */

static const struct sbx_node *
rt_get(const struct sbx_manifest *m, const char *key)
{
	const struct sbx_node *v;

	/* Only the sandbox's own tier's state is read as its. */
	if (m->rt.tier_state == NULL ||
	    strcmp(m->rt.tier, m->isolation_level ? m->isolation_level : "namespace") != 0 ||
	    (v = sbx_node_get(m->rt.tier_state, key)) == NULL ||
	    v->type != SBX_SCALAR || (v->plain && strcmp(v->str, "null") == 0))
		return NULL;
	return v;
}

long long
sbx_rt_int(const struct sbx_manifest *m, const char *key)
{
	const struct sbx_node *v = rt_get(m, key);
	char *end;
	long long n;

	if (v == NULL || !v->plain)
		return SBX_UNSET_INT;
	errno = 0;
	n = strtoll(v->str, &end, 10);
	return errno || end == v->str || *end ? SBX_UNSET_INT : n;
}

const char *
sbx_rt_str(const struct sbx_manifest *m, const char *key)
{
	const struct sbx_node *v = rt_get(m, key);

	return v ? v->str : NULL;
}

int
sbx_rt_bool(const struct sbx_manifest *m, const char *key)
{
	const struct sbx_node *v = rt_get(m, key);

	return v != NULL && v->plain && strcmp(v->str, "true") == 0;
}

/* Put v (NULL: remove) under key, making the map on first use. */
static int
rt_put(struct sbx_manifest *m, const char *key, struct sbx_node *v)
{
	struct sbx_node *t = m->rt.tier_state;
	size_t i;

	if (t == NULL) {
		if (v == NULL)
			return 0;
		const char *level = m->isolation_level ? m->isolation_level : "namespace";

		/* A map only under a tier's key (never "auto": defaults resolve it). */
		if (strcmp(level, "namespace") != 0 && strcmp(level, "oci") != 0 &&
		    strcmp(level, "microvm") != 0) {
			sbx_node_free(v);
			return -1;
		}
		if ((t = m->rt.tier_state = sbx_node_new(SBX_MAP)) == NULL) {
			sbx_node_free(v);
			return -1;
		}
		snprintf(m->rt.tier, sizeof m->rt.tier, "%s", level);
	}
	for (i = 0; i < t->n; i += 2) {
		if (strcmp(t->kids[i]->str, key) != 0)
			continue;
		sbx_node_free(t->kids[i + 1]);
		if (v != NULL) {
			t->kids[i + 1] = v;
			return 0;
		}
		sbx_node_free(t->kids[i]);
		memmove(&t->kids[i], &t->kids[i + 2], (t->n - i - 2) * sizeof *t->kids);
		t->n -= 2;
		return 0;
	}
	if (v == NULL)
		return 0;
	return sbx_node_add(t, key, v);
}

int
sbx_rt_set_int(struct sbx_manifest *m, const char *key, long long v)
{
	struct sbx_node *n = v == SBX_UNSET_INT ? NULL : sbx_node_int(v);

	return v != SBX_UNSET_INT && n == NULL ? -1 : rt_put(m, key, n);
}

int
sbx_rt_set_str(struct sbx_manifest *m, const char *key, const char *v)
{
	struct sbx_node *n = v == NULL ? NULL : sbx_node_str(v);

	return v != NULL && n == NULL ? -1 : rt_put(m, key, n);
}

int
sbx_rt_set_bool(struct sbx_manifest *m, const char *key, int v)
{
	struct sbx_node *n = sbx_node_bool(v);

	return n == NULL ? -1 : rt_put(m, key, n);
}

void
sbx_manifest_free(struct sbx_manifest *m)
{
	size_t i;

	sbx_manifest_strip_state(m);
	free(m->sandbox_id);
	free(m->isolation_level);
	free(m->trust);
	free(m->runtime);
	free(m->rootfs);
	free(m->network_policy);
	sbx_strv_free(&m->allowed_egress);
	for (i = 0; i < m->n_mounts; i++) {
		free(m->mounts[i].host);
		free(m->mounts[i].guest);
		free(m->mounts[i].mode);
	}
	free(m->mounts);
	for (i = 0; i < m->n_tmpfs; i++)
		free(m->tmpfs[i].guest);
	free(m->tmpfs);
	free(m->snapshot.storage_backend);
	free(m->snapshot.last_snapshot_id);
	free(m->security.seccomp);
	sbx_strv_free(&m->security.capabilities);
	sbx_strv_free(&m->security.bind_ports);
	free(m->user);
	for (i = 0; i < m->n_env; i++) {
		free(m->env[i].key);
		free(m->env[i].val);
	}
	free(m->env);
	for (i = 0; i < m->n_labels; i++) {
		free(m->labels[i].key);
		free(m->labels[i].val);
	}
	free(m->labels);
	free(m->workdir);
	sbx_manifest_init(m);
}

/* Checks that span several keys, reported at the key that is wrong. */
static int
cross_check(struct ctx *c, const struct sbx_node *root, const struct sbx_manifest *m)
{
	const struct sbx_node *n;
	size_t i, j;

	if (m->network_policy && strcmp(m->network_policy, "host") == 0 &&
	    (m->trust == NULL || strcmp(m->trust, "trusted") != 0))
		return nerr(c, sbx_node_get(root, "network_policy"),
		    "network_policy: host is allowed only with trust: trusted");
	if (m->allowed_egress.n > 0 &&
	    (m->network_policy == NULL || strcmp(m->network_policy, "egress-allow-list") != 0))
		return nerr(c, sbx_node_get(root, "allowed_egress"),
		    "allowed_egress needs network_policy: egress-allow-list");
	if (m->egress_refresh_s != SBX_UNSET_INT &&
	    (m->network_policy == NULL || strcmp(m->network_policy, "egress-allow-list") != 0))
		return nerr(c, sbx_node_get(root, "egress_refresh_s"),
		    "egress_refresh_s needs network_policy: egress-allow-list");
	if (m->security.no_new_privileges == 0 &&
	    (m->trust == NULL || strcmp(m->trust, "trusted") != 0) &&
	    (n = sbx_node_get(sbx_node_get(root, "security"), "no_new_privileges")) != NULL)
		return nerr(c, n, "no_new_privileges: false is allowed only with trust: trusted");
	if (m->security.seccomp && strcmp(m->security.seccomp, "unconfined") == 0 &&
	    (m->trust == NULL || strcmp(m->trust, "trusted") != 0))
		return nerr(c, sbx_node_get(sbx_node_get(root, "security"), "seccomp"),
		    "seccomp: unconfined is allowed only with trust: trusted");
	for (i = 0; i < m->n_tmpfs; i++) {
		for (j = 0; j < m->n_mounts; j++)
			if (strcmp(m->tmpfs[i].guest, m->mounts[j].guest) == 0)
				return nerr(c, sbx_node_get(root, "tmpfs")->kids[i],
				    "tmpfs: guest '%s' is also a filesystem_mounts guest",
				    m->tmpfs[i].guest);
		for (j = 0; j < i; j++)
			if (strcmp(m->tmpfs[i].guest, m->tmpfs[j].guest) == 0)
				return nerr(c, sbx_node_get(root, "tmpfs")->kids[i],
				    "tmpfs: guest '%s' appears twice", m->tmpfs[i].guest);
	}
	return 0;
}

int
sbx_manifest_from_node(const char *name, const struct sbx_node *root, struct sbx_manifest *m,
    struct sbx_err *e)
{
	struct ctx c = { name, e };
	int r;

	sbx_manifest_init(m);
	r = parse_map(&c, root, top_fields, m, NULL);
	if (r == 0)
		r = cross_check(&c, root, m);
	if (r == -1)
		sbx_manifest_free(m);
	return r;
}

int
sbx_manifest_parse(const char *name, const char *buf, size_t len, struct sbx_manifest *m,
    struct sbx_err *e)
{
	struct sbx_node *root;
	int r;

	sbx_manifest_init(m);
	if (sbx_doc_parse(name, buf, len, &root, e) == -1)
		return -1;
	r = sbx_manifest_from_node(name, root, m, e);
	sbx_node_free(root);
	return r;
}

int
sbx_manifest_load(const char *path, struct sbx_manifest *m, struct sbx_err *e)
{
	const char *name = path && strcmp(path, "-") != 0 ? path : "<stdin>";
	char *buf;
	size_t len;
	int r;

	sbx_manifest_init(m);
	if (path && strcmp(path, "-") != 0) {
		if (sbx_read_file(path, SBX_DOC_MAX, &buf, &len, e) == -1) {
			if (e->code == SBX_EX_DATAERR)
				sbx_err_set(e, SBX_EX_DATAERR, "%s:1:1: document is larger than 1 MiB",
				    path);
			return -1;
		}
	} else {
		if (sbx_read_fd(0, SBX_DOC_MAX, &buf, &len, name, e) == -1) {
			if (e->code == SBX_EX_DATAERR)
				sbx_err_set(e, SBX_EX_DATAERR, "%s:1:1: document is larger than 1 MiB",
				    name);
			return -1;
		}
	}
	r = sbx_manifest_parse(name, buf, len, m, e);
	free(buf);
	return r;
}

static int
set_default(char **s, const char *v)
{
	if (*s == NULL && (*s = strdup(v)) == NULL)
		return -1;
	return 0;
}

int
sbx_manifest_defaults(struct sbx_manifest *m, struct sbx_err *e)
{
	size_t i;

	if (set_default(&m->trust, "untrusted") == -1 ||
	    set_default(&m->isolation_level, "namespace") == -1 ||
	    set_default(&m->rootfs, "host") == -1 ||
	    set_default(&m->network_policy, "deny-all") == -1 ||
	    set_default(&m->security.seccomp, "default") == -1 ||
	    set_default(&m->user, "0:0") == -1 ||
	    set_default(&m->workdir, "/") == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if (strcmp(m->isolation_level, "auto") == 0) {
		/* The seed's decision matrix: only trusted code shares the host kernel's
		 * namespaces alone; the rest gets a stronger tier. */
		free(m->isolation_level);
		m->isolation_level = strdup(strcmp(m->trust, "trusted") == 0 ? "namespace" :
		    strcmp(m->trust, "sensitive") == 0 ? "microvm" : "oci");
		if (m->isolation_level == NULL)
			return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		/* semi-trusted: an ordinary container runtime; untrusted: gVisor. */
		if (strcmp(m->trust, "semi-trusted") == 0 && set_default(&m->runtime, "runc") == -1)
			return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
	if (strcmp(m->isolation_level, "oci") == 0 && set_default(&m->runtime, "runsc") == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if (m->res.memory_soft_pct == SBX_UNSET_INT)
		m->res.memory_soft_pct = 80;
	if (m->res.max_wall_clock_s == SBX_UNSET_INT)
		m->res.max_wall_clock_s = 300;
	if (m->read_only_root == -1)
		m->read_only_root = 1;
	/* Asking for periodic or before-destroy snapshots turns them on;
	 * `enabled: false` keeps them off. */
	if (m->snapshot.enabled == -1)
		m->snapshot.enabled = m->snapshot.interval_s != SBX_UNSET_INT ||
		    m->snapshot.before_destroy == 1;
	if (m->snapshot.before_destroy == -1)
		m->snapshot.before_destroy = 0;
	if (m->max_fork_factor == SBX_UNSET_INT)
		m->max_fork_factor = 4;
	if (m->egress_refresh_s == SBX_UNSET_INT &&
	    strcmp(m->network_policy, "egress-allow-list") == 0)
		m->egress_refresh_s = 300;
	if (m->security.no_new_privileges == -1)
		m->security.no_new_privileges = 1;
	/* A microVM's boundary is its own kernel: Landlock (the host kernel's)
	 * has nothing to guard there, and is off unless asked for (which that
	 * tier refuses). */
	if (m->security.landlock == -1)
		m->security.landlock = strcmp(m->isolation_level, "microvm") != 0;
	/* By port, Landlock also stops the sandbox's own servers on lo: on for
	 * the code trusted least, a choice for the rest. */
	if (m->security.landlock_network == -1)
		m->security.landlock_network = strcmp(m->trust, "sensitive") == 0 &&
		    strcmp(m->isolation_level, "microvm") != 0;
	if (m->security.landlock_network == 1 && strcmp(m->network_policy, "host") == 0)
		return sbx_err_set(e, SBX_EX_DATAERR, "security.landlock_network: the host's network "
		    "cannot be bounded by ports");
	for (i = 0; m->security.landlock_network == 1 && i < m->allowed_egress.n; i++)
		if (strcmp(strrchr(m->allowed_egress.v[i], ':'), ":*") == 0)
			return sbx_err_set(e, SBX_EX_DATAERR, "allowed_egress: '%s' allows any port, "
			    "which security.landlock_network cannot (it bounds ports)",
			    m->allowed_egress.v[i]);
	if (m->security.bind_ports.n > 0 && m->security.landlock_network != 1)
		return sbx_err_set(e, SBX_EX_DATAERR, "security.bind_ports needs "
		    "landlock_network: true");
	/* A workspace the sandbox writes is its owner's: mapped, unless told not. */
	for (i = 0; i < m->n_mounts; i++)
		if (m->mounts[i].idmap == -1)
			m->mounts[i].idmap = strcmp(m->mounts[i].mode, "rw") == 0;
	return 0;
}

/* Output */

static struct sbx_node *tree_map(const struct sbx_manifest *m, const struct field *fields);

static struct sbx_node *
tree_field(const struct sbx_manifest *m, const struct field *f)
{
	struct sbx_node *n;
	size_t i;

	switch (f->type) {
	case F_STR:
	case F_USER: {
		const char *s = *CAT(m, f->off, char *);

		return s ? sbx_node_str(s) : f->nullable ? sbx_node_raw("null") : NULL;
	}
	case F_STATUS: {
		const char *s = sbx_status_name(*CAT(m, f->off, enum sbx_status));

		return s ? sbx_node_str(s) : NULL;
	}
	case F_INT: {
		long long v = *CAT(m, f->off, long long);

		return v != SBX_UNSET_INT ? sbx_node_int(v) : f->nullable ? sbx_node_raw("null") : NULL;
	}
	case F_NUM: {
		double v = *CAT(m, f->off, double);

		return isnan(v) ? NULL : sbx_node_num(v);
	}
	case F_BOOL: {
		int v = *CAT(m, f->off, int);

		return v == -1 ? NULL : sbx_node_bool(v);
	}
	case F_MAP:
		if (f->present_off && !*CAT(m, f->present_off, int))
			return NULL;
		return tree_map(m, f->sub);
	case F_STRV:
	case F_PORTS: {
		const struct sbx_strv *sv = CAT(m, f->off, struct sbx_strv);

		if (sv->n == 0 && f->off != offsetof(struct sbx_manifest, security.capabilities))
			return NULL;
		if ((n = sbx_node_new(SBX_SEQ)) == NULL)
			return NULL;
		for (i = 0; i < sv->n; i++)
			sbx_node_add(n, NULL, f->type == F_PORTS ? sbx_node_raw(sv->v[i]) :
			    sbx_node_str(sv->v[i]));
		return n;
	}
	case F_MOUNTS:
		if (m->n_mounts == 0 || (n = sbx_node_new(SBX_SEQ)) == NULL)
			return NULL;
		for (i = 0; i < m->n_mounts; i++) {
			struct sbx_node *it = sbx_node_new(SBX_MAP);

			if (it == NULL)
				break;
			sbx_node_add(it, "host", sbx_node_str(m->mounts[i].host));
			sbx_node_add(it, "guest", sbx_node_str(m->mounts[i].guest));
			sbx_node_add(it, "mode", sbx_node_str(m->mounts[i].mode));
			if (m->mounts[i].idmap != -1)
				sbx_node_add(it, "idmap", sbx_node_bool(m->mounts[i].idmap));
			sbx_node_add(n, NULL, it);
		}
		return n;
	case F_TMPFS:
		if (m->n_tmpfs == 0 || (n = sbx_node_new(SBX_SEQ)) == NULL)
			return NULL;
		for (i = 0; i < m->n_tmpfs; i++) {
			struct sbx_node *it = sbx_node_new(SBX_MAP);

			if (it == NULL)
				break;
			sbx_node_add(it, "guest", sbx_node_str(m->tmpfs[i].guest));
			sbx_node_add(it, "size_mb", sbx_node_int(m->tmpfs[i].size_mb));
			sbx_node_add(n, NULL, it);
		}
		return n;
	case F_ENV:
		if (m->n_env == 0 || (n = sbx_node_new(SBX_MAP)) == NULL)
			return NULL;
		for (i = 0; i < m->n_env; i++)
			sbx_node_add(n, m->env[i].key, sbx_node_str(m->env[i].val));
		return n;
	case F_LABELS:
		if (m->n_labels == 0 || (n = sbx_node_new(SBX_MAP)) == NULL)
			return NULL;
		for (i = 0; i < m->n_labels; i++)
			sbx_node_add(n, m->labels[i].key, sbx_node_str(m->labels[i].val));
		return n;
	case F_TIER: {
		const struct sbx_node *t = m->rt.tier_state;

		if (t == NULL || t->n == 0 || strcmp(m->rt.tier, f->key) != 0 ||
		    (n = sbx_node_new(SBX_MAP)) == NULL)
			return NULL;
		for (i = 0; i < t->n; i += 2)
			sbx_node_add(n, t->kids[i]->str, sbx_node_scalar_copy(t->kids[i + 1]));
		return n;
	}
	case F_TIER_OLD:
		return NULL;    /* written under the tier's key */
	}
	return NULL;
}

static struct sbx_node *
tree_map(const struct sbx_manifest *m, const struct field *fields)
{
	struct sbx_node *map = sbx_node_new(SBX_MAP), *v;
	const struct field *f;

	if (map == NULL)
		return NULL;
	for (f = fields; f->key; f++)
		if ((v = tree_field(m, f)) != NULL)
			sbx_node_add(map, f->key, v);
	if (map->n == 0 && fields != top_fields) {
		sbx_node_free(map);
		return NULL;
	}
	return map;
}

struct sbx_node *
sbx_manifest_tree(const struct sbx_manifest *m)
{
	return tree_map(m, top_fields);
}

int
sbx_manifest_copy(const struct sbx_manifest *m, struct sbx_manifest *out, struct sbx_err *e)
{
	struct sbx_node *t;
	int r;

	sbx_manifest_init(out);
	if ((t = sbx_manifest_tree(m)) == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	r = sbx_manifest_from_node("manifest", t, out, e);
	sbx_node_free(t);
	return r;
}

/* The first place two trees differ, as a key path ("resource_allocation.memory_mb"). */
static int
node_diff(const struct sbx_node *a, const struct sbx_node *b, char *path, size_t size)
{
	size_t i, j, n = strlen(path);

	if (a == NULL || b == NULL)
		return a != b;
	if (a->type != b->type)
		return 1;
	if (a->type == SBX_SCALAR)
		return strcmp(a->str, b->str) != 0;
	if (a->type == SBX_SEQ) {
		if (a->n != b->n)
			return 1;
		for (i = 0; i < a->n; i++)
			if (node_diff(a->kids[i], b->kids[i], path, size)) {
				if (path[n] == '\0')
					snprintf(path + n, size - n, "[%zu]", i);
				return 1;
			}
		return 0;
	}
	/* Maps: every key of either, in a's order then b's. */
	for (j = 0; j < 2; j++) {
		const struct sbx_node *x = j ? b : a, *y = j ? a : b;

		for (i = 0; i < x->n; i += 2) {
			snprintf(path + n, size - n, "%s%s", n ? "." : "", x->kids[i]->str);
			if (node_diff(x->kids[i + 1], sbx_node_get(y, x->kids[i]->str), path, size))
				return 1;
			path[n] = '\0';
		}
	}
	return 0;
}

int
sbx_manifest_diff(const struct sbx_manifest *a, const struct sbx_manifest *b, char *key,
    size_t size)
{
	struct sbx_manifest ca, cb;
	struct sbx_node *ta = NULL, *tb = NULL;
	int r = -1;

	key[0] = '\0';
	if (sbx_manifest_copy(a, &ca, NULL) == -1)
		return -1;
	if (sbx_manifest_copy(b, &cb, NULL) == -1) {
		sbx_manifest_free(&ca);
		return -1;
	}
	sbx_manifest_strip_state(&ca);
	sbx_manifest_strip_state(&cb);
	if ((ta = sbx_manifest_tree(&ca)) != NULL && (tb = sbx_manifest_tree(&cb)) != NULL)
		r = node_diff(ta, tb, key, size);
	sbx_node_free(ta);
	sbx_node_free(tb);
	sbx_manifest_free(&ca);
	sbx_manifest_free(&cb);
	return r;
}

int
sbx_manifest_digest(const struct sbx_manifest *m, char hex[65])
{
	struct sbx_manifest c;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (sbx_manifest_copy(m, &c, NULL) == -1)
		return -1;
	sbx_manifest_strip_state(&c);
	free(c.sandbox_id);
	c.sandbox_id = NULL;
	if ((f = open_memstream(&buf, &len)) == NULL) {
		sbx_manifest_free(&c);
		return -1;
	}
	r = sbx_manifest_emit(f, &c, SBX_FMT_JSON);
	if (fclose(f) != 0)
		r = -1;
	if (r == 0)
		sbx_sha256_hex(buf, len, hex);
	free(buf);
	sbx_manifest_free(&c);
	return r == 0 ? 0 : -1;
}

int
sbx_manifest_emit(FILE *f, const struct sbx_manifest *m, enum sbx_format fmt)
{
	return sbx_doc_emit_tree(f, sbx_manifest_tree(m), fmt);
}

struct sbx_node *
sbx_trace_tree(const struct sbx_trace *t)
{
	struct sbx_manifest m;

	sbx_manifest_init(&m);
	m.trace = *t;
	m.has_trace = 1;
	return tree_map(&m, trace_fields);
}

int
sbx_trace_emit(FILE *f, const struct sbx_trace *t, enum sbx_format fmt)
{
	struct sbx_manifest m;
	struct sbx_node *root, *tr;
	int r = -1;

	/* Borrow the table: a manifest holding only the trace. */
	sbx_manifest_init(&m);
	m.trace = *t;
	m.has_trace = 1;
	root = sbx_node_new(SBX_MAP);
	tr = tree_map(&m, trace_fields);
	if (root != NULL && tr != NULL && sbx_node_add(root, "execution_trace", tr) == 0) {
		tr = NULL;
		r = sbx_doc_emit(f, root, fmt);
	}
	sbx_node_free(tr);
	sbx_node_free(root);
	return r;
}

int
sbx_filter_check(const char *f, struct sbx_err *e)
{
	enum sbx_status st;
	char why[256];
	const char *eq = strchr(f, '=');

	if (strncmp(f, "status=", 7) == 0)
		return sbx_status_parse(f + 7, &st) == 0 ? 0 :
		    sbx_err_set(e, SBX_EX_USAGE, "--filter %s: no such status", f);
	if (strncmp(f, "tier=", 5) == 0)
		return f[5] ? 0 : sbx_err_set(e, SBX_EX_USAGE, "--filter %s: which tier?", f);
	if (strncmp(f, "label:", 6) == 0) {
		char key[80];
		size_t n = eq ? (size_t)(eq - f - 6) : strlen(f + 6);

		if (n >= sizeof key)
			n = sizeof key - 1;
		memcpy(key, f + 6, n);
		key[n] = '\0';
		return check_label_key(key, why, sizeof why) == 0 ? 0 :
		    sbx_err_set(e, SBX_EX_USAGE, "--filter %s: %s", f, why);
	}
	return sbx_err_set(e, SBX_EX_USAGE, "--filter %s: status=S, tier=T, label:NAME=VALUE "
	    "or label:NAME", f);
}

int
sbx_filter_match(const struct sbx_manifest *m, const char *f)
{
	const char *eq = strchr(f, '=');
	size_t i, n;

	if (strncmp(f, "status=", 7) == 0)
		return m->status != SBX_STATUS_NONE && strcmp(sbx_status_name(m->status), f + 7) == 0;
	if (strncmp(f, "tier=", 5) == 0)
		return strcmp(m->isolation_level ? m->isolation_level : "namespace", f + 5) == 0;
	if (strncmp(f, "label:", 6) != 0)
		return 0;
	n = eq ? (size_t)(eq - f - 6) : strlen(f + 6);
	for (i = 0; i < m->n_labels; i++)
		if (strlen(m->labels[i].key) == n && strncmp(m->labels[i].key, f + 6, n) == 0)
			return eq == NULL || strcmp(m->labels[i].val, eq + 1) == 0;
	return 0;
}
