/* SPDX-License-Identifier: MIT */
/* The cgroup module against a fake v2 tree, and layout detection for v1 and v2. */
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cgroup.h"
#include "tap.h"
#include "util.h"

static char root[256];
static char *sb;
/* a file of the fake sandbox cgroup */
static const char *
P(const char *file)
{
	static char p[8][512];
	static int i;

	i = (i + 1) % 8;
	snprintf(p[i], sizeof p[i], "%s/%s", sb, file);
	return p[i];
}

static void
put(const char *rel, const char *text)
{
	char p[1024];
	FILE *f;

	snprintf(p, sizeof p, "%s%s", root, rel);
	f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
}

static char *
get(const char *rel)
{
	static char buf[256];
	char p[1024];

	snprintf(p, sizeof p, "%s%s", root, rel);
	if (sbx_read_str(p, buf, sizeof buf) < 0)
		return "";
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void
dir(const char *rel)
{
	char p[1024];

	snprintf(p, sizeof p, "%s%s", root, rel);
	sbx_mkdir_p(p, 0755, NULL);
	snprintf(p, sizeof p, "%s/cgroup.controllers", rel);
	put(p, "cpuset cpu io memory pids\n");
	snprintf(p, sizeof p, "%s/cgroup.subtree_control", rel);
	put(p, "");
}

int
main(void)
{
	const char *v1mi =
	    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	    "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
	    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
	    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
	const char *v1cg = "8:pids:/\n6:freezer:/\n4:memory:/api/x\n2:cpuacct:/\n1:cpu:/\n0::/\n";
	const char *v2mi = "31 23 0:28 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
	struct sbx_cg_host h;
	struct sbx_cgroup cg, back;
	struct sbx_cg_limits lim = { 0.5, 256LL << 20, (256LL << 20) * 80 / 100, 64 };
	struct sbx_cg_stats st;
	struct sbx_err e = { 0 };
	char spec[2048];

	ok(sbx_cgroup_host_parse(v1mi, v1cg, "", &h, &e) == 0 && h.version == 1 &&
	    strcmp(h.mnt[SBX_CG_CPU], "/sys/fs/cgroup/cpu") == 0 &&
	    strcmp(h.mnt[SBX_CG_CPUACCT], "/sys/fs/cgroup/cpuacct") == 0 &&
	    strcmp(h.own[SBX_CG_MEMORY], "/api/x") == 0 && h.own[SBX_CG_CPU][0] == '\0' &&
	    h.mnt[SBX_CG_BLKIO][0] == '\0', "cgroup: hybrid host detected as v1, per controller");
	ok(sbx_cgroup_host_parse(v2mi, "0::/user.slice/user-0.slice/session-1.scope\n", "/fake", &h,
	    &e) == 0 && h.version == 2 && strcmp(h.mnt[0], "/fake/sys/fs/cgroup") == 0 &&
	    strcmp(h.own[0], geteuid() == 0 ? "" : "/user.slice/user-0.slice") == 0,
	    "cgroup: pure v2 host; the parent is the top (root) or the delegated subtree");
	ok(sbx_cgroup_host_parse("", "", "", &h, &e) == -1 && e.code == SBX_EX_UNAVAILABLE,
	    "cgroup: no hierarchy is exit 69");

	snprintf(root, sizeof root, "/tmp/sbx-unit-cg.%ld", (long)getpid());
	/* as root the sandboxes go at the top; otherwise below the session's parent */
	sb = geteuid() == 0 ? "/sys/fs/cgroup/sbx/rtest/sbx-1" :
	    "/sys/fs/cgroup/user.slice/sbx/rtest/sbx-1";
	dir(geteuid() == 0 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/user.slice");
	dir(geteuid() == 0 ? "/sys/fs/cgroup/sbx" : "/sys/fs/cgroup/user.slice/sbx");
	dir(geteuid() == 0 ? "/sys/fs/cgroup/sbx/rtest" : "/sys/fs/cgroup/user.slice/sbx/rtest");
	dir(sb);
	put(P("cpu.max"), "");
	put(P("memory.max"), "");
	put(P("memory.high"), "");
	put(P("memory.swap.max"), "");
	put(P("pids.max"), "");
	ok(sbx_cgroup_host_parse(v2mi, "0::/user.slice/session.scope\n", root, &h, &e) == 0 &&
	    sbx_cgroup_create(&h, "rtest", "sbx-1", &cg, &e) == 0, "cgroup v2: create (%s)", e.msg);
	ok(strstr(get(geteuid() == 0 ? "/sys/fs/cgroup/sbx/cgroup.subtree_control" :
	    "/sys/fs/cgroup/user.slice/sbx/cgroup.subtree_control"), "+") != NULL,
	    "cgroup v2: controllers enabled down the tree");
	ok(sbx_cgroup_set_limits(&cg, &lim, &e) == 0, "cgroup v2: set limits (%s)", e.msg);
	ok(strcmp(get(P("cpu.max")), "50000 100000") == 0,
	    "cgroup v2: cpu.max holds half a core");
	ok(strcmp(get(P("memory.max")), "268435456") == 0 &&
	    strcmp(get(P("memory.high")), "214748364") == 0 &&
	    strcmp(get(P("memory.swap.max")), "0") == 0,
	    "cgroup v2: memory.max, memory.high at the soft percentage, no swap");
	ok(strcmp(get(P("pids.max")), "64") == 0,
	    "cgroup v2: pids.max");
	ok(sbx_cgroup_spec(&cg, &h, spec, sizeof spec) == 0 &&
	    strncmp(spec, "2:", 2) == 0 && strcmp(spec + 2, sb + strlen("/sys/fs/cgroup")) == 0 &&
	    sbx_cgroup_from_spec(&h, spec, &back, &e) == 0 && strcmp(back.path[0], cg.path[0]) == 0,
	    "cgroup v2: spec round trip");
	ok(sbx_cgroup_from_spec(&h, "1:cpu=/x", &back, &e) == -1, "cgroup: a v1 spec on v2 is refused");
	put(P("io.max"), "");
	ok(sbx_cgroup_set_io(&cg, makedev(7, 3), 2, 0, &e) == 0 &&
	    strcmp(get(P("io.max")), "7:3 rbps=2097152 wbps=2097152 riops=max wiops=max") == 0,
	    "cgroup v2: io.max on the device, MiB/s for reads and writes, no IOPS bound");
	put(P("memory.current"), "1048576\n");
	put(P("memory.pressure"), "some avg10=12.50 avg60=1.00 avg300=0.00 total=5\n"
	    "full avg10=3.25 avg60=0.50 avg300=0.00 total=2\n");
	{
		int fd = sbx_cgroup_memory_fd(&cg);
		double some = -1, full = -1;

		ok(fd != -1 && sbx_cgroup_memory_now(fd) == 1048576 &&
		    sbx_cgroup_memory_pressure(fd, &some, &full) == 0 && some == 12.5 && full == 3.25,
		    "cgroup v2: memory pressure (PSI avg10) beside memory.current");
		if (fd != -1)
			close(fd);
	}
	put(P("cpu.stat"), "usage_usec 1500000\nuser_usec 1\n");
	put(P("memory.peak"), "10485760\n");
	put(P("memory.events"), "low 0\nhigh 4\nmax 9\noom 2\n"
	    "oom_kill 1\n");
	put(P("pids.events"), "max 3\n");
	put(P("io.stat"),
	    "8:0 rbytes=10 wbytes=4096 rios=1 wios=1\n8:16 rbytes=0 wbytes=8192 rios=0 wios=2\n");
	ok(sbx_cgroup_stats(&cg, &st, &e) == 0 && st.cpu_s > 1.49 && st.cpu_s < 1.51 &&
	    st.peak_memory_bytes == 10485760 && st.oom_kills == 1 && st.pids_max_events == 3 &&
	    st.io_write_bytes == 12288, "cgroup v2: counters");
	{
		char cmd[400];

		snprintf(cmd, sizeof cmd, "rm -rf %s", root);
		ok(system(cmd) == 0, "cgroup: fake tree removed");
	}
	return done_testing();
}
