/* SPDX-License-Identifier: MIT */
/*
 * One driver per isolation tier. The lifecycle (sandbox.c, snap.c, fork.c,
 * gc.c, watchdog.c) calls only these; a tier's kernel or VM details stay in
 * its driver. An operation a tier leaves NULL is one it cannot do: the
 * lifecycle answers exit 69 naming it (sbx_driver_cannot), never a weaker
 * substitute. `namespace`, `oci` (runc, crun, runsc) and `microvm` (QEMU)
 * are built.
 */
#ifndef SBX_DRIVER_H
#define SBX_DRIVER_H

#include <stddef.h>
#include <sys/types.h>

#include "cgroup.h"
#include "error.h"
#include "layer.h"
#include "manifest.h"
#include "state.h"

struct sbx_exec_result;
struct sbx_driver;

/*
 * A run's preparation done ahead of it and its clearing away done after its
 * answer, off the critical path: a runner's worker keeps one across its runs
 * and has sbx_sandbox_ahead fill it while it waits for a client; the next run
 * takes what it holds (x->ahead) and leaves there what the worker clears.
 * The namespace tier keeps the next run's cgroup here, made and opened, the
 * last run's, emptied, to remove, and a parked entry into the sandbox.
 * Tier-owned but for drv, which the lifecycle sets.
 */
struct sbx_exec_ahead {
	const struct sbx_driver *drv;
	unsigned seq;
	int have_next, have_spent;
	struct sbx_cgroup next, spent;
	int next_fds[SBX_CG_NCTRL];
	/* The namespace tier's parked entry (ns_park.c): its process, our end
	 * of its channel, and what it was made for; made once the worker has
	 * run a command (runs). */
	unsigned runs;
	int have_park, park_fd;
	int park_pid;
	unsigned char park_key[32];
	/* The host's cgroup layout, read once by the worker. */
	int have_host;
	struct sbx_cg_host host;
	/* Set by the lifecycle: the sandbox waits in a warm pool. */
	int pooled;
};

struct sbx_exec {
	char *const *argv;
	char *const *env;        /* extra KEY=VALUE, after the manifest's env */
	size_t n_env;
	const char *workdir;     /* NULL: the manifest's */
	const char *user;        /* NULL: the manifest's */
	int tty;                 /* allocate a terminal in the sandbox */
	/* The command's stdin, stdout and stderr; NULL: the caller's own 0, 1
	 * and 2 (with tty, the terminal). Not with tty. */
	const int *stdio;
	double timeout_s;        /* 0: none */
	double kill_after_s;     /* grace between SIGTERM and SIGKILL on timeout; 0: SIGKILL */
	double lifetime_s;       /* set by the lifecycle: seconds until the sandbox expires */
	/* Set by the lifecycle: called once the command's process is made and
	 * while it sets itself up; the command execs only after it returns (the
	 * run-start audit line is synced meanwhile, not before the fork). */
	void (*starting)(void *ctx);
	void *starting_ctx;
	/* A runner's: its client's channel (sbx_supervise's ctl), above 2; 0:
	 * none. */
	int ctl;
	/* A runner's: run here, not through the sandbox's runner again. */
	int in_runner;
	/* A runner's: the command's umask, its client's (the worker's own is
	 * set to it for the run too, for a command it forks). */
	int has_umask;
	mode_t umask;
	/* A runner's: called once the command's end and figures are known
	 * and written down (r: the exec's return, e its error), before the
	 * run-end audit line is synced: its client need not wait for that. */
	void (*ended)(void *ctx, int r, const struct sbx_exec_result *res, const struct sbx_err *e);
	void *ended_ctx;
	/* A runner's worker's: what was made ahead of this run (NULL: none). */
	struct sbx_exec_ahead *ahead;
};

struct sbx_exec_result {
	int status;              /* the exit status sbx-run passes on (SPEC §8) */
	struct sbx_trace trace;
};

/* What a live sandbox uses now (sbx-inspect --usage); -1: unknown. */
struct sbx_usage {
	long long memory_bytes, pids, disk_bytes;
	double cpu_s;            /* since the sandbox was made */
};

/* Called for what a sweep removes (or would): kind, then its name. */
typedef void (*sbx_driver_report)(void *ctx, const char *kind, const char *name);

struct sbx_driver {
	const char *name;
	/* Can this host enforce everything m asks for? Exit 69 naming what it cannot. */
	int (*check)(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e);
	/* Create the kernel objects; keep what the tier needs later in its runtime
	 * state (sbx_rt_set_*). On failure nothing is left behind. */
	int (*create)(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e);
	/* Run a command; result->status is set whenever the command was started. */
	int (*exec)(const struct sbx_store *s, const struct sbx_manifest *m,
	    const struct sbx_exec *x, struct sbx_exec_result *res, struct sbx_err *e);
	/* Are the sandbox's kernel objects there? */
	int (*alive)(const struct sbx_manifest *m);
	/* Freeze (1) or thaw (0) every process of the sandbox. */
	int (*freeze)(const struct sbx_manifest *m, int frozen, struct sbx_err *e);
	/* Kill everything and remove the kernel objects; missing ones are fine. */
	int (*destroy)(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e);
	/* Kill every process of the sandbox and return once the commands' are
	 * all dead, the kernel objects and files left to destroy (a one-shot's
	 * end, whose caller need not wait for those); the tier's own process
	 * (init, the VMM) may still be on its way out, which destroy waits for.
	 * NULL: destroy does both. */
	int (*halt)(const struct sbx_manifest *m, struct sbx_err *e);
	/* Fill a (sbx_exec_ahead) for m's next run and clear what the last one
	 * left there; with m NULL, clear it all. Best effort: a run finds what
	 * it needs made or makes it. NULL: nothing to do ahead. */
	void (*ahead)(const struct sbx_store *s, const struct sbx_manifest *m,
	    struct sbx_exec_ahead *a);
	/* A warm pool's new member made ready for its claimer's first run,
	 * before it is claimable; nothing of it shows in the sandbox's runs or
	 * their traces. Best effort. NULL: nothing to do. */
	void (*warm)(const struct sbx_store *s, const struct sbx_manifest *m);

