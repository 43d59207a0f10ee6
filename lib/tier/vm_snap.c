/* SPDX-License-Identifier: MIT */
/*
 * The microVM tier's snapshots (driver.h: capture, checkpoint, restart,
 * restore).
 *
 * The writable layer: the agent packs the guest's overlay upper directory
 * as a tar archive (sbx-agent --pack, outside the sandbox's frozen cgroup),
 * which the host reads as the untrusted input it is (sbx_layer_unpack_tar)
 * and packs again in the layer format. It is always a whole layer: no index
 * is written, so the next snapshot is whole too.
 *
 * The memory: with the sandbox's processes frozen by the agent, QEMU stops
 * the vCPUs and migrates its device state to the checkpoint's state file
 * (QMP getfd + migrate fd:, x-ignore-shared: the RAM, a shared file, is not
 * in the stream); the RAM file, the writable layer's disk and the base's
 * disk are copied beside it (holes kept), and the VM goes on, its
 * processes still frozen until restart thaws them. A restore is a new VMM
 * of the same vCPUs and RAM started with -incoming defer on copies of the
 * RAM and writable disk (the base is the checkpoint's, read-only), fed the
 * state file; its agent thaws the processes, keeping the runs whose callers
 * were the parent's (they go on detached). Only a VM whose base is a disk
 * can (vm_disk_base): QEMU migrates no VM with a 9p share mounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layer.h"
#include "util.h"
#include "vm.h"

#define VM_PAGE 4096

/* How long the guest may take to pack its writable layer. */
#define VM_PACK_TIMEOUT_S 600

/* Is the page p all zero? */
static int
page_zero(const unsigned char *p, size_t n)
{
	return p[0] == 0 && memcmp(p, p + 1, n - 1) == 0;
}

/* Bytes [at, end) of in to the same place in out, which reads as zeros
 * there: the pages that are not all zero. A guest's RAM is mostly pages
 * it freed (zeroed, init_on_free) or never touched, which stay holes. */
static int
copy_range(int in, int out, off_t at, off_t end)
{
	static unsigned char buf[1 << 20];

	while (at < end) {
		size_t want = (size_t)(end - at), i, run;
		ssize_t n = pread(in, buf, want < sizeof buf ? want : sizeof buf, at);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == 0)
			errno = EIO;   /* the file shrank under the copy */
		if (n <= 0)
			return -1;
		for (i = 0; i < (size_t)n; i += run) {
			size_t page = (size_t)n - i < VM_PAGE ? (size_t)n - i : VM_PAGE;
			int zero = page_zero(buf + i, page);

			/* a run of pages alike: all zero (skipped) or not (written) */
			for (run = page; i + run < (size_t)n; run += page) {
				page = (size_t)n - i - run < VM_PAGE ? (size_t)n - i - run : VM_PAGE;
				if (page_zero(buf + i + run, page) != zero)
					break;
			}
			if (!zero && pwrite(out, buf + i, run, at + (off_t)i) != (ssize_t)run)
				return -1;
		}
		at += n;
	}
	return 0;
}

int
vm_copy_fd(int in, int out, off_t size)
{
	off_t data = 0, hole;

	while (data < size && (data = lseek(in, data, SEEK_DATA)) != -1) {
		if ((hole = lseek(in, data, SEEK_HOLE)) == -1 ||
		    copy_range(in, out, data, hole < size ? hole : size) == -1)
			return -1;
		data = hole;
	}
	return data == -1 && errno != ENXIO ? -1 : 0;
}

int
vm_copy_sparse(const char *from, const char *to, mode_t mode, uid_t uid, struct sbx_err *e)
{
	int in, out, r = -1;
	struct stat st;

	/* from may be a checkpoint's, which came from elsewhere: a regular
	 * file of its own, never what a link points to */
	if ((in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return sbx_err_sys(e, SBX_EX_DATAERR, "%s", from);
	if (fstat(in, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(in);
		return sbx_err_set(e, SBX_EX_DATAERR, "%s: not a regular file", from);
	}
	if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)) == -1) {
		sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", to);
		close(in);
		return -1;
	}
	if (ftruncate(out, st.st_size) == -1 || fchown(out, uid, uid) == -1 ||
	    fchmod(out, mode) == -1)
		sbx_err_sys(e, SBX_EX_IOERR, "%s", to);
	else if (vm_copy_fd(in, out, st.st_size) == -1)
		sbx_err_sys(e, SBX_EX_IOERR, "%s to %s", from, to);
	else
		r = 0;
	close(in);
	close(out);
	if (r == -1)
		unlink(to);
	return r;
}

/* The vCPUs going; *stopped: whether they were stopped (a pause's, a
 * snapshot's freeze). */
