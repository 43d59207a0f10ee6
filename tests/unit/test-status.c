/* SPDX-License-Identifier: MIT */
/* The lifecycle: names both ways, the table of moves pair by pair, and the
 * state store's use of it. */
#include <stdlib.h>

#include "manifest.h"
#include "state.h"
#include "status.h"
#include "tap.h"

#define N_STATUS (SBX_STATUS_RUNNING + 1)

/* The moves the tools make (status.c's comment says which tool makes which). */
static const enum sbx_status allowed[][2] = {
	{ SBX_STATUS_NONE, SBX_STATUS_PROVISIONING },
	{ SBX_STATUS_PROVISIONING, SBX_STATUS_READY },
	{ SBX_STATUS_PROVISIONING, SBX_STATUS_CLEANUP },
	{ SBX_STATUS_PROVISIONING, SBX_STATUS_POOLED },   /* a warm pool's member, made */
	{ SBX_STATUS_POOLED, SBX_STATUS_READY },          /* and claimed */
	{ SBX_STATUS_POOLED, SBX_STATUS_CLEANUP },        /* or retired */
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

static int
expected(enum sbx_status from, enum sbx_status to)
{
	size_t i;

	for (i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
		if (allowed[i][0] == from && allowed[i][1] == to)
			return 1;
	return 0;
}

static void
names(void)
{
	static const char *const words[] = { "provisioning", "ready", "executing", "snapshotting",
		"paused", "cleanup", "terminated", "running" };
	enum sbx_status st, back;
	size_t i;
	int good = 1;

	ok(sbx_status_name(SBX_STATUS_NONE) == NULL, "no status has no name");
	ok(sbx_status_name((enum sbx_status)N_STATUS) == NULL, "a value out of range has no name");
	for (i = 0; i < sizeof words / sizeof words[0]; i++) {
		st = SBX_STATUS_NONE;
		ok(sbx_status_parse(words[i], &st) == 0 && st != SBX_STATUS_NONE &&
		    strcmp(sbx_status_name(st), words[i]) == 0, "'%s' round-trips", words[i]);
	}
	for (st = SBX_STATUS_PROVISIONING; st < N_STATUS; st++)
		if (sbx_status_parse(sbx_status_name(st), &back) == -1 || back != st)
			good = 0;
	ok(good, "every status's name parses back to it");
	ok(sbx_status_parse("forking", &st) == -1, "forking is no status (nothing enters it)");
	ok(sbx_status_parse("merging", &st) == -1, "merging is no status (nothing enters it)");
	ok(sbx_status_parse("Ready", &st) == -1, "names are case-sensitive");
	ok(sbx_status_parse("", &st) == -1, "the empty string is no status");
	ok(!sbx_status_stored(SBX_STATUS_RUNNING), "running is never in a state document");
	ok(!sbx_status_stored(SBX_STATUS_NONE), "no status is not a stored status");
	for (st = SBX_STATUS_PROVISIONING, good = 1; st < SBX_STATUS_RUNNING; st++)
		good &= sbx_status_stored(st);
	ok(good, "every other status may be in a state document");
}

static void
table(void)
{
	enum sbx_status from, to;
	int wrong = 0, n = 0;

	for (from = SBX_STATUS_NONE; from < N_STATUS; from++)
		for (to = SBX_STATUS_NONE; to < N_STATUS; to++) {
			if (sbx_status_may(from, to) != expected(from, to)) {
				fprintf(stderr, "# %s -> %s: table says %d\n",
				    from ? sbx_status_name(from) : "(none)",
				    to ? sbx_status_name(to) : "(none)", sbx_status_may(from, to));
				wrong++;
			}
			n += sbx_status_may(from, to);
		}
	ok(wrong == 0, "the table allows exactly the moves the tools make");
	ok(n == (int)(sizeof allowed / sizeof allowed[0]), "%d moves allowed", n);
	ok(!sbx_status_may(SBX_STATUS_READY, SBX_STATUS_READY), "ready -> ready is refused");
	ok(!sbx_status_may(SBX_STATUS_TERMINATED, SBX_STATUS_READY),
	    "terminated -> ready is refused");
	ok(!sbx_status_may(SBX_STATUS_PAUSED, SBX_STATUS_SNAPSHOTTING),
	    "paused -> snapshotting is refused (a paused sandbox is snapshotted as it is)");
	for (to = SBX_STATUS_NONE, n = 0; to < N_STATUS; to++)
		n += sbx_status_may(SBX_STATUS_RUNNING, to) + sbx_status_may(to, SBX_STATUS_RUNNING);
	ok(n == 0, "running is in no move");
}

static void
transition(void)
{
	struct sbx_manifest m;
	struct sbx_err e = { 0 };

	sbx_manifest_init(&m);
	m.sandbox_id = strdup("sbx-t");
	ok(sbx_state_transition(&m, SBX_STATUS_PROVISIONING, &e) == 0 &&
	    m.status == SBX_STATUS_PROVISIONING, "none -> provisioning");
	ok(sbx_state_transition(&m, SBX_STATUS_READY, &e) == 0 && m.status == SBX_STATUS_READY,
	    "provisioning -> ready");
	ok(sbx_state_transition(&m, SBX_STATUS_READY, &e) == -1 && e.code == SBX_EX_DATAERR &&
	    strcmp(e.msg, "sandbox sbx-t is ready: cannot become ready") == 0 &&
	    m.status == SBX_STATUS_READY, "ready -> ready: exit 65, status kept (%s)", e.msg);
	m.status = SBX_STATUS_NONE;
	ok(sbx_state_transition(&m, SBX_STATUS_READY, &e) == 0,
	    "a document without status counts as provisioning");
	m.status = SBX_STATUS_NONE;
	ok(sbx_state_transition(&m, SBX_STATUS_PAUSED, &e) == -1 &&
	    strcmp(e.msg, "sandbox sbx-t is provisioning: cannot become paused") == 0,
	    "none -> paused is refused as provisioning -> paused (%s)", e.msg);
	sbx_manifest_free(&m);
}

static void
documents(void)
{
	static const char seed[] = "status: running\n", bad[] = "status: forking\n";
	struct sbx_manifest m;
	struct sbx_err e = { 0 };
	struct sbx_node *t;

	ok(sbx_manifest_parse("t.yaml", seed, strlen(seed), &m, &e) == 0 &&
	    m.status == SBX_STATUS_RUNNING, "a manifest may say running (the seed's word)");
	t = sbx_manifest_tree(&m);
	ok(t != NULL && sbx_node_get(t, "status") != NULL &&
	    strcmp(sbx_node_get(t, "status")->str, "running") == 0, "and it is written back as is");
	sbx_node_free(t);
	sbx_manifest_free(&m);
	ok(sbx_manifest_parse("t.yaml", bad, strlen(bad), &m, &e) == -1 &&
	    e.code == SBX_EX_DATAERR && strcmp(e.msg, "t.yaml:1:9: status: 'forking' is not one "
	    "of provisioning, ready, executing, snapshotting, paused, cleanup, terminated, "
	    "pooled, running") == 0, "forking is refused: %s", e.msg);
}

int
main(void)
{
	names();
	table();
	transition();
	documents();
	return done_testing();
}
