/* SPDX-License-Identifier: MIT */
/* Small file and process helpers used by every module. */
#ifndef SBX_UTIL_H
#define SBX_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define SBX_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Read a whole file (at most max bytes; more is an error). Caller frees *buf. */
int sbx_read_file(const char *path, size_t max, char **buf, size_t *len, struct sbx_err *e);
/* Read all of fd (at most max bytes). */
int sbx_read_fd(int fd, size_t max, char **buf, size_t *len, const char *what, struct sbx_err *e);
/* Write a file atomically: temp file in the same directory, fsync, rename, fsync dir. */
int sbx_write_atomic(const char *path, const void *buf, size_t len, mode_t mode, struct sbx_err *e);
/* The same without the fsyncs: atomic, not durable (a crash may bring back the old file). */
/* Durable, and never in place of an existing file: that is EEXIST (errno kept). */
int sbx_write_atomic_new(const char *path, const void *buf, size_t len, mode_t mode,
    struct sbx_err *e);
/* Open (creating) a lock file and flock it, shared or exclusive, waiting. */
int sbx_lock_file(const char *path, int exclusive, struct sbx_err *e);
/* Set *field to a fresh copy of t as RFC 3339 with milliseconds. */
int sbx_time_set(char **field, double t);
/*
 * Of the NULL-terminated cands, the one nearest to word by edit distance
 * (insertions, deletions, substitutions, transpositions) when it is near enough
 * to be a typo of it (at most 2 edits, and fewer than half of word's length),
 * for "did you mean" hints; NULL when none is.
 */
const char *sbx_nearest(const char *word, const char *const *cands);
/* n bytes as 2n lowercase hex digits and a NUL. */
void sbx_hex(const unsigned char *d, size_t n, char *out);
/* n bytes as text for a JSON string: valid UTF-8, each NUL, malformed or
 * overlong sequence (and a sequence cut at the end) replaced by U+FFFD.
 * Malloc'd; NULL when out of memory. */
char *sbx_utf8_text(const char *b, size_t n);
int sbx_write_atomic_nosync(const char *path, const void *buf, size_t len, mode_t mode,
    struct sbx_err *e);
/*
 * Whether this process's atomic writes are also durable (default on). A
 * one-shot run, whose sandbox lives only as long as the process, turns it off:
 * its files stay atomic; a host crash may lose them, and there is then
 * nothing to keep. The audit log is not affected (see sbx_audit_deferred).
 */
void sbx_set_durable(int on);
/* Write a short string to an existing file (sysfs, procfs). Returns -1 with errno. */
int sbx_write_str(const char *path, const char *s);
int sbx_write_strat(int dirfd, const char *name, const char *s);
/* Read a short file into buf (NUL-terminated, trailing newline kept). -1 with errno. */
ssize_t sbx_read_str(const char *path, char *buf, size_t size);
ssize_t sbx_read_strat(int dirfd, const char *name, char *buf, size_t size);
/* mkdir -p; existing directories are fine. */
/* mkdir with exactly mode (the umask does not apply); -1 with errno (EEXIST too). */
int sbx_mkdir_mode(const char *path, mode_t mode);
int sbx_mkdir_p(const char *path, mode_t mode, struct sbx_err *e);
/* rm -rf that never crosses into another mount (st_dev check). */
int sbx_rm_rf(const char *path, struct sbx_err *e);
/* Write all of buf to fd, retrying on EINTR and short writes. */
int sbx_write_all(int fd, const void *buf, size_t len);
/* Current wall-clock time as RFC 3339 UTC ("2026-06-04T09:00:00Z"). */
void sbx_time_rfc3339(char *buf, size_t size, time_t t);
/* The same with milliseconds ("2026-06-04T09:00:00.250Z"), for deadlines. */
void sbx_time_rfc3339_ms(char *buf, size_t size, double t);
/* Parse RFC 3339 UTC as written by either, into seconds since the epoch. */
int sbx_time_parse(const char *s, double *t);
/* The wall clock in seconds since the epoch, with its fraction. */
double sbx_realtime(void);
/* A duration: seconds, or a number with s, m, h or d. */
int sbx_duration_parse(const char *s, double *seconds);
double sbx_monotonic(void);
/* Process start time (clock ticks since boot, /proc/PID/stat field 22); 0 if gone. */
unsigned long long sbx_proc_starttime(pid_t pid);
/* Name this process for ps, inside a sandbox and on the host: its command
 * name (up to the first space, 15 bytes) and its command line (as long as
 * the original one was). */
void sbx_proc_title(const char *title);
/* A process started to outlive its starter (watchdog, runner, pool refill,
 * a one-shot's teardown): its own session, stdio on /dev/null, no inherited
 * fds past 2 but keep (-1: none), which becomes fd 3, the default end at
 * SIGINT, SIGTERM and SIGHUP, no parent-death signal. Returns keep's new
 * number (3), or -1. */
int sbx_detach(int keep);
/* True when pid is alive and still the process that started at starttime. */
int sbx_proc_alive(pid_t pid, unsigned long long starttime);
/*
 * Send sig to pid if it is still the process that started at starttime, and
 * wait up to ms for it to exit (on a pidfd). 1: it exited (or was gone
 * already), 0: still there after ms.
 */
int sbx_proc_signal_wait(pid_t pid, unsigned long long starttime, int sig, int ms);
/* SIGKILL pid (if it is still the process that started at starttime) and
 * wait up to ms for it to be gone or a zombie, on a pidfd or, without one,
 * by polling: 0 it is, -1 it is not. */
int sbx_proc_kill_wait(pid_t pid, unsigned long long starttime, int ms);
/*
 * Crash-safety tests: when $SBX_TEST_CRASH_AT names this point, the process
 * kills itself with SIGKILL here, as a crash or an OOM kill would.
 */
void sbx_crash_point(const char *name);
/*
 * Race tests: when $SBX_TEST_PAUSE_AT is "name:PATH", the process creates
 * PATH.paused here and waits (at most 60 s) until PATH exists.
 */
void sbx_pause_point(const char *name);
/* snprintf that reports truncation as an error. */
int sbx_path(char *buf, size_t size, struct sbx_err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
