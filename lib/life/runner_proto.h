/* SPDX-License-Identifier: MIT */
/*
 * The wire between sbx-run (runcall.c) and a sandbox's runner (runner.c):
 * a SOCK_SEQPACKET connection to the sandbox's run.sock. The client sends
 * one request, with the command's stdin, stdout and stderr (SCM_RIGHTS);
 * then, while the command runs, one byte a signal to pass on; the runner
 * answers with one reply. Both ends are this build on this host: integers
 * in the host's order. Header-only: the two ends share nothing else.
 */
#ifndef SBX_RUNNER_PROTO_H
#define SBX_RUNNER_PROTO_H

#include <stdint.h>
#include <string.h>

#define RUNNER_SOCK "run.sock"
/* Held shared by the manager and every worker (one open file, inherited):
 * free once they have all exited. */
#define RUNNER_LOCK "runner.lock"
#define RUNNER_MAGIC 0x52584253u   /* "SBXR" */
#define RUNNER_VERSION 1u
/* A request or a reply; a command whose words do not fit is run by the
 * client itself. */
#define RUNNER_MSG_MAX (64u << 10)
#define RUNNER_ARGS_MAX 4096u

enum { RUNNER_REQ_WORKDIR = 1, RUNNER_REQ_USER = 2 };

/* Followed by len bytes: argc, then envc NUL-ended strings; the working
 * directory and the user if flags name them; the correlation ID. */
struct runner_req {
	uint32_t magic, version;
	uint32_t argc, envc;
	uint32_t flags, umask;
	uint32_t len, pad;
	double timeout_s, kill_after_s;
	/* Of the client's SBX_* environment (runner.h): another is not served. */
	unsigned char env_digest[32];
};

enum runner_kind {
	RUNNER_RESULT = 1,   /* the run's outcome */
	RUNNER_DECLINE,      /* run it yourself (nothing ran): not ours to serve */
};

/* Followed by len bytes: the error's message, the trace's start time and
 * kill reason (has_kill_reason), then n_dest egress destinations, each a
 * NUL-ended string. */
struct runner_reply {
	uint32_t magic;
	int32_t kind;
	int32_t r, status, code;      /* the run's return, its status, the error's code */
	int32_t has_trace, has_kill_reason, oom_killed, timed_out;
	uint32_t n_dest, len, pad;
	double elapsed_s, cpu_seconds_used, peak_memory_mb, disk_written_mb, disk_used_mb;
	int64_t exit_code, signal, pids_limit_hits;
	int64_t egress_denied, egress_sent_bytes, egress_received_bytes;
};

/* str (and its NUL) at *at in buf of size size; -1 when it does not fit. */
static inline int
runner_put_str(char *buf, size_t size, size_t *at, const char *str)
{
	size_t n = strlen(str) + 1;

	if (n > size - *at)
		return -1;
	memcpy(buf + *at, str, n);
	*at += n;
	return 0;
}

/* The NUL-ended string at *at of a message of len bytes, or NULL. */
static inline char *
runner_next_str(char *buf, size_t len, size_t *at)
{
	char *p = buf + *at, *end;

	if (*at >= len || (end = memchr(p, '\0', len - *at)) == NULL)
		return NULL;
	*at += (size_t)(end - p) + 1;
	return p;
}

#endif
