/* SPDX-License-Identifier: MIT */
/* cgroups v1 and v2 behind one interface. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/sched.h>
#include <unistd.h>

#include "cgroup.h"
#include "util.h"

static const char *const ctrl_names[SBX_CG_NCTRL] = { "cpu", "cpuacct", "memory", "pids",
	"freezer", "blkio" };

static void
nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int
sbx_cgroup_host_parse(const char *mountinfo, const char *selfcg, const char *prefix,
    struct sbx_cg_host *h, struct sbx_err *e)
{
	char *mi = strdup(mountinfo), *sc = strdup(selfcg), *line, *save = NULL;
	char v2mnt[512] = "", v2own[512] = "";
	int i, have_v1_memory = 0, r = -1;

	memset(h, 0, sizeof *h);
	if (mi == NULL || sc == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	/* mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS */
	for (line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char root[512], mp[512], fstype[64], super[512];
		const char *dash = strstr(line, " - ");

		if (dash == NULL || sscanf(line, "%*s %*s %*s %511s %511s", root, mp) != 2 ||
		    sscanf(dash + 3, "%63s %*s %511s", fstype, super) != 2)
			continue;
		if (strcmp(fstype, "cgroup2") == 0) {
			snprintf(v2mnt, sizeof v2mnt, "%s%s", prefix, mp);
		} else if (strcmp(fstype, "cgroup") == 0) {
			char *opt, *s2 = NULL;

			for (opt = strtok_r(super, ",", &s2); opt; opt = strtok_r(NULL, ",", &s2))
				for (i = 0; i < SBX_CG_NCTRL; i++)
					if (strcmp(opt, ctrl_names[i]) == 0 && h->mnt[i][0] == '\0') {
						snprintf(h->mnt[i], sizeof h->mnt[i], "%s%s", prefix, mp);
						if (i == SBX_CG_MEMORY)
							have_v1_memory = 1;
					}
		}
	}
	/* /proc/self/cgroup: "N:ctrl,ctrl:/path" for v1, "0::/path" for v2. */
	save = NULL;
	for (line = strtok_r(sc, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *opt, *s2 = NULL;

		if (c2 == NULL)
			continue;
		*c2 = '\0';
		if (c1[1] == '\0') {
			snprintf(v2own, sizeof v2own, "%s", c2 + 1);
			continue;
		}
		for (opt = strtok_r(c1 + 1, ",", &s2); opt; opt = strtok_r(NULL, ",", &s2))
			for (i = 0; i < SBX_CG_NCTRL; i++)
				if (strcmp(opt, ctrl_names[i]) == 0)
					snprintf(h->own[i], sizeof h->own[i], "%s", c2 + 1);
	}
	if (have_v1_memory) {
		h->version = 1;
		for (i = 0; i < SBX_CG_NCTRL; i++)
			if (strcmp(h->own[i], "/") == 0)
				h->own[i][0] = '\0';
	} else if (v2mnt[0]) {
		char *slash;

		h->version = 2;
		memset(h->mnt, 0, sizeof h->mnt);
		memset(h->own, 0, sizeof h->own);
		snprintf(h->mnt[0], sizeof h->mnt[0], "%s", v2mnt);
		/* v2 enables controllers only below cgroups without processes, and our
		 * own cgroup holds us: root makes its cgroups at the top, as container
		 * runtimes do; another user in the parent of its cgroup, the subtree
		 * systemd delegates (user@UID.service). $SBX_CGROUP_PARENT overrides. */
		if (geteuid() == 0 || (slash = strrchr(v2own, '/')) == NULL)
			v2own[0] = '\0';
		else
			*slash = '\0';
		snprintf(h->own[0], sizeof h->own[0], "%s", v2own);
	} else {
		sbx_err_set(e, SBX_EX_UNAVAILABLE, "no cgroup v1 memory controller or cgroup v2 "
		    "hierarchy is mounted");
		goto out;
	}
	r = 0;
out:
	free(mi);
	free(sc);
	return r;
}

