/* SPDX-License-Identifier: MIT */
/*
 * The microVM tier: a virtual machine of QEMU's `microvm` type with a kernel
 * of its own (KVM where the host's works, TCG otherwise), made from the
 * guest kit (contrib/guest/build.sh: Debian's kernel and busybox), whose
 * initramfs puts the root in place and hands over to the guest agent.
 *
 * The root: the sandbox's read-only layers under an overlay whose writable
 * layer is the sandbox's own ext4 disk image (disk_mb big: that is its
 * quota). The host's system directories under the skeleton (rootfs: host)
 * are assembled in QEMU's own mount namespace and shared read-only over
 * virtio-9p; a root directory (rootfs: DIR) is copied into a read-only ext4
 * disk image of its own, and then the guest's RAM is a file on a tmpfs
 * (VM_SHM), so that the VM can be snapshotted with its memory (vm_snap.c:
 * QEMU migrates no VM that has a 9p share mounted). The VM's RAM and vCPUs
 * are the manifest's; QEMU runs in the sandbox's cgroup as the sandbox's
 * first host ID, under its own seccomp sandbox (-sandbox on). Runs go
 * through the agent (vm_agent.c).
 */
#include <dirent.h>
#include <linux/close_range.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "driver.h"
#include "layer.h"
#include "ids.h"
#include "kvm.h"
#include "net.h"
#include "ns.h"
#include "oci.h"
#include "rootfs.h"
#include "sha256.h"
#include "snapshot.h"
#include "util.h"
#include "vm.h"

#ifndef SBX_LIBEXEC
#define SBX_LIBEXEC "/usr/local/libexec/sbx"
#endif

/* Host memory QEMU needs beside the guest's RAM (TCG's translation cache
 * of VM_TB_MB, its own heap and threads), under the sandbox's cgroup limit. */
#define VM_TB_MB 64
/* How long the kit's kernel may take to reach its panic under KVM (kvm_boots). */
#define VM_PROBE_S 20
#define VM_OVERHEAD_MB 256
/* QEMU's own threads (vCPUs, I/O workers), whatever the guest runs. */
#define VM_HOST_TASKS 64
/* The guest's RAM beyond memory_mb: its kernel, page cache and agent (the
 * commands' cgroup in the guest has memory_mb; Linux 6.1 does not boot in
 * 64 MiB). Without memory_mb the guest gets VM_MEMORY_MB. */
#define VM_GUEST_RESERVE_MB 128
#define VM_MEMORY_MB 512
/* The writable layer when disk_mb is not set. */
#define VM_DISK_MB 1024
/* A boot snapshot no sandbox started from for a week goes with a sweep. */
#define VM_BOOT_KEEP_S (7 * 86400.0)

static const char *
libexec(void)
{
	const char *d = getenv("SBX_LIBEXEC");

	return d && *d ? d : SBX_LIBEXEC;
}

/*
 * Whether the kit's kernel runs under KVM here: it boots with no root to
 * mount and must reach its panic (and QEMU its exit, -no-reboot) within
 * VM_PROBE_S. A /dev/kvm that makes VMs is not enough: a nested or
 * paravirtual KVM (PVM) may make one and never run a stock kernel in it.
 */
static int
kvm_boots(const char *qemu, const char *kernel)
{
	char *argv[] = { (char *)qemu, "-M", "microvm", "-accel", "kvm", "-cpu", "host", "-m",
		"128", "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot", "-serial",
		"stdio", "-kernel", (char *)kernel, "-append",
		"console=ttyS0 panic=-1 root=/dev/sbx-none", NULL };
	double deadline = sbx_monotonic() + VM_PROBE_S;
	char buf[4096];
	size_t have = 0, keep;
	int pfd[2], st, ok = 0;
	struct pollfd pl;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) == -1)
		return 0;
	if ((pid = fork()) == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(pfd[1], 1);
		dup2(null, 2);
		execv(qemu, argv);
		_exit(127);
	}
	close(pfd[1]);
	pl.fd = pfd[0];
	pl.events = POLLIN;
	while (pid > 0 && !ok && sbx_monotonic() < deadline &&
	    poll(&pl, 1, (int)((deadline - sbx_monotonic()) * 1000) + 1) > 0) {
		if ((n = read(pfd[0], buf + have, sizeof buf - 1 - have)) <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		ok = strstr(buf, "Kernel panic") != NULL;
		/* the words may straddle two reads: the tail stays */
		keep = have < 16 ? have : 16;
		memmove(buf, buf + have - keep, keep);
		have = keep;
	}
	close(pfd[0]);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	return ok;
}

/*
 * "kvm" where the kit's kernel boots under KVM (tried, not looked at),
 * else "tcg"; SBX_VM_ACCEL=tcg or kvm decides instead. What the try
 * found is kept in VM_RUN (until the host reboots), per kit.
 */
static const char *
vm_accel(const char *qemu, const char *kit)
{
	const char *env = getenv("SBX_VM_ACCEL"), *key = strrchr(kit, '/');
	char cache[300], tmp[320], kernel[1200], got[8] = "";
	int fd, ok;

	if (env && (strcmp(env, "tcg") == 0 || strcmp(env, "kvm") == 0))
		return strcmp(env, "kvm") == 0 ? "kvm" : "tcg";
	if (!sbx_kvm_hardware())
		return "tcg";
	snprintf(cache, sizeof cache, VM_RUN "/accel.%.64s", key ? key + 1 : kit);
	if ((fd = open(cache, O_RDONLY | O_CLOEXEC)) != -1) {
		ok = read(fd, got, sizeof got - 1) > 0;
		close(fd);
		if (ok && strncmp(got, "kvm", 3) == 0)
			return "kvm";
		if (ok && strncmp(got, "tcg", 3) == 0)
			return "tcg";
	}
	snprintf(kernel, sizeof kernel, "%s/vmlinuz", kit);
	ok = kvm_boots(qemu, kernel);
	snprintf(tmp, sizeof tmp, "%s.%ld", cache, (long)getpid());
	if ((mkdir(VM_RUN, 0711) == 0 || errno == EEXIST) &&
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) != -1) {
		if (sbx_write_all(fd, ok ? "kvm\n" : "tcg\n", 4) == -1 || rename(tmp, cache) == -1)
			unlink(tmp);
		close(fd);
	}
	return ok ? "kvm" : "tcg";
}

static void
vm_port_paths(struct vm_paths *p)
{
	char dir[sizeof p->dir];
	int i;

	/* A copy: GCC's -Wrestrict (at -O1, SANITIZE=1) cannot tell p->port[i]
	 * from p->dir. */
	memcpy(dir, p->dir, sizeof dir);
	for (i = 0; i < VM_PORTS; i++)
		snprintf(p->port[i], sizeof p->port[i], "%s/agent.%d", dir, i);
	snprintf(p->port[VM_CTL], sizeof p->port[VM_CTL], "%s/agent.ctl", dir);
}

int
vm_paths(const struct sbx_store *s, const struct sbx_manifest *m, struct vm_paths *p,
    struct sbx_err *e)
{
	memset(p, 0, sizeof *p);
	if (sbx_path(p->dir, sizeof p->dir, e, VM_RUN "/%s/%s", s->group, m->sandbox_id) == -1)
		return -1;
	vm_port_paths(p);
	snprintf(p->qmp, sizeof p->qmp, "%s/qmp", p->dir);
	snprintf(p->base, sizeof p->base, "%s/base", p->dir);
	if (sbx_path(p->ram, sizeof p->ram, e, VM_SHM "/%s/%s.ram", s->group, m->sandbox_id) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "base.img", p->base_img, sizeof p->base_img, e) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "disk.img", p->disk, sizeof p->disk, e) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "vmm.log", p->log, sizeof p->log, e) == -1 ||
	    sbx_store_path(s, m->sandbox_id, "agent.lock", p->lock, sizeof p->lock, e) == -1)
		return -1;
	return 0;
}

/* The agent's and monitor's paths from the state alone (the driver's
 * freeze has no store). */
int
vm_paths_rt(const struct sbx_manifest *m, struct vm_paths *p, struct sbx_err *e)
{
	const char *dir = sbx_rt_str(m, "dir"), *lock = sbx_rt_str(m, "agent_lock");

	memset(p, 0, sizeof *p);
	if (dir == NULL || lock == NULL)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "sandbox %s: no VM recorded", m->sandbox_id);
	if (sbx_path(p->dir, sizeof p->dir, e, "%s", dir) == -1 ||
	    sbx_path(p->lock, sizeof p->lock, e, "%s", lock) == -1)
		return -1;
	vm_port_paths(p);
	snprintf(p->qmp, sizeof p->qmp, "%s/qmp", p->dir);
	return 0;
}

/* vCPUs: cpu_cores rounded up (1 when unset). */
static int
vm_vcpus(const struct sbx_manifest *m)
{
	return isnan(m->res.cpu_cores) || m->res.cpu_cores <= 0 ? 1 : (int)ceil(m->res.cpu_cores);
}

/* The writable layer's disk, MiB. */
static long long
vm_disk_mb(const struct sbx_manifest *m)
{
	return m->res.disk_mb != SBX_UNSET_INT ? m->res.disk_mb : VM_DISK_MB;
}

