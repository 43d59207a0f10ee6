/* SPDX-License-Identifier: MIT */
/* Snapshot stores on S3: see remote.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "progress.h"
#include "remote.h"
#include "s3.h"
#include "util.h"

int
sbx_remote_is_s3(const char *url)
{
	return url && strncmp(url, "s3://", 5) == 0;
}

static void
layer_key(char *buf, size_t size, const char *hex)
{
	snprintf(buf, size, "layers/sha256/%s", hex);
}

static void
meta_key(char *buf, size_t size, const char *id)
{
	snprintf(buf, size, "snapshots/%s.yaml", id);
}

static void
short_label(char *buf, size_t size, const char *verb, const char *hex)
{
	snprintf(buf, size, "%s sha256:%.12s", verb, hex);
}

static int fetch_meta(struct sbx_s3 *c, const char *id, struct sbx_snapshot *sn,
    struct sbx_err *e);

/* Push */

/* A layer or the checkpoint (what), each stored as a layer is. */
static int
push_layer(struct sbx_s3 *c, const struct sbx_store *s, const struct sbx_snap_layer *l,
    const char *what, int *n, long long *bytes, struct sbx_err *e)
{
	char key[128], p[1200], label[64];
	long long have;
	int fd, r;
	struct stat st;

	layer_key(key, sizeof key, l->digest);
	if ((r = sbx_s3_head(c, key, &have, e)) == -1)
		return -1;
	if (r == 1 && have == l->size)
		/* There already: make it young, so that a sweep running now keeps it. */
		return sbx_s3_touch(c, key, e);
	if (sbx_snapshot_layer_path(s, l->digest, p, sizeof p, e) == -1)
		return -1;
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) == -1)
		return sbx_err_sys(e, 0, "%s sha256:%s", what, l->digest);
	if (fstat(fd, &st) == -1 || st.st_size != l->size) {
		close(fd);
		return sbx_err_set(e, SBX_EX_DATAERR, "%s sha256:%s: %lld bytes, the snapshot "
		    "says %lld (run sbx-snap verify)", what, l->digest, (long long)st.st_size,
		    l->size);
	}
	short_label(label, sizeof label, "push", l->digest);
	/* The digest is the SHA-256 the request signs: the server checks the bytes. */
	r = sbx_s3_put_file(c, key, fd, l->size, l->digest, label, e);
	close(fd);
	if (r == 0) {
		(*n)++;
		*bytes += l->size;
	}
	sbx_crash_point("push-layer");
	return r;
}

/* The bytes of sn's blobs, each once. */
static long long
blob_total(const struct sbx_snapshot *sn)
{
	const struct sbx_snap_layer *b;
	long long total = 0;
	size_t i, k;

	for (i = 0; (b = sbx_snapshot_blob(sn, i, NULL)) != NULL; i++) {
		for (k = 0; k < i && strcmp(sbx_snapshot_blob(sn, k, NULL)->digest, b->digest) != 0;
		    k++)
			;
		total += k == i ? b->size : 0;
	}
	return total;
}

