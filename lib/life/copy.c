/* SPDX-License-Identifier: MIT */
/* Files into and out of a live sandbox: see copy.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive_dl.h"
#include "capture.h"
#include "copy.h"
#include "layer.h"
#include "sandbox.h"
#include "util.h"

/* Statuses of the probe run inside (probe_dst): none is tar's or sh's own. */
#define PROBE_DIR 10      /* dst is a directory */
#define PROBE_PARENT 11   /* dst is not, its parent is */

/* path without trailing slashes, split into its directory and its last name. */
static int
split(const char *what, const char *path, char *dir, char *base, int *slash, struct sbx_err *e)
{
	char p[PATH_MAX], *last;
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof p)
		return sbx_err_set(e, SBX_EX_USAGE, "%s: '%s' is not a path", what, path);
	memcpy(p, path, n + 1);
	*slash = 0;
	while (n > 1 && p[n - 1] == '/') {
		p[--n] = '\0';
		*slash = 1;
	}
	last = strrchr(p, '/');
	snprintf(base, NAME_MAX + 1, "%s", last ? last + 1 : p);
	if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return sbx_err_set(e, SBX_EX_USAGE, "%s: '%s' names no file or directory", what,
		    path);
	if (last == NULL)
		snprintf(dir, PATH_MAX, ".");
	else if (last == p)
		snprintf(dir, PATH_MAX, "/");
	else {
		*last = '\0';
		snprintf(dir, PATH_MAX, "%s", p);
	}
	return 0;
}

/*
 * argv inside sandbox id as its user, stdin from in (-1: none), stdout to out
 * (0: kept in *got, for the caller), stderr kept for the message. The
 * command's status in *status; -1 only when it did not start.
 */
static int
inside(const struct sbx_store *s, const char *id, char *const *argv, int in, int out,
    int *status, char *why, size_t size, struct sbx_err *e)
{
	struct sbx_capture c = { .stdin_fd = in, .stdout_to = out, .limit = 4096 };
	struct sbx_exec x = { .argv = argv };
	struct sbx_exec_result res;
	int r;

	r = sbx_sandbox_run_capture(s, id, &x, &c, &res, e);
	*status = res.status;
	snprintf(why, size, "%s", c.err.buf ? c.err.buf : "");
	/* Its first line: tar's first complaint says what went wrong. */
	why[strcspn(why, "\n")] = '\0';
	sbx_trace_free(&res.trace);
	sbx_capture_free(&c);
	if (r == -1 && (res.status == SBX_EX_NOTFOUND || res.status == SBX_EX_NOEXEC))
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "the sandbox has no %s to copy with "
		    "(sbx-cp(1))", argv[0]);
	/* sbx-run's 125 is its own: here, a sandbox that cannot run one now
	 * (paused, terminated, expired) is the sandbox's state, as sbx-pause's 65;
	 * any other failure of the run, sbx's own (71). */
	if (r == -1 && e->code == SBX_EX_RUNFAIL)
		e->code = strstr(e->msg, "sandbox is ") != NULL ||
		    strstr(e->msg, "expired") != NULL ? SBX_EX_DATAERR : SBX_EX_OSERR;
	return r;
}

/* What the sandbox's tar said, as an exit status and a message. */
static int
tar_failed(const char *what, int status, const char *why, struct sbx_err *e)
{
	int code = SBX_EX_IOERR;

	/* GNU tar says "Wrote only N of M bytes" for a write cut short by a full disk. */
	if (strstr(why, "No space left") != NULL || strstr(why, "Disk quota") != NULL ||
	    strstr(why, "Wrote only") != NULL)
		return sbx_err_set(e, SBX_EX_IOERR, "%s: the sandbox's disk is full (disk_mb, "
		    "or a tmpfs's size_mb): %s", what, why);
	if (strstr(why, "No such file") != NULL || strstr(why, "Not a directory") != NULL)
		code = SBX_EX_NOINPUT;
	else if (strstr(why, "Read-only file system") != NULL ||
	    strstr(why, "Permission denied") != NULL)
		code = SBX_EX_NOPERM;
	return sbx_err_set(e, code, "%s: the sandbox's tar failed (%d): %s", what, status,
	    why[0] ? why : "no message");
}

