/* SPDX-License-Identifier: MIT */
/* Descriptors passed over a unix socket (SCM_RIGHTS), with a few bytes beside them. */
#ifndef SBX_FDPASS_H
#define SBX_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/* The most one message carries (the kernel's SCM_MAX_FD). */
#define SBX_FD_MAX 253

/*
 * Send len bytes of data (at least one: a stream socket carries no message
 * without) and n descriptors (0..SBX_FD_MAX) in one message; no SIGPIPE.
 * Returns 0 once all of data went, -1 with errno set.
 */
int sbx_fd_send(int sock, const int *fds, size_t n, const void *data, size_t len);
/*
 * Receive up to len bytes and exactly n descriptors (close-on-exec). Returns
 * the bytes read (0 at end of file), -1 with errno set (EPROTO: not n
 * descriptors came; any that did are closed).
 */
ssize_t sbx_fd_recv(int sock, int *fds, size_t n, void *data, size_t len);
/* As sbx_fd_recv, with up to max descriptors: *n says how many came. */
ssize_t sbx_fd_recv_upto(int sock, int *fds, size_t max, size_t *n, void *data, size_t len);

#endif