int
sbx_remote_push(const struct sbx_store *s, const char *url, const char *id, int *out_layers,
    long long *out_bytes, struct sbx_err *e)
{
	struct sbx_snapshot sn;
	const struct sbx_snap_layer *b;
	const char *what;
	struct sbx_s3 c;
	char key[128], *buf = NULL;
	size_t len = 0, i, k;
	long long bytes = 0, done = 0;
	int lock, r = -1, n = 0, there;
	FILE *f;

	if ((lock = sbx_snapshot_lock(s, 0, e)) == -1)
		return -1;
	if (sbx_snapshot_load(s, id, &sn, e) == -1) {
		close(lock);
		return sbx_err_prefix(e, "snapshot %s", id);
	}
	if (sbx_s3_open(&c, url, e) == -1) {
		sbx_snapshot_free(&sn);
		close(lock);
		return -1;
	}
	sbx_progress_phase("layers", blob_total(&sn), "bytes");
	for (i = 0; (b = sbx_snapshot_blob(&sn, i, &what)) != NULL; i++) {
		for (k = 0; k < i && strcmp(sbx_snapshot_blob(&sn, k, NULL)->digest, b->digest) != 0;
		    k++)
			;
		if (sbx_interrupt_check(e) == -1 ||
		    (k == i && push_layer(&c, s, b, what, &n, &bytes, e) == -1))
			goto out;
		done += k == i ? b->size : 0;
		sbx_progress_set(done);
	}
	sbx_progress_phase("metadata", -1, "");
	sbx_crash_point("push-layers-done");
	/* Snapshot IDs are random, not unique across hosts: never overwrite
	 * another snapshot's metadata (the same snapshot again is a no-op). */
	meta_key(key, sizeof key, sn.snapshot_id);
	if ((there = sbx_s3_head(&c, key, NULL, e)) == 1) {
		struct sbx_snapshot old;

		if (fetch_meta(&c, sn.snapshot_id, &old, e) == -1)
			goto out;
		there = sbx_snapshot_same_layers(&old, &sn);
		sbx_snapshot_free(&old);
		if (!there) {
			sbx_err_set(e, SBX_EX_DATAERR, "%s holds another snapshot named %s", url,
			    sn.snapshot_id);
			goto out;
		}
	} else if (there == -1) {
		goto out;
	} else {
		int em;

		if ((f = open_memstream(&buf, &len)) == NULL) {
			sbx_err_oom(e);
			goto out;
		}
		em = sbx_snapshot_emit(f, &sn, SBX_FMT_YAML);
		if (fclose(f) != 0 || em == -1) {
			sbx_err_oom(e);
			goto out;
		}
		if (sbx_s3_put_mem(&c, key, buf, len, e) == -1)
			goto out;
	}
	{
		char d[1200];

		snprintf(d, sizeof d, "%s to %s", sn.snapshot_id, url);
		sbx_audit(s, sn.source_sandbox, "snapshot-push", "ok", d, NULL);
	}
	if (out_layers)
		*out_layers = n;
	if (out_bytes)
		*out_bytes = bytes;
	r = 0;
out:
	if (r == -1)
		sbx_err_prefix(e, "push %s", id);
	free(buf);
	sbx_s3_close(&c);
	sbx_snapshot_free(&sn);
	close(lock);
	return r;
}

/* Pull */

/* Fetch the store's metadata of id and check it (untrusted input). */
static int
fetch_meta(struct sbx_s3 *c, const char *id, struct sbx_snapshot *sn, struct sbx_err *e)
{
	char key[128], name[1400], *buf;
	size_t len;
	int r;

	if (sbx_id_check(id, e) == -1)
		return -1;
	meta_key(key, sizeof key, id);
	snprintf(name, sizeof name, "%s/%s", c->url, key);
	if (sbx_s3_get_mem(c, key, SBX_DOC_MAX, &buf, &len, e) == -1) {
		if (e && e->code == SBX_EX_NOINPUT)
			sbx_err_set(e, SBX_EX_NOINPUT, "%s: no such snapshot in %s", id, c->url);
		return -1;
	}
	r = sbx_snapshot_parse(name, buf, len, sn, e);
	free(buf);
	if (r == 0 && strcmp(sn->snapshot_id, id) != 0) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s: names snapshot %s", name, sn->snapshot_id);
		sbx_snapshot_free(sn);
		return -1;
	}
	return r;
}

static int
pull_layer(struct sbx_s3 *c, const struct sbx_store *s, const struct sbx_snap_layer *l,
    struct sbx_err *e)
{
	char key[128], p[1200], tmp[1200], hex[65], label[64];
	long long got = 0;
	int fd, r;

	if (sbx_snapshot_layer_path(s, l->digest, p, sizeof p, e) == -1)
		return -1;
	if (access(p, F_OK) == 0)
		return 0;  /* checked when it was written */
	if ((fd = sbx_snapshot_layer_tmp(s, l->digest, tmp, sizeof tmp, e)) == -1)
		return -1;
	layer_key(key, sizeof key, l->digest);
	short_label(label, sizeof label, "pull", l->digest);
	r = sbx_s3_get_file(c, key, fd, l->size, hex, &got, label, e);
	if (r == 0 && (strcmp(hex, l->digest) != 0 || got != l->size))
		r = sbx_err_set(e, SBX_EX_DATAERR, "%s/%s: damaged: %lld bytes with SHA-256 %s, "
		    "the snapshot names %lld bytes with %s; not used", c->url, key, got, hex,
		    l->size, l->digest);
	if (r == 0 && fsync(fd) == -1)
		r = sbx_err_sys(e, SBX_EX_IOERR, "%s", tmp);
	close(fd);
	if (r == 0)
		return sbx_snapshot_layer_commit(s, tmp, l->digest, e);
	unlink(tmp);
	return -1;
}

int
sbx_remote_pull(const struct sbx_store *s, const char *url, const char *id,
    struct sbx_err *e)
{
	struct sbx_snapshot sn;
	const struct sbx_snap_layer *b;
	struct sbx_s3 c;
	long long done = 0, total;
	size_t i;
	int lock, r = -1, have;