int
sbx_cgroup_host(struct sbx_cg_host *h, struct sbx_err *e)
{
	char *mi = NULL, *sc = NULL;
	const char *parent = getenv("SBX_CGROUP_PARENT");
	int r = -1, i;

	if (sbx_read_file("/proc/self/mountinfo", 1 << 22, &mi, NULL, e) == -1 ||
	    sbx_read_file("/proc/self/cgroup", 1 << 16, &sc, NULL, e) == -1)
		goto out;
	r = sbx_cgroup_host_parse(mi, sc, "", h, e);
	/* An operator may place every sandbox below a delegated cgroup of their choice. */
	if (r == 0 && parent != NULL && *parent) {
		if (parent[0] != '/' || strstr(parent, "..") != NULL) {
			r = sbx_err_set(e, SBX_EX_USAGE, "SBX_CGROUP_PARENT: '%s' is not an absolute "
			    "cgroup path", parent);
			goto out;
		}
		for (i = 0; i < SBX_CG_NCTRL; i++)
			snprintf(h->own[i], sizeof h->own[i], "%s", strcmp(parent, "/") ? parent : "");
	}
out:
	free(mi);
	free(sc);
	return r;
}

static int
nctrl(int version)
{
	return version == 2 ? 1 : SBX_CG_NCTRL;
}

/* w is one of the space-separated words of list ("cpu" is not in "cpuset"). */
static int
word_in(const char *list, const char *w)
{
	size_t n = strlen(w);
	const char *s;

	for (s = list; (s = strstr(s, w)) != NULL; s += n)
		if ((s == list || s[-1] == ' ') && (s[n] == '\0' || s[n] == ' ' || s[n] == '\n'))
			return 1;
	return 0;
}

static int
enable_v2(const char *dir, struct sbx_err *e)
{
	char p[1100], have[512], on[512];
	static const char *const want[] = { "cpu", "memory", "pids", "io" };
	size_t i;

	snprintf(p, sizeof p, "%s/cgroup.controllers", dir);
	if (sbx_read_str(p, have, sizeof have) == -1)
		return sbx_err_sys(e, SBX_EX_UNAVAILABLE, "%s", p);
	snprintf(p, sizeof p, "%s/cgroup.subtree_control", dir);
	if (sbx_read_str(p, on, sizeof on) == -1)
		on[0] = '\0';
	for (i = 0; i < SBX_ARRAY_LEN(want); i++) {
		char tok[16];

		/* Enabled already (systemd does it for a delegated unit's children):
		 * nothing to write, and no need to own the file. */
		if (!word_in(have, want[i]) || word_in(on, want[i]))
			continue;
		snprintf(tok, sizeof tok, "+%s", want[i]);
		if (sbx_write_str(p, tok) == -1 && errno != ENOENT) {
			if (errno == EBUSY)
				return sbx_err_set(e, SBX_EX_UNAVAILABLE, "cgroup v2: cannot enable the "
				    "%s controller below %s: it holds processes; set "
				    "SBX_CGROUP_PARENT to a delegated cgroup", want[i], dir);
			if (errno == EACCES || errno == EPERM || errno == EROFS)
				return sbx_err_set(e, SBX_EX_UNAVAILABLE, "cgroup v2: %s is not "
				    "delegated to uid %ld (cannot enable %s below it): systemd "
				    "delegates user@UID.service to its user, or run the command in "
				    "'systemd-run --user -p Delegate=yes --scope', or set "
				    "SBX_CGROUP_PARENT to a delegated cgroup", dir, (long)geteuid(),
				    want[i]);
			return sbx_err_sys(e, SBX_EX_UNAVAILABLE, "cgroup v2: enable %s in %s",
			    want[i], p);
		}
	}
	return 0;
}

static int
mkcg(const char *dir, struct sbx_err *e)
{
	if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
		if (errno == EACCES || errno == EPERM || errno == EROFS)
			return sbx_err_sys(e, SBX_EX_UNAVAILABLE, "cannot create cgroup %s (no "
			    "delegated cgroup for uid %ld)", dir, (long)geteuid());
		return sbx_err_sys(e, SBX_EX_OSERR, "mkdir %s", dir);
	}
	return 0;
}

int
sbx_cgroup_create(const struct sbx_cg_host *h, const char *group, const char *name,
    struct sbx_cgroup *cg, struct sbx_err *e)
{
	char own[1024], base[1024], grp[1100];
	int i, tries;

