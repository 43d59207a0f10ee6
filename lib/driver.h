/* SPDX-License-Identifier: MIT */
/*
 * One driver per isolation tier. The lifecycle code (sandbox.c) calls only
 * these; a tier's kernel or VM details stay in its driver. `namespace` is
 * built; `oci` and `microvm` report exit 69 until their drivers exist.
 */
#ifndef SBX_DRIVER_H
#define SBX_DRIVER_H

#include <stddef.h>

#include "error.h"
#include "manifest.h"
#include "state.h"

struct sbx_exec {
	char *const *argv;
	char *const *env;        /* extra KEY=VALUE, after the manifest's env */
	size_t n_env;
	const char *workdir;     /* NULL: the manifest's */
	const char *user;        /* NULL: the manifest's */
	int tty;                 /* allocate a terminal in the sandbox */
	double timeout_s;        /* 0: none */
	double kill_after_s;     /* grace between SIGTERM and SIGKILL on timeout; 0: SIGKILL */
	double lifetime_s;       /* set by the lifecycle: seconds until the sandbox expires */
	/* Set by the lifecycle: called once the command's process is made and
	 * while it sets itself up; the command execs only after it returns (the
	 * run-start audit line is synced meanwhile, not before the fork). */
	void (*starting)(void *ctx);
	void *starting_ctx;
};

struct sbx_exec_result {
	int status;              /* the exit status sbx-run passes on (SPEC §8) */
	struct sbx_trace trace;
};

struct sbx_driver {
	const char *name;
	/* Can this host enforce everything m asks for? Exit 69 naming what it cannot. */
	int (*check)(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e);
	/* Create the kernel objects; fill m->rt. On failure nothing is left behind. */
	int (*create)(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e);
	/* Run a command; result->status is set whenever the command was started. */
	int (*exec)(const struct sbx_store *s, const struct sbx_manifest *m,
	    const struct sbx_exec *x, struct sbx_exec_result *res, struct sbx_err *e);
	/* Are the sandbox's kernel objects there? */
	int (*alive)(const struct sbx_manifest *m);
	/* Freeze (1) or thaw (0) every process of the sandbox. */
	int (*freeze)(const struct sbx_manifest *m, int frozen, struct sbx_err *e);
	/* Kill everything and remove the kernel objects; missing ones are fine. */
	int (*destroy)(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e);
};

extern const struct sbx_driver sbx_driver_namespace;

/* The driver for m->isolation_level, or exit 69 for tiers this build lacks. */
const struct sbx_driver *sbx_driver_for(const struct sbx_manifest *m, struct sbx_err *e);

#endif
