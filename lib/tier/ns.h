/* SPDX-License-Identifier: MIT */
/*
 * The namespace tier's driver (driver.h), in two files: ns.c makes, runs,
 * freezes and destroys sandboxes; ns_upkeep.c does what the lifecycle asks
 * between those (capture a layer, watch memory, re-pin names, sweep). Only
 * these two include this header.
 */
#ifndef SBX_NS_H
#define SBX_NS_H

#include "driver.h"

int sbx_ns_capture(const struct sbx_store *s, const struct sbx_manifest *m, int fd,
    const struct sbx_pack_opts *o, struct sbx_layer_info *li, struct sbx_err *e);
int sbx_ns_memory_open(const struct sbx_store *s, const struct sbx_manifest *m);
long long sbx_ns_memory_used(int handle);
int sbx_ns_memory_pressure(int handle, double *some, double *full);
/* The sandbox's cgroup now, and its writable layer's disk use. */
int sbx_ns_usage(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_usage *u,
    struct sbx_err *e);
int sbx_ns_repin(const struct sbx_store *s, struct sbx_manifest *m, int *changed,
    struct sbx_err *e);
void sbx_ns_sweep(const struct sbx_store *s, int busy, int dry_run, sbx_driver_report report,
    void *ctx);

#endif