	memset(cg, 0, sizeof *cg);
	cg->version = h->version;
	for (i = 0; i < nctrl(h->version); i++) {
		if (h->mnt[i][0] == '\0')
			continue;
		if (sbx_path(own, sizeof own, e, "%s%s", h->mnt[i], h->own[i]) == -1 ||
		    sbx_path(base, sizeof base, e, "%s/sbx", own) == -1 ||
		    sbx_path(grp, sizeof grp, e, "%s/%s", base, group) == -1)
			return -1;
		/* v2 hands controllers down one level at a time. */
		if (h->version == 2 && enable_v2(own, e) == -1)
			return -1;
		if (sbx_path(cg->path[i], sizeof cg->path[i], e, "%s/%s", grp, name) == -1)
			return -1;
		/* Another tool removes the group with its last sandbox: when that
		 * happens between our mkdirs, make the group again. */
		for (tries = 0;; tries++) {
			if (mkcg(base, e) == 0 && (h->version != 2 || enable_v2(base, e) == 0) &&
			    mkcg(grp, e) == 0 && (h->version != 2 || enable_v2(grp, e) == 0) &&
			    mkcg(cg->path[i], e) == 0 &&
			    (h->version != 2 || enable_v2(cg->path[i], e) == 0))
				break;
			if (errno != ENOENT || tries == 10)
				return -1;
		}
	}
	return 0;
}

void
sbx_cgroup_remove_group(const struct sbx_cg_host *h, const char *group, int wait)
{
	char dir[1200];
	int i, tries;

	for (i = 0; i < nctrl(h->version); i++) {
		if (h->mnt[i][0] == '\0')
			continue;
		snprintf(dir, sizeof dir, "%s%s/sbx/%s/@watchdog", h->mnt[i], h->own[i], group);
		/* A watchdog just killed may take a moment to leave. */
		for (tries = 0; tries < (wait ? 100 : 1) && rmdir(dir) == -1 && errno == EBUSY;
		    tries++)
			if (wait)
				nap(1);
		snprintf(dir, sizeof dir, "%s%s/sbx/%s", h->mnt[i], h->own[i], group);
		rmdir(dir);
	}
}

int
sbx_cgroup_return(const struct sbx_cg_host *h)
{
	struct sbx_cgroup cg;
	int i;

	memset(&cg, 0, sizeof cg);
	cg.version = h->version;
	for (i = 0; i < nctrl(h->version); i++)
		if (h->mnt[i][0])
			snprintf(cg.path[i], sizeof cg.path[i], "%s%s", h->mnt[i], h->own[i]);
	return sbx_cgroup_enter(&cg, 0, NULL);
}

int
sbx_cgroup_group_dir(const struct sbx_cg_host *h, const char *group, char *buf, size_t size)
{
	int c = h->version == 2 ? 0 : SBX_CG_FREEZER;

	return snprintf(buf, size, "%s%s/sbx/%s", h->mnt[c], h->own[c], group) >= (int)size ?
	    -1 : 0;
}

int
sbx_cgroup_child(const struct sbx_cgroup *parent, const char *name, struct sbx_cgroup *cg,
    struct sbx_err *e)
{
	int i;

	memset(cg, 0, sizeof *cg);
	cg->version = parent->version;
	for (i = 0; i < nctrl(parent->version); i++) {
		if (parent->path[i][0] == '\0')
			continue;
		if (sbx_path(cg->path[i], sizeof cg->path[i], e, "%s/%s", parent->path[i], name) == -1 ||
		    mkcg(cg->path[i], e) == -1)
			return -1;
	}
	return 0;
}

int
sbx_cgroup_spec(const struct sbx_cgroup *cg, const struct sbx_cg_host *h, char *buf, size_t size)
{
	size_t n;
	int i;

	if (cg->version == 2)
		return snprintf(buf, size, "2:%s", cg->path[0] + strlen(h->mnt[0])) >= (int)size ? -1 : 0;
	n = (size_t)snprintf(buf, size, "1:");
	for (i = 0; i < SBX_CG_NCTRL && n < size; i++)
		if (cg->path[i][0])
			n += (size_t)snprintf(buf + n, size - n, "%s%s=%s", n > 2 ? "," : "",
			    ctrl_names[i], cg->path[i] + strlen(h->mnt[i]));
	return n >= size ? -1 : 0;
}

