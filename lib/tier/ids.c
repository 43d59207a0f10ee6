/* SPDX-License-Identifier: MIT */
/* The host IDs a sandbox's user namespace maps, whichever its tier: see ids.h. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ids.h"
#include "util.h"

#define ID_RANGE 65536
#define DEFAULT_ID_BASE 1000000000LL
#define DEFAULT_ID_SLOTS 1024

/* Host IDs for the sandbox: a 65536-wide slice of root's subordinate range, or
 * of a default range, never host root; without root, the caller's own ID. */
int
sbx_tier_pick_ids(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e)
{
	char path[1200], buf[64], **ids = NULL, *sub = NULL, *line, *save = NULL;
	long long base = DEFAULT_ID_BASE, count = (long long)ID_RANGE * DEFAULT_ID_SLOTS, slot;
	size_t n = 0, i;
	int lock = -1, r = -1;
	unsigned char *used = NULL;

	if (s->rootless) {
		if (sbx_rt_set_int(m, "uid_base", geteuid()) == -1 ||
		    sbx_rt_set_int(m, "gid_base", getegid()) == -1 ||
		    sbx_rt_set_int(m, "id_count", 1) == -1)
			return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		return 0;
	}
	if (sbx_read_file("/etc/subuid", 1 << 20, &sub, NULL, NULL) == 0) {
		for (line = strtok_r(sub, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			long long b, c;

			if ((sscanf(line, "root:%lld:%lld", &b, &c) == 2 ||
			    sscanf(line, "0:%lld:%lld", &b, &c) == 2) && b > 0 && c >= ID_RANGE) {
				base = b;
				count = c;
				break;
			}
		}
		free(sub);
	}
	snprintf(path, sizeof path, "%s/ids.lock", s->root);
	if ((lock = sbx_lock_file(path, 1, e)) == -1)
		return -1;
	if ((used = calloc((size_t)(count / ID_RANGE), 1)) == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	if (sbx_store_list(s, &ids, &n, e) == -1)
		goto out;
	for (i = 0; i < n; i++) {
		if (sbx_store_path(s, ids[i], "ids", path, sizeof path, NULL) == 0 &&
		    sbx_read_str(path, buf, sizeof buf) > 0) {
			slot = (strtoll(buf, NULL, 10) - base) / ID_RANGE;
			if (slot >= 0 && slot < count / ID_RANGE)
				used[slot] = 1;
		}
	}
	for (slot = 0; slot < count / ID_RANGE && used[slot]; slot++)
		;
	if (slot == count / ID_RANGE) {
		sbx_err_set(e, SBX_EX_TEMPFAIL, "no free host ID range for another sandbox");
		goto out;
	}
	if (sbx_rt_set_int(m, "uid_base", base + slot * ID_RANGE) == -1 ||
	    sbx_rt_set_int(m, "gid_base", base + slot * ID_RANGE) == -1 ||
	    sbx_rt_set_int(m, "id_count", ID_RANGE) == -1) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	snprintf(buf, sizeof buf, "%lld\n", base + slot * ID_RANGE);
	/* Not synced: a range matters only while its sandbox lives, and a host
	 * crash ends every sandbox. */
	if (sbx_store_path(s, m->sandbox_id, "ids", path, sizeof path, e) == -1 ||
	    sbx_write_atomic_nosync(path, buf, strlen(buf), 0600, e) == -1)
		goto out;
	r = 0;
out:
	for (i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	free(used);
	close(lock);
	return r;
}

int
sbx_userns_open(const char *uid_map, const char *gid_map, const char *what, struct sbx_err *e)
{
	char p[64], c;
	int hold[2], fd = -1;
	pid_t pid;

	if (pipe2(hold, O_CLOEXEC) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "pipe");
	if ((pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0)) == 0) {
		close(hold[1]);
		(void)!read(hold[0], &c, 1);
		_exit(0);
	}
	close(hold[0]);
	if (pid == -1) {
		close(hold[1]);
		return sbx_err_sys(e, errno == EPERM || errno == ENOSPC ? SBX_EX_UNAVAILABLE :
		    SBX_EX_OSERR, "a user namespace for %s", what);
	}
	snprintf(p, sizeof p, "/proc/%d/uid_map", (int)pid);
	if (sbx_write_str(p, uid_map) == 0) {
		snprintf(p, sizeof p, "/proc/%d/gid_map", (int)pid);
		if (sbx_write_str(p, gid_map) == 0) {
			snprintf(p, sizeof p, "/proc/%d/ns/user", (int)pid);
			fd = open(p, O_RDONLY | O_CLOEXEC);
		}
	}
	if (fd == -1)
		sbx_err_sys(e, SBX_EX_OSERR, "map the user namespace for %s", what);
	close(hold[1]);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
	return fd;
}
