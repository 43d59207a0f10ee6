/* SPDX-License-Identifier: MIT */
/* Capabilities: drop all but the manifest's list, for root and other users alike. */
#include <errno.h>
#include <grp.h>
#include <linux/securebits.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "caps.h"

static int
in_keep(cap_value_t c, char *const *keep, size_t n)
{
	cap_value_t k;
	size_t i;

	for (i = 0; i < n; i++)
		if (cap_from_name(keep[i], &k) == 0 && k == c)
			return 1;
	return 0;
}

int
sbx_caps_become(uid_t uid, gid_t gid, int setgroups_ok, char *const *keep, size_t n,
    struct sbx_err *e)
{
	cap_value_t c, last = CAP_LAST_CAP;
	cap_t caps;
	int v;

	/* The kernel may know more capabilities than our headers. */
	for (v = CAP_LAST_CAP + 1; prctl(PR_CAPBSET_READ, v, 0, 0, 0) >= 0; v++)
		last = v;
	for (c = 0; c <= last; c++)
		if (!in_keep(c, keep, n) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == -1 &&
		    errno != EINVAL)
			return sbx_err_sys(e, SBX_EX_OSERR, "drop capability %d from the bounding set",
			    (int)c);
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
	    SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED,
	    0, 0, 0) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "set securebits");
	if (setgroups_ok && setgroups(1, &gid) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "setgroups");
	if (setresgid(gid, gid, gid) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "setresgid %u", (unsigned)gid);
	/* NO_SETUID_FIXUP: changing uid keeps the permitted set; we trim it next. */
	if (setresuid(uid, uid, uid) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "setresuid %u", (unsigned)uid);
	if ((caps = cap_init()) == NULL)
		return sbx_err_sys(e, SBX_EX_OSERR, "cap_init");
	for (c = 0; c <= last; c++) {
		if (!in_keep(c, keep, n))
			continue;
		cap_set_flag(caps, CAP_PERMITTED, 1, &c, CAP_SET);
		cap_set_flag(caps, CAP_EFFECTIVE, 1, &c, CAP_SET);
		cap_set_flag(caps, CAP_INHERITABLE, 1, &c, CAP_SET);
	}
	if (cap_set_proc(caps) == -1) {
		cap_free(caps);
		return sbx_err_sys(e, SBX_EX_OSERR, "cap_set_proc");
	}
	cap_free(caps);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "clear ambient capabilities");
	for (c = 0; c <= last; c++)
		if (in_keep(c, keep, n) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) == -1)
			return sbx_err_sys(e, SBX_EX_OSERR, "raise ambient capability %d", (int)c);
	return 0;
}

int
sbx_caps_drop_all(struct sbx_err *e)
{
	cap_value_t c;
	cap_t none;

	for (c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == -1)
			return sbx_err_sys(e, SBX_EX_OSERR, "drop capability %d from the bounding set",
			    (int)c);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "clear ambient capabilities");
	if ((none = cap_init()) == NULL)
		return sbx_err_sys(e, SBX_EX_OSERR, "cap_init");
	if (cap_set_proc(none) == -1) {
		cap_free(none);
		return sbx_err_sys(e, SBX_EX_OSERR, "cap_set_proc");
	}
	cap_free(none);
	return 0;
}