/* The guest's RAM. */
static long long
vm_memory_mb(const struct sbx_manifest *m)
{
	return m->res.memory_mb != SBX_UNSET_INT ? m->res.memory_mb + VM_GUEST_RESERVE_MB :
	    VM_MEMORY_MB;
}

/*
 * The guest kit: $SBX_GUEST_KIT, or the one contrib/guest/build.sh (installed
 * as LIBEXEC/guest/build.sh) makes from Debian's packages into the state
 * root's guest/ on first use, keyed by what it is made of.
 */
static int
vm_kit(const struct sbx_store *s, char *kit, size_t size, struct sbx_err *e)
{
	const char *env = getenv("SBX_GUEST_KIT");
	char script[1100], out[1200], ready[1300];
	int pfd[2], st;
	ssize_t n;
	size_t len = 0;
	pid_t pid;

	if (env && *env) {
		snprintf(ready, sizeof ready, "%s/ready", env);
		if (access(ready, R_OK) == -1)
			return sbx_err_set(e, SBX_EX_UNAVAILABLE, "SBX_GUEST_KIT %s: not a built guest "
			    "kit (contrib/guest/build.sh makes one)", env);
		snprintf(kit, size, "%s", env);
		return 0;
	}
	snprintf(script, sizeof script, "%s/guest/build.sh", libexec());
	snprintf(out, sizeof out, "%s/guest", s->root);
	if (access(script, X_OK) == -1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level microvm: no guest kit "
		    "builder (%s) to make the guest's kernel", script);
	if (pipe2(pfd, O_CLOEXEC) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "pipe");
	if ((pid = fork()) == 0) {
		dup2(pfd[1], 1);
		execl(script, script, out, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (pid > 0 && len < sizeof out - 1 &&
	    (n = read(pfd[0], out + len, sizeof out - 1 - len)) > 0)
		len += (size_t)n;
	close(pfd[0]);
	out[len] = '\0';
	if (pid == -1 || waitpid(pid, &st, 0) == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level microvm: no guest kernel "
		    "could be built (%s failed: it needs Debian's linux-image-amd64 through apt)",
		    script);
	out[strcspn(out, "\n")] = '\0';
	snprintf(kit, size, "%s", out);
	return 0;
}

/* One file of a newc cpio archive (the kernel unpacks archives one after another). */
static int
cpio_entry(int fd, const char *name, mode_t mode, const char *data, size_t len)
{
	static const char zero[4];
	char h[111];
	size_t nl = strlen(name) + 1;

	snprintf(h, sizeof h, "070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X",
	    1u, (unsigned)mode, 0u, 0u, 1u, 0u, len, 0u, 0u, 0u, 0u, nl, 0u);
	if (sbx_write_all(fd, h, 110) == -1 || sbx_write_all(fd, name, nl) == -1 ||
	    sbx_write_all(fd, zero, (4 - (110 + nl) % 4) % 4) == -1 ||
	    (len && sbx_write_all(fd, data, len) == -1) ||
	    sbx_write_all(fd, zero, (4 - len % 4) % 4) == -1)
		return -1;
	return 0;
}

/* A key for what files a and b are now (where, their inode, size and times):
 * it changes with any write to either. */
static void
vm_stat_key(const struct stat *a, const struct stat *b, char hex[33])
{
	const struct stat *st[2] = { a, b };
	struct sbx_sha256 c;
	unsigned char d[32];
	char text[256];
	int i;

	sbx_sha256_init(&c);
	for (i = 0; i < 2; i++) {
		snprintf(text, sizeof text, "%llu %llu %lld %lld.%09ld %lld.%09ld\n",
		    (unsigned long long)st[i]->st_dev, (unsigned long long)st[i]->st_ino,
		    (long long)st[i]->st_size, (long long)st[i]->st_mtim.tv_sec,
		    st[i]->st_mtim.tv_nsec, (long long)st[i]->st_ctim.tv_sec, st[i]->st_ctim.tv_nsec);
		sbx_sha256_update(&c, text, strlen(text));
	}
	sbx_sha256_final(&c, d);
	sbx_hex(d, 16, hex);
}

/*
 * The kit's initramfs with this build's agent appended as /sbx-agent: the
 * state root's vm/initrd-<digest of both>, made once. Which one the kit's
 * and agent's files make is remembered by what they are now (vm_stat_key),
 * in the link vm/initrd-at-<key>: a VM's start reads and hashes neither
 * while they stay as they are.
 */
static int
vm_initrd(const struct sbx_store *s, const char *kit, char *path, size_t size, struct sbx_err *e)
{
	char src[1300], agent[1100], hex[65], key[33], link[1300], tmp[1400], name[80];
	char *kbuf = NULL, *abuf = NULL;
	size_t klen = 0, alen = 0;
	struct sbx_sha256 c;
	struct stat kst, ast;
	unsigned char d[32];
	ssize_t n;
	int fd, r = -1;

	snprintf(src, sizeof src, "%s/initrd", kit);
	snprintf(agent, sizeof agent, "%s/sbx-agent", libexec());
	if (stat(src, &kst) == 0 && stat(agent, &ast) == 0) {
		vm_stat_key(&kst, &ast, key);
		if (sbx_path(link, sizeof link, e, "%s/vm/initrd-at-%s", s->root, key) == -1)
			return -1;
		if ((n = readlink(link, name, sizeof name - 1)) > 0) {
			name[n] = '\0';
			if (strncmp(name, "initrd-", 7) == 0 && strchr(name, '/') == NULL &&
			    sbx_path(path, size, e, "%s/vm/%s", s->root, name) == 0 &&
			    access(path, R_OK) == 0)
				return 0;
		}
	} else {
		link[0] = '\0';
	}
	if (sbx_read_file(src, 256u << 20, &kbuf, &klen, e) == -1)
		return sbx_err_prefix(e, "the guest kit");
	if (sbx_read_file(agent, 64u << 20, &abuf, &alen, e) == -1) {
		free(kbuf);
		return sbx_err_prefix(e, "the guest agent");
	}
	sbx_sha256_init(&c);
	sbx_sha256_update(&c, kbuf, klen);
	sbx_sha256_update(&c, abuf, alen);
	sbx_sha256_final(&c, d);
	sbx_hex(d, 8, hex);
	snprintf(tmp, sizeof tmp, "%s/vm", s->root);
	if (sbx_mkdir_p(tmp, 0700, e) == -1)
		goto out;
	if (sbx_path(path, size, e, "%s/vm/initrd-%s", s->root, hex) == -1)
		goto out;
	if (access(path, R_OK) == 0) {
		r = 0;
		goto remember;
	}
	snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1) {
		sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", tmp);
		goto out;
	}
	if (sbx_write_all(fd, kbuf, klen) == -1 ||
	    cpio_entry(fd, "sbx-agent", S_IFREG | 0755, abuf, alen) == -1 ||
	    cpio_entry(fd, "TRAILER!!!", 0, NULL, 0) == -1 || fsync(fd) == -1) {
		sbx_err_sys(e, SBX_EX_IOERR, "%s", tmp);
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) == -1) {
		sbx_err_sys(e, SBX_EX_IOERR, "%s", path);
		unlink(tmp);
		goto out;
	}
	r = 0;
remember:
	/* Best effort: without it, the next start reads and hashes again. */
	if (link[0] && snprintf(tmp, sizeof tmp, "%s.%ld", link, (long)getpid()) < (int)sizeof tmp) {
		snprintf(name, sizeof name, "initrd-%s", hex);
		unlink(tmp);
		if (symlink(name, tmp) == 0 && rename(tmp, link) == -1)
			unlink(tmp);
	}
out:
	free(kbuf);
	free(abuf);
	return r;
}

/* A snapshot with the memory of a microVM (sbx-fork's clones start from it). */
static int
vm_memory_snapshot(const struct sbx_store *s, const char *id)
{
	struct sbx_snapshot sn;
	int r;

	if (sbx_snapshot_load(s, id, &sn, NULL) == -1)
		return 0;
	r = sn.has_memory && sn.memory_tier != NULL && strcmp(sn.memory_tier, VM_TIER) == 0;
	sbx_snapshot_free(&sn);
	return r;
}

/* What the tier does not do (yet), each a 69 naming the key. */
static int
vm_refuse(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	if (sbx_manifest_rootfs_is_snapshot(m->rootfs) && !vm_memory_snapshot(s, m->rootfs))
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "rootfs %s: isolation_level microvm "
		    "starts from a memory snapshot of a microVM only (not from files alone, yet)",
		    m->rootfs);
	if (m->n_mounts > 0 || m->n_tmpfs > 0)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "%s: isolation_level microvm shares "
		    "no host directory and makes no tmpfs yet", m->n_mounts ? "filesystem_mounts" :
		    "tmpfs");
	if (m->security.landlock == 1 || m->security.landlock_network == 1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "security.landlock: isolation_level "
		    "microvm applies no Landlock rules (its boundary is the VM's own kernel)");
	if (strcmp(m->security.seccomp, "default") != 0 &&
	    strcmp(m->security.seccomp, "unconfined") != 0)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "security.seccomp %s: isolation_level "
		    "microvm loads no seccomp program into its guest (default: the guest kernel "
		    "is the boundary, and QEMU runs under its own filter)", m->security.seccomp);
	return 0;
}

