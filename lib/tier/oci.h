/* SPDX-License-Identifier: MIT */
/*
 * The OCI tier's driver (driver.h), in three files: oci.c checks, makes,
 * freezes and destroys; oci_config.c writes the bundle's config.json;
 * oci_run.c mounts the root and has runc make the container, runs commands
 * (runc exec) and tears down and sweeps. Only these include this header.
 */
#ifndef SBX_OCI_H
#define SBX_OCI_H

#include "driver.h"
#include "rootfs.h"

/* Where sbx-guest-exec is installed (the Makefile's LIBEXECDIR). */
#ifndef SBX_LIBEXEC
#define SBX_LIBEXEC "/usr/local/libexec/sbx"
#endif

/* The roots' mount points, empty directories the container's root can walk. */
#define OCI_MNT "/run/sbx-oci"
/* Inside the container: sbx-guest-exec (exec) and the seccomp programs
 * (seccomp, seccomp-ctty) it loads before each run's command. */
#define OCI_GUEST "/dev/.sbx"

enum oci_kind { OCI_RUNC, OCI_CRUN, OCI_RUNSC, OCI_KATA };

/* Host tasks gVisor's sandbox has of its own (Go's threads, about 60 idle
 * here), added to a pids limit under runsc. */
#define OCI_RUNSC_TASKS 128

/* Where a sandbox's runtime and files are. */
struct oci_paths {
	enum oci_kind kind;     /* runtime_state.oci.runtime */
	char runtime[1100];     /* the runtime's binary (runtime_state.oci.runtime_path) */
	char platform_flag[32]; /* runsc: --platform=... (runtime_state.oci.platform) */
	char network_flag[32];  /* runsc: --network=none or host */
	char root[1100];        /* its --root: the state root's oci/ */
	char bundle[1200];      /* the sandbox's directory's bundle/ (config.json) */
	char log[1300];         /* the runtime's JSON log of create and start */
	char mnt[200];          /* OCI_MNT/<group>/<id>: in create's own mount
				 * namespace a tmpfs with the root and its layers */
	char rootfs[256];       /* mnt/rootfs, an empty directory on the host */
	char netns[1300];       /* runsc with an allow-list: the network namespace
				 * its sandbox joins, bound at "netns" in the
				 * sandbox's directory; "" otherwise */
};

int oci_paths(const struct sbx_store *s, const struct sbx_manifest *m, struct oci_paths *p,
    struct sbx_err *e);

/* oci_runtime.c: the runtimes and how each is called */
extern char *const oci_runtime_env[];
const char *oci_kind_name(enum oci_kind k);
int oci_kind_parse(const char *name);
/* A runtime by name in the system's directories: 0 and its path, or -1. */
int oci_find(const char *name, char *path, size_t size);
/* The runtime the manifest names (want): p->runtime and p->kind, or 69. */
int oci_runtime(const char *want, struct oci_paths *p, struct sbx_err *e);
/* gVisor's platform on this host: "kvm" where /dev/kvm opens, else "ptrace". */
const char *oci_runsc_platform(void);
/* The runtime's argv up to its command: binary, --root (if p->root is set),
 * its own global flags; NULL-terminated, returns how many (cap >= 8). */
size_t oci_argv(const struct oci_paths *p, const char **v, size_t cap);
/* In a child about to exec the runtime's verb: what the runtime needs to see
 * of the host (crun: the cgroup2 mount covered; runsc's start with its
 * network stack: /proc/sys/net), in a mount namespace of its own, made
 * here unless unshared. 0, or -1 with errno. */
int oci_child_prepare(const struct oci_paths *p, const char *verb, int unshared);
/* Run the runtime with args: its exit status (128+N for a signal, -1: it
 * could not run); its stdout into out, stderr into err (either NULL). */
int oci_call(const struct oci_paths *p, const char *const *args, char *out, size_t outsz,
    char *err, size_t errsz);
/* The same for a sandbox's runtime and root: 0, or 71 with what it said. */
int oci_do(const struct oci_paths *p, const char *const *args, char *out, size_t outsz,
    struct sbx_err *e);
/* The last error of a runtime's JSON log (--log-format json), or "". */
void oci_log_error(const char *log, char *msg, size_t size);

/* The bundle's config.json, from the manifest; cgpath is linux.cgroupsPath. */
int oci_write_config(const struct sbx_store *s, const struct sbx_manifest *m,
    const struct sbx_lowers *lw, const struct oci_paths *p, const char *cgpath,
    struct sbx_err *e);
/* Mount the root (a mount namespace of its own) and have the runtime create
 * the container there, or with ckpt set restore it from that checkpoint
 * (runsc: restore --detach, which starts it). */
int oci_make(const struct sbx_store *s, const struct sbx_manifest *m,
    const struct sbx_lowers *lw, const struct oci_paths *p, const char *ckpt,
    struct sbx_err *e);
/* p->netns: a new network namespace bound there (in the host's mount namespace). */
int oci_netns_make(const struct oci_paths *p, struct sbx_err *e);
/* The container's init is the last the memory limit's OOM killer takes. */
void oci_protect_init(pid_t pid);
/* Kill and delete the container, its cgroup and bundle; missing ones are fine. */
int oci_teardown(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e);
int oci_exec(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_exec *x,
    struct sbx_exec_result *res, struct sbx_err *e);
void oci_sweep(const struct sbx_store *s, int busy, int dry_run, sbx_driver_report report,
    void *ctx);

#endif
