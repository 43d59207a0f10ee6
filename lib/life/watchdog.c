/* SPDX-License-Identifier: MIT */
/* The watchdog: lifetimes enforced from outside, memory warnings as audit events. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "cgroup.h"
#include "id.h"
#include "sandbox.h"
#include "snap.h"
#include "snapshot.h"
#include "util.h"
#include "watchdog.h"

struct target {
	char id[SBX_ID_MAX + 1];
	ino_t ino;               /* of state.yaml when last read: each atomic write is a */
	struct timespec mtime;   /* new inode, even within one coarse timestamp tick */
	double deadline;         /* CLOCK_REALTIME seconds */
	long long limit;         /* memory hard limit in bytes, 0: none */
	int memfd;               /* the tier's handle on its memory use */
	long long (*memory_used)(int handle);
	int (*memory_pressure)(int handle, double *some, double *full);
	int level;               /* warnings given: 0, 80 or 95 */
	double snap_every;       /* snapshot.interval_s, 0: none */
	double next_snap;        /* CLOCK_REALTIME seconds */
	long long keep;          /* snapshot.keep */
	double resolve_every;    /* egress_refresh_s for pinned host names, 0: none */
	double next_resolve;     /* CLOCK_REALTIME seconds */
	int settled;             /* provision has recorded the runtime state */
	int pooled;              /* an unclaimed pool member: its deadline is its idle age */
	int solo;                /* the sandbox's own watchdog (not --all) */
	int done;
};

/* (Re)read what the watchdog needs from the state, when it changed. */
static int
refresh(const struct sbx_store *s, struct target *t)
{
	const struct sbx_driver *drv;
	struct sbx_manifest m;
	struct sbx_err e;
	struct stat st;
	char p[1200];
	double until;

	if (sbx_store_path(s, t->id, "state.yaml", p, sizeof p, NULL) == -1 || stat(p, &st) == -1) {
		t->done = 1;     /* destroyed */
		return 0;
	}
	if (st.st_ino == t->ino && st.st_mtim.tv_sec == t->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == t->mtime.tv_nsec)
		return 0;
	t->ino = st.st_ino;
	t->mtime = st.st_mtim;
	if (sbx_state_load(s, t->id, &m, &e) == -1)
		return 0;   /* mid-write by another tool: next time */
	if (m.status == SBX_STATUS_TERMINATED || m.status == SBX_STATUS_CLEANUP)
		t->done = 1;
	/* Another watchdog named: the sandbox this one was started for was
	 * killed mid-provision and made again under its ID (by a repeat). */
	if (t->solo && m.rt.watchdog_pid > 0 && m.rt.watchdog_pid != getpid())
		t->done = 1;
	t->settled = m.has_rt && m.status != SBX_STATUS_NONE && m.status != SBX_STATUS_PROVISIONING;
	t->pooled = m.status == SBX_STATUS_POOLED;
	t->deadline = m.expires_at && sbx_time_parse(m.expires_at, &until) == 0 ? until : INFINITY;
	/* A tier with no view of the sandbox's memory (microvm) has none watched. */
	drv = sbx_driver_for(&m, NULL);
	t->limit = m.res.memory_mb != SBX_UNSET_INT && drv != NULL && drv->memory_open != NULL &&
	    drv->memory_used != NULL ? m.res.memory_mb << 20 : 0;
	t->snap_every = m.snapshot.enabled == 1 && m.snapshot.interval_s != SBX_UNSET_INT ?
	    (double)m.snapshot.interval_s : 0;
	t->keep = m.snapshot.keep != SBX_UNSET_INT ? m.snapshot.keep : 1;
	if (t->snap_every > 0 && t->next_snap == 0)
		t->next_snap = sbx_realtime() + t->snap_every;
	t->resolve_every = m.rt.egress_pins.n > 0 && m.egress_refresh_s > 0 ?
	    (double)m.egress_refresh_s : 0;
	if (t->resolve_every > 0 && t->next_resolve == 0)
		t->next_resolve = sbx_realtime() + t->resolve_every;
	if (t->limit && t->memfd == -1) {
		t->memfd = drv->memory_open(s, &m);
		t->memory_used = drv->memory_used;
		t->memory_pressure = drv->memory_pressure;
	}
	sbx_manifest_free(&m);
	return 0;
}

