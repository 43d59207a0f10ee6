/* SPDX-License-Identifier: MIT */
/* Error object: the library reports, only main() prints and exits. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

int
sbx_err_set(struct sbx_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return -1;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	return -1;
}

int
sbx_errno_code(int err, int fallback)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		return SBX_EX_NOINPUT;
	case EACCES:
	case EPERM:
		return SBX_EX_NOPERM;
	case EWOULDBLOCK:
		return SBX_EX_TEMPFAIL;
	case ENOSYS:
	case EOPNOTSUPP:
		return SBX_EX_UNAVAILABLE;
	case EIO:
		return SBX_EX_IOERR;
	default:
		return fallback;
	}
}

int
sbx_err_sys(struct sbx_err *e, int code, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	size_t n;

	if (e == NULL)
		return -1;
	e->code = code ? code : sbx_errno_code(saved, SBX_EX_OSERR);
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	n = strlen(e->msg);
	snprintf(e->msg + n, sizeof e->msg - n, ": %s", strerror(saved));
	errno = saved;
	return -1;
}

int
sbx_err_prefix(struct sbx_err *e, const char *fmt, ...)
{
	char pre[512], old[sizeof e->msg];
	va_list ap;

	if (e == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof old);
	snprintf(e->msg, sizeof e->msg, "%s: %s", pre, old);
	return -1;
}

int
sbx_err_oom(struct sbx_err *e)
{
	return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
}
