/* SPDX-License-Identifier: MIT */
/* libarchive through dlopen: see archive_dl.h. */
#define SBX_ARCHIVE_DL_SELF
#include <dlfcn.h>
#include <stddef.h>

#include "archive_dl.h"

#define X(f) __typeof__(f) *sbx_dl_##f;
SBX_ARCHIVE_FUNCS(X)
#undef X

int
sbx_archive_load(struct sbx_err *e)
{
	static int loaded;
	void *h, *sym;

	if (loaded)
		return 0;
	if ((h = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL)) == NULL)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "snapshots need libarchive: %s", dlerror());
#define X(f) \
	if ((sym = dlsym(h, #f)) == NULL) \
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "libarchive lacks %s", #f); \
	*(void **)(void *)&sbx_dl_##f = sym;
	SBX_ARCHIVE_FUNCS(X)
#undef X
	loaded = 1;
	return 0;
}