/* Is dst a directory inside, or is its parent? PROBE_DIR or PROBE_PARENT. */
static int
probe_dst(const struct sbx_store *s, const char *id, const char *dst, const char *parent,
    int *kind, struct sbx_err *e)
{
	char *const argv[] = { "sh", "-c", "[ -d \"$1\" ] && exit 10; [ -d \"$2\" ] && exit 11; "
	    "exit 12", "sbx-cp", (char *)dst, (char *)parent, NULL };
	char why[256];
	int status;

	if (inside(s, id, argv, -1, 0, &status, why, sizeof why, e) == -1)
		return -1;
	if (status != PROBE_DIR && status != PROBE_PARENT)
		return status == 12 ? sbx_err_set(e, SBX_EX_NOINPUT, "%s: no such directory in "
		    "the sandbox", parent) : sbx_err_set(e, SBX_EX_IOERR, "%s: the sandbox's "
		    "sh failed (%d): %s", dst, status, why[0] ? why : "no message");
	*kind = status;
	return 0;
}

struct feeder {
	const char *path, *name;
	unsigned uid, gid;
	int fd, r;
	struct sbx_err e;
};

static void *
feed_main(void *arg)
{
	struct feeder *f = arg;
	sigset_t pipe;

	/* tar inside may stop reading: then EPIPE, not the signal. */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, NULL);
	f->r = sbx_tar_pack_path(f->path, f->name, f->uid, f->gid, f->fd, &f->e);
	close(f->fd);
	return NULL;
}

int
sbx_copy_in(const struct sbx_store *s, const char *id, const char *host, int fd,
    const char *dst, struct sbx_err *e)
{
	char dir[PATH_MAX], base[NAME_MAX + 1], hdir[PATH_MAX], hbase[NAME_MAX + 1], why[512];
	char *const argv_tmpl[] = { "tar", "-x", "-p", "--no-same-owner", "-f", "-", "-C", NULL,
	    NULL };
	char *argv[SBX_ARRAY_LEN(argv_tmpl)];
	struct feeder f = { .r = 0 };
	struct sbx_manifest m;
	struct stat st;
	pthread_t t;
	int kind = 0, slash = 0, hslash = 0, p[2], status, r;

	if (dst[0] != '/')
		return sbx_err_set(e, SBX_EX_USAGE, "%s:%s: not an absolute path", id, dst);
	if (split(dst, dst, dir, base, &slash, e) == -1 && strcmp(dst, "/") != 0)
		return -1;
	if (host != NULL) {
		if (split(host, host, hdir, hbase, &hslash, e) == -1)
			return -1;
		if (lstat(host, &st) == -1)
			return sbx_err_sys(e, errno == ENOENT ? SBX_EX_NOINPUT : SBX_EX_IOERR, "%s",
			    host);
	}
	if (sbx_sandbox_view(s, id, &m, e) == -1)
		return -1;
	sbx_manifest_user_parse(m.user, &f.uid, &f.gid);
	sbx_manifest_free(&m);
	if (probe_dst(s, id, dst, strcmp(dst, "/") == 0 ? "/" : dir, &kind, e) == -1)
		return -1;
	/* Into an existing directory under the source's own name; else as dst. */
	if (kind == PROBE_PARENT && (slash || host == NULL))
		return sbx_err_set(e, SBX_EX_NOINPUT, "%s:%s: no such directory in the sandbox",
		    id, dst);
	memcpy(argv, argv_tmpl, sizeof argv);
	argv[7] = (char *)(kind == PROBE_DIR ? dst : dir);
	if (host == NULL)
		return inside(s, id, argv, fd, 0, &status, why, sizeof why, e) == -1 ? -1 :
		    status != 0 ? tar_failed(dst, status, why, e) : 0;
	/* libarchive is loaded here, not in the thread, while nothing forks. */
	if (sbx_archive_load(e) == -1)
		return -1;
	if (pipe2(p, O_CLOEXEC) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "pipe");
	f.path = host;
	f.name = kind == PROBE_DIR ? hbase : base;
	f.fd = p[1];
	if ((errno = pthread_create(&t, NULL, feed_main, &f)) != 0) {
		close(p[0]);
		close(p[1]);
		return sbx_err_sys(e, SBX_EX_OSERR, "a thread to read %s", host);
	}
	r = inside(s, id, argv, p[0], 0, &status, why, sizeof why, e);
	close(p[0]);
	pthread_join(t, NULL);
	if (r == -1)
		return -1;
	/* The host's side failing first explains tar's complaint about the end. */
	if (f.r == -1 && f.e.code != SBX_EX_IOERR) {
		*e = f.e;
		return -1;
	}
	if (status != 0)
		return tar_failed(dst, status, why, e);
	if (f.r == -1) {
		*e = f.e;
		return -1;
	}
	return 0;
}

