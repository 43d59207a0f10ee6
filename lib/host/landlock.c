/* SPDX-License-Identifier: MIT */
/* Landlock: read everywhere, write only below the sandbox's writable mounts. */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "landlock.h"

/* Rights newer than the build machine's headers, by ABI version. */
#define FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#define FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */
#define FS_ABI1 ((1ULL << 13) - 1)
#define FS_REFER (1ULL << 13)      /* ABI 2 */
#define FS_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | \
	LANDLOCK_ACCESS_FS_READ_DIR)

#define NET_BIND_TCP (1ULL << 0)     /* ABI 4 */
#define NET_CONNECT_TCP (1ULL << 1)
#define RULE_NET_PORT 2

struct ruleset_attr {
	uint64_t handled_access_fs, handled_access_net, scoped;
};

struct path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct net_port {
	uint64_t allowed_access;
	uint64_t port;
};

int
sbx_landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return v < 0 ? 0 : (int)v;
}

/* What Landlock grants on a file, as opposed to below a directory. */
#define FS_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
	LANDLOCK_ACCESS_FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)

static int
add_rule(int rs, const char *path, uint64_t access, struct sbx_err *e)
{
	/* Inside the sandbox: a path its processes could have made a link on
	 * the way gets no rule (no write), rather than the link's target. */
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct path_beneath pb = { .allowed_access = access };
	struct stat st;
	int r;

	if ((pb.parent_fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how)) == -1) {
		if (errno == ENOENT || errno == ELOOP)
			return 0;
		return sbx_err_sys(e, SBX_EX_OSERR, "landlock: %s", path);
	}
	/* A file (a bind mount of one): only the rights a file has. */
	if (fstat(pb.parent_fd, &st) == 0 && !S_ISDIR(st.st_mode))
		pb.allowed_access &= FS_FILE;
	r = (int)syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	close(pb.parent_fd);
	if (r == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "landlock: rule for %s", path);
	return 0;
}

static int
add_ports(int rs, const unsigned *ports, size_t n, uint64_t access, struct sbx_err *e)
{
	struct net_port np = { .allowed_access = access };
	size_t i;

	for (i = 0; i < n; i++) {
		np.port = ports[i];
		if (syscall(SYS_landlock_add_rule, rs, RULE_NET_PORT, &np, 0) == -1)
			return sbx_err_sys(e, SBX_EX_OSERR, "landlock: rule for port %u", ports[i]);
	}
	return 0;
}

/* The filesystem's rules: read everywhere, write below writable[]. */
static int
fs_rules(int rs, int abi, const char *const *writable, size_t n, struct sbx_err *e)
{
	uint64_t all = FS_ABI1 | (abi >= 2 ? FS_REFER : 0) | (abi >= 3 ? FS_TRUNCATE : 0) |
	    (abi >= 5 ? FS_IOCTL_DEV : 0);
	size_t i;

	if (add_rule(rs, "/", FS_READ, e) == -1)
		return -1;
	/* Devices: write to null/tty and friends, ioctl on terminals. */
	if (add_rule(rs, "/dev", FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE |
	    (abi >= 3 ? FS_TRUNCATE : 0) | (abi >= 5 ? FS_IOCTL_DEV : 0), e) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if (add_rule(rs, writable[i], all & ~(uint64_t)LANDLOCK_ACCESS_FS_MAKE_CHAR &
		    ~(uint64_t)LANDLOCK_ACCESS_FS_MAKE_BLOCK, e) == -1)
			return -1;
	return 0;
}

int
sbx_landlock_restrict(const char *const *writable, size_t n,
    const struct sbx_landlock_net *net, struct sbx_err *e)
{
	int abi = sbx_landlock_abi(), rs, r = -1;
	struct ruleset_attr attr = { 0 };

	if (abi < 1 || (net != NULL && abi < 4))
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "the kernel has no Landlock%s",
		    net != NULL ? " network rules (ABI 4)" : "");
	if (writable != NULL)
		attr.handled_access_fs = FS_ABI1 | (abi >= 2 ? FS_REFER : 0) |
		    (abi >= 3 ? FS_TRUNCATE : 0) | (abi >= 5 ? FS_IOCTL_DEV : 0);
	if (net != NULL)
		attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
	if ((rs = (int)syscall(SYS_landlock_create_ruleset, &attr, net != NULL ?
	    offsetof(struct ruleset_attr, scoped) : sizeof attr.handled_access_fs, 0)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "landlock_create_ruleset");
	if ((writable != NULL && fs_rules(rs, abi, writable, n, e) == -1) ||
	    (net != NULL && (add_ports(rs, net->connect, net->n_connect, NET_CONNECT_TCP, e) == -1 ||
	    add_ports(rs, net->bind, net->n_bind, NET_BIND_TCP, e) == -1)))
		goto out;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "no_new_privs");
		goto out;
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "landlock_restrict_self");
		goto out;
	}
	r = 0;
out:
	close(rs);
	return r;
}
