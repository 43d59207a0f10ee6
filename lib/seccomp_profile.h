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

#include "error.h"
#include "state.h"

struct sbx_seccomp_prog {
	char *code;              /* struct sock_filter[], len / 8 of them; NULL: unconfined */
	size_t len;
};

/* Check a profile name or policy file without loading it (exit 65/66 on error). */
int sbx_seccomp_check(const char *profile, struct sbx_err *e);
/*
 * The BPF program of profile ("default", "strict", "unconfined" or a policy
 * file), compiled once per state root and build and kept in $SBX_ROOT/seccomp/
 * (compiling costs about 1.7 ms a run; loading it, 0.1). A policy file is
 * keyed by its content. The caller frees p->code.
 */
int sbx_seccomp_program(const struct sbx_store *s, const char *profile,
    struct sbx_seccomp_prog *p, struct sbx_err *e);
/* Load a program from sbx_seccomp_program into the caller (no_new_privs set). */
int sbx_seccomp_load_program(const struct sbx_seccomp_prog *p, struct sbx_err *e);

#endif
