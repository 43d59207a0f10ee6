/* SPDX-License-Identifier: MIT */
/*
 * Progress of a verb's long work, and its interruption.
 *
 * Progress: a verb is a run of phases (freeze, pack, save...), each with
 * what it has done of its total, in a unit (bytes, sandboxes, layers).
 * Shown on stderr, for this process: as JSON lines for a supervisor (a
 * Temporal or Restate activity's heartbeat), one when a phase begins, at
 * most five a second while it goes on, and a last one at 100% when the
 * verb has succeeded; or as a bar on a terminal, once the work has taken
 * a second. The overall percent counts each planned phase as an equal share.
 *
 * Interruption: SIGINT and SIGTERM are caught and only noted; the verb's
 * work checks at its safe points (sbx_interrupt_check) and fails there as
 * from any error, undoing what it half did, with the status a shell gives
 * a process the signal ended (130, 143).
 */
#ifndef SBX_PROGRESS_H
#define SBX_PROGRESS_H

#include "error.h"

enum sbx_progress_mode { SBX_PROGRESS_NONE, SBX_PROGRESS_BAR, SBX_PROGRESS_JSON };

/* "json", "bar" or "none"; -1 for another. */
int sbx_progress_parse(const char *s, enum sbx_progress_mode *mode);
/* Progress of verb, planned in phases phases, shown as mode from now on. */
void sbx_progress_start(enum sbx_progress_mode mode, const char *verb, int phases);
/* The next phase begins: total (-1: not known) of unit. */
void sbx_progress_phase(const char *phase, long long total, const char *unit);
/* n more of the phase's unit done; sbx_progress_set: done so far. */
void sbx_progress_add(long long n);
void sbx_progress_set(long long done);
/* Done so far: the last sbx_progress_set's and part more (one transfer's). */
void sbx_progress_part(long long part);
/* The verb has ended: its last line (ok: phase "done" at 100%, else "failed"). */
void sbx_progress_end(int ok);
/* Whether lines are being written as JSON (a transfer's own bar then stays off). */
int sbx_progress_json(void);

/* Catch SIGINT and SIGTERM from now on, noting them. */
void sbx_interrupt_catch(void);
/* The signal noted, or 0. */
int sbx_interrupted(void);
/* 0, or -1 with e's code 128 + the signal and a message saying so. */
int sbx_interrupt_check(struct sbx_err *e);

#endif
