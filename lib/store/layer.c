/* SPDX-License-Identifier: MIT */
/* Layers: directory trees as content-addressed tar + zstd archives, and back. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "archive_dl.h"
#include "layer.h"
#include "progress.h"
#include "sha256.h"
#include "util.h"

#define CHUNK (1 << 18)
#define MAX_ENTRIES 4000000LL
#define MAX_IDS 65536LL
#define MAX_NAMES (512LL << 20)
#define OPAQUE "user.overlay.opaque"

#if defined(__GNUC__) && !defined(__clang__)
#define ANALYZER_LEAK_OFF _Pragma("GCC diagnostic push") \
	_Pragma("GCC diagnostic ignored \"-Wanalyzer-malloc-leak\"")
#define ANALYZER_LEAK_ON _Pragma("GCC diagnostic pop")
#else
#define ANALYZER_LEAK_OFF
#define ANALYZER_LEAK_ON
#endif

/* A count from the environment: unset or not a number, def; else at least min. */
static long long
env_count(const char *name, long long def, long long min)
{
	const char *v = getenv(name);
	char *end;
	long long n;

	if (v == NULL || *v == '\0')
		return def;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || *end || n < min || n > (1LL << 40))
		return def;
	return n;
}

/* The operator's policy's, where it sets them (sbx_layer_set_policy). */
static long long policy_max_mb = SBX_LAYER_MAX_MB_DEFAULT, policy_ratio = SBX_LAYER_RATIO_DEFAULT;

void
sbx_layer_set_policy(long long max_mb, long long ratio)
{
	policy_max_mb = max_mb > 0 ? max_mb : SBX_LAYER_MAX_MB_DEFAULT;
	policy_ratio = ratio >= 0 ? ratio : SBX_LAYER_RATIO_DEFAULT;
}

void
sbx_layer_limits(struct sbx_layer_limits *l)
{
	l->max_bytes = env_count("SBX_LAYER_MAX_MB", policy_max_mb, 1) << 20;
	l->ratio = env_count("SBX_LAYER_MAX_RATIO", policy_ratio, 0);
	l->floor = env_count("SBX_LAYER_RATIO_FLOOR_MB", SBX_LAYER_FLOOR_MB_DEFAULT, 0) << 20;
}

long long
sbx_layer_write_max(const struct sbx_layer_limits *l, long long archive)
{
	long long m;

	if (l->ratio == 0 || archive > l->max_bytes / l->ratio)
		return l->max_bytes;
	m = l->ratio * archive;
	if (m < l->floor)
		m = l->floor;
	return m < l->max_bytes ? m : l->max_bytes;
}

/* A set of strings (paths seen), open addressing. */
struct strset {
	char **slot;
	size_t cap, n;
};

static uint64_t
fnv(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int
strset_has(const struct strset *t, const char *s)
{
	size_t i;

	if (t->cap == 0)
		return 0;
	for (i = fnv(s) & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		if (strcmp(t->slot[i], s) == 0)
			return 1;
	return 0;
}

/*
 * gcc 12's -fanalyzer loses track of heap pointers stored into the packer
 * once its address has been handed to libarchive (archive_write_open), and
 * reports the strings kept in its tables as leaked; they are freed at the
 * end of sbx_layer_pack and sbx_layer_unpack (valgrind and LSan agree).
 */
ANALYZER_LEAK_OFF
static int
strset_add(struct strset *t, const char *s)
{
	char *dup;
	size_t i;

	if ((t->n + 1) * 2 > t->cap) {
		struct strset g = { NULL, t->cap ? t->cap * 2 : 64, 0 };

		if ((g.slot = calloc(g.cap, sizeof *g.slot)) == NULL)
			return -1;
		for (i = 0; i < t->cap; i++)
			if (t->slot[i]) {
				size_t j = fnv(t->slot[i]) & (g.cap - 1);

				while (g.slot[j])
					j = (j + 1) & (g.cap - 1);
				g.slot[j] = t->slot[i];
			}
		g.n = t->n;
		free(t->slot);
		*t = g;
	}
	if (t->slot == NULL)
		return -1;
	for (i = fnv(s) & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		if (strcmp(t->slot[i], s) == 0)
			return 0;
	if ((dup = strdup(s)) == NULL)
		return -1;
	t->slot[i] = dup;
	t->n++;
	return 0;
}

ANALYZER_LEAK_ON

static void
strset_free(struct strset *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->slot[i]);
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
}

/* Indexes: path -> what the tree had there */

struct ixent {
	char *path;
	unsigned long long ino;
	long long ctime_ns, size;
	unsigned mode;
	unsigned char racy, seen;
};

struct sbx_index {
	struct ixent *slot;
	size_t cap, n;
};

#define IX_MAGIC "sbx-index-2\n"   /* 1 had 16-bit path lengths: read as another's */

static struct ixent *
ix_find(const struct sbx_index *ix, const char *path)
{
	size_t i;

	if (ix == NULL || ix->cap == 0)
		return NULL;
	for (i = fnv(path) & (ix->cap - 1); ix->slot[i].path; i = (i + 1) & (ix->cap - 1))
		if (strcmp(ix->slot[i].path, path) == 0)
			return &ix->slot[i];
	return NULL;
}

static int
ix_add(struct sbx_index *ix, const struct ixent *v)
{
	size_t i;

	if ((ix->n + 1) * 2 > ix->cap) {
		struct sbx_index g = { NULL, ix->cap ? ix->cap * 2 : 1024, 0 };

		if ((g.slot = calloc(g.cap, sizeof *g.slot)) == NULL)
			return -1;
		for (i = 0; i < ix->cap; i++)
			if (ix->slot[i].path) {
				size_t j = fnv(ix->slot[i].path) & (g.cap - 1);

				while (g.slot[j].path)
					j = (j + 1) & (g.cap - 1);
				g.slot[j] = ix->slot[i];
			}
		g.n = ix->n;
		free(ix->slot);
		*ix = g;
	}
	for (i = fnv(v->path) & (ix->cap - 1); ix->slot[i].path; i = (i + 1) & (ix->cap - 1))
		;
	ix->slot[i] = *v;
	ix->n++;
	return 0;
}

void
sbx_index_free(struct sbx_index *ix)
{
	size_t i;

	if (ix == NULL)
		return;
	for (i = 0; i < ix->cap; i++)
		free(ix->slot[i].path);
	free(ix->slot);
	free(ix);
}

/* One record: ino ctime_ns size mode racy pathlen, then the path. */
struct ixrec {
	unsigned long long ino;
	long long ctime_ns, size;
	unsigned mode, racy, len, pad;
};

int
sbx_index_load(const char *path, const char *tag, struct sbx_index **out, struct sbx_err *e)
{
	struct sbx_index *ix;
	struct ixrec r;
	char magic[sizeof IX_MAGIC - 1], line[256];
	FILE *f;
	int rc = -1;

	*out = NULL;
	if ((f = fopen(path, "rbe")) == NULL)
		return sbx_err_sys(e, 0, "%s", path);
	if ((ix = calloc(1, sizeof *ix)) == NULL) {
		fclose(f);
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
	if (fread(magic, 1, sizeof magic, f) != sizeof magic ||
	    memcmp(magic, IX_MAGIC, sizeof magic) != 0) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s: not an index", path);
		goto out;
	}
	/* Whose index it is: one written for another tree must never be used. */
	if (fgets(line, sizeof line, f) == NULL || strcspn(line, "\n") != strlen(tag) ||
	    strncmp(line, tag, strlen(tag)) != 0) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s: the index of another snapshot", path);
		goto out;
	}
	while (fread(&r, sizeof r, 1, f) == 1) {
		struct ixent v = { NULL, r.ino, r.ctime_ns, r.size, r.mode, (unsigned char)r.racy, 0 };

		if (r.len == 0 || r.len > SBX_LAYER_PATH_MAX ||
		    (v.path = malloc((size_t)r.len + 1)) == NULL ||
		    fread(v.path, 1, r.len, f) != r.len) {
			free(v.path);
			sbx_err_set(e, SBX_EX_DATAERR, "%s: damaged index", path);
			goto out;
		}
		v.path[r.len] = '\0';
		if (ix_find(ix, v.path) != NULL || ix_add(ix, &v) == -1) {
			free(v.path);
			sbx_err_set(e, SBX_EX_DATAERR, "%s: damaged index", path);
			goto out;
		}
	}
	if (ferror(f) || !feof(f)) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s: damaged index", path);
		goto out;
	}
	*out = ix;
	ix = NULL;
	rc = 0;
out:
	sbx_index_free(ix);
	fclose(f);
	return rc;
}

