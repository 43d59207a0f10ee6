/* SPDX-License-Identifier: MIT */
/* Terminals for `sbx-run -t`: a pty made inside the sandbox, relayed by the caller. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "fdpass.h"
#include "pty.h"
#include "util.h"

static struct termios saved;
static int raw_on;

int
sbx_pty_child(int sock, struct sbx_err *e)
{
	char name[128];
	int master, slave;

	if ((master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1 ||
	    grantpt(master) == -1 || unlockpt(master) == -1 ||
	    ptsname_r(master, name, sizeof name) != 0)
		return sbx_err_sys(e, SBX_EX_OSERR, "allocate a terminal in the sandbox");
	if (sbx_fd_send(sock, &master, 1, "p", 1) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "pass the terminal");
	close(master);
	if (setsid() == -1 || (slave = open(name, O_RDWR)) == -1 ||
	    ioctl(slave, TIOCSCTTY, 0) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "open %s", name);
	if (dup2(slave, 0) == -1 || dup2(slave, 1) == -1 || dup2(slave, 2) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "dup2");
	if (slave > 2)
		close(slave);
	return 0;
}

int
sbx_pty_recv(int sock, struct sbx_err *e)
{
	char dummy = 0;
	int fd;

	if (sbx_fd_recv(sock, &fd, 1, &dummy, 1) <= 0)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "no terminal came back from the sandbox");
	return fd;
}

int
sbx_pty_stray(const int *fds)
{
	pid_t sid;
	int i, fd;

	for (i = 0; i <= 2; i++) {
		fd = fds ? fds[i] : i;
		if (isatty(fd) && ioctl(fd, TIOCGSID, &sid) == -1 && errno == ENOTTY)
			return 1;
	}
	return 0;
}

void
sbx_pty_raw(void)
{
	struct termios t;

	if (!isatty(0) || tcgetattr(0, &saved) == -1)
		return;
	t = saved;
	cfmakeraw(&t);
	if (tcsetattr(0, TCSANOW, &t) == 0)
		raw_on = 1;
}

void
sbx_pty_restore(void)
{
	if (raw_on)
		tcsetattr(0, TCSANOW, &saved);
	raw_on = 0;
}

void
sbx_pty_winsize(int master)
{
	struct winsize ws;

	if (ioctl(0, TIOCGWINSZ, &ws) == 0)
		ioctl(master, TIOCSWINSZ, &ws);
}

int
sbx_pty_pump(int master, int stdin_ready, int master_ready, int *stdin_open)
{
	char buf[16384];
	ssize_t n;

	if (stdin_ready && *stdin_open) {
		n = read(0, buf, sizeof buf);
		if (n > 0)
			sbx_write_all(master, buf, (size_t)n);
		else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			*stdin_open = 0;
			/* End of input: send the terminal's EOF character. */
			sbx_write_all(master, "\004", 1);
		}
	}
	if (master_ready) {
		n = read(master, buf, sizeof buf);
		if (n > 0)
			sbx_write_all(1, buf, (size_t)n);
		else if (n == 0 || (errno != EINTR && errno != EAGAIN))
			return -1;
	}
	return 0;
}
