/* SPDX-License-Identifier: MIT */
/*
 * seccomp profiles built with libseccomp. Every profile is an allow-list:
 * a system call this libseccomp or this policy does not name gets ENOSYS, so a
 * call added to a future kernel is closed until someone opens it. Dangerous
 * calls (mount, ptrace, bpf, keyctl, module loading, new user namespaces...)
 * get EPERM so programs see a plain "not permitted".
 */
#ifndef SBX_SECCOMP_PROFILE_H
#define SBX_SECCOMP_PROFILE_H

#include <stddef.h>

#include "doc.h"
#include "error.h"
#include "manifest.h"
#include "state.h"

struct sbx_seccomp_prog {
	char *code;              /* struct sock_filter[], len / 8 of them; NULL: unconfined */
	size_t len;
};

/* Check a profile name or policy file without loading it (exit 65/66 on error). */
int sbx_seccomp_check(const char *profile, struct sbx_err *e);
/*
 * The BPF program of a built-in profile ("default", "strict", "unconfined"),
 * compiled once per state root and build and kept in $SBX_ROOT/seccomp/
 * (compiling costs about 1.7 ms a run; loading it, 0.1). The caller frees
 * p->code.
 */
int sbx_seccomp_program(const struct sbx_store *s, const char *profile,
    struct sbx_seccomp_prog *p, struct sbx_err *e);
/*
 * A policy file's program, from the file read once: a sandbox's is compiled
 * when it is made and kept with it, so that editing the file later changes
 * no live sandbox's filter.
 */
int sbx_seccomp_compile_file(const char *path, struct sbx_seccomp_prog *p, struct sbx_err *e);
/* A program kept in a file (read back whole; a damaged one is an error). */
int sbx_seccomp_read(const char *path, struct sbx_seccomp_prog *p, struct sbx_err *e);
/*
 * in with the guard before it (out, the caller frees out->code): TIOCSTI and
 * TIOCLINUX refused whatever the high bits of the command, and by flags:
 * TIOCSCTTY (a terminal of the caller's that is no session's could be
 * taken), AF_VSOCK sockets (not namespaced), set-user-ID and set-group-ID
 * modes and device nodes (files that leave through a writable mount).
 * Unconfined (in->code NULL) stays unconfined.
 */
enum { SBX_GUARD_NO_CTTY = 1, SBX_GUARD_NO_VSOCK = 2, SBX_GUARD_NO_SETID = 4 };
int sbx_seccomp_guard(const struct sbx_seccomp_prog *in, unsigned flags,
    struct sbx_seccomp_prog *out, struct sbx_err *e);
/* The guard's flags a sandbox needs whatever the run: AF_VSOCK refused
 * unless it has the host's network, set-ID modes refused where it has a
 * writable mount. */
unsigned sbx_seccomp_guard_flags(const struct sbx_manifest *m);
/* The guard alone (out, the caller frees out->code), allowing what it does
 * not refuse: under a filter of the runtime's that applies the profile. */
int sbx_seccomp_guard_only(unsigned flags, struct sbx_seccomp_prog *out, struct sbx_err *e);
/* Confine the caller (no_new_privs set) to waiting for children and signals,
 * writing to and closing what it has open, and exiting: any other system
 * call kills it. */
int sbx_seccomp_load_waiter(struct sbx_err *e);
/* Load a program from sbx_seccomp_program into the caller (no_new_privs set). */
int sbx_seccomp_load_program(const struct sbx_seccomp_prog *p, struct sbx_err *e);

/*
 * The profile as an OCI runtime's linux.seccomp (*out, the caller frees it;
 * NULL for unconfined): the same allow-list, ENOSYS and EPERM answers and
 * clone rules, for the native architecture. What the guard adds
 * (sbx_seccomp_guard: TIOCSTI on the 32 bits the kernel reads, vsock,
 * set-ID modes) is not in it: the OCI tier loads the guard itself.
 */
int sbx_seccomp_oci(const char *profile, struct sbx_node **out, struct sbx_err *e);

#endif
