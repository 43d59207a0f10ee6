/* SPDX-License-Identifier: MIT */
/* Making a sandbox: see provision.h. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit.h"
#include "id.h"
#include "policy.h"
#include "provision.h"
#include "remote.h"
#include "runner.h"
#include "s3.h"
#include "sandbox.h"
#include "seccomp_profile.h"
#include "snapshot.h"
#include "util.h"
#include "watchdog.h"

/* Snapshots live in the state root; a manifest naming another store is refused
 * rather than have its snapshots silently land elsewhere. */
static int
check_backend(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	const char *b = m->snapshot.storage_backend;
	char here[1100];

	if (b == NULL)
		return 0;
	if (sbx_remote_is_s3(b)) {
		struct sbx_s3 c;

		/* Its credentials and libcurl are checked now, not at the first snapshot. */
		if (sbx_s3_open(&c, b, e) == -1)
			return sbx_err_prefix(e, "snapshot.storage_backend");
		sbx_s3_close(&c);
		return 0;
	}
	snprintf(here, sizeof here, "file://%s/snapshots", s->root);
	if (strcmp(b, here) == 0 || (strncmp(b, here, strlen(here)) == 0 &&
	    strcmp(b + strlen(here), "/") == 0))
		return 0;
	return sbx_err_set(e, SBX_EX_UNAVAILABLE, "snapshot.storage_backend %s: snapshots are kept "
	    "in the state root (%s) or in an s3:// store", b, here);
}

/* The policy's verdict on m; a root made from a snapshot is judged by the
 * base the snapshot's chain stacks on, which came with the snapshot. */
static int
check_policy(const struct sbx_policy *pol, const struct sbx_store *s,
    const struct sbx_manifest *m, struct sbx_err *e)
{
	struct sbx_snapshot sn;
	int r;

	if (!sbx_manifest_rootfs_is_snapshot(m->rootfs))
		return sbx_policy_check(pol, s, m, m->rootfs, e);
	if (sbx_snapshot_load(s, m->rootfs, &sn, e) == -1)
		return sbx_err_prefix(e, "rootfs %s", m->rootfs);
	r = sbx_policy_check(pol, s, m, sn.base_rootfs, e);
	sbx_snapshot_free(&sn);
	return r;
}

/*
 * Idempotent: a retried provision (the same sandbox_id, the same manifest
 * once defaults are in) gets the sandbox it made before, and m becomes its
 * state. The same ID with another manifest is the caller's mistake (65).
 */
static int
provisioned(const struct sbx_store *s, struct sbx_manifest *m, int *existed, struct sbx_err *e)
{
	struct sbx_manifest old;
	char key[256];
	int d;

	if (sbx_sandbox_view(s, m->sandbox_id, &old, e) == -1)
		return -1;
	/* What the sandbox was made with; the view's status is not its manifest. */
	if ((d = sbx_manifest_diff(m, &old, key, sizeof key)) != 0) {
		sbx_manifest_free(&old);
		if (d == -1)
			return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		return sbx_err_set(e, SBX_EX_DATAERR, "sandbox_id %s exists with another manifest: "
		    "%s differs (destroy it first, or choose another ID)", m->sandbox_id, key);
	}
	sbx_manifest_free(m);
	*m = old;
	*existed = 1;
	return 0;
}

/*
 * A sandbox_id whose provision was killed midway (its directory without a
 * state, or a state still provisioning) while no tool holds its lock: its
 * remains go, as the sweep's would, so that the repeat makes it whole
 * instead of returning it half-made. 75 while a provision of it is at work.
 */
static int
reclaim(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	struct sbx_manifest m;
	struct sbx_err one;
	char dir[1200];
	int lock, r;

	if (sbx_store_path(s, id, NULL, dir, sizeof dir, e) == -1)
		return -1;
	if (access(dir, F_OK) == -1)
		return 0;
	if (sbx_sandbox_view(s, id, &m, &one) == 0) {
		r = m.status == SBX_STATUS_PROVISIONING;
		sbx_manifest_free(&m);
		if (!r)
			return 0;
	} else if (one.code != SBX_EX_NOINPUT) {
		return 0;  /* what is wrong with it, provisioned() says */
	}
	if ((lock = sbx_store_lock(s, id, 1, 0, e)) == -1)
		return e->code == SBX_EX_TEMPFAIL ? sbx_err_set(e, SBX_EX_TEMPFAIL, "sandbox %s is "
		    "being created by another tool", id) : -1;
	if (sbx_store_exists(s, id)) {
		close(lock);
		r = sbx_sandbox_destroy(s, id, e);
	} else {
		r = sbx_store_remove(s, id, e);
		close(lock);
	}
	return r == -1 ? sbx_err_prefix(e, "the remains of an interrupted provision of %s", id) : 0;
}

