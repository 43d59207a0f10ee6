/* SPDX-License-Identifier: MIT */
/* Shell sessions: see session.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"
#include "session.h"
#include "util.h"

#define LINE_MAX_BYTES (1 << 20)
#define MARK_LEN 32

/* The shell: bash where the root has it, else sh. */
static char *const shell_argv[] = { "sh", "-c",
	"command -v bash >/dev/null 2>&1 && exec bash --norc --noprofile; exec sh", NULL };

struct request {
	uint32_t len, limit;
};

struct reply {
	int32_t status, ended;
	uint32_t out_len, err_len;
	uint64_t out_total, err_total;
};

/* One stream of a call: its first bytes kept, the rest counted, and the
 * last bytes seen, where the end marker is looked for. */
struct stream {
	char *buf;
	size_t len, limit;
	unsigned long long total;
	char tail[256];
	size_t tail_len;
	int done, eof;
};

struct server {
	int in, out, err, lfd, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int run_done, run_status;
};

static int
session_paths(const struct sbx_store *s, const char *id, const char *name, char *dir,
    size_t size, struct sbx_err *e)
{
	const char *p;

	for (p = name; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && *p != '-' && *p != '_')
			break;
	if (*name == '\0' || *p != '\0' || p - name > 32)
		return sbx_err_set(e, SBX_EX_USAGE, "--session: '%s' is not a session name (1-32 "
		    "letters, digits, '-', '_')", name);
	return sbx_store_path(s, id, "sessions", dir, size, e);
}

static int
sock_addr(const char *dir, const char *name, struct sockaddr_un *a, struct sbx_err *e)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (snprintf(a->sun_path, sizeof a->sun_path, "%s/%s.sock", dir, name) >=
	    (int)sizeof a->sun_path)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "%s: the state root's path is too long for "
		    "a session's socket (%zu bytes at most)", dir, sizeof a->sun_path - 1);
	return 0;
}

