/* SPDX-License-Identifier: MIT */
/* Making a sandbox: see provision.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int
sbx_provision(const struct sbx_store *s, struct sbx_manifest *m, int flags,
    int *existed, struct sbx_err *e)
{
	int dry_run = flags & SBX_PROV_DRY_RUN;
	const struct sbx_policy *pol;
	const struct sbx_driver *drv;
	char id[SBX_ID_MAX + 1], defaulted[256];
	double now = sbx_realtime();
	int lock = -1, slock = -1, tries;

	*existed = 0;
	if (!dry_run)
		sbx_manifest_strip_state(m);
	/* Whoever wrote the manifest (an operator, an agent, the snapshot it came
	 * in), it gets the operator's defaults and is held to the operator's
	 * ceilings; a dry run says the same. The host's abilities are checked
	 * only by a real provision. */
	if ((pol = sbx_policy_get(s, e)) == NULL)
		return -1;
	sbx_policy_defaults(pol, s, m, defaulted, sizeof defaulted);
	if (sbx_manifest_defaults(m, e) == -1 || check_policy(pol, s, m, e) == -1)
		return -1;
	/* A seccomp policy file is read now, to say what is wrong with it before
	 * anything is made (the driver compiles it from its own read). */
	if (m->security.seccomp[0] == '/' && sbx_seccomp_check(m->security.seccomp, e) == -1)
		return sbx_err_prefix(e, "security.seccomp");
	if (dry_run)
		return 0;
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
	if (sbx_time_set(&m->created_at, now) == -1 ||
	    sbx_time_set(&m->expires_at, now + (double)m->res.max_wall_clock_s) == -1 ||
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
	}
	if (sbx_state_transition(m, SBX_STATUS_READY, e) == -1 || sbx_state_save(s, m, e) == -1) {
		struct sbx_err ignored;

		sbx_sandbox_teardown(drv, s, m, &ignored);
		goto fail;
	}
	{
		char detail[128];

		snprintf(detail, sizeof detail, "%s network_policy %s%s", m->isolation_level,
		    m->network_policy, m->rt.one_shot ? " one-shot" : "");
		(m->rt.one_shot ? sbx_audit_deferred : sbx_audit)(s, m->sandbox_id, "provision", "ok",
		    detail, NULL);
	}
	close(lock);
	return 0;
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
