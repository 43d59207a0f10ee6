/* SPDX-License-Identifier: MIT */
/* Disk quotas on a sandbox's writable layer: a size-limited ext4 on a loop device. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "quota.h"
#include "util.h"

/* Free space beyond the quota: the overlay's upper and work directories, and
 * the directory and extent blocks that the data itself needs. */
#define QUOTA_SLACK (256 << 10)

static int
is_mount(const char *dir)
{
	char parent[1200];
	struct stat a, b;

	snprintf(parent, sizeof parent, "%s/..", dir);
	return stat(dir, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

/*
 * No journal: a host crash ends the sandbox, and the sweep removes its layer
 * unread. Four KiB blocks, an inode for every 16 KiB, no blocks reserved for
 * growing it online: a small filesystem gets what a large one does, whatever
 * mke2fs.conf says (its "small" type halves the inode spacing twice over).
 * root_owner: the sandbox's root owns the new filesystem's root. No reserved
 * blocks for root (-m 0): the quota is the manifest's number.
 */
static int
mkfs(const char *image, uid_t uid, gid_t gid, struct sbx_err *e)
{
	char owner[64];
	const char *argv[] = { "mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", "-i", "16384",
		"-I", "256", "-O", "^has_journal,^resize_inode", "-m", "0", "-E", owner, image,
		NULL };
	pid_t pid;
	int status, fd;

	snprintf(owner, sizeof owner, "root_owner=%u:%u", (unsigned)uid, (unsigned)gid);
	if ((pid = fork()) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "fork");
	if (pid == 0) {
		if ((fd = open("/dev/null", O_RDWR)) != -1) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv("/sbin/mke2fs", (char *const *)argv);
		execvp("mke2fs", (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return sbx_err_sys(e, SBX_EX_OSERR, "waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return sbx_err_set(e, WIFEXITED(status) && WEXITSTATUS(status) == 127 ?
		    SBX_EX_UNAVAILABLE : SBX_EX_OSERR, "disk_mb: mke2fs failed on %s (exit %d); "
		    "is e2fsprogs installed?", image, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

/* Attach image to a free loop device that clears itself on last close/unmount. */
static int
attach(const char *image, char *dev, size_t size, struct sbx_err *e)
{
	struct loop_config cfg = { 0 };
	int ctl, img, loop = -1, n, tries;

	if ((ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC)) == -1)
		return sbx_err_sys(e, SBX_EX_UNAVAILABLE, "disk_mb: /dev/loop-control");
	if ((img = open(image, O_RDWR | O_CLOEXEC)) == -1) {
		close(ctl);
		return sbx_err_sys(e, SBX_EX_OSERR, "%s", image);
	}
	cfg.fd = (unsigned)img;
	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	/* Another tool may take the device we were given: ask again. */
	for (tries = 0; tries < 20; tries++) {
		if ((n = ioctl(ctl, LOOP_CTL_GET_FREE)) < 0)
			break;
		snprintf(dev, size, "/dev/loop%d", n);
		if ((loop = open(dev, O_RDWR | O_CLOEXEC)) == -1)
			continue;
		if (ioctl(loop, LOOP_CONFIGURE, &cfg) == 0)
			break;
		close(loop);
		loop = -1;
		if (errno != EBUSY)
			break;
	}
	close(ctl);
	close(img);
	if (loop == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "disk_mb: no loop device");
	return loop;
}

/*
 * The image for want bytes free: ext4 takes an inode table (256 bytes per
 * 16 KiB) and two bitmap blocks per 128 MiB group, keeps 2% of the blocks
 * (16 MiB at most) for its own allocations, and a little for descriptors,
 * superblock copies and its directories.
 */
static off_t
image_size(double want)
{
	const double tables = 1 / 64.0 + 2 / 32768.0, resv = 1 / 50.0, resv_max = 16 << 20;
	double margin = (512 << 10) + want / 32768, s = (want + margin) / (1 - tables - resv);

	if (s * resv > resv_max)
		s = (want + margin + resv_max) / (1 - tables);
	return ((off_t)s + 4095) & ~(off_t)4095;
}

/* Make the filesystem in image at size bytes and mount it on dir. */
static int
make_and_mount(const char *image, off_t size, const char *dir, uid_t uid, gid_t gid,
    struct sbx_err *e)
{
	char dev[64];
	int fd, loop;

	if ((fd = open(image, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", image);
	if (ftruncate(fd, 0) == -1 || ftruncate(fd, size) == -1) {
		close(fd);
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", image);
	}
	close(fd);
	if (mkfs(image, uid, gid, e) == -1 || (loop = attach(image, dev, sizeof dev, e)) == -1)
		return -1;
	if (mount(dev, dir, "ext4", MS_NOSUID | MS_NODEV | MS_NOATIME, NULL) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "disk_mb: mount %s on %s", dev, dir);
		close(loop);
		return -1;
	}
	/* The mount holds the device now; autoclear detaches it at unmount. */
	close(loop);
	return 0;
}

/*
 * At least mb MiB must be free for the sandbox (df inside shows it), plus
 * room for the overlay's directories: sized by estimate, then measured on
 * the mounted filesystem and made again larger in the rare case it falls
 * short. The image itself need not be reachable from the layer: it lives
 * beside it.
 */
int
sbx_quota_create(const char *image, const char *dir, long long mb, uid_t uid, gid_t gid,
    struct sbx_err *e)
{
	double want = (double)((off_t)mb << 20) + QUOTA_SLACK, avail;
	off_t size = image_size(want);
	struct statvfs sv;
	int fd, pass;

	if ((fd = open(image, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", image);
	close(fd);
	for (pass = 0;; pass++) {
		if (make_and_mount(image, size, dir, uid, gid, e) == -1)
			return -1;
		if (statvfs(dir, &sv) == -1) {
			sbx_err_sys(e, SBX_EX_OSERR, "disk_mb: statvfs %s", dir);
			break;
		}
		avail = (double)sv.f_bavail * (double)sv.f_frsize;
		if (avail >= want)
			return 0;
		if (pass == 2) {
			sbx_err_set(e, SBX_EX_SOFTWARE, "disk_mb: %s holds %.0f MiB, fewer than the "
			    "%lld MiB asked", image, avail / (1 << 20), mb);
			break;
		}
		if (umount2(dir, 0) == -1) {
			sbx_err_sys(e, SBX_EX_OSERR, "unmount %s", dir);
			return -1;
		}
		size += (((off_t)(want - avail) + (1 << 20)) + 4095) & ~(off_t)4095;
	}
	umount2(dir, MNT_DETACH);
	return -1;
}

int
sbx_quota_remove(const char *dir, struct sbx_err *e)
{
	if (!is_mount(dir))
		return 0;
	if (umount2(dir, MNT_DETACH) == -1 && errno != EINVAL && errno != ENOENT)
		return sbx_err_sys(e, SBX_EX_OSERR, "unmount %s", dir);
	return 0;
}

double
sbx_quota_used_mb(const char *dir)
{
	struct statvfs sv;

	if (!is_mount(dir) || statvfs(dir, &sv) == -1)
		return -1;
	return (double)(sv.f_blocks - sv.f_bfree) * (double)sv.f_frsize / (1 << 20);
}
