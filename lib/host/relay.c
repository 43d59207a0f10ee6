/* SPDX-License-Identifier: MIT */
/* The egress relay: see relay.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "manifest.h"
#include "netlink.h"
#include "relay.h"
#include "util.h"

#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80
#endif

#define BUF_SIZE 65536
#define INSPECT_MAX 16384
#define MAX_CONNS 512
#define MAX_DESTS 4096
#define AUDIT_EVERY_S 10.0
#define AUDIT_RATE 20.0
#define AUDIT_BURST 100.0
#define MAX_RUNS 64
#define CORR_MAX 128

/* The sandbox's side and the world's side of one connection. */
struct pipe_half {
	char *buf;
	size_t off, len;
	int eof, shut;
};

enum { C_CONNECTING, C_INSPECT, C_OPEN };

struct conn {
	int cfd, ufd, state, need_name, family;
	unsigned char addr[16];         /* where the sandbox meant to go */
	unsigned port;
	struct pipe_half up, down;      /* up: sandbox to world */
	size_t dest;
	const char *names[16];
};

struct dest {
	struct sbx_relay_dest d;
	long long unreported;
	double last_audit;
	char why[96];
	char corr[CORR_MAX];    /* the correlation ID its unreported refusals belong to */
};

/*
 * The runs under way (sbx-run tells at its start and end, through the control
 * socket), each by its correlation ID and the PID that told: a refusal belongs
 * to the run that was under way, the latest one when several are, else to the
 * provision. A run whose sbx-run is gone without its end is over too.
 */
static struct {
	char corr[CORR_MAX];
	pid_t pid;
} runs[MAX_RUNS];
static size_t n_runs;
static char base_corr[CORR_MAX];

static struct dest *dests;
static size_t n_dests;
static struct conn *conns[MAX_CONNS];
static const struct sbx_relay_cfg *cfg;
static struct sbx_egress policy;       /* the configured one, then each reload */
static volatile sig_atomic_t quit, reload;

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		reload = 1;
	else
		quit = 1;
}

static size_t
dest_of(const char *name)
{
	struct dest *nd;
	size_t i;

	for (i = 0; i < n_dests; i++)
		if (strcmp(dests[i].d.name, name) == 0)
			return i;
	if (n_dests == MAX_DESTS)
		return MAX_DESTS - 1;  /* the last one takes the overflow */
	if ((nd = realloc(dests, (n_dests + 1) * sizeof *nd)) == NULL)
		return n_dests ? n_dests - 1 : 0;
	dests = nd;
	memset(&dests[n_dests], 0, sizeof *dests);
	snprintf(dests[n_dests].d.name, sizeof dests[n_dests].d.name, "%s", name);
	return n_dests++;
}

/*
 * Refusals to one destination make one event at most every AUDIT_EVERY_S;
 * all destinations together at most AUDIT_RATE a second (a burst of
 * AUDIT_BURST), so a sandbox spraying addresses cannot flood the log: what
 * waits is summed into the destination's next event.
 */
static int
audit_token(double now)
{
	static double tokens = AUDIT_BURST, last;

	tokens += (now - last) * AUDIT_RATE;
	last = now;
	if (tokens > AUDIT_BURST)
		tokens = AUDIT_BURST;
	if (tokens < 1)
		return 0;
	tokens -= 1;
	return 1;
}

static void
audit_flush(struct dest *d, double now, int force)
{
	char detail[256];

	if (d->unreported == 0 || (!audit_token(now) && !force))
		return;
	snprintf(detail, sizeof detail, "destination=%s count=%lld%s%s", d->d.name,
	    d->unreported, d->why[0] ? " reason=" : "", d->why);
	sbx_audit_set_correlation(d->corr[0] ? d->corr : base_corr);
	sbx_audit(cfg->s, cfg->sandbox_id, "egress-denied", "refused", detail, NULL);
	d->unreported = 0;
	d->last_audit = now;
}

static void
run_drop(size_t i)
{
	memmove(&runs[i], &runs[i + 1], (n_runs - i - 1) * sizeof runs[0]);
	n_runs--;
}

static void
runs_prune(void)
{
	size_t i = n_runs;

	while (i-- > 0)
		if (kill(runs[i].pid, 0) == -1 && errno == ESRCH)
			run_drop(i);
}

