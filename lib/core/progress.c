/* SPDX-License-Identifier: MIT */
/* Progress lines and interruption: see progress.h. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

static struct {
	enum sbx_progress_mode mode;
	const char *verb, *phase, *unit;
	int phases, index, drawn;
	long long done, total, base;
	double t0, last;
} p;

static volatile sig_atomic_t caught;

int
sbx_progress_parse(const char *s, enum sbx_progress_mode *mode)
{
	if (strcmp(s, "json") == 0)
		*mode = SBX_PROGRESS_JSON;
	else if (strcmp(s, "bar") == 0)
		*mode = SBX_PROGRESS_BAR;
	else if (strcmp(s, "none") == 0)
		*mode = SBX_PROGRESS_NONE;
	else
		return -1;
	return 0;
}

void
sbx_progress_start(enum sbx_progress_mode mode, const char *verb, int phases)
{
	memset(&p, 0, sizeof p);
	p.mode = mode == SBX_PROGRESS_BAR && !isatty(STDERR_FILENO) ? SBX_PROGRESS_NONE : mode;
	p.verb = verb;
	p.phases = phases > 0 ? phases : 1;
	p.t0 = sbx_monotonic();
}

int
sbx_progress_json(void)
{
	return p.mode == SBX_PROGRESS_JSON;
}

/* The whole verb's share done: finished phases and this one's part, below 100. */
static double
percent(void)
{
	double frac = p.total > 0 ? (double)p.done / (double)p.total : 0;
	double pc;

	if (frac > 1)
		frac = 1;
	pc = 100.0 * ((p.index > 0 ? p.index - 1 : 0) + frac) / p.phases;
	return pc > 99.9 ? 99.9 : pc;
}

static void
emit(const char *phase, double pc, int last, int ok)
{
	double el = sbx_monotonic() - p.t0;

	if (p.mode == SBX_PROGRESS_JSON) {
		fprintf(stderr, "{\"progress\":\"%s\",\"phase\":\"%s\"", p.verb, phase);
		if (!last) {
			fprintf(stderr, ",\"done\":%lld,\"total\":", p.done);
			if (p.total >= 0)
				fprintf(stderr, "%lld", p.total);
			else
				fputs("null", stderr);
			fprintf(stderr, ",\"unit\":\"%s\"", p.unit ? p.unit : "");
		} else {
			fprintf(stderr, ",\"ok\":%s", ok ? "true" : "false");
		}
		fprintf(stderr, ",\"percent\":%.1f,\"elapsed_s\":%.3f}\n", pc, el);
		fflush(stderr);
	} else if (p.mode == SBX_PROGRESS_BAR && (p.drawn || el >= 1.0)) {
		int w = (int)(pc / 5);

		fprintf(stderr, "\r%s: [%.*s%*s] %3.0f%%  %s\033[K", p.verb, w,
		    "####################", 20 - w, "", pc, phase);
		if (last)
			fputc('\n', stderr);
		p.drawn = 1;
	}
}

void
sbx_progress_phase(const char *phase, long long total, const char *unit)
{
	if (p.verb == NULL)
		return;
	if (p.index < p.phases)
		p.index++;
	p.phase = phase;
	p.unit = unit;
	p.total = total;
	p.done = p.base = 0;
	p.last = sbx_monotonic();
	emit(phase, percent(), 0, 0);
}

static void
update(long long done)
{
	double now;

	if (p.verb == NULL || p.phase == NULL)
		return;
	p.done = done;
	now = sbx_monotonic();
	if (now - p.last < 0.2 && (p.total < 0 || done < p.total))
		return;
	p.last = now;
	emit(p.phase, percent(), 0, 0);
}

void
sbx_progress_set(long long done)
{
	p.base = done;
	update(done);
}

void
sbx_progress_add(long long n)
{
	sbx_progress_set(p.done + n);
}

void
sbx_progress_part(long long part)
{
	update(p.base + part);
}

void
sbx_progress_end(int ok)
{
	if (p.verb == NULL)
		return;
	if (ok || p.drawn || p.mode == SBX_PROGRESS_JSON)
		emit(ok ? "done" : "failed", ok ? 100.0 : percent(), 1, ok);
	p.verb = NULL;
}

static void
on_interrupt(int sig)
{
	caught = sig;
}

void
sbx_interrupt_catch(void)
{
	struct sigaction sa = { .sa_handler = on_interrupt, .sa_flags = SA_RESTART };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int
sbx_interrupted(void)
{
	return caught;
}

int
sbx_interrupt_check(struct sbx_err *e)
{
	int sig = caught;

	if (sig == 0)
		return 0;
	return sbx_err_set(e, 128 + sig, "interrupted by %s: stopped, nothing half done is "
	    "kept; the same command again does the work", sig == SIGINT ? "SIGINT" : "SIGTERM");
}
