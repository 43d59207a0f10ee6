/* SPDX-License-Identifier: MIT */
/* The sandbox's root filesystem: overlay, /proc, /dev, binds, tmpfs, pivot_root. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "quota.h"
#include "egress.h"
#include "ids.h"
#include "policy.h"
#include "rootfs.h"
#include "sha256.h"
#include "snapshot.h"
#include "util.h"

/* Host directories a `rootfs: host` sandbox sees, read-only. Symlinks among them
 * (merged /usr) are copied as symlinks. */
static const char *const host_dirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
	"/libx32", "/etc/alternatives", "/etc/ssl", "/etc/ca-certificates", NULL };
/* Small public host files copied into the synthesized /etc. */
static const char *const host_files[] = { "/etc/ld.so.cache", "/etc/ld.so.conf",
	"/etc/localtime", "/etc/mime.types", NULL };
static const char *const skel_dirs[] = { "/dev", "/proc", "/sys", "/tmp", "/root", "/home",
	"/etc", "/var", "/var/tmp", "/run", "/opt", "/mnt", NULL };

/* Write a new file name (below dirfd), 0644 whatever the umask, owned by uid:gid. */
static int
write_at(int dirfd, const char *name, const void *buf, size_t len, uid_t uid, gid_t gid,
    struct sbx_err *e)
{
	int fd;

