/* SPDX-License-Identifier: MIT */
/* Snapshots: capture, metadata, verify, export/import, layer cache, retention. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive_dl.h"
#include "audit.h"
#include "policy.h"
#include "progress.h"
#include "snapshot.h"
#include "util.h"

/* Changes this close to a snapshot's freeze may share its coarse timestamp. */
#define RACY_S 0.05

static char *
dupstr(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* $SBX_ROOT/sub[/name], the directory made on first use. */
static int
store_dir(const struct sbx_store *s, const char *sub, const char *name, char *buf, size_t size,
    struct sbx_err *e)
{
	char d[1200];

	snprintf(d, sizeof d, "%s/%s", s->root, sub);
	/* Layers and their extracted copies keep the sandbox's IDs: only root reads them. */
	if (mkdir(d, 0700) == -1 && errno != EEXIST)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", d);
	if (name == NULL)
		return sbx_path(buf, size, e, "%s", d);
	return sbx_path(buf, size, e, "%s/%s", d, name);
}

static int
meta_path(const struct sbx_store *s, const char *id, char *buf, size_t size, struct sbx_err *e)
{
	char name[SBX_ID_MAX + 8];

	if (sbx_id_check(id, e) == -1)
		return -1;
	snprintf(name, sizeof name, "%s.yaml", id);
	return store_dir(s, "snapshots", name, buf, size, e);
}

static int
blob_path(const struct sbx_store *s, const char *hex, char *buf, size_t size, struct sbx_err *e)
{
	char name[SBX_DIGEST_HEX + 16];

	snprintf(name, sizeof name, "%s.tar.zst", hex);
	return store_dir(s, "layers", name, buf, size, e);
}

static int
is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < SBX_DIGEST_HEX; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[SBX_DIGEST_HEX] == '\0';
}

/* The operator's policy bounds what a layer read from outside may expand to
 * (its limits: layer_mb, layer_ratio); reading it sets them for this process. */
int
sbx_snapshot_limits(const struct sbx_store *s, struct sbx_err *e)
{
	const struct sbx_policy *p = sbx_policy_get(s, e);
	long long mb, ratio;

	if (p == NULL)
		return -1;
	sbx_policy_layer_limits(p, &mb, &ratio);
	sbx_layer_set_policy(mb, ratio);
	return 0;
}

int
sbx_snapshot_lock(const struct sbx_store *s, int exclusive, struct sbx_err *e)
{
	char p[1200];

	if (store_dir(s, "snapshots", ".lock", p, sizeof p, e) == -1)
		return -1;
	return sbx_lock_file(p, exclusive, e);
}

int
sbx_snapshot_exists(const struct sbx_store *s, const char *id)
{
	char p[1200];

	return meta_path(s, id, p, sizeof p, NULL) == 0 && access(p, F_OK) == 0;
}

void
sbx_snapshot_free(struct sbx_snapshot *sn)
{
	free(sn->snapshot_id);
	free(sn->parent);
	free(sn->lineage);
	free(sn->source_sandbox);
	free(sn->base_rootfs);
	free(sn->created_at);
	free(sn->reason);
	free(sn->layers);
	free(sn->memory_tier);
	sbx_manifest_free(&sn->manifest);
	memset(sn, 0, sizeof *sn);
}

const struct sbx_snap_layer *
sbx_snapshot_blob(const struct sbx_snapshot *sn, size_t i, const char **what)
{
	if (what)
		*what = i < sn->n_layers ? "layer" : "checkpoint";
	if (i < sn->n_layers)
		return &sn->layers[i];
	return i == sn->n_layers && sn->has_memory ? &sn->memory : NULL;
}

/* Whether blob i is the first of sn's blobs with its digest (a checkpoint may
 * be the same bytes as a layer: the same file, sent and kept once). */
static int
blob_first(const struct sbx_snapshot *sn, size_t i)
{
	const struct sbx_snap_layer *b = sbx_snapshot_blob(sn, i, NULL), *o;
	size_t k;

	for (k = 0; k < i && (o = sbx_snapshot_blob(sn, k, NULL)) != NULL; k++)
		if (strcmp(o->digest, b->digest) == 0)
			return 0;
	return 1;
}

/* Metadata as a document */

/* A layer's or the checkpoint's map: digest, size, unpacked. */
static struct sbx_node *
blob_tree(const struct sbx_snap_layer *b)
{
	struct sbx_node *l = sbx_node_new(SBX_MAP);
	char d[SBX_DIGEST_HEX + 8];

	snprintf(d, sizeof d, "sha256:%s", b->digest);
	if (l == NULL || sbx_node_add(l, "digest", sbx_node_str(d)) == -1 ||
	    sbx_node_add(l, "size", sbx_node_int(b->size)) == -1 ||
	    sbx_node_add(l, "unpacked", sbx_node_int(b->unpacked)) == -1) {
		sbx_node_free(l);
		return NULL;
	}
	return l;
}

/* memory: true|false, and with true the checkpoint's map. */
static int
memory_tree(struct sbx_node *t, const struct sbx_snapshot *sn)
{
	struct sbx_node *c;

	if (sbx_node_add(t, "memory", sbx_node_bool(sn->has_memory)) == -1)
		return -1;
	if (!sn->has_memory)
		return 0;
	if ((c = blob_tree(&sn->memory)) == NULL)
		return -1;
	if (sbx_node_add(c, "tier", sbx_node_str(sn->memory_tier)) == -1) {
		sbx_node_free(c);
		return -1;
	}
	return sbx_node_add(t, "checkpoint", c);
}

static struct sbx_node *
snap_tree(const struct sbx_snapshot *sn)
{
	struct sbx_node *t = sbx_node_new(SBX_MAP), *ls, *l, *m;
	size_t i;
	int bad = t == NULL;

#define STR(k, v) bad |= sbx_node_add(t, k, (v) ? sbx_node_str(v) : sbx_node_raw("null"))
	STR("snapshot_id", sn->snapshot_id);
	STR("parent", sn->parent);
	STR("lineage", sn->lineage);
	STR("source_sandbox", sn->source_sandbox);
	STR("base_rootfs", sn->base_rootfs);
	STR("created_at", sn->created_at);
	STR("reason", sn->reason);
#undef STR
	if (bad || (ls = sbx_node_new(SBX_SEQ)) == NULL) {
		sbx_node_free(t);
		return NULL;
	}
	for (i = 0; i < sn->n_layers; i++)
		if ((l = blob_tree(&sn->layers[i])) == NULL || sbx_node_add(ls, NULL, l) == -1)
			bad = 1;
	bad |= sbx_node_add(t, "layers", ls);
	bad |= memory_tree(t, sn);
	if ((m = sbx_manifest_tree(&sn->manifest)) == NULL || sbx_node_add(t, "manifest", m) == -1)
		bad = 1;
	if (bad) {
		sbx_node_free(t);
		return NULL;
	}
	return t;
}

int
sbx_snapshot_emit(FILE *f, const struct sbx_snapshot *sn, enum sbx_format fmt)
{
	return sbx_doc_emit_tree(f, snap_tree(sn), fmt);
}

static int
get_str(const char *name, const struct sbx_node *t, const char *key, int required, char **out,
    struct sbx_err *e)
{
	const struct sbx_node *v = sbx_node_get(t, key);

	*out = NULL;
	if (v == NULL || (v->type == SBX_SCALAR && v->plain && strcmp(v->str, "null") == 0)) {
		if (required)
			return sbx_err_set(e, SBX_EX_DATAERR, "%s: '%s' is missing", name, key);
		return 0;
	}
	if (v->type != SBX_SCALAR)
		return sbx_err_set(e, SBX_EX_DATAERR, "%s:%d:%d: '%s' must be a string", name,
		    v->line, v->col, key);
	return (*out = strdup(v->str)) == NULL ? sbx_err_oom(e) : 0;
}

