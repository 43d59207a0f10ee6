/* SPDX-License-Identifier: MIT */
/*
 * The manifest (sbx-manifest(5)) and the state document built on it: parsed
 * strictly from YAML/JSON, given least-privilege defaults, written back with
 * the same keys so one tool's output is the next tool's input.
 */
#ifndef SBX_MANIFEST_H
#define SBX_MANIFEST_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "doc.h"
#include "error.h"
#include "status.h"

#define SBX_UNSET_INT LLONG_MIN
#define SBX_MAX_MOUNTS 64          /* filesystem_mounts entries */

struct sbx_strv {
	char **v;
	size_t n;
};

/* Append a copy of s; -1 when out of memory. */
int sbx_strv_add(struct sbx_strv *sv, const char *s);
void sbx_strv_free(struct sbx_strv *sv);

struct sbx_mount {
	char *host, *guest, *mode;  /* mode: "ro" | "rw" */
	int idmap;                  /* the host owner's files are the sandbox user's; -1 unset */
};

struct sbx_tmpfs {
	char *guest;
	long long size_mb;
};

struct sbx_kv {
	char *key, *val;
};

struct sbx_resources {
	double cpu_cores;           /* NAN: unlimited */
	long long memory_mb, memory_soft_pct, disk_mb, pids, max_wall_clock_s;
	long long io_mbps, io_iops;  /* the writable layer's device, reads and writes each */
};

struct sbx_snapshot_cfg {
	int enabled, before_destroy;
	long long interval_s, keep;
	char *storage_backend, *last_snapshot_id;
};

struct sbx_security {
	char *seccomp;
	struct sbx_strv capabilities;
	int no_new_privileges, landlock;
	int landlock_network;         /* TCP connect/bind by port, Landlock's second layer */
	struct sbx_strv bind_ports;   /* with landlock_network: the ports it may bind */
};

/* What a run used, measured by the kernel (SPEC §5). */
struct sbx_trace {
	char *start_time;
	double elapsed_s, cpu_seconds_used, peak_memory_mb, disk_written_mb;
	long long exit_code, signal;  /* signal: SBX_UNSET_INT is null */
	long long pids_limit_hits;    /* forks refused by the pids limit */
	double disk_used_mb;          /* the writable layer's use under disk_mb (NAN: none) */
	int oom_killed, timed_out;
	char *kill_reason;            /* NULL is null */
	/* egress-allow-list: refused packets and connections, bytes through the
	 * relay, and "DEST sent=N received=N denied=N" per destination. */
	long long egress_denied, egress_sent_bytes, egress_received_bytes;
	struct sbx_strv egress_destinations;
};

/* What the namespace driver needs to find a sandbox's kernel objects again. */
/* What the lifecycle keeps of a live sandbox, whatever its tier. */
struct sbx_runtime {
	long long watchdog_pid, watchdog_start_ticks;
	long long runner_pid, runner_start_ticks;   /* the sandbox's runner (runner.h) */
	int one_shot;                 /* made by a one-shot run (sbx-run -m), gone with it */
	struct sbx_strv egress_pins;  /* "NAME ADDRESS": host names as resolved at provision */
	char *seccomp_digest;         /* security.seccomp PATH: "sha256:HEX" of the program kept */
	char *pool, *pool_key;        /* a warm pool's member, until claimed: the pool's name, and
	                               * its manifest's sbx_manifest_digest (pools/KEY/ID) */
	/* runtime_state.<tier>: the tier's own state, a map of scalars that
	 * only its driver reads and writes (sbx_rt_*); tier names its key. */
	char tier[16];
	struct sbx_node *tier_state;
};

struct sbx_manifest {
	char *sandbox_id, *isolation_level, *trust, *runtime, *rootfs;
	struct sbx_resources res;
	char *network_policy;
	struct sbx_strv allowed_egress;
	long long egress_refresh_s;   /* the watchdog resolves host names again this often, 0: never */
	struct sbx_mount *mounts;
	size_t n_mounts;
	struct sbx_tmpfs *tmpfs;
	size_t n_tmpfs;
	int read_only_root;
	struct sbx_snapshot_cfg snapshot;
	long long max_fork_factor;
	struct sbx_security security;
	char *user;                   /* "UID:GID" */
	struct sbx_kv *env;
	size_t n_env;
	/* labels: the caller's own names for the sandbox (sbx-ls --filter label:K=V). */
	struct sbx_kv *labels;
	size_t n_labels;
	char *workdir;
	/* State-document keys: ignored on provision, kept by the state store. */
	enum sbx_status status;
	char *created_at, *expires_at, *killed_at;
	char *kill_reason, *last_warning;   /* set by the watchdog */
	struct sbx_trace trace;
	int has_trace;
	struct sbx_runtime rt;
	int has_rt;
};