	if ((fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0644)) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", name);
	if (sbx_write_all(fd, buf, len) == -1 || fchmod(fd, 0644) == -1 ||
	    fchown(fd, uid, gid) == -1) {
		sbx_err_sys(e, SBX_EX_IOERR, "%s", name);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int
write_file(const char *dir, const char *name, const char *text, uid_t uid, gid_t gid,
    struct sbx_err *e)
{
	char p[1300];

	snprintf(p, sizeof p, "%s%s", dir, name);
	return write_at(AT_FDCWD, p, text, strlen(text), uid, gid, e);
}

static int
copy_file(const char *from, const char *dir, uid_t uid, gid_t gid, struct sbx_err *e)
{
	char *buf, p[1300];
	size_t len;
	int r;

	if (sbx_read_file(from, 1 << 22, &buf, &len, NULL) == -1)
		return 0;  /* optional */
	snprintf(p, sizeof p, "%s%s", dir, from);
	r = write_at(AT_FDCWD, p, buf, len, uid, gid, e);
	free(buf);
	return r;
}

static int
mkdir_owned(const char *p, mode_t mode, uid_t uid, gid_t gid, struct sbx_err *e)
{
	if (mkdir(p, mode) == -1 && errno != EEXIST)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p);
	if (chown(p, uid, gid) == -1 || chmod(p, mode) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p);
	return 0;
}

/*
 * The part of a `rootfs: host` root that is the same in every sandbox: mount
 * points, the host's top-level symlinks (merged /usr), /etc/passwd, group,
 * nsswitch.conf and copies of small host files. Built once per state root as
 * skel/KEY, where KEY covers what it was made from (the host's symlinks, the
 * identity of the files it copies), so a changed host file makes a new one.
 * Owned by host root (ID-mapped into each sandbox, where it belongs to the
 * sandbox's root), or rootless by the caller, whose one ID is the sandbox's
 * root. skel/ itself is 0700: no host user can reach /home/sandbox in it.
 */
static void
skeleton_key(uid_t owner, char key[SBX_SKEL_KEY_LEN + 1])
{
	struct sbx_sha256 c;
	struct stat st;
	char buf[1400], link[1024], hex[65];
	unsigned char sum[32];
	ssize_t n;
	int i;

	sbx_sha256_init(&c);
	snprintf(buf, sizeof buf, "sbx skeleton 2 owner %u\n", (unsigned)owner);
	sbx_sha256_update(&c, buf, strlen(buf));
	for (i = 0; host_dirs[i]; i++) {
		buf[0] = '\0';
		if (lstat(host_dirs[i], &st) == -1)
			;   /* absent: nothing for it */
		else if (S_ISLNK(st.st_mode) &&
		    (n = readlink(host_dirs[i], link, sizeof link - 1)) >= 0) {
			link[n] = '\0';
			snprintf(buf, sizeof buf, "link %s %s\n", host_dirs[i], link);
		} else if (S_ISDIR(st.st_mode)) {
			snprintf(buf, sizeof buf, "dir %s\n", host_dirs[i]);
		}
		sbx_sha256_update(&c, buf, strlen(buf));
	}
	for (i = 0; host_files[i]; i++) {
		buf[0] = '\0';
		if (stat(host_files[i], &st) == 0)
			snprintf(buf, sizeof buf, "file %s %llu %llu %lld %lld.%09ld\n", host_files[i],
			    (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			    (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
		sbx_sha256_update(&c, buf, strlen(buf));
	}
	sbx_sha256_final(&c, sum);
	for (i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", sum[i]);
	snprintf(key, SBX_SKEL_KEY_LEN + 1, "%s", hex);
}

static int
build_skeleton(const char *dir, uid_t uid, gid_t gid, struct sbx_err *e)
{
	char p[1300], link[1024];
	struct stat st;
	ssize_t n;
	int i;

	if (mkdir_owned(dir, 0755, uid, gid, e) == -1)
		return -1;
	for (i = 0; skel_dirs[i]; i++) {
		snprintf(p, sizeof p, "%s%s", dir, skel_dirs[i]);
		if (mkdir_owned(p, strcmp(skel_dirs[i], "/tmp") == 0 ||
		    strcmp(skel_dirs[i], "/var/tmp") == 0 ? 01777 :
		    strcmp(skel_dirs[i], "/root") == 0 ? 0700 : 0755, uid, gid, e) == -1)
			return -1;
	}
	for (i = 0; host_dirs[i]; i++) {
		if (lstat(host_dirs[i], &st) == -1)
			continue;
		snprintf(p, sizeof p, "%s%s", dir, host_dirs[i]);
		if (S_ISLNK(st.st_mode)) {
			if ((n = readlink(host_dirs[i], link, sizeof link - 1)) < 0)
				continue;
			link[n] = '\0';
			if (symlink(link, p) == -1 && errno != EEXIST)
				return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p);
			if (lchown(p, uid, gid) == -1)
				return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p);
		} else if (S_ISDIR(st.st_mode) && mkdir_owned(p, 0755, uid, gid, e) == -1) {
			return -1;
		}
	}
	if (write_file(dir, "/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"
	    "sandbox:x:1000:1000:sandbox:/home/sandbox:/bin/sh\n"
	    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", uid, gid, e) == -1 ||
	    write_file(dir, "/etc/group", "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n",
	    uid, gid, e) == -1 ||
	    write_file(dir, "/etc/nsswitch.conf", "passwd: files\ngroup: files\nshadow: files\n"
	    "hosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n", uid, gid,
	    e) == -1 ||
	    /* Places for the sandbox's own: the namespace tier's lower layer
	     * has them above, a microVM's agent binds them over these. */
	    write_file(dir, "/etc/hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n",
	    uid, gid, e) == -1 ||
	    write_file(dir, "/etc/resolv.conf", "# sbx: no resolver\n", uid, gid, e) == -1)
		return -1;
	for (i = 0; host_files[i]; i++)
		if (copy_file(host_files[i], dir, uid, gid, e) == -1)
			return -1;
	/* The sandbox's user 1000 exists only where the sandbox has a range of IDs
	 * (host root's skeleton, ID-mapped); rootless, its one ID owns everything. */
	snprintf(p, sizeof p, "%s/home/sandbox", dir);
	if (mkdir_owned(p, 0755, uid == 0 ? 1000 : uid, uid == 0 ? 1000 : gid, e) == -1)
		return -1;
	return 0;
}

/* The state root's filesystem, synced: a skeleton is made once per host change. */
static void
sync_fs(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd != -1) {
		syncfs(fd);
		close(fd);
	}
}

int
sbx_rootfs_skeleton(const struct sbx_store *s, char key[SBX_SKEL_KEY_LEN + 1], char *path,
    size_t size, struct sbx_err *e)
{
	char dir[1100], tmp[1200];
	struct stat st;
	uid_t uid = s->rootless ? geteuid() : 0;
	gid_t gid = s->rootless ? getegid() : 0;
	static unsigned serial;

	skeleton_key(uid, key);
	if (sbx_path(dir, sizeof dir, e, "%s/skel", s->root) == -1 ||
	    sbx_path(path, size, e, "%s/%s", dir, key) == -1)
		return -1;
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", dir);
	snprintf(tmp, sizeof tmp, "%s/.new-%ld-%u", dir, (long)getpid(), serial++);
	if (sbx_rm_rf(tmp, e) == -1)
		return -1;
	if (build_skeleton(tmp, uid, gid, e) == -1) {
		sbx_rm_rf(tmp, NULL);
		return -1;
	}
	/* Durable before it is named: every later sandbox trusts it as it is. */
	sync_fs(tmp);
	if (rename(tmp, path) == -1) {
		int err = errno;

		sbx_rm_rf(tmp, NULL);
		/* Another provision made it first: use theirs. */
		if ((err == EEXIST || err == ENOTEMPTY) && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		errno = err;
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", path);
	}
	sync_fs(dir);
	return 0;
}

int
sbx_rootfs_skeleton_gc(const struct sbx_store *s, const struct sbx_strv *keep, int dry_run,
    void (*report)(void *ctx, const char *kind, const char *name), void *ctx)
{
	char dir[1100], cur[SBX_SKEL_KEY_LEN + 1], p[1400];
	DIR *d;
	struct dirent *de;
	size_t i;

	skeleton_key(s->rootless ? geteuid() : 0, cur);
	snprintf(dir, sizeof dir, "%s/skel", s->root);
	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		int used = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, cur) == 0;

		for (i = 0; !used && i < keep->n; i++)
			used = strcmp(de->d_name, keep->v[i]) == 0;
		if (used)
			continue;
		report(ctx, "skeleton", de->d_name);
		if (!dry_run) {
			snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
			sbx_rm_rf(p, NULL);
		}
	}
	closedir(d);
	return 0;
}

/*
 * /etc/hosts: the host names of the allow-list at the addresses they were
 * pinned to. /etc/resolv.conf names a resolver only when the allow-list has
 * one (IP:53), over TCP: the relay carries TCP only, and UDP is refused.
 */
char *
sbx_rootfs_hosts_text(const struct sbx_manifest *m)
{
	char *hosts = NULL, *more;
	size_t i;

	if (asprintf(&hosts, "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n"
	    "127.0.1.1\t%s\n", m->sandbox_id) == -1)
		return NULL;
	for (i = 0; i < m->rt.egress_pins.n; i++) {
		const char *pin = m->rt.egress_pins.v[i], *sp = strchr(pin, ' ');

		if (sp == NULL)
			continue;
		if (asprintf(&more, "%s%s\t%.*s\n", hosts, sp + 1, (int)(sp - pin), pin) == -1) {
			free(hosts);
			return NULL;
		}
		free(hosts);
		hosts = more;
	}
	return hosts;
}

void
sbx_rootfs_resolv_text(const struct sbx_manifest *m, char *resolv, size_t size)
{
	struct sbx_egress p;
	const struct sbx_egress_rule *dns;
	char ip[INET6_ADDRSTRLEN];

	snprintf(resolv, size, "# sbx: network_policy %s, no resolver allowed\n",
	    m->network_policy);
	if (strcmp(m->network_policy, "egress-allow-list") == 0 &&
	    sbx_egress_parse(&m->allowed_egress, &m->rt.egress_pins, &p, NULL) == 0) {
		if ((dns = sbx_egress_resolver(&p)) != NULL) {
			inet_ntop(dns->family, dns->addr, ip, sizeof ip);
			snprintf(resolv, size, "# sbx: the resolver allowed_egress names, "
			    "over TCP\nnameserver %s\noptions use-vc\n", ip);
		}
		sbx_egress_free(&p);
	}
}

/*
 * The sandbox's own lower layer, above the skeleton: its /etc/hosts,
 * hostname and resolv.conf, below dirfd (owned by uid:gid).
 */
static int
write_own_lower(int dirfd, const struct sbx_manifest *m, uid_t uid, gid_t gid,
    struct sbx_err *e)
{
	char *hosts, resolv[200];
	int r;

	if ((mkdirat(dirfd, "etc", 0755) == -1 && errno != EEXIST) ||
	    fchmodat(dirfd, "etc", 0755, 0) == -1 ||
	    fchownat(dirfd, "etc", uid, gid, AT_SYMLINK_NOFOLLOW) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "the sandbox's own /etc");
	if ((hosts = sbx_rootfs_hosts_text(m)) == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	sbx_rootfs_resolv_text(m, resolv, sizeof resolv);
	r = write_at(dirfd, "etc/hosts", hosts, strlen(hosts), uid, gid, e) == -1 ||
	    write_at(dirfd, "etc/resolv.conf", resolv, strlen(resolv), uid, gid, e) == -1 ||
	    write_at(dirfd, "etc/hostname", m->sandbox_id, strlen(m->sandbox_id), uid, gid,
	    e) == -1 ? -1 : 0;
	free(hosts);
	return r;
}

/*
 * Only an allow-list's pinned names change after provision (the watchdog
 * rewrites /etc/hosts from the host): such a sandbox's own lower layer is a
 * directory of the state root. Any other's is a tmpfs its init makes, with
 * no files on the host to make and remove.
 */
static int
own_lower_on_disk(const struct sbx_manifest *m)
{
	return strcmp(m->network_policy, "egress-allow-list") == 0;
}

static int
own_lower_tmpfs(const struct sbx_manifest *m, struct sbx_err *e)
{
	int fs, mfd = -1;

	if ((fs = fsopen("tmpfs", FSOPEN_CLOEXEC)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "tmpfs for the sandbox's own /etc");
	if (fsconfig(fs, FSCONFIG_SET_STRING, "size", "256k", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", "64", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
	    (mfd = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	    MOUNT_ATTR_NOEXEC)) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "tmpfs for the sandbox's own /etc");
		close(fs);
		return -1;
	}
	close(fs);
	/* Made by the namespace's root: its files are the sandbox root's already. */
	if (write_own_lower(mfd, m, 0, 0, e) == -1) {
		close(mfd);
		return -1;
	}
	return mfd;
}

/*
 * In place, not by rename: the file is in the overlay's lower layer, where
 * the mounted overlay keeps the inode it looked up.
 */
int
sbx_rootfs_update_hosts(const struct sbx_store *s, const struct sbx_manifest *m,
    struct sbx_err *e)
{
	char path[1200], *hosts;
	int fd, r = 0;

	if (sbx_store_path(s, m->sandbox_id, "lower/etc/hosts", path, sizeof path, e) == -1)
		return -1;
	if ((hosts = sbx_rootfs_hosts_text(m)) == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    sbx_write_all(fd, hosts, strlen(hosts)) == -1)
		r = sbx_err_sys(e, SBX_EX_IOERR, "%s", path);
	if (fd != -1)
		close(fd);
	free(hosts);
	return r;
}

int
sbx_rootfs_own_lower(const struct sbx_store *s, const struct sbx_manifest *m, uid_t uid,
    gid_t gid, struct sbx_err *e)
{
	char p[1200];
	int fd, r;

	if (sbx_store_path(s, m->sandbox_id, "lower", p, sizeof p, e) == -1 ||
	    mkdir_owned(p, 0755, uid, gid, e) == -1)
		return -1;
	if ((fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p);
	r = write_own_lower(fd, m, uid, gid, e);
	close(fd);
	return r == -1 ? sbx_err_prefix(e, "%s", p) : 0;
}

const char *const *
sbx_rootfs_host_dirs(void)
{
	return host_dirs;
}

void
sbx_lowers_free(struct sbx_lowers *lw)
{
	size_t i;

	for (i = 0; i < lw->n; i++)
		free(lw->dirs[i]);
	free(lw->dirs);
	free(lw->base);
	free(lw->skel);
	memset(lw, 0, sizeof *lw);
}

int
sbx_rootfs_prepare(const struct sbx_store *s, const struct sbx_manifest *m, uid_t uid,
    gid_t gid, struct sbx_lowers *lw, struct sbx_err *e)
{
	char p[1200];
	struct stat st;

	memset(lw, 0, sizeof *lw);
	if (strcmp(m->rootfs, "host") == 0) {
		lw->base = strdup("host");
	} else if (!sbx_manifest_rootfs_is_snapshot(m->rootfs)) {
		lw->base = strdup(m->rootfs);
	} else if (sbx_snapshot_lowers(s, m->rootfs, &lw->dirs, &lw->n, &lw->base, e) == -1) {
		return -1;
	}
	if (lw->base == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if (strcmp(lw->base, "host") != 0) {
		if (stat(lw->base, &st) == -1)
			return sbx_err_sys(e, 0, "rootfs %s", lw->base);
		if (!S_ISDIR(st.st_mode))
			return sbx_err_set(e, SBX_EX_DATAERR, "rootfs %s: not a directory", lw->base);
	}
	if (sbx_store_path(s, m->sandbox_id, "layer", p, sizeof p, e) == -1 ||
	    mkdir_owned(p, 0700, uid, gid, e) == -1)
		return -1;
	if (m->res.disk_mb != SBX_UNSET_INT) {
		char img[1200];

		if (sbx_store_path(s, m->sandbox_id, "layer.img", img, sizeof img, e) == -1 ||
		    sbx_quota_create(img, p, m->res.disk_mb, uid, gid, e) == -1 ||
		    chmod(p, 0700) == -1)
			return -1;
	}
	if (
	    sbx_store_path(s, m->sandbox_id, "layer/upper", p, sizeof p, e) == -1 ||
	    mkdir_owned(p, 0755, uid, gid, e) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "layer/work", p, sizeof p, e) == -1 ||
	    mkdir_owned(p, 0700, uid, gid, e) == -1)
		return -1;
	if (strcmp(lw->base, "host") == 0) {
		char key[SBX_SKEL_KEY_LEN + 1];

		if (sbx_rootfs_skeleton(s, key, p, sizeof p, e) == -1)
			return -1;
		if ((lw->skel = strdup(p)) == NULL)
			return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		if (own_lower_on_disk(m) && sbx_rootfs_own_lower(s, m, uid, gid, e) == -1)
			return -1;
	}
	return 0;
}

/* Inside the namespaces */

/*
 * Open (creating as needed) path below the directory rootfd, never following a
 * symlink: a hostile lower layer cannot redirect a mount point outside the root.
 * What it makes is uid:gid's (unless uid is -1).
 */
int
sbx_rootfs_beneath(int rootfd, const char *path, int is_dir, uid_t uid, gid_t gid,
    struct sbx_err *e)
{
	char buf[1024], *comp, *save = NULL, *next;
	int fd = dup(rootfd), nfd;

	snprintf(buf, sizeof buf, "%s", path);
	for (comp = strtok_r(buf, "/", &save); comp && fd != -1; comp = next) {
		next = strtok_r(NULL, "/", &save);
		nfd = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC | (next || is_dir ?
		    O_DIRECTORY : 0));
		if (nfd == -1 && errno == ENOENT) {
			if (next || is_dir) {
				if (mkdirat(fd, comp, 0755) == 0) {
					if (uid != (uid_t)-1 && fchownat(fd, comp, uid, gid,
					    AT_SYMLINK_NOFOLLOW) == -1)
						goto fail;
				} else if (errno != EEXIST) {
					goto fail;
				}
			} else {
				int t = openat(fd, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC, 0644);

				if (t == -1 && errno != EEXIST)
					goto fail;
				if (t != -1 && uid != (uid_t)-1 && fchown(t, uid, gid) == -1) {
					close(t);
					goto fail;
				}
				if (t != -1)
					close(t);
			}
			nfd = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC |
			    (next || is_dir ? O_DIRECTORY : 0));
		}
		if (nfd == -1)
			goto fail;
		close(fd);
		fd = nfd;
	}
	return fd;
fail:
	sbx_err_sys(e, SBX_EX_OSERR, "mount point %s (a symlink or non-directory in the way?)",
	    path);
	close(fd);
	return -1;
}

static int
open_beneath(int rootfd, const char *path, int is_dir, struct sbx_err *e)
{
	return sbx_rootfs_beneath(rootfd, path, is_dir, (uid_t)-1, (gid_t)-1, e);
}

static int
fdpath(char *buf, size_t size, int fd)
{
	return snprintf(buf, size, "/proc/self/fd/%d", fd) >= (int)size ? -1 : 0;
}

enum { BIND_RO = 0, BIND_RW = 1, BIND_DEV = 2, BIND_REC = 4 };

/* Bind the tree at (srcfd, src) onto root/guest (with BIND_REC, the mounts
 * below it too), read-only unless BIND_RW;
 * nosuid always, nodev unless BIND_DEV (the few device nodes of /dev). */
static int
bind_into(int rootfd, int srcfd, const char *src, const char *guest, int how, struct sbx_err *e)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_NOSUID |
		(how & BIND_DEV ? 0 : MOUNT_ATTR_NODEV) };
	struct stat st;
	int tree, dst, r = -1;