/* One refusal: counted now, written to the audit log at most every 10 s per
 * destination (the first at once). */
static void
denied(size_t i, const char *why)
{
	struct dest *d = &dests[i];
	double now = sbx_monotonic();
	const char *corr;

	runs_prune();
	corr = n_runs ? runs[n_runs - 1].corr : base_corr;

	/* Refusals of another run are summed into an event of their own. */
	if (d->unreported > 0 && strcmp(d->corr, corr) != 0)
		audit_flush(d, now, 1);
	snprintf(d->corr, sizeof d->corr, "%s", corr);
	d->d.denied++;
	d->unreported++;
	snprintf(d->why, sizeof d->why, "%s", why ? why : "");
	if (d->last_audit == 0 || now - d->last_audit >= AUDIT_EVERY_S)
		audit_flush(d, now, 0);
}

/* "tcp 10.0.0.2:80", "tcp [fd00::2]:80" */
static void
dest_name(char *buf, size_t size, const char *proto, int family, const void *addr,
    unsigned port, int with_port)
{
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(family, addr, ip, sizeof ip);
	if (!with_port)
		snprintf(buf, size, "%s %s", proto, ip);
	else if (family == AF_INET6)
		snprintf(buf, size, "%s [%s]:%u", proto, ip, port);
	else
		snprintf(buf, size, "%s %s:%u", proto, ip, port);
}

/* NFLOG: the headers of packets the rules refused. */

static int
nflog_cfg(int fd, unsigned group, unsigned short type, const void *data, size_t len)
{
	struct nfgenmsg g = { AF_UNSPEC, NFNETLINK_V0, htons((unsigned short)group) };
	struct sbx_nlbuf b;
	int rc;

	sbx_nl_init(&b, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG, 0, &g, sizeof g);
	if (sbx_nla_put(&b, type, data, len) == NULL)
		return errno = ENOBUFS, -1;
	if ((rc = sbx_nl_talk(fd, &b)) < 0)
		return errno = -rc, -1;
	return 0;
}

int
sbx_relay_nflog_open(unsigned group, struct sbx_err *e)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nfulnl_msg_config_cmd bind_cmd = { NFULNL_CFG_CMD_BIND };
	struct nfulnl_msg_config_mode mode = { htonl(128), NFULNL_COPY_PACKET, 0 };
	uint32_t qthresh = htonl(1);
	int fd, rcvbuf = 1 << 20;

	if ((fd = sbx_nl_socket(NETLINK_NETFILTER)) == -1 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof sa) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "netfilter log socket");
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	/* One message per packet at once (the default batches for a second);
	 * the relay reads them without blocking. */
	if (nflog_cfg(fd, group, NFULA_CFG_CMD, &bind_cmd, sizeof bind_cmd) == -1 ||
	    nflog_cfg(fd, group, NFULA_CFG_MODE, &mode, sizeof mode) == -1 ||
	    nflog_cfg(fd, group, NFULA_CFG_QTHRESH, &qthresh, sizeof qthresh) == -1 ||
	    fcntl(fd, F_SETFL, O_NONBLOCK) == -1) {
		sbx_err_sys(e, errno == EBUSY ? SBX_EX_TEMPFAIL : SBX_EX_OSERR,
		    "bind netfilter log group %u", group);
		goto fail;
	}
	return fd;
fail:
	if (fd != -1)
		close(fd);
	return -1;
}

static void
nflog_packet(const unsigned char *p, size_t len)
{
	static const char *const protos[256] = { [IPPROTO_TCP] = "tcp", [IPPROTO_UDP] = "udp",
		[IPPROTO_ICMP] = "icmp", [IPPROTO_ICMPV6] = "icmp6" };
	char name[64], other[16];
	const char *proto;
	size_t l4;
	int family, nh;

	if (len >= 20 && (p[0] >> 4) == 4) {
		family = AF_INET;
		nh = p[9];
		l4 = (size_t)(p[0] & 15) * 4;
	} else if (len >= 40 && (p[0] >> 4) == 6) {
		/* The next header of the fixed header (extension headers are not followed). */
		family = AF_INET6;
		nh = p[6];
		l4 = 40;
	} else {
		return;
	}
	if ((proto = protos[nh]) == NULL) {
		snprintf(other, sizeof other, "proto-%d", nh);
		proto = other;
	}
	dest_name(name, sizeof name, proto, family, p + (family == AF_INET ? 16 : 24),
	    len >= l4 + 4 ? (unsigned)(p[l4 + 2] << 8 | p[l4 + 3]) : 0,
	    (nh == IPPROTO_TCP || nh == IPPROTO_UDP) && len >= l4 + 4);
	denied(dest_of(name), NULL);
}

