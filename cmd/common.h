/* SPDX-License-Identifier: MIT */
/* What every sbx program's main() shares: messages, version, output format. */
#ifndef SBX_CMD_COMMON_H
#define SBX_CMD_COMMON_H

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "doc.h"
#include "error.h"
#include "id.h"
#include "progress.h"

/* The state root, made if need be, and its audit log: a bad audit setting (a
 * key that cannot be read) stops the tool here, before it acts, rather than
 * leaving its events unlogged. */
static inline int
sbx_cmd_store(struct sbx_store *s, struct sbx_err *e)
{
	return sbx_store_open(s, e) == -1 ? -1 : sbx_audit_open(s, e);
}

static inline void __attribute__((noreturn))
sbx_die(const struct sbx_err *e, const char *context)
{
	if (context != NULL)
		errx(e->code ? e->code : SBX_EX_SOFTWARE, "%s: %s", context, e->msg);
	errx(e->code ? e->code : SBX_EX_SOFTWARE, "%s", e->msg);
}

/*
 * The usage line(s) on stderr and exit code; with code 0 (-h) on stdout,
 * followed by the options and where the manual is.
 */
static inline void __attribute__((noreturn))
sbx_usage(int code, const char *synopsis, const char *options)
{
	FILE *f = code ? stderr : stdout;

	fputs(synopsis, f);
	if (code == 0)
		fprintf(f, "\n%s\nSee %s(%d).\n", options, program_invocation_short_name,
		    strcmp(program_invocation_short_name, "sbx") == 0 ? 7 : 1);
	exit(code);
}

static inline void __attribute__((noreturn))
sbx_version(void)
{
	printf("%s %s\n", program_invocation_short_name, SBX_VERSION);
	exit(0);
}

static inline enum sbx_format
sbx_opt_format(const char *arg, int usage_code)
{
	enum sbx_format f;

	if (sbx_format_parse(arg, &f) == -1)
		errx(usage_code, "-o: '%s' is not yaml or json", arg);
	return f;
}

/*
 * The one ID operand of a program, or the ID on stdin (SPEC §2). With no
 * operand and a terminal on stdin, usage(64); a bad ID exits 65.
 */
static inline void
sbx_id_operand(int argc, char *argv[], char *id, size_t size, void (*usage)(int))
{
	struct sbx_err e = { 0 };

	if (argc > 1)
		usage(SBX_EX_USAGE);
	if (sbx_id_from_arg_or_stdin(argc ? argv[0] : NULL, SBX_KEYS("sandbox_id"), id, size,
	    &e) == -1) {
		if (e.code == SBX_EX_USAGE)
			usage(SBX_EX_USAGE);
		sbx_die(&e, NULL);
	}
}

/*
 * Before each record of a stream on stdout: YAML records are the documents of
 * one YAML stream, each opened by "---" (JSON records are one object a line).
 */
static inline void
sbx_record_start(enum sbx_format fmt)
{
	if (fmt == SBX_FMT_YAML)
		fputs("---\n", stdout);
}

static inline void
sbx_cmd_progress_failed(void)
{
	sbx_progress_end(0);
}

/*
 * --progress json|bar|none: how the verb's long work is shown (default: a
 * bar on a terminal), and SIGINT and SIGTERM stop it at its next safe
 * point (exit 130, 143). A verb that exits before sbx_progress_end(1) ends
 * with a "failed" line.
 */
static inline void
sbx_cmd_progress(const char *arg, const char *verb, int phases)
{
	enum sbx_progress_mode mode = SBX_PROGRESS_BAR;

	if (arg != NULL && sbx_progress_parse(arg, &mode) == -1)
		errx(SBX_EX_USAGE, "--progress: '%s' is not json, bar or none", arg);
	/* A transfer draws its own bar. */
	if (mode == SBX_PROGRESS_NONE)
		setenv("SBX_NO_PROGRESS", "1", 1);
	sbx_progress_start(mode, verb, phases);
	atexit(sbx_cmd_progress_failed);
	sbx_interrupt_catch();
}

/* Flush stdout and report a failed write (a closed pipe, a full disk) as 74. */
static inline int
sbx_flush_stdout(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		warn("stdout");
		return SBX_EX_IOERR;
	}
	return 0;
}

#endif