	if (fstatat(srcfd, src, &st, AT_EMPTY_PATH) == -1)
		return sbx_err_sys(e, 0, "mount source %s", *src ? src : guest);
	if ((tree = open_tree(srcfd, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	    (how & BIND_REC ? AT_RECURSIVE : 0) | AT_EMPTY_PATH)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "open_tree %s", *src ? src : guest);
	if (!(how & BIND_RW))
		attr.attr_set |= MOUNT_ATTR_RDONLY;
	if (mount_setattr(tree, "", AT_EMPTY_PATH | (how & BIND_REC ? AT_RECURSIVE : 0), &attr,
	    sizeof attr) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "mount_setattr %s", *src ? src : guest);
		goto out;
	}
	if ((dst = open_beneath(rootfd, guest, S_ISDIR(st.st_mode), e)) == -1)
		goto out;
	if (move_mount(tree, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == -1)
		sbx_err_sys(e, SBX_EX_OSERR, "mount %s on %s", *src ? src : "source", guest);
	else
		r = 0;
	close(dst);
out:
	close(tree);
	return r;
}

/* Attach a detached tree the host made (its attributes set there) at root/guest. */
static int
attach_into(int rootfd, int tree, const char *guest, struct sbx_err *e)
{
	struct stat st;
	int dst, r = 0;

	if (fstat(tree, &st) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "mount source for %s", guest);
	if ((dst = open_beneath(rootfd, guest, S_ISDIR(st.st_mode), e)) == -1)
		return -1;
	if (move_mount(tree, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == -1)
		r = sbx_err_sys(e, SBX_EX_OSERR, "mount on %s", guest);
	close(dst);
	return r;
}

static int
open_dir(const char *path, struct sbx_err *e)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	return fd == -1 ? sbx_err_sys(e, SBX_EX_OSERR, "%s", path) : fd;
}

/* The sources of filesystem_mounts, one a descriptor. */
static int
open_sources(const struct sbx_store *s, const struct sbx_manifest *m, int *fds,
    const unsigned char *given, struct sbx_err *e)
{
	/* No symlink anywhere in a source's path: a sandbox that can write where
	 * another sandbox's mount source lies must not turn it into a link to
	 * the host's /etc. The operator names real paths. */
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	char what[1100];
	size_t i;

	for (i = 0; i < m->n_mounts; i++) {
		if (given[i])
			continue;   /* the host made it, and checked it */
		fds[i] = (int)syscall(SYS_openat2, AT_FDCWD, m->mounts[i].host, &how, sizeof how);
		if (fds[i] == -1) {
			if (errno == ELOOP)
				return sbx_err_set(e, SBX_EX_DATAERR, "filesystem_mounts: host %s: the "
				    "path goes through a symbolic link; name the real path",
				    m->mounts[i].host);
			return sbx_err_sys(e, 0, "filesystem_mounts: host %s", m->mounts[i].host);
		}
		/* Again on what was opened: the policy judged a path, this is the object. */
		snprintf(what, sizeof what, "filesystem_mounts: host %s", m->mounts[i].host);
		if (sbx_policy_never_fd(s, fds[i], m->mounts[i].host, what, e) == -1)
			return -1;
	}
	return 0;
}

int
sbx_rootfs_check_mounts(const struct sbx_manifest *m, struct sbx_err *e)
{
	size_t i;

	for (i = 0; i < m->n_mounts; i++)
		if (access(m->mounts[i].host, F_OK) == -1)
			return sbx_err_sys(e, SBX_EX_NOINPUT, "filesystem_mounts: host %s",
			    m->mounts[i].host);
	return 0;
}

/*
 * filesystem_mounts entry i as a detached tree of the host path, made by the
 * host's root: with idmap, ID-mapped so that the directory's owner is the
 * manifest's user inside (sbx-manifest(5)); read-only unless rw; never suid
 * or dev. The source alone, not what is mounted below it (a proc in a
 * chroot tree): the never-mountable check saw only the source.
 */
int
sbx_rootfs_mount_tree(const struct sbx_store *s, const struct sbx_manifest *m, size_t i,
    int idmap, struct sbx_err *e)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
	char what[1100], um[64], gm[64];
	unsigned uid, gid;
	struct stat st;
	int path, uns = -1, tree = -1;