/* Packing */

struct link {
	dev_t dev;
	ino_t ino;
	char *path;
};

struct packer {
	struct archive *a;
	struct archive_entry *ent;
	struct sbx_sha256 sha;
	int outfd, werrno;
	long long size, unpacked, entries, base_id, count;
	struct link *links;
	size_t n_links, cap_links;
	char *buf;
	struct sbx_err *e;
	const struct sbx_index *base;   /* diff against this, or NULL */
	FILE *index;                    /* the tree's new index, or NULL */
	long long racy_ns;
	struct strset dirs;             /* directories of the tree (for whiteouts) */
};

enum { IX_NEW, IX_CHANGED, IX_SAME };

/* Record path in the new index; say whether it is unchanged since the base. */
static int
index_entry(struct packer *p, const char *path, const struct stat *st, int *state)
{
	long long ct = (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
	struct ixent *old = (struct ixent *)ix_find(p->base, path);
	struct ixrec r = { (unsigned long long)st->st_ino, ct, (long long)st->st_size,
		(unsigned)st->st_mode, ct >= p->racy_ns, (unsigned)strlen(path), 0 };

	*state = IX_NEW;
	if (old != NULL) {
		old->seen = 1;
		if (old->ino == r.ino && (old->mode & S_IFMT) == (r.mode & S_IFMT))
			*state = !old->racy && old->ctime_ns == ct && old->size == r.size &&
			    old->mode == r.mode ? IX_SAME : IX_CHANGED;
	}
	if (p->index != NULL && (fwrite(&r, sizeof r, 1, p->index) != 1 ||
	    fwrite(path, 1, r.len, p->index) != r.len))
		return sbx_err_sys(p->e, SBX_EX_IOERR, "write the snapshot index");
	return 0;
}

static la_ssize_t
pack_write(struct archive *a, void *cd, const void *buf, size_t n)
{
	struct packer *p = cd;

	(void)a;
	sbx_sha256_update(&p->sha, buf, n);
	if (sbx_write_all(p->outfd, buf, n) == -1) {
		p->werrno = errno;
		return -1;
	}
	p->size += (long long)n;
	return (la_ssize_t)n;
}

static int
ar_fail(struct packer *p, const char *path)
{
	if (p->werrno) {
		errno = p->werrno;
		return sbx_err_sys(p->e, SBX_EX_IOERR, "write the snapshot layer");
	}
	return sbx_err_set(p->e, SBX_EX_SOFTWARE, "archive %s: %s", path,
	    archive_error_string(p->a) ? archive_error_string(p->a) : "failed");
}

/* See strset_add. */
ANALYZER_LEAK_OFF
static const char *
hardlink_of(struct packer *p, const struct stat *st, const char *path)
{
	char *dup;
	size_t i;

	for (i = 0; i < p->n_links; i++)
		if (p->links[i].dev == st->st_dev && p->links[i].ino == st->st_ino)
			return p->links[i].path;
	if (p->n_links == p->cap_links) {
		size_t cap = p->cap_links ? p->cap_links * 2 : 16;
		struct link *l = realloc(p->links, cap * sizeof *l);

		if (l == NULL)
			return NULL;
		p->links = l;
		p->cap_links = cap;
	}
	if (p->links == NULL || (dup = strdup(path)) == NULL)
		return NULL;
	p->links[p->n_links].dev = st->st_dev;
	p->links[p->n_links].ino = st->st_ino;
	p->links[p->n_links++].path = dup;
	return NULL;
}

ANALYZER_LEAK_ON

/* Copy the user.* xattrs the overlay and the sandbox set. */
static int
pack_xattrs(struct packer *p, int dirfd, const char *name, const char *path, int keep_opaque)
{
	char lp[64 + 256], names[8192], val[8192], *k;
	ssize_t n, v;

	snprintf(lp, sizeof lp, "/proc/self/fd/%d/%s", dirfd, name);
	if ((n = llistxattr(lp, names, sizeof names)) == -1) {
		if (errno == ENOTSUP || errno == ENODATA)
			return 0;
		return sbx_err_sys(p->e, SBX_EX_IOERR, "xattrs of %s", path);
	}
	for (k = names; k < names + n; k += strlen(k) + 1) {
		if (strncmp(k, "user.", 5) != 0)
			continue;
		if (strncmp(k, "user.overlay.", 13) == 0 && (strcmp(k, OPAQUE) != 0 || !keep_opaque))
			continue;
		if ((v = lgetxattr(lp, k, val, sizeof val)) == -1) {
			if (errno == ENODATA)
				continue;
			return sbx_err_sys(p->e, SBX_EX_IOERR, "xattr %s of %s", k, path);
		}
		archive_entry_xattr_add_entry(p->ent, k, val, (size_t)v);
	}
	return 0;
}

static int
pack_zeros(struct packer *p, long long n, const char *path)
{
	static const char zero[CHUNK];

	while (n > 0) {
		size_t k = n > CHUNK ? CHUNK : (size_t)n;

		if (archive_write_data(p->a, zero, k) < 0)
			return ar_fail(p, path);
		n -= (long long)k;
	}
	return 0;
}

/* File data; holes of sparse files are recorded as holes. */
static int
pack_data(struct packer *p, int fd, const struct stat *st, const char *path)
{
	off_t pos = 0, data, hole;
	int sparse = (long long)st->st_blocks * 512 < (long long)st->st_size;

	if (sparse) {
		while (pos < st->st_size && (data = lseek(fd, pos, SEEK_DATA)) != -1) {
			if ((hole = lseek(fd, data, SEEK_HOLE)) == -1 || hole > st->st_size)
				hole = st->st_size;
			archive_entry_sparse_add_entry(p->ent, data, hole - data);
			pos = hole;
		}
		/* A file that ends in a hole still needs its size: a last empty block. */
		archive_entry_sparse_add_entry(p->ent, st->st_size, 0);
	}
	if (archive_write_header(p->a, p->ent) != ARCHIVE_OK)
		return ar_fail(p, path);
	pos = 0;
	while (pos < st->st_size) {
		off_t end = st->st_size;

		if (sparse) {
			if ((data = lseek(fd, pos, SEEK_DATA)) == -1)
				data = st->st_size;
			if (data > pos) {
				if (pack_zeros(p, data - pos, path) == -1)
					return -1;
				pos = data;
				continue;
			}
			if ((end = lseek(fd, pos, SEEK_HOLE)) == -1 || end > st->st_size)
				end = st->st_size;
		}
		while (pos < end) {
			size_t want = end - pos > CHUNK ? CHUNK : (size_t)(end - pos);
			ssize_t r = pread(fd, p->buf, want, pos);

			if (r < 0)
				return sbx_err_sys(p->e, SBX_EX_IOERR, "read %s", path);
			if (r == 0)    /* shrank meanwhile: the header promised the size */
				return pack_zeros(p, st->st_size - pos, path);
			if (archive_write_data(p->a, p->buf, (size_t)r) < 0)
				return ar_fail(p, path);
			pos += r;
			sbx_progress_add(r);
			if (sbx_interrupt_check(p->e) == -1)
				return -1;
		}
	}
	p->unpacked += st->st_size;
	return 0;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int pack_dir(struct packer *p, int dirfd, const char *rel);

static int pack_entry(struct packer *p, int dirfd, const char *name, const char *path);

/* rel/name, which may be longer than PATH_MAX: every call is relative to dirfd. */
static int
pack_one(struct packer *p, int dirfd, const char *name, const char *rel)
{
	size_t lr = strlen(rel), ln = strlen(name);
	char *path;
	int r;

	if (lr + 1 + ln > SBX_LAYER_PATH_MAX)
		return sbx_err_set(p->e, SBX_EX_DATAERR, "%.200s/...: a path longer than %d bytes",
		    rel, SBX_LAYER_PATH_MAX);
	if ((path = malloc(lr + ln + 2)) == NULL)
		return sbx_err_set(p->e, SBX_EX_OSERR, "out of memory");
	snprintf(path, lr + ln + 2, "%s%s%s", rel, lr ? "/" : "", name);
	r = pack_entry(p, dirfd, name, path);
	free(path);
	return r;
}

/* A symlink's target, whatever it says: data of the sandbox, stored as it is. */
static int
pack_symlink(struct packer *p, int dirfd, const char *name, const char *path)
{
	char *target;
	ssize_t n;

	if ((target = malloc(PATH_MAX)) == NULL)
		return sbx_err_set(p->e, SBX_EX_OSERR, "out of memory");
	if ((n = readlinkat(dirfd, name, target, PATH_MAX - 1)) < 0) {
		free(target);
		return sbx_err_sys(p->e, SBX_EX_IOERR, "%.200s", path);
	}
	target[n] = '\0';
	archive_entry_set_symlink(p->ent, target);
	free(target);
	return 0;
}

static int
pack_entry(struct packer *p, int dirfd, const char *name, const char *path)
{
	const char *first;
	struct stat st;
	long long uid, gid;
	int fd = -1, r = -1, state;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return sbx_err_sys(p->e, SBX_EX_IOERR, "%.200s", path);
	if (S_ISSOCK(st.st_mode))
		return 0;    /* a socket is a live endpoint, not data */
	if (S_ISBLK(st.st_mode) || (S_ISCHR(st.st_mode) && st.st_rdev != makedev(0, 0)))
		return sbx_err_set(p->e, SBX_EX_DATAERR, "%s: a device node in a writable layer",
		    path);
	uid = (long long)st.st_uid - p->base_id;
	gid = (long long)st.st_gid - p->base_id;
	if (p->count == 1)
		uid = gid = 0;
	if (uid < 0 || uid >= p->count || gid < 0 || gid >= p->count)
		return sbx_err_set(p->e, SBX_EX_DATAERR, "%s: owner %lu:%lu is not one of the "
		    "sandbox's IDs", path, (unsigned long)st.st_uid, (unsigned long)st.st_gid);
	if (index_entry(p, path, &st, &state) == -1)
		return -1;
	if (S_ISDIR(st.st_mode) && p->base != NULL && strset_add(&p->dirs, path) == -1)
		return sbx_err_set(p->e, SBX_EX_OSERR, "out of memory");
	/* A diff layer holds every directory (with its attributes, so the merged
	 * view keeps them), and only new or changed other entries. */
	if (p->base != NULL && state == IX_SAME && !S_ISDIR(st.st_mode))
		return 0;
	if (++p->entries > MAX_ENTRIES)
		return sbx_err_set(p->e, SBX_EX_DATAERR, "more than %lld files", MAX_ENTRIES);
	archive_entry_clear(p->ent);
	archive_entry_set_pathname(p->ent, path);
	archive_entry_set_mode(p->ent, st.st_mode & ~(mode_t)(S_ISUID | S_ISGID));
	archive_entry_set_uid(p->ent, uid);
	archive_entry_set_gid(p->ent, gid);
	archive_entry_set_mtime(p->ent, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	/* An opaque mark hides the layers below: in a diff layer only a directory
	 * made since the base may carry it (the base's own mark is below already). */
	if (pack_xattrs(p, dirfd, name, path, p->base == NULL || state == IX_NEW) == -1)
		return -1;
	/* Overlay links its whiteouts to one inode: each stays an entry of its own. */
	if (S_ISREG(st.st_mode) && st.st_nlink > 1 && (first = hardlink_of(p, &st, path))) {
		archive_entry_set_hardlink(p->ent, first);
		archive_entry_set_size(p->ent, 0);
		if (archive_write_header(p->a, p->ent) != ARCHIVE_OK)
			return ar_fail(p, path);
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		if (pack_symlink(p, dirfd, name, path) == -1)
			return -1;
	} else if (S_ISCHR(st.st_mode)) {
		archive_entry_set_rdev(p->ent, st.st_rdev);
	} else if (S_ISREG(st.st_mode)) {
		archive_entry_set_size(p->ent, st.st_size);
		if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			return sbx_err_sys(p->e, SBX_EX_IOERR, "%s", path);
		r = pack_data(p, fd, &st, path);
		close(fd);
		return r;
	}
	if (archive_write_header(p->a, p->ent) != ARCHIVE_OK)
		return ar_fail(p, path);
	if (S_ISDIR(st.st_mode)) {
		if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			return sbx_err_sys(p->e, SBX_EX_IOERR, errno == EMFILE ? "%.200s: directories "
			    "nested deeper than the open-file limit" : "%.200s", path);
		r = pack_dir(p, fd, path);
		close(fd);
		return r;
	}
	return 0;
}

/* The entries of dirfd in name order (the archive is the same for the same tree). */
static int
pack_dir(struct packer *p, int dirfd, const char *rel)
{
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	if ((fd = dup(dirfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return sbx_err_sys(p->e, SBX_EX_IOERR, "%s", *rel ? rel : ".");
	}
	while ((de = readdir(d)) != NULL) {
		char *name;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			size_t grown = cap ? cap * 2 : 32;
			char **g = realloc(names, grown * sizeof *g);

			if (g == NULL) {
				r = sbx_err_set(p->e, SBX_EX_OSERR, "out of memory");
				break;
			}
			names = g;
			cap = grown;
		}
		if ((name = strdup(de->d_name)) == NULL) {
			r = sbx_err_set(p->e, SBX_EX_OSERR, "out of memory");
			break;
		}
		names[n++] = name;
	}
	closedir(d);
	if (r == 0 && n > 1)
		qsort(names, n, sizeof *names, cmp_names);
	for (i = 0; i < n; i++) {
		if (r == 0)
			r = pack_one(p, dirfd, names[i], rel);
		free(names[i]);
	}
	free(names);
	return r;
}

/* A diff layer's whiteouts: each path of the base that is gone, topmost only. */
static int
pack_whiteouts(struct packer *p)
{
	char **gone = NULL, *slash;
	size_t n = 0, i;
	int r = 0;

	for (i = 0; i < p->base->cap; i++) {
		const struct ixent *v = &p->base->slot[i];

		if (v->path == NULL || v->seen)
			continue;
		if ((slash = strrchr(v->path, '/')) != NULL) {
			int parent_here;

			*slash = '\0';
			parent_here = strset_has(&p->dirs, v->path);
			*slash = '/';
			if (!parent_here)
				continue;    /* a directory above it is gone too */
		}
		if (n % 64 == 0) {
			char **g = realloc(gone, (n + 64) * sizeof *g);

			if (g == NULL) {
				free(gone);
				return sbx_err_set(p->e, SBX_EX_OSERR, "out of memory");
			}
			gone = g;
		}
		gone[n++] = v->path;
	}
	if (n > 1)
		qsort(gone, n, sizeof *gone, cmp_names);
	for (i = 0; i < n && r == 0; i++) {
		archive_entry_clear(p->ent);
		archive_entry_set_pathname(p->ent, gone[i]);
		archive_entry_set_mode(p->ent, S_IFCHR);
		archive_entry_set_rdev(p->ent, 0);
		if (++p->entries > MAX_ENTRIES)
			r = sbx_err_set(p->e, SBX_EX_DATAERR, "more than %lld files", MAX_ENTRIES);
		else if (archive_write_header(p->a, p->ent) != ARCHIVE_OK)
			r = ar_fail(p, gone[i]);
	}
	free(gone);
	return r;
}

int
sbx_layer_pack(const char *dir, long long id_base, long long id_count, int outfd,
    const struct sbx_pack_opts *o, struct sbx_layer_info *info, struct sbx_err *e)
{
	struct packer p = { .outfd = outfd, .base_id = id_base, .count = id_count, .e = e,
		.base = o ? o->base : NULL };
	struct rlimit was, rl;
	unsigned char d[32];
	int dirfd = -1, r = -1, raised;
	size_t i;

	memset(info, 0, sizeof *info);
	if (sbx_archive_load(e) == -1)
		return -1;
	/* One descriptor per directory level while packing: as deep as the hard limit. */
	raised = getrlimit(RLIMIT_NOFILE, &was) == 0 && was.rlim_cur < was.rlim_max;
	if (raised) {
		rl = was;
		rl.rlim_cur = rl.rlim_max;
		raised = setrlimit(RLIMIT_NOFILE, &rl) == 0;
	}
	sbx_sha256_init(&p.sha);
	if ((p.buf = malloc(CHUNK)) == NULL || (p.ent = archive_entry_new()) == NULL ||
	    (p.a = archive_write_new()) == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		sbx_err_sys(e, SBX_EX_IOERR, "%s", dir);
		goto out;
	}
	if (archive_write_set_format_pax_restricted(p.a) != ARCHIVE_OK ||
	    archive_write_add_filter_zstd(p.a) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(p.a, 1) != ARCHIVE_OK) {
		sbx_err_set(e, SBX_EX_UNAVAILABLE, "libarchive without zstd: %s",
		    archive_error_string(p.a));
		goto out;
	}
	/* The same settings every time, so the same tree gives the same bytes;
	 * zstd's output is the same for any number of threads (1 or more). */
	archive_write_set_filter_option(p.a, "zstd", "compression-level", "3");
	{
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		char threads[16];

		snprintf(threads, sizeof threads, "%ld", ncpu < 1 ? 1 : ncpu > 8 ? 8 : ncpu);
		archive_write_set_filter_option(p.a, "zstd", "threads", threads);
	}
	if (archive_write_open(p.a, &p, NULL, pack_write, NULL) != ARCHIVE_OK) {
		ar_fail(&p, dir);
		goto out;
	}
	if (o != NULL && o->index_fd != -1) {
		int fd = dup(o->index_fd);

		if (fd == -1 || (p.index = fdopen(fd, "wb")) == NULL) {
			if (fd != -1)
				close(fd);
			sbx_err_sys(e, SBX_EX_IOERR, "snapshot index");
			goto out;
		}
		if (fputs(IX_MAGIC, p.index) == EOF || fprintf(p.index, "%s\n",
		    o->index_tag ? o->index_tag : "") < 0) {
			sbx_err_sys(e, SBX_EX_IOERR, "snapshot index");
			goto out;
		}
		p.racy_ns = (long long)(o->racy_after * 1e9);
	}
	if (pack_dir(&p, dirfd, "") == -1 || (p.base != NULL && pack_whiteouts(&p) == -1))
		goto out;
	if (p.index != NULL) {
		int bad = fflush(p.index) == EOF || fsync(fileno(p.index)) == -1;

		bad |= fclose(p.index) == EOF;
		p.index = NULL;
		if (bad) {
			sbx_err_sys(e, SBX_EX_IOERR, "snapshot index");
			goto out;
		}
	}
	if (archive_write_close(p.a) != ARCHIVE_OK) {
		ar_fail(&p, dir);
		goto out;
	}
	sbx_sha256_final(&p.sha, d);
	sbx_hex(d, 32, info->digest);
	info->size = p.size;
	info->unpacked = p.unpacked;
	info->entries = p.entries;
	r = 0;
out:
	if (p.a)
		archive_write_free(p.a);
	if (p.ent)
		archive_entry_free(p.ent);
	for (i = 0; i < p.n_links; i++)
		free(p.links[i].path);
	free(p.links);
	free(p.buf);
	if (p.index != NULL)
		fclose(p.index);
	strset_free(&p.dirs);
	if (dirfd != -1)
		close(dirfd);
	if (raised)
		setrlimit(RLIMIT_NOFILE, &was);
	return r;
}

/* Unpacking */

struct reader {
	int fd;
	struct sbx_sha256 sha;
	long long size;
	char *buf;
};

static la_ssize_t
unpack_read(struct archive *a, void *cd, const void **out)
{
	struct reader *r = cd;
	ssize_t n;

	(void)a;
	do
		n = read(r->fd, r->buf, CHUNK);
	while (n == -1 && errno == EINTR);
	if (n > 0) {
		sbx_sha256_update(&r->sha, r->buf, (size_t)n);
		r->size += n;
	}
	*out = r->buf;
	return n;
}

/* Is p a clean relative path: no "", ".", ".." component, not absolute? */
static int
clean_path(const char *p)
{
	const char *c = p, *end;

	if (*p == '\0' || *p == '/')
		return 0;
	for (;;) {
		end = strchr(c, '/');
		size_t len = end ? (size_t)(end - c) : strlen(c);

		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		if (!end)
			return 1;
		c = end + 1;
	}
}

/* What the entries so far were: every path, those that are not directories,
 * the regular files. */
struct seen {
	struct strset all, nondirs, files;
};

/* Is a directory above path (restored after use) a symlink or another
 * non-directory seen? Extraction would refuse it too (walk_dir); this says
 * so without extracting. */
static int
below_link(const struct seen *sn, char *path)
{
	char *c;
	int hit = 0;

	for (c = path; !hit && (c = strchr(c, '/')) != NULL; *c++ = '/') {
		*c = '\0';
		hit = strset_has(&sn->nondirs, path);
	}
	if (c != NULL)
		*c = '/';
	return hit;
}

/* Check one entry against what a layer may hold; path has no "./" prefix. */
static int
check_entry(struct archive_entry *ent, char *path, const struct seen *sn, struct sbx_err *e)
{
	mode_t type = archive_entry_filetype(ent), mode = archive_entry_mode(ent);
	const char *hl = archive_entry_hardlink(ent), *sl, *name, *val;
	const struct strset *files = &sn->files;
	size_t len;

	if (!clean_path(path))
		return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': absolute, empty or with "
		    "'..' or '.'", path);
	if (strset_has(&sn->all, path))
		return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': appears twice", path);
	if (below_link(sn, path))
		return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': lies below a symlink or a "
		    "file of the layer", path);
	if (hl != NULL) {
		if (strncmp(hl, "./", 2) == 0)
			hl += 2;
		if (!clean_path(hl) || !strset_has(files, hl))
			return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': hard link to "
			    "'%.200s', which is not an earlier file of the layer", path, hl);
	} else if (type == AE_IFLNK) {
		/* Its target is data of the sandbox, resolved in the sandbox's root
		 * (or by the extraction below, which never follows a symlink). */
		if ((sl = archive_entry_symlink(ent)) == NULL || *sl == '\0' ||
		    strlen(sl) >= PATH_MAX)
			return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': a symlink with an "
			    "empty target or one of %d bytes or more", path, PATH_MAX);
	} else if (type == AE_IFCHR) {
		if (archive_entry_rdev(ent) != 0)
			return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': device node %lu:%lu",
			    path, (unsigned long)archive_entry_rdevmajor(ent), (unsigned long)archive_entry_rdevminor(ent));
	} else if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFIFO) {
		return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': a %s", path,
		    type == AE_IFBLK ? "block device" : type == AE_IFSOCK ? "socket" :
		    "file of unknown type");
	}
	if (mode & (S_ISUID | S_ISGID))
		return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': setuid or setgid bit", path);
	if (archive_entry_uid(ent) < 0 || archive_entry_uid(ent) >= MAX_IDS ||
	    archive_entry_gid(ent) < 0 || archive_entry_gid(ent) >= MAX_IDS)
		return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': owner %lld:%lld is past the "
		    "sandbox's 65536 IDs", path, (long long)archive_entry_uid(ent),
		    (long long)archive_entry_gid(ent));
	archive_entry_xattr_reset(ent);
	while (archive_entry_xattr_next(ent, &name, (const void **)&val, &len) == ARCHIVE_OK)
		if (strncmp(name, "user.", 5) != 0 ||
		    (strncmp(name, "user.overlay.", 13) == 0 && strcmp(name, OPAQUE) != 0))
			return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': xattr %.100s is not "
			    "one a layer may carry", path, name);
	return 0;
}

