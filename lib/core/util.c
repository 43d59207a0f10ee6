/* SPDX-License-Identifier: MIT */
/* Small file and process helpers used by every module. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <poll.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

void
sbx_crash_point(const char *name)
{
	const char *at = getenv("SBX_TEST_CRASH_AT");

	if (at != NULL && strcmp(at, name) == 0)
		kill(getpid(), SIGKILL);
}

void
sbx_pause_point(const char *name)
{
	const char *at = getenv("SBX_TEST_PAUSE_AT");
	size_t n = strlen(name);
	char p[1100];
	int i, fd;

	if (at == NULL || strncmp(at, name, n) != 0 || at[n] != ':' || at[n + 1] == '\0')
		return;
	snprintf(p, sizeof p, "%s.paused", at + n + 1);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) != -1)
		close(fd);
	for (i = 0; i < 6000 && access(at + n + 1, F_OK) == -1; i++)
		usleep(10000);
}

int
sbx_path(char *buf, size_t size, struct sbx_err *e, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		return sbx_err_set(e, SBX_EX_DATAERR, "path too long: %.80s...", buf);
	return 0;
}

int
sbx_read_fd(int fd, size_t max, char **out, size_t *outlen, const char *what, struct sbx_err *e)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap + 1), *nb;
	ssize_t n;

	if (buf == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	for (;;) {
		if (len == cap) {
			if (cap > max) {
				free(buf);
				return sbx_err_set(e, SBX_EX_DATAERR, "%s: larger than %zu bytes", what, max);
			}
			cap *= 2;
			if ((nb = realloc(buf, cap + 1)) == NULL) {
				free(buf);
				return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			free(buf);
			return sbx_err_sys(e, SBX_EX_IOERR, "%s", what);
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			free(buf);
			return sbx_err_set(e, SBX_EX_DATAERR, "%s: larger than %zu bytes", what, max);
		}
	}
	buf[len] = '\0';
	*out = buf;
	if (outlen)
		*outlen = len;
	return 0;
}

int
sbx_read_file(const char *path, size_t max, char **buf, size_t *len, struct sbx_err *e)
{
	int fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return sbx_err_sys(e, 0, "%s", path);
	r = sbx_read_fd(fd, max, buf, len, path, e);
	close(fd);
	return r;
}

int
sbx_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

enum { W_DURABLE = 1, W_NOREPLACE = 2 };

static int durable_writes = 1;

void
sbx_set_durable(int on)
{
	durable_writes = on;
}

static int
write_atomic(const char *path, const void *buf, size_t len, mode_t mode, int flags,
    struct sbx_err *e)
{
	char tmp[4096], dir[4096];
	int fd, dfd, durable = (flags & W_DURABLE) && durable_writes, err;

	if (sbx_path(tmp, sizeof tmp, e, "%s.tmp.%ld", path, (long)getpid()) == -1)
		return -1;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", tmp);
	if (sbx_write_all(fd, buf, len) == -1 || (durable && fsync(fd) == -1)) {
		sbx_err_sys(e, SBX_EX_IOERR, "%s", tmp);
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
	if ((flags & W_NOREPLACE ? renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) :
	    rename(tmp, path)) == -1) {
		err = errno;
		sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", path);
		unlink(tmp);
		errno = err;
		return -1;
	}
	snprintf(dir, sizeof dir, "%s", path);
	if (durable && (dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

int
sbx_write_atomic(const char *path, const void *buf, size_t len, mode_t mode, struct sbx_err *e)
{
	return write_atomic(path, buf, len, mode, W_DURABLE, e);
}

int
sbx_write_atomic_nosync(const char *path, const void *buf, size_t len, mode_t mode,
    struct sbx_err *e)
{
	return write_atomic(path, buf, len, mode, 0, e);
}

int
sbx_write_atomic_new(const char *path, const void *buf, size_t len, mode_t mode,
    struct sbx_err *e)
{
	return write_atomic(path, buf, len, mode, W_DURABLE | W_NOREPLACE, e);
}

int
sbx_lock_file(const char *path, int exclusive, struct sbx_err *e)
{
	int fd;

	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", path);
	if (flock(fd, exclusive ? LOCK_EX : LOCK_SH) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "lock %s", path);
		close(fd);
		return -1;
	}
	return fd;
}

int
sbx_time_set(char **field, double t)
{
	char buf[40];

	sbx_time_rfc3339_ms(buf, sizeof buf, t);
	free(*field);
	return (*field = strdup(buf)) == NULL ? -1 : 0;
}

void
sbx_hex(const unsigned char *d, size_t n, char *out)
{
	static const char x[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = x[d[i] >> 4];
		out[2 * i + 1] = x[d[i] & 15];
	}
	out[2 * n] = '\0';
}

int
sbx_write_strat(int dirfd, const char *name, const char *s)
{
	int fd, r;

	if ((fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	r = sbx_write_all(fd, s, strlen(s));
	if (close(fd) == -1)
		r = -1;
	return r;
}

int
sbx_write_str(const char *path, const char *s)
{
	return sbx_write_strat(AT_FDCWD, path, s);
}

ssize_t
sbx_read_strat(int dirfd, const char *name, char *buf, size_t size)
{
	int fd;
	ssize_t n;

	if ((fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	do
		n = read(fd, buf, size - 1);
	while (n == -1 && errno == EINTR);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

ssize_t
sbx_read_str(const char *path, char *buf, size_t size)
{
	return sbx_read_strat(AT_FDCWD, path, buf, size);
}

int
sbx_mkdir_p(const char *path, mode_t mode, struct sbx_err *e)
{
	char buf[4096], *p;

	if (sbx_path(buf, sizeof buf, e, "%s", path) == -1)
		return -1;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (sbx_mkdir_mode(buf, mode) == -1 && errno != EEXIST)
			return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", buf);
		*p = '/';
	}
	if (sbx_mkdir_mode(buf, mode) == -1 && errno != EEXIST)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", buf);
	return 0;
}

int
sbx_mkdir_mode(const char *path, mode_t mode)
{
	if (mkdir(path, mode) == -1)
		return -1;
	/* Exactly mode, whatever the umask (an operator's 077 or 000). */
	return chmod(path, mode);
}

