/* SPDX-License-Identifier: MIT */
/*
 * A sandbox's runner: a process of the host beside the sandbox (started
 * with it, ended with it) that runs sbx-run's commands in it, so that a run
 * pays for neither the start of a full program nor its state and policy
 * reading. It serves its sandbox alone, on a unix socket in the sandbox's
 * state directory that only the state root's owner reaches, and answers
 * only clients of the host's own user and mount namespaces: nothing inside
 * a sandbox can connect to it, see it (it is outside the sandbox's PID
 * namespace) or signal it.
 *
 * The runner is a manager and its workers: one worker waits for a client
 * at any time; the one that takes it tells the manager, which forks the
 * next at once, so that no client waits for a fork. Each worker runs a
 * command as sbx-run would (sbx_sandbox_run), with the client's stdio
 * (passed over the socket), its extra variables, working directory, user,
 * timeout and umask; the client's SIGINT, SIGTERM and SIGHUP reach the
 * command, and the command ends (SIGKILL) when its client does. The
 * client has its answer once the run's end and figures are known; the
 * audit line's sync comes after it.
 *
 * A client whose SBX_* environment (but SBX_ROOT and SBX_CORRELATION_ID)
 * differs from the runner's is told to run the command itself: the
 * runner's settings are its starter's.
 */
#ifndef SBX_RUNNER_H
#define SBX_RUNNER_H

#include "error.h"
#include "manifest.h"
#include "state.h"

/* Start m's runner (a made sandbox): m->rt.runner_pid and _start_ticks
 * set. A runner that cannot start leaves sbx-run to do the work. The
 * client's side is runcall.h. */
int sbx_runner_spawn(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e);

#endif