/* A host that cannot enforce a limit the manifest never asked for (the
 * policy's default): say where it came from and how to do without. */
static int
unenforceable(const struct sbx_store *s, const char *defaulted, struct sbx_err *e)
{
	size_t n = strlen(e->msg);

	if (e->code == SBX_EX_UNAVAILABLE && defaulted[0] && n < sizeof e->msg)
		snprintf(e->msg + n, sizeof e->msg - n, " (the manifest left them to the policy's "
		    "defaults: %s; where this host cannot enforce a default, the operator sets it "
		    "null under defaults: in %s/policy.yaml, see sbx-policy(5))", defaulted, s->root);
	return -1;
}

/*
 * Make the sandbox: from a snapshot's memory checkpoint when it has one its
 * tier wrote (oci/runsc), where the processes it held go on; else fresh.
 */
static int
create(const struct sbx_store *s, const struct sbx_driver *drv, struct sbx_manifest *m,
    struct sbx_err *e)
{
	struct sbx_snapshot sn;
	char dir[1200], tier[1200];
	const char *rt = m->runtime ? strrchr(m->runtime, '/') : NULL;
	int r;

	if (!sbx_manifest_rootfs_is_snapshot(m->rootfs) || drv->restore == NULL)
		return drv->create(s, m, e);
	if (sbx_snapshot_load(s, m->rootfs, &sn, e) == -1)
		return -1;
	snprintf(tier, sizeof tier, "%s/%s", m->isolation_level, rt ? rt + 1 : m->runtime ?
	    m->runtime : m->isolation_level);
	if (!sn.has_memory || sn.memory_tier == NULL || strcmp(sn.memory_tier, tier) != 0) {
		sbx_snapshot_free(&sn);
		return drv->create(s, m, e);
	}
	r = sbx_snapshot_memory_dir(s, &sn, dir, sizeof dir, e) == -1 ? -1 :
	    drv->restore(s, m, dir, e);
	sbx_snapshot_free(&sn);
	return r;
}

/*
 * m as the policy makes it (its defaults in, held to its ceilings); defaulted
 * gets what the defaults filled. A pool's key and a claim are of this form.
 */
static int
prepare(const struct sbx_store *s, const struct sbx_policy *pol, struct sbx_manifest *m,
    char *defaulted, size_t size, struct sbx_err *e)
{
	sbx_policy_defaults(pol, s, m, defaulted, size);
	if (sbx_manifest_defaults(m, e) == -1 || check_policy(pol, s, m, e) == -1)
		return -1;
	/* A seccomp policy file is read now, to say what is wrong with it before
	 * anything is made (the driver compiles it from its own read). */
	if (m->security.seccomp[0] == '/' && sbx_seccomp_check(m->security.seccomp, e) == -1)
		return sbx_err_prefix(e, "security.seccomp");
	return 0;
}

static const struct sbx_pool_conf *
pool_named(const struct sbx_policy *pol, const char *name)
{
	const struct sbx_pool_conf *pc;
	size_t n = sbx_policy_pools(pol, &pc), i;

	for (i = 0; name != NULL && i < n; i++)
		if (strcmp(pc[i].name, name) == 0)
			return &pc[i];
	return NULL;
}

/*
 * A claim's refill: one member made in the background, detached like the
 * watchdog, so that the claim returns now. Its failure is the audit log's.
 */
static void
refill_later(const struct sbx_store *s, const struct sbx_pool_conf *pc)
{
	struct sbx_err e;
	char id[SBX_ID_MAX + 1], title[64];

	if (fork() != 0)
		return;
	(void)sbx_detach(-1);
	snprintf(title, sizeof title, "sbx-pool-refill %s", pc->name);
	sbx_proc_title(title);
	if (sbx_provision_member(s, pc, 0, id, sizeof id, &e) == -1)
		sbx_audit(s, NULL, "pool-refill", "error", e.msg, NULL);
	_exit(0);
}