static void
check_memory(const struct sbx_store *s, struct target *t)
{
	long long used;
	int pct, level;
	double some, full;
	char msg[240];
	size_t len;

	if (t->memfd == -1 || t->limit == 0 || (used = t->memory_used(t->memfd)) < 0)
		return;
	pct = (int)(used * 100 / t->limit);
	level = pct >= 95 ? 95 : pct >= 80 ? 80 : 0;
	if (level > t->level) {
		len = (size_t)snprintf(msg, sizeof msg, "memory at %d%% of the hard limit (%lld of "
		    "%lld MiB)", level, used >> 20, t->limit >> 20);
		/* How much that costs the sandbox, where the kernel measures it. */
		if (t->memory_pressure && t->memory_pressure(t->memfd, &some, &full) == 0 &&
		    len < sizeof msg)
			snprintf(msg + len, sizeof msg - len, "; memory pressure (PSI, avg10): some "
			    "%.2f%%, full %.2f%%", some, full);
		sbx_audit(s, t->id, "memory-warning", level >= 95 ? "throttle" : "soft", msg, NULL);
		sbx_sandbox_note(s, t->id, msg, NULL);
	}
	/* Fall well below before warning again, so a sandbox at the line is not noisy. */
	if (level > t->level || pct < t->level - 10)
		t->level = level;
}

static void
drop(struct target *t)
{
	if (t->memfd != -1)
		close(t->memfd);
	t->memfd = -1;
	t->done = 1;
}

/* One look at a target; returns when it next needs one (seconds from now). */
static double
tend(const struct sbx_store *s, struct target *t, double poll)
{
	struct sbx_err e;
	double now;

	refresh(s, t);
	if (t->done)
		return INFINITY;
	now = sbx_realtime();
	if (now >= t->deadline && t->pooled) {
		/* Unclaimed too long: it goes (and the refiller makes a fresh one);
		 * claimed meanwhile, its new lifetime is read again. */
		int r = sbx_sandbox_retire(s, t->id, "pool-idle", &e);

		if (r == 1) {
			drop(t);
			return INFINITY;
		}
		if (r == -1)
			sbx_audit(s, t->id, "pool-retire", "error", e.msg, NULL);
		t->ino = 0;
		return poll;
	}
	if (now >= t->deadline) {
		if (sbx_sandbox_expire(s, t->id, "wall-clock", &e) == -1 && e.code != SBX_EX_NOINPUT)
			sbx_audit(s, t->id, "kill", "error", e.msg, NULL);
		drop(t);
		return INFINITY;
	}
	check_memory(s, t);
	if (t->snap_every > 0 && now >= t->next_snap) {
		struct sbx_snap_opts o = { NULL, "periodic", 1 };
		char snap[SBX_ID_MAX + 1];

		/* A sandbox busy being made, snapshotted or paused by others: next time. */
		if (sbx_snap_create(s, t->id, &o, snap, &e) == 0)
			sbx_snapshot_prune(s, sbx_sandbox_users, t->id, t->keep, &e);
		now = sbx_realtime();
		t->next_snap = now + t->snap_every;
		refresh(s, t);
		if (t->done)
			return INFINITY;
	}
	if (t->resolve_every > 0 && now >= t->next_resolve) {
		/* A name that does not resolve now keeps its old addresses. */
		if (sbx_sandbox_egress_refresh(s, t->id, &e) == -1 && e.code != SBX_EX_NOINPUT)
			sbx_audit(s, t->id, "egress-pins", "error", e.msg, NULL);
		now = sbx_realtime();
		t->next_resolve = now + t->resolve_every;
	}
	/* With a limit, sample; without, sleep, but only once provision has
	 * recorded the runtime state (cgroup, pinned names) it writes after
	 * starting us: until then, keep re-reading it. */
	if (!t->limit && t->settled)
		poll = INFINITY;
	if (t->snap_every > 0)
		poll = fmin(poll, t->next_snap - now);
	if (t->resolve_every > 0)
		poll = fmin(poll, t->next_resolve - now);
	return fmin(poll, t->deadline - now);
}

/*
 * Sleep s seconds, or until SIGURG: a pool member's claim sends it, so that
 * its lifetime, set by the claim, is read at once. SIGURG is blocked from the
 * start (sbx_watchdog_spawn), so one sent before the sleep is not lost.
 */
static void
nap(double s)
{
	struct timespec ts;
	sigset_t urg;

	if (!(s > 0))
		return;
	if (s > 3600)
		s = 3600;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	(void)sigtimedwait(&urg, NULL, &ts);
}

/* One sandbox's watchdog; left: the cgroups it started in, before the
 * @watchdog one, to go back to at its end (NULL: where it runs now). */
