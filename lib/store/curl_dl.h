/* SPDX-License-Identifier: MIT */
/*
 * libcurl, loaded when a store is first reached rather than linked: libcurl
 * brings TLS, HTTP/2, LDAP, SSH and Kerberos libraries along, whose loading
 * every sbx program would otherwise pay at start-up. Include this instead of
 * <curl/curl.h>; the calls read as usual and go through pointers set by
 * sbx_curl_load().
 */
#ifndef SBX_CURL_DL_H
#define SBX_CURL_DL_H

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include "error.h"

#define SBX_CURL_FUNCS(X) \
	X(curl_easy_cleanup) \
	X(curl_easy_getinfo) \
	X(curl_easy_init) \
	X(curl_easy_perform) \
	X(curl_easy_reset) \
	X(curl_easy_setopt) \
	X(curl_easy_strerror) \
	X(curl_global_init) \
	X(curl_slist_append) \
	X(curl_slist_free_all) \
	X(curl_version_info)

#define X(f) extern __typeof__(f) *sbx_dl_##f;
SBX_CURL_FUNCS(X)
#undef X

/* Load libcurl (once) and check it signs requests (AWS SigV4, 7.75 on);
 * exit 69 naming what is missing. */
int sbx_curl_load(struct sbx_err *e);

#ifndef SBX_CURL_DL_SELF
/* curl.h defines these two as macros of themselves. */
#undef curl_easy_getinfo
#undef curl_easy_setopt
#define curl_easy_cleanup (*sbx_dl_curl_easy_cleanup)
#define curl_easy_getinfo (*sbx_dl_curl_easy_getinfo)
#define curl_easy_init (*sbx_dl_curl_easy_init)
#define curl_easy_perform (*sbx_dl_curl_easy_perform)
#define curl_easy_reset (*sbx_dl_curl_easy_reset)
#define curl_easy_setopt (*sbx_dl_curl_easy_setopt)
#define curl_easy_strerror (*sbx_dl_curl_easy_strerror)
#define curl_global_init (*sbx_dl_curl_global_init)
#define curl_slist_append (*sbx_dl_curl_slist_append)
#define curl_slist_free_all (*sbx_dl_curl_slist_free_all)
#define curl_version_info (*sbx_dl_curl_version_info)
#endif

#endif
