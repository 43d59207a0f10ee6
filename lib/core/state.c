/* SPDX-License-Identifier: MIT */
/* The state store: per-sandbox directories, locks, atomic writes, the lifecycle. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "id.h"
#include "sha256.h"
#include "state.h"
#include "util.h"

int
sbx_store_locate(struct sbx_store *s, struct sbx_err *e)
{
	const char *env = getenv("SBX_ROOT"), *xdg, *home;

	s->rootless = geteuid() != 0;
	if (env != NULL && *env) {
		if (env[0] != '/')
			return sbx_err_set(e, SBX_EX_USAGE, "SBX_ROOT: '%s' is not an absolute path", env);
		if (sbx_path(s->root, sizeof s->root, e, "%s", env) == -1)
			return -1;
	} else if (!s->rootless) {
		snprintf(s->root, sizeof s->root, "/var/lib/sbx");
	} else if ((xdg = getenv("XDG_STATE_HOME")) != NULL && xdg[0] == '/') {
		if (sbx_path(s->root, sizeof s->root, e, "%s/sbx", xdg) == -1)
			return -1;
	} else if ((home = getenv("HOME")) != NULL && home[0] == '/') {
		if (sbx_path(s->root, sizeof s->root, e, "%s/.local/state/sbx", home) == -1)
			return -1;
	} else {
		return sbx_err_set(e, SBX_EX_CANTCREAT, "no state root: set SBX_ROOT or HOME");
	}
	{
		char hex[65];

		sbx_sha256_hex(s->root, strlen(s->root), hex);
		snprintf(s->group, sizeof s->group, "r%.12s", hex);
	}
	return 0;
}

int
sbx_store_open(struct sbx_store *s, struct sbx_err *e)
{
	char sub[1100];

	if (sbx_store_locate(s, e) == -1)
		return -1;
	/* 0700: nothing of the sandboxes walks the state root's paths (their roots
	 * are built from descriptors), so no other host user needs to cross it. */
	if (sbx_mkdir_p(s->root, 0700, e) == -1)
		return -1;
	snprintf(sub, sizeof sub, "%s/sandboxes", s->root);
	if (sbx_mkdir_mode(sub, 0700) == -1 && errno != EEXIST)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", sub);
	return 0;
}

int
sbx_store_path(const struct sbx_store *s, const char *id, const char *sub, char *buf,
    size_t size, struct sbx_err *e)
{
	if (sbx_id_check(id, e) == -1)
		return -1;
	if (sub == NULL)
		return sbx_path(buf, size, e, "%s/sandboxes/%s", s->root, id);
	return sbx_path(buf, size, e, "%s/sandboxes/%s/%s", s->root, id, sub);
}

int
sbx_store_exists(const struct sbx_store *s, const char *id)
{
	char p[1200];
	struct stat st;

	return sbx_store_path(s, id, "state.yaml", p, sizeof p, NULL) == 0 && stat(p, &st) == 0;
}

int
sbx_store_lock(const struct sbx_store *s, const char *id, int exclusive, int wait,
    struct sbx_err *e)
{
	char p[1200];
	struct stat st;
	int fd;

	if (sbx_store_path(s, id, NULL, p, sizeof p, e) == -1)
		return -1;
	if ((fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return sbx_err_set(e, SBX_EX_NOINPUT, "no such sandbox");
		return sbx_err_sys(e, 0, "%s", p);
	}
	while (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)) == -1) {
		if (errno == EINTR)
			continue;
		close(fd);
		if (errno == EWOULDBLOCK)
			return sbx_err_set(e, SBX_EX_TEMPFAIL, "locked by another sbx tool; try again");
		return sbx_err_sys(e, SBX_EX_OSERR, "lock %s", p);
	}
	/* Destroyed while we waited: the directory we hold is unlinked. */
	if (fstat(fd, &st) == -1 || st.st_nlink == 0) {
		close(fd);
		return sbx_err_set(e, SBX_EX_NOINPUT, "no such sandbox");
	}
	return fd;
}

int
sbx_store_create(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	char p[1200];

	if (sbx_store_path(s, id, NULL, p, sizeof p, e) == -1)
		return -1;
	if (sbx_mkdir_mode(p, 0700) == -1) {
		if (errno == EEXIST)
			return sbx_err_set(e, SBX_EX_TEMPFAIL, "sandbox %s is being created by "
			    "another tool", id);
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p);
	}
	return sbx_store_lock(s, id, 1, 0, e);
}

int
sbx_state_load(const struct sbx_store *s, const char *id, struct sbx_manifest *m,
    struct sbx_err *e)
{
	char p[1200];