static int
vm_check(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	char path[1200];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (s->rootless)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level microvm: sbx runs VMs "
		    "as root only (for now)");
	if (cpus > 0 && vm_vcpus(m) > cpus)
		return sbx_err_set(e, SBX_EX_DATAERR, "resource_allocation.cpu_cores %g: %d vCPUs, "
		    "more than this host's %ld", m->res.cpu_cores, vm_vcpus(m), cpus);
	if (vm_refuse(s, m, e) == -1 || sbx_net_check(s, m, e) == -1)
		return -1;
	if (sbx_net_wanted(m) && access("/dev/net/tun", R_OK | W_OK) == -1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "network_policy %s: isolation_level "
		    "microvm needs /dev/net/tun for the VM's tap", m->network_policy);
	if (oci_find("qemu-system-x86_64", path, sizeof path) == -1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level microvm: "
		    "qemu-system-x86_64 is not installed (Debian: qemu-system-x86)");
	if (oci_find("mkfs.ext4", path, sizeof path) == -1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level microvm: mkfs.ext4 is "
		    "not installed (Debian: e2fsprogs)");
	snprintf(path, sizeof path, "%s/sbx-agent", libexec());
	if (access(path, R_OK) == -1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "isolation_level microvm: no guest agent "
		    "at %s", path);
	return 0;
}

/* The writable layer: a sparse file of disk_mb with an empty ext4, made by
 * mkfs.ext4 on the file itself (nothing is mounted on the host). */
static int
vm_disk(const struct sbx_manifest *m, const struct vm_paths *p, uid_t uid, struct sbx_err *e)
{
	long long mb = vm_disk_mb(m);
	char mkfs[256];
	int fd, st;
	pid_t pid;

	if ((fd = open(p->disk, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p->disk);
	if (ftruncate(fd, (off_t)mb << 20) == -1 || fchown(fd, uid, uid) == -1) {
		close(fd);
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p->disk);
	}
	close(fd);
	oci_find("mkfs.ext4", mkfs, sizeof mkfs);
	if ((pid = fork()) == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		execl(mkfs, mkfs, "-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1",
		    "-O", "^has_journal", p->disk, (char *)NULL);
		_exit(127);
	}
	if (pid == -1 || waitpid(pid, &st, 0) == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return sbx_err_set(e, SBX_EX_CANTCREAT, "%s: mkfs.ext4 failed", p->disk);
	return 0;
}

int
vm_disk_base(const struct sbx_manifest *m)
{
	const char *b = sbx_rt_str(m, "base");

	return b != NULL ? strcmp(b, "disk") == 0 : strcmp(m->rootfs, "host") != 0;
}

int
vm_nic(const struct sbx_manifest *m)
{
	if (sbx_net_wanted(m))
		return VM_NIC_TAP;
	return strcmp(m->network_policy, "host") == 0 ? VM_NIC_USER : VM_NIC_NONE;
}

/* The tree nftw walks now (nftw passes no context). */
static struct vm_tree *walking;

static int
tree_visit(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	struct vm_tree *t = walking;
	char line[128], link[512];
	ssize_t n;

	(void)flag;
	(void)f;
	t->kb += S_ISREG(st->st_mode) ? (st->st_size + 4095) / 4096 * 4 + 4 : 4;
	t->inodes++;
	snprintf(line, sizeof line, "\n%o %u %u %lld %lld.%09ld ", (unsigned)st->st_mode,
	    (unsigned)st->st_uid, (unsigned)st->st_gid, (long long)st->st_size,
	    (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	sbx_sha256_update(&t->sha, line, strlen(line));
	sbx_sha256_update(&t->sha, path, strlen(path));
	if (S_ISLNK(st->st_mode) && (n = readlink(path, link, sizeof link)) > 0)
		sbx_sha256_update(&t->sha, link, (size_t)n);
	return 0;
}

int
vm_tree(const char *dir, struct vm_tree *t)
{
	unsigned char d[32];
	int r;

	memset(t, 0, sizeof *t);
	sbx_sha256_init(&t->sha);
	walking = t;
	r = nftw(dir, tree_visit, 32, FTW_PHYS);
	walking = NULL;
	sbx_sha256_final(&t->sha, d);
	sbx_hex(d, 8, t->digest);
	return r;
}

/* In a child before it execs: every descriptor but 0, 1, 2 and the n in
 * keep (-1s skipped) closed at the exec, the caller's among them. */
static void
vm_keep_fds(const int *keep, size_t n)
{
	size_t i;

	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	for (i = 0; i < n; i++)
		if (keep[i] > 2)
			fcntl(keep[i], F_SETFD, 0);
}

/* The root directory (rootfs: DIR) as a read-only ext4 image: mkfs.ext4 -d,
 * with room for its tree and no more (the guest mounts it read-only). It
 * reads the tree as uid, so that the guest gets what the sandbox's users
 * could read, as over 9p, and the image is root's after. */
static int
vm_base_image(const struct sbx_manifest *m, const struct vm_paths *p, uid_t uid,
    const struct vm_tree *t, struct sbx_err *e)
{
	char mkfs[256], size[32], inodes[32], dev[32], root[32];
	int fd, rfd, st;
	pid_t pid;

	snprintf(size, sizeof size, "%lldk", t->kb + t->kb / 8 + 16384);
	snprintf(inodes, sizeof inodes, "%lld", t->inodes + t->inodes / 8 + 1024);
	if ((fd = open(p->base_img, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600)) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p->base_img);
	if (fchown(fd, uid, uid) == -1) {
		close(fd);
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p->base_img);
	}
	/* the directory opened here: its parents need not be the uid's to pass */
	if ((rfd = open(m->rootfs, O_PATH | O_DIRECTORY)) == -1) {
		close(fd);
		return sbx_err_sys(e, SBX_EX_NOINPUT, "rootfs %s", m->rootfs);
	}
	snprintf(dev, sizeof dev, "/proc/self/fd/%d", fd);
	snprintf(root, sizeof root, "/proc/self/fd/%d", rfd);
	oci_find("mkfs.ext4", mkfs, sizeof mkfs);
	if ((pid = fork()) == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		/* dumpable again after the change of IDs: else /proc/self/fd is root's */
		if (setgroups(0, NULL) == -1 || setresgid(uid, uid, uid) == -1 ||
		    setresuid(uid, uid, uid) == -1 || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == -1)
			_exit(126);
		{
			const int keep[] = { fd, rfd };

			vm_keep_fds(keep, 2);
		}
		execl(mkfs, mkfs, "-q", "-F", "-m", "0", "-N", inodes, "-O", "^has_journal",
		    "-E", "root_owner=0:0", "-d", root, dev, size, (char *)NULL);
		_exit(127);
	}
	close(rfd);
	if (pid == -1 || waitpid(pid, &st, 0) == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		close(fd);
		return sbx_err_set(e, SBX_EX_CANTCREAT, "rootfs %s: mkfs.ext4 -d could not copy "
		    "it into %s (every file must be readable by others)", m->rootfs, p->base_img);
	}
	/* QEMU reads it; nobody but root writes it */
	if (fchown(fd, 0, 0) == -1 || fchmod(fd, 0644) == -1) {
		close(fd);
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p->base_img);
	}
	close(fd);
	return 0;
}

/* A checkpoint's file, read-only: a regular file, no link followed (a
 * checkpoint may come from another host). */
static int
vm_open_file(const char *path, struct sbx_err *e)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW);

	if (fd == -1)
		return sbx_err_sys(e, SBX_EX_DATAERR, "the memory checkpoint: %s", path);
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return sbx_err_set(e, SBX_EX_DATAERR, "the memory checkpoint: %s is not a regular "
		    "file", path);
	}
	return fd;
}

/* The RAM file's copier (vm_ram): its process and the pipe its error
 * comes through, or -1. */
struct vm_copier {
	pid_t pid;
	int fd;
};

/*
 * A checkpoint's RAM (in, of size bytes) into the VM's RAM file (out) by a
 * child in the sandbox's cgroup, which the tmpfs pages are charged to (as
 * QEMU's would be). It goes on while QEMU starts: QEMU reads no RAM before
 * the incoming migration, which waits for it (vm_ram_wait).
 */
static int
vm_ram_copy(int in, int out, off_t size, const struct sbx_cgroup *cg, struct vm_copier *c,
    struct sbx_err *e)
{
	int pp[2];

	if (pipe2(pp, O_CLOEXEC) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "pipe");
	if ((c->pid = fork()) == 0) {
		struct sbx_err ce = { 0 };
		int r;

		close(pp[0]);
		r = sbx_cgroup_enter(cg, 0, &ce);
		if (r == 0 && (r = vm_copy_fd(in, out, size)) == -1)
			sbx_err_sys(&ce, SBX_EX_IOERR, "the memory checkpoint's RAM");
		if (r == -1)
			(void)!write(pp[1], &ce, sizeof ce);
		_exit(r == -1);
	}
	close(pp[1]);
	if (c->pid == -1) {
		close(pp[0]);
		return sbx_err_sys(e, SBX_EX_OSERR, "fork");
	}
	c->fd = pp[0];
	return 0;
}