static int
vm_resume(const struct vm_paths *p, int *stopped, struct sbx_err *e)
{
	char reply[1024];

	*stopped = 0;
	if (vm_qmp(p->qmp, "{\"execute\":\"query-status\"}", reply, sizeof reply, e) == -1)
		return -1;
	if (strstr(reply, "\"running\": true") != NULL)
		return 0;
	*stopped = 1;
	return vm_qmp(p->qmp, "{\"execute\":\"cont\"}", reply, sizeof reply, e);
}

static int
vm_stop(const struct vm_paths *p, struct sbx_err *e)
{
	char reply[512];

	return vm_qmp(p->qmp, "{\"execute\":\"stop\"}", reply, sizeof reply, e);
}

int
vm_capture(const struct sbx_store *s, const struct sbx_manifest *m, int fd,
    const struct sbx_pack_opts *o, struct sbx_layer_info *li, struct sbx_err *e)
{
	char *const argv[] = { VM_AGENT_PATH, VM_AGENT_PACK, VM_UPPER, NULL };
	struct sbx_exec x = { .argv = argv, .user = "0:0", .workdir = "/",
		.timeout_s = VM_PACK_TIMEOUT_S };
	struct rlimit was, cap;
	struct vm_paths p;
	int stopped = 0;
	struct sbx_pack_opts po = { NULL, -1, NULL, o->racy_after };
	struct sbx_exec_result res;
	struct sbx_layer_info got;
	char tar[1200], err[1200], dir[1200], msg[256] = "";
	int io[3] = { -1, -1, -1 }, r = -1;
	ssize_t n;

	if (sbx_store_path(s, m->sandbox_id, "capture.tar", tar, sizeof tar, e) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "capture.err", err, sizeof err, e) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "capture", dir, sizeof dir, e) == -1)
		return -1;
	if (sbx_rm_rf(dir, e) == -1)
		return -1;
	if ((io[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1 ||
	    (io[1] = open(tar, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1 ||
	    (io[2] = open(err, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1) {
		sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", io[1] == -1 ? tar : err);
		goto out;
	}
	x.stdio = io;
	/* The guest's archive is bounded: what its disk can hold, twice (tar's
	 * headers), and a margin; the relay that writes it inherits the cap. */
	getrlimit(RLIMIT_FSIZE, &was);
	cap = was;
	cap.rlim_cur = (rlim_t)(sbx_rt_int(m, "disk_mb") > 0 ? sbx_rt_int(m, "disk_mb") : 1024) *
	    2 * (1 << 20) + (64 << 20);
	if (was.rlim_max != RLIM_INFINITY && cap.rlim_cur > was.rlim_max)
		cap.rlim_cur = was.rlim_max;
	/* the agent runs the packer with the VM's vCPUs going, the sandbox's
	 * processes still frozen */
	if (vm_paths_rt(m, &p, e) == -1 || vm_resume(&p, &stopped, e) == -1)
		goto out;
	setrlimit(RLIMIT_FSIZE, &cap);
	r = vm_exec_flags(s, m, &x, VM_EXEC_SYSTEM, &res, e);
	setrlimit(RLIMIT_FSIZE, &was);
	sbx_trace_free(&res.trace);
	if (stopped && vm_stop(&p, r == 0 ? e : NULL) == -1)
		r = -1;
	if (r == -1) {
		sbx_err_prefix(e, "packing the guest's writable layer");
		goto out;
	}
	r = -1;
	if (res.status != 0) {
		n = pread(io[2], msg, sizeof msg - 1, 0);
		msg[n > 0 ? n : 0] = '\0';
		msg[strcspn(msg, "\n")] = '\0';
		sbx_err_set(e, SBX_EX_IOERR, "the guest could not pack its writable layer "
		    "(exit %d)%s%s", res.status, msg[0] ? ": " : "", msg);
		goto out;
	}
	if (mkdir(dir, 0700) == -1) {
		sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", dir);
		goto out;
	}
	if (lseek(io[1], 0, SEEK_SET) == -1 || sbx_layer_unpack_tar(io[1], dir, &got, e) == -1) {
		sbx_err_prefix(e, "the guest's writable layer");
		goto out;
	}
	r = sbx_layer_pack(dir, 0, 65536, fd, &po, li, e);
out:
	for (n = 0; n < 3; n++)
		if (io[n] != -1)
			close(io[n]);
	unlink(tar);
	unlink(err);
	sbx_rm_rf(dir, NULL);
	return r;
}

/* Poll the outgoing migration until it is over (120 s at most). */
static int
migrated(int q, struct sbx_err *e)
{
	char reply[1024];
	double deadline = sbx_monotonic() + 120;

	for (;;) {
		if (vm_qmp_cmd(q, "{\"execute\":\"query-migrate\"}", -1, reply, sizeof reply, e) == -1)
			return -1;
		if (strstr(reply, "\"completed\"") != NULL)
			return 0;
		if (strstr(reply, "\"failed\"") != NULL || strstr(reply, "\"cancelled\"") != NULL ||
		    sbx_monotonic() > deadline)
			return sbx_err_set(e, SBX_EX_IOERR, "the VM's state was not saved: %s", reply);
		usleep(2000);
	}
}

/* The files of the stopped VM beside its state: RAM, disks, their sizes. */
static int
copy_files(const struct sbx_manifest *m, const struct vm_paths *p, const char *dir,
    struct sbx_err *e)
{
	char to[1300], conf[128];

	snprintf(to, sizeof to, "%s/ram", dir);
	if (vm_copy_sparse(p->ram, to, 0600, 0, e) == -1)
		return -1;
	snprintf(to, sizeof to, "%s/disk.img", dir);
	if (vm_copy_sparse(p->disk, to, 0600, 0, e) == -1)
		return -1;
	/* Readable by any clone's QEMU: it holds the manifest's root directory. */
	snprintf(to, sizeof to, "%s/base.img", dir);
	if (vm_copy_sparse(p->base_img, to, 0644, 0, e) == -1)
		return -1;
	snprintf(to, sizeof to, "%s/vm.conf", dir);
	snprintf(conf, sizeof conf, "vcpus %lld\nmemory_mb %lld\naccel %s\ndisk_mb %lld\nnic %d\n",
	    sbx_rt_int(m, "vcpus"), sbx_rt_int(m, "memory_mb"),
	    sbx_rt_str(m, "acceleration") ? sbx_rt_str(m, "acceleration") : "tcg",
	    sbx_rt_int(m, "disk_mb"), vm_nic(m));
	return sbx_write_atomic_nosync(to, conf, strlen(conf), 0600, e);
}

int
vm_save(const struct sbx_manifest *m, const struct vm_paths *p, const char *dir,
    struct sbx_err *e)
{
	char state[1300], reply[1024];
	struct sbx_err ce;
	int q, fd = -1, r = -1;

	if ((q = vm_qmp_open(p->qmp, e)) == -1)
		return -1;
	snprintf(state, sizeof state, "%s/state", dir);
	if (vm_qmp_cmd(q, VM_QMP_IGNORE_SHARED, -1, reply, sizeof reply, e) == -1 ||
	    vm_qmp_cmd(q, "{\"execute\":\"stop\"}", -1, reply, sizeof reply, e) == -1)
		goto out;
	if ((fd = open(state, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1) {
		sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", state);
		goto out;
	}
	if (vm_qmp_cmd(q, "{\"execute\":\"getfd\",\"arguments\":{\"fdname\":\"sbx-state\"}}", fd,
	    reply, sizeof reply, e) == -1 ||
	    vm_qmp_cmd(q, "{\"execute\":\"migrate\",\"arguments\":{\"uri\":\"fd:sbx-state\"}}", -1,
	    reply, sizeof reply, e) == -1 || migrated(q, e) == -1)
		goto out;
	sbx_crash_point("vm-migrated");
	if (fsync(fd) == -1) {
		sbx_err_sys(e, SBX_EX_IOERR, "%s", state);
		goto out;
	}
	r = copy_files(m, p, dir, e);
out:
	if (fd != -1)
		close(fd);
	/* The VM runs on (its processes stay frozen until restart or thaw). */
	if (vm_qmp_cmd(q, "{\"execute\":\"cont\"}", -1, reply, sizeof reply, r == 0 ? e : &ce) == -1)
		r = -1;
	close(q);
	return r;
}

int
vm_checkpoint(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
    struct sbx_err *e)
{
	struct vm_paths p;

	if (!vm_disk_base(m))
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "a microVM whose root is the host's "
		    "(over 9p) keeps no memory snapshot");
	return vm_paths(s, m, &p, e) == -1 ? -1 : vm_save(m, &p, dir, e);
}

int
vm_boot_save(const struct sbx_manifest *m, const struct vm_paths *p, const char *boot,
    struct sbx_err *e)
{
	char tmp[1300];
	int r;

	if (sbx_path(tmp, sizeof tmp, e, "%s.tmp.%ld", boot, (long)getpid()) == -1)
		return -1;
	sbx_rm_rf(tmp, NULL);
	if (mkdir(tmp, 0700) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", tmp);
	r = vm_save(m, p, tmp, e);
	sbx_crash_point("vm-boot-saved");
	/* Another sandbox's may have come first: then it is the one. */
	if (r == 0 && rename(tmp, boot) == -1 && errno != EEXIST && errno != ENOTEMPTY)
		r = sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", boot);
	sbx_rm_rf(tmp, NULL);
	return r;
}

int
vm_restart(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
    struct sbx_err *e)
{
	struct vm_paths p;

	(void)s;
	(void)dir;
	return vm_paths_rt(m, &p, e) == -1 ? -1 : vm_agent_freeze(&p, 0, 0, e);
}

int
vm_restore(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
    struct sbx_err *e)
{
	return vm_start(s, m, dir, e);
}