/* What an archive may expand to, and what it has so far. */
struct budget {
	long long data, data_max;     /* file data decompressed (holes of sparse files: 0) */
	long long disk, disk_max;     /* of it, what extraction writes (runs of zeros: 0) */
	long long names;              /* bytes of entry names, held in the sets of seen */
};

static int
is_zero(const unsigned char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

static int
pwrite_all(int fd, const unsigned char *buf, size_t len, off_t off)
{
	ssize_t n;

	while (len > 0) {
		if ((n = pwrite(fd, buf, len, off)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/*
 * One block of file data at file offset off: each 4 KiB-aligned run of
 * zeros is left a hole (the new file reads zeros there, and holds no block),
 * the rest is written to fd (-1: only counted) and counted against the budget.
 */
static int
write_block(int fd, const unsigned char *buf, size_t len, la_int64_t off, struct budget *b,
    const char *path, struct sbx_err *e)
{
	size_t at = 0, start = 0, n;
	int run = 0;

	while (at <= len) {
		n = at == len ? 0 : (size_t)(4096 - (off + (la_int64_t)at) % 4096);
		if (n > len - at)
			n = len - at;
		if (n == 0 || is_zero(buf + at, n)) {
			if (run) {
				b->disk += (long long)(at - start);
				if (b->disk > b->disk_max)
					return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': the layer "
					    "writes more than %lld MiB, the most an archive of its size "
					    "may (SBX_LAYER_MAX_RATIO)", path, b->disk_max >> 20);
				if (fd != -1 && pwrite_all(fd, buf + start, at - start,
				    (off_t)off + (off_t)start) == -1)
					return sbx_err_sys(e, SBX_EX_IOERR, "extract %.200s", path);
			}
			run = 0;
			if (n == 0)
				break;
		} else if (!run) {
			run = 1;
			start = at;
		}
		at += n;
	}
	return 0;
}

static int
copy_data(struct archive *in, int fd, const char *path, struct budget *b, struct sbx_err *e)
{
	const void *buf;
	size_t len;
	la_int64_t off;
	int r;

	while ((r = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK) {
		if ((b->data += (long long)len) > b->data_max)
			return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': the layer unpacks to "
			    "more than %lld MiB (SBX_LAYER_MAX_MB)", path, b->data_max >> 20);
		if (write_block(fd, buf, len, off, b, path, e) == -1)
			return -1;
	}
	if (r != ARCHIVE_EOF)
		return sbx_err_set(e, SBX_EX_DATAERR, "layer entry '%.200s': %s", path,
		    archive_error_string(in));
	return 0;
}

/*
 * Extraction. Every name is resolved beneath the target directory and never
 * through a symlink (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), one
 * directory at a time from a descriptor, so paths longer than PATH_MAX work
 * and nothing an entry names can lead out: an entry below a symlink, or a
 * hard link through one, fails to resolve. Entries are made with O_EXCL and
 * their kind's *at call in that directory; directories get their mode and
 * time once everything below them is in.
 */
struct fixup {
	char *path;
	mode_t mode;
	struct timespec mtime;
};

struct writer {
	int root;                /* the target directory */
	int pfd;                 /* the directory named by cur, or -1 */
	char *cur;
	int keep_owners;
	struct fixup *fix;
	size_t nfix, capfix;
};

static int
open_beneath(int at, const char *name, int flags)
{
	struct open_how how = { .flags = (unsigned long long)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
		    RESOLVE_NO_XDEV };

	return (int)syscall(SYS_openat2, at, name, &how, sizeof how);
}

static int
refuse_walk(const char *path, struct sbx_err *e)
{
	if (errno == ELOOP || errno == ENOTDIR || errno == EXDEV)
		return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': lies below a symlink or a "
		    "file of the layer", path);
	if (errno == ENOSYS)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "the kernel has no openat2 (5.6 or later "
		    "is needed to extract layers)");
	return sbx_err_sys(e, SBX_EX_IOERR, "extract %.200s", path);
}

static int add_fixup(struct writer *w, const char *path, mode_t mode, struct timespec mtime);

/* An O_PATH descriptor of directory dir (len bytes of it) below the root, made
 * (0755) where missing when create; entry names the entry for messages. */
static int
walk_dir(struct writer *w, const char *dir, size_t len, int create, const char *entry,
    struct sbx_err *e)
{
	char comp[NAME_MAX + 1];
	size_t at = 0, n;
	int fd, next;

	if ((fd = open_beneath(w->root, ".", O_PATH | O_DIRECTORY)) == -1)
		return refuse_walk(entry, e);
	while (at < len) {
		n = strcspn(dir + at, "/");
		if (n > len - at)
			n = len - at;
		if (n > NAME_MAX) {
			close(fd);
			return sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': a name longer than %d "
			    "bytes", entry, NAME_MAX);
		}
		memcpy(comp, dir + at, n);
		comp[n] = '\0';
		next = open_beneath(fd, comp, O_PATH | O_DIRECTORY);
		if (next == -1 && errno == ENOENT && create) {
			/* An archive may leave out directories above its entries. */
			struct timespec now = { 0, UTIME_NOW };

			if ((mkdirat(fd, comp, 0700) == -1 && errno != EEXIST) ||
			    add_fixup(w, NULL, 0755, now) == -1 ||
			    (w->fix[w->nfix - 1].path = strndup(dir, at + n)) == NULL) {
				close(fd);
				return sbx_err_sys(e, SBX_EX_IOERR, "extract %.200s", entry);
			}
			next = open_beneath(fd, comp, O_PATH | O_DIRECTORY);
		}
		close(fd);
		if (next == -1)
			return refuse_walk(entry, e);
		fd = next;
		at += n + 1;
	}
	return fd;
}

/* The directory above path (cached: entries come directory by directory);
 * *base gets the last component. */
static int
parent_of(struct writer *w, const char *path, const char **base, struct sbx_err *e)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	int fd;

	*base = slash ? slash + 1 : path;
	if (w->pfd != -1 && strlen(w->cur) == len && strncmp(w->cur, path, len) == 0)
		return w->pfd;
	if ((fd = walk_dir(w, path, len, 1, path, e)) == -1)
		return -1;
	if (w->pfd != -1)
		close(w->pfd);
	free(w->cur);
	w->pfd = -1;
	if ((w->cur = strndup(path, len)) == NULL) {
		close(fd);
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
	w->pfd = fd;
	return fd;
}

static int
add_fixup(struct writer *w, const char *path, mode_t mode, struct timespec mtime)
{
	if (w->nfix == w->capfix) {
		size_t cap = w->capfix ? w->capfix * 2 : 64;
		struct fixup *g = realloc(w->fix, cap * sizeof *g);

		if (g == NULL)
			return -1;
		w->fix = g;
		w->capfix = cap;
	}
	w->fix[w->nfix].path = path ? strdup(path) : NULL;
	if (path != NULL && w->fix[w->nfix].path == NULL)
		return -1;
	w->fix[w->nfix].mode = mode;
	w->fix[w->nfix++].mtime = mtime;
	return 0;
}

/* A directory that was there already gets its mode and time for finish_dirs
 * in the fixup of the implicit parent made for path (rare: a linear search). */
static int
set_fixup(struct writer *w, const char *path, mode_t mode, struct timespec mtime)
{
	size_t i;

	for (i = w->nfix; i-- > 0;)
		if (strcmp(w->fix[i].path, path) == 0) {
			w->fix[i].mode = mode;
			w->fix[i].mtime = mtime;
			return 0;
		}
	return add_fixup(w, path, mode, mtime);
}

/* Owner, xattrs, then mode and time of what fd (or pfd/base) is. */
static int
set_attrs(const struct writer *w, struct archive_entry *ent, int fd, int pfd, const char *base,
    const char *path, struct sbx_err *e)
{
	struct timespec ts[2] = { { archive_entry_mtime(ent), archive_entry_mtime_nsec(ent) } };
	mode_t type = archive_entry_filetype(ent);
	const char *name;
	const void *val;
	size_t len;

	ts[1] = ts[0];
	if (w->keep_owners && (fd != -1 ? fchown(fd, (uid_t)archive_entry_uid(ent),
	    (gid_t)archive_entry_gid(ent)) : fchownat(pfd, base, (uid_t)archive_entry_uid(ent),
	    (gid_t)archive_entry_gid(ent), AT_SYMLINK_NOFOLLOW)) == -1)
		return sbx_err_sys(e, SBX_EX_IOERR, "owner of %.200s", path);
	archive_entry_xattr_reset(ent);
	while (fd != -1 && archive_entry_xattr_next(ent, &name, &val, &len) == ARCHIVE_OK)
		if (fsetxattr(fd, name, val, len, 0) == -1)
			return sbx_err_sys(e, SBX_EX_IOERR, "xattr %.100s of %.200s", name, path);
	if (type == AE_IFDIR)
		return 0;    /* a fixup, once its entries are in */
	if (type != AE_IFLNK && (fd != -1 ? fchmod(fd, archive_entry_mode(ent) & 07777) :
	    fchmodat(pfd, base, archive_entry_mode(ent) & 07777, 0)) == -1)
		return sbx_err_sys(e, SBX_EX_IOERR, "mode of %.200s", path);
	if ((fd != -1 ? futimens(fd, ts) : utimensat(pfd, base, ts, AT_SYMLINK_NOFOLLOW)) == -1)
		return sbx_err_sys(e, SBX_EX_IOERR, "time of %.200s", path);
	return 0;
}

static int
make_link(struct writer *w, const char *hl, int pfd, const char *base, const char *path,
    struct sbx_err *e)
{
	const char *slash = strrchr(hl, '/'), *tbase = slash ? slash + 1 : hl;
	struct stat st;
	int tfd, r = 0;

	if ((tfd = walk_dir(w, hl, slash ? (size_t)(slash - hl) : 0, 0, path, e)) == -1)
		return -1;
	if (fstatat(tfd, tbase, &st, AT_SYMLINK_NOFOLLOW) == -1 || !S_ISREG(st.st_mode))
		r = sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': hard link to '%.200s', which is "
		    "not a file of the layer", path, hl);
	else if (linkat(tfd, tbase, pfd, base, 0) == -1)
		r = sbx_err_sys(e, errno == EEXIST ? SBX_EX_DATAERR : SBX_EX_IOERR, "extract %.200s",
		    path);
	close(tfd);
	return r;
}