/* The copier done (0), or its error. */
static int
vm_ram_wait(struct vm_copier *c, struct sbx_err *e)
{
	ssize_t n;
	int st = 0, r;

	if (c->pid <= 0)
		return 0;
	n = read(c->fd, e, sizeof *e);
	while ((r = (int)waitpid(c->pid, &st, 0)) == -1 && errno == EINTR)
		;
	close(c->fd);
	c->pid = c->fd = -1;
	if (r == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		if (n != (ssize_t)sizeof *e)
			sbx_err_set(e, SBX_EX_IOERR, "the memory checkpoint's RAM: cannot copy it");
		return -1;
	}
	return 0;
}

/* The guest's RAM, a file of VM_SHM that uid (QEMU) owns, of the VM's
 * size: empty, or (from, c) a checkpoint's being copied in. VM_SHM is
 * root's: a directory of anyone else's there is refused. */
static int
vm_ram(const struct sbx_store *s, const struct sbx_manifest *m, const struct vm_paths *p,
    uid_t uid, const char *from, const struct sbx_cgroup *cg, struct vm_copier *c,
    struct sbx_err *e)
{
	char g[256];
	struct stat st;
	off_t size = (off_t)vm_memory_mb(m) << 20;
	int fd, in = -1, r;

	snprintf(g, sizeof g, VM_SHM "/%s", s->group);
	if ((mkdir(VM_SHM, 0711) == -1 && errno != EEXIST) ||
	    (mkdir(g, 0711) == -1 && errno != EEXIST))
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", g);
	if (lstat(VM_SHM, &st) == -1 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022) || lstat(g, &st) == -1 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022))
		return sbx_err_set(e, SBX_EX_CANTCREAT, "%s: not a directory of root's alone", g);
	/* a checkpoint's RAM, from elsewhere: a regular file of its own, of
	 * the VM's size (its vm.conf says so too) */
	if (from != NULL && (in = vm_open_file(from, e)) == -1)
		return -1;
	if (in != -1 && (fstat(in, &st) == -1 || st.st_size != size)) {
		close(in);
		return sbx_err_set(e, SBX_EX_DATAERR, "the memory checkpoint: %s is not of the "
		    "VM's %lld MiB", from, (long long)(size >> 20));
	}
	if ((fd = open(p->ram, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1) {
		r = sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p->ram);
	} else if (ftruncate(fd, size) == -1 || fchown(fd, uid, uid) == -1)
		r = sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p->ram);
	else
		r = in == -1 ? 0 : vm_ram_copy(in, fd, size, cg, c, e);
	if (fd != -1)
		close(fd);
	if (in != -1)
		close(in);
	return r;
}

/* The VM's directory under VM_RUN, the user QEMU runs as its owner. */
static int
vm_dir(const struct sbx_store *s, const struct vm_paths *p, uid_t uid, struct sbx_err *e)
{
	char g[256];
	int tries;

	snprintf(g, sizeof g, VM_RUN "/%s", s->group);
	/* the last VM's teardown of the group may remove its directory in between */
	for (tries = 0; tries < 3; tries++) {
		if ((mkdir(VM_RUN, 0711) == -1 && errno != EEXIST) ||
		    (mkdir(g, 0711) == -1 && errno != EEXIST))
			return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", g);
		if (mkdir(p->dir, 0700) == 0)
			break;
		if (errno != ENOENT)
			return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p->dir);
	}
	if (tries == 3 || mkdir(p->base, 0755) == -1 || chown(p->dir, uid, uid) == -1)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", p->dir);
	return 0;
}

/* In QEMU's mount namespace: the root's read-only layers at p->base. */
static int
mount_base(const struct sbx_manifest *m, const struct sbx_lowers *lw, const char *base)
{
	const char *const *d;
	char to[1200];
	struct stat st;
	unsigned long ro = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return -1;
	if (strcmp(m->rootfs, "host") != 0)
		return mount(m->rootfs, base, NULL, MS_BIND | MS_REC, NULL) == -1 ||
		    mount(NULL, base, NULL, ro, NULL) == -1 ? -1 : 0;
	if (mount(lw->skel, base, NULL, MS_BIND, NULL) == -1 || mount(NULL, base, NULL, ro, NULL) == -1)
		return -1;
	for (d = sbx_rootfs_host_dirs(); *d; d++) {
		if (lstat(*d, &st) == -1 || !S_ISDIR(st.st_mode))
			continue;
		snprintf(to, sizeof to, "%s%s", base, *d);
		if (lstat(to, &st) == -1 || !S_ISDIR(st.st_mode))
			continue;
		if (mount(*d, to, NULL, MS_BIND | MS_REC, NULL) == -1 ||
		    mount(NULL, to, NULL, ro, NULL) == -1)
			return -1;
	}
	return 0;
}

/* In QEMU's mount namespace: /dev/kvm as a node of its own that l->uid
 * owns (QEMU 7.2 opens the path; the host's node stays root's alone). */
static int
own_kvm(const struct vm_paths *p, uid_t uid)
{
	char dir[300], node[320];
	struct stat st;

	if (stat("/dev/kvm", &st) == -1 || !S_ISCHR(st.st_mode))
		return -1;
	snprintf(dir, sizeof dir, "%s/dev", p->dir);
	snprintf(node, sizeof node, "%s/kvm", dir);
	if ((mkdir(dir, 0700) == -1 && errno != EEXIST) ||
	    mount("sbx-dev", dir, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=4k,mode=0700") == -1)
		return -1;
	if (mknod(node, S_IFCHR | 0600, st.st_rdev) == -1 || chown(node, uid, uid) == -1 ||
	    mount(node, "/dev/kvm", NULL, MS_BIND, NULL) == -1)
		return -1;
	return umount2(dir, MNT_DETACH);
}

struct vm_launch {
	char qemu[256], kit[1100], initrd[1200];
	const char *accel;
	int kernel_fd, initrd_fd, disk_fd, log_fd;
	int base_fd;             /* the base as a disk (vm_disk_base), else -1: 9p */
	int state_fd;            /* a checkpoint's device state, else -1 */
	struct vm_tree root;     /* a new disk base's tree, walked once */
	int incoming;            /* restored from a checkpoint: -incoming defer */
	struct vm_copier ram;    /* the checkpoint's RAM being copied in */
	uid_t uid;
};

/* QEMU's command line: at most VM_ARGV arguments, VM_ARGBUF of them made
 * in buf; -1 (nothing to run) past either. */
#define VM_ARGV 96
#define VM_ARGBUF 32
static int
qemu_argv(const struct sbx_manifest *m, const struct vm_paths *p, const struct vm_launch *l,
    int tap, char **v, char (*buf)[1400])
{
	int n = 0, b = 0, i, over = 0;
	int64_t pids, mem;
	long khz = 0;
	FILE *f = l->incoming ? NULL : fopen("/proc/cpuinfo", "re");
	char line[256];
	double mhz;

	/* a boot's TSC frequency (tsc_early_khz) */
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "cpu MHz : %lf", &mhz) == 1) {
			khz = (long)(mhz * 1000);
			break;
		}
	if (f)
		fclose(f);
#define ARG(s) (n < VM_ARGV - 1 ? (void)(v[n++] = (char *)(s)) : (void)(over = 1))
#define FMT(...) (b < VM_ARGBUF ? (void)snprintf(buf[b], sizeof buf[b], __VA_ARGS__), \
	ARG(buf[b++]) : (void)(over = 1))
	ARG(l->qemu);
	ARG("-M");
	ARG(l->base_fd != -1 ? "microvm,x-option-roms=off,rtc=on,memory-backend=ram" :
	    "microvm,x-option-roms=off,rtc=on");
	if (l->base_fd != -1) {
		ARG("-object");
		FMT("memory-backend-file,id=ram,size=%lldM,mem-path=%s,share=on", vm_memory_mb(m),
		    p->ram);
	}
	ARG("-accel");
	if (strcmp(l->accel, "kvm") == 0)
		ARG("kvm");
	else
		FMT("tcg,thread=multi,tb-size=%d", VM_TB_MB);
	ARG("-cpu");
	ARG(strcmp(l->accel, "kvm") == 0 ? "host" : "max");
	ARG("-smp");
	FMT("%d", vm_vcpus(m));
	ARG("-m");
	FMT("%lld", vm_memory_mb(m));
	ARG("-nodefaults");
	ARG("-no-user-config");
	ARG("-display");
	ARG("none");
	ARG("-no-reboot");
	ARG("-serial");
	ARG("stdio");
	/* A restore's guest has booted: QEMU reading in a kernel and an
	 * initramfs it never runs cost it some 10 ms of its start. */
	if (!l->incoming) {
		ARG("-kernel");
		FMT("/proc/self/fd/%d", l->kernel_fd);
		ARG("-initrd");
		FMT("/proc/self/fd/%d", l->initrd_fd);
		/* the limits too, set before a boot snapshot is saved (the
		 * setup of a VM started from it then writes none that match) */
		vm_limits(m, &pids, &mem);
		ARG("-append");
		FMT("console=ttyS0 quiet loglevel=1 panic=-1 init_on_free=1 sbx_vm=1%s%s%s%.0ld "
		    "sbx_pids=%lld sbx_mem=%lld", m->read_only_root == 1 ? " sbx_ro=1" : "",
		    l->base_fd != -1 ? " sbx_base=disk" : "", khz ? " tsc_early_khz=" : "", khz,
		    (long long)pids, (long long)mem);
	}
	if (l->base_fd != -1) {
		ARG("-drive");
		FMT("file=/proc/self/fd/%d,if=none,format=raw,id=base,readonly=on", l->base_fd);
		ARG("-device");
		ARG("virtio-blk-device,drive=base,serial=sbx-base");
	} else {
		ARG("-fsdev");
		FMT("local,id=base,path=%s,security_model=none,readonly=on,multidevs=remap", p->base);
		ARG("-device");
		ARG("virtio-9p-device,fsdev=base,mount_tag=base");
	}
	ARG("-drive");
	FMT("file=/proc/self/fd/%d,if=none,format=raw,id=layer,cache=writeback,discard=unmap%s%.0lld%s%.0lld",
	    l->disk_fd, m->res.io_mbps != SBX_UNSET_INT ? ",throttling.bps-total=" : "",
	    m->res.io_mbps != SBX_UNSET_INT ? m->res.io_mbps << 20 : 0,
	    m->res.io_iops != SBX_UNSET_INT ? ",throttling.iops-total=" : "",
	    m->res.io_iops != SBX_UNSET_INT ? m->res.io_iops : 0);
	ARG("-device");
	ARG("virtio-blk-device,drive=layer,serial=sbx-layer");
	ARG("-device");
	ARG("virtio-serial-device,max_ports=8");
	for (i = 0; i < VM_CHANNELS; i++) {
		ARG("-chardev");
		FMT("socket,id=a%d,path=%s,server=on,wait=off", i, p->port[i]);
		ARG("-device");
		if (i == VM_CTL)
			FMT("virtserialport,chardev=a%d,name=sbx.ctl", i);
		else
			FMT("virtserialport,chardev=a%d,name=sbx.%d", i, i);
	}
	if (vm_nic(m) != VM_NIC_NONE) {
		/* The same MAC in every VM (a boot snapshot's device state holds
		 * it): the agent sets the sandbox's own at setup. */
		ARG("-netdev");
		if (tap != -1)
			FMT("tap,id=n0,fd=%d,vhost=off", tap);
		else
			ARG("user,id=n0");
		ARG("-device");
		ARG("virtio-net-device,netdev=n0,mac=02:73:00:00:00:01");
	}
	ARG("-qmp");
	FMT("unix:%s,server=on,wait=off", p->qmp);
	if (l->incoming) {
		ARG("-incoming");
		ARG("defer");
	}
	ARG("-sandbox");
	ARG("on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny");
	v[n] = NULL;
	return over ? -1 : 0;