/*
 * The tier's own runtime state (runtime_state.<tier>), by key: an integer
 * (SBX_UNSET_INT when absent or not one), a string (NULL when absent), a
 * boolean (0 when absent); only the map of m's own isolation_level is read.
 * Setting makes that map on first use; a NULL string removes the key. -1:
 * out of memory, or an isolation_level that is not a tier's.
 */
long long sbx_rt_int(const struct sbx_manifest *m, const char *key);
const char *sbx_rt_str(const struct sbx_manifest *m, const char *key);
int sbx_rt_bool(const struct sbx_manifest *m, const char *key);
int sbx_rt_set_int(struct sbx_manifest *m, const char *key, long long v);
int sbx_rt_set_str(struct sbx_manifest *m, const char *key, const char *v);
int sbx_rt_set_bool(struct sbx_manifest *m, const char *key, int v);

/*
 * What identifies a manifest whatever its sandbox_id and state keys: the
 * sha256 of its canonical JSON, as 64 hex digits (a warm pool's key: two
 * manifests with the same digest make the same sandbox). -1: out of memory.
 */
int sbx_manifest_digest(const struct sbx_manifest *m, char hex[65]);

/* Parse and validate a manifest or state document; sets no defaults. */
int sbx_manifest_parse(const char *name, const char *buf, size_t len, struct sbx_manifest *m,
    struct sbx_err *e);
/* The same for a node of a larger document (a snapshot's manifest). */
int sbx_manifest_from_node(const char *name, const struct sbx_node *root, struct sbx_manifest *m,
    struct sbx_err *e);
/* Read FILE, or stdin for NULL / "-". */
int sbx_manifest_load(const char *path, struct sbx_manifest *m, struct sbx_err *e);
/* Fill every unset key with its least-privilege default and resolve `auto`. */
int sbx_manifest_defaults(struct sbx_manifest *m, struct sbx_err *e);
void sbx_manifest_init(struct sbx_manifest *m);
void sbx_manifest_free(struct sbx_manifest *m);
/* Drop the state-document keys (a state document fed back as a manifest). */
void sbx_manifest_strip_state(struct sbx_manifest *m);
/* A deep copy of m (through its document tree). */
int sbx_manifest_copy(const struct sbx_manifest *m, struct sbx_manifest *out, struct sbx_err *e);
/* Do a and b ask for the same sandbox (state keys aside)? 0 yes, 1 no with key
 * the first key that differs, -1 out of memory. */
int sbx_manifest_diff(const struct sbx_manifest *a, const struct sbx_manifest *b, char *key,
    size_t size);
/* The document tree of m, state keys included when set. */
struct sbx_node *sbx_manifest_tree(const struct sbx_manifest *m);
int sbx_manifest_emit(FILE *f, const struct sbx_manifest *m, enum sbx_format fmt);
/* The trace alone ("execution_trace:" document). */
int sbx_trace_emit(FILE *f, const struct sbx_trace *t, enum sbx_format fmt);
/* The trace's fields as a map (NULL: out of memory). */
struct sbx_node *sbx_trace_tree(const struct sbx_trace *t);
void sbx_trace_init(struct sbx_trace *t);
void sbx_trace_free(struct sbx_trace *t);
/*
 * Filters of the sandbox listing (sbx-ls --filter): status=S, tier=T,
 * label:NAME=VALUE, label:NAME (has it). Check one (exit 64 naming it), and
 * whether a state document matches it (its status as the view says).
 */
int sbx_filter_check(const char *f, struct sbx_err *e);
int sbx_filter_match(const struct sbx_manifest *m, const char *f);
/* Does a rootfs value name a snapshot (not "host", not a directory)? */
int sbx_manifest_rootfs_is_snapshot(const char *rootfs);
/* Is s an absolute, normalized path (no ".", "..", "//", trailing "/")? */
int sbx_manifest_path_normal(const char *s);
/* Parse "UID[:GID]". */
int sbx_manifest_user_parse(const char *s, unsigned *uid, unsigned *gid);

#endif
