/* SPDX-License-Identifier: MIT */
/* Warm pools kept full and fresh: see pool.h. */
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "pool.h"
#include "provision.h"
#include "sandbox.h"
#include "util.h"

struct keeper {
	const struct sbx_store *s;
	sbx_pool_report_fn report;
	void *ctx;
	struct sbx_err *e;
	int failed;
};

static void
said(struct keeper *k, const char *pool, const char *id, const char *what)
{
	if (k->report != NULL)
		k->report(k->ctx, pool, id, what);
}

/* The first failure is the one named (a refiller that runs every second
 * says it, not the audit log). */
static void
failed(struct keeper *k, const char *id, const struct sbx_err *one)
{
	if (!k->failed)
		*k->e = *one;
	k->failed = 1;
}

static void
retire(struct keeper *k, const char *pool, const char *id, const char *why)
{
	struct sbx_err one;
	int r = sbx_sandbox_retire(k->s, id, why, &one);

	if (r == 1)
		said(k, pool, id, why);
	else if (r == -1)
		failed(k, id, &one);
}

/* The members of key still unclaimed and fresh: how many. */
static size_t
count(struct keeper *k, const struct sbx_pool_conf *pc, const char *key)
{
	struct sbx_manifest m;
	struct sbx_err one;
	char **ids;
	size_t n, i, live = 0;
	double until;

	if (sbx_store_pool_list(k->s, key, &ids, &n, &one) == -1) {
		failed(k, NULL, &one);
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (sbx_state_load(k->s, ids[i], &m, &one) == -1) {
			/* Destroyed without its entry (a crash midway): the entry goes. */
			if (one.code == SBX_EX_NOINPUT)
				(void)sbx_store_pool_take(k->s, key, ids[i]);
			free(ids[i]);
			continue;
		}
		if (m.status != SBX_STATUS_POOLED) {
			(void)sbx_store_pool_take(k->s, key, ids[i]);
		} else if (m.expires_at != NULL && sbx_time_parse(m.expires_at, &until) == 0 &&
		    sbx_realtime() >= until) {
			retire(k, pc ? pc->name : m.rt.pool, ids[i], "pool-idle");
		} else if (pc == NULL) {
			retire(k, m.rt.pool, ids[i], "pool-gone");
		} else if (live >= (size_t)pc->size) {
			retire(k, pc->name, ids[i], "pool-size");
		} else {
			live++;
		}
		sbx_manifest_free(&m);
		free(ids[i]);
	}
	free(ids);
	return live;
}

/* Pooled sandboxes out of every pool: their claim died midway. */
static void
sweep(struct keeper *k)
{
	struct sbx_manifest m;
	struct sbx_err one;
	char **ids;
	size_t n, i;

	if (sbx_store_list(k->s, &ids, &n, &one) == -1) {
		failed(k, NULL, &one);
		return;
	}
	for (i = 0; i < n; i++) {
		if (sbx_state_load(k->s, ids[i], &m, &one) == 0) {
			if (m.status == SBX_STATUS_POOLED && (m.rt.pool_key == NULL ||
			    !sbx_store_pool_has(k->s, m.rt.pool_key, ids[i])))
				retire(k, m.rt.pool, ids[i], "orphan");
			sbx_manifest_free(&m);
		}
		free(ids[i]);
	}
	free(ids);
}

int
sbx_pools_tend(const struct sbx_store *s, int flags, sbx_pool_report_fn report, void *ctx,
    struct sbx_err *e)
{
	struct keeper k = { s, report, ctx, e, 0 };
	const struct sbx_policy *pol;
	const struct sbx_pool_conf *pc;
	struct sbx_err one;
	char (*keys)[65] = NULL, **dirs, id[SBX_ID_MAX + 1];
	size_t np, i, j, n, live;

	if ((pol = sbx_policy_get(s, e)) == NULL)
		return -1;
	np = sbx_policy_pools(pol, &pc);
	if (np > 0 && (keys = calloc(np, sizeof *keys)) == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	for (i = 0; i < np; i++) {
		if (sbx_provision_key(s, &pc[i], keys[i], &one) == -1) {
			keys[i][0] = '\0';
			failed(&k, NULL, &one);
			continue;
		}
		live = count(&k, &pc[i], keys[i]);
		while ((flags & SBX_POOLS_FILL) && live < (size_t)pc[i].size) {
			if (sbx_provision_member(s, &pc[i], flags & SBX_POOLS_NO_WATCHDOG ?
			    SBX_PROV_NO_WATCHDOG : 0, id, sizeof id, &one) == -1) {
				failed(&k, NULL, &one);
				break;
			}
			said(&k, pc[i].name, id, "made");
			live++;
		}
	}
	/* Keys no pool has now: a pool removed, or its manifest changed. */
	if (sbx_store_pool_list(s, NULL, &dirs, &n, &one) == -1) {
		failed(&k, NULL, &one);
	} else {
		for (j = 0; j < n; j++) {
			for (i = 0; i < np && strcmp(keys[i], dirs[j]) != 0; i++)
				;
			if (i == np) {
				count(&k, NULL, dirs[j]);
				sbx_store_pool_prune(s, dirs[j]);
			}
			free(dirs[j]);
		}
		free(dirs);
	}
	if (flags & SBX_POOLS_SWEEP)
		sweep(&k);
	free(keys);
	return k.failed ? -1 : 0;
}