static int
read_full(int fd, void *buf, size_t n)
{
	char *p = buf;
	ssize_t k;

	while (n > 0) {
		if ((k = read(fd, p, n)) == -1 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* New bytes of a stream; done once the marker (with its status, on stdout)
 * ends what is there. */
static void
stream_add(struct stream *st, const char *b, size_t n, const char *mark, int *status)
{
	size_t room = st->limit - st->len, drop, ml;
	char pat[MARK_LEN + 4], *hit, *end;

	memcpy(st->buf + st->len, b, n < room ? n : room);
	st->len += n < room ? n : room;
	st->total += n;
	/* The tail: the last bytes, enough to hold a marker line. */
	if (n >= sizeof st->tail) {
		memcpy(st->tail, b + n - sizeof st->tail, sizeof st->tail);
		st->tail_len = sizeof st->tail;
	} else {
		drop = st->tail_len + n > sizeof st->tail ? st->tail_len + n - sizeof st->tail : 0;
		memmove(st->tail, st->tail + drop, st->tail_len - drop);
		st->tail_len -= drop;
		memcpy(st->tail + st->tail_len, b, n);
		st->tail_len += n;
	}
	ml = (size_t)snprintf(pat, sizeof pat, "\n%s%s", mark, status ? " " : "\n");
	if ((hit = memmem(st->tail, st->tail_len, pat, ml)) == NULL)
		return;
	if (status != NULL) {
		*status = (int)strtol(hit + ml, &end, 10);
		if (end == hit + ml || end >= st->tail + st->tail_len || *end != '\n')
			return;  /* the rest of the line is still to come */
	}
	/* What the line wrote ends where the marker's newline starts. */
	st->total -= (unsigned long long)(st->tail + st->tail_len - hit);
	if (st->len > st->total)
		st->len = (size_t)st->total;
	st->done = 1;
}

static void
pump(int fd, struct stream *st, const char *mark, int *status)
{
	char b[16384];
	ssize_t n = read(fd, b, sizeof b);

	if (n > 0)
		stream_add(st, b, (size_t)n, mark, status);
	else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		st->eof = 1;
}

/* One call: the line to the shell, its streams back until both markers. */
static void
serve_call(struct server *sv, int c)
{
	struct request rq;
	struct reply rp = { 0, 0, 0, 0, 0, 0 };
	struct stream out = { 0 }, err = { 0 };
	struct pollfd pf[2];
	unsigned char rnd[MARK_LEN / 2];
	char mark[MARK_LEN + 1], *line = NULL, *script = NULL;
	int status = 0, n;
	size_t i;

	if (read_full(c, &rq, sizeof rq) == -1 || rq.len > LINE_MAX_BYTES ||
	    rq.limit > (1U << 30) || (line = malloc(rq.len + 1)) == NULL ||
	    read_full(c, line, rq.len) == -1 || memchr(line, '\0', rq.len) != NULL)
		goto out;
	line[rq.len] = '\0';
	if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
		goto out;
	for (i = 0; i < sizeof rnd; i++)
		snprintf(mark + 2 * i, 3, "%02x", rnd[i]);
	mark[0] = 'M';
	out.limit = err.limit = rq.limit;
	if ((out.buf = malloc(rq.limit + 1)) == NULL || (err.buf = malloc(rq.limit + 1)) == NULL)
		goto out;
	/* The line as a quoted here-document, evaluated by the shell itself (so
	 * cd and export persist), its stdin empty; then a marker on each stream. */
	n = asprintf(&script, "eval \"$(cat <<'%s'\n%s\n%s\n)\" </dev/null\n"
	    "printf '\\n%s %%d\\n' \"$?\"; printf '\\n%s\\n' >&2\n", mark, line, mark, mark, mark);
	if (n == -1 || sbx_write_all(sv->in, script, (size_t)n) == -1)
		out.eof = 1;
	while (!(out.done || out.eof) || !(err.done || err.eof)) {
		pf[0] = (struct pollfd){ out.done || out.eof ? -1 : sv->out, POLLIN, 0 };
		pf[1] = (struct pollfd){ err.done || err.eof ? -1 : sv->err, POLLIN, 0 };
		if (poll(pf, 2, -1) == -1 && errno != EINTR)
			break;
		if (pf[0].revents)
			pump(sv->out, &out, mark, &status);
		if (pf[1].revents)
			pump(sv->err, &err, mark, NULL);
	}
	if (!out.done) {
		/* The shell is gone (the line exited it): its run's status is the call's. */
		pthread_mutex_lock(&sv->mu);
		while (!sv->run_done)
			pthread_cond_wait(&sv->cv, &sv->mu);
		status = sv->run_status;
		pthread_mutex_unlock(&sv->mu);
		rp.ended = 1;
	}
	rp.status = status;
	rp.out_len = (uint32_t)out.len;
	rp.err_len = (uint32_t)err.len;
	rp.out_total = out.total;
	rp.err_total = err.total;
	if (sbx_write_all(c, &rp, sizeof rp) == 0 && sbx_write_all(c, out.buf, out.len) == 0)
		sbx_write_all(c, err.buf, err.len);
out:
	free(line);
	free(script);
	free(out.buf);
	free(err.buf);
}

static void *
serve_main(void *arg)
{
	struct server *sv = arg;
	struct pollfd pf[2];
	sigset_t all;
	int c;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		pf[0] = (struct pollfd){ sv->lfd, POLLIN, 0 };
		pf[1] = (struct pollfd){ sv->stop, POLLIN, 0 };
		if (poll(pf, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		if ((c = accept4(sv->lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
			continue;
		serve_call(sv, c);
		close(c);
		pthread_mutex_lock(&sv->mu);
		c = sv->run_done;
		pthread_mutex_unlock(&sv->mu);
		if (c)
			break;
	}
	return NULL;
}

/* The detached server: the shell's run, and a thread serving calls. */
static void __attribute__((noreturn))
serve(const struct sbx_store *s, const char *id, const struct sockaddr_un *a)
{
	struct server sv = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	struct sbx_exec x = { .argv = shell_argv };
	struct sbx_exec_result res;
	struct sbx_err e;
	int in[2], out[2], err[2], stop[2], stdio[3], r;
	char pidfile[sizeof a->sun_path + 8], buf[64];
	pthread_t t;

	/* Made 0600, never wider even for an instant. */
	umask(077);
	if ((sv.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    (unlink(a->sun_path) == -1 && errno != ENOENT) ||
	    bind(sv.lfd, (const struct sockaddr *)a, sizeof *a) == -1 ||
	    chmod(a->sun_path, 0600) == -1 || listen(sv.lfd, 8) == -1 ||
	    pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1 ||
	    pipe2(err, O_CLOEXEC) == -1 || pipe2(stop, O_CLOEXEC) == -1)
		_exit(1);
	snprintf(pidfile, sizeof pidfile, "%.*s.pid", (int)(strlen(a->sun_path) - 5), a->sun_path);
	snprintf(buf, sizeof buf, "%d %llu\n", (int)getpid(), sbx_proc_starttime(getpid()));
	if (sbx_write_atomic(pidfile, buf, strlen(buf), 0600, &e) == -1)
		_exit(1);
	sv.in = in[1];
	sv.out = out[0];
	sv.err = err[0];
	sv.stop = stop[0];
	if (pthread_create(&t, NULL, serve_main, &sv) != 0)
		_exit(1);
	stdio[0] = in[0];
	stdio[1] = out[1];
	stdio[2] = err[1];
	x.stdio = stdio;
	r = sbx_sandbox_run(s, id, &x, &res, &e);
	/* No new call from here; the one being served gets the shell's end (and
	 * a write to the shell's stdin fails, EPIPE, rather than blocks). */
	close(in[0]);
	unlink(a->sun_path);
	pthread_mutex_lock(&sv.mu);
	sv.run_done = 1;
	sv.run_status = r == 0 ? res.status : SBX_EX_RUNFAIL;
	pthread_cond_broadcast(&sv.cv);
	pthread_mutex_unlock(&sv.mu);
	close(out[1]);
	close(err[1]);
	close(stop[1]);
	pthread_join(t, NULL);
	_exit(0);
}

static int
spawn(const struct sbx_store *s, const char *id, const char *dir, const struct sockaddr_un *a,
    struct sbx_err *e)
{
	pid_t child;
	int st, fd;

	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", dir);
	if ((child = fork()) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "fork");
	if (child == 0) {
		setsid();
		if (fork() != 0)
			_exit(0);
		if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		syscall(SYS_close_range, 3, ~0U, 0);
		serve(s, id, a);
	}
	while (waitpid(child, &st, 0) == -1 && errno == EINTR)
		;
	return 0;
}

static int
try_connect(const struct sockaddr_un *a, struct sbx_err *e)
{
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (c == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "socket");
	if (connect(c, (const struct sockaddr *)a, sizeof *a) == 0)
		return c;
	close(c);
	return -2;
}

/* A connection to the session's server, started if need be (one caller at
 * a time starts it, under the session's lock). */
static int
connect_session(const struct sbx_store *s, const char *id, const char *dir, const char *name,
    struct sbx_err *e)
{
	struct sockaddr_un a;
	struct sbx_manifest m;
	char lock[PATH_MAX];
	double t0 = sbx_monotonic();
	int c, lk, ready;

	if (sock_addr(dir, name, &a, e) == -1)
		return -1;
	if ((c = try_connect(&a, e)) != -2)
		return c;
	if (sbx_sandbox_view(s, id, &m, e) == -1)
		return -1;
	ready = m.status == SBX_STATUS_READY || m.status == SBX_STATUS_EXECUTING;
	sbx_manifest_free(&m);
	if (!ready)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "sandbox is not ready (sbx-inspect %s)", id);
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return sbx_err_sys(e, SBX_EX_CANTCREAT, "%s", dir);
	snprintf(lock, sizeof lock, "%s/%s.lock", dir, name);
	if ((lk = sbx_lock_file(lock, 1, e)) == -1)
		return -1;
	if ((c = try_connect(&a, e)) == -2 && spawn(s, id, dir, &a, e) == -1)
		c = -1;
	/* Until the server listens (or gives up: its shell could not start). */
	while (c == -2 && sbx_monotonic() - t0 < 10) {
		poll(NULL, 0, 5);
		c = try_connect(&a, e);
	}
	close(lk);
	if (c == -2)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "session %s: its shell did not start in 10 s",
		    name);
	return c;
}

int
sbx_session_call(const struct sbx_store *s, const char *id, const char *name,
    const char *line, size_t limit, double timeout_s, struct sbx_session_result *r,
    struct sbx_err *e)
{
	char dir[PATH_MAX];
	struct request rq;
	struct reply rp;
	struct pollfd pf;
	size_t n = strlen(line);
	int c, ms;

	memset(r, 0, sizeof *r);
	if (n > LINE_MAX_BYTES)
		return sbx_err_set(e, SBX_EX_USAGE, "--session: a line of at most 1 MiB");
	if (session_paths(s, id, name, dir, sizeof dir, e) == -1 ||
	    (c = connect_session(s, id, dir, name, e)) == -1)
		return -1;
	rq.len = (uint32_t)n;
	rq.limit = (uint32_t)(limit < (1U << 30) ? limit : 1U << 30);
	if (sbx_write_all(c, &rq, sizeof rq) == -1 || sbx_write_all(c, line, n) == -1) {
		close(c);
		return sbx_err_sys(e, SBX_EX_RUNFAIL, "session %s", name);
	}
	pf = (struct pollfd){ c, POLLIN, 0 };
	ms = timeout_s > 0 ? (int)(timeout_s * 1000) + 1 : -1;
	while ((n = (size_t)poll(&pf, 1, ms)) == (size_t)-1 && errno == EINTR)
		;
	if (n == 0) {
		close(c);
		sbx_session_end(s, id, name, e);
		r->status = SBX_EX_TIMEOUT;
		r->ended = 1;
		return 0;
	}
	if (read_full(c, &rp, sizeof rp) == -1 || (r->out = malloc(rp.out_len + 1)) == NULL ||
	    (r->err = malloc(rp.err_len + 1)) == NULL || read_full(c, r->out, rp.out_len) == -1 ||
	    read_full(c, r->err, rp.err_len) == -1) {
		close(c);
		sbx_session_result_free(r);
		return sbx_err_set(e, SBX_EX_RUNFAIL, "session %s: its shell's end came with no "
		    "answer", name);
	}
	close(c);
	r->status = rp.status;
	r->ended = rp.ended;
	r->out_len = rp.out_len;
	r->err_len = rp.err_len;
	r->out[r->out_len] = r->err[r->err_len] = '\0';
	r->out_total = rp.out_total;
	r->err_total = rp.err_total;
	return 0;
}

int
sbx_session_end(const struct sbx_store *s, const char *id, const char *name,
    struct sbx_err *e)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], buf[64];
	unsigned long long start;
	pid_t pid;
	int i;

	if (session_paths(s, id, name, dir, sizeof dir, e) == -1)
		return -1;
	snprintf(path, sizeof path, "%s/%s.pid", dir, name);
	if (sbx_read_str(path, buf, sizeof buf) <= 0 ||
	    sscanf(buf, "%d %llu", &pid, &start) != 2 || !sbx_proc_alive(pid, start))
		return 0;
	/* TERM: the server passes it to the shell, whose run then ends with what
	 * it ran; KILL after 5 s (the shell's processes die with their run). */
	kill(pid, SIGTERM);
	for (i = 0; i < 500 && sbx_proc_alive(pid, start); i++)
		poll(NULL, 0, 10);
	if (sbx_proc_alive(pid, start))
		kill(pid, SIGKILL);
	for (i = 0; i < 500 && sbx_proc_alive(pid, start); i++)
		poll(NULL, 0, 10);
	snprintf(path, sizeof path, "%s/%s.sock", dir, name);
	unlink(path);
	return 0;
}

void
sbx_session_result_free(struct sbx_session_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof *r);
}