/* Read every message queued so far. */
static void
nflog_drain(int fd)
{
	static char buf[65536];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
		struct nlmsghdr *h;

		for (h = (struct nlmsghdr *)(void *)buf; NLMSG_OK(h, (size_t)n);
		    h = NLMSG_NEXT(h, n)) {
			struct nlattr *a;
			int rem;

			if (h->nlmsg_type != ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET))
				continue;
			a = (struct nlattr *)(void *)((char *)NLMSG_DATA(h) +
			    NLMSG_ALIGN(sizeof(struct nfgenmsg)));
			rem = (int)h->nlmsg_len - (int)NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct nfgenmsg)));
			while (rem >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			    (int)a->nla_len <= rem) {
				if ((a->nla_type & NLA_TYPE_MASK) == NFULA_PAYLOAD)
					nflog_packet((const unsigned char *)a + NLA_HDRLEN,
					    a->nla_len - NLA_HDRLEN);
				rem -= NLA_ALIGN(a->nla_len);
				a = (struct nlattr *)(void *)((char *)a + NLA_ALIGN(a->nla_len));
			}
		}
	}
}

/* Host names: the TLS SNI or the HTTP Host of a connection's first bytes. */

/* 1: decided (name set, or "" for another protocol), 0: need more, -1: malformed. */
static int
tls_sni(const unsigned char *b, size_t n, char *name, size_t size)
{
	size_t rec, p, end, l;

	if (n < 5)
		return 0;
	rec = (size_t)(b[3] << 8 | b[4]);
	if (n < 5 + rec)
		return n >= INSPECT_MAX ? -1 : 0;
	/* Handshake header, client_hello, version, random, session ID. */
	p = 5;
	if (rec < 4 || b[p] != 1)
		return -1;
	end = 5 + rec;
	p += 4 + 2 + 32;
	if (p >= end)
		return -1;
	p += 1 + b[p];
	if (p + 2 > end)
		return -1;
	p += 2 + (size_t)(b[p] << 8 | b[p + 1]);          /* cipher suites */
	if (p + 1 > end)
		return -1;
	p += 1 + b[p];                                    /* compression */
	if (p + 2 > end)
		return -1;
	p += 2;                                           /* extensions length */
	while (p + 4 <= end) {
		unsigned type = (unsigned)(b[p] << 8 | b[p + 1]);

		l = (size_t)(b[p + 2] << 8 | b[p + 3]);
		p += 4;
		if (p + l > end)
			return -1;
		if (type == 0 && l >= 5 && b[p + 2] == 0) {   /* server_name, host_name */
			size_t nl = (size_t)(b[p + 3] << 8 | b[p + 4]);

			if (5 + nl > l || nl >= size)
				return -1;
			memcpy(name, b + p + 5, nl);
			name[nl] = '\0';
			return memchr(name, '\0', nl) ? -1 : 1;
		}
		p += l;
	}
	name[0] = '\0';
	return -1;  /* TLS without SNI: no name to check */
}

static int
http_host(const char *b, size_t n, char *name, size_t size)
{
	static const char *const methods[] = { "GET ", "POST ", "PUT ", "HEAD ", "DELETE ",
		"OPTIONS ", "PATCH ", "CONNECT ", "TRACE ", NULL };
	const char *end, *h, *v;
	size_t i, l;

	for (i = 0; methods[i]; i++)
		if (n >= strlen(methods[i]) ? strncmp(b, methods[i], strlen(methods[i])) == 0 :
		    strncmp(b, methods[i], n) == 0)
			break;
	if (methods[i] == NULL) {
		name[0] = '\0';
		return 1;   /* not HTTP */
	}
	if ((end = memmem(b, n, "\r\n\r\n", 4)) == NULL)
		return n >= INSPECT_MAX ? -1 : 0;
	for (h = memchr(b, '\n', (size_t)(end - b)); h && h < end; h = memchr(h + 1, '\n',
	    (size_t)(end - h - 1))) {
		if (end - h < 6 || strncasecmp(h + 1, "host:", 5) != 0)
			continue;
		for (v = h + 6; v < end && (*v == ' ' || *v == '\t'); v++)
			;
		/* Bounded by the blank line, not by a NUL the bytes may carry. */
		for (l = 0; v + l < end && v[l] != ':' && v[l] != '\r' && v[l] != '\n'; l++)
			if (v[l] == '\0')
				return -1;
		if (l == 0 || l >= size)
			return -1;
		memcpy(name, v, l);
		name[l] = '\0';
		return 1;
	}
	return -1;
}

