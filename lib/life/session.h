/* SPDX-License-Identifier: MIT */
/*
 * Shell sessions (sbx-run --session NAME): a persistent shell inside the
 * sandbox (bash, else sh), so that cd, exported variables and functions
 * persist between calls, as an agent's bash tool expects. The shell is one
 * run of the sandbox, held by a detached process of ours that owns its
 * stdin and stdout and listens on a socket in the sandbox's state directory
 * (sessions/NAME.sock, 0600: of the host's, never reachable from inside).
 * Each call's line is evaluated by that shell with its stdin empty, and
 * comes back with its own exit status and output. Calls take turns.
 */
#ifndef SBX_SESSION_H
#define SBX_SESSION_H

#include <stddef.h>

#include "error.h"
#include "state.h"

struct sbx_session_result {
	int status;                    /* the line's exit status ($?), or the shell's end */
	int ended;                     /* the shell is gone (the line exited it): the next call starts afresh */
	char *out, *err;               /* the first limit bytes of each */
	size_t out_len, err_len;
	unsigned long long out_total, err_total;
};

/*
 * Run line in session name of sandbox id (started if it is not running),
 * keeping limit bytes of each stream. timeout_s > 0: past it the session is
 * ended (its shell and what it runs killed) and the status is 124.
 */
int sbx_session_call(const struct sbx_store *s, const char *id, const char *name,
    const char *line, size_t limit, double timeout_s, struct sbx_session_result *r,
    struct sbx_err *e);
/* End session name of sandbox id, if it runs (its shell killed). */
int sbx_session_end(const struct sbx_store *s, const char *id, const char *name,
    struct sbx_err *e);
void sbx_session_result_free(struct sbx_session_result *r);

#endif
