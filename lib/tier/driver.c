/* SPDX-License-Identifier: MIT */
/* Picking the driver of an isolation tier. */
#include <string.h>

#include "driver.h"

const struct sbx_driver *const sbx_drivers[] = { &sbx_driver_namespace, &sbx_driver_oci, NULL };

const struct sbx_driver *
sbx_driver_for(const struct sbx_manifest *m, struct sbx_err *e)
{
	const char *level = m->isolation_level ? m->isolation_level : "namespace";

	if (strcmp(level, "namespace") == 0)
		return &sbx_driver_namespace;
	if (strcmp(level, "oci") == 0)
		return &sbx_driver_oci;
	sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level %s: this build has no %s driver "
	    "yet; refusing to run with weaker isolation", level, level);
	return NULL;
}

int
sbx_driver_cannot(const struct sbx_driver *d, const char *what, struct sbx_err *e)
{
	return sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level %s cannot %s", d->name, what);
}