	/* The operator's policy bounds what the store's layers may expand to. */
	if (sbx_snapshot_limits(s, e) == -1 || sbx_s3_open(&c, url, e) == -1)
		return -1;
	sbx_progress_phase("metadata", -1, "");
	if (fetch_meta(&c, id, &sn, e) == -1) {
		sbx_s3_close(&c);
		return -1;
	}
	if ((lock = sbx_snapshot_lock(s, 0, e)) == -1)
		goto out_free;
	if ((have = sbx_snapshot_have(s, &sn, e)) != 0) {
		r = have == 1 ? 0 : -1;
		goto out;
	}
	total = blob_total(&sn);
	sbx_progress_phase("layers", total, "bytes");
	for (i = 0; (b = sbx_snapshot_blob(&sn, i, NULL)) != NULL; i++) {
		if (sbx_interrupt_check(e) == -1 || pull_layer(&c, s, b, e) == -1)
			goto out;
		done += b->size;
		sbx_progress_set(done < total ? done : total);
	}
	sbx_crash_point("pull-layers-done");
	if (sbx_snapshot_save(s, &sn, e) == -1) {
		/* Pulled by someone else meanwhile. */
		if (errno == EEXIST && sbx_snapshot_have(s, &sn, e) == 1)
			r = 0;
		goto out;
	}
	{
		char d[1200];

		snprintf(d, sizeof d, "%s from %s", sn.snapshot_id, url);
		sbx_audit(s, sn.source_sandbox, "snapshot-pull", "ok", d, NULL);
	}
	r = 0;
out:
	close(lock);
out_free:
	if (r == -1)
		sbx_err_prefix(e, "pull %s", id);
	sbx_snapshot_free(&sn);
	sbx_s3_close(&c);
	return r;
}

int
sbx_remote_ensure(const struct sbx_store *s, const char *url, const char *id,
    struct sbx_err *e)
{
	if (!sbx_remote_is_s3(url) || sbx_snapshot_exists(s, id))
		return 0;
	return sbx_remote_pull(s, url, id, e);
}

int
sbx_remote_load(const char *url, const char *id, struct sbx_snapshot *sn, struct sbx_err *e)
{
	struct sbx_s3 c;
	int r;

	memset(sn, 0, sizeof *sn);
	sbx_manifest_init(&sn->manifest);
	if (sbx_s3_open(&c, url, e) == -1)
		return -1;
	r = fetch_meta(&c, id, sn, e);
	sbx_s3_close(&c);
	return r;
}

int
sbx_remote_remove(const char *url, const char *id, struct sbx_err *e)
{
	struct sbx_s3 c;
	char key[128];
	int r;

	if (sbx_id_check(id, e) == -1 || sbx_s3_open(&c, url, e) == -1)
		return -1;
	meta_key(key, sizeof key, id);
	if ((r = sbx_s3_head(&c, key, NULL, e)) == 0)
		r = sbx_err_set(e, SBX_EX_NOINPUT, "no such snapshot in %s", url);
	else if (r == 1)
		r = sbx_s3_delete(&c, key, e);
	sbx_s3_close(&c);
	return r;
}

/* Listing */

/* Objects of a listing: their keys and LastModified. */
struct names {
	struct name {
		char *key;
		double mtime;
	} *v;
	size_t n, cap;
};

static void
names_free(struct names *n)
{
	size_t i;

	for (i = 0; i < n->n; i++)
		free(n->v[i].key);
	free(n->v);
	memset(n, 0, sizeof *n);
}

static int
names_add(void *ctx, const char *key, long long size, double mtime)
{
	struct names *n = ctx;

	(void)size;
	if (n->n == n->cap) {
		size_t cap = n->cap ? 2 * n->cap : 64;
		struct name *v = realloc(n->v, cap * sizeof *v);

		if (v == NULL)
			return -1;
		n->v = v;
		n->cap = cap;
	}
	if ((n->v[n->n].key = strdup(key)) == NULL)
		return -1;
	n->v[n->n++].mtime = mtime;
	return 0;
}

static int
cmp_snap(const void *a, const void *b)
{
	const struct sbx_snapshot *x = a, *y = b;
	int c = strcmp(x->created_at, y->created_at);

	return c ? c : strcmp(x->snapshot_id, y->snapshot_id);
}

/* Every snapshot of the store. Metadata that does not parse is skipped, or
 * with strict (retention, which must know every layer still named) an error. */
