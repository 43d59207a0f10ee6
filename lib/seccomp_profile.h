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

#include "error.h"

/* Check a profile name or policy file without loading it (exit 65/66 on error). */
int sbx_seccomp_check(const char *profile, struct sbx_err *e);
/* Load profile ("default", "strict", "unconfined" or a policy file) into the caller. */
int sbx_seccomp_load(const char *profile, struct sbx_err *e);

#endif