int
sbx_relay_peek_name(const unsigned char *b, size_t n, char *name, size_t size)
{
	const char *c;
	int r;

	if (n == 0)
		return 0;
	r = b[0] == 0x16 ? tls_sni(b, n, name, size) : http_host((const char *)b, n, name, size);
	/* A host name, nothing else: a NUL or an odd byte could make the name
	 * checked here differ from the one the server acts on. */
	if (r == 1)
		for (c = name; *c; c++)
			if (!isalnum((unsigned char)*c) && !strchr(".-_", *c))
				return -1;
	return r;
}

/* 1: allowed, 0: need more bytes, -1: refused (why says so). */
static int
inspect(struct conn *c, char *why, size_t size)
{
	char name[256];
	int r;
	size_t i;

	if (c->up.len == 0)
		return 0;
	r = sbx_relay_peek_name((const unsigned char *)c->up.buf, c->up.len, name, sizeof name);
	if (r == 0)
		return c->up.eof ? -1 : 0;
	if (r == -1) {
		snprintf(why, size, "no TLS server name or HTTP Host to check");
		return -1;
	}
	if (name[0] == '\0')
		return 1;   /* neither TLS nor HTTP: the pinned address decides */
	for (i = 0; c->names[i]; i++)
		if (strcasecmp(c->names[i], name) == 0)
			return 1;
	snprintf(why, size, "name %.60s not allowed", name);
	return -1;
}

static void
conn_close(size_t k, int reset)
{
	struct conn *c = conns[k];
	struct linger lg = { 1, 0 };

	if (reset)
		setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	close(c->cfd);
	if (c->ufd != -1)
		close(c->ufd);
	free(c->up.buf);
	free(c->down.buf);
	free(c);
	conns[k] = NULL;
}