static int
watch_one(const struct sbx_store *s, const char *id, double poll, const struct sbx_cg_host *left)
{
	struct target t = { .memfd = -1, .solo = 1 };
	struct sbx_cg_host now;
	sigset_t urg;

	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	sigprocmask(SIG_BLOCK, &urg, NULL);
	snprintf(t.id, sizeof t.id, "%s", id);
	for (;;) {
		double next = tend(s, &t, poll);

		/* Gone (destroyed, or expired by us): leave now, not after the nap. */
		if (t.done)
			break;
		nap(next);
	}
	drop(&t);
	/* Leave the @watchdog cgroup, and the group with it if this was its last
	 * sandbox (a sweep that ran while we still lived could not). The host's
	 * layout read now would name @watchdog as where we started. */
	if (left == NULL && !s->rootless && sbx_cgroup_host(&now, NULL) == 0)
		left = &now;
	if (left != NULL && sbx_cgroup_return(left) == 0)
		sbx_cgroup_remove_group(left, s->group, 0);
	return 0;
}

static int
watch_all(const struct sbx_store *s, const struct sbx_wd_opts *o, double poll,
    struct sbx_err *e)
{
	int once = o->once;
	struct target *ts = NULL, *nt;
	size_t nts = 0, i, j, n;
	char **ids;
	double next, rescan = 0;

	for (;;) {
		if (sbx_realtime() >= rescan) {
			if (o->tick != NULL)
				o->tick(o->tick_ctx);
			/* New sandboxes join, removed ones leave. */
			if (sbx_store_list(s, &ids, &n, e) == -1)
				return -1;
			for (i = 0; i < n; i++) {
				for (j = 0; j < nts && strcmp(ts[j].id, ids[i]) != 0; j++)
					;
				if (j == nts && (nt = realloc(ts, (nts + 1) * sizeof *ts)) != NULL) {
					ts = nt;
					memset(&ts[nts], 0, sizeof ts[nts]);
					ts[nts].memfd = -1;
					snprintf(ts[nts].id, sizeof ts[nts].id, "%s", ids[i]);
					nts++;
				}
				free(ids[i]);
			}
			free(ids);
			rescan = sbx_realtime() + 1;
		}
		next = once ? 0 : 1;
		for (i = 0; i < nts; i++)
			if (!ts[i].done)
				next = fmin(next, tend(s, &ts[i], poll));
		for (i = j = 0; i < nts; i++)
			if (!ts[i].done)
				ts[j++] = ts[i];
			else
				drop(&ts[i]);
		nts = j;
		if (once)
			break;
		nap(next);
	}
	for (i = 0; i < nts; i++)
		drop(&ts[i]);
	free(ts);
	return 0;
}

int
sbx_watchdog(const struct sbx_store *s, const struct sbx_wd_opts *o, struct sbx_err *e)
{
	double poll = o->poll_s > 0 ? o->poll_s : 0.1;

	if (o->id != NULL) {
		if (sbx_id_check(o->id, e) == -1)
			return -1;
		if (!sbx_store_exists(s, o->id))
			return sbx_err_set(e, SBX_EX_NOINPUT, "no such sandbox");
		if (o->once) {
			struct target t = { .memfd = -1 };

			snprintf(t.id, sizeof t.id, "%s", o->id);
			tend(s, &t, poll);
			drop(&t);
			return 0;
		}
		return watch_one(s, o->id, poll, NULL);
	}
	return watch_all(s, o, poll, e);
}

int
sbx_watchdog_spawn(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e)
{
	struct sbx_cg_host h;
	struct sbx_cgroup cg;
	pid_t pid;
	int fd, entered;

	if ((pid = fork()) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "start the watchdog");
	if (pid == 0) {
		/* Detached: its own session, no stdio of the caller, none of its fds (the
		 * sandbox's lock among them), a cgroup of its own (not the sandbox's),
		 * the default end at SIGINT and SIGTERM (not a caller's catching). */
		sigset_t urg;

		/* Before the first read of the state: a claim's SIGURG waits for the nap. */
		sigemptyset(&urg);
		sigaddset(&urg, SIGURG);
		sigprocmask(SIG_BLOCK, &urg, NULL);
		setsid();
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		syscall(SYS_close_range, 3, ~0U, 0);
		entered = !s->rootless && sbx_cgroup_host(&h, NULL) == 0 &&
		    sbx_cgroup_create(&h, s->group, "@watchdog", &cg, NULL) == 0 &&
		    sbx_cgroup_enter(&cg, 0, NULL) == 0;
		{
			char title[SBX_ID_MAX + 16];

			snprintf(title, sizeof title, "sbx-watchdog %s", m->sandbox_id);
			sbx_proc_title(title);
		}
		prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
		_exit(watch_one(s, m->sandbox_id, 0.1, entered ? &h : NULL) == 0 ? 0 : 1);
	}
	m->rt.watchdog_pid = pid;
	m->rt.watchdog_start_ticks = (long long)sbx_proc_starttime(pid);
	return 0;
}