/*
 * Claim member id of the pool keyed key for m: 1 claimed (m becomes its
 * state, made ready, its lifetime starting now), 0 not this one (taken by
 * another, busy or gone), -1 e. Taking the member's pools/KEY/ID under its
 * lock is the claim; a claimer that dies after leaves a pooled sandbox with
 * no entry, which the sweep removes.
 */
static int
claim_one(const struct sbx_store *s, const struct sbx_policy *pol, const char *key,
    const char *id, struct sbx_manifest *m, int flags, struct sbx_err *e)
{
	const struct sbx_pool_conf *pc;
	const struct sbx_driver *drv;
	struct sbx_manifest got;
	struct sbx_err one;
	char digest[65], detail[160];
	double now;
	int lock;

	if ((lock = sbx_store_lock(s, id, 1, 0, &one)) == -1) {
		if (one.code == SBX_EX_NOINPUT)
			(void)sbx_store_pool_take(s, key, id);   /* destroyed meanwhile */
		return 0;
	}
	if (sbx_state_load(s, id, &got, &one) == -1) {
		close(lock);
		return 0;
	}
	/* A member whose init died is nobody's to give: the sweep takes it. */
	if (got.status != SBX_STATUS_POOLED || got.rt.pool_key == NULL ||
	    (drv = sbx_driver_for(&got, NULL)) == NULL || !drv->alive(&got) ||
	    strcmp(got.rt.pool_key, key) != 0 || sbx_manifest_digest(&got, digest) == -1 ||
	    strcmp(digest, key) != 0 ||
	    sbx_store_pool_take(s, key, id) == -1) {
		sbx_manifest_free(&got);
		close(lock);
		return 0;
	}
	sbx_crash_point("pool-claim");
	/*
	 * Its move to ready is not synced (sbx(7)): a host crash ends the
	 * member, and the sweep removes it, pooled or ready on the disk; the
	 * claim's audit line is the record, synced.
	 */
	now = sbx_realtime();
	pc = pool_named(pol, got.rt.pool);
	snprintf(detail, sizeof detail, "%s network_policy %s%s from pool %s", got.isolation_level,
	    got.network_policy, flags & SBX_PROV_ONE_SHOT ? " one-shot" : "", got.rt.pool);
	free(got.rt.pool);
	free(got.rt.pool_key);
	got.rt.pool = got.rt.pool_key = NULL;
	got.rt.one_shot = (flags & SBX_PROV_ONE_SHOT) != 0;
	if (sbx_time_set(&got.created_at, now) == -1 ||
	    sbx_time_set(&got.expires_at, now + (double)got.res.max_wall_clock_s) == -1 ||
	    sbx_state_transition(&got, SBX_STATUS_READY, e) == -1 ||
	    sbx_state_save_nosync(s, &got, e) == -1) {
		/* Its entry is gone: the sweep takes it. */
		sbx_manifest_free(&got);
		close(lock);
		return -1;
	}
	(got.rt.one_shot ? sbx_audit_deferred : sbx_audit)(s, id, "provision", "ok", detail, NULL);
	close(lock);
	/* Its watchdog reads the lifetime the claim set now, not at the idle deadline. */
	if (got.rt.watchdog_pid > 0 && sbx_proc_starttime((pid_t)got.rt.watchdog_pid) ==
	    (unsigned long long)got.rt.watchdog_start_ticks)
		kill((pid_t)got.rt.watchdog_pid, SIGURG);
	sbx_manifest_free(m);
	*m = got;
	if (pc != NULL && pc->refill_on_claim)
		refill_later(s, pc);
	return 1;
}