	sbx_manifest_user_parse(m->user, &uid, &gid);
	snprintf(what, sizeof what, "filesystem_mounts: host %s", m->mounts[i].host);
	if ((path = (int)syscall(SYS_openat2, AT_FDCWD, m->mounts[i].host, &how,
	    sizeof how)) == -1) {
		if (errno == ELOOP)
			return sbx_err_set(e, SBX_EX_DATAERR, "%s: the path goes through a symbolic "
			    "link; name the real path", what);
		return sbx_err_sys(e, 0, "%s", what);
	}
	if (sbx_policy_never_fd(s, path, m->mounts[i].host, what, e) == -1 ||
	    fstat(path, &st) == -1)
		goto out;
	/* The owner of the files, the one pair mapped, to the sandbox user's
	 * host ID: they show as the sandbox user's, and what it makes there
	 * lands as the owner's. */
	snprintf(um, sizeof um, "%u %u 1\n", (unsigned)st.st_uid,
	    (unsigned)sbx_rt_int(m, "uid_base") + uid);
	snprintf(gm, sizeof gm, "%u %u 1\n", (unsigned)st.st_gid,
	    (unsigned)sbx_rt_int(m, "gid_base") + gid);
	if (idmap && (uns = sbx_userns_open(um, gm, "an ID-mapped mount", e)) == -1)
		goto out;
	if (idmap) {
		attr.attr_set |= MOUNT_ATTR_IDMAP;
		attr.userns_fd = (unsigned)uns;
	}
	if (strcmp(m->mounts[i].mode, "rw") != 0)
		attr.attr_set |= MOUNT_ATTR_RDONLY;
	if ((tree = open_tree(path, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)) == -1 ||
	    mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof attr) == -1) {
		int unmappable = errno == EINVAL && idmap;

		sbx_err_sys(e, unmappable ? SBX_EX_UNAVAILABLE : SBX_EX_OSERR, "%s: %s%s", what,
		    idmap ? "an ID-mapped mount" : "a bind mount", unmappable ? " (its filesystem "
		    "cannot map IDs; set idmap: false)" : "");
		if (tree != -1)
			close(tree);
		tree = -1;
	}
