/* SPDX-License-Identifier: MIT */
/* Picking the driver of an isolation tier, and what several drivers share. */
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "util.h"

const struct sbx_driver *const sbx_drivers[] = { &sbx_driver_namespace, &sbx_driver_oci,
	&sbx_driver_microvm, NULL };

const struct sbx_driver *
sbx_driver_for(const struct sbx_manifest *m, struct sbx_err *e)
{
	const char *level = m->isolation_level ? m->isolation_level : "namespace";

	if (strcmp(level, "namespace") == 0)
		return &sbx_driver_namespace;
	if (strcmp(level, "oci") == 0)
		return &sbx_driver_oci;
	if (strcmp(level, "microvm") == 0)
		return &sbx_driver_microvm;
	sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level %s: this build has no %s driver "
	    "yet; refusing to run with weaker isolation", level, level);
	return NULL;
}

int
sbx_driver_cannot(const struct sbx_driver *d, const char *what, struct sbx_err *e)
{
	return sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level %s cannot %s", d->name, what);
}

int
sbx_driver_halt_pid(const struct sbx_manifest *m, const char *what, struct sbx_err *e)
{
	if (sbx_rt_int(m, "pid") > 0 && sbx_proc_kill_wait((pid_t)sbx_rt_int(m, "pid"),
	    (unsigned long long)sbx_rt_int(m, "start_ticks"), 5000) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "%s %lld survived SIGKILL", what,
		    sbx_rt_int(m, "pid"));
	return 0;
}

int
sbx_exec_stdio(const struct sbx_exec *x, struct sbx_err *e)
{
	int i;

	if (x->stdio == NULL)
		return 0;
	/* The caller's descriptors are above 2 (pipes it made after its own stdio). */
	for (i = 0; i < 3; i++)
		if (x->stdio[i] != i && dup2(x->stdio[i], i) == -1)
			return sbx_err_sys(e, SBX_EX_RUNFAIL, "the command's stdio");
	return 0;
}
