/* SPDX-License-Identifier: MIT */
/* The supervision loop on plain child processes, no sandbox: the status a
 * command's end maps to (SPEC §8), --timeout with and without its grace, the
 * lifetime, and a tier's report that the command never ran. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise.h"
#include "tap.h"
#include "util.h"

enum { EXIT3, SIGNAL_SELF, HANG, IGNORE_TERM, TERM_EXITS };

static void
on_term(int sig)
{
	_exit(9);
}

static void __attribute__((noreturn))
child(int what)
{
	if (what == EXIT3)
		_exit(3);
	if (what == SIGNAL_SELF)
		raise(SIGUSR1);
	for (;;)
		pause();
}

static int failed_calls, kill_all_calls;

static int
say_failed(void *ctx, struct sbx_err *e)
{
	failed_calls++;
	return sbx_err_set(e, SBX_EX_NOTFOUND, "nothing: not found") == -1;
}

static void
count_kill_all(void *ctx)
{
	kill_all_calls++;
}

/* Start what, supervise it with sv's settings, return the status. */
static int
run(int what, struct sbx_supervise *set, struct sbx_trace *t, int *ret)
{
	struct sbx_supervise sv;
	struct sbx_err e = { 0 };
	int status = 0;

	sbx_supervise_init(&sv);
	if (set != NULL) {
		sv.timeout_s = set->timeout_s;
		sv.kill_after_s = set->kill_after_s;
		sv.lifetime_s = set->lifetime_s;
		sv.expires_at = set->expires_at;
		sv.failed = set->failed;
		sv.kill_all = set->kill_all;
	}
	sbx_trace_init(t);
	sbx_supervise_start(&sv, t);
	/* The child's SIGTERM set before it exists: however late it runs, the
	 * loop's SIGTERM finds it so. */
	signal(SIGTERM, what == IGNORE_TERM ? SIG_IGN : what == TERM_EXITS ? on_term : SIG_DFL);
	if ((sv.pid = fork()) == 0)
		child(what);
	signal(SIGTERM, SIG_DFL);
	sv.pidfd = (int)syscall(SYS_pidfd_open, sv.pid, 0);
	sbx_supervise_catch(&sv);
	*ret = sbx_supervise_run(&sv, &status, t, &e);
	sbx_supervise_release(&sv);
	close(sv.pidfd);
	return status;
}

int
main(void)
{
	struct sbx_supervise set;
	struct sbx_trace t;
	int r;

	ok(run(EXIT3, NULL, &t, &r) == 3 && r == 0 && t.exit_code == 3 && t.kill_reason == NULL &&
	    t.start_time != NULL && t.elapsed_s >= 0, "an exit status passes through");
	sbx_trace_free(&t);
	ok(run(SIGNAL_SELF, NULL, &t, &r) == 128 + SIGUSR1 && t.signal == SIGUSR1 &&
	    t.exit_code == SBX_UNSET_INT, "a signal is 128+N");
	sbx_trace_free(&t);

	sbx_supervise_init(&set);
	set.timeout_s = 0.05;
	set.kill_all = count_kill_all;
	ok(run(HANG, &set, &t, &r) == SBX_EX_TIMEOUT && t.timed_out && t.signal == SIGKILL &&
	    strcmp(t.kill_reason, "timeout") == 0 && t.elapsed_s >= 0.05,
	    "at the timeout, SIGKILL and 124");
	ok(kill_all_calls == 1, "kill_all before the SIGKILL");
	sbx_trace_free(&t);
	set.kill_after_s = 30;
	ok(run(TERM_EXITS, &set, &t, &r) == SBX_EX_TIMEOUT && t.timed_out && t.exit_code == 9,
	    "with a grace, SIGTERM first: the command's handler ran");
	ok(kill_all_calls == 1, "no kill_all for a SIGTERM");
	sbx_trace_free(&t);
	set.kill_after_s = 0.05;
	ok(run(IGNORE_TERM, &set, &t, &r) == SBX_EX_TIMEOUT && t.signal == SIGKILL &&
	    t.elapsed_s >= 0.1, "SIGKILL after the grace for a command that ignores SIGTERM");
	sbx_trace_free(&t);

	sbx_supervise_init(&set);
	set.timeout_s = 30;
	set.lifetime_s = 0.05;
	ok(run(HANG, &set, &t, &r) == 128 + SIGKILL && !t.timed_out &&
	    strcmp(t.kill_reason, "wall-clock") == 0, "the lifetime before the timeout: 137");
	sbx_trace_free(&t);

	sbx_supervise_init(&set);
	set.failed = say_failed;
	ok(run(EXIT3, &set, &t, &r) == SBX_EX_NOTFOUND && r == -1 && t.exit_code == SBX_EX_NOTFOUND &&
	    failed_calls == 1, "the tier's failure is the status, and -1");
	sbx_trace_free(&t);
	return done_testing();
}
