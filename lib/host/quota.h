/* SPDX-License-Identifier: MIT */
/*
 * Disk quotas on a sandbox's writable layer (disk_mb): the layer directory is
 * the mount point of an ext4 filesystem with that much free, kept in a sparse image
 * file on a loop device that detaches itself when the last mount goes. Writes
 * past it fail with ENOSPC inside the sandbox; deleting frees space again.
 * Needs root (loop devices, mounting ext4).
 */
#ifndef SBX_QUOTA_H
#define SBX_QUOTA_H

#include <sys/types.h>

#include "error.h"

/* Make image (sparse; ext4 owned by uid:gid with at least mb MiB free, its
 * metadata on top) and mount it on dir. */
int sbx_quota_create(const char *image, const char *dir, long long mb, uid_t uid, gid_t gid,
    struct sbx_err *e);
/* Unmount dir if something is mounted there (lazily: the sandbox's own copy of
 * the mount may still be going away). */
int sbx_quota_remove(const char *dir, struct sbx_err *e);
/* MiB used on the filesystem at dir; -1 if dir is not a mount of its own. */
double sbx_quota_used_mb(const char *dir);

#endif
