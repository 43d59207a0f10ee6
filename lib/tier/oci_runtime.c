/* SPDX-License-Identifier: MIT */
/*
 * The OCI runtimes sbx drives, and how each is called (see oci.h): runc and
 * kata-runtime as they are; crun in a mount namespace of its own where this
 * host's empty cgroup2 mount (the hybrid layout crun 1.8 refuses) is
 * covered, so that it sees the v1 hierarchies alone, as runc does; runsc
 * with the platform the host has and the network the manifest asks for,
 * given on every call (runsc keeps no flags of create's for later calls).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvm.h"
#include "oci.h"
#include "util.h"

#define CGROUP2_MAGIC 0x63677270

static const struct {
	const char *name, *version;     /* what `--version` starts with */
} kinds[] = {
	[OCI_RUNC] = { "runc", "runc version " },
	[OCI_CRUN] = { "crun", "crun version " },
	[OCI_RUNSC] = { "runsc", "runsc version " },
	[OCI_KATA] = { "kata-runtime", "kata-runtime" },
};

static const char *const search_dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
	"/usr/bin", "/sbin", "/bin", NULL };

const char *
oci_kind_name(enum oci_kind k)
{
	return (unsigned)k < SBX_ARRAY_LEN(kinds) ? kinds[k].name : "?";
}

int
oci_kind_parse(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < SBX_ARRAY_LEN(kinds); i++)
		if (strcmp(name, kinds[i].name) == 0)
			return (int)i;
	return -1;
}

int
oci_find(const char *name, char *path, size_t size)
{
	size_t i;

	for (i = 0; search_dirs[i]; i++) {
		snprintf(path, size, "%s/%s", search_dirs[i], name);
		if (access(path, X_OK) == 0)
			return 0;
	}
	return -1;
}

/*
 * gVisor's platform: kvm where the host's KVM is the hardware kind (tried:
 * a node without the module or the right to it does not open; a
 * paravirtual KVM, which gVisor's kvm platform hangs in, has no VMX or
 * SVM), else ptrace.
 */
const char *
oci_runsc_platform(void)
{
	return sbx_kvm_hardware() ? "kvm" : "ptrace";
}

/*
 * In the child about to exec the runtime, a mount namespace of its own
 * where the runtime needs to see less of the host:
 * - crun: the cgroup2 mount beside the v1 ones covered by an empty tmpfs.
 *   Unmounting it would not do: crun still sees the 0:: line and makes its
 *   cgroup in the bare directory below, which is the host's.
 * - runsc's start with its network stack (--network=sandbox): /proc/sys/net
 *   covered. gVisor (2022) takes a network namespace where
 *   /proc/sys/net/core/rmem_default exists for the host's and refuses it;
 *   since Linux 6.x every namespace has one. (What is below /proc/sys/net
 *   is the namespace's of whoever looks, which a mount there does not
 *   cover; runsc reads /proc/sys/vm, so not all of /proc/sys.)
 */
int
oci_child_prepare(const struct oci_paths *p, const char *verb, int unshared)
{
	struct statfs st;
	int crun = p->kind == OCI_CRUN;
	/* start is where runsc copies the interfaces (the sandbox it made
	 * at create reads the real directory). */
	int netstack = p->kind == OCI_RUNSC && strcmp(verb, "start") == 0 &&
	    strcmp(p->network_flag, "--network=sandbox") == 0;

	if (!crun && !netstack)
		return 0;
	if (!unshared && (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1))
		return -1;
	if (netstack && mount("sbx-no-sysctl", "/proc/sys/net", "tmpfs", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC | MS_RDONLY, "size=4k,mode=555") == -1)
		return -1;
	if (!crun || (statfs("/sys/fs/cgroup", &st) == 0 && st.f_type == CGROUP2_MAGIC))
		return 0;
	if (statfs("/sys/fs/cgroup/unified", &st) == 0 && st.f_type == CGROUP2_MAGIC &&
	    mount("sbx-no-cgroup2", "/sys/fs/cgroup/unified", "tmpfs", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, "size=4k,mode=755") == -1)
		return -1;
	return 0;
}

size_t
oci_argv(const struct oci_paths *p, const char **v, size_t cap)
{
	size_t n = 0;

	if (cap < 8)
		return 0;
	v[n++] = p->runtime;
	if (p->root[0]) {
		v[n++] = "--root";
		v[n++] = p->root;
	}
	if (p->kind == OCI_RUNSC) {
		v[n++] = p->platform_flag;
		v[n++] = p->network_flag;
		/* The manifest's seccomp profile, applied by gVisor to the
		 * sandbox's processes, as the kernel applies it to runc's. */
		v[n++] = "--oci-seccomp";
	}
	v[n] = NULL;
	return n;
}

