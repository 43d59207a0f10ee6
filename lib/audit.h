/* SPDX-License-Identifier: MIT */
/*
 * Audit log: every lifecycle event is one JSON line in $SBX_ROOT/audit.log with
 * its time, sandbox, event, correlation ID and outcome. Each line carries the
 * hash of the line before it and its own hash, so an edit, a deletion or a
 * reordering breaks the chain where it happened.
 */
#ifndef SBX_AUDIT_H
#define SBX_AUDIT_H

#include "error.h"
#include "state.h"

/* The correlation ID of this process's events: the option, else $SBX_CORRELATION_ID,
 * else one made up for this invocation. */
void sbx_audit_set_correlation(const char *id);
const char *sbx_audit_correlation(void);
/* Append one event. detail may be NULL. Failures are reported, never fatal to callers
 * that choose to ignore them. */
int sbx_audit(const struct sbx_store *s, const char *sandbox, const char *event,
    const char *outcome, const char *detail, struct sbx_err *e);
/* The same, not synced to disk yet: the next synced event of the log makes it
 * durable too (for a one-shot, whose provision and run-end lines ride on the
 * syncs of its run-start and destroy). */
int sbx_audit_deferred(const struct sbx_store *s, const char *sandbox, const char *event,
    const char *outcome, const char *detail, struct sbx_err *e);
/* Check the chain; on damage return -1 with code 1 naming the first bad line. */
int sbx_audit_verify(const struct sbx_store *s, size_t *lines, struct sbx_err *e);

#endif
