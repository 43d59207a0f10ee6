/* SPDX-License-Identifier: MIT */
/*
 * Background runs (sbx-run -d): a command that outlives its caller. A
 * detached host process of ours (its own session, no stdio of the caller's)
 * runs it as sbx_sandbox_run_capture would, so the sandbox's lifetime,
 * limits, audit and trace hold as for any run, and keeps what it wrote
 * (bounded) and its result in the sandbox's state directory:
 *   runs/RUN/run.json     run_id, sandbox_id, command, started_at, pid, pid_start
 *   runs/RUN/stdout, stderr   the first `limit` bytes of each stream
 *   runs/RUN/result.json  written last, atomically: the result object of
 *                         capture.h without the streams
 * They go with the sandbox. A run of a caller's key (sbx-run --once) is
 * named for the key and also holds once.json (the key and what the run
 * was: sandbox, command, env, workdir, user, timeout, output bound), made
 * before the run's name exists, and once.lock, held by whoever starts it.
 */
#ifndef SBX_BACKGROUND_H
#define SBX_BACKGROUND_H

#include <signal.h>
#include <stddef.h>

#include "doc.h"
#include "driver.h"
#include "error.h"
#include "id.h"
#include "state.h"

/* Start x in sandbox id in the background; run gets its ID ("run-" + 8 hex). */
int sbx_run_detach(const struct sbx_store *s, const char *id, const struct sbx_exec *x,
    size_t limit, char run[SBX_ID_MAX + 1], struct sbx_err *e);

/*
 * The run of key in sandbox id: started in the background as by
 * sbx_run_detach when the key has none, else the one it has (under way or
 * ended), whose input must be x's and limit: 65 naming what differs, the
 * sandbox among it. A run whose starter died before its supervisor began is
 * started now; two callers with one key get one run.
 */
int sbx_run_once(const struct sbx_store *s, const char *id, const char *key,
    const struct sbx_exec *x, size_t limit, char run[SBX_ID_MAX + 1], struct sbx_err *e);

struct sbx_run_result {
	struct sbx_node *result;   /* result.json's object */
	char *out, *err;           /* the streams' kept bytes */
	size_t out_len, err_len;
	int status;                /* its exit_code */
};
/*
 * Wait for run to end (timeout_s > 0: at most that long, then 75) and
 * read its result. A run whose supervisor is gone with no result is 125.
 * forward (may be NULL): a signal set there (by a handler) while waiting
 * is sent to the run (sbx_run_signal) and the field cleared.
 */
int sbx_run_wait(const struct sbx_store *s, const char *run, double timeout_s,
    volatile sig_atomic_t *forward, struct sbx_run_result *r, struct sbx_err *e);
void sbx_run_result_free(struct sbx_run_result *r);
/* Send sig (SIGINT, SIGTERM, SIGHUP: what a run passes on) to run's command. */
int sbx_run_signal(const struct sbx_store *s, const char *run, int sig, struct sbx_err *e);
/* The runs of sandbox id, oldest first: run.json's keys, state (running,
 * exited, lost) and, once ended, exit_code. */
int sbx_run_list(const struct sbx_store *s, const char *id, struct sbx_node **list,
    struct sbx_err *e);

#endif