static void
accept_one(int lfd)
{
	struct sockaddr_storage peer, orig;
	struct sockaddr_in *o4 = (struct sockaddr_in *)&orig;
	struct sockaddr_in6 *o6 = (struct sockaddr_in6 *)&orig;
	const struct sockaddr_in *p4 = (const struct sockaddr_in *)&peer;
	const struct sockaddr_in6 *p6 = (const struct sockaddr_in6 *)&peer;
	socklen_t pl = sizeof peer, ol = sizeof orig;
	char name[64], why[96] = "";

	memset(&peer, 0, sizeof peer);
	struct conn *c = NULL;
	struct linger lg = { 1, 0 };
	size_t k;
	int fd, m, family;

	if ((fd = accept4(lfd, (struct sockaddr *)&peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1)
		return;
	family = peer.ss_family;
	/* Only the sandbox, and only through the redirect (which keeps the
	 * original destination for SO_ORIGINAL_DST, IPv4 and IPv6 alike). */
	if (family == AF_INET ? memcmp(&p4->sin_addr, cfg->sandbox4, 4) != 0 ||
	    getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, o4, &ol) == -1 :
	    family == AF_INET6 ? memcmp(&p6->sin6_addr, cfg->sandbox6, 16) != 0 ||
	    getsockopt(fd, SOL_IPV6, SO_ORIGINAL_DST, o6, &ol) == -1 : 1)
		goto refuse;
	if ((c = calloc(1, sizeof *c)) == NULL)
		goto refuse;
	c->cfd = fd;
	c->ufd = -1;
	c->family = family;
	c->port = ntohs(family == AF_INET ? o4->sin_port : o6->sin6_port);
	memcpy(c->addr, family == AF_INET ? (const void *)&o4->sin_addr : (const void *)&o6->sin6_addr,
	    family == AF_INET ? 4 : 16);
	dest_name(name, sizeof name, "tcp", family, c->addr, c->port, 1);
	c->dest = dest_of(name);
	for (k = 0; k < MAX_CONNS && conns[k]; k++)
		;
	if (k == MAX_CONNS) {
		snprintf(why, sizeof why, "too many connections");
		goto deny;
	}
	m = sbx_egress_match(&policy, family, c->addr, c->port, c->names, SBX_ARRAY_LEN(c->names));
	if (m == SBX_EGRESS_NO) {
		snprintf(why, sizeof why, "not in the policy");
		goto deny;
	}
	c->need_name = m == SBX_EGRESS_NAME;
	if ((c->up.buf = malloc(BUF_SIZE)) == NULL || (c->down.buf = malloc(BUF_SIZE)) == NULL ||
	    (c->ufd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1 ||
	    (connect(c->ufd, (struct sockaddr *)&orig, family == AF_INET ? sizeof *o4 : sizeof *o6)
	    == -1 && errno != EINPROGRESS)) {
		conns[k] = c;
		conn_close(k, 1);
		return;
	}
	c->state = C_CONNECTING;
	conns[k] = c;
	return;
deny:
	denied(c->dest, why);
	free(c);
refuse:
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	close(fd);
}

/* Move what can move without blocking; -1 when the connection is over. */
static int
pump(struct pipe_half *h, int from, int to, long long *count, int hold)
{
	ssize_t n;

	if (h->len == 0 && !h->eof && !hold) {
		n = read(from, h->buf, BUF_SIZE);
		if (n > 0) {
			h->off = 0;
			h->len = (size_t)n;
		} else if (n == 0) {
			h->eof = 1;
		} else if (errno != EAGAIN && errno != EINTR) {
			return -1;
		}
	}
	while (h->len > 0 && !hold) {
		n = write(to, h->buf + h->off, h->len);
		if (n > 0) {
			*count += n;
			h->off += (size_t)n;
			h->len -= (size_t)n;
		} else if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			break;
		} else {
			return -1;
		}
	}
	/* The sender is done and everything it sent is delivered: pass the FIN on. */
	if (h->eof && h->len == 0 && !h->shut && !hold) {
		shutdown(to, SHUT_WR);
		h->shut = 1;
	}
	return 0;
}

static void
service(size_t k, short cre, short ure)
{
	struct conn *c = conns[k];
	struct dest *d = &dests[c->dest];
	char why[96];
	int err = 0, r;
	socklen_t el = sizeof err;
	ssize_t n;

	if (c->state == C_CONNECTING) {
		if (!(ure & (POLLOUT | POLLERR | POLLHUP)))
			return;
		if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &el) == -1 || err) {
			conn_close(k, 1);
			return;
		}
		c->state = c->need_name ? C_INSPECT : C_OPEN;
	}
	if (c->state == C_INSPECT && (cre & (POLLIN | POLLHUP | POLLERR))) {
		if (c->up.len < INSPECT_MAX) {
			n = read(c->cfd, c->up.buf + c->up.len, INSPECT_MAX - c->up.len);
			if (n > 0)
				c->up.len += (size_t)n;
			else if (n == 0)
				c->up.eof = 1;
			else if (errno != EAGAIN && errno != EINTR) {
				conn_close(k, 1);
				return;
			}
		}
		if ((r = inspect(c, why, sizeof why)) == -1) {
			denied(c->dest, why);
			conn_close(k, 1);
			return;
		}
		if (r == 1) {
			c->state = C_OPEN;
			c->up.off = 0;
		}
	}
	if (pump(&c->up, c->cfd, c->ufd, &d->d.sent, c->state != C_OPEN) == -1 ||
	    pump(&c->down, c->ufd, c->cfd, &d->d.received, 0) == -1 ||
	    (c->up.eof && c->down.eof && c->up.len == 0 && c->down.len == 0))
		conn_close(k, 0);
}