static void
drain(int po, int pe, char *out, size_t outsz, char *err, size_t errsz)
{
	struct pollfd pf[2] = { { po, POLLIN, 0 }, { pe, POLLIN, 0 } };
	size_t no = 0, ne = 0, i;
	char sink[512];

	while (pf[0].fd != -1 || pf[1].fd != -1) {
		if (poll(pf, 2, -1) == -1 && errno != EINTR)
			break;
		for (i = 0; i < 2; i++) {
			char *buf = i == 0 ? out : err;
			size_t size = i == 0 ? outsz : errsz, *len = i == 0 ? &no : &ne;
			ssize_t r;

			if (pf[i].fd == -1 || pf[i].revents == 0)
				continue;
			if (buf != NULL && *len + 1 < size)
				r = read(pf[i].fd, buf + *len, size - 1 - *len);
			else
				r = read(pf[i].fd, sink, sizeof sink);
			if (r > 0 && buf != NULL && *len + 1 < size)
				*len += (size_t)r;
			else if (r == 0 || (r == -1 && errno != EINTR))
				pf[i].fd = -1;
		}
	}
	if (out != NULL && outsz > 0)
		out[no] = '\0';
	if (err != NULL && errsz > 0) {
		err[ne] = '\0';
		while (ne > 0 && err[ne - 1] == '\n')
			err[--ne] = '\0';
	}
}

int
oci_call(const struct oci_paths *p, const char *const *args, char *out, size_t outsz,
    char *err, size_t errsz)
{
	const char *argv[48];
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, st, fd;
	size_t n = oci_argv(p, argv, SBX_ARRAY_LEN(argv)), i;
	pid_t pid;

	for (i = 0; args[i] && n < SBX_ARRAY_LEN(argv) - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe2(po, O_CLOEXEC) == -1 || pipe2(pe, O_CLOEXEC) == -1) {
		for (i = 0; i < 2; i++)
			if (po[i] != -1)
				close(po[i]);
		return -1;
	}
	if ((pid = fork()) == 0) {
		if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1)
			dup2(fd, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (oci_child_prepare(p, args[0] ? args[0] : "", 0) == 0)
			execve(p->runtime, (char *const *)argv, oci_runtime_env);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	if (pid != -1)
		drain(po[0], pe[0], out, outsz, err, errsz);
	else
		drain(-1, -1, out, outsz, err, errsz);
	close(po[0]);
	close(pe[0]);
	if (pid == -1)
		return -1;
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

char *const oci_runtime_env[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", NULL };

int
oci_do(const struct oci_paths *p, const char *const *args, char *out, size_t outsz,
    struct sbx_err *e)
{
	char err[600] = "";
	int r = oci_call(p, args, out, outsz, err, sizeof err);

	if (r == 0)
		return 0;
	return sbx_err_set(e, SBX_EX_OSERR, "%s %s %s: %s", oci_kind_name(p->kind), args[0],
	    args[1] ? args[1] : "", err[0] ? err : r == -1 ? strerror(errno) : "failed");
}

/*
 * The runtime's binary and kind: one of the names from the system's
 * directories (never the caller's PATH: sbx runs it as root), or a path,
 * which must be root's and written by no one else; either must say, with
 * --version, that it is the runtime it is taken for.
 */
int
oci_runtime(const char *want, struct oci_paths *p, struct sbx_err *e)
{
	const char *const ver[] = { "--version", NULL };
	struct oci_paths probe = { 0 };
	char out[512] = "";
	struct stat st;
	int k = oci_kind_parse(want);
	size_t i;

	if (want[0] == '/') {
		snprintf(probe.runtime, sizeof probe.runtime, "%s", want);
		if (stat(want, &st) == -1)
			return sbx_err_sys(e, SBX_EX_UNAVAILABLE, "runtime %s", want);
		if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
		    (st.st_mode & 022) || !(st.st_mode & 0100))
			return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime %s: not an executable "
			    "file of root's that only its owner may write", want);
	} else if (k < 0) {
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime %s: not one sbx drives (runc, "
		    "crun, runsc, kata-runtime, or a path to one of them)", want);
	} else if (oci_find(want, probe.runtime, sizeof probe.runtime) == -1) {
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime %s: not installed (no %s in "
		    "/usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin)", want,
		    want);
	}
	if (oci_call(&probe, ver, out, sizeof out, NULL, 0) != 0)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime %s: `%s --version` fails",
		    want, probe.runtime);
	for (i = 0; i < SBX_ARRAY_LEN(kinds); i++)
		if (strncmp(out, kinds[i].version, strlen(kinds[i].version)) == 0)
			break;
	if (i == SBX_ARRAY_LEN(kinds) || (k >= 0 && (size_t)k != i))
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "runtime %s: %s is not %s (its "
		    "--version says '%.60s')", want, probe.runtime, k >= 0 ? want :
		    "runc, crun, runsc or kata-runtime", out);
	snprintf(p->runtime, sizeof p->runtime, "%s", probe.runtime);
	p->kind = (enum oci_kind)i;
	return 0;
}
