/* SPDX-License-Identifier: MIT */
/*
 * sbx-guest-exec PROGRAM CMD [ARG]...: load the seccomp program in the file
 * PROGRAM (struct sock_filter[], as sbx compiled it), then exec CMD. Run
 * inside a gVisor sandbox for each command (runsc applies the OCI seccomp
 * filter to the container's first process only, not to what runsc exec
 * starts). Static, with nothing but the C library: the sandbox's root may
 * have no other. 127: CMD not found; 126: not executable; 125: the filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_INSNS 4096

int
main(int argc, char *argv[])
{
	static struct sock_filter code[MAX_INSNS];
	struct sock_fprog prog;
	ssize_t n;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: sbx-guest-exec PROGRAM CMD [ARG]...\n");
		return 125;
	}
	if ((fd = open(argv[1], O_RDONLY | O_CLOEXEC)) == -1 ||
	    (n = read(fd, code, sizeof code)) <= 0 || n % (ssize_t)sizeof code[0] != 0 ||
	    (size_t)n == sizeof code) {
		fprintf(stderr, "sbx-guest-exec: %s: not a seccomp program\n", argv[1]);
		return 125;
	}
	close(fd);
	prog.len = (unsigned short)(n / (ssize_t)sizeof code[0]);
	prog.filter = code;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1) {
		fprintf(stderr, "sbx-guest-exec: loading the seccomp filter: %s\n", strerror(errno));
		return 125;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "sbx: %s: %s\n", argv[2], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
