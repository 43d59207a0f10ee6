/* SPDX-License-Identifier: MIT */
/* Landlock: the sandbox's processes may write only below the paths given. */
#ifndef SBX_LANDLOCK_H
#define SBX_LANDLOCK_H

#include <stddef.h>

#include "error.h"

/* The kernel's Landlock ABI version, 0 when it has none. */
int sbx_landlock_abi(void);
/*
 * Restrict the caller: read and execute everywhere, write only below the
 * `writable` paths (and device use below /dev). Needs no_new_privs first.
 */
int sbx_landlock_restrict(const char *const *writable, size_t n, struct sbx_err *e);

#endif