	/* Pack the sandbox's writable layer, frozen or stopped, to fd in the
	 * layer format (layer.h), owners as the sandbox sees them: an overlay's
	 * upper directory here, `runsc tar rootfs-upper` or a disk image's
	 * files elsewhere. */
	int (*capture)(const struct sbx_store *s, const struct sbx_manifest *m, int fd,
	    const struct sbx_pack_opts *o, struct sbx_layer_info *li, struct sbx_err *e);
	/* capture writes the whole writable layer over the base root, also for
	 * a sandbox made from a snapshot (sbx_snapshot_capture's whole). */
	int whole_layer;
	/* Whether this sandbox's memory can be checkpointed (NULL: never). */
	int (*can_checkpoint)(const struct sbx_manifest *m);
	/* Write the memory and device state of the frozen sandbox into dir (an
	 * empty directory of the caller's), to be restored later. The sandbox
	 * is stopped there (nothing of it runs or writes) until restart. */
	int (*checkpoint)(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
	    struct sbx_err *e);
	/* The sandbox stopped at its checkpoint in dir goes on from it; its
	 * runtime state (m) updated for the caller to save. */
	int (*restart)(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
	    struct sbx_err *e);
	/* Create from a checkpoint (restore is a form of create: a new container
	 * or VMM process loads dir); as create otherwise. */
	int (*restore)(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
	    struct sbx_err *e);
	/* For the watchdog: a handle on the sandbox's memory use (-1: none now;
	 * the caller closes it), and the bytes in use read through it (-1: unknown).
	 * NULL: the tier has no host-side view that memory_mb bounds (microvm),
	 * and the watchdog watches none. */
	int (*memory_open)(const struct sbx_store *s, const struct sbx_manifest *m);
	long long (*memory_used)(int handle);
	/* Through the same handle, the share of the last 10 s in which some and
	 * all of the sandbox's tasks stalled on memory (PSI); -1 where the
	 * kernel keeps no such figure (cgroup v1, no PSI). May be NULL. */
	int (*memory_pressure)(int handle, double *some, double *full);
	/* The sandbox's lifetime ends seconds later than it did: tell what
	 * enforces it inside (NULL: nothing there does; the watchdog rereads the
	 * state). */
	int (*extend)(const struct sbx_manifest *m, double seconds, struct sbx_err *e);
	/* What the sandbox uses now. */
	int (*usage)(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_usage *u,
	    struct sbx_err *e);
	/* Resolve the allow-list's host names again and pin what changed (the
	 * sandbox's /etc/hosts, the rules, the relay); *changed says whether
	 * anything did and m->rt.egress_pins holds the new pins. */
	int (*repin)(const struct sbx_store *s, struct sbx_manifest *m, int *changed,
	    struct sbx_err *e);
	/* After the lifecycle has saved repin's new pins: tell what reads them
	 * from the state (may be NULL). */
	void (*repinned)(const struct sbx_manifest *m);
	/* Remove what this tier left behind that no sandbox of s owns any more
	 * (kernel objects, networks, shared trees). With busy set, a sandbox is
	 * being made: leave what it may be about to use. */
	void (*sweep)(const struct sbx_store *s, int busy, int dry_run, sbx_driver_report report,
	    void *ctx);
};

extern const struct sbx_driver sbx_driver_namespace;
extern const struct sbx_driver sbx_driver_oci;
extern const struct sbx_driver sbx_driver_microvm;

/* Every driver this build has, NULL-terminated. */
extern const struct sbx_driver *const sbx_drivers[];

/* The driver for m->isolation_level, or exit 69 for tiers this build lacks. */
const struct sbx_driver *sbx_driver_for(const struct sbx_manifest *m, struct sbx_err *e);
/* In the command's process before it execs: x->stdio onto 0, 1 and 2 (none
 * when NULL). */
int sbx_exec_stdio(const struct sbx_exec *x, struct sbx_err *e);
/* Exit 69: this tier cannot do what (an operation it leaves NULL). */
int sbx_driver_cannot(const struct sbx_driver *d, const char *what, struct sbx_err *e);
/* A halt (and a teardown's first step) for tiers whose runtime state's pid
 * (init, the VMM: what) takes every process of the sandbox with it: SIGKILL
 * it and wait until it is gone; 71 naming what if it is not. */
int sbx_driver_halt_pid(const struct sbx_manifest *m, const char *what, struct sbx_err *e);

#endif