struct drainer {
	const char *dir;
	int fd, r;
	struct sbx_err e;
};

static void *
drain_main(void *arg)
{
	struct drainer *d = arg;
	struct sbx_layer_info li;
	char b[16384];

	d->r = sbx_tar_unpack(d->fd, d->dir, &li, &d->e);
	/* Refused midway: read the rest, so that tar inside ends rather than blocks. */
	while (read(d->fd, b, sizeof b) > 0)
		;
	return NULL;
}

int
sbx_copy_out(const struct sbx_store *s, const char *id, const char *src, const char *host,
    int fd, struct sbx_err *e)
{
	char dir[PATH_MAX], base[NAME_MAX + 1], hdir[PATH_MAX], hbase[NAME_MAX + 1], why[512];
	char tmp[PATH_MAX + 32], from[PATH_MAX + NAME_MAX + 40], to[PATH_MAX + NAME_MAX + 2];
	char *argv[] = { "tar", "-c", "-f", "-", "-C", dir, "--", base, NULL };
	struct drainer d = { .r = 0 };
	struct sbx_err ignored;
	struct stat st;
	pthread_t t;
	int slash = 0, hslash = 0, p[2], status, r, into;

	if (src[0] != '/')
		return sbx_err_set(e, SBX_EX_USAGE, "%s:%s: not an absolute path", id, src);
	if (split(src, src, dir, base, &slash, e) == -1)
		return -1;
	if (host == NULL)
		return inside(s, id, argv, -1, fd, &status, why, sizeof why, e) == -1 ? -1 :
		    status != 0 ? tar_failed(src, status, why, e) : 0;
	if (split(host, host, hdir, hbase, &hslash, e) == -1)
		return -1;
	/* Into an existing directory under the source's own name; else as host. */
	into = stat(host, &st) == 0 && S_ISDIR(st.st_mode);
	if (!into && (hslash || stat(hdir, &st) == -1 || !S_ISDIR(st.st_mode)))
		return sbx_err_set(e, SBX_EX_CANTCREAT, "%s: no such directory",
		    hslash ? host : hdir);
	if (sbx_archive_load(e) == -1)
		return -1;
	snprintf(tmp, sizeof tmp, "%s/.sbx-cp.XXXXXX", into ? host : hdir);
	if (mkdtemp(tmp) == NULL)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", tmp);
	if (pipe2(p, O_CLOEXEC) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "pipe");
		goto fail;
	}
	d.dir = tmp;
	d.fd = p[0];
	if ((errno = pthread_create(&t, NULL, drain_main, &d)) != 0) {
		close(p[0]);
		close(p[1]);
		sbx_err_sys(e, SBX_EX_OSERR, "a thread to write %s", host);
		goto fail;
	}
	r = inside(s, id, argv, -1, p[1], &status, why, sizeof why, e);
	close(p[1]);
	pthread_join(t, NULL);
	close(p[0]);
	if (r == -1)
		goto fail;
	if (status != 0) {
		tar_failed(src, status, why, e);
		goto fail;
	}
	if (d.r == -1) {
		sbx_err_set(e, d.e.code, "%s:%s: what the sandbox sent: %s", id, src, d.e.msg);
		goto fail;
	}
	snprintf(from, sizeof from, "%s/%s", tmp, base);
	if (into)
		snprintf(to, sizeof to, "%s/%s", host, base);
	else
		snprintf(to, sizeof to, "%s", host);
	if (lstat(from, &st) == -1) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s:%s: the sandbox's tar sent no %s", id, src, base);
		goto fail;
	}
	if (rename(from, to) == -1) {
		sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", to);
		goto fail;
	}
	sbx_rm_rf(tmp, &ignored);
	return 0;
fail:
	sbx_rm_rf(tmp, &ignored);
	return -1;
}