int
sbx_cgroup_from_spec(const struct sbx_cg_host *h, const char *spec, struct sbx_cgroup *cg,
    struct sbx_err *e)
{
	char buf[4096], *tok, *save = NULL, *eq;
	int i;

	memset(cg, 0, sizeof *cg);
	if (strncmp(spec, "2:/", 3) == 0 && h->version == 2) {
		cg->version = 2;
		return sbx_path(cg->path[0], sizeof cg->path[0], e, "%s%s", h->mnt[0], spec + 2);
	}
	if (strncmp(spec, "1:", 2) != 0 || h->version != 1)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "cgroup '%s' does not fit this host's cgroup "
		    "v%d layout", spec, h->version);
	cg->version = 1;
	snprintf(buf, sizeof buf, "%s", spec + 2);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if ((eq = strchr(tok, '=')) == NULL || eq[1] != '/' || strstr(eq, "..") != NULL)
			return sbx_err_set(e, SBX_EX_SOFTWARE, "bad cgroup spec '%s'", spec);
		*eq = '\0';
		for (i = 0; i < SBX_CG_NCTRL; i++)
			if (strcmp(tok, ctrl_names[i]) == 0 && h->mnt[i][0])
				if (sbx_path(cg->path[i], sizeof cg->path[i], e, "%s%s", h->mnt[i],
				    eq + 1) == -1)
					return -1;
	}
	return 0;
}

static int
setf(const char *dir, const char *file, const char *val, struct sbx_err *e)
{
	char p[1200];

	snprintf(p, sizeof p, "%s/%s", dir, file);
	if (sbx_write_str(p, val) == -1)
		return sbx_err_sys(e, errno == ENOENT ? SBX_EX_UNAVAILABLE : SBX_EX_OSERR,
		    "cannot set %s to %s", p, val);
	return 0;
}

int
sbx_cgroup_set_limits(const struct sbx_cgroup *cg, const struct sbx_cg_limits *l,
    struct sbx_err *e)
{
	char v[64], p[1200];

	if (cg->version == 2) {
		const char *d = cg->path[0];

		if (l->cpu_cores > 0) {
			snprintf(v, sizeof v, "%lld 100000", (long long)(l->cpu_cores * 100000));
			if (setf(d, "cpu.max", v, e) == -1)
				return -1;
		}
		if (l->memory_bytes > 0) {
			snprintf(v, sizeof v, "%lld", l->memory_bytes);
			if (setf(d, "memory.max", v, e) == -1)
				return -1;
			snprintf(p, sizeof p, "%s/memory.swap.max", d);
			if (access(p, F_OK) == 0 && setf(d, "memory.swap.max", "0", e) == -1)
				return -1;
		}
		if (l->memory_soft_bytes > 0) {
			snprintf(v, sizeof v, "%lld", l->memory_soft_bytes);
			if (setf(d, "memory.high", v, e) == -1)
				return -1;
		}
		if (l->pids > 0) {
			snprintf(v, sizeof v, "%lld", l->pids);
			if (setf(d, "pids.max", v, e) == -1)
				return -1;
		}
		return 0;
	}
	if (l->cpu_cores > 0) {
		if (cg->path[SBX_CG_CPU][0] == '\0')
			return sbx_err_set(e, SBX_EX_UNAVAILABLE, "cgroup v1 cpu controller missing");
		snprintf(v, sizeof v, "%lld", (long long)(l->cpu_cores * 100000));
		if (setf(cg->path[SBX_CG_CPU], "cpu.cfs_period_us", "100000", e) == -1 ||
		    setf(cg->path[SBX_CG_CPU], "cpu.cfs_quota_us", v, e) == -1)
			return -1;
	}
	if (l->memory_bytes > 0) {
		const char *d = cg->path[SBX_CG_MEMORY];

		snprintf(v, sizeof v, "%lld", l->memory_bytes);
		if (setf(d, "memory.limit_in_bytes", v, e) == -1)
			return -1;
		/* With swap accounting, swap counts too: the limit is the limit. */
		snprintf(p, sizeof p, "%s/memory.memsw.limit_in_bytes", d);
		if (access(p, F_OK) == 0 && setf(d, "memory.memsw.limit_in_bytes", v, e) == -1)
			return -1;
	}
	if (l->memory_soft_bytes > 0) {
		snprintf(v, sizeof v, "%lld", l->memory_soft_bytes);
		if (setf(cg->path[SBX_CG_MEMORY], "memory.soft_limit_in_bytes", v, e) == -1)
			return -1;
	}
	if (l->pids > 0) {
		if (cg->path[SBX_CG_PIDS][0] == '\0')
			return sbx_err_set(e, SBX_EX_UNAVAILABLE, "cgroup v1 pids controller missing");
		snprintf(v, sizeof v, "%lld", l->pids);
		if (setf(cg->path[SBX_CG_PIDS], "pids.max", v, e) == -1)
			return -1;
	}
	return 0;
}

