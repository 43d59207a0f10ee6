/* SPDX-License-Identifier: MIT */
/* A run with its streams captured: see capture.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "doc.h"
#include "util.h"
#include "sandbox.h"

struct pump {
	struct sbx_capture *c;
	int in, out, err, done;    /* our ends; done: a pipe closed when the command has ended */
	size_t fed;
};

/* Keep what fits of n bytes just read; count them all. */
static void
keep(struct sbx_capture *c, struct sbx_stream *st, const char *b, size_t n)
{
	size_t room = c->limit - st->len;

	memcpy(st->buf + st->len, b, n < room ? n : room);
	st->len += n < room ? n : room;
	st->buf[st->len] = '\0';
	st->total += n;
	sbx_sha256_update(&st->hash, b, n);
	if (n > room)
		c->truncated = 1;
}

/* Read what fd has now; 0 at its end (or an error), 1 while it may have more. */
static int
drain(struct pump *p, int fd, struct sbx_stream *st)
{
	char b[16384];
	ssize_t n;

	while ((n = read(fd, b, sizeof b)) > 0)
		keep(p->c, st, b, (size_t)n);
	return n == -1 && (errno == EAGAIN || errno == EINTR);
}

static void
close_in(struct pump *p)
{
	if (p->in != -1)
		close(p->in);
	p->in = -1;
}

static void *
pump_main(void *arg)
{
	struct pump *p = arg;
	struct pollfd pf[4];
	int open_out = 1, open_err = 1, ended = 0;
	sigset_t all;

	/* Every signal stays the main thread's; a SIGPIPE from writing stdin to
	 * a command that stopped reading stays pending here: write says EPIPE. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while ((open_out || open_err) && !ended) {
		pf[0] = (struct pollfd){ p->done, POLLIN, 0 };
		pf[1] = (struct pollfd){ open_out ? p->out : -1, POLLIN, 0 };
		pf[2] = (struct pollfd){ open_err ? p->err : -1, POLLIN, 0 };
		pf[3] = (struct pollfd){ p->in, POLLOUT, 0 };
		if (poll(pf, 4, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			open_out = drain(p, p->out, &p->c->out);
		if (pf[2].revents)
			open_err = drain(p, p->err, &p->c->err);
		if (pf[3].revents) {
			ssize_t n = write(p->in, p->c->input + p->fed, p->c->input_len - p->fed);

			if (n > 0)
				p->fed += (size_t)n;
			if ((n == -1 && errno != EAGAIN && errno != EINTR) ||
			    p->fed == p->c->input_len)
				close_in(p);
		}
		ended = pf[0].revents != 0;
	}
	/* The command has ended: all it wrote is in the pipes. */
	if (open_out)
		drain(p, p->out, &p->c->out);
	if (open_err)
		drain(p, p->err, &p->c->err);
	close_in(p);
	return NULL;
}

static void
digest(struct sbx_stream *st)
{
	unsigned char d[32];

	sbx_sha256_final(&st->hash, d);
	sbx_hex(d, sizeof d, st->sha256);
}

static void
close_all(int *fds, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fds[i] != -1)
			close(fds[i]);
}

int
sbx_sandbox_run_capture(const struct sbx_store *s, const char *id, const struct sbx_exec *x,
    struct sbx_capture *c, struct sbx_exec_result *res, struct sbx_err *e)
{
	/* in[0], in[1], out[0], out[1], err[0], err[1], done[0], done[1] */
	int fd[8] = { -1, -1, -1, -1, -1, -1, -1, -1 }, stdio[3], r;
	struct pump p = { c, -1, -1, -1, -1, 0 };
	struct sbx_exec cx = *x;
	pthread_t t;