/* Make one checked entry below w->root, with its data from in. */
static int
extract_entry(struct writer *w, struct archive *in, struct archive_entry *ent, const char *path,
    struct budget *b, struct sbx_err *e)
{
	mode_t type = archive_entry_filetype(ent), perm = archive_entry_mode(ent) & 07777;
	const char *base, *hl = archive_entry_hardlink(ent);
	struct timespec mt = { archive_entry_mtime(ent), archive_entry_mtime_nsec(ent) };
	struct stat st;
	int pfd, fd = -1, r = -1;

	if ((pfd = parent_of(w, path, &base, e)) == -1)
		return -1;
	if (hl != NULL)
		return make_link(w, strncmp(hl, "./", 2) == 0 ? hl + 2 : hl, pfd, base, path, e);
	if (type == AE_IFREG) {
		if ((fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600)) == -1)
			goto fail;
		if (copy_data(in, fd, path, b, e) == -1)
			goto out;
		if (ftruncate(fd, (off_t)archive_entry_size(ent)) == -1)
			goto fail;
	} else if (type == AE_IFDIR) {
		/* Made already as the parent of an earlier entry: it gets this
		 * entry's mode and time instead of the made-up ones. */
		int made = mkdirat(pfd, base, 0700) == 0;

		if (!made && (errno != EEXIST || fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISDIR(st.st_mode)))
			goto fail;
		if ((fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
		    (made ? add_fixup(w, path, perm, mt) : set_fixup(w, path, perm, mt)) == -1)
			goto fail;
	} else if (type == AE_IFLNK) {
		if (symlinkat(archive_entry_symlink(ent), pfd, base) == -1)
			goto fail;
	} else if (mknodat(pfd, base, type == AE_IFCHR ? S_IFCHR : S_IFIFO, 0) == -1) {
		goto fail;    /* a whiteout (0,0) or a FIFO: check_entry allows nothing else */
	}
	r = set_attrs(w, ent, fd, pfd, base, path, e);
	goto out;
fail:
	r = sbx_err_sys(e, errno == EEXIST ? SBX_EX_DATAERR : SBX_EX_IOERR, "extract %.200s", path);
out:
	if (fd != -1)
		close(fd);
	return r;
}