/* "begin\tCORR" or "end\tCORR" from process pid: its run starts or ends. */
static void
run_mark(const char *req, pid_t pid)
{
	const char *corr = strchr(req, '\t');
	size_t i;
	int begin = strncmp(req, "begin\t", 6) == 0;

	if (corr == NULL || (!begin && strncmp(req, "end\t", 4) != 0) || *++corr == '\0' ||
	    pid <= 0)
		return;
	runs_prune();
	if (begin && n_runs < MAX_RUNS) {
		snprintf(runs[n_runs].corr, CORR_MAX, "%s", corr);
		runs[n_runs++].pid = pid;
		return;
	}
	for (i = n_runs; i-- > 0;)
		if (!begin && runs[i].pid == pid && strncmp(runs[i].corr, corr, CORR_MAX - 1) == 0) {
			run_drop(i);
			return;
		}
}

/* The request line of a control connection ("" when the client sends none). */
static void
read_request(int fd, char *req, size_t size)
{
	struct pollfd p = { fd, POLLIN, 0 };
	size_t n = 0;

	while (n + 1 < size && poll(&p, 1, 1000) == 1 && read(fd, req + n, 1) == 1 &&
	    req[n] != '\n')
		n++;
	req[n] = '\0';
}

static void
answer(int ctl)
{
	struct timeval tv = { 1, 0 };
	char line[160], req[CORR_MAX + 16];
	struct ucred peer = { 0 };
	socklen_t plen = sizeof peer;
	size_t i;
	int fd;

	if ((fd = accept4(ctl, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) == -1)
		peer.pid = 0;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	read_request(fd, req, sizeof req);
	/* Refusals up to now are queued already: count them, for the runs under
	 * way until now, before the request changes those and before answering. */
	nflog_drain(cfg->nflog_fd);
	run_mark(req, peer.pid);
	for (i = 0; i < n_dests; i++) {
		int l = snprintf(line, sizeof line, "%s\t%lld\t%lld\t%lld\n", dests[i].d.name,
		    dests[i].d.sent, dests[i].d.received, dests[i].d.denied);

		if (sbx_write_all(fd, line, (size_t)l) == -1)
			break;
	}
	close(fd);
}

/*
 * The watchdog re-pinned host names (SIGHUP): take the new addresses from the
 * state. Connections still waiting for their name check are matched again.
 */
static void
reload_policy(void)
{
	struct sbx_manifest m;
	struct sbx_egress np;
	struct sbx_err e;
	size_t k;

	if (sbx_state_load(cfg->s, cfg->sandbox_id, &m, &e) == -1)
		return;
	if (sbx_egress_parse(&m.allowed_egress, &m.rt.egress_pins, &np, &e) == 0) {
		sbx_egress_free(&policy);
		policy = np;
		for (k = 0; k < MAX_CONNS; k++) {
			struct conn *c = conns[k];

			if (c == NULL || !c->need_name || c->state == C_OPEN)
				continue;
			if (sbx_egress_match(&policy, c->family, c->addr, c->port, c->names,
			    SBX_ARRAY_LEN(c->names)) == SBX_EGRESS_NO) {
				denied(c->dest, "address no longer pinned");
				conn_close(k, 1);
			}
		}
	}
	sbx_manifest_free(&m);
}

static void
drop_privileges(void)
{
	cap_t none = cap_init();
	int c;

	/* Nothing it does needs a capability: it reads, connects and writes its log. */
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	for (c = 0; c <= CAP_LAST_CAP; c++)
		prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
	if (none) {
		cap_set_proc(none);
		cap_free(none);
	}
}

void
sbx_relay_main(const struct sbx_relay_cfg *c)
{
	struct pollfd pf[5 + 2 * MAX_CONNS];
	size_t map[MAX_CONNS], i, n, k;
	struct sigaction sa = { 0 };
	sigset_t none, sigs;

	cfg = c;
	policy = *c->policy;
	snprintf(base_corr, sizeof base_corr, "%s", sbx_audit_correlation());
	/* Signals arrive only while it waits (ppoll), so none slips between a
	 * check of the flags and the wait. */
	sigemptyset(&none);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_SETMASK, &sigs, NULL);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	drop_privileges();
	while (!quit) {
		int timeout = -1;
		double now = sbx_monotonic();

		if (reload) {
			reload = 0;
			reload_policy();
		}

		for (i = 0; i < n_dests; i++)
			if (dests[i].unreported) {
				if (now - dests[i].last_audit >= AUDIT_EVERY_S)
					audit_flush(&dests[i], now, 0);
				else
					timeout = 1000;
			}
		pf[0] = (struct pollfd){ c->listen_fd, POLLIN, 0 };
		pf[1] = (struct pollfd){ c->nflog_fd, POLLIN, 0 };
		pf[2] = (struct pollfd){ c->ctl_fd, POLLIN, 0 };
		pf[3] = (struct pollfd){ c->init_pidfd, POLLIN, 0 };
		pf[4] = (struct pollfd){ c->listen6_fd, POLLIN, 0 };
		for (n = 5, k = 0; k < MAX_CONNS; k++) {
			struct conn *cn = conns[k];
			short cev = 0, uev = 0;

			if (cn == NULL)
				continue;
			if (cn->state == C_CONNECTING) {
				uev = POLLOUT;
			} else {
				if (cn->state == C_INSPECT || (cn->up.len == 0 && !cn->up.eof))
					cev |= POLLIN;
				if (cn->up.len > 0 && cn->state == C_OPEN)
					uev |= POLLOUT;
				if (cn->down.len == 0 && !cn->down.eof)
					uev |= POLLIN;
				if (cn->down.len > 0)
					cev |= POLLOUT;
				if (cn->state == C_INSPECT && cn->up.eof)
					cev = 0;
			}
			map[(n - 5) / 2] = k;
			pf[n++] = (struct pollfd){ cn->cfd, cev, 0 };
			pf[n++] = (struct pollfd){ cn->ufd, uev, 0 };
		}
		if (ppoll(pf, n, timeout < 0 ? NULL : &(struct timespec){ timeout / 1000, 0 },
		    &none) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[3].revents)
			break;   /* the sandbox is gone */
		if (pf[1].revents)
			nflog_drain(c->nflog_fd);
		if (pf[0].revents)
			accept_one(c->listen_fd);
		if (pf[4].revents)
			accept_one(c->listen6_fd);
		if (pf[2].revents)
			answer(c->ctl_fd);
		for (i = 5; i < n; i += 2) {
			k = map[(i - 5) / 2];
			if (conns[k] && (pf[i].revents || pf[i + 1].revents))
				service(k, pf[i].revents, pf[i + 1].revents);
		}
	}
	nflog_drain(c->nflog_fd);
	for (i = 0; i < n_dests; i++)
		audit_flush(&dests[i], sbx_monotonic(), 1);
	_exit(0);
}

