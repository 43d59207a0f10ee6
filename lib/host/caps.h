/* SPDX-License-Identifier: MIT */
/* Capabilities: drop all but the manifest's list, for root and other users alike. */
#ifndef SBX_CAPS_H
#define SBX_CAPS_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/*
 * Become uid:gid keeping only the capabilities named in keep (libcap names,
 * "CAP_NET_BIND_SERVICE"). Afterwards the bounding set holds only those, root
 * gains nothing from execve (SECBIT_NOROOT, locked), and the kept ones are
 * ambient so they survive execve for any uid.
 */
int sbx_caps_become(uid_t uid, gid_t gid, int setgroups_ok, char *const *keep, size_t n,
    struct sbx_err *e);
/* Keep no capability at all: effective, permitted, inheritable, ambient, bounding. */
int sbx_caps_drop_all(struct sbx_err *e);

#endif
