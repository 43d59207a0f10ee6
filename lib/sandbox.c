/* SPDX-License-Identifier: MIT */
/* The sandbox lifecycle: provision, run, destroy, view. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "id.h"
#include "net.h"
#include "policy.h"
#include "remote.h"
#include "seccomp_profile.h"
#include "s3.h"
#include "sandbox.h"
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

int
sbx_sandbox_provision(const struct sbx_store *s, struct sbx_manifest *m, int flags,
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
	if (sbx_time_set(&m->created_at, now) == -1 ||
	    sbx_time_set(&m->expires_at, now + (double)m->res.max_wall_clock_s) == -1 ||
	    sbx_state_transition(m, SBX_STATUS_PROVISIONING, e) == -1 || sbx_state_save(s, m, e) == -1)
		goto fail;
	sbx_crash_point("provision-state");
	/* A root made from a snapshot: retention must not take the snapshot meanwhile. */
	if (sbx_manifest_rootfs_is_snapshot(m->rootfs) &&
	    (slock = sbx_snapshot_lock(s, 0, e)) == -1)
		goto fail;
	if (drv->create(s, m, e) == -1) {
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

		drv->destroy(s, m, &ignored);
		goto fail;
	}
	sbx_crash_point("provision-watchdog");
	if (sbx_state_transition(m, SBX_STATUS_READY, e) == -1 || sbx_state_save(s, m, e) == -1) {
		struct sbx_err ignored;

		drv->destroy(s, m, &ignored);
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

/* Lock sandbox id (shared or exclusive, waiting) and read its state (as stored,
 * or as the view reports it). Returns the lock fd; on failure nothing is held. */
static int
lock_and_load(const struct sbx_store *s, const char *id, int exclusive, int view,
    struct sbx_manifest *m, struct sbx_err *e)
{
	int lock;

	if ((lock = sbx_store_lock(s, id, exclusive, 1, e)) == -1)
		return -1;
	if ((view ? sbx_sandbox_view(s, id, m, e) : sbx_state_load(s, id, m, e)) == -1) {
		close(lock);
		return -1;
	}
	return lock;
}

static int
expired(const struct sbx_manifest *m)
{
	double t;

	return m->expires_at && sbx_time_parse(m->expires_at, &t) == 0 && sbx_realtime() >= t;
}

/*
 * Live runs hold a shared lock on runs.lock while their command runs, so the
 * status can say "executing": a lock the kernel drops with the process, and
 * no file to make and remove per run.
 */
static int
live_runs(const struct sbx_store *s, const char *id)
{
	char p[1200];
	int fd, busy;

	if (sbx_store_path(s, id, "runs.lock", p, sizeof p, NULL) == -1 ||
	    (fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return 0;
	busy = flock(fd, LOCK_EX | LOCK_NB) == -1 && errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

/*
 * The last run's trace lives beside the state, in trace.yaml, rewritten in
 * place under a lock: no state to parse and write again, no new file per run.
 * Best effort both ways: a trace that cannot be written or read is left out.
 */
static void
save_trace(const struct sbx_store *s, const char *id, const struct sbx_trace *t)
{
	char p[1200], *buf = NULL;
	size_t len = 0;
	FILE *f;
	int fd, r;

	if (sbx_store_path(s, id, "trace.yaml", p, sizeof p, NULL) == -1 ||
	    (f = open_memstream(&buf, &len)) == NULL)
		return;
	r = sbx_trace_emit(f, t, SBX_FMT_YAML);
	if (fclose(f) == 0 && r == 0 &&
	    (fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) != -1) {
		/* Over the old trace, then cut to length: its block stays allocated
		 * (truncating to 0 first would free it and allocate it again). */
		if (flock(fd, LOCK_EX) == 0 && sbx_write_all(fd, buf, len) == 0 &&
		    ftruncate(fd, (off_t)len) == -1)
			(void)unlink(p);   /* a trace with a stale tail: none rather than that */
		close(fd);
	}
	free(buf);
}

static void
load_trace(const struct sbx_store *s, const char *id, struct sbx_manifest *m)
{
	struct sbx_manifest t;
	struct sbx_err ignored;
	char p[1200];
	int fd;

	if (sbx_store_path(s, id, "trace.yaml", p, sizeof p, NULL) == -1 ||
	    (fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
	/* Shared: never a half-written trace (a torn one from a crash fails to parse). */
	if (flock(fd, LOCK_SH) == 0 && sbx_manifest_load(p, &t, &ignored) == 0) {
		if (t.has_trace) {
			sbx_trace_free(&m->trace);
			m->trace = t.trace;
			m->has_trace = 1;
			sbx_trace_init(&t.trace);
		}
		sbx_manifest_free(&t);
	}
	close(fd);
}

int
sbx_sandbox_view(const struct sbx_store *s, const char *id, struct sbx_manifest *m,
    struct sbx_err *e)
{
	const struct sbx_driver *drv;
	enum sbx_status st = SBX_STATUS_NONE;

	if (sbx_state_load(s, id, m, e) == -1)
		return -1;
	load_trace(s, id, m);
	if (m->status == SBX_STATUS_NONE || m->status == SBX_STATUS_TERMINATED ||
	    m->status == SBX_STATUS_PROVISIONING || m->status == SBX_STATUS_CLEANUP)
		return 0;
	if ((drv = sbx_driver_for(m, NULL)) != NULL && !drv->alive(m))
		st = SBX_STATUS_TERMINATED;
	else if (expired(m))
		st = SBX_STATUS_TERMINATED;
	else if (m->status == SBX_STATUS_READY && live_runs(s, id) > 0)
		st = SBX_STATUS_EXECUTING;
	/* Its lifetime ended it, whoever did the killing (the watchdog records
	 * that; with none, init leaves at the deadline on its own). */
	if (st == SBX_STATUS_TERMINATED && m->kill_reason == NULL &&
	    expired(m) && (m->kill_reason = strdup("wall-clock")) == NULL)
		goto oom;
	if (st != SBX_STATUS_NONE)
		m->status = st;
	return 0;
oom:
	sbx_manifest_free(m);
	return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
}

static int run_locked(const struct sbx_store *s, const char *id, const struct sbx_manifest *mp,
    const struct sbx_driver *drv, const struct sbx_exec *x, struct sbx_exec_result *res,
    int lock, struct sbx_err *e);

void
sbx_sandbox_kill_text(const char *reason, const struct sbx_manifest *m, char *buf, size_t size)
{
	const struct sbx_resources *r = &m->res;

	if (strcmp(reason, "memory") == 0)
		snprintf(buf, size, "memory limit of %lld MiB reached", r->memory_mb);
	else if (strcmp(reason, "wall-clock") == 0)
		snprintf(buf, size, "lifetime of %lld s (max_wall_clock_s) ran out",
		    r->max_wall_clock_s);
	else if (strcmp(reason, "pids") == 0)
		snprintf(buf, size, "pids limit of %lld reached", r->pids);
	else if (strcmp(reason, "disk") == 0)
		snprintf(buf, size, "disk limit of %lld MiB reached", r->disk_mb);
	else
		snprintf(buf, size, "kill_reason %s", reason);
}

/* Why m cannot run a command now, and what to do about it. */
static int
not_ready(const struct sbx_manifest *m, struct sbx_err *e)
{
	char why[160];

	if (m->status == SBX_STATUS_PAUSED)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "sandbox is paused; resume it with "
		    "sbx-pause -r %s", m->sandbox_id);
	if (m->status == SBX_STATUS_TERMINATED && m->kill_reason != NULL) {
		sbx_sandbox_kill_text(m->kill_reason, m, why, sizeof why);
		return sbx_err_set(e, SBX_EX_RUNFAIL, "sandbox is terminated: %s; destroy it "
		    "with sbx-gc %s", why, m->sandbox_id);
	}
	if (m->status == SBX_STATUS_TERMINATED)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "sandbox is terminated (its init is gone); "
		    "destroy it with sbx-gc %s", m->sandbox_id);
	return sbx_err_set(e, SBX_EX_RUNFAIL, "sandbox is %s, not ready",
	    sbx_status_name(m->status));
}

int
sbx_sandbox_run(const struct sbx_store *s, const char *id, const struct sbx_exec *x,
    struct sbx_exec_result *res, struct sbx_err *e)
{
	const struct sbx_driver *drv;
	struct sbx_manifest m;
	int lock, r;

	res->status = SBX_EX_RUNFAIL;
	sbx_trace_init(&res->trace);
	if ((lock = lock_and_load(s, id, 0, 0, &m, e)) == -1)
		return -1;
	if (m.status != SBX_STATUS_READY && m.status != SBX_STATUS_EXECUTING) {
		if (m.status == SBX_STATUS_NONE)
			sbx_err_set(e, SBX_EX_RUNFAIL, "sandbox has no status");
		else
			not_ready(&m, e);
		goto out;
	}
	if (expired(&m)) {
		sbx_err_set(e, SBX_EX_RUNFAIL, "sandbox expired at %s (max_wall_clock_s); "
		    "destroy it with sbx-gc", m.expires_at);
		goto out;
	}
	if ((drv = sbx_driver_for(&m, e)) == NULL)
		goto out;
	{
		struct sbx_exec bounded = *x;
		double until;

		if (m.expires_at && sbx_time_parse(m.expires_at, &until) == 0)
			bounded.lifetime_s = until - sbx_realtime();
		r = run_locked(s, id, &m, drv, &bounded, res, lock, e);
	}
	sbx_manifest_free(&m);
	return r;
out:
	sbx_manifest_free(&m);
	if (lock != -1)
		close(lock);
	return -1;
}

struct run_start {
	const struct sbx_store *s;
	const char *id, *cmd;
	int audit;       /* 0: not yet, 1: written */
};

static void
audit_start(void *ctx)
{
	struct run_start *r = ctx;

	r->audit = 1;
	sbx_audit(r->s, r->id, "run-start", "ok", r->cmd, NULL);
}

/* The part of a run after its checks; lock is the shared lock taken by the caller. */
static int
run_locked(const struct sbx_store *s, const char *id, const struct sbx_manifest *mp,
    const struct sbx_driver *drv, const struct sbx_exec *x, struct sbx_exec_result *res,
    int lock, struct sbx_err *e)
{
	char runlock[1200], detail[128];
	struct run_start start = { s, id, x->argv[0], 0 };
	struct sbx_exec rx;
	int r, fd = -1;

	/* Shared: any number of runs at once; the status probe's exclusive try
	 * holds it for an instant at most. */
	if (sbx_store_path(s, id, "runs.lock", runlock, sizeof runlock, NULL) == 0 &&
	    (fd = open(runlock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) != -1)
		flock(fd, LOCK_SH);
	/* Runs do not hold the sandbox's lock while the command runs: destroy must not wait. */
	close(lock);
	/* The run-start line is synced by the driver's call while the command's
	 * process sets itself up, before the command execs. */
	rx = *x;
	rx.starting = audit_start;
	rx.starting_ctx = &start;
	r = drv->exec(s, mp, &rx, res, e);
	if (!start.audit)
		sbx_audit_deferred(s, id, "run-start", "ok", x->argv[0], NULL);
	if (fd != -1)
		close(fd);
	snprintf(detail, sizeof detail, "exit %d", res->status);
	(mp->rt.one_shot ? sbx_audit_deferred : sbx_audit)(s, id, "run-end", r == 0 ? "ok" :
	    "error", r == 0 ? detail : e->msg, NULL);
	/* A one-shot's sandbox goes next: its trace is the caller's to keep. */
	if (r == 0 && !mp->rt.one_shot)
		save_trace(s, id, &res->trace);
	return r;
}

int
sbx_sandbox_pause(const struct sbx_store *s, const char *id, int pause, struct sbx_err *e)
{
	const struct sbx_driver *drv;
	struct sbx_manifest m;
	int lock, r = -1;

	if ((lock = lock_and_load(s, id, 1, 1, &m, e)) == -1)
		return -1;
	/* The view says executing while runs go on; the stored state says ready. */
	if (pause && m.status == SBX_STATUS_EXECUTING)
		m.status = SBX_STATUS_READY;
	if ((drv = sbx_driver_for(&m, e)) == NULL ||
	    sbx_state_transition(&m, pause ? SBX_STATUS_PAUSED : SBX_STATUS_READY, e) == -1)
		goto out;
	/* Record the paused state before freezing and thaw before recording ready:
	 * a crash in between leaves a sandbox marked paused that is not frozen
	 * (a resume fixes it), never a frozen one marked ready. */
	if (pause) {
		if (sbx_state_save(s, &m, e) == -1)
			goto out;
		sbx_crash_point("pause-saved");
		if (drv->freeze(&m, 1, e) == -1) {
			struct sbx_err ignored;

			m.status = SBX_STATUS_READY;
			sbx_state_save(s, &m, &ignored);
			goto out;
		}
	} else {
		if (drv->freeze(&m, 0, e) == -1)
			goto out;
		sbx_crash_point("resume-thawed");
		if (sbx_state_save(s, &m, e) == -1)
			goto out;
	}
	r = 0;
out:
	sbx_audit(s, id, pause ? "pause" : "resume", r == 0 ? "ok" : "error", r == 0 ? NULL : e->msg,
	    NULL);
	sbx_manifest_free(&m);
	close(lock);
	return r;
}

int
sbx_sandbox_expire(const struct sbx_store *s, const char *id, const char *reason,
    struct sbx_err *e)
{
	const struct sbx_driver *drv;
	struct sbx_manifest m;
	int lock, r = -1;
	char *why;

	if ((lock = lock_and_load(s, id, 1, 0, &m, e)) == -1)
		return -1;
	if (m.status == SBX_STATUS_TERMINATED) {
		r = 0;    /* someone was first */
		goto out;
	}
	if ((drv = sbx_driver_for(&m, e)) == NULL || sbx_state_transition(&m, SBX_STATUS_CLEANUP, e) == -1)
		goto out;
	if (drv->destroy(s, &m, e) == -1)
		goto out;
	if ((why = strdup(reason)) == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	free(m.kill_reason);
	m.kill_reason = why;
	if (sbx_state_transition(&m, SBX_STATUS_TERMINATED, e) == -1 || sbx_state_save(s, &m, e) == -1)
		goto out;
	r = 0;
	sbx_audit(s, id, "kill", "ok", reason, NULL);
out:
	sbx_manifest_free(&m);
	close(lock);
	return r;
}

int
sbx_sandbox_egress_refresh(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	struct sbx_manifest m;
	char detail[512] = "";
	size_t i;
	int lock, r = -1, changed = 0;

	if ((lock = lock_and_load(s, id, 1, 0, &m, e)) == -1)
		return -1;
	if (!m.has_rt || sbx_net_refresh(s, &m, &changed, e) == -1 ||
	    (changed && sbx_state_save(s, &m, e) == -1))
		goto out;
	r = 0;
	if (!changed)
		goto out;
	/* The relay checks TLS and HTTP names against the new addresses from now on. */
	if (m.rt.relay_pid > 0 && sbx_proc_alive((pid_t)m.rt.relay_pid,
	    (unsigned long long)m.rt.relay_start_ticks))
		kill((pid_t)m.rt.relay_pid, SIGHUP);
	for (i = 0; i < m.rt.egress_pins.n; i++)
		snprintf(detail + strlen(detail), sizeof detail - strlen(detail), "%s%s",
		    i ? ", " : "pinned ", m.rt.egress_pins.v[i]);
	sbx_audit(s, id, "egress-pins", "ok", detail, NULL);
out:
	sbx_manifest_free(&m);
	close(lock);
	return r;
}

int
sbx_sandbox_note(const struct sbx_store *s, const char *id, const char *warning,
    struct sbx_err *e)
{
	struct sbx_manifest m;
	int lock, r = -1;

	if ((lock = lock_and_load(s, id, 1, 0, &m, e)) == -1)
		return -1;
	free(m.last_warning);
	if ((m.last_warning = strdup(warning)) != NULL)
		r = sbx_state_save(s, &m, e);
	sbx_manifest_free(&m);
	close(lock);
	return r;
}

int
sbx_sandbox_recover(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	const struct sbx_driver *drv;
	struct sbx_manifest m;
	int lock, r = -1;

	if ((lock = sbx_store_lock(s, id, 1, 0, e)) == -1)
		return -1;
	if (sbx_state_load(s, id, &m, e) == -1) {
		close(lock);
		return -1;
	}
	if (m.status != SBX_STATUS_SNAPSHOTTING) {
		r = 0;    /* someone was first */
		goto out;
	}
	if ((drv = sbx_driver_for(&m, e)) == NULL)
		goto out;
	if (drv->alive(&m) && drv->freeze(&m, 0, e) == -1)
		goto out;
	if (sbx_state_transition(&m, SBX_STATUS_READY, e) == -1 || sbx_state_save(s, &m, e) == -1)
		goto out;
	r = 0;
	sbx_audit(s, id, "snapshot-recover", "ok", "thawed after an interrupted snapshot", NULL);
out:
	sbx_manifest_free(&m);
	close(lock);
	return r;
}

int
sbx_sandbox_destroy(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	const struct sbx_driver *drv;
	struct sbx_manifest m;
	int lock, r = -1;

	if ((lock = lock_and_load(s, id, 1, 0, &m, e)) == -1)
		return -1;
	if ((drv = sbx_driver_for(&m, e)) == NULL)
		goto out;
	/* cleanup tells a sweep to finish a destroy killed midway; a one-shot's
	 * sandbox needs no telling: without its init, the sweep takes it anyway. */
	if (sbx_state_transition(&m, SBX_STATUS_CLEANUP, e) == -1 ||
	    (!m.rt.one_shot && sbx_state_save(s, &m, e) == -1))
		goto out;
	sbx_crash_point("destroy-cleanup");
	if (drv->destroy(s, &m, e) == -1)
		goto out;
	sbx_crash_point("destroy-killed");
	if (sbx_store_remove(s, id, e) == -1)
		goto out;
	r = 0;
out:
	sbx_audit(s, id, "destroy", r == 0 ? "ok" : "error", r == 0 ? NULL : e->msg, NULL);
	sbx_manifest_free(&m);
	close(lock);
	return r;
}
