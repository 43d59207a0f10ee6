/* SPDX-License-Identifier: MIT */
/* The supervision loop of a run, the same for every tier (supervise.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pty.h"
#include "supervise.h"
#include "util.h"

static const int caught_sigs[4] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH };

static volatile sig_atomic_t forward_sig, winch;

static void
on_signal(int sig)
{
	if (sig == SIGWINCH)
		winch = 1;
	else
		forward_sig = sig;
}

void
sbx_supervise_init(struct sbx_supervise *sv)
{
	memset(sv, 0, sizeof *sv);
	sv->pid = -1;
	sv->pidfd = -1;
	sv->master = -1;
	sv->ctl = -1;
}

void
sbx_supervise_start(struct sbx_supervise *sv, struct sbx_trace *t)
{
	char stamp[32];

	sbx_time_rfc3339(stamp, sizeof stamp, time(NULL));
	t->start_time = strdup(stamp);
	sv->t0 = sbx_monotonic();
}

int
sbx_supervise_adopt(struct sbx_supervise *sv, pid_t pid, struct sbx_err *e)
{
	/* The wait in the loop enforces --timeout; without a pidfd it could not. */
	if ((sv->pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1) {
		sbx_err_sys(e, SBX_EX_RUNFAIL, "pidfd_open");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	sv->pid = pid;
	return 0;
}

void
sbx_supervise_catch(struct sbx_supervise *sv)
{
	struct sigaction sa = { 0 };
	size_t i;

	sa.sa_handler = on_signal;
	for (i = 0; i < SBX_ARRAY_LEN(caught_sigs); i++)
		sigaction(caught_sigs[i], &sa, &sv->old[i]);
	sv->caught = 1;
}

void
sbx_supervise_hold(void)
{
	struct sigaction sa = { 0 };
	size_t i;

	sa.sa_handler = on_signal;
	for (i = 0; i < SBX_ARRAY_LEN(caught_sigs); i++)
		sigaction(caught_sigs[i], &sa, NULL);
}

void
sbx_supervise_fork_begin(sigset_t *old)
{
	sigset_t hold;
	size_t i;

	sigemptyset(&hold);
	for (i = 0; i < SBX_ARRAY_LEN(caught_sigs); i++)
		sigaddset(&hold, caught_sigs[i]);
	sigprocmask(SIG_BLOCK, &hold, old);
}

void
sbx_supervise_fork_child(const sigset_t *old)
{
	size_t i;

	for (i = 0; i < SBX_ARRAY_LEN(caught_sigs); i++)
		signal(caught_sigs[i], SIG_DFL);
	sigprocmask(SIG_SETMASK, old, NULL);
}

void
sbx_supervise_fork_end(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

int
sbx_supervise_pending(void)
{
	int sig = forward_sig;

	forward_sig = 0;
	return sig;
}

void
sbx_supervise_release(struct sbx_supervise *sv)
{
	size_t i;

	if (!sv->caught)
		return;
	for (i = 0; i < SBX_ARRAY_LEN(caught_sigs); i++)
		sigaction(caught_sigs[i], &sv->old[i], NULL);
	sv->caught = 0;
}

static void
send_sig(struct sbx_supervise *sv, int sig)
{
	if (sv->signal != NULL)
		sv->signal(sv->ctx, sig);
	else
		kill(sv->pid, sig);
}

/* Where the watch stands: the deadline, and what it did at it. */
struct watch {
	double deadline, term_at;
	int wall_clock, killed_term, timed_out, expired;
};

/*
 * The deadline's part of one turn of the loop: at the lifetime, SIGKILL;
 * at the timeout, SIGTERM and SIGKILL after the grace (timeout(1)), or
 * SIGKILL without one. Returns how long poll may wait (-1: no deadline), or
 * -2 when it acted and the loop turns again.
 */
static int
watch_deadline(struct sbx_supervise *sv, struct watch *w)
{
	double left;

	if (w->deadline <= 0)
		return -1;
	left = (w->term_at > 0 ? w->term_at : w->deadline) - sbx_monotonic();
	if (left > 0)
		return (int)(left * 1000) + 1;
	if (w->wall_clock)
		w->expired = 1;
	else if (sv->kill_after_s > 0 && !w->killed_term) {
		send_sig(sv, SIGTERM);
		w->killed_term = 1;
		w->term_at = sbx_monotonic() + sv->kill_after_s;
		w->timed_out = 1;
		return -2;
	} else
		w->timed_out = 1;
	if (sv->kill_all != NULL)
		sv->kill_all(sv->ctx);
	send_sig(sv, SIGKILL);
	w->deadline = 0;
	return -2;
}

/*
 * What the caller's channel brought: signals to pass on, or its end, after
 * which the run goes as a deadline's does (the caller is gone: nothing waits
 * for the command any more).
 */
static void
read_ctl(struct sbx_supervise *sv)
{
	unsigned char sigs[16];
	ssize_t n, i;

	while ((n = read(sv->ctl, sigs, sizeof sigs)) == -1 && errno == EINTR)
		;
	for (i = 0; i < n; i++)
		if (sigs[i] == SIGINT || sigs[i] == SIGTERM || sigs[i] == SIGHUP)
			send_sig(sv, sigs[i]);
	if (n > 0 || (n == -1 && errno == EAGAIN))
		return;
	sv->ctl = -1;
	if (sv->kill_all != NULL)
		sv->kill_all(sv->ctx);
	send_sig(sv, SIGKILL);
}

/* Until the command ends (its pidfd reads ready). */
static void
watch(struct sbx_supervise *sv, struct watch *w)
{
	int stdin_open = 1;

	for (;;) {
		struct pollfd pf[4] = { { sv->pidfd, POLLIN, 0 }, { sv->master, POLLIN, 0 },
			{ stdin_open && sv->master != -1 ? 0 : -1, POLLIN, 0 },
			{ sv->ctl, POLLIN, 0 } };
		int wait_ms;

		if (forward_sig) {
			send_sig(sv, forward_sig);
			forward_sig = 0;
		}
		if (winch && sv->master != -1) {
			winch = 0;
			sbx_pty_winsize(sv->master);
		}
		if ((wait_ms = watch_deadline(sv, w)) == -2)
			continue;
		if (poll(pf, 4, wait_ms) == -1 && errno != EINTR)
			break;
		if (pf[0].revents)
			break;
		if (pf[3].revents)
			read_ctl(sv);
		if (sv->master != -1 && (pf[1].revents || pf[2].revents) &&
		    sbx_pty_pump(sv->master, pf[2].revents != 0, pf[1].revents != 0,
		    &stdin_open) == -1) {
			/* The terminal closed: the command is on its way out. */
			close(sv->master);
			sv->master = -1;
		}
	}
	if (sv->master != -1) {
		/* Drain what the command wrote before it exited. */
		int fl = fcntl(sv->master, F_GETFL);

		fcntl(sv->master, F_SETFL, fl | O_NONBLOCK);
		while (sbx_pty_pump(sv->master, 0, 1, &stdin_open) == 0) {
			struct pollfd pm = { sv->master, POLLIN, 0 };

			if (poll(&pm, 1, 0) <= 0)
				break;
		}
	}
}

/* The exit status sbx-run passes on (SPEC §8), and why the run ended. */
static int
exit_status(struct sbx_supervise *sv, const struct watch *w, int *status, struct sbx_trace *t,
    struct sbx_err *e)
{
	int ws = sv->wait_status, expired = w->expired, r = 0;

	if (sv->failed != NULL && sv->failed(sv->ctx, e)) {
		/* The tier (125) or the exec (126/127) failed: the command never ran. */
		*status = e->code;
		t->exit_code = e->code;
		r = -1;
	} else if (WIFEXITED(ws)) {
		*status = WEXITSTATUS(ws);
		t->exit_code = WEXITSTATUS(ws);
	} else if (WIFSIGNALED(ws)) {
		*status = 128 + WTERMSIG(ws);
		t->signal = WTERMSIG(ws);
	}
	/* The tier ends the sandbox at its lifetime too: a run it took with it
	 * ran out of the lifetime as well. */
	if (!expired && w->wall_clock && WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL &&
	    sv->expires_at > 0 && sbx_realtime() >= sv->expires_at)
		expired = 1;
	if (expired) {
		*status = 128 + SIGKILL;
		t->kill_reason = strdup("wall-clock");
	} else if (w->timed_out) {
		*status = SBX_EX_TIMEOUT;
		t->timed_out = 1;
		t->kill_reason = strdup("timeout");
	}
	return r;
}

int
sbx_supervise_run(struct sbx_supervise *sv, int *status, struct sbx_trace *t,
    struct sbx_err *e)
{
	struct watch w = { 0 };
	int reaped = 0;

	if (sv->master != -1) {
		sbx_pty_winsize(sv->master);
		sbx_pty_raw();
	}
	if (sv->timeout_s > 0)
		w.deadline = sv->t0 + sv->timeout_s;
	/* No run outlives its sandbox: the lifetime bounds it even with no watchdog. */
	if (sv->lifetime_s > 0 && (w.deadline == 0 || sv->t0 + sv->lifetime_s < w.deadline)) {
		w.deadline = sv->t0 + sv->lifetime_s;
		w.wall_clock = 1;
	}
	watch(sv, &w);
	sv->wait_status = 0;
	memset(&sv->ru, 0, sizeof sv->ru);
	if (sv->wait != NULL) {
		if (sv->wait(sv->ctx, &sv->wait_status, &sv->ru, e) == -1)
			reaped = -1;
	} else
		while (wait4(sv->pid, &sv->wait_status, 0, &sv->ru) == -1 && errno == EINTR)
			;
	t->elapsed_s = sbx_monotonic() - sv->t0;
	sbx_pty_restore();
	if (reaped == -1) {
		*status = SBX_EX_RUNFAIL;
		return -1;
	}
	return exit_status(sv, &w, status, t, e);
}