int
sbx_cgroup_set_io(const struct sbx_cgroup *cg, dev_t dev, long long mbps, long long iops,
    struct sbx_err *e)
{
	static const char *const v1[] = { "blkio.throttle.read_bps_device",
		"blkio.throttle.write_bps_device", "blkio.throttle.read_iops_device",
		"blkio.throttle.write_iops_device" };
	char v[160], bps[32] = "max", ops[32] = "max";
	unsigned maj = major(dev), min = minor(dev);
	size_t i;

	if (mbps > 0)
		snprintf(bps, sizeof bps, "%lld", mbps << 20);
	if (iops > 0)
		snprintf(ops, sizeof ops, "%lld", iops);
	if (cg->version == 2) {
		snprintf(v, sizeof v, "%u:%u rbps=%s wbps=%s riops=%s wiops=%s", maj, min, bps, bps,
		    ops, ops);
		return setf(cg->path[0], "io.max", v, e);
	}
	if (cg->path[SBX_CG_BLKIO][0] == '\0')
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "cgroup v1 blkio controller missing");
	for (i = 0; i < SBX_ARRAY_LEN(v1); i++) {
		const char *n = i < 2 ? (mbps > 0 ? bps : NULL) : (iops > 0 ? ops : NULL);

		if (n == NULL)
			continue;
		snprintf(v, sizeof v, "%u:%u %s", maj, min, n);
		if (setf(cg->path[SBX_CG_BLKIO], v1[i], v, e) == -1)
			return -1;
	}
	return 0;
}

static int
open_files(const struct sbx_cgroup *cg, const char *file, int fds[SBX_CG_NCTRL],
    struct sbx_err *e)
{
	char p[1200];
	int i, j;