/* Directories' modes and times, deepest first (they come after their parents). */
static int
finish_dirs(struct writer *w, struct sbx_err *e)
{
	size_t i = w->nfix;
	int pfd, fd;

	while (i-- > 0) {
		const struct fixup *f = &w->fix[i];
		const char *slash = strrchr(f->path, '/'), *base = slash ? slash + 1 : f->path;
		struct timespec ts[2] = { f->mtime, f->mtime };

		if ((pfd = walk_dir(w, f->path, slash ? (size_t)(slash - f->path) : 0, 0, f->path,
		    e)) == -1)
			return -1;
		fd = open_beneath(pfd, base, O_RDONLY | O_DIRECTORY);
		close(pfd);
		if (fd == -1)
			return refuse_walk(f->path, e);
		if (fchmod(fd, f->mode) == -1 || futimens(fd, ts) == -1) {
			close(fd);
			return sbx_err_sys(e, SBX_EX_IOERR, "extract %.200s", f->path);
		}
		close(fd);
	}
	return 0;
}

static void
writer_free(struct writer *w)
{
	size_t i;

	for (i = 0; i < w->nfix; i++)
		free(w->fix[i].path);
	free(w->fix);
	free(w->cur);
	if (w->pfd != -1)
		close(w->pfd);
	if (w->root != -1)
		close(w->root);
}

