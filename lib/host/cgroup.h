/* SPDX-License-Identifier: MIT */
/*
 * cgroups, v1 and v2 behind one interface. The layout is read from
 * /proc/self/mountinfo and /proc/self/cgroup; sbx's cgroups live below the
 * cgroup the calling process is in (or $SBX_CGROUP_PARENT), as
 * PARENT/sbx/<group>/<sandbox>/{init,run-N} (v1: init in <sandbox> itself),
 * so limits sit on the sandbox and counters on each run. The group is one per
 * state root, so that one root's garbage collection never touches another
 * root's sandboxes. A cgroup is named by a "spec" string stored in the state
 * document ("2:/path" or "1:cpu=/path,memory=/path,...").
 */
#ifndef SBX_CGROUP_H
#define SBX_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

enum sbx_cg_ctrl { SBX_CG_CPU, SBX_CG_CPUACCT, SBX_CG_MEMORY, SBX_CG_PIDS, SBX_CG_FREEZER,
	SBX_CG_BLKIO, SBX_CG_NCTRL };

struct sbx_cg_host {
	int version;                          /* 1 or 2 */
	char mnt[SBX_CG_NCTRL][512];          /* v1: each controller's mount; v2: mnt[0] */
	char own[SBX_CG_NCTRL][512];          /* our cgroup in each, relative to its mount */
};

struct sbx_cgroup {
	int version;
	char path[SBX_CG_NCTRL][1024];        /* absolute directories; v2 uses path[0] */
};

struct sbx_cg_limits {
	double cpu_cores;                     /* 0: none */
	long long memory_bytes, memory_soft_bytes, pids;  /* 0: none */
};

struct sbx_cg_stats {
	double cpu_s;
	long long peak_memory_bytes, oom_kills, io_write_bytes, pids_max_events;
};

/* Read the host's layout (or, for tests, the given texts with paths under prefix). */
int sbx_cgroup_host(struct sbx_cg_host *h, struct sbx_err *e);
int sbx_cgroup_host_parse(const char *mountinfo, const char *selfcg, const char *prefix,
    struct sbx_cg_host *h, struct sbx_err *e);
/* Create sbx/<group>/<name> below our cgroup (or $SBX_CGROUP_PARENT). */
int sbx_cgroup_create(const struct sbx_cg_host *h, const char *group, const char *name,
    struct sbx_cgroup *cg, struct sbx_err *e);
/* Remove a group that holds no sandbox any more (its @watchdog cgroup too, once
 * empty, waiting up to 100 ms for a watchdog just killed with wait); a busy
 * group stays. */
void sbx_cgroup_remove_group(const struct sbx_cg_host *h, const char *group, int wait);
/* Move the caller back to the cgroups it started in (h->own). */
int sbx_cgroup_return(const struct sbx_cg_host *h);
/* The directory holding a group's sandboxes, in the freezer (v1) or unified (v2) tree. */
int sbx_cgroup_group_dir(const struct sbx_cg_host *h, const char *group, char *buf, size_t size);
int sbx_cgroup_child(const struct sbx_cgroup *parent, const char *name, struct sbx_cgroup *cg,
    struct sbx_err *e);
/* Spec string <-> cgroup. */
int sbx_cgroup_spec(const struct sbx_cgroup *cg, const struct sbx_cg_host *h, char *buf,
    size_t size);
int sbx_cgroup_from_spec(const struct sbx_cg_host *h, const char *spec, struct sbx_cgroup *cg,
    struct sbx_err *e);
int sbx_cgroup_set_limits(const struct sbx_cgroup *cg, const struct sbx_cg_limits *l,
    struct sbx_err *e);
/* Throttle cg's I/O on block device dev: mbps MiB/s and iops operations/s,
 * reads and writes each (0: that one unbounded); io.max on v2, the blkio
 * controller's throttle files on v1. */
int sbx_cgroup_set_io(const struct sbx_cgroup *cg, dev_t dev, long long mbps, long long iops,
    struct sbx_err *e);
/* Move pid (0: the caller) into cg. */
int sbx_cgroup_enter(const struct sbx_cgroup *cg, pid_t pid, struct sbx_err *e);
/* Descriptors through which a single-threaded process moves itself into cg by
 * writing "0" (v1: the tasks files, which spare the kernel's global lock). */
int sbx_cgroup_open_join(const struct sbx_cgroup *cg, int fds[SBX_CG_NCTRL], struct sbx_err *e);
/*
 * A child process made in cg by clone3(CLONE_INTO_CGROUP) on v2, which spares
 * the migration that writing to cgroup.procs is (it waits out an RCU grace
 * period); flags are clone flags (namespaces; SIGCHLD is added). Returns as
 * fork(2) does, with *placed set where the child is in cg already; otherwise
 * (v1, a kernel or valgrind without clone3, SBX_CLONE_INTO_CGROUP=0) the child
 * is made as by clone(2) and joins through sbx_cgroup_open_join's descriptors.
 * Only for a single-threaded caller: no fork handlers run in the child.
 */
pid_t sbx_cgroup_clone(const struct sbx_cgroup *cg, unsigned long flags, int *placed);
int sbx_cgroup_freeze(const struct sbx_cgroup *cg, int frozen, struct sbx_err *e);
/* Kill every process in cg and its children; returns once none is left. */
int sbx_cgroup_kill(const struct sbx_cgroup *cg, struct sbx_err *e);
int sbx_cgroup_stats(const struct sbx_cgroup *cg, struct sbx_cg_stats *st, struct sbx_err *e);
/* What cg holds now: memory in use (bytes), CPU time used (s), and tasks
 * (processes and threads); -1 each where its controller is missing. */
struct sbx_cg_now {
	long long memory_bytes, pids;
	double cpu_s;
};
void sbx_cgroup_now(const struct sbx_cgroup *cg, struct sbx_cg_now *n);
/* The OOM kills counted in cg (one file, where stats reads five). */
long long sbx_cgroup_oom_kills(const struct sbx_cgroup *cg);
/* An fd to read the memory in use (memory.usage_in_bytes / memory.current) with
 * sbx_cgroup_memory_now, cheaply and repeatedly; -1 without a memory controller. */
int sbx_cgroup_memory_fd(const struct sbx_cgroup *cg);
long long sbx_cgroup_memory_now(int fd);
/* Through that fd, memory.pressure beside it (v2 with PSI): the avg10
 * percentages of "some" and "full"; -1 where there is none. */
int sbx_cgroup_memory_pressure(int fd, double *some, double *full);
/* Kill, then remove cg and its children. Missing cgroups are fine. */
int sbx_cgroup_destroy(const struct sbx_cgroup *cg, struct sbx_err *e);

#endif
