/* SPDX-License-Identifier: MIT */
/* Terminals for `sbx-run -t`: a pty made inside the sandbox, relayed by the caller. */
#ifndef SBX_PTY_H
#define SBX_PTY_H

#include "error.h"

/* In the sandbox (after joining its mount namespace): open a pty from its devpts,
 * send the master over sock, make the slave our controlling terminal and stdio. */
int sbx_pty_child(int sock, struct sbx_err *e);
/* In the caller: receive the master fd from sock. */
int sbx_pty_recv(int sock, struct sbx_err *e);
/* Does the command's stdio (fds: its 0, 1 and 2; NULL: the caller's own)
 * hold a terminal that is no session's controlling terminal? A command that
 * is a session leader could take it (TIOCSCTTY). */
int sbx_pty_stray(const int *fds);
/* Put the caller's terminal (fd 0) in raw mode; sbx_pty_restore undoes it. */
void sbx_pty_raw(void);
void sbx_pty_restore(void);
/* Copy the caller's window size to the master. */
void sbx_pty_winsize(int master);
/* Copy stdin to master and master to stdout, once, for what poll reported.
 * Returns -1 when the master has closed. */
int sbx_pty_pump(int master, int stdin_ready, int master_ready, int *stdin_open);

#endif
