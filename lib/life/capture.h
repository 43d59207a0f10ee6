/* SPDX-License-Identifier: MIT */
/*
 * A run whose streams are data, not the caller's: stdin from a buffer,
 * stdout and stderr kept in memory up to a bound each (what sbx-run -o json
 * and sbx-mcp return). What the command writes past the bound is read and
 * counted, never kept, so it cannot block on a full pipe or fill our memory.
 * What is in the pipes when the command has ended is kept; a process it left
 * running in the sandbox writes into a closed pipe after that.
 */
#ifndef SBX_CAPTURE_H
#define SBX_CAPTURE_H

#include <stddef.h>

#include "doc.h"
#include "driver.h"
#include "error.h"
#include "sha256.h"
#include "state.h"

struct sbx_stream {
	char *buf;                 /* the first bytes, NUL-terminated (may hold NULs) */
	size_t len;                /* bytes in buf */
	unsigned long long total;  /* bytes the command wrote */
	struct sbx_sha256 hash;    /* of all of them, kept or not */
	char sha256[65];           /* its hex digest, once the command has ended */
};

struct sbx_capture {
	/* The command's stdin: input_len bytes of input, or (input NULL) the
	 * descriptor stdin_fd (-1: empty). */
	const char *input;
	size_t input_len;
	int stdin_fd;
	/* Not 0: the command's stdout is this descriptor, not captured. */
	int stdout_to;
	size_t limit;              /* bytes kept of each of stdout and stderr */
	struct sbx_stream out, err;
	int truncated;             /* either stream wrote more than limit */
};

/*
 * sbx_sandbox_run with the streams of c (x->tty must be 0): out and err are
 * filled whenever the command started, and freed by sbx_capture_free.
 */
int sbx_sandbox_run_capture(const struct sbx_store *s, const char *id, const struct sbx_exec *x,
    struct sbx_capture *c, struct sbx_exec_result *res, struct sbx_err *e);
void sbx_capture_free(struct sbx_capture *c);
/*
 * The run's result as one object: exit_code (the status sbx-run exits with),
 * signal (the one that ended the command, or null), stdout and stderr as
 * text (sbx_utf8_text; without streams, not these two), stdout_bytes and
 * stderr_bytes (all the command wrote), stdout_sha256 and stderr_sha256
 * (the SHA-256 of all it wrote to each), truncated, error (error's text,
 * when not NULL) and trace. NULL: out of memory.
 */
struct sbx_node *sbx_capture_tree(const struct sbx_capture *c, const struct sbx_exec_result *res,
    const char *error, int streams);
/* The same keys, added to map n; -1 when out of memory. */
int sbx_capture_add(struct sbx_node *n, const struct sbx_capture *c,
    const struct sbx_exec_result *res, const char *error, int streams);

#endif
