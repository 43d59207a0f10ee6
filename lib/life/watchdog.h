/* SPDX-License-Identifier: MIT */
/*
 * The watchdog: enforcement from outside the sandbox. It kills a sandbox at
 * the end of its lifetime (max_wall_clock_s) and records kill_reason
 * wall-clock, and it warns (audit events) when a sandbox's memory crosses 80%
 * and 95% of its hard limit. It runs outside every sandbox namespace, so
 * nothing inside can see, signal or trace it. One runs per sandbox (started by
 * provision), or one for a whole state root (--all), or a single sweep (--once).
 */
#ifndef SBX_WATCHDOG_H
#define SBX_WATCHDOG_H

#include "error.h"
#include "manifest.h"
#include "state.h"

struct sbx_wd_opts {
	const char *id;          /* one sandbox; NULL: all of the state root */
	int once;                /* one sweep, then return */
	double poll_s;           /* memory sampling interval (default 0.1 s) */
	/* all: called before each look for new sandboxes (once a second), for
	 * the caller's own upkeep (sbx-watchdog keeps the warm pools there). */
	void (*tick)(void *ctx);
	void *tick_ctx;
};

/* Supervise until the sandbox is gone (one), forever (all), or one sweep (once). */
int sbx_watchdog(const struct sbx_store *s, const struct sbx_wd_opts *o, struct sbx_err *e);
/* Start a detached watchdog for m and record it in m->rt (the caller saves m). */
int sbx_watchdog_spawn(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e);

#endif