/* The entry's name as a layer path: no "./" before it, no "/" after a directory.
 * Caller frees it. */
static char *
entry_path(struct archive_entry *ent, struct sbx_err *e)
{
	const char *name = archive_entry_pathname(ent);
	char *path;
	size_t len;

	if (name == NULL || strlen(name) > SBX_LAYER_PATH_MAX) {
		sbx_err_set(e, SBX_EX_DATAERR, "entry without a name, or one longer than %d bytes",
		    SBX_LAYER_PATH_MAX);
		return NULL;
	}
	if (strncmp(name, "./", 2) == 0)
		name += 2;
	if ((path = strdup(name)) == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		return NULL;
	}
	len = strlen(path);
	if (len > 1 && path[len - 1] == '/' && archive_entry_filetype(ent) == AE_IFDIR)
		path[len - 1] = '\0';
	if (*path == '\0' || strcmp(path, ".") == 0) {
		sbx_err_set(e, SBX_EX_DATAERR, "entry '.': a layer does not hold its root");
		free(path);
		return NULL;
	}
	return path;
}

/* Check the next entry, record it, and extract it when w. */
static int
one_entry(struct archive *in, struct archive_entry *ent, struct seen *seen, struct writer *w,
    struct budget *b, struct sbx_layer_info *info, struct sbx_err *e)
{
	char *path;
	int r = -1, plain = archive_entry_hardlink(ent) == NULL;