/* A member of the warm pool whose manifest is m's, claimed: 1, else 0 (or -1 e). */
static int
claim(const struct sbx_store *s, const struct sbx_policy *pol, struct sbx_manifest *m,
    int flags, struct sbx_err *e)
{
	const struct sbx_pool_conf *pc;
	char key[65], **ids;
	size_t n, i;
	int r = 0;

	if (sbx_policy_pools(pol, &pc) == 0)
		return 0;
	if (sbx_manifest_digest(m, key) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if (sbx_store_pool_list(s, key, &ids, &n, e) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if (r == 0)
			r = claim_one(s, pol, key, ids[i], m, flags, e);
		free(ids[i]);
	}
	free(ids);
	return r;
}

static int provision(const struct sbx_store *s, struct sbx_manifest *m, int flags,
    const struct sbx_pool_conf *pool, int *existed, struct sbx_err *e);

int
sbx_provision(const struct sbx_store *s, struct sbx_manifest *m, int flags,
    int *existed, struct sbx_err *e)
{
	return provision(s, m, flags, NULL, existed, e);
}

/* pc's manifest, read; a pool's members get IDs of their own. */
static int
pool_manifest(const struct sbx_pool_conf *pc, struct sbx_manifest *m, struct sbx_err *e)
{
	if (sbx_manifest_load(pc->manifest, m, e) == -1)
		return sbx_err_prefix(e, "pool %s: manifest", pc->name);
	if (m->sandbox_id != NULL) {
		sbx_manifest_free(m);
		return sbx_err_set(e, SBX_EX_DATAERR, "pool %s: manifest %s names a sandbox_id; a "
		    "pool's members get IDs of their own", pc->name, pc->manifest);
	}
	return 0;
}

int
sbx_provision_key(const struct sbx_store *s, const struct sbx_pool_conf *pc, char key[65],
    struct sbx_err *e)
{
	const struct sbx_policy *pol;
	struct sbx_manifest m;
	char defaulted[256];
	int r;

	if ((pol = sbx_policy_get(s, e)) == NULL || pool_manifest(pc, &m, e) == -1)
		return -1;
	sbx_manifest_strip_state(&m);
	r = prepare(s, pol, &m, defaulted, sizeof defaulted, e);
	if (r == -1)
		sbx_err_prefix(e, "pool %s: manifest %s", pc->name, pc->manifest);
	else if ((r = sbx_manifest_digest(&m, key)) == -1)
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	sbx_manifest_free(&m);
	return r;
}

int
sbx_provision_member(const struct sbx_store *s, const struct sbx_pool_conf *pc, int flags,
    char *id, size_t size, struct sbx_err *e)
{
	struct sbx_manifest m;
	int existed, r;

	if (pool_manifest(pc, &m, e) == -1)
		return -1;
	r = provision(s, &m, flags & SBX_PROV_NO_WATCHDOG, pc, &existed, e);
	if (r == -1)
		sbx_err_prefix(e, "pool %s", pc->name);
	else
		snprintf(id, size, "%s", m.sandbox_id);
	sbx_manifest_free(&m);
	return r;
}

static int
provision(const struct sbx_store *s, struct sbx_manifest *m, int flags,
    const struct sbx_pool_conf *pool, int *existed, struct sbx_err *e)
{
	int dry_run = flags & SBX_PROV_DRY_RUN;
	const struct sbx_policy *pol;
	const struct sbx_driver *drv;
	char id[SBX_ID_MAX + 1], defaulted[256], key[65];
	double now = sbx_realtime();
	int lock = -1, slock = -1, tries, r;

	*existed = 0;
	if (!dry_run)
		sbx_manifest_strip_state(m);
	/* Whoever wrote the manifest (an operator, an agent, the snapshot it came
	 * in), it gets the operator's defaults and is held to the operator's
	 * ceilings; a dry run says the same. The host's abilities are checked
	 * only by a real provision. */
	if ((pol = sbx_policy_get(s, e)) == NULL)
		return -1;
	if (prepare(s, pol, m, defaulted, sizeof defaulted, e) == -1)
		return -1;
	if (dry_run)
		return 0;
	/* A warm pool's member made from this very manifest, where one waits. */
	if (m->sandbox_id == NULL && pool == NULL && (r = claim(s, pol, m, flags, e)) != 0)
		return r == 1 ? 0 : -1;
	if (pool != NULL && sbx_manifest_digest(m, key) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if (m->sandbox_id != NULL && reclaim(s, m->sandbox_id, e) == -1)
		return -1;
	if (m->sandbox_id != NULL && sbx_store_exists(s, m->sandbox_id))
		return provisioned(s, m, existed, e);
	if ((drv = sbx_driver_for(m, e)) == NULL || drv->check(s, m, e) == -1 ||
	    check_backend(s, m, e) == -1)
		return unenforceable(s, defaulted, e);
	if (m->sandbox_id != NULL) {
		if ((lock = sbx_store_create(s, m->sandbox_id, e)) == -1)
			return -1;
	} else {
		for (tries = 0; lock == -1 && tries < 16; tries++) {
			if (sbx_id_new("sbx-", id, sizeof id, e) == -1)
				return -1;
			lock = sbx_store_create(s, id, e);
			if (lock == -1 && e->code != SBX_EX_TEMPFAIL)
				return -1;
		}
		if (lock == -1 || (m->sandbox_id = strdup(id)) == NULL)
			return sbx_err_set(e, SBX_EX_CANTCREAT, "cannot allocate a sandbox ID");
	}
	sbx_crash_point("provision-dir");
	sbx_store_unmark_gone(s, m->sandbox_id);
	/* A pool's member lives max_idle_s unclaimed; its claim starts its lifetime. */
	if (sbx_time_set(&m->created_at, now) == -1 ||
	    sbx_time_set(&m->expires_at, now + (double)(pool ? pool->max_idle_s :
	    m->res.max_wall_clock_s)) == -1 ||
	    sbx_state_transition(m, SBX_STATUS_PROVISIONING, e) == -1 || sbx_state_save(s, m, e) == -1)
		goto fail;
	sbx_crash_point("provision-state");
	/* A root made from a snapshot: retention must not take the snapshot meanwhile. */
	if (sbx_manifest_rootfs_is_snapshot(m->rootfs) && (slock = sbx_snapshot_lock(s, 0, e)) == -1)
		goto fail;
	if (create(s, drv, m, e) == -1) {
		unenforceable(s, defaulted, e);
		goto fail;
	}
	m->rt.one_shot = (flags & SBX_PROV_ONE_SHOT) != 0;
	if (slock != -1) {
		close(slock);
		slock = -1;
	}
	sbx_crash_point("provision-created");
	/* The watchdog only reads the state, so it may start before it is saved. */
	if (!(flags & (SBX_PROV_NO_WATCHDOG | SBX_PROV_ONE_SHOT)) && sbx_watchdog_spawn(s, m, e) == -1) {
		struct sbx_err ignored;

		sbx_sandbox_teardown(drv, s, m, &ignored);
		goto fail;
	}
	sbx_crash_point("provision-watchdog");
	/* sbx-run's fast way in; without it, sbx-run does the runs itself. */
	if (!(flags & SBX_PROV_ONE_SHOT)) {
		struct sbx_err ignored;

		(void)sbx_runner_spawn(s, m, &ignored);
		sbx_pause_point("provision-runner");
	}
	/* A member's tier readies it for its claimer's first run. */
	if (pool != NULL && drv->warm != NULL)
		drv->warm(s, m);
	if (pool != NULL && ((m->rt.pool = strdup(pool->name)) == NULL ||
	    (m->rt.pool_key = strdup(key)) == NULL)) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto undo;
	}
	if (sbx_state_transition(m, pool ? SBX_STATUS_POOLED : SBX_STATUS_READY, e) == -1 ||
	    sbx_state_save(s, m, e) == -1)
		goto undo;
	/* Claimable once its entry is there, and not before. */
	if (pool != NULL && sbx_store_pool_add(s, key, m->sandbox_id, e) == -1)
		goto undo;
	{
		char detail[128];

		snprintf(detail, sizeof detail, "%s network_policy %s%s%s%s", m->isolation_level,
		    m->network_policy, m->rt.one_shot ? " one-shot" : "", pool ? " pooled in " : "",
		    pool ? pool->name : "");
		(m->rt.one_shot ? sbx_audit_deferred : sbx_audit)(s, m->sandbox_id, "provision", "ok",
		    detail, NULL);
	}
	close(lock);
	return 0;
undo:
	{
		struct sbx_err ignored;

		sbx_sandbox_teardown(drv, s, m, &ignored);
	}
fail:
	{
		struct sbx_err saved = *e, ignored;

		sbx_audit(s, m->sandbox_id, "provision", "error", saved.msg, NULL);
		sbx_store_remove(s, m->sandbox_id, &ignored);
		*e = saved;
	}
	if (slock != -1)
		close(slock);
	close(lock);
	return -1;
}
