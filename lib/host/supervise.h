/* SPDX-License-Identifier: MIT */
/*
 * The supervision loop every tier's exec hands its command to: the deadline
 * (--timeout, SIGTERM then SIGKILL after the grace; the sandbox's lifetime),
 * the caller's signals passed on, the terminal relayed and resized, and the
 * exit status sbx-run passes on (SPEC §8) with the trace's share of it.
 * Nothing here knows how the command was started: what differs between
 * tiers comes in as callbacks.
 *
 * A tier's exec: sbx_supervise_init; sbx_supervise_start just before it
 * starts the command (the trace's start time and the clock of --timeout);
 * start the command, fill pid and pidfd; sbx_supervise_catch; its own last
 * steps (the terminal's master, say); sbx_supervise_run; the figures it
 * alone can read; sbx_supervise_release.
 */
#ifndef SBX_SUPERVISE_H
#define SBX_SUPERVISE_H

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "error.h"
#include "manifest.h"

struct sbx_supervise {
	/* The command's process: signalled with kill(2) and reaped with wait4(2)
	 * unless the callbacks below say otherwise. */
	pid_t pid;
	/* Readable once the command has ended: its pidfd, or an agent's
	 * connection. The caller opens and closes it. */
	int pidfd;
	/* The terminal's master (sbx-run -t), relayed to stdin and stdout; -1:
	 * none. The loop sets it to -1 when it closed it; the caller closes
	 * what is left. */
	int master;
	/* The caller's channel when it is another process (a sandbox's runner
	 * serves sbx-run): each byte read is a signal to pass on (SIGINT,
	 * SIGTERM, SIGHUP); its end is the caller gone, and the run ends with
	 * it (SIGKILL). -1: none. The caller opens and closes it. */
	int ctl;
	double timeout_s;        /* 0: none */
	double kill_after_s;     /* grace between SIGTERM and SIGKILL at the timeout; 0: SIGKILL */
	double lifetime_s;       /* seconds until the sandbox expires; 0: none */
	/* The sandbox's own end (sbx_realtime), enforced by the tier as well:
	 * a SIGKILL at or after it is the lifetime's, not the command's. 0: none. */
	double expires_at;

	/* Optional callbacks, each given ctx. */
	void *ctx;
	/* Send sig to the command; NULL: kill(pid, sig). */
	int (*signal)(void *ctx, int sig);
	/* Before the SIGKILL at a deadline: end whatever the command started
	 * (the namespace tier kills the run's cgroup). */
	void (*kill_all)(void *ctx);
	/* Reap the command once pidfd is readable; NULL: wait4(pid). Fills the
	 * wait(2) status and, if it can, the resource use; -1 with e filled
	 * when the command's end cannot be known (the run then fails, 125). */
	int (*wait)(void *ctx, int *status, struct rusage *ru, struct sbx_err *e);
	/* Did the tier fail to start the command (its setup, the exec)? Then 1
	 * with e filled (e->code the status: 125, 126, 127); else 0. */
	int (*failed)(void *ctx, struct sbx_err *e);

	/* Filled by sbx_supervise_start and sbx_supervise_run. */
	double t0;               /* sbx_monotonic() at the start */
	int wait_status;         /* as wait(2) reported it */
	struct rusage ru;        /* the command's, from wait4; zero from a wait callback that has none */

	/* Private. */
	int caught;
	struct sigaction old[4];
};

/* No process, no terminal, no deadline, no callbacks. */
void sbx_supervise_init(struct sbx_supervise *sv);
/* The command starts now: t's start_time and the clock of the deadlines. */
void sbx_supervise_start(struct sbx_supervise *sv, struct sbx_trace *t);
/* The command is pid, a child of ours: its pidfd and PID kept in sv; on
 * failure it is killed and reaped (-1, e filled). */
int sbx_supervise_adopt(struct sbx_supervise *sv, pid_t pid, struct sbx_err *e);
/* From here SIGINT, SIGTERM and SIGHUP are held for the command, which the
 * loop passes them to, and SIGWINCH resizes its terminal. */
void sbx_supervise_catch(struct sbx_supervise *sv);
/*
 * Relay and watch until the command ends, then reap it. Fills *status (what
 * sbx-run exits with: the command's status, 128+N for a signal, 124 at the
 * timeout, 137 when the sandbox expired) and t's elapsed_s, exit_code,
 * signal, timed_out and kill_reason. -1 (e filled, *status its code) when
 * failed says the command never ran, or wait failed.
 */
int sbx_supervise_run(struct sbx_supervise *sv, int *status, struct sbx_trace *t,
    struct sbx_err *e);
/*
 * The same signals caught for good, by a process whose one work is a run
 * still to come (a background run's supervisor): one that comes before the
 * run's loop does not end the process, and goes to the command when the
 * loop begins.
 */
void sbx_supervise_hold(void);
/*
 * Around the fork of the command's process. The child inherits the catching
 * of sbx_supervise_catch or _hold, and a signal meant for it that came before
 * its exec would be caught there and lost: the caught signals are held back
 * from before the fork (_fork_begin) until the child has reset them to their
 * defaults (_fork_child, its first step) or, in the parent, until the child
 * exists to be passed them (_fork_end).
 */
void sbx_supervise_fork_begin(sigset_t *old);
void sbx_supervise_fork_child(const sigset_t *old);
void sbx_supervise_fork_end(const sigset_t *old);
/* A signal caught for the command and not passed on yet (then no longer
 * pending), or 0: for a caller that relays the command's signals itself. */
int sbx_supervise_pending(void);
/* The caller's signal dispositions back, as before sbx_supervise_catch. */
void sbx_supervise_release(struct sbx_supervise *sv);

#endif
