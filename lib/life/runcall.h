/* SPDX-License-Identifier: MIT */
/* The client's side of a sandbox's runner (runner.h): a run handed to it, and its end. */
#ifndef SBX_RUNCALL_H
#define SBX_RUNCALL_H

#include "driver.h"
#include "error.h"
#include "manifest.h"
#include "state.h"

/*
 * Run x (no terminal; its stdio, or the caller's own 0, 1 and 2) in
 * sandbox id through the sandbox's runner: 1 when the run returned 0, -1
 * when it failed (e, res->status and what res->trace holds as
 * sbx_sandbox_run fills them), 0 when no runner takes it (none, another
 * environment, a request too big): the caller runs it itself then, since
 * nothing ran.
 */
int sbx_runner_call(const struct sbx_store *s, const char *id, const struct sbx_exec *x,
    struct sbx_exec_result *res, struct sbx_err *e);
/* End m's runner, if it has one (its sandbox is being destroyed): no run
 * starts through it any more. Its return is for sbx_runner_wait, once the
 * sandbox's processes are gone: that waits (5 s at most) for the workers
 * that answer the runs that were on. */
int sbx_runner_stop(const struct sbx_store *s, const struct sbx_manifest *m);
void sbx_runner_wait(int token);
/* What a runner compares of its client's environment: the SBX_* variables
 * but SBX_ROOT and SBX_CORRELATION_ID, sorted, hashed. */
void sbx_runner_env_digest(unsigned char out[32]);

#endif