static int
load_set(struct sbx_s3 *c, struct sbx_snap_set *a, int strict, struct sbx_err *e)
{
	struct names keys = { 0 };
	size_t i;

	memset(a, 0, sizeof *a);
	if (sbx_s3_list(c, "snapshots/", names_add, &keys, e) == -1) {
		names_free(&keys);
		return -1;
	}
	if (keys.n && ((a->v = calloc(keys.n, sizeof *a->v)) == NULL ||
	    (a->keep = calloc(keys.n, 1)) == NULL)) {
		free(a->v);
		a->v = NULL;
		names_free(&keys);
		return sbx_err_oom(e);
	}
	for (i = 0; i < keys.n; i++) {
		char id[SBX_ID_MAX + 1];
		const char *key = keys.v[i].key;
		size_t len = strlen(key);

		/* snapshots/ID.yaml */
		if (len < 16 || len - 15 > SBX_ID_MAX || strcmp(key + len - 5, ".yaml") != 0)
			continue;
		memcpy(id, key + 10, len - 15);
		id[len - 15] = '\0';
		if (!sbx_id_valid(id))
			continue;
		if (fetch_meta(c, id, &a->v[a->n], e) == 0) {
			a->n++;
		} else if (e && (strict ? e->code != SBX_EX_NOINPUT : e->code != SBX_EX_DATAERR &&
		    e->code != SBX_EX_NOINPUT)) {
			if (strict && e->code == SBX_EX_DATAERR)
				sbx_err_prefix(e, "no layer is deleted while a snapshot's metadata "
				    "cannot be read (remove it with sbx-snap remove --store)");
			names_free(&keys);
			sbx_snapshot_set_free(a);
			return -1;
		}
	}
	names_free(&keys);
	if (a->n > 1)
		qsort(a->v, a->n, sizeof *a->v, cmp_snap);
	return 0;
}

int
sbx_remote_list(const char *url, struct sbx_snap_set *out, struct sbx_err *e)
{
	struct sbx_s3 c;
	int r;

	memset(out, 0, sizeof *out);
	if (sbx_s3_open(&c, url, e) == -1)
		return -1;
	r = load_set(&c, out, 0, e);
	sbx_s3_close(&c);
	return r;
}

/* Retention */

int
sbx_remote_retain(const struct sbx_store *s, sbx_snapshot_users_fn users, const char *url,
    long long keep_last, double max_age_s, double grace_s, int dry_run, sbx_snap_report report,
    void *ctx, struct sbx_err *e)
{
	struct sbx_snap_set a;
	struct names layers = { 0 };
	struct sbx_s3 c;
	double start;
	size_t i;
	int r = -1, aborted = 0;
	char key[256];

	if (sbx_s3_open(&c, url, e) == -1)
		return -1;
	/* Layers first: one uploaded after this listing is not in it, so not deleted. */
	if (sbx_s3_list(&c, "layers/sha256/", names_add, &layers, e) == -1) {
		sbx_s3_close(&c);
		names_free(&layers);
		return -1;
	}
	start = c.server_time > 0 ? c.server_time : sbx_realtime();
	sbx_pause_point("remote-gc-listed");
	if (load_set(&c, &a, 1, e) == -1) {
		sbx_s3_close(&c);
		names_free(&layers);
		return -1;
	}
	if (sbx_snapshot_set_choose(&a, s, users, keep_last, max_age_s, start, e) == -1)
		goto out;
	for (i = 0; i < a.n; i++) {
		if (a.keep[i])
			continue;
		report(ctx, "snapshot", a.v[i].snapshot_id);
		meta_key(key, sizeof key, a.v[i].snapshot_id);
		if (dry_run)
			continue;
		if (sbx_s3_delete(&c, key, e) == -1)
			goto out;
		{
			char d[1200];

			snprintf(d, sizeof d, "%s in %s", a.v[i].snapshot_id, url);
			sbx_audit(s, a.v[i].source_sandbox, "snapshot-remove", "ok", d, NULL);
		}
	}
	for (i = 0; i < layers.n; i++) {
		const char *hex = layers.v[i].key + strlen("layers/sha256/");

		if (strlen(hex) != SBX_DIGEST_HEX || sbx_snapshot_set_names(&a, hex) ||
		    layers.v[i].mtime >= start - grace_s)
			continue;
		report(ctx, "layer", hex);
		snprintf(key, sizeof key, "layers/sha256/%s", hex);
		if (!dry_run && sbx_s3_delete(&c, key, e) == -1)
			goto out;
	}
	if (sbx_s3_abort_stale(&c, "layers/", start - grace_s, dry_run, &aborted, e) == -1)
		goto out;
	for (i = 0; i < (size_t)aborted; i++)
		report(ctx, "upload", "multipart");
	r = 0;
out:
	sbx_snapshot_set_free(&a);
	names_free(&layers);
	sbx_s3_close(&c);
	return r;
}
