/* SPDX-License-Identifier: MIT */
/* Forks: children of a snapshot, the fork budget, and keeping the winner. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "fork.h"
#include "progress.h"
#include "provision.h"
#include "sandbox.h"
#include "snap.h"
#include "snapshot.h"
#include "util.h"

/* Forks of one store take turns: counting children and making them is one step. */
static int
fork_lock(const struct sbx_store *s, struct sbx_err *e)
{
	char p[1200];

	if (sbx_path(p, sizeof p, e, "%s/snapshots/.fork.lock", s->root) == -1)
		return -1;
	return sbx_lock_file(p, 1, e);
}

static int fork_n(const struct sbx_store *s, const char *src, long n, const char *prefix,
    const char *exact, const struct sbx_manifest *with, char ***ids, struct sbx_err *e);

static void
free_ids(char **ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

/* One child: the caller's manifest (with) or else the snapshot's, a new ID,
 * the snapshot as its root; provision holds it to the operator's policy.
 * Returns the child's ID (the caller frees it), or NULL. */
static char *
make_child(const struct sbx_store *s, const char *snap, const char *id,
    const struct sbx_manifest *with, struct sbx_err *e)
{
	struct sbx_snapshot sn;
	struct sbx_manifest *m;
	char *out = NULL;
	int existed;

	if (sbx_snapshot_load(s, snap, &sn, e) == -1)
		return NULL;
	m = &sn.manifest;
	if (with != NULL) {
		sbx_manifest_free(m);
		if (sbx_manifest_copy(with, m, e) == -1) {
			sbx_snapshot_free(&sn);
			return NULL;
		}
	}
	free(m->rootfs);
	free(m->sandbox_id);
	m->sandbox_id = NULL;
	if ((m->rootfs = strdup(snap)) == NULL || (id && (m->sandbox_id = strdup(id)) == NULL))
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	else if (sbx_provision(s, m, 0, &existed, e) == 0) {
		/* Ownership passes to the caller. */
		out = m->sandbox_id;
		m->sandbox_id = NULL;
	}
	sbx_snapshot_free(&sn);
	return out;
}

/*
 * Children are made side by side, each by a process of its own (a VM's
 * restore waits on its VMM and its guest much of the time): at most twice
 * the CPUs at once. A worker's answer: the child's ID, or its error.
 */
struct worker {
	pid_t pid;
	int fd;
};

struct worker_answer {
	int ok;
	char id[SBX_ID_MAX + 1];
	struct sbx_err e;
};
_Static_assert(sizeof(struct worker_answer) <= PIPE_BUF, "a worker's answer is one write");

static int
worker_start(const struct sbx_store *s, const char *snap, const char *id,
    const struct sbx_manifest *with, struct worker *w, struct sbx_err *e)
{
	int pp[2];
	pid_t parent = getpid();

	if (pipe2(pp, O_CLOEXEC) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "pipe");
	if ((w->pid = fork()) == 0) {
		struct worker_answer a;
		char *made;

		/* An interrupted fork (a crash, a kill) leaves no worker going on:
		 * what one had half made, the next sweep takes. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
			_exit(1);
		memset(&a, 0, sizeof a);
		close(pp[0]);
		if ((made = make_child(s, snap, id, with, &a.e)) != NULL) {
			a.ok = 1;
			snprintf(a.id, sizeof a.id, "%s", made);
		}
		(void)!write(pp[1], &a, sizeof a);
		_exit(0);
	}
	close(pp[1]);
	if (w->pid == -1) {
		close(pp[0]);
		return sbx_err_sys(e, SBX_EX_OSERR, "fork");
	}
	w->fd = pp[0];
	return 0;
}

/* The worker's child (the caller frees it), or NULL and its error. */
static char *
worker_end(struct worker *w, struct sbx_err *e)
{
	struct worker_answer a;
	ssize_t n;
	int st = 0;
	char *id = NULL;

	/* one write of less than PIPE_BUF: the whole answer, or none */
	while ((n = read(w->fd, &a, sizeof a)) == -1 && errno == EINTR)
		;
	while (waitpid(w->pid, &st, 0) == -1 && errno == EINTR)
		;
	close(w->fd);
	w->pid = -1;
	if (n != (ssize_t)sizeof a && WIFSIGNALED(st))
		sbx_err_set(e, SBX_EX_SOFTWARE, "the process making a child was killed (signal %d)",
		    WTERMSIG(st));
	else if (n != (ssize_t)sizeof a)
		sbx_err_set(e, SBX_EX_SOFTWARE, "the process making a child ended before its answer");
	else if (!a.ok)
		*e = a.e;
	else if ((id = strdup(a.id)) == NULL)
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	return id;
}

static long
workers_max(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus < 1 ? 1 : cpus > 8 ? 16 : 2 * cpus;
}

/* The snapshot's layers and checkpoint in the layer cache (extracted now
 * if they are not). */
static int
warm_cache(const struct sbx_store *s, const char *snap, const struct sbx_snapshot *sn,
    struct sbx_err *e)
{
	char **dirs = NULL, *base = NULL, dir[1200];
	size_t n = 0, i;

	if (sbx_snapshot_lowers(s, snap, &dirs, &n, &base, e) == -1)
		return -1;
	for (i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	free(base);
	return sn->has_memory ? sbx_snapshot_memory_dir(s, sn, dir, sizeof dir, e) : 0;
}

/* A caller's manifest for children: the snapshot is their root, each has its own ID. */
static int
check_with(const struct sbx_manifest *with, struct sbx_err *e)
{
	if (with == NULL)
		return 0;
	if (with->rootfs != NULL)
		return sbx_err_set(e, SBX_EX_DATAERR, "--manifest: rootfs is the snapshot; leave "
		    "rootfs out");
	if (with->sandbox_id != NULL)
		return sbx_err_set(e, SBX_EX_DATAERR, "--manifest: each child gets its own ID; "
		    "leave sandbox_id out (--id names them)");
	return 0;
}

int
sbx_fork(const struct sbx_store *s, const char *src, long n, const char *prefix,
    const struct sbx_manifest *with, char ***ids, struct sbx_err *e)
{
	*ids = NULL;
	if (check_with(with, e) == -1)
		return -1;
	return fork_n(s, src, n, prefix, NULL, with, ids, e);
}

int
sbx_fork_restore(const struct sbx_store *s, const char *snap, const char *id,
    const struct sbx_manifest *with, char ***ids, struct sbx_err *e)
{
	*ids = NULL;
	if (sbx_id_check(snap, e) == -1 || (id && sbx_id_check(id, e) == -1) ||
	    check_with(with, e) == -1)
		return -1;
	if (!sbx_snapshot_exists(s, snap))
		return sbx_err_set(e, SBX_EX_NOINPUT, "no such snapshot");
	return fork_n(s, snap, 1, NULL, id, with, ids, e);
}

/* n children of src named prefix-K, or the one child named exact, or fresh IDs. */
static int
fork_n(const struct sbx_store *s, const char *src, long n, const char *prefix,
    const char *exact, const struct sbx_manifest *with, char ***ids, struct sbx_err *e)
{
	struct sbx_strv kids = { NULL, 0 };
	char snap[SBX_ID_MAX + 1], id[SBX_ID_MAX + 1], detail[256];
	struct sbx_snapshot sn;
	struct worker *w = NULL;
	struct sbx_err ignored;
	long k, started, fresh = 0, i;
	int lock = -1, r = -1, r_err = 0;
	char *made_now;

	*ids = NULL;
	if (sbx_id_check(src, e) == -1)
		return -1;
	if (prefix != NULL && (strlen(prefix) + 12 > SBX_ID_MAX || !sbx_id_valid(prefix)))
		return sbx_err_set(e, SBX_EX_DATAERR, "--id '%s': not a valid ID prefix (at most "
		    "%d characters)", prefix, SBX_ID_MAX - 12);
	sbx_progress_phase("snapshot", -1, "");
	if (sbx_snapshot_exists(s, src)) {
		snprintf(snap, sizeof snap, "%s", src);
	} else if (sbx_store_exists(s, src)) {
		struct sbx_snap_opts o = { NULL, "fork", 0 };
		char base[SBX_ID_MAX + 1];
		struct sbx_manifest m;
		long long factor;

		/* Past the budget from the start: not even the snapshot is made. */
		if (sbx_state_load(s, src, &m, e) == -1)
			return -1;
		factor = sbx_manifest_defaults(&m, NULL) == 0 ? m.max_fork_factor : 4;
		sbx_manifest_free(&m);
		if (prefix == NULL && n > factor)
			return sbx_err_set(e, SBX_EX_TEMPFAIL, "%ld children would pass "
			    "fork.max_fork_factor of %lld", n, factor);
		if (prefix != NULL) {
			snprintf(base, sizeof base, "%s-base", prefix);
			o.id = base;
		}
		if (sbx_snap_create(s, src, &o, snap, e) == -1)
			return sbx_err_prefix(e, "snapshot of %s", src);
	} else {
		return sbx_err_set(e, SBX_EX_NOINPUT, "%s: no such snapshot or sandbox", src);
	}
	if (sbx_snapshot_load(s, snap, &sn, e) == -1)
		return -1;
	if (sbx_manifest_defaults(&sn.manifest, e) == -1) {
		sbx_snapshot_free(&sn);
		return sbx_err_prefix(e, "snapshot %s", snap);
	}
	if ((*ids = calloc((size_t)n, sizeof **ids)) == NULL ||
	    (made_now = calloc((size_t)n, 1)) == NULL) {
		free(*ids);
		*ids = NULL;
		sbx_snapshot_free(&sn);
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
	if ((lock = fork_lock(s, e)) == -1 || sbx_sandbox_children(s, snap, &kids, e) == -1)
		goto out;
	for (k = 0; k < n; k++) {
		if (exact != NULL)
			snprintf(id, sizeof id, "%s", exact);
		else if (prefix != NULL)
			snprintf(id, sizeof id, "%s-%ld", prefix, k + 1);
		if ((prefix == NULL && exact == NULL) || !sbx_store_exists(s, id))
			fresh++;
	}
	if ((long long)kids.n + fresh > sn.manifest.max_fork_factor) {
		sbx_err_set(e, SBX_EX_TEMPFAIL, "snapshot %s has %zu live children; %ld more would "
		    "pass its fork.max_fork_factor of %lld (destroy some, or fork from a manifest "
		    "with a larger one)", snap, kids.n, fresh, sn.manifest.max_fork_factor);
		goto out;
	}
	/* The layers (and the memory checkpoint) extracted into the cache
	 * here, once, before the workers would each race to it. */
	sbx_progress_phase("cache", -1, "");
	if (sbx_interrupt_check(e) == -1 || warm_cache(s, snap, &sn, e) == -1)
		goto out;
	sbx_progress_phase("children", n, "sandboxes");
	sbx_pause_point("fork-children");
	if ((w = calloc((size_t)n, sizeof *w)) == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	/* Worker k makes child k; the answers are taken in order, a new
	 * worker started for each, none after an error. */
	for (k = 0, started = 0; k < n; k++) {
		for (; started < n && started < k + workers_max() && r_err == 0; started++) {
			const char *want = NULL;

			if (prefix != NULL || exact != NULL) {
				if (exact != NULL)
					snprintf(id, sizeof id, "%s", exact);
				else
					snprintf(id, sizeof id, "%s-%ld", prefix, started + 1);
				want = id;
				made_now[started] = !sbx_store_exists(s, id);
			} else {
				made_now[started] = 1;
			}
			/* Interrupted: no more started; those under way end, then all go. */
			if (sbx_interrupt_check(e) == -1 ||
			    worker_start(s, snap, want, with, &w[started], e) == -1) {
				r_err = 1;
				break;
			}
		}
		if (k >= started)
			break;
		if (((*ids)[k] = worker_end(&w[k], r_err ? &ignored : e)) == NULL)
			r_err = 1;
		else
			sbx_crash_point("fork-child");
		sbx_progress_set(k + 1);
	}
	/* A worker may have failed of the signal too: the signal is the answer. */
	if (r_err && sbx_interrupted())
		sbx_interrupt_check(e);
	if (r_err)
		goto out;
	/* A repeat that made none (every ID its key names was there) did no
	 * fork: the audit log has the one that did, as with provision's. */
	snprintf(detail, sizeof detail, "%ld children of %s", n, snap);
	if (fresh > 0)
		sbx_audit(s, src, "fork", "ok", detail, NULL);
	r = 0;
out:
	if (r == -1 && *ids != NULL) {
		/* Leave nothing half-made behind: the children this call made go. */
		for (i = 0; i < n; i++)
			if (made_now[i] && (*ids)[i] != NULL)
				sbx_sandbox_destroy(s, (*ids)[i], &ignored);
		free_ids(*ids, (size_t)n);
		*ids = NULL;
		sbx_audit(s, src, "fork", "error", e->msg, NULL);
	}
	free(w);
	free(made_now);
	sbx_strv_free(&kids);
	sbx_snapshot_free(&sn);
	if (lock != -1)
		close(lock);
	return r;
}

int
sbx_fork_select(const struct sbx_store *s, const char *winner, const char *snap_id,
    char out[SBX_ID_MAX + 1], struct sbx_err *e)
{
	struct sbx_snap_opts o = { snap_id, "select", 0 };
	struct sbx_manifest m;
	struct sbx_strv kids = { NULL, 0 };
	char *parent, detail[512];
	size_t i, retired = 0;
	int r = -1, again;

	if (sbx_id_check(winner, e) == -1 || sbx_sandbox_view(s, winner, &m, e) == -1)
		return -1;
	parent = m.rootfs;
	m.rootfs = NULL;
	sbx_manifest_free(&m);
	if (!sbx_manifest_rootfs_is_snapshot(parent) || !sbx_snapshot_exists(s, parent)) {
		sbx_err_set(e, SBX_EX_DATAERR, "sandbox %s was not made from a snapshot", winner);
		goto out;
	}
	again = snap_id != NULL && sbx_id_check(snap_id, NULL) == 0 && sbx_snapshot_exists(s, snap_id);
	if (sbx_snap_create(s, winner, &o, out, e) == -1)
		goto out;
	if (sbx_sandbox_children(s, parent, &kids, e) == -1)
		goto out;
	for (i = 0; i < kids.n; i++) {
		struct sbx_err de;

		if (strcmp(kids.v[i], winner) == 0)
			continue;
		if (sbx_sandbox_destroy(s, kids.v[i], &de) == 0 || de.code == SBX_EX_NOINPUT)
			retired++;
	}
	snprintf(detail, sizeof detail, "winner of %s; new head %s; %zu siblings retired", parent,
	    out, retired);
	/* A repeat with the head there and no sibling left did no select. */
	if (!again || retired > 0)
		sbx_audit(s, winner, "select", "ok", detail, NULL);
	r = 0;
out:
	if (r == -1)
		sbx_audit(s, winner, "select", "error", e->msg, NULL);
	sbx_strv_free(&kids);
	free(parent);
	return r;
}