	if (sbx_store_path(s, id, "state.yaml", p, sizeof p, e) == -1)
		return -1;
	if (access(p, F_OK) == -1)
		return sbx_err_set(e, SBX_EX_NOINPUT, "no such sandbox");
	if (sbx_manifest_load(p, m, e) == -1) {
		if (e->code == SBX_EX_DATAERR)
			e->code = SBX_EX_SOFTWARE;   /* our own file: corrupt, not bad input */
		return -1;
	}
	/* The seed's word parses (a manifest ignores it) but nothing writes it here. */
	if (m->status != SBX_STATUS_NONE && !sbx_status_stored(m->status)) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s: status '%s' is not a state sbx writes", p,
		    sbx_status_name(m->status));
		sbx_manifest_free(m);
		return -1;
	}
	return 0;
}

static int
state_save(const struct sbx_store *s, const struct sbx_manifest *m, int sync, struct sbx_err *e)
{
	char p[1200], *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (sbx_store_path(s, m->sandbox_id, "state.yaml", p, sizeof p, e) == -1)
		return -1;
	if ((f = open_memstream(&buf, &len)) == NULL)
		return sbx_err_sys(e, SBX_EX_OSERR, "open_memstream");
	r = sbx_manifest_emit(f, m, SBX_FMT_YAML);
	if (fclose(f) == EOF || r == -1) {
		free(buf);
		return sbx_err_set(e, SBX_EX_OSERR, "cannot render the state document");
	}
	r = (sync ? sbx_write_atomic : sbx_write_atomic_nosync)(p, buf, len, 0600, e);
	free(buf);
	return r;
}

int
sbx_state_save(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	return state_save(s, m, 1, e);
}

int
sbx_state_save_nosync(const struct sbx_store *s, const struct sbx_manifest *m,
    struct sbx_err *e)
{
	return state_save(s, m, 0, e);
}

int
sbx_state_transition(struct sbx_manifest *m, enum sbx_status to, struct sbx_err *e)
{
	/* No status (nothing writes one without) counts as provisioning. */
	if (!sbx_status_may(m->status, to) &&
	    !(m->status == SBX_STATUS_NONE && sbx_status_may(SBX_STATUS_PROVISIONING, to)))
		return sbx_err_set(e, SBX_EX_DATAERR, "sandbox %s is %s: cannot become %s",
		    m->sandbox_id, m->status ? sbx_status_name(m->status) : "provisioning",
		    sbx_status_name(to));
	m->status = to;
	return 0;
}

int
sbx_store_bury(const struct sbx_store *s, const char *id, char *tomb, size_t size,
    struct sbx_err *e)
{
	char p[1200];

	if (sbx_store_path(s, id, NULL, p, sizeof p, e) == -1)
		return -1;
	/* Rename first: a crash halfway leaves a tombstone gc removes, not a half sandbox. */
	if (snprintf(tomb, size, "%s/sandboxes/.dead-%s-%ld", s->root, id, (long)getpid()) >=
	    (int)size)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "%s: path too long", p);
	if (rename(p, tomb) == -1) {
		if (errno == ENOENT)
			return 1;
		return sbx_err_sys(e, SBX_EX_IOERR, "%s", p);
	}
	sbx_crash_point("remove-tombstone");
	return 0;
}

int
sbx_store_remove(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	char tomb[1300];
	int r;

	if ((r = sbx_store_bury(s, id, tomb, sizeof tomb, e)) != 0)
		return r == 1 ? 0 : -1;
	return sbx_rm_rf(tomb, e);
}

static int
gone_path(const struct sbx_store *s, const char *id, char *p, size_t size)
{
	return !sbx_id_valid(id) || snprintf(p, size, "%s/gone/%s", s->root, id) >= (int)size ?
	    -1 : 0;
}

int
sbx_store_mark_gone(const struct sbx_store *s, const char *id)
{
	char p[1200];
	int fd;

	if (gone_path(s, id, p, sizeof p) == -1) {
		errno = EINVAL;
		return -1;
	}
	snprintf(p, sizeof p, "%s/gone", s->root);
	if (mkdir(p, 0700) == -1 && errno != EEXIST)
		return -1;
	gone_path(s, id, p, sizeof p);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1)
		return -1;
	/* Its time is the destroy's, for the prune. */
	futimens(fd, NULL);
	return close(fd);
}

