/* SPDX-License-Identifier: MIT */
/*
 * Files into and out of a live sandbox (sbx-cp). The sandbox's side is a
 * tar run inside it like any command (its user, namespaces, confinement,
 * trace): paths resolve in the sandbox's own root, so a symlink there points
 * there and is copied as a link; writes meet its read-only mounts and disk
 * quota. The host's side is libarchive: what the sandbox's tar sends is
 * untrusted and unpacked with the layer checks (layer.h).
 */
#ifndef SBX_COPY_H
#define SBX_COPY_H

#include "error.h"
#include "state.h"

/*
 * Copy host (a file, symlink or tree of the host; NULL: the tar stream on
 * fd) to dst in sandbox id (an absolute path). An existing directory dst
 * receives host under its own name; otherwise dst is the copy's name, in
 * a directory that exists. Owners become the sandbox's user.
 */
int sbx_copy_in(const struct sbx_store *s, const char *id, const char *host, int fd,
    const char *dst, struct sbx_err *e);
/*
 * Copy src of sandbox id (an absolute path) to host (NULL: a tar stream to
 * fd); the same rules for host as for dst above. The caller owns the copy.
 */
int sbx_copy_out(const struct sbx_store *s, const char *id, const char *src, const char *host,
    int fd, struct sbx_err *e);

#endif