static int
get_int(const char *name, const struct sbx_node *t, const char *what, const char *key,
    long long *out, struct sbx_err *e)
{
	const struct sbx_node *v = sbx_node_get(t, key);
	char *end;

	if (v == NULL || v->type != SBX_SCALAR)
		return sbx_err_set(e, SBX_EX_DATAERR, "%s: %s '%s' is missing", name, what, key);
	errno = 0;
	*out = strtoll(v->str, &end, 10);
	if (errno || *end || *out < 0)
		return sbx_err_set(e, SBX_EX_DATAERR, "%s:%d:%d: '%s' must be a count", name,
		    v->line, v->col, key);
	return 0;
}

/* Leave out every layer that the chain names again higher up. Overlayfs
 * cannot stack one directory twice (ELOOP), and the tree is the same without
 * the lower copy: every entry it holds is an entry of the higher copy too,
 * which hides it (a file, a whiteout, an opaque directory) or merges the same
 * children over it (a directory). Returns how many were left out. */
static size_t
chain_dedupe(struct sbx_snapshot *sn)
{
	size_t i, k, n = 0;

	for (i = 0; i < sn->n_layers; i++) {
		for (k = i + 1; k < sn->n_layers; k++)
			if (strcmp(sn->layers[i].digest, sn->layers[k].digest) == 0)
				break;
		if (k == sn->n_layers)
			sn->layers[n++] = sn->layers[i];
	}
	k = sn->n_layers - n;
	sn->n_layers = n;
	return k;
}

int
sbx_snapshot_chain_check(const char *name, const struct sbx_snapshot *sn, struct sbx_err *e)
{
	size_t i, k;

	if (sn->n_layers == 0 || sn->n_layers > SBX_MAX_LAYERS)
		return sbx_err_set(e, SBX_EX_DATAERR, "%s: layers must list 1 to %d layers", name,
		    SBX_MAX_LAYERS);
	for (i = 0; i < sn->n_layers; i++)
		for (k = i + 1; k < sn->n_layers; k++)
			if (strcmp(sn->layers[i].digest, sn->layers[k].digest) == 0)
				return sbx_err_set(e, SBX_EX_DATAERR, "%s: layer sha256:%s is named "
				    "twice in the chain (%zu and %zu); a chain stacks each layer once",
				    name, sn->layers[i].digest, i + 1, k + 1);
	return 0;
}

/* A layer's or the checkpoint's map (what: which, for messages). */
static int
parse_blob(const char *name, const struct sbx_node *l, const char *what,
    struct sbx_snap_layer *b, struct sbx_err *e)
{
	const struct sbx_node *d;

	if (l->type != SBX_MAP || (d = sbx_node_get(l, "digest")) == NULL ||
	    d->type != SBX_SCALAR || strncmp(d->str, "sha256:", 7) != 0 || !is_hex64(d->str + 7))
		return sbx_err_set(e, SBX_EX_DATAERR, "%s:%d:%d: a %s needs a digest "
		    "sha256:<64 hex digits>", name, l->line, l->col, what);
	memcpy(b->digest, d->str + 7, SBX_DIGEST_HEX + 1);
	if (get_int(name, l, what, "size", &b->size, e) == -1 ||
	    get_int(name, l, what, "unpacked", &b->unpacked, e) == -1)
		return -1;
	return 0;
}

/* Which tier (and runtime) wrote a checkpoint: words joined by '/', never a
 * path that climbs (no empty word, none that begins with a dot). */
static int
tier_valid(const char *t)
{
	size_t n = strlen(t), i;

	if (n == 0 || n > 64 ||
	    strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-/") != n)
		return 0;
	for (i = 0; i < n; i++)
		if ((i == 0 || t[i - 1] == '/') && (t[i] == '/' || t[i] == '.'))
			return 0;
	return t[n - 1] != '/';
}

/* memory: true|false (absent: false); with true, and only then, checkpoint:
 * {digest, size, unpacked, tier}. */
static int
parse_memory(const char *name, const struct sbx_node *t, struct sbx_snapshot *sn,
    struct sbx_err *e)
{
	static const char *const keys[] = { "digest", "size", "unpacked", "tier", NULL };
	const struct sbx_node *m = sbx_node_get(t, "memory"), *c = sbx_node_get(t, "checkpoint");
	size_t i, k;

	if (m != NULL && (m->type != SBX_SCALAR || !m->plain ||
	    (strcmp(m->str, "true") != 0 && strcmp(m->str, "false") != 0)))
		return sbx_node_err(e, name, m, "'memory' must be true or false");
	sn->has_memory = m != NULL && strcmp(m->str, "true") == 0;
	if (!sn->has_memory && c != NULL)
		return sbx_node_err(e, name, c, "'checkpoint' without memory: true");
	if (!sn->has_memory)
		return 0;
	if (c == NULL || c->type != SBX_MAP)
		return sbx_err_set(e, SBX_EX_DATAERR, "%s: memory: true needs a 'checkpoint' map "
		    "(digest, size, unpacked, tier)", name);
	for (i = 0; i < c->n; i += 2) {
		for (k = 0; keys[k] && strcmp(keys[k], c->kids[i]->str) != 0; k++)
			;
		if (keys[k] == NULL)
			return sbx_node_err(e, name, c->kids[i], "checkpoint: unknown key '%.80s' "
			    "(known: digest, size, unpacked, tier)", c->kids[i]->str);
	}
	if (parse_blob(name, c, "checkpoint", &sn->memory, e) == -1 ||
	    get_str(name, c, "tier", 1, &sn->memory_tier, e) == -1)
		return -1;
	if (!tier_valid(sn->memory_tier))
		return sbx_node_err(e, name, sbx_node_get(c, "tier"), "checkpoint: tier must be "
		    "a tier's name (words of A-Z a-z 0-9 . _ + - joined by /, none beginning "
		    "with a dot, at most 64 bytes, as oci/runsc)");
	/* The same bytes as a layer (kept once in the store) are the same size. */
	for (i = 0; i < sn->n_layers; i++)
		if (strcmp(sn->layers[i].digest, sn->memory.digest) == 0 &&
		    (sn->layers[i].size != sn->memory.size ||
		    sn->layers[i].unpacked != sn->memory.unpacked))
			return sbx_err_set(e, SBX_EX_DATAERR, "%s: checkpoint sha256:%s is layer %zu "
			    "with another size", name, sn->memory.digest, i + 1);
	return 0;
}

static int
parse_doc(const char *name, const char *buf, size_t len, int lenient, struct sbx_snapshot *sn,
    struct sbx_err *e)
{
	static const char *const keys[] = { "snapshot_id", "parent", "lineage", "source_sandbox",
		"base_rootfs", "created_at", "reason", "layers", "memory", "checkpoint", "manifest",
		NULL };
	struct sbx_node *t;
	const struct sbx_node *ls, *mn;
	size_t i, k;
	int r = -1;

	memset(sn, 0, sizeof *sn);
	sbx_manifest_init(&sn->manifest);
	if (sbx_doc_parse(name, buf, len, &t, e) == -1)
		return -1;
	if (t->type != SBX_MAP) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s: not a snapshot document", name);
		goto out;
	}
	for (i = 0; i < t->n; i += 2) {
		for (k = 0; keys[k] && strcmp(keys[k], t->kids[i]->str) != 0; k++)
			;
		if (keys[k] == NULL) {
			sbx_err_set(e, SBX_EX_DATAERR, "%s:%d:%d: unknown key '%s'", name,
			    t->kids[i]->line, t->kids[i]->col, t->kids[i]->str);
			goto out;
		}
	}
	if (get_str(name, t, "snapshot_id", 1, &sn->snapshot_id, e) == -1 ||
	    get_str(name, t, "parent", 0, &sn->parent, e) == -1 ||
	    get_str(name, t, "lineage", 1, &sn->lineage, e) == -1 ||
	    get_str(name, t, "source_sandbox", 1, &sn->source_sandbox, e) == -1 ||
	    get_str(name, t, "base_rootfs", 1, &sn->base_rootfs, e) == -1 ||
	    get_str(name, t, "created_at", 1, &sn->created_at, e) == -1 ||
	    get_str(name, t, "reason", 0, &sn->reason, e) == -1)
		goto out;
	if (sbx_id_check(sn->snapshot_id, e) == -1 || sbx_id_check(sn->lineage, e) == -1 ||
	    sbx_id_check(sn->source_sandbox, e) == -1 ||
	    (sn->parent && sbx_id_check(sn->parent, e) == -1)) {
		sbx_err_prefix(e, "%s", name);
		goto out;
	}
	if (strcmp(sn->base_rootfs, "host") != 0 && !sbx_manifest_path_normal(sn->base_rootfs)) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s: base_rootfs must be host or an absolute, "
		    "normalized path (no '.', '..' or '//')", name);
		goto out;
	}
	if ((ls = sbx_node_get(t, "layers")) == NULL || ls->type != SBX_SEQ || ls->n == 0 ||
	    ls->n > SBX_MAX_LAYERS) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s: layers must list 1 to %d layers", name,
		    SBX_MAX_LAYERS);
		goto out;
	}
	if ((sn->layers = calloc(ls->n, sizeof *sn->layers)) == NULL) {
		sbx_err_oom(e);
		goto out;
	}
	for (i = 0; i < ls->n; i++)
		if (parse_blob(name, ls->kids[i], "layer", &sn->layers[i], e) == -1)
			goto out;
	sn->n_layers = ls->n;
	if (lenient)
		chain_dedupe(sn);
	else if (sbx_snapshot_chain_check(name, sn, e) == -1)
		goto out;
	if ((mn = sbx_node_get(t, "manifest")) == NULL || mn->type != SBX_MAP) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s: 'manifest' is missing", name);
		goto out;
	}
	if (parse_memory(name, t, sn, e) == -1)
		goto out;
	if (sbx_manifest_from_node(name, mn, &sn->manifest, e) == -1) {
		sbx_manifest_init(&sn->manifest);
		goto out;
	}
	r = 0;
