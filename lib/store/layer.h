/* SPDX-License-Identifier: MIT */
/*
 * Layers: a directory tree (a sandbox's writable layer) as one tar + zstd
 * archive, addressed by the SHA-256 of its bytes, and back.
 *
 * Packing is deterministic (names sorted, no atime/ctime, numeric IDs only), so
 * the same tree gives the same digest and is stored once. Owners are stored as
 * the sandbox sees them (host ID minus the sandbox's base). Overlay whiteouts
 * (character device 0,0) and opaque directories (user.overlay.opaque) are kept,
 * as are user.* xattrs and holes in sparse files; setuid/setgid bits are
 * dropped (the sandbox's root is mounted nosuid: they never had an effect).
 *
 * A symlink's target is data of the sandbox and is stored as it is, wherever
 * it points. Paths may be longer than PATH_MAX (up to SBX_LAYER_PATH_MAX).
 *
 * Unpacking reads untrusted input: absolute paths, "..", entries below a
 * symlink or another non-directory, hard links to anything but an earlier
 * regular file of the same archive, device nodes other than whiteouts,
 * setuid/setgid bits, IDs past 65535, other xattrs, archives past the limits
 * below, truncated archives and digest mismatches are refused (65).
 * Extraction resolves every name beneath the target directory with openat2
 * (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so no entry is written outside it
 * even past those checks.
 */
#ifndef SBX_LAYER_H
#define SBX_LAYER_H

#include "error.h"

#define SBX_DIGEST_HEX 64
#define SBX_LAYER_PATH_MAX 65536   /* bytes of a path in a layer (Linux's PATH_MAX
                                    * bounds one system call's path, not a tree) */

struct sbx_layer_info {
	char digest[SBX_DIGEST_HEX + 1];   /* SHA-256 of the archive, lowercase hex */
	long long size;                    /* bytes of the archive */
	long long unpacked;                /* bytes of file data in it (apparent sizes) */
	long long written;                 /* unpack: what extraction writes (see budget) */
	long long entries;
};

/*
 * An index of a packed tree: each path's inode, change time, size and type,
 * so that the next pack of the same tree can hold only what changed since.
 * Entries changed too close to the pack (within the clock's coarse tick) are
 * marked racy and always packed again.
 */
struct sbx_index;
/* Load the index at path, written with o->index_tag equal to tag (else 65). */
int sbx_index_load(const char *path, const char *tag, struct sbx_index **ix,
    struct sbx_err *e);
void sbx_index_free(struct sbx_index *ix);

struct sbx_pack_opts {
	const struct sbx_index *base;  /* pack only changes since this index (a diff layer) */
	int index_fd;                  /* write the tree's index here (-1: none) */
	const char *index_tag;         /* what the index belongs to (one line) */
	double racy_after;             /* realtime: later changes are marked racy */
};

/*
 * Archive the tree at dir (not its root directory itself) to outfd. Owners
 * are stored minus id_base; an owner outside [id_base, id_base + id_count)
 * is an error. With o->base, the archive is a diff layer to stack on the
 * layer(s) the base index describes: every directory, the non-directories
 * that are new or changed, and a whiteout for each path that is gone.
 */
int sbx_layer_pack(const char *dir, long long id_base, long long id_count, int outfd,
    const struct sbx_pack_opts *o, struct sbx_layer_info *info, struct sbx_err *e);

/*
 * Read the archive at blobfd, refusing what the header comment lists. With
 * want (hex) the archive's digest must match. With dir (an existing empty
 * directory) the entries are extracted there, owners kept when keep_owners
 * (else the caller owns everything); without, the archive is only checked.
 * On failure dir may hold part of the archive: the caller removes it.
 */
int sbx_layer_unpack(int blobfd, const char *want, const char *dir, int keep_owners,
    struct sbx_layer_info *info, struct sbx_err *e);

/*
 * Plain tar, for copies into and out of a live sandbox (sbx-cp):
 * sbx_tar_unpack reads an uncompressed tar from fd (a pipe will do) into
 * dir with sbx_layer_unpack's checks and limits, the caller owning
 * everything; sbx_tar_pack_path writes the file, symlink (as a link) or
 * tree at path as entries under name ("name", "name/sub"...), modes and
 * modification times kept, setuid/setgid bits dropped, every owner
 * uid:gid, names sorted; a device, FIFO or socket is refused (65).
 */
int sbx_tar_unpack(int fd, const char *dir, struct sbx_layer_info *info, struct sbx_err *e);
int sbx_tar_pack_path(const char *path, const char *name, unsigned uid, unsigned gid, int outfd,
    struct sbx_err *e);
/* A writable layer as an uncompressed tar (a microVM guest's, packed
 * inside): sbx_layer_unpack's checks and limits, owners kept as stored. */
int sbx_layer_unpack_tar(int fd, const char *dir, struct sbx_layer_info *info,
    struct sbx_err *e);

/*
 * What a layer read by sbx_layer_unpack may expand to (decompression bombs):
 *   max_bytes  file data decompressed, holes of sparse files not counted
 *              ($SBX_LAYER_MAX_MB, default 64 GiB);
 *   ratio      what extraction writes to disk, runs of zeros (left holes)
 *              not counted, per byte of archive ($SBX_LAYER_MAX_RATIO,
 *              default 128; 0: max_bytes alone), but at least
 *   floor      ($SBX_LAYER_RATIO_FLOOR_MB, default 64 MiB) and at most max_bytes.
 * This is the one place these come from: the operator's policy is to set
 * them here. The ratio's default is above what zstd level 3 makes of real
 * trees (1 to 8 for documents, programs, sources, logs; 69 for generated
 * JSON) and far below a bomb's (20,000 and more).
 */
#define SBX_LAYER_MAX_MB_DEFAULT 65536LL
#define SBX_LAYER_RATIO_DEFAULT 128LL
#define SBX_LAYER_FLOOR_MB_DEFAULT 64LL
struct sbx_layer_limits {
	long long max_bytes, ratio, floor;
};
void sbx_layer_limits(struct sbx_layer_limits *l);
/* The operator's policy's max_bytes (MiB) and ratio (sbx-policy(5) limits:
 * layer_mb, layer_ratio; <= 0 and < 0: the defaults); the environment wins. */
void sbx_layer_set_policy(long long max_mb, long long ratio);
/* The most an archive of archive bytes may write to disk under l. */
long long sbx_layer_write_max(const struct sbx_layer_limits *l, long long archive);

#endif