out:
	if (uns != -1)
		close(uns);
	close(path);
	return tree;
}

/* A root directory, by the path the policy judged: no symbolic link in it. */
static int
open_base(const char *path, struct sbx_err *e)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);

	if (fd == -1 && errno == ELOOP)
		return sbx_err_set(e, SBX_EX_DATAERR, "rootfs %s: the path goes through a symbolic "
		    "link; name the real path", path);
	if (fd == -1)
		return sbx_err_sys(e, 0, "rootfs %s", path);
	return fd;
}

void
sbx_rootfs_fds_close(struct sbx_rootfs_fds *f)
{
	size_t i;

	for (i = 0; i < f->n_layers; i++)
		if (f->layers[i] != -1)
			close(f->layers[i]);
	for (i = 0; f->src != NULL && i < f->n_src; i++)
		if (f->src[i] != -1)
			close(f->src[i]);
	free(f->layers);
	free(f->src);
	free(f->attach);
	if (f->dir != -1) close(f->dir);
	if (f->upper != -1) close(f->upper);
	if (f->work != -1) close(f->work);
	if (f->own_lower != -1) close(f->own_lower);
	if (f->base != -1) close(f->base);
	if (f->skel != -1) close(f->skel);
	memset(f, 0, sizeof *f);
	f->dir = f->upper = f->work = f->own_lower = f->base = f->skel = -1;
}