out:
	sbx_node_free(t);
	if (r == -1)
		sbx_snapshot_free(sn);
	return r;
}

int
sbx_snapshot_parse(const char *name, const char *buf, size_t len, struct sbx_snapshot *sn,
    struct sbx_err *e)
{
	return parse_doc(name, buf, len, 0, sn, e);
}

int
sbx_snapshot_load(const struct sbx_store *s, const char *id, struct sbx_snapshot *sn,
    struct sbx_err *e)
{
	char p[1200], *buf;
	size_t len;
	int r;

	memset(sn, 0, sizeof *sn);
	sbx_manifest_init(&sn->manifest);
	if (meta_path(s, id, p, sizeof p, e) == -1)
		return -1;
	if (sbx_read_file(p, SBX_DOC_MAX, &buf, &len, e) == -1) {
		if (e && e->code == SBX_EX_NOINPUT)
			sbx_err_set(e, SBX_EX_NOINPUT, "no such snapshot");
		return -1;
	}
	/* This store's own metadata: an earlier sbx could name a layer twice. */
	r = parse_doc(p, buf, len, 1, sn, e);
	free(buf);
	if (r == 0 && strcmp(sn->snapshot_id, id) != 0) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s: names snapshot %s", p, sn->snapshot_id);
		sbx_snapshot_free(sn);
		return -1;
	}
	return r;
}

int
sbx_snapshot_save(const struct sbx_store *s, const struct sbx_snapshot *sn, struct sbx_err *e)
{
	char p[1200], *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (meta_path(s, sn->snapshot_id, p, sizeof p, e) == -1)
		return -1;
	if ((f = open_memstream(&buf, &len)) == NULL)
		return sbx_err_oom(e);
	r = sbx_snapshot_emit(f, sn, SBX_FMT_YAML);
	if (fclose(f) != 0 || r == -1) {
		free(buf);
		return sbx_err_oom(e);
	}
	r = sbx_write_atomic_new(p, buf, len, 0600, e);
	if (r == -1 && errno == EEXIST)
		sbx_err_set(e, SBX_EX_DATAERR, "snapshot ID %s was taken meanwhile",
		    sn->snapshot_id);
	free(buf);
	return r;
}

struct snap_entry {
	char *id, *created;
};

static int
cmp_created(const void *a, const void *b)
{
	const struct snap_entry *x = a, *y = b;
	int c = strcmp(x->created, y->created);

	return c ? c : strcmp(x->id, y->id);
}

int
sbx_snapshot_list(const struct sbx_store *s, char ***ids, size_t *n, struct sbx_err *e)
{
	struct snap_entry *v = NULL;
	size_t cap = 0, k = 0, i;
	char d[1200];
	struct dirent *de;
	DIR *dir;

	*ids = NULL;
	*n = 0;
	if (store_dir(s, "snapshots", NULL, d, sizeof d, e) == -1)
		return -1;
	if ((dir = opendir(d)) == NULL)
		return sbx_err_sys(e, SBX_EX_IOERR, "%s", d);
	while ((de = readdir(dir)) != NULL) {
		char id[SBX_ID_MAX + 1];
		size_t len = strlen(de->d_name);
		struct sbx_snapshot sn;

		if (de->d_name[0] == '.' || len < 6 || len - 5 > SBX_ID_MAX ||
		    strcmp(de->d_name + len - 5, ".yaml") != 0)
			continue;
		memcpy(id, de->d_name, len - 5);
		id[len - 5] = '\0';
		if (!sbx_id_valid(id) || sbx_snapshot_load(s, id, &sn, NULL) == -1)
			continue;
		if (k == cap) {
			struct snap_entry *g = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof *g);

			if (g == NULL) {
				sbx_snapshot_free(&sn);
				break;
			}
			v = g;
		}
		v[k].id = sn.snapshot_id;
		v[k].created = sn.created_at;
		sn.snapshot_id = sn.created_at = NULL;
		sbx_snapshot_free(&sn);
		k++;
	}
	closedir(dir);
	if (k > 1)
		qsort(v, k, sizeof *v, cmp_created);
	if (k && (*ids = calloc(k, sizeof **ids)) == NULL) {
		for (i = 0; i < k; i++) {
			free(v[i].id);
			free(v[i].created);
		}
		free(v);
		return sbx_err_oom(e);
	}
	for (i = 0; i < k; i++) {
		(*ids)[i] = v[i].id;
		free(v[i].created);
	}
	free(v);
	*n = k;
	return 0;
}

/* Layers */

/* Write the layer in tmp into the store under its digest (once: a layer that
 * is there already is the same bytes). */
