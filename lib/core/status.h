/* SPDX-License-Identifier: MIT */
/*
 * The lifecycle (SPEC §4, sbx(7) LIFECYCLE): a sandbox's status, its names in
 * the state document, and the one table of moves between them.
 *
 * The state store writes provisioning, pooled, ready, snapshotting, paused,
 * cleanup and terminated. A view (sbx_sandbox_view) also derives two without a write:
 * executing (ready, runs in progress) and terminated (init gone, or lifetime
 * over); the moves out of executing exist because callers act on a view.
 * forking and merging (SPEC §4) are states nothing enters: a fork of a live
 * sandbox and the merge step (sbx_fork_select) snapshot it, so it is
 * snapshotting meanwhile; children are provisioned, losers destroyed.
 */
#ifndef SBX_STATUS_H
#define SBX_STATUS_H

enum sbx_status {
	SBX_STATUS_NONE = 0,          /* no status key */
	SBX_STATUS_PROVISIONING,
	SBX_STATUS_READY,
	SBX_STATUS_EXECUTING,
	SBX_STATUS_SNAPSHOTTING,
	SBX_STATUS_PAUSED,
	SBX_STATUS_CLEANUP,
	SBX_STATUS_TERMINATED,
	/* A warm pool's member (sbx-policy(5) pools): made, not yet claimed. */
	SBX_STATUS_POOLED,
	/* "running", the seed documents' word (SPEC §3: the seed's example is
	 * accepted as it stands): read in a manifest, where status is ignored;
	 * never written, refused in a state document, in no move. */
	SBX_STATUS_RUNNING,
};

/* The document's word for st; NULL for SBX_STATUS_NONE or a value out of range. */
const char *sbx_status_name(enum sbx_status st);
/* The status named s: 0, or -1 when no status has that name. */
int sbx_status_parse(const char *s, enum sbx_status *st);
/* Does the lifecycle move from `from` to `to`? (NONE -> provisioning starts it.) */
int sbx_status_may(enum sbx_status from, enum sbx_status to);
/* May a state document hold st (any named status but the seed's "running")? */
int sbx_status_stored(enum sbx_status st);

#endif