int
sbx_rootfs_open(const struct sbx_store *s, const struct sbx_manifest *m,
    const struct sbx_lowers *lw, int *layerfds, const int *srcfds, struct sbx_rootfs_fds *f,
    struct sbx_err *e)
{
	char p[1200];
	size_t i;

	memset(f, 0, sizeof *f);
	f->dir = f->upper = f->work = f->own_lower = f->base = f->skel = -1;
	f->mapped = layerfds != NULL;
	if ((f->layers = calloc(lw->n + 1, sizeof *f->layers)) == NULL ||
	    (f->src = calloc(m->n_mounts + 1, sizeof *f->src)) == NULL ||
	    (f->attach = calloc(m->n_mounts + 1, 1)) == NULL) {
		/* the given descriptors are ours from the call on, whatever happens */
		for (i = 0; layerfds && i < lw->n + (lw->skel != NULL); i++)
			close(layerfds[i]);
		for (i = 0; i < m->n_mounts; i++)
			if (srcfds[i] != -1)
				close(srcfds[i]);
		sbx_rootfs_fds_close(f);
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
	/* Taken first, so that whatever fails below, close() frees them. */
	for (i = 0; i < lw->n; i++)
		f->layers[i] = layerfds ? layerfds[i] : -1;
	f->n_layers = lw->n;
	if (layerfds && lw->skel)
		f->skel = layerfds[lw->n];
	for (i = 0; i < m->n_mounts; i++) {
		f->src[i] = srcfds[i];
		f->attach[i] = srcfds[i] != -1;
	}
	f->n_src = m->n_mounts;
	for (i = 0; !f->mapped && i < lw->n; i++)
		if ((f->layers[i] = open_dir(lw->dirs[i], e)) == -1)
			goto fail;
	if (lw->skel && !f->mapped && (f->skel = open_dir(lw->skel, e)) == -1)
		goto fail;
	if (strcmp(lw->base, "host") != 0 && ((f->base = open_base(lw->base, e)) == -1 ||
	    sbx_policy_never_fd(s, f->base, lw->base, "rootfs", e) == -1))
		goto fail;
	if (sbx_store_path(s, m->sandbox_id, NULL, p, sizeof p, e) == -1 ||
	    (f->dir = open_dir(p, e)) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "layer/upper", p, sizeof p, e) == -1 ||
	    (f->upper = open_dir(p, e)) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "layer/work", p, sizeof p, e) == -1 ||
	    (f->work = open_dir(p, e)) == -1)
		goto fail;
	if (strcmp(lw->base, "host") == 0 && own_lower_on_disk(m) &&
	    (sbx_store_path(s, m->sandbox_id, "lower", p, sizeof p, e) == -1 ||
	    (f->own_lower = open_dir(p, e)) == -1))
		goto fail;
	if (open_sources(s, m, f->src, f->attach, e) == -1)
		goto fail;
	return 0;
fail:
	sbx_rootfs_fds_close(f);
	return -1;
}

static int
mount_at(int rootfd, const char *guest, const char *fstype, unsigned long flags,
    const char *opts, struct sbx_err *e)
{
	char p[64];
	int fd, r = 0;

	if ((fd = open_beneath(rootfd, guest, 1, e)) == -1)
		return -1;
	fdpath(p, sizeof p, fd);
	if (mount(fstype, p, fstype, flags, opts) == -1)
		r = sbx_err_sys(e, SBX_EX_OSERR, "mount %s on %s", fstype, guest);
	close(fd);
	return r;
}

/*
 * A scratch tmpfs of mb MiB, for everyone (1777). It bounds inodes too, not
 * only bytes: each costs about 1 KiB of the host's kernel memory, and three
 * million would be 3 GB of slab. One inode per 4 KiB of size, at least 1024,
 * is room for many small files.
 */
static int
mount_tmpfs(int rootfd, const char *guest, long long mb, struct sbx_err *e)
{
	char v[96];

	snprintf(v, sizeof v, "mode=1777,size=%lldm,nr_inodes=%lld", mb,
	    mb * 256 < 1024 ? 1024 : mb * 256);
	return mount_at(rootfd, guest, "tmpfs", MS_NOSUID | MS_NODEV, v, e);
}

/*
 * A new proc refused (EPERM) in a user namespace: the kernel gives one only
 * while the proc its mount namespace sees is wholly visible. Name what covers
 * parts of it here, and what the operator can do.
 */
static int
proc_refused(struct sbx_err *e)
{
	char line[4096], covered[256] = "", mp[1024];
	size_t n = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "%*s %*s %*s %*s %1023s", mp) == 1 &&
		    strncmp(mp, "/proc/", 6) == 0 && n + strlen(mp) + 3 < sizeof covered)
			n += (size_t)snprintf(covered + n, sizeof covered - n, "%s%s", n ? ", " : "",
			    mp);
	if (f != NULL)
		fclose(f);
	return sbx_err_set(e, SBX_EX_UNAVAILABLE, "mount proc on /proc: Operation not permitted: "
	    "the kernel gives a user namespace a new proc only while the /proc it can see is "
	    "not partly covered, and here %s%s (as in Docker or bubblewrap containers); run sbx "
	    "where /proc is whole: on the host, or in a container with an unmasked /proc "
	    "(docker run --security-opt systempaths=unconfined, podman --security-opt "
	    "unmask=ALL), or unmount what covers it", n ? "mounts cover " : "parts are covered",
	    covered);
}

