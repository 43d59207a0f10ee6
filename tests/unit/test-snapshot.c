/* SPDX-License-Identifier: MIT */
/* Snapshot metadata with and without memory, and a checkpoint packed into a
 * store and extracted from it. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot.h"
#include "tap.h"
#include "util.h"

#define D1 "1111111111111111111111111111111111111111111111111111111111111111"
#define D2 "2222222222222222222222222222222222222222222222222222222222222222"

static const char head[] =
    "snapshot_id: snap-u\nlineage: sbx-u\nsource_sandbox: sbx-u\nbase_rootfs: host\n"
    "created_at: \"2026-01-01T00:00:00.000Z\"\n"
    "layers:\n  - {digest: \"sha256:" D1 "\", size: 10, unpacked: 3}\n";

/* The metadata head, then extra, then an empty manifest. */
static int
parse(const char *extra, struct sbx_snapshot *sn, struct sbx_err *e)
{
	char buf[4096];

	snprintf(buf, sizeof buf, "%s%smanifest: {}\n", head, extra);
	memset(e, 0, sizeof *e);
	return sbx_snapshot_parse("t.yaml", buf, strlen(buf), sn, e);
}

/* extra is refused with 65 and a message holding want. */
static int
refused(const char *extra, const char *want)
{
	struct sbx_snapshot sn;
	struct sbx_err e;

	if (parse(extra, &sn, &e) == 0) {
		sbx_snapshot_free(&sn);
		return 0;
	}
	if (e.code != SBX_EX_DATAERR || strstr(e.msg, want) == NULL) {
		fprintf(stderr, "# got %d %s\n", e.code, e.msg);
		return 0;
	}
	return 1;
}

