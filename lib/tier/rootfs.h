/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's root filesystem: an overlay of read-only lower layer(s) and
 * the sandbox's own writable layer, plus fresh /proc, a minimal /dev, the
 * manifest's bind mounts and tmpfs, then pivot_root. With `rootfs: host` the
 * lower layer is a small synthesized tree (/etc, mount points, the host's
 * top-level symlinks) and the host's system directories are bound read-only
 * into it; nothing else of the host is visible.
 */
#ifndef SBX_ROOTFS_H
#define SBX_ROOTFS_H

#include <sys/types.h>

#include "error.h"
#include "manifest.h"
#include "state.h"

/*
 * The read-only layers under a sandbox's writable layer. A sandbox made from
 * a snapshot stacks the snapshot's cached layers (dirs, bottom first) on the
 * snapshot's base root ("host" or a directory).
 */
struct sbx_lowers {
	char **dirs;
	size_t n;
	char *base;
	char *skel;     /* base "host": the shared skeleton (sbx_rootfs_skeleton) */
};

#define SBX_SKEL_KEY_LEN 32
/*
 * The read-only tree every `rootfs: host` sandbox of the state root has
 * below its own small lower layer (its /etc/hosts, hostname, resolv.conf):
 * $SBX_ROOT/skel/KEY, made on first use. KEY changes with the host files it
 * copies, so an updated host gets a fresh one; sandboxes keep theirs.
 */
int sbx_rootfs_skeleton(const struct sbx_store *s, char key[SBX_SKEL_KEY_LEN + 1], char *path,
    size_t size, struct sbx_err *e);
/* Remove skeletons other than the current one and those in keep (their keys),
 * each reported as kind "skeleton" (an sbx_gc_report). */
int sbx_rootfs_skeleton_gc(const struct sbx_store *s, const struct sbx_strv *keep, int dry_run,
    void (*report)(void *ctx, const char *kind, const char *name), void *ctx);
/* Rewrite the sandbox's /etc/hosts (its pinned host names) in place. */
int sbx_rootfs_update_hosts(const struct sbx_store *s, const struct sbx_manifest *m,
    struct sbx_err *e);
void sbx_lowers_free(struct sbx_lowers *lw);
/* Write the sandbox's own lower layer (its /etc/hosts, hostname and
 * resolv.conf) as the directory "lower" of the sandbox's, owned by uid:gid:
 * sbx_rootfs_prepare does for an allow-list's sandbox, a tier whose root
 * is mounted on the host's side does for every one. */
int sbx_rootfs_own_lower(const struct sbx_store *s, const struct sbx_manifest *m, uid_t uid,
    gid_t gid, struct sbx_err *e);
/* The host directories a `rootfs: host` root shows read-only, and the names
 * below /proc that every root masks; both NULL-terminated. */
const char *const *sbx_rootfs_host_dirs(void);
const char *const *sbx_rootfs_proc_masked(void);

/* Host side, at provision: make layer/{upper,work} and (rootfs host) lower/
 * in the sandbox directory; fill lw (extracting snapshot layers not cached
 * yet, and making the skeleton on first use). */
int sbx_rootfs_prepare(const struct sbx_store *s, const struct sbx_manifest *m, uid_t uid,
    gid_t gid, struct sbx_lowers *lw, struct sbx_err *e);
/*
 * What the sandbox's root is made of, opened (O_PATH) inside the new user
 * and mount namespaces while init still has the caller's host credentials:
 * no path of the state root is walked as the sandbox's unprivileged IDs, so
 * a state root of mode 0700 works, and a source below a directory only the
 * operator can search still mounts.
 */
struct sbx_rootfs_fds {
	int dir, upper, work;     /* the sandbox's directory, layer/upper, layer/work */
	int own_lower;            /* egress-allow-list: lower/ of the sandbox's directory */
	int base, skel;           /* rootfs DIR, or the skeleton (rootfs host) */
	int *layers;              /* snapshot layers, bottom first */
	size_t n_layers;
	int mapped;               /* layers and skel are the host's ID-mapped mounts */
	int *src;                 /* filesystem_mounts sources */
	unsigned char *attach;    /* src[i] is the host's ID-mapped tree: attach it as it is */
	size_t n_src;
};

/*
 * layerfds holds lw->n detached mounts of lw->dirs, then one of lw->skel
 * where there is one, ID-mapped into the sandbox's user namespace by the
 * host (sandboxes with a range of IDs), and passes to f whatever happens;
 * NULL opens lw->dirs and lw->skel as they are (a rootless sandbox, whose
 * one ID owns them). srcfds (m->n_mounts) holds the host's ID-mapped trees
 * of mounts with idmap, -1 for the others (opened here); it passes to f too.
 */
int sbx_rootfs_open(const struct sbx_store *s, const struct sbx_manifest *m,
    const struct sbx_lowers *lw, int *layerfds, const int *srcfds, struct sbx_rootfs_fds *f,
    struct sbx_err *e);
void sbx_rootfs_fds_close(struct sbx_rootfs_fds *f);
/* Every filesystem_mounts source is there: 0, or 66 naming the first not. */
int sbx_rootfs_check_mounts(const struct sbx_manifest *m, struct sbx_err *e);
/* filesystem_mounts entry i as a detached tree the host's root makes of its
 * source: ID-mapped to the sandbox's user with idmap, read-only unless rw,
 * nosuid, nodev; its descriptor, or -1. */
int sbx_rootfs_mount_tree(const struct sbx_store *s, const struct sbx_manifest *m, size_t i,
    int idmap, struct sbx_err *e);
/* Open path below the directory rootfd as an O_PATH, making what is missing
 * (directories, and the last an empty file unless is_dir) owned by uid:gid
 * unless uid is -1; never following a symbolic link. */
int sbx_rootfs_beneath(int rootfd, const char *path, int is_dir, uid_t uid, gid_t gid,
    struct sbx_err *e);
/* Then, as the namespace's root: build the root from f and pivot into it. */
int sbx_rootfs_enter(const struct sbx_manifest *m, const struct sbx_lowers *lw,
    const struct sbx_rootfs_fds *f, struct sbx_err *e);

/* The sandbox's /etc/hosts: localhost, its ID, and the allow-list's host
 * names at their pinned addresses (malloc'd; NULL: out of memory). */
char *sbx_rootfs_hosts_text(const struct sbx_manifest *m);
/* Its /etc/resolv.conf: the allow-list's resolver (IP:53), over TCP, or a
 * comment saying there is none. */
void sbx_rootfs_resolv_text(const struct sbx_manifest *m, char *resolv, size_t size);

#endif
