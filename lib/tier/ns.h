/* SPDX-License-Identifier: MIT */
/*
 * The namespace tier's driver (driver.h), in three files: ns.c makes, runs,
 * freezes and destroys sandboxes; ns_upkeep.c does what the lifecycle asks
 * between those (capture a layer, watch memory, re-pin names, sweep);
 * ns_park.c keeps a runner's worker a parked entry into its sandbox. Only
 * these three include this header.
 */
#ifndef SBX_NS_H
#define SBX_NS_H

#include "driver.h"
#include "seccomp_profile.h"

int sbx_ns_capture(const struct sbx_store *s, const struct sbx_manifest *m, int fd,
    const struct sbx_pack_opts *o, struct sbx_layer_info *li, struct sbx_err *e);
int sbx_ns_memory_open(const struct sbx_store *s, const struct sbx_manifest *m);
long long sbx_ns_memory_used(int handle);
int sbx_ns_memory_pressure(int handle, double *some, double *full);
/* The sandbox's cgroup now, and its writable layer's disk use. */
int sbx_ns_usage(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_usage *u,
    struct sbx_err *e);
int sbx_ns_repin(const struct sbx_store *s, struct sbx_manifest *m, int *changed,
    struct sbx_err *e);
void sbx_ns_sweep(const struct sbx_store *s, int busy, int dry_run, sbx_driver_report report,
    void *ctx);

/* What a run's process reports through its error pipe when it fails before
 * or at its exec. */
struct sbx_ns_child_err {
	int stage;   /* 0: setup (125), 1: exec */
	int err;
	struct sbx_err e;
};

/* The caller the first to go when memory runs out, before init
 * (protect_init): through /proc/self, so before joining the sandbox's
 * mounts when the caller will not be in its PID namespace. */
int sbx_ns_run_oom(struct sbx_err *e);
/* Confine the caller as a run's command is: limits, the user's IDs and
 * capabilities, its working directory (NULL: stay), no_new_privs, Landlock,
 * and the seccomp program last. */
int sbx_ns_confine(const struct sbx_manifest *m, unsigned uid, unsigned gid,
    const char *workdir, const struct sbx_seccomp_prog *prog, struct sbx_err *e);

/*
 * A parked entry (ns_park.c): made ahead of a run by a runner's worker
 * (ns_ahead), it starts the run's command with one clone instead of a
 * fork that joins and confines itself. sbx_ns_park_can: m's runs may use
 * one; the key is what it was made for (init, user, confinement), a run
 * whose manifest gives another key does not use it.
 */
int sbx_ns_park_can(const struct sbx_manifest *m);
void sbx_ns_park_key(const struct sbx_manifest *m, unsigned char key[32]);
/* Made from initfd (init's pidfd) and nsflags (the namespaces to join, not
 * PID, which only its children enter), confined by prog; kept in a. */
int sbx_ns_park_make(const struct sbx_store *s, const struct sbx_manifest *m, int initfd,
    int nsflags, const struct sbx_seccomp_prog *prog, const unsigned char key[32],
    struct sbx_exec_ahead *a, struct sbx_err *e);
/* Has a an entry made for m's key and still there? One that is gone or
 * made for another key is dropped. */
int sbx_ns_park_kept(const struct sbx_manifest *m, struct sbx_exec_ahead *a);
/* Does a's entry serve run x of m (a runner's, with its umask; no terminal,
 * the manifest's user, stdio that is no stray terminal, the same key, still
 * there)? One that is gone
 * or made for another key is dropped. */
int sbx_ns_park_fits(const struct sbx_manifest *m, const struct sbx_exec *x,
    struct sbx_exec_ahead *a);
/* The command started through a's entry, our child (CLONE_PARENT): its PID;
 * -1: nothing was started and the run forks its own (an entry that failed
 * is dropped). The child joins the run's cgroup (cgfds, -1 for none),
 * reports through errfd and execs after a byte on gofd, as a forked run's
 * does. */
pid_t sbx_ns_park_start(struct sbx_exec_ahead *a, char *const *argv, char *const *env,
    const char *workdir, mode_t mask, const int stdio[3], const int cgfds[SBX_CG_NCTRL],
    int errfd, int gofd);
/* Ended and reaped. */
void sbx_ns_park_drop(struct sbx_exec_ahead *a);
/* Once init is gone: until no entry of sandbox id holds its namespaces. */
void sbx_ns_park_wait(const struct sbx_store *s, const char *id);

#endif
