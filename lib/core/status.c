/* SPDX-License-Identifier: MIT */
/* The lifecycle's names and its one table of moves. */
#include <stddef.h>
#include <string.h>

#include "status.h"
#include "util.h"

static const char *const names[] = {
	[SBX_STATUS_PROVISIONING] = "provisioning",
	[SBX_STATUS_READY] = "ready",
	[SBX_STATUS_EXECUTING] = "executing",
	[SBX_STATUS_SNAPSHOTTING] = "snapshotting",
	[SBX_STATUS_PAUSED] = "paused",
	[SBX_STATUS_CLEANUP] = "cleanup",
	[SBX_STATUS_TERMINATED] = "terminated",
	[SBX_STATUS_POOLED] = "pooled",
	[SBX_STATUS_RUNNING] = "running",
};

/*
 * Every move a tool asks for: provision (none -> provisioning -> ready, or
 * -> pooled for a warm pool's member, which its claim makes ready),
 * pause and resume (ready <-> paused; resuming a view's executing or an
 * interrupted snapshot gives ready), snapshot (ready -> snapshotting -> ready),
 * destroy and expiry (anything -> cleanup -> terminated; a terminated one is
 * cleaned up when destroyed).
 */
static const struct {
	enum sbx_status from, to;
} moves[] = {
	{ SBX_STATUS_NONE, SBX_STATUS_PROVISIONING },
	{ SBX_STATUS_PROVISIONING, SBX_STATUS_READY },
	{ SBX_STATUS_PROVISIONING, SBX_STATUS_CLEANUP },
	{ SBX_STATUS_PROVISIONING, SBX_STATUS_POOLED },
	{ SBX_STATUS_POOLED, SBX_STATUS_READY },
	{ SBX_STATUS_POOLED, SBX_STATUS_CLEANUP },
	{ SBX_STATUS_READY, SBX_STATUS_SNAPSHOTTING },
	{ SBX_STATUS_READY, SBX_STATUS_PAUSED },
	{ SBX_STATUS_READY, SBX_STATUS_CLEANUP },
	{ SBX_STATUS_EXECUTING, SBX_STATUS_READY },
	{ SBX_STATUS_EXECUTING, SBX_STATUS_CLEANUP },
	{ SBX_STATUS_SNAPSHOTTING, SBX_STATUS_READY },
	{ SBX_STATUS_SNAPSHOTTING, SBX_STATUS_CLEANUP },
	{ SBX_STATUS_PAUSED, SBX_STATUS_READY },
	{ SBX_STATUS_PAUSED, SBX_STATUS_CLEANUP },
	{ SBX_STATUS_CLEANUP, SBX_STATUS_TERMINATED },
	{ SBX_STATUS_CLEANUP, SBX_STATUS_CLEANUP },
	{ SBX_STATUS_TERMINATED, SBX_STATUS_CLEANUP },
};

const char *
sbx_status_name(enum sbx_status st)
{
	if ((size_t)st >= SBX_ARRAY_LEN(names))
		return NULL;
	return names[st];
}

int
sbx_status_parse(const char *s, enum sbx_status *st)
{
	size_t i;

	for (i = 0; i < SBX_ARRAY_LEN(names); i++)
		if (names[i] != NULL && strcmp(names[i], s) == 0) {
			*st = (enum sbx_status)i;
			return 0;
		}
	return -1;
}

int
sbx_status_may(enum sbx_status from, enum sbx_status to)
{
	size_t i;

	for (i = 0; i < SBX_ARRAY_LEN(moves); i++)
		if (moves[i].from == from && moves[i].to == to)
			return 1;
	return 0;
}

int
sbx_status_stored(enum sbx_status st)
{
	return st != SBX_STATUS_RUNNING && sbx_status_name(st) != NULL;
}
