/* SPDX-License-Identifier: MIT */
/*
 * The sandbox lifecycle (SPEC §4): provision, run, destroy, and the view of a
 * sandbox that ls and inspect print. Each step takes the sandbox's lock, moves
 * its status along the lifecycle, writes the state atomically and appends an
 * audit event; the tier's driver does the kernel work.
 */
#ifndef SBX_SANDBOX_H
#define SBX_SANDBOX_H

#include "driver.h"
#include "error.h"
#include "manifest.h"
#include "state.h"

/*
 * Create a sandbox from m (a manifest; state keys are dropped). With a
 * sandbox_id that exists, nothing is created and m becomes that sandbox's
 * state (*existed = 1). With dry_run, only defaults and checks are applied.
 */
int sbx_sandbox_provision(const struct sbx_store *s, struct sbx_manifest *m, int dry_run,
    int *existed, struct sbx_err *e);
/* Run a command in sandbox id; the trace is saved as the sandbox's last. */
int sbx_sandbox_run(const struct sbx_store *s, const char *id, const struct sbx_exec *x,
    struct sbx_exec_result *res, struct sbx_err *e);
/* Kill everything, remove kernel objects and state. A missing sandbox is exit 66. */
int sbx_sandbox_destroy(const struct sbx_store *s, const char *id, struct sbx_err *e);
/* The state document as ls and inspect show it: status reflects the kernel
 * (terminated when init is gone, expired past expires_at, executing while runs are). */
int sbx_sandbox_view(const struct sbx_store *s, const char *id, struct sbx_manifest *m,
    struct sbx_err *e);

#endif