static int
rm_at(int dfd, const char *name, dev_t dev, struct sbx_err *e)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int fd, r = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : sbx_err_sys(e, SBX_EX_IOERR, "%s", name);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dfd, name, 0) == -1 && errno != ENOENT)
			return sbx_err_sys(e, SBX_EX_IOERR, "unlink %s", name);
		return 0;
	}
	if (st.st_dev != dev)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "%s: still a mount point, not removed", name);
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* overlayfs leaves its work/work directory mode 000; it is ours to remove. */
	if (fd == -1 && errno == EACCES && fchmodat(dfd, name, 0700, 0) == 0)
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return sbx_err_sys(e, SBX_EX_IOERR, "%s", name);
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return sbx_err_sys(e, SBX_EX_IOERR, "%s", name);
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (rm_at(dirfd(d), de->d_name, dev, e) == -1)
			r = -1;
	}
	closedir(d);
	if (r == 0 && unlinkat(dfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT)
		return sbx_err_sys(e, SBX_EX_IOERR, "rmdir %s", name);
	return r;
}

int
sbx_rm_rf(const char *path, struct sbx_err *e)
{
	struct stat st;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : sbx_err_sys(e, SBX_EX_IOERR, "%s", path);
	return rm_at(AT_FDCWD, path, st.st_dev, e);
}