	res->status = SBX_EX_RUNFAIL;
	sbx_trace_init(&res->trace);
	memset(&c->out, 0, sizeof c->out);
	memset(&c->err, 0, sizeof c->err);
	sbx_sha256_init(&c->out.hash);
	sbx_sha256_init(&c->err.hash);
	c->truncated = 0;
	if (x->tty)
		return sbx_err_set(e, SBX_EX_RUNFAIL, "a captured run has no terminal");
	if ((c->out.buf = malloc(c->limit + 1)) == NULL || (c->err.buf = malloc(c->limit + 1))
	    == NULL) {
		sbx_capture_free(c);
		return sbx_err_set(e, SBX_EX_RUNFAIL, "out of memory");
	}
	c->out.buf[0] = c->err.buf[0] = '\0';
	if (pipe2(fd, O_CLOEXEC) == -1 || pipe2(fd + 2, O_CLOEXEC) == -1 ||
	    pipe2(fd + 4, O_CLOEXEC) == -1 || pipe2(fd + 6, O_CLOEXEC) == -1) {
		sbx_err_sys(e, SBX_EX_RUNFAIL, "pipes for the command's streams");
		goto fail;
	}
	p.in = fd[1];
	p.out = fd[2];
	p.err = fd[4];
	p.done = fd[6];
	if (fcntl(p.in, F_SETFL, O_NONBLOCK) == -1 || fcntl(p.out, F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(p.err, F_SETFL, O_NONBLOCK) == -1) {
		sbx_err_sys(e, SBX_EX_RUNFAIL, "pipes for the command's streams");
		goto fail;
	}
	if (c->input == NULL || c->input_len == 0) {
		close(fd[1]);
		fd[1] = p.in = -1;
	}
	if ((errno = pthread_create(&t, NULL, pump_main, &p)) != 0) {
		sbx_err_sys(e, SBX_EX_RUNFAIL, "a thread for the command's streams");
		goto fail;
	}
	fd[1] = -1;  /* the pump's now */
	stdio[0] = c->input == NULL && c->stdin_fd >= 0 ? c->stdin_fd : fd[0];
	stdio[1] = c->stdout_to > 0 ? c->stdout_to : fd[3];
	stdio[2] = fd[5];
	cx.stdio = stdio;
	r = sbx_sandbox_run(s, id, &cx, res, e);
	close(fd[0]);
	close(fd[3]);
	close(fd[5]);
	close(fd[7]);
	fd[0] = fd[3] = fd[5] = fd[7] = -1;
	pthread_join(t, NULL);
	close_all(fd, 8);
	digest(&c->out);
	digest(&c->err);
	return r;
fail:
	close_all(fd, 8);
	sbx_capture_free(c);
	return -1;
}

void
sbx_capture_free(struct sbx_capture *c)
{
	free(c->out.buf);
	free(c->err.buf);
	c->out.buf = c->err.buf = NULL;
	c->out.len = c->err.len = 0;
}

static int
add_text(struct sbx_node *map, const char *key, const struct sbx_stream *st)
{
	char *t = sbx_utf8_text(st->buf ? st->buf : "", st->len);
	int r;

	if (t == NULL)
		return -1;
	r = sbx_node_add(map, key, sbx_node_str(t));
	free(t);
	return r;
}

int
sbx_capture_add(struct sbx_node *n, const struct sbx_capture *c,
    const struct sbx_exec_result *res, const char *error, int streams)
{
	long long sig = res->trace.signal;

	if (sbx_node_add(n, "exit_code", sbx_node_int(res->status)) == -1 ||
	    sbx_node_add(n, "signal", sig == SBX_UNSET_INT ? sbx_node_raw("null") :
	    sbx_node_int(sig)) == -1 || (streams && (add_text(n, "stdout", &c->out) == -1 ||
	    add_text(n, "stderr", &c->err) == -1)) ||
	    sbx_node_add(n, "stdout_bytes", sbx_node_int((long long)c->out.total)) == -1 ||
	    sbx_node_add(n, "stderr_bytes", sbx_node_int((long long)c->err.total)) == -1 ||
	    sbx_node_add(n, "stdout_sha256", sbx_node_str(c->out.sha256)) == -1 ||
	    sbx_node_add(n, "stderr_sha256", sbx_node_str(c->err.sha256)) == -1 ||
	    sbx_node_add(n, "truncated", sbx_node_bool(c->truncated)) == -1 ||
	    (error != NULL && sbx_node_add(n, "error", sbx_node_str(error)) == -1) ||
	    sbx_node_add(n, "trace", sbx_trace_tree(&res->trace)) == -1)
		return -1;
	return 0;
}

struct sbx_node *
sbx_capture_tree(const struct sbx_capture *c, const struct sbx_exec_result *res,
    const char *error, int streams)
{
	struct sbx_node *n = sbx_node_new(SBX_MAP);

	if (n != NULL && sbx_capture_add(n, c, res, error, streams) == -1) {
		sbx_node_free(n);
		return NULL;
	}
	return n;
}