int
sbx_store_was_gone(const struct sbx_store *s, const char *id)
{
	char p[1200];
	struct stat st;

	return gone_path(s, id, p, sizeof p) == 0 && lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

void
sbx_store_unmark_gone(const struct sbx_store *s, const char *id)
{
	char p[1200];

	if (gone_path(s, id, p, sizeof p) == 0)
		unlink(p);
}

void
sbx_store_gone_prune(const struct sbx_store *s, double max_age_s, int dry,
    void (*report)(void *ctx, const char *kind, const char *name), void *ctx)
{
	char p[1200];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int dfd;

	snprintf(p, sizeof p, "%s/gone", s->root);
	if ((d = opendir(p)) == NULL)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		if (!sbx_id_valid(de->d_name) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    sbx_realtime() - (double)st.st_mtime < max_age_s)
			continue;
		report(ctx, "gone", de->d_name);
		if (!dry)
			unlinkat(dfd, de->d_name, 0);
	}
	closedir(d);
}

static int
cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory p that valid() accepts, sorted. */
static int
list_dir(const char *p, int (*valid)(const char *), char ***names, size_t *n,
    struct sbx_err *e)
{
	char **v = NULL, **nv, *name;
	size_t k = 0;
	DIR *d;
	struct dirent *de;

	if ((d = opendir(p)) == NULL)
		return sbx_err_sys(e, 0, "%s", p);
	while ((de = readdir(d)) != NULL) {
		if (!valid(de->d_name))
			continue;
		name = strdup(de->d_name);
		if (name == NULL || (nv = realloc(v, (k + 1) * sizeof *v)) == NULL) {
			free(name);
			while (k > 0)
				free(v[--k]);
			free(v);
			closedir(d);
			return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		}
		v = nv;
		v[k++] = name;
	}
	closedir(d);
	if (k > 0)
		qsort(v, k, sizeof *v, cmp);
	*names = v;
	*n = k;
	return 0;
}

int
sbx_store_list(const struct sbx_store *s, char ***ids, size_t *n, struct sbx_err *e)
{
	char p[1100];

	snprintf(p, sizeof p, "%s/sandboxes", s->root);
	return list_dir(p, sbx_id_valid, ids, n, e);
}

/* A pool's key: a manifest's digest, 64 lower-case hex digits. */
static int
key_valid(const char *k)
{
	return strlen(k) == 64 && strspn(k, "0123456789abcdef") == 64;
}

static int
pool_path(const struct sbx_store *s, const char *key, const char *id, char *p, size_t size)
{
	if (!key_valid(key) || (id != NULL && !sbx_id_valid(id)))
		return -1;
	return snprintf(p, size, "%s/pools/%s%s%s", s->root, key, id ? "/" : "", id ? id : "") >=
	    (int)size ? -1 : 0;
}

int
sbx_store_pool_add(const struct sbx_store *s, const char *key, const char *id, struct sbx_err *e)
{
	char p[1200];
	int fd;

	snprintf(p, sizeof p, "%s/pools", s->root);
	if (mkdir(p, 0700) == -1 && errno != EEXIST)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p);
	if (pool_path(s, key, NULL, p, sizeof p) == -1)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "pool key %.70s: not a digest", key);
	if (mkdir(p, 0700) == -1 && errno != EEXIST)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p);
	pool_path(s, key, id, p, sizeof p);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p);
	close(fd);
	return 0;
}

int
sbx_store_pool_take(const struct sbx_store *s, const char *key, const char *id)
{
	char p[1200];

	return pool_path(s, key, id, p, sizeof p) == 0 && unlink(p) == 0 ? 0 : -1;
}

int
sbx_store_pool_has(const struct sbx_store *s, const char *key, const char *id)
{
	char p[1200];

	return pool_path(s, key, id, p, sizeof p) == 0 && access(p, F_OK) == 0;
}

int
sbx_store_pool_list(const struct sbx_store *s, const char *key, char ***ids, size_t *n,
    struct sbx_err *e)
{
	char p[1200];

	*ids = NULL;
	*n = 0;
	if (key == NULL) {
		snprintf(p, sizeof p, "%s/pools", s->root);
		return list_dir(p, key_valid, ids, n, e) == -1 && errno != ENOENT ? -1 : 0;
	}
	if (pool_path(s, key, NULL, p, sizeof p) == -1)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "pool key %.70s: not a digest", key);
	return list_dir(p, sbx_id_valid, ids, n, e) == -1 && errno != ENOENT ? -1 : 0;
}

void
sbx_store_pool_prune(const struct sbx_store *s, const char *key)
{
	char p[1200];

	if (pool_path(s, key, NULL, p, sizeof p) == 0)
		(void)rmdir(p);
}