int
sbx_relay_query(const char *sock_path, const char *request, struct sbx_relay_counts *c,
    struct sbx_err *e)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { 5, 0 };
	char *buf = NULL, *line, *save = NULL;
	size_t len;
	int fd;

	memset(c, 0, sizeof *c);
	if (snprintf(sun.sun_path, sizeof sun.sun_path, "%s", sock_path) >=
	    (int)sizeof sun.sun_path)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "%s: path too long", sock_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "socket");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "the sandbox's egress relay (%s)", sock_path);
		close(fd);
		return -1;
	}
	/* The request line, then end of writing: the relay answers at once. */
	if (request != NULL) {
		char req[CORR_MAX + 16];
		int l = snprintf(req, sizeof req, "%s\n", request);

		if (l > 0 && (size_t)l < sizeof req)
			sbx_write_all(fd, req, (size_t)l);
	}
	shutdown(fd, SHUT_WR);
	if (sbx_read_fd(fd, 1 << 20, &buf, &len, "the egress relay's counters", e) == -1) {
		close(fd);
		return -1;
	}
	close(fd);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct sbx_relay_dest d = { "", 0, 0, 0 }, *nd;
		char *tab = strchr(line, '\t');

		if (tab == NULL || (size_t)(tab - line) >= sizeof d.name ||
		    sscanf(tab + 1, "%lld\t%lld\t%lld", &d.sent, &d.received, &d.denied) != 3)
			continue;
		memcpy(d.name, line, (size_t)(tab - line));
		d.name[tab - line] = '\0';
		if ((nd = realloc(c->d, (c->n + 1) * sizeof *nd)) == NULL) {
			free(buf);
			sbx_relay_counts_free(c);
			return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		}
		c->d = nd;
		c->d[c->n++] = d;
	}
	free(buf);
	return 0;
}

void
sbx_relay_counts_free(struct sbx_relay_counts *c)
{
	free(c->d);
	memset(c, 0, sizeof *c);
}
