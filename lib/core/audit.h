/* SPDX-License-Identifier: MIT */
/*
 * Audit log: every lifecycle event is one JSON line in $SBX_ROOT/audit.log with
 * its time, sandbox, event, correlation ID and outcome. Each line carries the
 * hash of the line before it and its own hash, so an edit, a deletion or a
 * reordering breaks the chain where it happened. The chain's head (the last
 * synced line's number, hash and end) is kept in $SBX_ROOT/audit.head, so a
 * log cut short shows too. With an operator's key (kept outside the state
 * root), each line and the head also carry an HMAC-SHA256: whoever can write
 * the state root but not read the key cannot rewrite the log unseen. Each
 * line may also go to a syslog socket, off the state root (journald, rsyslog).
 */
#ifndef SBX_AUDIT_H
#define SBX_AUDIT_H

#include <stddef.h>

#include "error.h"
#include "state.h"

#define SBX_AUDIT_KEY_DEFAULT "/etc/sbx/audit.key"

/*
 * Read this process's audit settings (the key, the syslog socket) and check
 * them: every tool calls it once the store is open (before it acts), so a bad
 * setting stops it there.
 * Appends and verification read them on first use otherwise.
 */
int sbx_audit_open(const struct sbx_store *s, struct sbx_err *e);
/* The correlation ID of this process's events: the option, else $SBX_CORRELATION_ID,
 * else one made up for this invocation. */
void sbx_audit_set_correlation(const char *id);
const char *sbx_audit_correlation(void);
/* Append one event. detail may be NULL. Failures are reported, never fatal to callers
 * that choose to ignore them; -1 also when the line was written but the syslog
 * sink refused it (e says so). */
int sbx_audit(const struct sbx_store *s, const char *sandbox, const char *event,
    const char *outcome, const char *detail, struct sbx_err *e);
/* The same, not synced to disk yet: the next synced event of the log makes it
 * durable too (for a one-shot, whose provision and run-end lines ride on the
 * syncs of its run-start and destroy). The head record waits for that event. */
int sbx_audit_deferred(const struct sbx_store *s, const char *sandbox, const char *event,
    const char *outcome, const char *detail, struct sbx_err *e);

/* Make the deferred lines durable now, and the head record name the last. */
int sbx_audit_sync(const struct sbx_store *s, struct sbx_err *e);

struct sbx_audit_report {
	size_t lines;           /* lines in the log, every one checked */
	size_t keyed;           /* lines carrying a mac */
	int key;                /* 1: macs checked with the key; 0: no key to check them */
	long long head;         /* the line the head record names (0: an empty log) */
};
/*
 * Check the chain, the macs (with the key) and the head record; on damage
 * return -1 with code 1 naming the first problem (a line, a missing or
 * mismatching head, a log shorter than its head).
 */
int sbx_audit_verify(const struct sbx_store *s, struct sbx_audit_report *r, struct sbx_err *e);

#endif