static int
blob_commit(const struct sbx_store *s, const char *tmp, const char *hex, struct sbx_err *e)
{
	char p[1200], d[1200];
	int dfd;

	if (blob_path(s, hex, p, sizeof p, e) == -1)
		return -1;
	if (access(p, F_OK) == 0) {
		unlink(tmp);
		return 0;
	}
	if (rename(tmp, p) == -1) {
		sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p);
		unlink(tmp);
		return -1;
	}
	if (store_dir(s, "layers", NULL, d, sizeof d, e) == -1)
		return -1;
	if ((dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

static int
open_tmp(const struct sbx_store *s, const char *sub, const char *tag, char *path, size_t size,
    struct sbx_err *e)
{
	char name[128];
	int fd;

	snprintf(name, sizeof name, ".tmp-%s-%ld", tag, (long)getpid());
	if (store_dir(s, sub, name, path, size, e) == -1)
		return -1;
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", path);
	return fd;
}


int
sbx_snapshot_layer_path(const struct sbx_store *s, const char *hex, char *buf, size_t size,
    struct sbx_err *e)
{
	return blob_path(s, hex, buf, size, e);
}

int
sbx_snapshot_layer_tmp(const struct sbx_store *s, const char *hex, char *path, size_t size,
    struct sbx_err *e)
{
	return open_tmp(s, "layers", hex, path, size, e);
}

int
sbx_snapshot_layer_commit(const struct sbx_store *s, const char *tmp, const char *hex,
    struct sbx_err *e)
{
	return blob_commit(s, tmp, hex, e);
}

/* Capture */

/* What an index belongs to: the sandbox whose tree it lists and the snapshot
 * made from it. (Two snapshots racing for one ID write the same index path;
 * the loser's index then names its own sandbox and is never used.) */
static void
index_tag(char *buf, size_t size, const char *sandbox, const char *snapshot)
{
	snprintf(buf, size, "sandbox %s snapshot %s", sandbox, snapshot);
}

static int
index_path(const struct sbx_store *s, const char *id, char *buf, size_t size, struct sbx_err *e)
{
	char name[SBX_ID_MAX + 8];

	snprintf(name, sizeof name, "%s.index", id);
	return store_dir(s, "snapshots", name, buf, size, e);
}

/*
 * The sandbox's previous snapshot, when the next one can be a diff layer on
 * it: a snapshot of this very sandbox, with its index, and a chain of diffs
 * short enough (a full layer every SBX_MAX_DIFFS snapshots keeps chains short
 * and lets retention free the old ones). Fills prev and base, or leaves them.
 */
static void
previous(const struct sbx_store *s, const struct sbx_manifest *m, size_t root_layers,
    struct sbx_snapshot *prev, struct sbx_index **base)
{
	char p[1200], tag[256];

	*base = NULL;
	if (m->snapshot.last_snapshot_id == NULL ||
	    sbx_snapshot_load(s, m->snapshot.last_snapshot_id, prev, NULL) == -1)
		return;
	index_tag(tag, sizeof tag, m->sandbox_id, prev->snapshot_id);
	if (strcmp(prev->source_sandbox, m->sandbox_id) != 0 ||
	    prev->n_layers < root_layers + 1 || prev->n_layers - root_layers >= SBX_MAX_DIFFS ||
	    prev->n_layers + 1 > SBX_MAX_LAYERS ||
	    index_path(s, prev->snapshot_id, p, sizeof p, NULL) == -1 ||
	    sbx_index_load(p, tag, base, NULL) == -1) {
		sbx_snapshot_free(prev);
		sbx_manifest_init(&prev->manifest);
		*base = NULL;
	}
}

int
sbx_snapshot_capture(const struct sbx_store *s, const struct sbx_manifest *m, double frozen_at,
    int whole, sbx_snapshot_pack_fn pack, void *ctx, struct sbx_snapshot *sn, struct sbx_err *e)
{
	struct sbx_layer_info li;
	struct sbx_snapshot parent, prev;
	struct sbx_index *base = NULL;
	struct sbx_pack_opts o = { NULL, -1, NULL, frozen_at - RACY_S };
	char tmp[1200], itmp[1200], ipath[1200], tag[256];
	int fd = -1, r = -1;
	size_t below;

	memset(&parent, 0, sizeof parent);
	memset(&prev, 0, sizeof prev);
	sbx_manifest_init(&parent.manifest);
	sbx_manifest_init(&prev.manifest);
	itmp[0] = '\0';
	if (index_path(s, sn->snapshot_id, ipath, sizeof ipath, e) == -1)
		return -1;
	if (sbx_manifest_rootfs_is_snapshot(m->rootfs)) {
		/* Made from a snapshot: this one stacks on it. */
		if (sbx_snapshot_load(s, m->rootfs, &parent, e) == -1)
			return sbx_err_prefix(e, "parent snapshot %s", m->rootfs);
	}
	if (!whole)
		previous(s, m, parent.n_layers, &prev, &base);
	if (base != NULL) {
		/* A diff on the previous snapshot, which stacks on the parent already. */
		sbx_snapshot_free(&parent);
		parent = prev;
		memset(&prev, 0, sizeof prev);
		sbx_manifest_init(&prev.manifest);
		o.base = base;
	}
	if ((fd = open_tmp(s, "layers", sn->snapshot_id, tmp, sizeof tmp, e)) == -1)
		goto out;
	if (!whole) {
		char name[SBX_ID_MAX + 8];

		snprintf(name, sizeof name, "%s-index", sn->snapshot_id);
		if ((o.index_fd = open_tmp(s, "snapshots", name, itmp, sizeof itmp, e)) == -1)
			goto out;
	}
	index_tag(tag, sizeof tag, m->sandbox_id, sn->snapshot_id);
	o.index_tag = tag;
	r = pack(ctx, fd, &o, &li, e);
	sbx_crash_point("snap-packed");
	if (r == 0 && fsync(fd) == -1)
		r = sbx_err_sys(e, SBX_EX_IOERR, "%s", tmp);
	close(fd);
	fd = -1;
	if (r == -1 || blob_commit(s, tmp, li.digest, e) == -1) {
		r = -1;
		goto out;
	}
	/* The index is only an aid for the next snapshot: one that is not there
	 * makes that one whole. It goes in before the metadata names the layer. */
	if (itmp[0] && rename(itmp, ipath) == -1) {
		r = sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", ipath);
		goto out;
	}
	itmp[0] = '\0';
	sbx_crash_point("snap-layer");
	r = -1;
	below = whole ? 0 : parent.n_layers;
	sn->n_layers = below + 1;
	if ((sn->layers = calloc(sn->n_layers, sizeof *sn->layers)) == NULL) {
		sbx_err_oom(e);
		goto out;
	}
	if (below)
		memcpy(sn->layers, parent.layers, below * sizeof *sn->layers);
	memcpy(sn->layers[below].digest, li.digest, sizeof li.digest);
	sn->layers[below].size = li.size;
	sn->layers[below].unpacked = li.unpacked;
	/* A layer the chain has already (nothing changed since it was made, or
	 * the same tree again) is stacked once, at the top. */
	chain_dedupe(sn);
	if (sn->n_layers > SBX_MAX_LAYERS) {
		sbx_err_set(e, SBX_EX_UNAVAILABLE, "the chain of snapshot %s has %d layers already, "
		    "the most a root can stack", parent.snapshot_id, SBX_MAX_LAYERS);
		goto out;
	}
	if (parent.snapshot_id) {
		sn->parent = dupstr(parent.snapshot_id);
		sn->lineage = dupstr(parent.lineage);
		sn->base_rootfs = dupstr(parent.base_rootfs);
	} else {
		/* A lineage is named for the sandbox it began with. */
		sn->lineage = dupstr(m->sandbox_id);
		sn->base_rootfs = dupstr(m->rootfs);
	}
	if (sn->lineage == NULL || sn->base_rootfs == NULL)
		sbx_err_oom(e);
	else
		r = 0;
out:
	if (fd != -1) {
		close(fd);
		unlink(tmp);
	}
	if (o.index_fd != -1)
		close(o.index_fd);
	if (itmp[0])
		unlink(itmp);
	sbx_index_free(base);
	sbx_snapshot_free(&parent);
	sbx_snapshot_free(&prev);
	return r;
}

/* Verify, remove */

int
sbx_snapshot_verify(const struct sbx_store *s, const char *id, struct sbx_err *e)
{
	struct sbx_snapshot sn;
	struct sbx_layer_info li;
	struct sbx_err le0;
	const struct sbx_snap_layer *b;
	const char *what;
	struct stat st;
	char p[1200];
	size_t i;
	int fd, r = 0;

	if (sbx_snapshot_limits(s, e) == -1)
		return -1;

	if (sbx_snapshot_load(s, id, &sn, e) == -1)
		return -1;
	/* What mounting needs besides intact layers: a chain overlayfs can stack
	 * (load left out what an earlier sbx named twice) on a root that is there. */
	if (sbx_snapshot_chain_check(id, &sn, &le0) == -1)
		r = sbx_err_set(e, SBX_EX_NO, "%s", le0.msg);
	else if (strcmp(sn.base_rootfs, "host") != 0 && (stat(sn.base_rootfs, &st) == -1 ||
	    !S_ISDIR(st.st_mode)))
		r = sbx_err_set(e, SBX_EX_NO, "base rootfs %s: not a directory here",
		    sn.base_rootfs);
	for (i = 0; r == 0 && (b = sbx_snapshot_blob(&sn, i, &what)) != NULL; i++) {
		struct sbx_err le;

		if (blob_path(s, b->digest, p, sizeof p, e) == -1) {
			r = -1;
			break;
		}
		if ((fd = open(p, O_RDONLY | O_CLOEXEC)) == -1) {
			r = sbx_err_sys(e, SBX_EX_NO, "%s sha256:%s (%s)", what, b->digest, p);
			break;
		}
		if (sbx_layer_unpack(fd, b->digest, NULL, 0, &li, &le) == -1)
			r = sbx_err_set(e, SBX_EX_NO, "%s sha256:%s (%s) is damaged: %s", what,
			    b->digest, p, le.msg);
		else if (li.size != b->size)
			r = sbx_err_set(e, SBX_EX_NO, "%s sha256:%s (%s): %lld bytes, the "
			    "snapshot says %lld", what, b->digest, p, li.size, b->size);
		close(fd);
	}
	sbx_snapshot_free(&sn);
	return r;
}

void
sbx_snapshot_users_free(struct sbx_snapshot_users *u)
{
	sbx_strv_free(&u->sandbox);
	sbx_strv_free(&u->root);
}

int
sbx_snapshot_remove(const struct sbx_store *s, sbx_snapshot_users_fn users, const char *id,
    struct sbx_err *e)
{
	struct sbx_snapshot_users u = { { NULL, 0 }, { NULL, 0 } };
	const char *kid = NULL;
	char p[1200];
	size_t n = 0, i;
	int lock, r = -1;

	if ((lock = sbx_snapshot_lock(s, 1, e)) == -1)
		return -1;
	if (meta_path(s, id, p, sizeof p, e) == -1)
		goto out;
	if (access(p, F_OK) == -1) {
		sbx_err_set(e, SBX_EX_NOINPUT, "no such snapshot");
		goto out;
	}
	if (users != NULL && users(s, &u, e) == -1)
		goto out;
	for (i = 0; i < u.root.n; i++)
		if (strcmp(u.root.v[i], id) == 0 && n++ == 0)
			kid = u.sandbox.v[i];
	if (n > 0) {
		sbx_err_set(e, SBX_EX_TEMPFAIL, "sandbox %s (and %zu more) runs on it; destroy "
		    "them first", kid, n - 1);
		goto out;
	}
	if (unlink(p) == -1) {
		sbx_err_sys(e, SBX_EX_IOERR, "%s", p);
		goto out;
	}
	if (index_path(s, id, p, sizeof p, NULL) == 0)
		unlink(p);
	r = 0;
	sbx_audit(s, id, "snapshot-remove", "ok", NULL, NULL);
out:
	sbx_snapshot_users_free(&u);
	close(lock);
	return r;
}

/* Export and import: a plain tar of snapshot.yaml and layers/HEX.tar.zst. */

/* One entry: size bytes from fd, or from mem when fd is -1. */
static int
export_entry(struct archive *a, const char *name, int fd, const char *mem, long long size,
    long long mtime, struct sbx_err *e)
{
	struct archive_entry *ent;
	char buf[1 << 16];
	ssize_t n;
	int r = 0;

	if ((ent = archive_entry_new()) == NULL)
		return sbx_err_oom(e);
	archive_entry_set_pathname(ent, name);
	archive_entry_set_filetype(ent, AE_IFREG);
	archive_entry_set_perm(ent, 0600);
	archive_entry_set_size(ent, size);
	archive_entry_set_mtime(ent, mtime, 0);
	if (archive_write_header(a, ent) != ARCHIVE_OK)
		r = sbx_err_set(e, SBX_EX_IOERR, "export: %s", archive_error_string(a));
	if (r == 0 && fd == -1 && archive_write_data(a, mem, (size_t)size) != size)
		r = sbx_err_set(e, SBX_EX_IOERR, "export: %s", archive_error_string(a));
	while (r == 0 && fd != -1 && (n = read(fd, buf, sizeof buf)) > 0) {
		if (archive_write_data(a, buf, (size_t)n) != n)
			r = sbx_err_set(e, SBX_EX_IOERR, "export: %s", archive_error_string(a));
		sbx_progress_add(n);
		if (r == 0)
			r = sbx_interrupt_check(e);
	}
	archive_entry_free(ent);
	return r;
}

static int
export_file(struct archive *a, const char *name, const char *path, struct sbx_err *e)
{
	struct stat st;
	int fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 || fstat(fd, &st) == -1) {
		if (fd != -1)
			close(fd);
		return sbx_err_sys(e, SBX_EX_NOINPUT, "%s", path);
	}
	r = export_entry(a, name, fd, NULL, st.st_size, st.st_mtim.tv_sec, e);
	close(fd);
	return r;
}

/* The metadata as this store reads it (an earlier sbx's repeated layers left out). */
static int
export_meta(struct archive *a, const struct sbx_snapshot *sn, struct sbx_err *e)
{
	char *buf = NULL;
	size_t len = 0;
	double t = 0;
	FILE *f;
	int r;

	if ((f = open_memstream(&buf, &len)) == NULL)
		return sbx_err_oom(e);
	r = sbx_snapshot_emit(f, sn, SBX_FMT_YAML);
	if (fclose(f) != 0 || r == -1) {
		free(buf);
		return sbx_err_oom(e);
	}
	sbx_time_parse(sn->created_at, &t);
	r = export_entry(a, "snapshot.yaml", -1, buf, (long long)len, (long long)t, e);
	free(buf);
	return r;
}

int
sbx_snapshot_export(const struct sbx_store *s, const char *id, int fd, struct sbx_err *e)
{
	struct sbx_snapshot sn;
	const struct sbx_snap_layer *b;
	struct archive *a;
	char p[1200], name[SBX_DIGEST_HEX + 32];
	size_t i;
	int lock, r = -1;

	if (sbx_archive_load(e) == -1 || (lock = sbx_snapshot_lock(s, 0, e)) == -1)
		return -1;
	if (sbx_snapshot_load(s, id, &sn, e) == -1) {
		close(lock);
		return -1;
	}
	if ((a = archive_write_new()) == NULL || archive_write_set_format_pax_restricted(a) ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		sbx_err_set(e, SBX_EX_IOERR, "export: %s", a ? archive_error_string(a) : "no memory");
		goto out;
	}
	if (export_meta(a, &sn, e) == -1)
		goto out;
	{
		long long total = 0;

		for (i = 0; (b = sbx_snapshot_blob(&sn, i, NULL)) != NULL; i++)
			total += blob_first(&sn, i) ? b->size : 0;
		sbx_progress_phase("layers", total, "bytes");
	}
	for (i = 0; (b = sbx_snapshot_blob(&sn, i, NULL)) != NULL; i++) {
		if (!blob_first(&sn, i))
			continue;
		snprintf(name, sizeof name, "layers/%s.tar.zst", b->digest);
		if (blob_path(s, b->digest, p, sizeof p, e) == -1 ||
		    export_file(a, name, p, e) == -1)
			goto out;
	}
	if (archive_write_close(a) != ARCHIVE_OK) {
		sbx_err_set(e, SBX_EX_IOERR, "export: %s", archive_error_string(a));
		goto out;
	}
	r = 0;
out:
	if (a)
		archive_write_free(a);
	sbx_snapshot_free(&sn);
	close(lock);
	return r;
}

/* One layer of an import: copy it to a temporary file, then check it whole. */
static int
import_layer(const struct sbx_store *s, struct archive *a, const char *what,
    const struct sbx_snap_layer *want, struct sbx_err *e)
{
	const char *hex = want->digest;
	struct sbx_layer_info li = { .size = -1 };
	char tmp[1200], buf[1 << 16];
	la_ssize_t n;
	int fd, r = 0;

	if ((fd = open_tmp(s, "layers", hex, tmp, sizeof tmp, e)) == -1)
		return -1;
	while ((n = archive_read_data(a, buf, sizeof buf)) > 0) {
		if (sbx_write_all(fd, buf, (size_t)n) == -1) {
			r = sbx_err_sys(e, SBX_EX_IOERR, "%s", tmp);
			break;
		}
		sbx_progress_add(n);
		if ((r = sbx_interrupt_check(e)) == -1)
			break;
	}
	if (r == 0 && n < 0)
		r = sbx_err_set(e, SBX_EX_DATAERR, "%s %s: %s", what, hex,
		    archive_error_string(a));
	if (r == 0 && (lseek(fd, 0, SEEK_SET) == -1 ||
	    sbx_layer_unpack(fd, hex, NULL, 0, &li, e) == -1))
		r = sbx_err_prefix(e, "%s sha256:%s", what, hex);
	if (r == 0 && li.size != want->size)
		r = sbx_err_set(e, SBX_EX_DATAERR, "%s sha256:%s: %lld bytes, the snapshot "
		    "says %lld", what, hex, li.size, want->size);
	if (r == 0 && fsync(fd) == -1)
		r = sbx_err_sys(e, SBX_EX_IOERR, "%s", tmp);
	close(fd);
	if (r == 0)
		return blob_commit(s, tmp, hex, e);
	unlink(tmp);
	return -1;
}

/* The archive's entry layers/HEX.tar.zst (name: HEX.tar.zst): the blob of sn
 * with that digest, imported the first time (have: which blobs are). */
static int
import_entry(const struct sbx_store *s, struct archive *a, const struct sbx_snapshot *sn,
    const char *name, char *have, struct sbx_err *e)
{
	const struct sbx_snap_layer *b;
	const char *what;
	char hex[SBX_DIGEST_HEX + 1];
	size_t k;
	int found = 0;

	memcpy(hex, name, SBX_DIGEST_HEX);
	hex[SBX_DIGEST_HEX] = '\0';
	for (k = 0; (b = sbx_snapshot_blob(sn, k, &what)) != NULL; k++)
		if (strcmp(b->digest, hex) == 0) {
			if (!found && !have[k] && import_layer(s, a, what, b, e) == -1)
				return -1;
			found = have[k] = 1;
		}
	if (!found)
		return sbx_err_set(e, SBX_EX_DATAERR, "entry 'layers/%.200s': a layer the snapshot "
		    "does not name", name);
	return 0;
}

int
sbx_snapshot_same_layers(const struct sbx_snapshot *a, const struct sbx_snapshot *b)
{
	const struct sbx_snap_layer *x, *y;
	size_t i;

	if (a->n_layers != b->n_layers || a->has_memory != b->has_memory)
		return 0;
	for (i = 0; (x = sbx_snapshot_blob(a, i, NULL)) != NULL; i++)
		if ((y = sbx_snapshot_blob(b, i, NULL)) == NULL || strcmp(x->digest, y->digest) != 0)
			return 0;
	return 1;
}

int
sbx_snapshot_have(const struct sbx_store *s, const struct sbx_snapshot *sn, struct sbx_err *e)
{
	struct sbx_snapshot old;
	int same;

	if (!sbx_snapshot_exists(s, sn->snapshot_id))
		return 0;
	if (sbx_snapshot_load(s, sn->snapshot_id, &old, e) == -1)
		return -1;
	same = sbx_snapshot_same_layers(&old, sn);
	sbx_snapshot_free(&old);
	if (!same)
		return sbx_err_set(e, SBX_EX_DATAERR, "snapshot %s exists here with other layers "
		    "or another checkpoint", sn->snapshot_id);
	return 1;
}

int
sbx_snapshot_import(const struct sbx_store *s, int fd, char out[SBX_ID_MAX + 1],
    struct sbx_err *e)
{
	struct sbx_snapshot sn;
	const struct sbx_snap_layer *b;
	const char *what;
	struct archive *a;
	struct archive_entry *ent;
	char *meta = NULL, *have = NULL, p[1200];
	size_t len = 0, i;
	int lock, r = -1, ar, have_it;

	if (sbx_snapshot_limits(s, e) == -1)
		return -1;

	memset(&sn, 0, sizeof sn);
	sbx_manifest_init(&sn.manifest);
	if (sbx_archive_load(e) == -1 || (lock = sbx_snapshot_lock(s, 0, e)) == -1)
		return -1;
	if ((a = archive_read_new()) == NULL) {
		close(lock);
		return sbx_err_oom(e);
	}
	archive_read_support_format_tar(a);
	sbx_progress_phase("archive", -1, "bytes");
	if (archive_read_open_fd(a, fd, 1 << 16) != ARCHIVE_OK) {
		sbx_err_set(e, SBX_EX_DATAERR, "not a snapshot archive: %s", archive_error_string(a));
		goto out;
	}
	while ((ar = archive_read_next_header(a, &ent)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(ent);
		la_int64_t size = archive_entry_size(ent);

		if (name == NULL || archive_entry_filetype(ent) != AE_IFREG) {
			sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': not a regular file",
			    name ? name : "");
			goto out;
		}
		if (meta == NULL) {
			la_ssize_t n;

			if (strcmp(name, "snapshot.yaml") != 0 || size < 0 || size > SBX_DOC_MAX) {
				sbx_err_set(e, SBX_EX_DATAERR, "the first entry must be snapshot.yaml "
				    "(at most 1 MiB), not '%.200s'", name);
				goto out;
			}
			if ((meta = malloc((size_t)size + 1)) == NULL) {
				sbx_err_oom(e);
				goto out;
			}
			n = archive_read_data(a, meta, (size_t)size);
			if (n != size) {
				sbx_err_set(e, SBX_EX_DATAERR, "snapshot.yaml: truncated");
				goto out;
			}
			len = (size_t)size;
			meta[len] = '\0';
			if (sbx_snapshot_parse("snapshot.yaml", meta, len, &sn, e) == -1)
				goto out;
			if ((have = calloc(sn.n_layers + 1, 1)) == NULL) {
				sbx_err_oom(e);
				goto out;
			}
			continue;
		}
		if (strncmp(name, "layers/", 7) != 0 || strlen(name) != 7 + SBX_DIGEST_HEX + 8 ||
		    strcmp(name + 7 + SBX_DIGEST_HEX, ".tar.zst") != 0) {
			sbx_err_set(e, SBX_EX_DATAERR, "entry '%.200s': not a layer", name);
			goto out;
		}
		if (import_entry(s, a, &sn, name + 7, have, e) == -1)
			goto out;
	}
	if (ar != ARCHIVE_EOF) {
		sbx_err_set(e, SBX_EX_DATAERR, "damaged snapshot archive: %s", archive_error_string(a));
		goto out;
	}
	if (meta == NULL) {
		sbx_err_set(e, SBX_EX_DATAERR, "empty snapshot archive");
		goto out;
	}
	for (i = 0; (b = sbx_snapshot_blob(&sn, i, &what)) != NULL; i++) {
		if (!have[i] && (blob_path(s, b->digest, p, sizeof p, e) == -1 ||
		    access(p, F_OK) == -1)) {
			sbx_err_set(e, SBX_EX_DATAERR, "%s sha256:%s is neither in the archive nor "
			    "in the store", what, b->digest);
			goto out;
		}
	}
	/* Importing the same snapshot twice is a no-op; another one under its ID is not. */
	if ((have_it = sbx_snapshot_have(s, &sn, e)) == -1 ||
	    (have_it == 0 && sbx_snapshot_save(s, &sn, e) == -1))
		goto out;
	snprintf(out, SBX_ID_MAX + 1, "%s", sn.snapshot_id);
	sbx_audit(s, sn.source_sandbox, "snapshot-import", "ok", sn.snapshot_id, NULL);
	r = 0;
out:
	archive_read_free(a);
	free(meta);
	free(have);
	sbx_snapshot_free(&sn);
	close(lock);
	return r;
}

/* The layer cache */

/* cache/HEX, extracting the layer (what: or the checkpoint) first if it is not there. */
static int
cache_blob(const struct sbx_store *s, const char *what, const char *hex, char *dir, size_t size,
    struct sbx_err *e)
{
	struct sbx_layer_info li;
	char tmp[1200], blob[1200], name[SBX_DIGEST_HEX + 32];
	int fd, r;

	if (store_dir(s, "cache", hex, dir, size, e) == -1)
		return -1;
	if (access(dir, F_OK) == 0)
		return 0;
	snprintf(name, sizeof name, ".tmp-%.16s-%ld", hex, (long)getpid());
	if (store_dir(s, "cache", name, tmp, sizeof tmp, e) == -1 || blob_path(s, hex, blob,
	    sizeof blob, e) == -1)
		return -1;
	sbx_rm_rf(tmp, NULL);
	if (mkdir(tmp, 0755) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", tmp);
	if ((fd = open(blob, O_RDONLY | O_CLOEXEC)) == -1) {
		rmdir(tmp);
		return sbx_err_sys(e, 0, "%s sha256:%s (%s)", what, hex, blob);
	}
	r = sbx_layer_unpack(fd, hex, tmp, !s->rootless, &li, e);
	close(fd);
	if (r == -1) {
		sbx_err_prefix(e, "%s sha256:%s", what, hex);
		sbx_rm_rf(tmp, NULL);
		return -1;
	}
	/* The cache is rebuilt from the layer when lost, but never used half-written. */
	if ((fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		syncfs(fd);
		close(fd);
	}
	sbx_crash_point("cache-extracted");
	if (rename(tmp, dir) == -1) {
		int err = errno;

		sbx_rm_rf(tmp, NULL);
		/* Someone else extracted it meanwhile. */
		if ((err == EEXIST || err == ENOTEMPTY) && access(dir, F_OK) == 0)
			return 0;
		errno = err;
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", dir);
	}
	return 0;
}

int
sbx_snapshot_lowers(const struct sbx_store *s, const char *id, char ***dirs, size_t *n,
    char **base, struct sbx_err *e)
{
	struct sbx_snapshot sn;
	char d[1200];
	size_t i;

	if (sbx_snapshot_limits(s, e) == -1)
		return -1;

	*dirs = NULL;
	*n = 0;
	*base = NULL;
	if (sbx_snapshot_load(s, id, &sn, e) == -1)
		return sbx_err_prefix(e, "rootfs %s", id);
	if ((*dirs = calloc(sn.n_layers + 1, sizeof **dirs)) == NULL || (*base = strdup(sn.base_rootfs))
	    == NULL) {
		sbx_snapshot_free(&sn);
		free(*dirs);
		*dirs = NULL;
		return sbx_err_oom(e);
	}
	for (i = 0; i < sn.n_layers; i++) {
		if (cache_blob(s, "layer", sn.layers[i].digest, d, sizeof d, e) == -1 ||
		    ((*dirs)[i] = strdup(d)) == NULL) {
			if (e && !e->msg[0])
				sbx_err_oom(e);
			while (i-- > 0)
				free((*dirs)[i]);
			free(*dirs);
			free(*base);
			*dirs = NULL;
			*base = NULL;
			sbx_snapshot_free(&sn);
			return sbx_err_prefix(e, "rootfs %s", id);
		}
	}
	*n = sn.n_layers;
	sbx_snapshot_free(&sn);
	return 0;
}

/* Memory */

int
sbx_snapshot_memory_pack(const struct sbx_store *s, const char *dir, const char *tier,
    struct sbx_snapshot *sn, struct sbx_err *e)
{
	struct sbx_pack_opts o = { NULL, -1, NULL, 0 };
	struct sbx_layer_info li;
	char tmp[1200], tag[SBX_ID_MAX + 16], *t;
	int fd, r;

	if (!tier_valid(tier))
		return sbx_err_set(e, SBX_EX_SOFTWARE, "checkpoint of snapshot %s: tier '%.80s' is "
		    "not a tier's name", sn->snapshot_id, tier);
	snprintf(tag, sizeof tag, "%s-memory", sn->snapshot_id);
	if ((fd = open_tmp(s, "layers", tag, tmp, sizeof tmp, e)) == -1)
		return -1;
	/* The tier wrote its files as the store's owner (root, or a rootless
	 * caller): one ID, stored as 0, as a rootless sandbox's layer is. */
	r = sbx_layer_pack(dir, 0, 1, fd, &o, &li, e);
	if (r == 0 && fsync(fd) == -1)
		r = sbx_err_sys(e, SBX_EX_IOERR, "%s", tmp);
	close(fd);
	if (r == -1) {
		unlink(tmp);
		return sbx_err_prefix(e, "checkpoint of snapshot %s (%s)", sn->snapshot_id, dir);
	}
	if (blob_commit(s, tmp, li.digest, e) == -1)
		return -1;
	if ((t = strdup(tier)) == NULL)
		return sbx_err_oom(e);
	free(sn->memory_tier);
	sn->memory_tier = t;
	memcpy(sn->memory.digest, li.digest, sizeof li.digest);
	sn->memory.size = li.size;
	sn->memory.unpacked = li.unpacked;
	sn->has_memory = 1;
	return 0;
}

int
sbx_snapshot_memory_dir(const struct sbx_store *s, const struct sbx_snapshot *sn, char *dir,
    size_t size, struct sbx_err *e)
{
	if (!sn->has_memory)
		return sbx_err_set(e, SBX_EX_NOINPUT, "snapshot %s holds no memory checkpoint",
		    sn->snapshot_id);
	if (sbx_snapshot_limits(s, e) == -1 ||
	    cache_blob(s, "checkpoint", sn->memory.digest, dir, size, e) == -1)
		return sbx_err_prefix(e, "snapshot %s", sn->snapshot_id);
	return 0;
}

/* Retention */

void
sbx_snapshot_set_free(struct sbx_snap_set *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		sbx_snapshot_free(&a->v[i]);
	free(a->v);
	free(a->keep);
}

static int
all_load(const struct sbx_store *s, struct sbx_snap_set *a, struct sbx_err *e)
{
	char **ids;
	size_t n, i;

	memset(a, 0, sizeof *a);
	if (sbx_snapshot_list(s, &ids, &n, e) == -1)
		return -1;
	if (n && ((a->v = calloc(n, sizeof *a->v)) == NULL || (a->keep = calloc(n, 1)) == NULL)) {
		for (i = 0; i < n; i++)
			free(ids[i]);
		free(ids);
		free(a->v);
		a->v = NULL;
		return sbx_err_oom(e);
	}
	for (i = 0; i < n; i++) {
		if (sbx_snapshot_load(s, ids[i], &a->v[a->n], NULL) == 0)
			a->n++;
		free(ids[i]);
	}
	free(ids);
	return 0;
}

long
sbx_snapshot_set_find(const struct sbx_snap_set *a, const char *id)
{
	size_t i;

	for (i = 0; id && i < a->n; i++)
		if (strcmp(a->v[i].snapshot_id, id) == 0)
			return (long)i;
	return -1;
}

int
sbx_snapshot_set_names(const struct sbx_snap_set *a, const char *hex)
{
	const struct sbx_snap_layer *b;
	size_t i, k;

	for (i = 0; i < a->n; i++)
		if (a->keep[i])
			for (k = 0; (b = sbx_snapshot_blob(&a->v[i], k, NULL)) != NULL; k++)
				if (strcmp(b->digest, hex) == 0)
					return 1;
	return 0;
}

/* Remove what no kept snapshot names from layers/ and cache/, and temporary
 * files crashes left (only ever called under the exclusive store lock). */
static void
collect(const struct sbx_store *s, const struct sbx_snap_set *a, int dry_run,
    sbx_snap_report report, void *ctx)
{
	static const char *const subs[] = { "layers", "cache", "snapshots" };
	char d[1200], p[1600], hex[SBX_DIGEST_HEX + 1];
	struct dirent *de;
	size_t i;
	long k;
	DIR *dir;

	for (i = 0; i < SBX_ARRAY_LEN(subs); i++) {
		if (store_dir(s, subs[i], NULL, d, sizeof d, NULL) == -1 || (dir = opendir(d)) == NULL)
			continue;
		while ((de = readdir(dir)) != NULL) {
			const char *kind = i == 0 ? "layer" : "cache";
			size_t len = strlen(de->d_name);

			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
			    strcmp(de->d_name, ".lock") == 0)
				continue;
			if (strncmp(de->d_name, ".tmp-", 5) == 0 || strstr(de->d_name, ".tmp.")) {
				kind = "temp";
			} else if (i == 2) {
				/* An index whose snapshot is gone (or was never written). */
				char id[SBX_ID_MAX + 1];

				if (len < 7 || len - 6 > SBX_ID_MAX ||
				    strcmp(de->d_name + len - 6, ".index") != 0)
					continue;
				memcpy(id, de->d_name, len - 6);
				id[len - 6] = '\0';
				if (!sbx_id_valid(id) ||
				    ((k = sbx_snapshot_set_find(a, id)) >= 0 && a->keep[k]))
					continue;
				kind = "index";
			} else {
				if (len < SBX_DIGEST_HEX)
					continue;
				memcpy(hex, de->d_name, SBX_DIGEST_HEX);
				hex[SBX_DIGEST_HEX] = '\0';
				if (!is_hex64(hex) || sbx_snapshot_set_names(a, hex))
					continue;
			}
			snprintf(p, sizeof p, "%s/%s", d, de->d_name);
			report(ctx, kind, de->d_name);
			if (!dry_run)
				sbx_rm_rf(p, NULL);
		}
		closedir(dir);
	}
}

/*
 * Keep the snapshots the live sandboxes of store s were made from (users says
 * which; either NULL: none):
 * their next snapshot stacks on that one's chain. A kept snapshot needs no
 * other snapshot: its metadata lists every layer of its chain, and the
 * layers stay while any kept snapshot names them (collect).
 */
static int
keep_live(const struct sbx_store *s, sbx_snapshot_users_fn users, struct sbx_snap_set *a,
    struct sbx_err *e)
{
	struct sbx_snapshot_users u = { { NULL, 0 }, { NULL, 0 } };
	size_t i;
	long k;

	if (s == NULL || users == NULL)
		return 0;
	/* Not knowing who stands on what removes nothing. */
	if (users(s, &u, e) == -1)
		return sbx_err_prefix(e, "which snapshots live sandboxes stand on");
	for (i = 0; i < u.root.n; i++)
		if ((k = sbx_snapshot_set_find(a, u.root.v[i])) >= 0 && !a->keep[k])
			a->keep[k] = 2;
	sbx_snapshot_users_free(&u);
	return 0;
}

int
sbx_snapshot_set_choose(struct sbx_snap_set *a, const struct sbx_store *live,
    sbx_snapshot_users_fn users, long long keep_last, double max_age_s, double now,
    struct sbx_err *e)
{
	size_t i, k;
	double t;

	for (i = 0; i < a->n; i++) {
		if (keep_last == 0 && max_age_s <= 0)
			a->keep[i] = 1;
		if (max_age_s > 0 && sbx_time_parse(a->v[i].created_at, &t) == 0 &&
		    now - t < max_age_s)
			a->keep[i] = 1;
	}
	/* Newest first within each lineage (the set is oldest first). */
	for (i = a->n; keep_last > 0 && i-- > 0;) {
		long long newer = 0;

		for (k = i + 1; k < a->n; k++)
			newer += strcmp(a->v[k].lineage, a->v[i].lineage) == 0;
		if (newer < keep_last)
			a->keep[i] = 1;
	}
	return keep_live(live, users, a, e);
}

/* Remove the snapshots not kept, then what no kept one names. */
static int
sweep(const struct sbx_store *s, struct sbx_snap_set *a, int dry_run, sbx_snap_report report,
    void *ctx, struct sbx_err *e)
{
	char p[1200];
	size_t i;
	int r = 0;

	for (i = 0; i < a->n; i++) {
		if (a->keep[i])
			continue;
		report(ctx, "snapshot", a->v[i].snapshot_id);
		if (dry_run)
			continue;
		if (meta_path(s, a->v[i].snapshot_id, p, sizeof p, e) == -1 || unlink(p) == -1) {
			r = sbx_err_sys(e, SBX_EX_IOERR, "%s", p);
			break;
		}
		sbx_audit(s, a->v[i].source_sandbox, "snapshot-remove", "ok", a->v[i].snapshot_id,
		    NULL);
		sbx_crash_point("gc-snapshot");
	}
	if (r == 0)
		collect(s, a, dry_run, report, ctx);
	return r;
}

int
sbx_snapshot_retain(const struct sbx_store *s, sbx_snapshot_users_fn users,
    long long keep_last, double max_age_s, int dry_run, sbx_snap_report report, void *ctx,
    struct sbx_err *e)
{
	struct sbx_snap_set a;
	int lock, r;

	if ((lock = sbx_snapshot_lock(s, 1, e)) == -1)
		return -1;
	if (all_load(s, &a, e) == -1) {
		close(lock);
		return -1;
	}
	r = sbx_snapshot_set_choose(&a, s, users, keep_last, max_age_s, sbx_realtime(), e);
	if (r == 0)
		r = sweep(s, &a, dry_run, report, ctx, e);
	sbx_snapshot_set_free(&a);
	close(lock);
	return r;
}

static void
no_report(void *ctx, const char *kind, const char *name)
{
	(void)ctx;
	(void)kind;
	(void)name;
}

/* The snapshots a sandbox's snapshot policy makes (and snapshot.keep counts). */
static int
automatic(const struct sbx_snapshot *sn, const char *sid)
{
	return sn->source_sandbox && strcmp(sn->source_sandbox, sid) == 0 && sn->reason &&
	    (strcmp(sn->reason, "periodic") == 0 || strcmp(sn->reason, "before-destroy") == 0);
}

int
sbx_snapshot_prune(const struct sbx_store *s, sbx_snapshot_users_fn users, const char *sid,
    long long keep, struct sbx_err *e)
{
	struct sbx_snap_set a;
	size_t i;
	long long newer = 0;
	int lock, r;

	if ((lock = sbx_snapshot_lock(s, 1, e)) == -1)
		return -1;
	if (all_load(s, &a, e) == -1) {
		close(lock);
		return -1;
	}
	for (i = a.n; i-- > 0;)
		a.keep[i] = !automatic(&a.v[i], sid) || newer++ < keep;
	r = keep_live(s, users, &a, e);
	if (r == 0)
		r = sweep(s, &a, 0, no_report, NULL, e);
	sbx_snapshot_set_free(&a);
	close(lock);
	return r;
}
