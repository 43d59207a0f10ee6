/* SPDX-License-Identifier: MIT */
/* The sandbox lifecycle: provision, run, destroy, view. */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "policy.h"
#include "runcall.h"
#include "sandbox.h"
#include "util.h"

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

int
sbx_sandbox_teardown(const struct sbx_driver *drv, const struct sbx_store *s,
    const struct sbx_manifest *m, struct sbx_err *e)
{
	int r, runner;

	/* The sandbox's watchdog goes with it (unless it is the one destroying),
	 * and is gone before the tier removes what it made (the state root's
	 * cgroup group holds the watchdog's). */
	if (m->rt.watchdog_pid > 0 && m->rt.watchdog_pid != getpid())
		sbx_proc_signal_wait((pid_t)m->rt.watchdog_pid,
		    (unsigned long long)m->rt.watchdog_start_ticks, SIGKILL, 2000);
	runner = sbx_runner_stop(s, m);
	r = drv->destroy(s, m, e);
	sbx_runner_wait(runner);
	return r;
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

int
sbx_sandbox_users(const struct sbx_store *s, struct sbx_snapshot_users *u, struct sbx_err *e)
{
	char **ids;
	size_t n, i;
	int r = 0;

	memset(u, 0, sizeof *u);
	if (sbx_store_list(s, &ids, &n, e) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		struct sbx_manifest m;

		if (r == 0 && sbx_sandbox_view(s, ids[i], &m, NULL) == 0) {
			if (m.rootfs && m.status != SBX_STATUS_NONE && m.status != SBX_STATUS_TERMINATED &&
			    (sbx_strv_add(&u->sandbox, ids[i]) == -1 ||
			    sbx_strv_add(&u->root, m.rootfs) == -1))
				r = sbx_err_set(e, SBX_EX_OSERR, "out of memory");
			sbx_manifest_free(&m);
		}
		free(ids[i]);
	}
	free(ids);
	if (r == -1)
		sbx_snapshot_users_free(u);
	return r;
}

int
sbx_sandbox_children(const struct sbx_store *s, const char *id, struct sbx_strv *kids,
    struct sbx_err *e)
{
	struct sbx_snapshot_users u;
	size_t i;
	int r = 0;

	memset(kids, 0, sizeof *kids);
	if (sbx_sandbox_users(s, &u, e) == -1)
		return -1;
	for (i = 0; i < u.root.n && r == 0; i++)
		if (strcmp(u.root.v[i], id) == 0 && sbx_strv_add(kids, u.sandbox.v[i]) == -1)
			r = sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	sbx_snapshot_users_free(&u);
	if (r == -1)
		sbx_strv_free(kids);
	return r;
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
	if (m->status == SBX_STATUS_POOLED)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "sandbox is a member of warm pool %s, not "
		    "claimed; sbx-provision the pool's manifest to get one", m->rt.pool ?
		    m->rt.pool : "?");
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
	/* The sandbox's runner does it all where one serves us. */
	if ((r = sbx_runner_call(s, id, x, res, e)) != 0)
		return r == 1 ? 0 : -1;
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

int
sbx_sandbox_ahead(const struct sbx_store *s, const char *id, struct sbx_exec_ahead *a)
{
	struct sbx_manifest m;
	struct sbx_err e;
	int live, again = 0;

	/* A tier with nothing to do ahead is asked once. */
	if (a->drv != NULL && a->drv->ahead == NULL)
		return 0;
	/*
	 * The state as last saved, without the sandbox's lock, which a claim
	 * (provision.c) or a destroy must find free: a cgroup made while a destroy
	 * removes the sandbox's goes with it (its removal looks again for
	 * children) or is not made (no parent). One gone or not live has what
	 * was made cleared; one still being made is asked about again (its
	 * runner starts before the state that makes it ready is saved).
	 */
	if (id != NULL && sbx_state_load(s, id, &m, &e) == 0) {
		sbx_pause_point("run-ahead");
		live = m.status == SBX_STATUS_READY || m.status == SBX_STATUS_EXECUTING ||
		    m.status == SBX_STATUS_POOLED;
		a->pooled = m.status == SBX_STATUS_POOLED;
		if ((a->drv = sbx_driver_for(&m, &e)) != NULL && a->drv->ahead != NULL) {
			a->drv->ahead(s, live ? &m : NULL, a);
			again = m.status == SBX_STATUS_PROVISIONING;
		}
		sbx_manifest_free(&m);
		return again;
	}
	if (a->drv != NULL && a->drv->ahead != NULL)
		a->drv->ahead(s, NULL, a);
	return 0;
}

/*
 * The run-start line, written and synced by a thread of its own while the
 * run is made ready (the sandbox joined, the command's process started,
 * together about as long as the sync), and waited for before the command
 * may exec; without a thread, then.
 */
struct run_start {
	const struct sbx_store *s;
	const char *id, *cmd;
	int audit;       /* 0: not yet, 1: written */
	int threaded;
	pthread_t t;
};

static void *
audit_main(void *ctx)
{
	struct run_start *r = ctx;

	sbx_audit(r->s, r->id, "run-start", "ok", r->cmd, NULL);
	return NULL;
}

static void
audit_begin(struct run_start *r)
{
	sigset_t all, old;

	/* Signals stay the caller's: the thread takes none. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r->threaded = pthread_create(&r->t, NULL, audit_main, r) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void
audit_start(void *ctx)
{
	struct run_start *r = ctx;

	if (r->audit)
		return;
	r->audit = 1;
	if (r->threaded)
		pthread_join(r->t, NULL);
	else
		sbx_audit(r->s, r->id, "run-start", "ok", r->cmd, NULL);
}

/* The part of a run after its checks; lock is the shared lock taken by the caller. */
static int
run_locked(const struct sbx_store *s, const char *id, const struct sbx_manifest *mp,
    const struct sbx_driver *drv, const struct sbx_exec *x, struct sbx_exec_result *res,
    int lock, struct sbx_err *e)
{
	char runlock[1200], detail[128];
	struct run_start start = { s, id, x->argv[0], 0, 0, 0 };
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
	audit_begin(&start);
	r = drv->exec(s, mp, &rx, res, e);
	if (start.threaded)
		audit_start(&start);
	else if (!start.audit)
		sbx_audit_deferred(s, id, "run-start", "ok", x->argv[0], NULL);
	if (fd != -1)
		close(fd);
	snprintf(detail, sizeof detail, "exit %d", res->status);
	/* A runner's client has its answer once the records are written, before
	 * the run-end line is synced. */
	(mp->rt.one_shot || x->ended ? sbx_audit_deferred : sbx_audit)(s, id, "run-end",
	    r == 0 ? "ok" : "error", r == 0 ? detail : e->msg, NULL);
	/* A one-shot's sandbox goes next: its trace is the caller's to keep. */
	if (r == 0 && !mp->rt.one_shot)
		save_trace(s, id, &res->trace);
	if (x->ended != NULL) {
		x->ended(x->ended_ctx, r, res, e);
		sbx_audit_sync(s, NULL);
	}
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
	double when = sbx_realtime();
	char *why;

	if ((lock = lock_and_load(s, id, 1, 0, &m, e)) == -1)
		return -1;
	if (m.status == SBX_STATUS_TERMINATED) {
		r = 0;    /* someone was first */
		goto out;
	}
	if ((drv = sbx_driver_for(&m, e)) == NULL || sbx_state_transition(&m, SBX_STATUS_CLEANUP, e) == -1)
		goto out;
	if (sbx_sandbox_teardown(drv, s, &m, e) == -1)
		goto out;
	if ((why = strdup(reason)) == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	free(m.kill_reason);
	m.kill_reason = why;
	if (sbx_time_set(&m.killed_at, when) == -1) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
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
	const struct sbx_driver *drv;
	struct sbx_manifest m;
	char detail[512] = "";
	size_t i;
	int lock, r = -1, changed = 0;

	if ((lock = lock_and_load(s, id, 1, 0, &m, e)) == -1)
		return -1;
	if (!m.has_rt || (drv = sbx_driver_for(&m, e)) == NULL)
		goto out;
	if (drv->repin == NULL) {
		sbx_driver_cannot(drv, "re-pin egress host names", e);
		goto out;
	}
	if (drv->repin(s, &m, &changed, e) == -1 || (changed && sbx_state_save(s, &m, e) == -1))
		goto out;
	r = 0;
	if (!changed)
		goto out;
	if (drv->repinned != NULL)
		drv->repinned(&m);
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
sbx_sandbox_retire(const struct sbx_store *s, const char *id, const char *why, struct sbx_err *e)
{
	struct sbx_manifest m;
	struct sbx_err one;
	int lock, pooled;

	/* Held: a claim (or another retire) is at it. */
	if ((lock = sbx_store_lock(s, id, 1, 0, &one)) == -1)
		return 0;
	if (sbx_state_load(s, id, &m, &one) == -1) {
		close(lock);
		return 0;
	}
	/* Under the lock, pooled is unclaimed: a claim makes it ready before it
	 * lets go, and one that died before has taken the entry, no more. */
	pooled = m.status == SBX_STATUS_POOLED && m.rt.pool_key != NULL;
	if (pooled)
		(void)sbx_store_pool_take(s, m.rt.pool_key, id);
	sbx_manifest_free(&m);
	close(lock);
	if (!pooled)
		return 0;
	sbx_audit(s, id, "pool-retire", "ok", why, NULL);
	return sbx_sandbox_destroy(s, id, e) == 0 ? 1 : -1;
}

/* What destroy does once the sandbox is marked cleanup (lock held, drv m's),
 * up to its directory's removal: renamed into tomb (empty: not there). */
static int
destroy_rest(const struct sbx_driver *drv, const struct sbx_store *s, struct sbx_manifest *m,
    char *tomb, size_t size, struct sbx_err *e)
{
	const char *id = m->sandbox_id;
	int r;

	tomb[0] = '\0';
	if (sbx_sandbox_teardown(drv, s, m, e) == -1)
		return -1;
	sbx_crash_point("destroy-killed");
	/* Named as gone before it goes: a destroy repeated after a crash from
	 * here on is the success it was. A one-shot's ID is nobody's to repeat. */
	if (!m->rt.one_shot && sbx_store_mark_gone(s, id) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s/gone/%s", s->root, id);
	if ((r = sbx_store_bury(s, id, tomb, size, e)) != 0)
		tomb[0] = '\0';
	return r == -1 ? -1 : 0;
}

/*
 * The detached half of a destroy: the sandbox's processes are dead (the
 * tier's halt), its kernel objects and files go in a child of this process
 * that holds the sandbox's lock to the end (a one-shot's state says cleanup
 * first). Its audit line comes before
 * the tombstone's removal: once the sandboxes directory is empty, it writes
 * nothing more in the state root. 1: the child has it; 0: no child (the
 * caller goes on).
 */
static int
destroy_detached(const struct sbx_driver *drv, const struct sbx_store *s, struct sbx_manifest *m,
    int lock)
{
	struct sbx_err e = { 0 };
	char tomb[1300], title[64];
	pid_t pid;
	int r;

	if ((pid = fork()) != 0)
		return pid > 0;
	(void)sbx_detach(lock);
	snprintf(title, sizeof title, "sbx-teardown %s", m->sandbox_id);
	sbx_proc_title(title);
	if (m->rt.one_shot)
		(void)sbx_state_save(s, m, NULL);
	sbx_crash_point("destroy-detached");
	r = destroy_rest(drv, s, m, tomb, sizeof tomb, &e);
	sbx_audit(s, m->sandbox_id, "destroy", r == 0 ? "ok" : "error",
	    r == 0 ? "detached" : e.msg, NULL);
	if (r == 0 && tomb[0] != '\0' && sbx_rm_rf(tomb, NULL) == -1)
		r = -1;
	_exit(r == 0 ? 0 : 1);
}

int
sbx_sandbox_destroy_ex(const struct sbx_store *s, const char *id, int flags, struct sbx_err *e)
{
	const struct sbx_driver *drv;
	struct sbx_manifest m;
	char tomb[1300];
	int lock, detach, r = -1;

	if ((lock = lock_and_load(s, id, 1, 0, &m, e)) == -1)
		return -1;
	if ((drv = sbx_driver_for(&m, e)) == NULL)
		goto out;
	detach = (flags & SBX_DESTROY_DETACH) && drv->halt != NULL;
	/* An unclaimed pool member leaves its pool first: no claim finds it now. */
	if (m.rt.pool_key != NULL)
		(void)sbx_store_pool_take(s, m.rt.pool_key, id);
	/* cleanup tells a sweep to finish a destroy killed midway; a one-shot's
	 * sandbox needs no telling: without its init, the sweep takes it anyway.
	 * One whose teardown is left to a child has the child say it, for the
	 * listings meanwhile (destroy_detached), off its caller's way. */
	if (sbx_state_transition(&m, SBX_STATUS_CLEANUP, e) == -1 ||
	    (!m.rt.one_shot && sbx_state_save(s, &m, e) == -1))
		goto out;
	sbx_crash_point("destroy-cleanup");
	if (detach) {
		if (drv->halt(&m, e) == -1)
			goto out;
		if (destroy_detached(drv, s, &m, lock)) {
			sbx_manifest_free(&m);
			close(lock);
			return 0;
		}
	}
	if (destroy_rest(drv, s, &m, tomb, sizeof tomb, e) == 0 &&
	    (tomb[0] == '\0' || sbx_rm_rf(tomb, e) == 0))
		r = 0;
out:
	sbx_audit(s, id, "destroy", r == 0 ? "ok" : "error", r == 0 ? NULL : e->msg, NULL);
	sbx_manifest_free(&m);
	close(lock);
	return r;
}

int
sbx_sandbox_destroy(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	return sbx_sandbox_destroy_ex(s, id, 0, e);
}

static struct sbx_node *
num_or_null(double v, double unit)
{
	return v < 0 ? sbx_node_raw("null") : sbx_node_num(v / unit);
}

static struct sbx_node *
limit_or_null(long long v)
{
	return v > 0 ? sbx_node_int(v) : sbx_node_raw("null");
}

struct sbx_node *
sbx_sandbox_usage(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	const struct sbx_driver *drv;
	struct sbx_manifest m;
	struct sbx_usage u;
	struct sbx_node *n = NULL;
	double until;

	if (sbx_sandbox_view(s, id, &m, e) == -1)
		return NULL;
	if (m.status != SBX_STATUS_READY && m.status != SBX_STATUS_EXECUTING &&
	    m.status != SBX_STATUS_PAUSED) {
		sbx_err_set(e, SBX_EX_DATAERR, "sandbox is %s: nothing runs to measure",
		    sbx_status_name(m.status));
		goto out;
	}
	if ((drv = sbx_driver_for(&m, e)) == NULL)
		goto out;
	if (drv->usage == NULL) {
		sbx_driver_cannot(drv, "report its use", e);
		goto out;
	}
	if (drv->usage(s, &m, &u, e) == -1)
		goto out;
	if ((n = sbx_node_new(SBX_MAP)) == NULL ||
	    sbx_node_add(n, "sandbox_id", sbx_node_str(id)) == -1 ||
	    sbx_node_add(n, "status", sbx_node_str(sbx_status_name(m.status))) == -1 ||
	    sbx_node_add(n, "memory_mb", num_or_null((double)u.memory_bytes, 1 << 20)) == -1 ||
	    sbx_node_add(n, "memory_limit_mb", limit_or_null(m.res.memory_mb)) == -1 ||
	    sbx_node_add(n, "cpu_seconds", num_or_null(u.cpu_s, 1)) == -1 ||
	    sbx_node_add(n, "pids", u.pids < 0 ? sbx_node_raw("null") : sbx_node_int(u.pids)) == -1 ||
	    sbx_node_add(n, "pids_limit", limit_or_null(m.res.pids)) == -1 ||
	    sbx_node_add(n, "disk_mb", num_or_null((double)u.disk_bytes, 1 << 20)) == -1 ||
	    sbx_node_add(n, "disk_limit_mb", limit_or_null(m.res.disk_mb)) == -1 ||
	    sbx_node_add(n, "expires_at", m.expires_at ? sbx_node_str(m.expires_at) :
	    sbx_node_raw("null")) == -1 ||
	    sbx_node_add(n, "seconds_left", m.expires_at && sbx_time_parse(m.expires_at, &until)
	    == 0 ? sbx_node_num(floor(until - sbx_realtime())) : sbx_node_raw("null")) == -1) {
		sbx_node_free(n);
		n = NULL;
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
out:
	sbx_manifest_free(&m);
	return n;
}

int
sbx_sandbox_extend(const struct sbx_store *s, const char *id, double seconds, double *until,
    struct sbx_err *e)
{
	const struct sbx_driver *drv;
	const struct sbx_policy *pol;
	struct sbx_manifest m;
	double old, born;
	long long total, before;
	char detail[96];
	int lock, r = -1;

	if ((lock = lock_and_load(s, id, 1, 0, &m, e)) == -1)
		return -1;
	if (m.status != SBX_STATUS_READY && m.status != SBX_STATUS_EXECUTING &&
	    m.status != SBX_STATUS_PAUSED) {
		not_ready(&m, e);
		goto out;
	}
	if (m.expires_at == NULL || sbx_time_parse(m.expires_at, &old) == -1 ||
	    m.created_at == NULL || sbx_time_parse(m.created_at, &born) == -1) {
		sbx_err_set(e, SBX_EX_DATAERR, "it has no lifetime to extend");
		goto out;
	}
	if (expired(&m)) {
		sbx_err_set(e, SBX_EX_DATAERR, "it expired at %s: too late to extend", m.expires_at);
		goto out;
	}
	if ((pol = sbx_policy_get(s, e)) == NULL || (drv = sbx_driver_for(&m, e)) == NULL)
		goto out;
	/* The whole lifetime, from creation, is what the policy's limit bounds. */
	before = m.res.max_wall_clock_s;
	total = (long long)ceil(old + seconds - born);
	m.res.max_wall_clock_s = total;
	if (sbx_policy_check_limits(pol, s, &m, e) == -1 || sbx_time_set(&m.expires_at,
	    old + seconds) == -1)
		goto out;
	/* Inside first: should saving fail, the state's earlier end still holds. */
	if (drv->extend != NULL && drv->extend(&m, seconds, e) == -1)
		goto out;
	if (sbx_state_save(s, &m, e) == -1)
		goto out;
	snprintf(detail, sizeof detail, "+%gs, max_wall_clock_s %lld to %lld", seconds, before,
	    total);
	sbx_audit(s, id, "extend", "ok", detail, NULL);
	*until = old + seconds;
	r = 0;
out:
	sbx_manifest_free(&m);
	close(lock);
	return r;
}