static void
metadata(void)
{
	struct sbx_snapshot sn, sn2;
	struct sbx_err e;
	const char *what;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ok(parse("", &sn, &e) == 0 && !sn.has_memory && sn.memory_tier == NULL &&
	    sbx_snapshot_blob(&sn, 1, NULL) == NULL, "snapshot: metadata without memory keys is "
	    "memory: false (%s)", e.msg);
	sbx_snapshot_free(&sn);
	ok(parse("memory: false\n", &sn, &e) == 0 && !sn.has_memory, "snapshot: memory: false");
	sbx_snapshot_free(&sn);
	ok(parse("memory: true\ncheckpoint: {digest: \"sha256:" D2 "\", size: 20, unpacked: 7, "
	    "tier: oci/runsc}\n", &sn, &e) == 0, "snapshot: memory: true with a checkpoint (%s)",
	    e.msg);
	ok(sn.has_memory && strcmp(sn.memory.digest, D2) == 0 && sn.memory.size == 20 &&
	    sn.memory.unpacked == 7 && strcmp(sn.memory_tier, "oci/runsc") == 0 &&
	    sn.n_layers == 1, "snapshot: the checkpoint's fields, and not a layer");
	ok(sbx_snapshot_blob(&sn, 0, &what) == &sn.layers[0] && strcmp(what, "layer") == 0 &&
	    sbx_snapshot_blob(&sn, 1, &what) == &sn.memory && strcmp(what, "checkpoint") == 0 &&
	    sbx_snapshot_blob(&sn, 2, NULL) == NULL, "snapshot: its blobs are its layers, then "
	    "its checkpoint");
	f = open_memstream(&buf, &len);
	ok(sbx_snapshot_emit(f, &sn, SBX_FMT_YAML) == 0 && fclose(f) == 0, "snapshot: emitted");
	ok(sbx_snapshot_parse("again.yaml", buf, len, &sn2, &e) == 0 && sn2.has_memory &&
	    strcmp(sn2.memory.digest, D2) == 0 && strcmp(sn2.memory_tier, "oci/runsc") == 0 &&
	    sbx_snapshot_same_layers(&sn, &sn2), "snapshot: emitted metadata parses the same (%s)",
	    e.msg);
	sn2.memory.digest[0] = '3';
	ok(!sbx_snapshot_same_layers(&sn, &sn2), "snapshot: another checkpoint is another snapshot");
	sn2.has_memory = 0;
	ok(!sbx_snapshot_same_layers(&sn, &sn2), "snapshot: and so is none");
	free(buf);
	sbx_snapshot_free(&sn);
	sbx_snapshot_free(&sn2);

	ok(refused("memory: true\n", "memory: true needs a 'checkpoint' map"),
	    "snapshot: memory: true without a checkpoint is 65");
	ok(refused("memory: true\ncheckpoint: [1]\n", "needs a 'checkpoint' map"),
	    "snapshot: a checkpoint that is not a map is 65");
	ok(refused("checkpoint: {digest: \"sha256:" D2 "\", size: 1, unpacked: 1, tier: x}\n",
	    "'checkpoint' without memory: true"), "snapshot: a checkpoint without memory is 65");
	ok(refused("memory: false\ncheckpoint: {digest: \"sha256:" D2 "\", size: 1, unpacked: 1, "
	    "tier: x}\n", "t.yaml:9:13: 'checkpoint' without memory: true"),
	    "snapshot: a checkpoint with memory: false is 65 at its place");
	ok(refused("memory: yes\n", "'memory' must be true or false"), "snapshot: memory: yes is 65");
	ok(refused("memory: \"true\"\n", "'memory' must be true or false"),
	    "snapshot: memory: a quoted string is 65");
	ok(refused("memory: true\ncheckpoint: {digest: \"sha256:" D2 "\", size: 1, unpacked: 1, "
	    "tier: x, path: /etc}\n", "checkpoint: unknown key 'path'"),
	    "snapshot: an unknown key in the checkpoint is 65");
	ok(refused("memory: true\ncheckpoint: {digest: \"sha256:abc\", size: 1, unpacked: 1, "
	    "tier: x}\n", "a checkpoint needs a digest"), "snapshot: a short digest is 65");
	ok(refused("memory: true\ncheckpoint: {digest: \"sha256:" D2 "\", size: -1, unpacked: 1, "
	    "tier: x}\n", "'size' must be a count"), "snapshot: a negative size is 65");
	ok(refused("memory: true\ncheckpoint: {digest: \"sha256:" D2 "\", unpacked: 1, tier: x}\n",
	    "checkpoint 'size' is missing"), "snapshot: a checkpoint without size is 65");
	ok(refused("memory: true\ncheckpoint: {digest: \"sha256:" D2 "\", size: 1, unpacked: 1}\n",
	    "'tier' is missing"), "snapshot: a checkpoint without tier is 65");
	ok(refused("memory: true\ncheckpoint: {digest: \"sha256:" D2 "\", size: 1, unpacked: 1, "
	    "tier: \"../../x\"}\n", "tier must be a tier's name"), "snapshot: a tier with .. is 65");
	ok(refused("memory: true\ncheckpoint: {digest: \"sha256:" D2 "\", size: 1, unpacked: 1, "
	    "tier: \"/oci\"}\n", "tier must be a tier's name"), "snapshot: a tier that is a path "
	    "is 65");
	ok(refused("memory: true\ncheckpoint: {digest: \"sha256:" D1 "\", size: 11, unpacked: 3, "
	    "tier: x}\n", "is layer 1 with another size"), "snapshot: a checkpoint that is a layer "
	    "of another size is 65");
	ok(parse("memory: true\ncheckpoint: {digest: \"sha256:" D1 "\", size: 10, unpacked: 3, "
	    "tier: x}\n", &sn, &e) == 0, "snapshot: a checkpoint that is a layer's bytes is fine (%s)",
	    e.msg);
	sbx_snapshot_free(&sn);
}