static int
make_dev(int rootfd, struct sbx_err *e)
{
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty",
		NULL };
	static const char *const links[][2] = { { "pts/ptmx", "ptmx" }, { "/proc/self/fd", "fd" },
		{ "/proc/self/fd/0", "stdin" }, { "/proc/self/fd/1", "stdout" },
		{ "/proc/self/fd/2", "stderr" } };
	char src[64], guest[64];
	int devfd, i;

	if (mount_at(rootfd, "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=1m,nr_inodes=256", e) == -1)
		return -1;
	for (i = 0; nodes[i]; i++) {
		snprintf(src, sizeof src, "/dev/%s", nodes[i]);
		snprintf(guest, sizeof guest, "/dev/%s", nodes[i]);
		/* Host device nodes keep working through a bind; mknod inside never would. */
		if (bind_into(rootfd, AT_FDCWD, src, guest, BIND_RW | BIND_DEV, e) == -1)
			return -1;
	}
	if (mount_at(rootfd, "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
	    "newinstance,ptmxmode=0666,mode=620", e) == -1 ||
	    mount_tmpfs(rootfd, "/dev/shm", 64, e) == -1)
		return -1;
	if ((devfd = open_beneath(rootfd, "/dev", 1, e)) == -1)
		return -1;
	close(devfd);
	if ((devfd = openat(rootfd, "dev", O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "/dev");
	for (i = 0; i < (int)SBX_ARRAY_LEN(links); i++)
		if (symlinkat(links[i][0], devfd, links[i][1]) == -1 && errno != EEXIST) {
			close(devfd);
			return sbx_err_sys(e, SBX_EX_OSERR, "/dev/%s", links[i][1]);
		}
	close(devfd);
	return 0;
}

/*
 * What /proc would give away of the host (its boot line, kernel config and
 * memory, keys, timers, devices, host-wide pressure): covered with an empty
 * read-only file or directory. Docker's list and more; sbx(7) says what stays.
 */
static const char *const proc_masked[] = { "kcore", "keys", "key-users", "timer_list",
	"timer_stats", "sched_debug", "latency_stats", "cmdline", "config.gz", "kallsyms",
	"acpi", "asound", "scsi", "pressure", "driver", NULL };

const char *const *
sbx_rootfs_proc_masked(void)
{
	return proc_masked;
}

static int
mask_proc(int rootfd, struct sbx_err *e)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
		MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
	int target[SBX_ARRAY_LEN(proc_masked)], tree[SBX_ARRAY_LEN(proc_masked)];
	int fs, mask = -1, proc = -1, cwd = -1, fd, r = -1, i;
	struct stat st;

	for (i = 0; i < (int)SBX_ARRAY_LEN(proc_masked); i++)
		target[i] = tree[i] = -1;
	if ((fs = fsopen("tmpfs", FSOPEN_CLOEXEC)) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "size", "4k", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", "4", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0555", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
	    (mask = fsmount(fs, FSMOUNT_CLOEXEC, 0)) == -1 ||
	    mkdirat(mask, "d", 0555) == -1 ||
	    (fd = openat(mask, "f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444)) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "the mask for /proc");
		goto out;
	}
	close(fd);
	if (mount_setattr(mask, "", AT_EMPTY_PATH, &ro, sizeof ro) == -1 ||
	    (proc = openat(rootfd, "proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "the mask for /proc");
		goto out;
	}
	/* Linux before 6.15 clones no detached mount (EINVAL): the mask is
	 * attached over /proc while the covers are cloned from it, then taken
	 * off again (MNT_DETACH at its root, reached by fchdir). */
	for (i = 0; proc_masked[i]; i++)
		target[i] = openat(proc, proc_masked[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if ((cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    move_mount(mask, "", proc, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "the mask for /proc");
		goto out;
	}
	for (i = 0; proc_masked[i]; i++)
		if (target[i] != -1 && fstat(target[i], &st) == 0)
			tree[i] = open_tree(mask, S_ISDIR(st.st_mode) ? "d" : "f",
			    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (fchdir(mask) == -1 || umount2(".", MNT_DETACH) == -1 || fchdir(cwd) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "take the mask off /proc");
		goto out;
	}
	for (i = 0; proc_masked[i]; i++) {
		if (target[i] == -1)
			continue;    /* this kernel has none */
		if (tree[i] == -1 || move_mount(tree[i], "", target[i], "", MOVE_MOUNT_F_EMPTY_PATH |
		    MOVE_MOUNT_T_EMPTY_PATH) == -1) {
			sbx_err_sys(e, SBX_EX_OSERR, "mask /proc/%s", proc_masked[i]);
			goto out;
		}
	}
	r = 0;
out:
	for (i = 0; i < (int)SBX_ARRAY_LEN(proc_masked); i++) {
		if (target[i] != -1)
			close(target[i]);
		if (tree[i] != -1)
			close(tree[i]);
	}
	if (cwd != -1)
		close(cwd);
	if (proc != -1)
		close(proc);
	if (mask != -1)
		close(mask);
	if (fs != -1)
		close(fs);
	return r;
}

static int
covered(const struct sbx_manifest *m, const char *guest)
{
	size_t i;

	for (i = 0; i < m->n_tmpfs; i++)
		if (strcmp(m->tmpfs[i].guest, guest) == 0)
			return 1;
	for (i = 0; i < m->n_mounts; i++)
		if (strcmp(m->mounts[i].guest, guest) == 0)
			return 1;
	return 0;
}

/*
 * The overlay, every layer named by a descriptor opened on the host's side
 * (/proc/self/fd/N): the snapshot layers top first, then the sandbox's own
 * lower layer and the skeleton (rootfs host) or the rootfs directory. No
 * path of the state root is walked here, as the sandbox's IDs, and any path
 * works; 128 layers fit in a page of options. The ID-mapped layers the host
 * made must be in this mount namespace for overlay to take them: they are
 * attached on the sandbox's directory, one over the other, and the overlay
 * goes on top. Returns the overlay's root (attached there too).
 */
static int
mount_overlay(const struct sbx_manifest *m, const struct sbx_lowers *lw,
    const struct sbx_rootfs_fds *f, struct sbx_err *e)
{
	char opts[4096];
	int lower[SBX_MAX_LAYERS + 3], etc = -1, fs = -1, mfd = -1;
	size_t n = 0, i, len;

	for (i = lw->n; i-- > 0;)
		lower[n++] = f->layers[i];
	if (strcmp(lw->base, "host") == 0) {
		if (f->own_lower == -1 && (etc = own_lower_tmpfs(m, e)) == -1)
			return -1;
		lower[n++] = f->own_lower != -1 ? f->own_lower : etc;
		lower[n++] = f->skel;
	} else {
		lower[n++] = f->base;
	}
	/* Linux before 6.15 takes no detached mount as a lower layer ("failed to
	 * clone lowerpath"): the own /etc tmpfs is attached like the others. */
	if (etc != -1 && move_mount(etc, "", f->dir, "", MOVE_MOUNT_F_EMPTY_PATH |
	    MOVE_MOUNT_T_EMPTY_PATH) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "attach the sandbox's own /etc");
		goto out;
	}
	for (i = 0; f->mapped && i <= lw->n; i++) {
		int fd = i < lw->n ? f->layers[i] : f->skel;

		if (fd != -1 && move_mount(fd, "", f->dir, "", MOVE_MOUNT_F_EMPTY_PATH |
		    MOVE_MOUNT_T_EMPTY_PATH) == -1) {
			sbx_err_sys(e, SBX_EX_OSERR, "attach an ID-mapped layer");
			goto out;
		}
	}
	len = (size_t)snprintf(opts, sizeof opts, "/proc/self/fd/%d", lower[0]);
	for (i = 1; i < n && len < sizeof opts; i++)
		len += (size_t)snprintf(opts + len, sizeof opts - len, ":/proc/self/fd/%d", lower[i]);
	if (len >= sizeof opts) {
		sbx_err_set(e, SBX_EX_UNAVAILABLE, "overlay options too long");
		goto out;
	}
	/* userxattr: in a user namespace overlay keeps whiteouts in user.* xattrs. */
	if ((fs = fsopen("overlay", FSOPEN_CLOEXEC)) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", opts, 0) == -1 ||
	    (snprintf(opts, sizeof opts, "/proc/self/fd/%d", f->upper),
	    fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", opts, 0)) == -1 ||
	    (snprintf(opts, sizeof opts, "/proc/self/fd/%d", f->work),
	    fsconfig(fs, FSCONFIG_SET_STRING, "workdir", opts, 0)) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
	    (mfd = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) == -1) {
		sbx_err_sys(e, errno == ENODEV ? SBX_EX_UNAVAILABLE : SBX_EX_OSERR, "overlay root");
		goto out;
	}
	if (move_mount(mfd, "", f->dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)
	    == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "attach the overlay root");
		close(mfd);
		mfd = -1;
	}
out:
	if (fs != -1)
		close(fs);
	if (etc != -1)
		close(etc);
	return mfd;
}

int
sbx_rootfs_enter(const struct sbx_manifest *m, const struct sbx_lowers *lw,
    const struct sbx_rootfs_fds *f, struct sbx_err *e)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	struct stat st;
	int rootfd, i;
	size_t k;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "make / private");
	if ((rootfd = mount_overlay(m, lw, f, e)) == -1)
		return -1;
	if (strcmp(lw->base, "host") == 0) {
		for (i = 0; host_dirs[i]; i++)
			if (lstat(host_dirs[i], &st) == 0 && S_ISDIR(st.st_mode) &&
			    bind_into(rootfd, AT_FDCWD, host_dirs[i], host_dirs[i], BIND_RO | BIND_REC,
			    e) == -1)
				goto fail;
	}
	if (mount_at(rootfd, "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, e) == -1) {
		if (errno == EPERM)
			proc_refused(e);
		goto fail;
	}
	if (mask_proc(rootfd, e) == -1 || make_dev(rootfd, e) == -1)
		goto fail;
	/* A source alone, not what is mounted below it (a proc in a chroot tree):
	 * the never-mountable check saw the source only. */
	for (k = 0; k < m->n_mounts; k++)
		if ((f->attach[k] ? attach_into(rootfd, f->src[k], m->mounts[k].guest, e) :
		    bind_into(rootfd, f->src[k], "", m->mounts[k].guest,
		    strcmp(m->mounts[k].mode, "rw") == 0 ? BIND_RW : BIND_RO, e)) == -1)
			goto fail;
	for (k = 0; k < m->n_tmpfs; k++)
		if (mount_tmpfs(rootfd, m->tmpfs[k].guest, m->tmpfs[k].size_mb, e) == -1)
			goto fail;
	/* A read-only root still needs a scratch /tmp; give one unless the manifest did. */
	if (m->read_only_root && !covered(m, "/tmp") &&
	    mount_tmpfs(rootfd, "/tmp", 64, e) == -1)
		goto fail;
	if (m->read_only_root && mount_setattr(rootfd, "", AT_EMPTY_PATH, &ro, sizeof ro) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "make the root read-only");
		goto fail;
	}
	if (fchdir(rootfd) == -1 || syscall(SYS_pivot_root, ".", ".") == -1 ||
	    umount2(".", MNT_DETACH) == -1 || chdir("/") == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "pivot_root into the sandbox's root");
		goto fail;
	}
	close(rootfd);
	return 0;
fail:
	close(rootfd);
	return -1;
}
