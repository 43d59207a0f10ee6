/* SPDX-License-Identifier: MIT */
/*
 * The floor: the least a namespace sandbox can cost. One clone3 into new
 * user, mount, PID, network, UTS, IPC and cgroup namespaces, exec /bin/true,
 * wait. No root filesystem, no limits, no filters: nothing that makes it a
 * sandbox worth the name, which is why it is the physical limit of the design.
 */
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(void)
{
	struct clone_args args = {
		.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS |
		    CLONE_NEWIPC | CLONE_NEWCGROUP,
		.exit_signal = SIGCHLD,
	};
	int status;
	long pid = syscall(SYS_clone3, &args, sizeof args);

	if (pid == -1)
		return 71;
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (waitpid((pid_t)pid, &status, 0) == -1)
		return 71;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
