/* SPDX-License-Identifier: MIT */
/* libcurl through dlopen: see curl_dl.h. */
#define SBX_CURL_DL_SELF
#include <dlfcn.h>
#include <stddef.h>

#include "curl_dl.h"

#define X(f) __typeof__(f) *sbx_dl_##f;
SBX_CURL_FUNCS(X)
#undef X

int
sbx_curl_load(struct sbx_err *e)
{
	static int loaded;
	const curl_version_info_data *v;
	void *h, *sym;

	if (loaded)
		return 0;
	if ((h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL)) == NULL &&
	    (h = dlopen("libcurl-gnutls.so.4", RTLD_NOW | RTLD_LOCAL)) == NULL)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "S3 stores need libcurl: %s", dlerror());
#define X(f) \
	if ((sym = dlsym(h, #f)) == NULL) \
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "libcurl lacks %s", #f); \
	*(void **)(void *)&sbx_dl_##f = sym;
	SBX_CURL_FUNCS(X)
#undef X
	v = sbx_dl_curl_version_info(CURLVERSION_NOW);
	if (v == NULL || v->version_num < 0x074b00)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "S3 stores need libcurl 7.75 or later "
		    "(AWS Signature V4), this is %s", v ? v->version : "unknown");
	if (sbx_dl_curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "libcurl failed to initialise");
	loaded = 1;
	return 0;
}