void
sbx_time_rfc3339(char *buf, size_t size, time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void
sbx_time_rfc3339_ms(char *buf, size_t size, double t)
{
	time_t sec = (time_t)t;
	struct tm tm;
	char base[32];
	int ms = (int)((t - (double)sec) * 1000);

	gmtime_r(&sec, &tm);
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03dZ", base, ms < 0 ? 0 : ms > 999 ? 999 : ms);
}

int
sbx_time_parse(const char *s, double *t)
{
	struct tm tm = { 0 };
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	double frac = 0;
	char *fe;

	if (end == NULL)
		return -1;
	if (*end == '.') {
		frac = strtod(end, &fe);
		end = fe;
	}
	if (end[0] != 'Z' || end[1] != '\0')
		return -1;
	*t = (double)timegm(&tm) + frac;
	return 0;
}

double
sbx_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double
sbx_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

unsigned long long
sbx_proc_starttime(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	int field;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (sbx_read_str(path, buf, sizeof buf) <= 0)
		return 0;
	/* The command name may hold spaces and ')': fields start after the last ')'. */
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (field == 22)
		v = strtoull(p, NULL, 10);
	return v;
}

void
sbx_proc_title(const char *title)
{
	char buf[1024], comm[16], *p;
	unsigned long long start = 0, end = 0;
	size_t n;
	int field;

	snprintf(comm, sizeof comm, "%s", title);
	if ((p = strchr(comm, ' ')) != NULL)
		*p = '\0';
	prctl(PR_SET_NAME, comm, 0, 0, 0);
	/* The command line is the argv area of our stack (/proc/self/stat fields
	 * 48 and 49): write the title over it, NUL-padded, keeping its last byte
	 * NUL so that the kernel shows exactly the title. */
	if (sbx_read_str("/proc/self/stat", buf, sizeof buf) <= 0 ||
	    (p = strrchr(buf, ')')) == NULL)
		return;
	for (field = 2; *p && field < 48; p++)
		if (*p == ' ')
			field++;
	if (field != 48 || sscanf(p, "%llu %llu", &start, &end) != 2 || end <= start ||
	    end - start > (1 << 20))
		return;
	n = strlen(title);
	if (n > end - start - 1)
		n = end - start - 1;
	memset((char *)(uintptr_t)start, 0, end - start);
	memcpy((char *)(uintptr_t)start, title, n);
}

int
sbx_proc_alive(pid_t pid, unsigned long long starttime)
{
	char path[64], buf[1024], *p;

	if (pid <= 0)
		return 0;
	if (sbx_proc_starttime(pid) != starttime)
		return 0;
	/* A zombie keeps its namespaces only until reaped; treat it as gone. */
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (sbx_read_str(path, buf, sizeof buf) <= 0 || (p = strrchr(buf, ')')) == NULL)
		return 0;
	return p[2] != 'Z' && p[2] != 'X';
}

int
sbx_proc_signal_wait(pid_t pid, unsigned long long starttime, int sig, int ms)
{
	struct pollfd pf = { -1, POLLIN, 0 };
	int r;

	/* Pin the process, then check it is the one we mean: a PID reused
	 * meanwhile is never signalled. Without pidfds (valgrind does not know
	 * them), signal by PID and do not wait. */
	if ((pf.fd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1) {
		if (errno == ESRCH)
			return 1;
		if (sbx_proc_alive(pid, starttime))
			kill(pid, sig);
		return 0;
	}
	if (!sbx_proc_alive(pid, starttime)) {
		close(pf.fd);
		return 1;
	}
	if (syscall(SYS_pidfd_send_signal, pf.fd, sig, NULL, 0) == -1)
		r = errno == ESRCH;   /* it exited meanwhile */
	else
		r = poll(&pf, 1, ms) == 1;
	close(pf.fd);
	return r;
}

int
sbx_proc_kill_wait(pid_t pid, unsigned long long starttime, int ms)
{
	int i;

	if (sbx_proc_signal_wait(pid, starttime, SIGKILL, ms))
		return 0;
	for (i = 0; i < ms && sbx_proc_alive(pid, starttime); i++)
		usleep(1000);
	return sbx_proc_alive(pid, starttime) ? -1 : 0;
}

int
sbx_duration_parse(const char *s, double *seconds)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || v != v)
		return -1;
	switch (*end) {
	case '\0': case 's': break;
	case 'm': v *= 60; break;
	case 'h': v *= 3600; break;
	case 'd': v *= 86400; break;
	default: return -1;
	}
	if (*end && end[1] != '\0')
		return -1;
	*seconds = v;
	return 0;
}

/* Optimal string alignment distance, bounded: longer words are no typo of each other. */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d[33][33];

	if (la > 32 || lb > 32)
		return SIZE_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	}
	return d[la][lb];
}

const char *
sbx_nearest(const char *word, const char *const *cands)
{
	const char *best = NULL;
	size_t i, d, bestd = SIZE_MAX;

	for (i = 0; cands[i] != NULL; i++)
		if ((d = edit_distance(word, cands[i])) < bestd) {
			bestd = d;
			best = cands[i];
		}
	return bestd <= 2 && bestd * 2 < strlen(word) ? best : NULL;
}

/* The length of the valid UTF-8 sequence at p (n bytes left), 0 if none. */
static size_t
utf8_seq(const unsigned char *p, size_t n)
{
	size_t len, i;
	unsigned cp;

	if (p[0] >= 0x01 && p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates, beyond U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

char *
sbx_utf8_text(const char *b, size_t n)
{
	const unsigned char *p = (const unsigned char *)b;
	char *out, *o;
	size_t i = 0, k;

	/* At worst each byte becomes the 3 bytes of U+FFFD. */
	if (n > (SIZE_MAX - 1) / 3 || (out = o = malloc(3 * n + 1)) == NULL)
		return NULL;
	while (i < n) {
		if ((k = utf8_seq(p + i, n - i)) == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(o, p + i, k);
			o += k;
			i += k;
		}
	}
	*o = '\0';
	return out;
}

int
sbx_detach(int keep)
{
	int fd;

	/* Above 2 always (0 to 2 are open): moved to 3, out of the close below. */
	if (keep > 3 && dup2(keep, 3) == -1)
		keep = -1;
	setsid();
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	syscall(SYS_close_range, keep >= 3 ? 4 : 3, ~0U, 0);
	prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
	return keep >= 3 ? 3 : -1;
}