#undef ARG
#undef FMT
}

/* In the VMM's network namespace: the tap its NIC goes through, tap0, no
 * IPv6 of its own (the namespace's interfaces only carry the guest's). */
static int
vm_tap(void)
{
	struct ifreq ifr = { 0 };
	int fd;

	sbx_write_str("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	if ((fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC)) == -1)
		return -1;
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "tap0");
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	if (ioctl(fd, TUNSETIFF, &ifr) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The VMM, detached: QEMU in mount and network namespaces of its own (the
 * base root; no interface but lo, or with a network the tap, bridged there
 * to the veth sbx_net_create_bridged gives it before QEMU starts), in cg,
 * as l->uid. Its PID, or -1.
 */
static pid_t
vm_spawn(const struct sbx_store *s, struct sbx_manifest *m, const struct vm_paths *p,
    const struct sbx_lowers *lw, const struct vm_launch *l, const struct sbx_cgroup *cg,
    struct sbx_err *e)
{
	char *argv[VM_ARGV], buf[VM_ARGBUF][1400], c = 0;
	int pp[2], go[2], net = vm_nic(m) == VM_NIC_TAP;
	pid_t pid, vmm = -1;
	int st;

	if (pipe2(pp, O_CLOEXEC) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "pipe");
	if (pipe2(go, O_CLOEXEC) == -1) {
		close(pp[0]);
		close(pp[1]);
		return sbx_err_sys(e, SBX_EX_OSERR, "pipe");
	}
	if ((pid = fork()) == 0) {
		pid_t q;

		setsid();
		if ((q = fork()) == 0) {
			int null = open("/dev/null", O_RDONLY), tap = -1;
			sigset_t none;

			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			/* Made, then reported: the network comes from outside. With
			 * the host's (user-mode networking), QEMU keeps its own. */
			if (unshare(CLONE_NEWNS |
			    (vm_nic(m) == VM_NIC_USER ? 0 : CLONE_NEWNET)) == -1 ||
			    (net && (tap = vm_tap()) == -1))
				_exit(71);
			q = getpid();
			if (write(pp[1], &q, sizeof q) != (ssize_t)sizeof q ||
			    read(go[0], &c, 1) != 1 || c != 'g')
				_exit(71);
			if (qemu_argv(m, p, l, tap, argv, buf) == -1 ||
			    (l->base_fd == -1 && mount_base(m, lw, p->base) == -1) ||
			    (strcmp(l->accel, "kvm") == 0 && own_kvm(p, l->uid) == -1) ||
			    sbx_cgroup_enter(cg, 0, NULL) == -1)
				_exit(71);
			dup2(null, 0);
			dup2(l->log_fd, 1);
			dup2(l->log_fd, 2);
			if (setgroups(0, NULL) == -1 || setresgid(l->uid, l->uid, l->uid) == -1 ||
			    setresuid(l->uid, l->uid, l->uid) == -1 ||
			    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
				_exit(71);
			{
				const int keep[] = { l->kernel_fd, l->initrd_fd, l->disk_fd,
					l->base_fd, l->state_fd, tap };

				vm_keep_fds(keep, sizeof keep / sizeof *keep);
			}
			execv(l->qemu, argv);
			_exit(127);
		}
		_exit(q == -1);
	}
	close(pp[1]);
	close(go[0]);
	if (pid == -1) {
		close(pp[0]);
		close(go[1]);
		return sbx_err_sys(e, SBX_EX_OSERR, "fork");
	}
	if (read(pp[0], &vmm, sizeof vmm) != (ssize_t)sizeof vmm)
		vmm = -1;
	close(pp[0]);
	waitpid(pid, &st, 0);
	if (vmm <= 0) {
		close(go[1]);
		return sbx_err_set(e, SBX_EX_OSERR, "cannot start the VMM%s", net ?
		    " (its network namespace or tap)" : "");
	}
	if (net && sbx_net_create_bridged(s, m, vmm, "tap0", e) == -1) {
		kill(vmm, SIGKILL);
		close(go[1]);
		return -1;
	}
	if (write(go[1], "g", 1) != 1) {
		kill(vmm, SIGKILL);
		close(go[1]);
		return sbx_err_sys(e, SBX_EX_OSERR, "start the VMM");
	}
	close(go[1]);
	return vmm;
}

/* The last line QEMU or the guest's console wrote, for a message. */
static void
log_tail(const char *log, char *out, size_t size)
{
	char *buf = NULL, *end, *line;
	size_t len = 0;

	out[0] = '\0';
	if (sbx_read_file(log, 1 << 20, &buf, &len, NULL) == -1)
		return;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	end = buf + len;
	*end = '\0';
	line = memrchr(buf, '\n', len);
	snprintf(out, size, "%s", line ? line + 1 : buf);
	out[strcspn(out, "\r")] = '\0';
	free(buf);
}

/* Record the VMM so that a sweep finds it without the sandbox's state. */
static void
vm_pidfile(const struct vm_paths *p, pid_t pid)
{
	char path[300], text[64];

	snprintf(path, sizeof path, "%s/vmm.pid", p->dir);
	snprintf(text, sizeof text, "%ld %llu\n", (long)pid, sbx_proc_starttime(pid));
	sbx_write_atomic_nosync(path, text, strlen(text), 0644, NULL);
}

static int
vm_teardown(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e);

static void
vm_launch_close(struct vm_launch *l)
{
	int *fds[] = { &l->kernel_fd, &l->initrd_fd, &l->disk_fd, &l->log_fd, &l->base_fd,
		&l->state_fd };
	size_t i;
	struct sbx_err ignored;

	for (i = 0; i < sizeof fds / sizeof *fds; i++)
		if (*fds[i] != -1) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	if (l->ram.pid > 0) {
		kill(l->ram.pid, SIGKILL);
		vm_ram_wait(&l->ram, &ignored);
	}
}

/* SBX_VM_BOOT_SNAPSHOT=0: every VM boots (for tests and comparisons). */
static int
vm_no_boot_snapshot(void)
{
	const char *v = getenv("SBX_VM_BOOT_SNAPSHOT");

	return v != NULL && strcmp(v, "0") == 0;
}

/*
 * Snapshot-boot: the boot snapshot for what m's VM is made of (the kit, the
 * initramfs with this agent, QEMU, the accelerator, vCPUs, RAM, the
 * writable disk's size, read_only_root, and the root directory's tree) in
 * boot: the state root's vm/boot-KEY. Whether it is there.
 */
static int
vm_boot_path(const struct sbx_store *s, const struct sbx_manifest *m, const struct vm_launch *l,
    char *boot, size_t size, struct sbx_err *e)
{
	struct sbx_sha256 c;
	struct stat st;
	unsigned char d[32];
	char text[3000], hex[33];

	if (stat(l->qemu, &st) == -1)
		return sbx_err_sys(e, SBX_EX_UNAVAILABLE, "%s", l->qemu);
	snprintf(text, sizeof text, "kit %s\ninitrd %s\nqemu %s %lld %lld\naccel %s\nvcpus %d\n"
	    "memory %lld\ndisk %lld\nro %d\nroot %s %s\nnic %d\n", l->kit, l->initrd, l->qemu,
	    (long long)st.st_size, (long long)st.st_mtim.tv_sec, l->accel, vm_vcpus(m),
	    vm_memory_mb(m), vm_disk_mb(m),
	    m->read_only_root == 1, m->rootfs, l->root.digest, vm_nic(m));
	sbx_sha256_init(&c);
	sbx_sha256_update(&c, text, strlen(text));
	sbx_sha256_final(&c, d);
	sbx_hex(d, 16, hex);
	if (sbx_path(boot, size, e, "%s/vm/boot-%s", s->root, hex) == -1)
		return -1;
	return 0;
}

/* A checkpoint's VM: its vCPUs, RAM and accelerator, which a restore must match. */
static int
vm_conf_check(const struct sbx_manifest *m, const char *ckpt, const char *accel,
    struct sbx_err *e)
{
	static const char *const nics[] = { "no network (deny-all)",
		"a network of its own (egress-allow-list)", "the host's network (host)" };
	char path[1300], text[256], acc[16] = "", *at;
	int vcpus = 0, fd, nic = VM_NIC_NONE;
	long long mb = 0, disk = 0;
	ssize_t n;
	struct stat st;

	snprintf(path, sizeof path, "%s/vm.conf", ckpt);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return sbx_err_sys(e, SBX_EX_DATAERR, "the memory checkpoint: %s", path);
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, text, sizeof text - 1) : -1;
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	if (sscanf(text, "vcpus %d memory_mb %lld accel %15s disk_mb %lld", &vcpus, &mb, acc,
	    &disk) != 4)
		return sbx_err_set(e, SBX_EX_DATAERR, "the memory checkpoint: %s is damaged", path);
	if (vcpus != vm_vcpus(m) || mb != vm_memory_mb(m) || disk != vm_disk_mb(m))
		return sbx_err_set(e, SBX_EX_DATAERR, "resource_allocation: the memory snapshot's VM "
		    "has %d vCPUs, %lld MiB of RAM and a disk of %lld MiB, one restored from it the "
		    "same (the manifest asks for %d, %lld and %lld)", vcpus, mb, disk, vm_vcpus(m),
		    vm_memory_mb(m), vm_disk_mb(m));
	if (strcmp(acc, accel) != 0)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "the memory snapshot's VM ran under %s, "
		    "this host's under %s: its state does not carry over", acc, accel);
	/* Its devices are the VM's: a NIC, of the same kind, or none. */
	if ((at = strstr(text, "\nnic ")) != NULL && at[5] >= '0' && at[5] <= '2')
		nic = at[5] - '0';
	if (nic != vm_nic(m))
		return sbx_err_set(e, SBX_EX_DATAERR, "network_policy %s: the memory snapshot's VM "
		    "had %s, one restored from it the same", m->network_policy, nics[nic]);
	return 0;
}

/* The restored VM goes on from the checkpoint's migration stream (fd). */
static int
vm_incoming(const struct vm_paths *p, int fd, double deadline, struct sbx_err *e)
{
	char cmd[128], reply[1024];
	int q = -1, r = -1;

	while ((q = vm_qmp_open(p->qmp, e)) == -1 && sbx_monotonic() < deadline)
		usleep(5000);
	if (q == -1)
		return -1;
	snprintf(cmd, sizeof cmd, "{\"execute\":\"migrate-incoming\",\"arguments\":"
	    "{\"uri\":\"fd:%d\"}}", fd);
	if (vm_qmp_cmd(q, VM_QMP_IGNORE_SHARED, -1, reply, sizeof reply, e) == -1 ||
	    vm_qmp_cmd(q, cmd, -1, reply, sizeof reply, e) == -1)
		goto out;
	for (;;) {
		if (vm_qmp_cmd(q, "{\"execute\":\"query-migrate\"}", -1, reply, sizeof reply,
		    e) == -1)
			goto out;
		if (strstr(reply, "\"completed\"") != NULL)
			break;
		if (strstr(reply, "\"failed\"") != NULL || sbx_monotonic() > deadline) {
			sbx_err_set(e, SBX_EX_DATAERR, "the memory checkpoint did not load: %s", reply);
			goto out;
		}
		usleep(2000);
	}
	r = vm_qmp_cmd(q, "{\"execute\":\"cont\"}", -1, reply, sizeof reply, e);
out:
	close(q);
	return r;
}

/* The VM's disks and RAM: a checkpoint's copies (the base and the device
 * state opened from it), or new ones. */
static int
vm_files(const struct sbx_store *s, const struct sbx_manifest *m, const struct vm_paths *p,
    struct vm_launch *l, const struct sbx_cgroup *cg, const char *ckpt, struct sbx_err *e)
{
	char from[1300], state[1300];

	if (ckpt == NULL) {
		if (vm_disk(m, p, l->uid, e) == -1)
			return -1;
		if (!vm_disk_base(m))
			return 0;
		if (vm_base_image(m, p, l->uid, &l->root, e) == -1 ||
		    vm_ram(s, m, p, l->uid, NULL, cg, &l->ram, e) == -1)
			return -1;
		if ((l->base_fd = open(p->base_img, O_RDONLY)) == -1)
			return sbx_err_sys(e, SBX_EX_OSERR, "%s", p->base_img);
		return 0;
	}
	/* The clone's own copies of the writable layer and the RAM. */
	snprintf(from, sizeof from, "%s/disk.img", ckpt);
	if (vm_copy_sparse(from, p->disk, 0600, l->uid, e) == -1)
		return -1;
	snprintf(from, sizeof from, "%s/ram", ckpt);
	if (vm_ram(s, m, p, l->uid, from, cg, &l->ram, e) == -1)
		return -1;
	/* the base, read-only, a name of the sandbox's own (its next snapshot
	 * copies it; retention may take the checkpoint's) */
	snprintf(from, sizeof from, "%s/base.img", ckpt);
	snprintf(state, sizeof state, "%s/state", ckpt);
	if ((l->base_fd = vm_open_file(from, e)) == -1 ||
	    (l->state_fd = vm_open_file(state, e)) == -1)
		return -1;
	snprintf(state, sizeof state, "/proc/self/fd/%d", l->base_fd);
	if (linkat(AT_FDCWD, state, AT_FDCWD, p->base_img, AT_SYMLINK_FOLLOW) == -1 &&
	    vm_copy_sparse(from, p->base_img, 0644, 0, e) == -1)
		return -1;
	return 0;
}

/*
 * The VMM started: its checkpoint loaded (l->state_fd) once its RAM is in
 * (l->ram), its agent answering; a fresh boot saved as the boot snapshot
 * boot (unless ""), the sandbox's setup given with the HELLO; a clone's
 * processes thawed (thaw), the runs whose callers were the parent's
 * detached.
 */
static int
vm_come_up(const struct sbx_manifest *m, const struct vm_paths *p, struct vm_launch *l,
    const char *boot, int thaw, char *release, size_t size, double deadline,
    struct sbx_err *e)
{
	char tail[300];
	int fd;

	if (vm_ram_wait(&l->ram, e) == -1)
		return -1;
	if (l->state_fd != -1 && vm_incoming(p, l->state_fd, deadline, e) == -1) {
		log_tail(p->log, tail, sizeof tail);
		if (tail[0])
			sbx_err_prefix(e, "the VM did not resume (its log: %s)", tail);
		return -1;
	}
	/* Booted, the agent answering, nothing of the sandbox's yet: what the
	 * next sandbox of the same makes starts from. A failure costs only that. */
	if (boot[0]) {
		struct sbx_err be;

		if ((fd = vm_agent_open(p, 0, deadline, release, size, e)) == -1)
			goto gone;
		close(fd);
		vm_boot_save(m, p, boot, &be);
	}
	if (vm_agent_setup(p, m, deadline, boot[0] ? NULL : release, size, e) == -1)
		goto gone;
	return thaw ? vm_agent_freeze(p, 0, 1, e) : 0;
gone:
	log_tail(p->log, tail, sizeof tail);
	if (tail[0])
		sbx_err_prefix(e, "the VM did not come up (its log: %s)", tail);
	return -1;
}

int
vm_start(const struct sbx_store *s, struct sbx_manifest *m, const char *ckpt, struct sbx_err *e)
{
	struct vm_paths p;
	struct vm_launch l;
	struct sbx_lowers lw;
	struct sbx_cg_host h;
	struct sbx_cgroup cg;
	struct sbx_cg_limits lim = { 0 };
	char spec[4096], kpath[1200], release[128], from[1300], boot[1200] = "";
	const char *bootenv = getenv("SBX_VM_BOOT_TIMEOUT");
	double boot_s = bootenv && *bootenv ? atof(bootenv) : 300, deadline;
	struct sbx_err ignored;
	pid_t pid;
	int disk_base = ckpt != NULL || vm_disk_base(m), from_boot = 0;

	m->has_rt = 1;
	memset(&lw, 0, sizeof lw);
	memset(&l, 0, sizeof l);
	l.kernel_fd = l.initrd_fd = l.disk_fd = l.log_fd = l.base_fd = l.state_fd = -1;
	l.ram.pid = l.ram.fd = -1;
	if (vm_kit(s, l.kit, sizeof l.kit, e) == -1 || oci_find("qemu-system-x86_64", l.qemu,
	    sizeof l.qemu) == -1 || vm_initrd(s, l.kit, l.initrd, sizeof l.initrd, e) == -1 ||
	    sbx_tier_pick_ids(s, m, e) == -1 || vm_paths(s, m, &p, e) == -1 ||
	    sbx_net_prepare(m, e) == -1)
		return -1;
	l.accel = vm_accel(l.qemu, l.kit);
	l.uid = (uid_t)sbx_rt_int(m, "uid_base");
	if (ckpt == NULL && disk_base && vm_tree(m->rootfs, &l.root) == -1)
		return sbx_err_sys(e, SBX_EX_NOINPUT, "rootfs %s", m->rootfs);
	/* A VM of a root directory starts from its boot snapshot, or makes it. */
	if (ckpt == NULL && disk_base && !vm_no_boot_snapshot()) {
		if (vm_boot_path(s, m, &l, boot, sizeof boot, e) == -1)
			return -1;
		snprintf(from, sizeof from, "%s/vm.conf", boot);
		if (access(from, R_OK) == 0) {
			ckpt = boot;
			from_boot = 1;
			utimensat(AT_FDCWD, from, NULL, 0);
		}
	}
	if (ckpt != NULL && vm_conf_check(m, ckpt, l.accel, e) == -1)
		return -1;
	l.incoming = ckpt != NULL;
	if (sbx_rt_set_str(m, "acceleration", l.accel) == -1 ||
	    sbx_rt_set_str(m, "dir", p.dir) == -1 || sbx_rt_set_str(m, "agent_lock", p.lock) == -1 ||
	    sbx_rt_set_int(m, "vcpus", vm_vcpus(m)) == -1 ||
	    sbx_rt_set_int(m, "memory_mb", vm_memory_mb(m)) == -1 ||
	    sbx_rt_set_int(m, "disk_mb", vm_disk_mb(m)) == -1 ||
	    sbx_rt_set_str(m, "base", disk_base ? "disk" : "9p") == -1)
		return sbx_err_oom(e);
	if (!disk_base && sbx_rootfs_prepare(s, m, 0, 0, &lw, e) == -1)
		goto fail;
	if (sbx_cgroup_host(&h, e) == -1 || sbx_cgroup_create(&h, s->group, m->sandbox_id, &cg, e) == -1)
		goto fail_limits;
	if (sbx_cgroup_spec(&cg, &h, spec, sizeof spec) == -1 || sbx_rt_set_str(m, "cgroup", spec) == -1) {
		sbx_err_set(e, SBX_EX_SOFTWARE, "cgroup path too long");
		goto fail;
	}
	lim.cpu_cores = isnan(m->res.cpu_cores) ? 0 : m->res.cpu_cores;
	lim.memory_bytes = (vm_memory_mb(m) + VM_OVERHEAD_MB) << 20;
	lim.pids = VM_HOST_TASKS + vm_vcpus(m);
	if (sbx_cgroup_set_limits(&cg, &lim, e) == -1)
		goto fail_limits;
	if (vm_dir(s, &p, l.uid, e) == -1)
		goto fail;
	if (vm_files(s, m, &p, &l, &cg, ckpt, e) == -1)
		goto fail;
	snprintf(kpath, sizeof kpath, "%s/vmlinuz", l.kit);
	if ((!l.incoming && ((l.kernel_fd = open(kpath, O_RDONLY)) == -1 ||
	    (l.initrd_fd = open(l.initrd, O_RDONLY)) == -1)) ||
	    (l.disk_fd = open(p.disk, O_RDWR)) == -1 ||
	    (l.log_fd = open(p.log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "the VM's files");
		goto fail;
	}
	sbx_crash_point("vm-spawn");
	if ((pid = vm_spawn(s, m, &p, &lw, &l, &cg, e)) == -1)
		goto fail;
	vm_pidfile(&p, pid);
	if (sbx_rt_set_int(m, "pid", pid) == -1 ||
	    sbx_rt_set_int(m, "start_ticks", (long long)sbx_proc_starttime(pid)) == -1) {
		sbx_err_oom(e);
		goto fail;
	}
	deadline = sbx_monotonic() + boot_s;
	if (vm_come_up(m, &p, &l, from_boot ? "" : boot, ckpt != NULL && !from_boot, release,
	    sizeof release, deadline, e) == -1)
		goto fail;
	if (from_boot && sbx_rt_set_str(m, "started_from", "boot snapshot") == -1) {
		sbx_err_oom(e);
		goto fail;
	}
	if (sbx_rt_set_str(m, "guest_kernel", release) == -1) {
		sbx_err_oom(e);
		goto fail;
	}
	if (lw.skel && sbx_rt_set_str(m, "skeleton", strrchr(lw.skel, '/') + 1) == -1) {
		sbx_err_oom(e);
		goto fail;
	}
	vm_launch_close(&l);
	sbx_lowers_free(&lw);
	return 0;
fail_limits:
	sbx_err_prefix(e, "resource_allocation cannot be enforced");
fail:
	vm_launch_close(&l);
	sbx_lowers_free(&lw);
	vm_teardown(s, m, &ignored);
	return -1;
}

static int
vm_create(const struct sbx_store *s, struct sbx_manifest *m, struct sbx_err *e)
{
	return vm_start(s, m, NULL, e);
}

static int
vm_alive(const struct sbx_manifest *m)
{
	return sbx_rt_int(m, "pid") > 0 && sbx_proc_alive((pid_t)sbx_rt_int(m, "pid"),
	    (unsigned long long)sbx_rt_int(m, "start_ticks"));
}

/* Pause and snapshots: the sandbox's processes frozen in the guest by the
 * agent (vm_proto.h FREEZE: consistent files, and the runs a clone keeps),
 * then the vCPUs stopped (QMP stop: a guest that only says it froze stops
 * all the same); thawed the other way round. */
static int
vm_freeze(const struct sbx_manifest *m, int frozen, struct sbx_err *e)
{
	struct vm_paths p;
	char reply[512];

	if (vm_paths_rt(m, &p, e) == -1)
		return -1;
	if (frozen)
		return vm_agent_freeze(&p, 1, 0, e) == -1 ? -1 :
		    vm_qmp(p.qmp, "{\"execute\":\"stop\"}", reply, sizeof reply, e);
	return vm_qmp(p.qmp, "{\"execute\":\"cont\"}", reply, sizeof reply, e) == -1 ? -1 :
	    vm_agent_freeze(&p, 0, 0, e);
}

/* The state root's directories in VM_RUN and VM_SHM, once its last VM is gone. */
static void
vm_group_rmdir(const struct sbx_store *s)
{
	char g[256];

	if (!s->group[0])
		return;
	snprintf(g, sizeof g, VM_RUN "/%s", s->group);
	rmdir(g);
	snprintf(g, sizeof g, VM_SHM "/%s", s->group);
	rmdir(g);
}

/* Kill the VMM and remove its cgroup, directory and disk; missing ones are fine. */
static int
vm_teardown(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	struct vm_paths p;
	struct sbx_cg_host h;
	struct sbx_cgroup cg;
	int r = 0;

	if (sbx_driver_halt_pid(m, "the VMM", e) == -1)
		r = -1;
	/* The veth went with the VMM's network namespace; rules, relay and lease now. */
	if (sbx_net_wanted(m) && sbx_net_destroy(s, m, r == 0 ? e : NULL) == -1)
		r = -1;
	if (sbx_rt_str(m, "cgroup") != NULL && sbx_cgroup_host(&h, NULL) == 0 &&
	    sbx_cgroup_from_spec(&h, sbx_rt_str(m, "cgroup"), &cg, NULL) == 0) {
		if (sbx_cgroup_destroy(&cg, r == 0 ? e : NULL) == -1)
			r = -1;
		else if (s->group[0])
			sbx_cgroup_remove_group(&h, s->group, 0);
	}
	if (vm_paths(s, m, &p, NULL) == 0) {
		if (sbx_rm_rf(p.dir, r == 0 ? e : NULL) == -1)
			r = -1;
		if (unlink(p.ram) == -1 && errno != ENOENT && r == 0)
			r = sbx_err_sys(e, SBX_EX_IOERR, "%s", p.ram);
		vm_group_rmdir(s);
		if (unlink(p.disk) == -1 && errno != ENOENT && r == 0)
			r = sbx_err_sys(e, SBX_EX_IOERR, "%s", p.disk);
		if (unlink(p.base_img) == -1 && errno != ENOENT && r == 0)
			r = sbx_err_sys(e, SBX_EX_IOERR, "%s", p.base_img);
	}
	return r;
}

/*
 * A pool's member: its agent runs a command of sbx's own once (itself, as
 * root: a block of each disk read, then its exit). Under TCG a new VMM
 * translates each guest path the first time it runs it: a claimer's first
 * run took ~230 ms here, ~110 ms after this, ~30 ms the next. Under KVM
 * there is nothing to translate.
 */
static void
vm_warm(const struct sbx_store *s, const struct sbx_manifest *m)
{
	char *const argv[] = { VM_AGENT_PATH, VM_AGENT_WARM, NULL };
	struct sbx_exec x = { .argv = argv, .user = "0:0", .workdir = "/", .timeout_s = 60 };
	struct sbx_exec_result res;
	struct sbx_err e;
	int null, io[3];

	if (sbx_rt_str(m, "acceleration") == NULL || strcmp(sbx_rt_str(m, "acceleration"), "tcg") ||
	    (null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		return;
	io[0] = io[1] = io[2] = null;
	x.stdio = io;
	if (vm_exec_flags(s, m, &x, VM_EXEC_SYSTEM, &res, &e) == 0)
		sbx_trace_free(&res.trace);
	close(null);
}

/* The guest's processes end with the VMM that runs them. */
static int
vm_halt(const struct sbx_manifest *m, struct sbx_err *e)
{
	return sbx_driver_halt_pid(m, "the VMM", e);
}

static int
vm_destroy(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	return vm_teardown(s, m, e);
}

/*
 * The allow-list's host names resolved again: the rules (the host's, as for
 * every tier) take the new addresses, and the guest's /etc/hosts, written by
 * its agent, names them. QEMU's user-mode network (host) has no pins.
 */
static int
vm_repin(const struct sbx_store *s, struct sbx_manifest *m, int *changed, struct sbx_err *e)
{
	struct vm_paths p;
	char *hosts;
	int r;

	if (sbx_net_refresh(s, m, changed, e) == -1)
		return -1;
	if (!*changed || vm_nic(m) != VM_NIC_TAP)
		return 0;
	if ((hosts = sbx_rootfs_hosts_text(m)) == NULL)
		return sbx_err_oom(e);
	r = vm_paths(s, m, &p, e) == -1 ? -1 : vm_agent_hosts(&p, hosts, e);
	free(hosts);
	return r;
}

static int
vm_usage(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_usage *u,
    struct sbx_err *e)
{
	struct vm_paths p;
	struct vm_stats st;

	if (sbx_ns_usage(s, m, u, e) == -1)
		u->memory_bytes = u->pids = u->disk_bytes = -1;
	/* A paused VM's vCPUs are stopped: its agent answers nothing, and the
	 * host's figures are what there is. */
	if (m->status == SBX_STATUS_PAUSED || m->status == SBX_STATUS_SNAPSHOTTING)
		return 0;
	/* What the guest counts: its memory in use, its tasks, its disk. */
	if (vm_paths(s, m, &p, e) == -1 || vm_agent_stats(&p, &st, e) == -1)
		return -1;
	u->memory_bytes = st.memory_bytes;
	u->pids = st.pids;
	u->disk_bytes = st.disk_bytes;
	return 0;
}

/* RAM files of VMs whose sandbox and directory are gone (a crash between
 * the two removals). */
static void
vm_sweep_ram(const struct sbx_store *s, int busy, int dry_run, sbx_driver_report report,
    void *ctx)
{
	char g[256], path[600], id[256];
	struct dirent *d;
	struct stat st;
	DIR *dir;
	size_t n;

	snprintf(g, sizeof g, VM_SHM "/%s", s->group);
	if ((dir = opendir(g)) == NULL)
		return;
	while ((d = readdir(dir)) != NULL) {
		n = strlen(d->d_name);
		if (d->d_name[0] == '.' || n < 5 || n - 4 >= sizeof id ||
		    strcmp(d->d_name + n - 4, ".ram") != 0)
			continue;
		memcpy(id, d->d_name, n - 4);
		id[n - 4] = '\0';
		snprintf(path, sizeof path, VM_RUN "/%s/%s", s->group, id);
		if (sbx_store_exists(s, id) || (busy && lstat(path, &st) == 0))
			continue;
		report(ctx, "vm-ram", id);
		snprintf(path, sizeof path, "%s/%s", g, d->d_name);
		if (!dry_run)
			unlink(path);
	}
	closedir(dir);
}

/* Boot snapshots unused for VM_BOOT_KEEP_S (a restore touches their vm.conf),
 * and the halves of saves that a crash interrupted. */
static void
vm_sweep_boot(const struct sbx_store *s, int busy, int dry_run, sbx_driver_report report,
    void *ctx)
{
	char vm[1100], path[1400];
	struct dirent *d;
	struct stat st;
	DIR *dir;
	double now = sbx_realtime();

	snprintf(vm, sizeof vm, "%s/vm", s->root);
	if ((dir = opendir(vm)) == NULL)
		return;
	while ((d = readdir(dir)) != NULL) {
		int half = strstr(d->d_name, ".tmp.") != NULL;

		if (strncmp(d->d_name, "boot-", 5) != 0 || (half && busy))
			continue;
		snprintf(path, sizeof path, "%s/%s/vm.conf", vm, d->d_name);
		if (!half && stat(path, &st) == 0 && now - (double)st.st_mtim.tv_sec < VM_BOOT_KEEP_S)
			continue;
		report(ctx, "vm-boot", d->d_name);
		snprintf(path, sizeof path, "%s/%s", vm, d->d_name);
		if (!dry_run)
			sbx_rm_rf(path, NULL);
	}
	closedir(dir);
}

/* One VM whose sandbox is gone (a name of VM_RUN's group directory g): its
 * VMM killed, its directory and RAM removed. */
static void
vm_sweep_one(const struct sbx_store *s, const char *g, const char *id, int busy, int dry_run,
    sbx_driver_report report, void *ctx)
{
	char path[600], text[64];
	long pid = 0;
	unsigned long long ticks = 0;

	snprintf(path, sizeof path, "%s/%s/vmm.pid", g, id);
	/* Being made: its state comes once the VM is up. */
	if (busy && sbx_read_str(path, text, sizeof text) <= 0)
		return;
	report(ctx, "vm", id);
	if (dry_run)
		return;
	if (sbx_read_str(path, text, sizeof text) > 0 &&
	    sscanf(text, "%ld %llu", &pid, &ticks) == 2 && pid > 0)
		sbx_proc_signal_wait((pid_t)pid, ticks, SIGKILL, 5000);
	snprintf(path, sizeof path, "%s/%s", g, id);
	sbx_rm_rf(path, NULL);
	snprintf(path, sizeof path, VM_SHM "/%s/%s.ram", s->group, id);
	unlink(path);
}

/* What the tier left behind that no sandbox of s owns: VMs, RAM files, old
 * boot snapshots. */
static void
vm_sweep(const struct sbx_store *s, int busy, int dry_run, sbx_driver_report report, void *ctx)
{
	char g[256];
	struct dirent *d;
	DIR *dir;

	if (s->rootless)
		return;
	snprintf(g, sizeof g, VM_RUN "/%s", s->group);
	if ((dir = opendir(g)) != NULL) {
		while ((d = readdir(dir)) != NULL)
			if (d->d_name[0] != '.' && !sbx_store_exists(s, d->d_name))
				vm_sweep_one(s, g, d->d_name, busy, dry_run, report, ctx);
		closedir(dir);
	}
	vm_sweep_ram(s, busy, dry_run, report, ctx);
	vm_sweep_boot(s, busy, dry_run, report, ctx);
	if (!dry_run)
		vm_group_rmdir(s);
}

const struct sbx_driver sbx_driver_microvm = {
	.name = "microvm",
	.check = vm_check,
	.create = vm_create,
	.exec = vm_exec,
	.alive = vm_alive,
	.freeze = vm_freeze,
	.destroy = vm_destroy,
	.halt = vm_halt,
	.warm = vm_warm,
	.capture = vm_capture,
	/* a clone's disk holds its parent's files too */
	.whole_layer = 1,
	.can_checkpoint = vm_disk_base,
	.checkpoint = vm_checkpoint,
	.restart = vm_restart,
	.restore = vm_restore,
	/*
	 * No memory for the watchdog to sample: the VMM's cgroup holds the
	 * guest's whole RAM (a VM started from a checkpoint has it all written
	 * at once) and QEMU's own, over memory_mb from the start; the guest's
	 * use is its agent's to tell (usage), and memory_mb its cgroup's.
	 */
	.usage = vm_usage,
	.repin = vm_repin,
	.repinned = sbx_net_repinned,
	.sweep = vm_sweep,
};