	if ((path = entry_path(ent, e)) == NULL)
		return -1;
	if (check_entry(ent, path, seen, e) == -1)
		goto out;
	if (++info->entries > MAX_ENTRIES) {
		sbx_err_set(e, SBX_EX_DATAERR, "more than %lld entries", MAX_ENTRIES);
		goto out;
	}
	/* Sizes are what the header claims (a sparse file's holes among them); the
	 * budget counts the data itself, in copy_data. */
	if (archive_entry_size(ent) < 0) {
		sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': a negative size", path);
		goto out;
	}
	info->unpacked += archive_entry_size(ent);
	if ((b->names += (long long)strlen(path)) > MAX_NAMES) {
		sbx_err_set(e, SBX_EX_DATAERR, "names of more than %lld MiB in all", MAX_NAMES >> 20);
		goto out;
	}
	if (strset_add(&seen->all, path) == -1 ||
	    (archive_entry_filetype(ent) != AE_IFDIR && strset_add(&seen->nondirs, path) == -1) ||
	    (archive_entry_filetype(ent) == AE_IFREG && plain && strset_add(&seen->files, path) == -1)) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	if (w != NULL)
		r = extract_entry(w, in, ent, path, b, e);
	else
		r = copy_data(in, -1, path, b, e);
out:
	free(path);
	return r;
}

static int layer_unpack(int blobfd, const char *want, const char *dir, int keep_owners,
    int zstd, struct sbx_layer_info *info, struct sbx_err *e);

int
sbx_layer_unpack(int blobfd, const char *want, const char *dir, int keep_owners,
    struct sbx_layer_info *info, struct sbx_err *e)
{
	return layer_unpack(blobfd, want, dir, keep_owners, 1, info, e);
}

int
sbx_tar_unpack(int fd, const char *dir, struct sbx_layer_info *info, struct sbx_err *e)
{
	return layer_unpack(fd, NULL, dir, 0, 0, info, e);
}

int
sbx_layer_unpack_tar(int fd, const char *dir, struct sbx_layer_info *info, struct sbx_err *e)
{
	return layer_unpack(fd, NULL, dir, 1, 0, info, e);
}

static int
layer_unpack(int blobfd, const char *want, const char *dir, int keep_owners, int zstd,
    struct sbx_layer_info *info, struct sbx_err *e)
{
	struct reader rd = { .fd = blobfd };
	struct writer w = { .root = -1, .pfd = -1, .keep_owners = keep_owners };
	struct archive *in = NULL;
	struct archive_entry *ent;
	struct seen seen = { { 0 }, { 0 }, { 0 } };
	struct sbx_layer_limits lim;
	struct budget b = { 0, 0, 0, 0, 0 };
	struct stat st;
	unsigned char d[32];
	int r = -1, ar;
	const void *dummy;

