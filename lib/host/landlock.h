/* SPDX-License-Identifier: MIT */
/* Landlock: the sandbox's processes may write only below the paths given. */
#ifndef SBX_LANDLOCK_H
#define SBX_LANDLOCK_H

#include <stddef.h>

#include "error.h"

/* The kernel's Landlock ABI version, 0 when it has none. */
int sbx_landlock_abi(void);
/*
 * TCP ports a sandbox may connect to and bind (Landlock ABI 4): a second
 * layer under the network namespace and the host's rules. Landlock knows
 * ports, not addresses: a port allowed is allowed on every address.
 */
struct sbx_landlock_net {
	const unsigned *connect;
	size_t n_connect;
	const unsigned *bind;
	size_t n_bind;
};

/*
 * Restrict the caller: with writable (n paths), read and execute everywhere,
 * write only below those paths (and device use below /dev); with net, TCP
 * connect and bind only to its ports. Either may be NULL. Needs no_new_privs.
 */
int sbx_landlock_restrict(const char *const *writable, size_t n,
    const struct sbx_landlock_net *net, struct sbx_err *e);

#endif