	for (i = 0; i < SBX_CG_NCTRL; i++)
		fds[i] = -1;
	for (i = 0; i < nctrl(cg->version); i++) {
		if (cg->path[i][0] == '\0')
			continue;
		/* Co-mounted controllers share a directory: one write does for both. */
		for (j = 0; j < i; j++)
			if (strcmp(cg->path[j], cg->path[i]) == 0)
				break;
		if (j < i)
			continue;
		snprintf(p, sizeof p, "%s/%s", cg->path[i], file);
		if ((fds[i] = open(p, O_WRONLY | O_CLOEXEC)) == -1) {
			sbx_err_sys(e, SBX_EX_OSERR, "%s", p);
			while (i-- > 0)
				if (fds[i] != -1)
					close(fds[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * On v1, a thread writing "0" to a cgroup's tasks file moves only itself, and
 * the kernel then skips its global threadgroup lock, whose writer waits out an
 * RCU grace period (9 to 13 ms here, on every first move after a quiet spell);
 * cgroup.procs always takes it. On v2 there is cgroup.procs only.
 */
int
sbx_cgroup_open_join(const struct sbx_cgroup *cg, int fds[SBX_CG_NCTRL], struct sbx_err *e)
{
	return open_files(cg, cg->version == 2 ? "cgroup.procs" : "tasks", fds, e);
}

int
sbx_cgroup_enter(const struct sbx_cgroup *cg, pid_t pid, struct sbx_err *e)
{
	int fds[SBX_CG_NCTRL], i, r = 0;
	char v[32];

	if ((pid == 0 ? sbx_cgroup_open_join(cg, fds, e) :
	    open_files(cg, "cgroup.procs", fds, e)) == -1)
		return -1;
	snprintf(v, sizeof v, "%ld", (long)pid);
	for (i = 0; i < SBX_CG_NCTRL; i++) {
		if (fds[i] == -1)
			continue;
		if (r == 0 && sbx_write_all(fds[i], v, strlen(v)) == -1)
			r = sbx_err_sys(e, SBX_EX_OSERR, "move %s into %s", v, cg->path[i]);
		close(fds[i]);
	}
	return r;
}

pid_t
sbx_cgroup_clone(const struct sbx_cgroup *cg, unsigned long flags, int *placed)
{
	struct clone_args ca = { .flags = flags, .exit_signal = SIGCHLD };
	const char *off = getenv("SBX_CLONE_INTO_CGROUP");
	pid_t pid;
	int fd, err;

	*placed = 0;
	if (cg != NULL && cg->version == 2 && cg->path[0][0] && (off == NULL || strcmp(off, "0")) &&
	    (fd = open(cg->path[0], O_PATH | O_DIRECTORY | O_CLOEXEC)) != -1) {
		ca.flags |= CLONE_INTO_CGROUP;
		ca.cgroup = (unsigned)fd;
		pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
		err = errno;
		close(fd);
		if (pid != -1 || (err != ENOSYS && err != E2BIG && err != EINVAL)) {
			*placed = pid != -1;
			errno = err;
			return pid;
		}
	}
	return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);
}

static int
freezer_dir(const struct sbx_cgroup *cg)
{
	return cg->version == 2 ? 0 : SBX_CG_FREEZER;
}

int
sbx_cgroup_freeze(const struct sbx_cgroup *cg, int frozen, struct sbx_err *e)
{
	const char *d = cg->path[freezer_dir(cg)];
	char p[1200], buf[128];
	int i;

	if (d[0] == '\0')
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "no freezer controller");
	if (cg->version == 2) {
		if (setf(d, "cgroup.freeze", frozen ? "1" : "0", e) == -1)
			return -1;
		snprintf(p, sizeof p, "%s/cgroup.events", d);
		for (i = 0; frozen && i < 1000; i++) {
			if (sbx_read_str(p, buf, sizeof buf) > 0 && strstr(buf, "frozen 1"))
				return 0;
			nap(1);
		}
		return frozen ? sbx_err_set(e, SBX_EX_OSERR, "%s: did not freeze", d) : 0;
	}
	if (setf(d, "freezer.state", frozen ? "FROZEN" : "THAWED", e) == -1)
		return -1;
	snprintf(p, sizeof p, "%s/freezer.state", d);
	for (i = 0; frozen && i < 1000; i++) {
		if (sbx_read_str(p, buf, sizeof buf) > 0 && strncmp(buf, "FROZEN", 6) == 0)
			return 0;
		nap(1);
	}
	return frozen ? sbx_err_set(e, SBX_EX_OSERR, "%s: did not freeze", d) : 0;
}

/* Calls fn for each pid in dir and its child cgroups; returns how many there were. */
static int
each_pid(const char *dir, void (*fn)(pid_t))
{
	char p[1200], *buf = NULL, *line, *save = NULL;
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(p, sizeof p, "%s/cgroup.procs", dir);
	if (sbx_read_file(p, 1 << 24, &buf, NULL, NULL) == 0) {
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			n++;
			if (fn)
				fn((pid_t)atol(line));
		}
		free(buf);
	}
	if ((d = opendir(dir)) == NULL)
		return n;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		n += each_pid(p, fn);
	}
	closedir(d);
	return n;
}

static void
kill9(pid_t pid)
{
	if (pid > 0)
		kill(pid, SIGKILL);
}

int
sbx_cgroup_kill(const struct sbx_cgroup *cg, struct sbx_err *e)
{
	const char *d = cg->path[freezer_dir(cg)];
	char p[1200];
	int i, frozen;

	if (d[0] == '\0' || access(d, F_OK) == -1 || each_pid(d, NULL) == 0)
		return 0;
	if (cg->version == 2) {
		snprintf(p, sizeof p, "%s/cgroup.kill", d);
		if (sbx_write_str(p, "1") == 0) {
			for (i = 0; i < 5000 && each_pid(d, NULL) > 0; i++)
				nap(1);
			return each_pid(d, NULL) ? sbx_err_set(e, SBX_EX_OSERR, "%s: processes "
			    "survived cgroup.kill", d) : 0;
		}
	}
	/* Freeze so nothing forks between listing and killing; a frozen task dies on thaw. */
	for (i = 0; i < 100; i++) {
		frozen = sbx_cgroup_freeze(cg, 1, NULL) == 0;
		if (each_pid(d, kill9) == 0)
			break;
		if (frozen)
			sbx_cgroup_freeze(cg, 0, NULL);
		nap(i < 10 ? 1 : 10);
	}
	sbx_cgroup_freeze(cg, 0, NULL);
	for (i = 0; i < 5000 && each_pid(d, NULL) > 0; i++)
		nap(1);
	if (each_pid(d, NULL) > 0)
		return sbx_err_set(e, SBX_EX_OSERR, "%s: processes survived SIGKILL", d);
	return 0;
}

static long long
keyed(const char *dir, const char *file, const char *key)
{
	char p[1200], buf[8192], *s;
	size_t klen = strlen(key);

	snprintf(p, sizeof p, "%s/%s", dir, file);
	if (sbx_read_str(p, buf, sizeof buf) <= 0)
		return -1;
	for (s = buf; s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
		if (strncmp(s, key, klen) == 0 && s[klen] == ' ')
			return strtoll(s + klen + 1, NULL, 10);
	return -1;
}

static long long
single(const char *dir, const char *file)
{
	char p[1200], buf[64];

	snprintf(p, sizeof p, "%s/%s", dir, file);
	if (sbx_read_str(p, buf, sizeof buf) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/* Sum every "KEY=N" (v2 io.stat) or "DEV Write N" (v1 blkio) figure. */
static long long
io_written(const char *dir, const char *file, const char *key)
{
	char p[1200], *buf = NULL, *s;
	long long sum = 0;
	size_t klen = strlen(key);

	snprintf(p, sizeof p, "%s/%s", dir, file);
	if (sbx_read_file(p, 1 << 20, &buf, NULL, NULL) == -1)
		return 0;
	for (s = buf; (s = strstr(s, key)) != NULL; s += klen)
		sum += strtoll(s + klen, NULL, 10);
	free(buf);
	return sum;
}

int
sbx_cgroup_stats(const struct sbx_cgroup *cg, struct sbx_cg_stats *st, struct sbx_err *e)
{
	long long v;

	memset(st, 0, sizeof *st);
	if (cg->version == 2) {
		const char *d = cg->path[0];

		if ((v = keyed(d, "cpu.stat", "usage_usec")) < 0)
			return sbx_err_sys(e, SBX_EX_OSERR, "%s/cpu.stat", d);
		st->cpu_s = (double)v / 1e6;
		if ((v = single(d, "memory.peak")) < 0)
			v = single(d, "memory.current");
		st->peak_memory_bytes = v > 0 ? v : 0;
		st->oom_kills = (v = keyed(d, "memory.events", "oom_kill")) > 0 ? v : 0;
		st->pids_max_events = (v = keyed(d, "pids.events", "max")) > 0 ? v : 0;
		st->io_write_bytes = io_written(d, "io.stat", "wbytes=");
		return 0;
	}
	if (cg->path[SBX_CG_CPUACCT][0]) {
		if ((v = single(cg->path[SBX_CG_CPUACCT], "cpuacct.usage")) < 0)
			return sbx_err_sys(e, SBX_EX_OSERR, "%s/cpuacct.usage", cg->path[SBX_CG_CPUACCT]);
		st->cpu_s = (double)v / 1e9;
	}
	if (cg->path[SBX_CG_MEMORY][0]) {
		const char *d = cg->path[SBX_CG_MEMORY];

		v = single(d, "memory.max_usage_in_bytes");
		st->peak_memory_bytes = v > 0 ? v : 0;
		st->oom_kills = (v = keyed(d, "memory.oom_control", "oom_kill")) > 0 ? v : 0;
	}
	if (cg->path[SBX_CG_PIDS][0])
		st->pids_max_events = (v = keyed(cg->path[SBX_CG_PIDS], "pids.events", "max")) > 0 ?
		    v : 0;
	if (cg->path[SBX_CG_BLKIO][0])
		st->io_write_bytes = io_written(cg->path[SBX_CG_BLKIO],
		    "blkio.throttle.io_service_bytes_recursive", " Write ");
	return 0;
}

void
sbx_cgroup_now(const struct sbx_cgroup *cg, struct sbx_cg_now *n)
{
	long long v;

	n->memory_bytes = n->pids = -1;
	n->cpu_s = -1;
	if (cg->version == 2) {
		n->memory_bytes = single(cg->path[0], "memory.current");
		n->pids = single(cg->path[0], "pids.current");
		if ((v = keyed(cg->path[0], "cpu.stat", "usage_usec")) >= 0)
			n->cpu_s = (double)v / 1e6;
		return;
	}
	if (cg->path[SBX_CG_MEMORY][0])
		n->memory_bytes = single(cg->path[SBX_CG_MEMORY], "memory.usage_in_bytes");
	if (cg->path[SBX_CG_PIDS][0])
		n->pids = single(cg->path[SBX_CG_PIDS], "pids.current");
	if (cg->path[SBX_CG_CPUACCT][0] &&
	    (v = single(cg->path[SBX_CG_CPUACCT], "cpuacct.usage")) >= 0)
		n->cpu_s = (double)v / 1e9;
}

long long
sbx_cgroup_oom_kills(const struct sbx_cgroup *cg)
{
	long long v;

	if (cg->version == 2)
		v = keyed(cg->path[0], "memory.events", "oom_kill");
	else
		v = cg->path[SBX_CG_MEMORY][0] ? keyed(cg->path[SBX_CG_MEMORY],
		    "memory.oom_control", "oom_kill") : 0;
	return v > 0 ? v : 0;
}

int
sbx_cgroup_memory_fd(const struct sbx_cgroup *cg)
{
	char p[1200];

	if (cg->version == 2)
		snprintf(p, sizeof p, "%s/memory.current", cg->path[0]);
	else if (cg->path[SBX_CG_MEMORY][0])
		snprintf(p, sizeof p, "%s/memory.usage_in_bytes", cg->path[SBX_CG_MEMORY]);
	else
		return -1;
	return open(p, O_RDONLY | O_CLOEXEC);
}

long long
sbx_cgroup_memory_now(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

int
sbx_cgroup_memory_pressure(int fd, double *some, double *full)
{
	char link[64], p[1200], buf[512], *slash, *s, *f;
	ssize_t n;

	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	if ((n = readlink(link, p, sizeof p - 32)) <= 0)
		return -1;
	p[n] = '\0';
	if ((slash = strrchr(p, '/')) == NULL || strcmp(slash, "/memory.current") != 0)
		return -1;    /* v1's memory.usage_in_bytes: no PSI there */
	snprintf(slash, sizeof p - (size_t)(slash - p), "/memory.pressure");
	if (sbx_read_str(p, buf, sizeof buf) <= 0 || (s = strstr(buf, "some avg10=")) == NULL ||
	    (f = strstr(buf, "full avg10=")) == NULL)
		return -1;
	*some = strtod(s + 11, NULL);
	*full = strtod(f + 11, NULL);
	return 0;
}

static int rmdir_tree(const char *dir);

/* dir's child cgroups removed (each with its own); 0, or -1 when dir is
 * gone or unreadable. */
static int
rmdir_children(const char *dir)
{
	char p[1200];
	DIR *d;
	struct dirent *de;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		rmdir_tree(p);
	}
	closedir(d);
	return 0;
}

static int
rmdir_tree(const char *dir)
{
	int i;

	if (rmdir_children(dir) == -1)
		return errno == ENOENT ? 0 : -1;
	/* A killed task may take a moment to leave its cgroup, and a child may
	 * be made meanwhile (a runner's worker making its next run's): look
	 * again. */
	for (i = 0; i < 1000; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -1;
		nap(1);
		if (i % 10 == 9)
			(void)rmdir_children(dir);
	}
	return -1;
}

int
sbx_cgroup_destroy(const struct sbx_cgroup *cg, struct sbx_err *e)
{
	int i, r = 0;

	if (sbx_cgroup_kill(cg, e) == -1)
		r = -1;
	for (i = 0; i < nctrl(cg->version); i++)
		if (cg->path[i][0] && rmdir_tree(cg->path[i]) == -1 && r == 0)
			r = sbx_err_sys(e, SBX_EX_OSERR, "rmdir %s", cg->path[i]);
	return r;
}