/* A flipped byte in the middle of path. */
static void
flip(const char *path)
{
	struct stat st;
	unsigned char c;
	int fd = open(path, O_RDWR);

	if (fd == -1 || fstat(fd, &st) == -1 || pread(fd, &c, 1, st.st_size / 2) != 1)
		abort();
	c ^= 1;
	if (pwrite(fd, &c, 1, st.st_size / 2) != 1)
		abort();
	close(fd);
}

static void
store(void)
{
	struct sbx_store s;
	struct sbx_snapshot sn;
	struct sbx_err e = { 0 };
	char root[] = "/tmp/sbx-unit-snap.XXXXXX", ck[1100], p[1200], dir[1200], dir2[1200];
	char *got = NULL;
	size_t len = 0;
	int fd;

	if (mkdtemp(root) == NULL)
		abort();
	setenv("SBX_ROOT", root, 1);
	ok(sbx_store_open(&s, &e) == 0, "store: opened (%s)", e.msg);
	snprintf(ck, sizeof ck, "%s/ckpt", root);
	snprintf(p, sizeof p, "%s/checkpoint.img", ck);
	if (mkdir(ck, 0700) == -1 || (fd = open(p, O_WRONLY | O_CREAT, 0600)) == -1 ||
	    write(fd, "the sandbox's memory", 20) != 20 || close(fd) == -1)
		abort();
	memset(&sn, 0, sizeof sn);
	sbx_manifest_init(&sn.manifest);
	sn.snapshot_id = strdup("snap-unit");
	ok(sbx_snapshot_memory_pack(&s, ck, "oci/run sc", &sn, &e) == -1 && !sn.has_memory,
	    "store: a tier that is not a name is refused");
	ok(sbx_snapshot_memory_dir(&s, &sn, dir, sizeof dir, &e) == -1 &&
	    e.code == SBX_EX_NOINPUT, "store: a snapshot without memory has no checkpoint (66)");
	ok(sbx_snapshot_memory_pack(&s, ck, "oci/runsc", &sn, &e) == 0 && sn.has_memory &&
	    strcmp(sn.memory_tier, "oci/runsc") == 0 && sn.memory.unpacked == 20 &&
	    sn.memory.size > 0, "store: the checkpoint packed (%s)", e.msg);
	sbx_snapshot_layer_path(&s, sn.memory.digest, p, sizeof p, &e);
	ok(access(p, F_OK) == 0, "store: under its digest in layers/");
	ok(sbx_snapshot_memory_dir(&s, &sn, dir, sizeof dir, &e) == 0, "store: extracted (%s)",
	    e.msg);
	snprintf(p, sizeof p, "%s/checkpoint.img", dir);
	ok(strstr(dir, "/cache/") != NULL && sbx_read_file(p, 100, &got, &len, &e) == 0 &&
	    len == 20 && memcmp(got, "the sandbox's memory", 20) == 0, "store: the tier's file "
	    "is in cache/HEX/, as it wrote it");
	free(got);
	ok(sbx_snapshot_memory_dir(&s, &sn, dir2, sizeof dir2, &e) == 0 && strcmp(dir, dir2) == 0,
	    "store: extracted once");
	/* Damaged in the store, and not cached yet. */
	sbx_rm_rf(dir, NULL);
	sbx_snapshot_layer_path(&s, sn.memory.digest, p, sizeof p, &e);
	flip(p);
	memset(&e, 0, sizeof e);
	ok(sbx_snapshot_memory_dir(&s, &sn, dir, sizeof dir, &e) == -1 && e.code == SBX_EX_DATAERR &&
	    strstr(e.msg, "snapshot snap-unit") && strstr(e.msg, "checkpoint sha256:"),
	    "store: a damaged checkpoint is 65 naming the snapshot and the checkpoint (%s)", e.msg);
	ok(access(dir, F_OK) == -1, "store: and nothing of it is cached");
	sbx_snapshot_free(&sn);
	sbx_rm_rf(root, NULL);
}

int
main(void)
{
	metadata();
	store();
	return done_testing();
}
