/* SPDX-License-Identifier: MIT */
/* Error object and exit codes shared by libsbx and the programs (SPEC §8). */
#ifndef SBX_ERROR_H
#define SBX_ERROR_H

enum {
	SBX_EX_OK = 0,
	SBX_EX_NO = 1,          /* a query answered no */
	SBX_EX_USAGE = 64,
	SBX_EX_DATAERR = 65,
	SBX_EX_NOINPUT = 66,
	SBX_EX_UNAVAILABLE = 69,
	SBX_EX_SOFTWARE = 70,
	SBX_EX_OSERR = 71,
	SBX_EX_CANTCREAT = 73,
	SBX_EX_IOERR = 74,
	SBX_EX_TEMPFAIL = 75,
	SBX_EX_NOPERM = 77,
	SBX_EX_TIMEOUT = 124,   /* sbx-run: the command ran out of time */
	SBX_EX_RUNFAIL = 125,   /* sbx-run: sbx failed before the command ran */
	SBX_EX_NOEXEC = 126,
	SBX_EX_NOTFOUND = 127,
};

struct sbx_err {
	int code;
	char msg[1024];
};

/* Fill e (if not NULL) and return -1, so callers can `return sbx_err_set(...)`. */
int sbx_err_set(struct sbx_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Same, with ": strerror(errno)" appended and the code chosen from errno. */
int sbx_err_sys(struct sbx_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prefix an existing message with more context ("what: old message"). */
int sbx_err_prefix(struct sbx_err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "out of memory" (71) in e: `return sbx_err_oom(e);` after a failed allocation. */
int sbx_err_oom(struct sbx_err *e);
/* An errno turned into the nearest exit code (ENOENT 66, EACCES 77, ...). */
int sbx_errno_code(int err, int fallback);

#endif