	memset(info, 0, sizeof *info);
	if (sbx_archive_load(e) == -1)
		return -1;
	/* Every caller hands a file; anything else gets the absolute cap alone. */
	sbx_layer_limits(&lim);
	b.data_max = lim.max_bytes;
	b.disk_max = fstat(blobfd, &st) == 0 && S_ISREG(st.st_mode) ?
	    sbx_layer_write_max(&lim, (long long)st.st_size) : lim.max_bytes;
	sbx_sha256_init(&rd.sha);
	if ((rd.buf = malloc(CHUNK)) == NULL || (in = archive_read_new()) == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	archive_read_support_filter_zstd(in);
	archive_read_support_format_tar(in);
	if (dir != NULL && (w.root = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", dir);
		goto out;
	}
	if (archive_read_open(in, &rd, NULL, unpack_read, NULL) != ARCHIVE_OK) {
		sbx_err_set(e, SBX_EX_DATAERR, "not a %star archive: %s",
		    zstd ? "zstd-compressed " : "", archive_error_string(in));
		goto out;
	}
	if (archive_filter_code(in, 0) != (zstd ? ARCHIVE_FILTER_ZSTD : ARCHIVE_FILTER_NONE)) {
		sbx_err_set(e, SBX_EX_DATAERR, "not a%s tar archive",
		    zstd ? " zstd-compressed" : "n uncompressed");
		goto out;
	}
	while ((ar = archive_read_next_header(in, &ent)) == ARCHIVE_OK)
		if (one_entry(in, ent, &seen, dir ? &w : NULL, &b, info, e) == -1)
			goto out;
	if (ar != ARCHIVE_EOF) {
		sbx_err_set(e, SBX_EX_DATAERR, "damaged archive: %s", archive_error_string(in));
		goto out;
	}
	/* The digest covers every byte, including what follows the last entry. */
	while (unpack_read(in, &rd, &dummy) > 0)
		;
	if (dir != NULL && finish_dirs(&w, e) == -1)
		goto out;
	sbx_sha256_final(&rd.sha, d);
	sbx_hex(d, 32, info->digest);
	info->size = rd.size;
	info->written = b.disk;
	if (want != NULL && strcmp(want, info->digest) != 0) {
		sbx_err_set(e, SBX_EX_DATAERR, "digest mismatch: sha256:%s, expected sha256:%s",
		    info->digest, want);
		goto out;
	}
	r = 0;
out:
	if (in)
		archive_read_free(in);
	writer_free(&w);
	strset_free(&seen.all);
	strset_free(&seen.nondirs);
	strset_free(&seen.files);
	free(rd.buf);
	return r;
}

/* Packing a path of the host for a copy into a sandbox. */

struct path_packer {
	struct archive *a;
	struct archive_entry *ent;
	unsigned uid, gid;
	char *buf;
	struct sbx_err *e;
};

static int pack_path_at(struct path_packer *p, int dirfd, const char *base, const char *name);

/* The entries of the directory open at fd, sorted (a deterministic archive). */
static int
not_dots(const struct dirent *d)
{
	return strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0;
}

static int
pack_path_dir(struct path_packer *p, int fd, const char *name)
{
	struct dirent **names;
	char *sub;
	int n, i, r = 0;

	if ((n = scandirat(fd, ".", &names, not_dots, alphasort)) == -1)
		return sbx_err_sys(p->e, SBX_EX_IOERR, "%s", name);
	for (i = 0; r == 0 && i < n; i++) {
		if (asprintf(&sub, "%s/%s", name, names[i]->d_name) == -1) {
			r = sbx_err_set(p->e, SBX_EX_OSERR, "out of memory");
			break;
		}
		if (strlen(sub) > SBX_LAYER_PATH_MAX)
			r = sbx_err_set(p->e, SBX_EX_DATAERR, "%s: path too long", sub);
		else
			r = pack_path_at(p, fd, names[i]->d_name, sub);
		free(sub);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

static int
pack_path_at(struct path_packer *p, int dirfd, const char *base, const char *name)
{
	struct stat st;
	char target[PATH_MAX];
	ssize_t n;
	int fd = -1, r = -1;

	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return sbx_err_sys(p->e, errno == ENOENT ? SBX_EX_NOINPUT : SBX_EX_IOERR, "%s", name);
	archive_entry_clear(p->ent);
	archive_entry_set_pathname(p->ent, name);
	archive_entry_set_uid(p->ent, p->uid);
	archive_entry_set_gid(p->ent, p->gid);
	/* No setuid or setgid bits: the sandbox's root is mounted nosuid anyway. */
	archive_entry_set_perm(p->ent, st.st_mode & 01777);
	archive_entry_set_mtime(p->ent, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	if (S_ISREG(st.st_mode)) {
		if ((fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			return sbx_err_sys(p->e, SBX_EX_IOERR, "%s", name);
		archive_entry_set_filetype(p->ent, AE_IFREG);
		archive_entry_set_size(p->ent, st.st_size);
	} else if (S_ISDIR(st.st_mode)) {
		if ((fd = openat(dirfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			return sbx_err_sys(p->e, SBX_EX_IOERR, "%s", name);
		archive_entry_set_filetype(p->ent, AE_IFDIR);
	} else if (S_ISLNK(st.st_mode)) {
		if ((n = readlinkat(dirfd, base, target, sizeof target - 1)) == -1)
			return sbx_err_sys(p->e, SBX_EX_IOERR, "%s", name);
		target[n] = '\0';
		archive_entry_set_filetype(p->ent, AE_IFLNK);
		archive_entry_set_symlink(p->ent, target);
	} else {
		return sbx_err_set(p->e, SBX_EX_DATAERR, "%s: not a file, directory or symlink "
		    "(a device, FIFO or socket is not copied)", name);
	}
	if (archive_write_header(p->a, p->ent) != ARCHIVE_OK) {
		sbx_err_set(p->e, SBX_EX_IOERR, "%s: %s", name, archive_error_string(p->a));
		goto out;
	}
	if (S_ISREG(st.st_mode)) {
		long long left = st.st_size;

		/* As many bytes as the header said, even if the file changes meanwhile. */
		while (left > 0) {
			n = read(fd, p->buf, left < CHUNK ? (size_t)left : CHUNK);
			if (n == -1 && errno == EINTR)
				continue;
			if (n <= 0) {
				sbx_err_sys(p->e, SBX_EX_IOERR, n == 0 ? "%s: shrank while copied" :
				    "%s", name);
				goto out;
			}
			if (archive_write_data(p->a, p->buf, (size_t)n) != n) {
				sbx_err_set(p->e, SBX_EX_IOERR, "%s: %s", name,
				    archive_error_string(p->a));
				goto out;
			}
			left -= n;
		}
	} else if (S_ISDIR(st.st_mode) && pack_path_dir(p, fd, name) == -1) {
		goto out;
	}
	r = 0;
out:
	if (fd != -1)
		close(fd);
	return r;
}

int
sbx_tar_pack_path(const char *path, const char *name, unsigned uid, unsigned gid, int outfd,
    struct sbx_err *e)
{
	struct path_packer p = { NULL, NULL, uid, gid, NULL, e };
	int r = -1;

	if (sbx_archive_load(e) == -1)
		return -1;
	if ((p.buf = malloc(CHUNK)) == NULL || (p.a = archive_write_new()) == NULL ||
	    (p.ent = archive_entry_new()) == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	archive_write_set_format_pax_restricted(p.a);
	archive_write_set_bytes_in_last_block(p.a, 1);
	if (archive_write_open_fd(p.a, outfd) != ARCHIVE_OK) {
		sbx_err_set(e, SBX_EX_IOERR, "%s", archive_error_string(p.a));
		goto out;
	}
	if (pack_path_at(&p, AT_FDCWD, path, name) == 0) {
		if (archive_write_close(p.a) != ARCHIVE_OK)
			sbx_err_set(e, SBX_EX_IOERR, "%s", archive_error_string(p.a));
		else
			r = 0;
	}
out:
	if (p.ent)
		archive_entry_free(p.ent);
	if (p.a)
		archive_write_free(p.a);
	free(p.buf);
	return r;
}
