/* SPDX-License-Identifier: MIT */
/* Unit tests for the egress allow-list (parsing, matching) and for the names
 * the relay reads from a connection's first bytes (TLS SNI, HTTP Host). */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress.h"
#include "relay.h"
#include "tap.h"

static struct sbx_strv
strv(const char *const *v)
{
	struct sbx_strv s = { NULL, 0 };

	while (*v)
		sbx_strv_add(&s, *v++);
	return s;
}

static int
parse(const char *entry, struct sbx_egress *p, int *code)
{
	const char *v[] = { entry, NULL };
	struct sbx_strv in = strv(v), none = { NULL, 0 };
	struct sbx_err e;
	int r = sbx_egress_parse(&in, &none, p, &e);

	*code = r == 0 ? 0 : e.code;
	sbx_strv_free(&in);
	return r;
}

static int
match(const struct sbx_egress *p, const char *addr, unsigned port)
{
	unsigned char a[16];
	const char *names[4];
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;

	inet_pton(family, addr, a);
	return sbx_egress_match(p, family, a, port, names, 4);
}

/* A ClientHello with one extension (server_name, when sni is not NULL). */
static size_t
client_hello(unsigned char *b, const char *sni)
{
	size_t n = 0, ext_start, hs_start, sl = sni ? strlen(sni) : 0;

	b[n++] = 0x16; b[n++] = 3; b[n++] = 1; n += 2;        /* record, length later */
	hs_start = n;
	b[n++] = 1; n += 3;                                    /* client_hello, length later */
	b[n++] = 3; b[n++] = 3;
	memset(b + n, 7, 32); n += 32;                         /* random */
	b[n++] = 0;                                            /* session ID */
	b[n++] = 0; b[n++] = 2; b[n++] = 0x13; b[n++] = 1;     /* one cipher suite */
	b[n++] = 1; b[n++] = 0;                                /* null compression */
	ext_start = n;
	n += 2;
	if (sni) {
		b[n++] = 0; b[n++] = 0;                            /* server_name */
		b[n++] = 0; b[n++] = (unsigned char)(sl + 5);
		b[n++] = 0; b[n++] = (unsigned char)(sl + 3);
		b[n++] = 0;                                        /* host_name */
		b[n++] = 0; b[n++] = (unsigned char)sl;
		memcpy(b + n, sni, sl); n += sl;
	}
	b[ext_start] = (unsigned char)((n - ext_start - 2) >> 8);
	b[ext_start + 1] = (unsigned char)(n - ext_start - 2);
	b[3] = (unsigned char)((n - 5) >> 8);
	b[4] = (unsigned char)(n - 5);
	b[hs_start + 2] = (unsigned char)((n - hs_start - 4) >> 8);
	b[hs_start + 3] = (unsigned char)(n - hs_start - 4);
	return n;
}

static int
peek(const void *b, size_t n, char *name)
{
	return sbx_relay_peek_name(b, n, name, 256);
}

/* A request given as a string literal, with its exact length. */
#define HTTP(s, name) peek(s, sizeof(s) - 1, name)

int
main(void)
{
	struct sbx_egress p;
	unsigned char tls[512];
	char name[256];
	size_t n;
	int code;

	/* parsing */
	ok(parse("10.0.0.1:80", &p, &code) == 0 && p.n == 1 && p.r[0].prefix == 32 &&
	    p.r[0].port_lo == 80 && p.r[0].port_hi == 80, "IP:PORT is one address, one port");
	ok(match(&p, "10.0.0.1", 80) == SBX_EGRESS_ADDR && match(&p, "10.0.0.1", 81) ==
	    SBX_EGRESS_NO && match(&p, "10.0.0.2", 80) == SBX_EGRESS_NO, "IP:PORT matches only itself");
	sbx_egress_free(&p);
	ok(parse("10.1.2.3/16:*", &p, &code) == 0 && p.r[0].addr[2] == 0 && p.r[0].port_lo == 1 &&
	    p.r[0].port_hi == 65535, "CIDR:* is masked and takes every port");
	ok(match(&p, "10.1.200.9", 443) == SBX_EGRESS_ADDR && match(&p, "10.2.0.1", 443) ==
	    SBX_EGRESS_NO, "a /16 covers its range only");
	sbx_egress_free(&p);
	ok(parse("[fd00::1]:443", &p, &code) == 0 && p.r[0].family == AF_INET6 &&
	    p.r[0].prefix == 128, "[IPv6]:PORT");
	ok(match(&p, "fd00::1", 443) == SBX_EGRESS_ADDR && match(&p, "10.0.0.1", 443) ==
	    SBX_EGRESS_NO, "an IPv6 entry matches IPv6 only");
	sbx_egress_free(&p);
	ok(parse("[fd00:1::/32]:*", &p, &code) == 0 && match(&p, "fd00:1:ffff::9", 1) ==
	    SBX_EGRESS_ADDR && match(&p, "fd00:2::1", 1) == SBX_EGRESS_NO, "an IPv6 range");
	sbx_egress_free(&p);
	ok(parse("0.0.0.0/0:22", &p, &code) == 0 && match(&p, "192.0.2.7", 22) == SBX_EGRESS_ADDR,
	    "/0 covers everything (the rules keep the host and link-local out)");
	sbx_egress_free(&p);
	ok(parse("fd00::1:80", &p, &code) == -1 && code == 65, "IPv6 without brackets: 65");
	ok(parse("10.0.0.1/33:80", &p, &code) == -1 && code == 65, "a /33: 65");
	ok(parse("[fd00::/129]:80", &p, &code) == -1 && code == 65, "a /129: 65");
	ok(parse("10.0.0.1:0", &p, &code) == -1 && code == 65, "port 0: 65");
	ok(parse("10.0.0.1:65536", &p, &code) == -1 && code == 65, "port 65536: 65");
	ok(parse("10.0.0.1", &p, &code) == -1 && code == 65, "no port: 65");
	ok(parse("1.2.3:80", &p, &code) == -1 && code == 65, "a bad address is not a name: 65");
	ok(parse("a/b:80", &p, &code) == -1 && code == 65, "a name with a slash: 65");
	{
		const char *in[] = { "api.example:443", "api.example:80", "10.9.9.9:443", NULL };
		const char *pins[] = { "api.example 192.0.2.10", "api.example fd00::10", NULL };
		struct sbx_strv i = strv(in), pn = strv(pins);
		struct sbx_err e;
		const char *names[4];
		unsigned char a[16];

		ok(sbx_egress_parse(&i, &pn, &p, &e) == 0 && p.n == 5,
		    "a host name becomes its pinned addresses, for each of its ports");
		inet_pton(AF_INET, "192.0.2.10", a);
		ok(sbx_egress_match(&p, AF_INET, a, 443, names, 4) == SBX_EGRESS_NAME &&
		    strcmp(names[0], "api.example") == 0 && names[1] == NULL,
		    "a pinned address is allowed only for its name");
		inet_pton(AF_INET, "10.9.9.9", a);
		ok(sbx_egress_match(&p, AF_INET, a, 443, names, 4) == SBX_EGRESS_ADDR,
		    "an address entry needs no name");
		ok(sbx_egress_resolver(&p) == NULL, "no resolver without IP:53");
		sbx_egress_free(&p);
		sbx_strv_free(&i);
		sbx_strv_free(&pn);
	}
	{
		const char *in[] = { "10.0.0.0/8:53", "10.0.0.53:53", NULL };
		struct sbx_strv i = strv(in), none = { NULL, 0 };
		struct sbx_err e;
		const struct sbx_egress_rule *r;

		ok(sbx_egress_parse(&i, &none, &p, &e) == 0 && (r = sbx_egress_resolver(&p)) &&
		    r->prefix == 32 && r->addr[3] == 53, "the resolver is the IP:53 entry, not a range");
		sbx_egress_free(&p);
		sbx_strv_free(&i);
	}

	/* HTTP */
	ok(HTTP("GET / HTTP/1.1\r\nHost: api.example:8080\r\nAccept: */*\r\n\r\n", name) == 1 &&
	    strcmp(name, "api.example") == 0, "HTTP Host, port dropped");
	ok(HTTP("POST /x HTTP/1.1\r\nuser-agent: t\r\nhOsT:\tapi.example\r\n\r\n", name) == 1 &&
	    strcmp(name, "api.example") == 0, "the Host header in any case, after other headers");
	ok(HTTP("GET / HTTP/1.1\r\nHost: api.exa", name) == 0, "a partial request: more bytes");
	ok(HTTP("GE", name) == 0, "a partial method: more bytes");
	ok(HTTP("GET / HTTP/1.0\r\nX-Host: a\r\n\r\n", name) == -1, "no Host: refused");
	ok(HTTP("GET / HTTP/1.1\r\nHost: a\x01" "b\r\n\r\n", name) == -1,
	    "a control byte in Host: refused");
	ok(HTTP("GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n", name) == -1, "a NUL in Host: refused");
	ok(HTTP("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", name) == -1,
	    "an address literal is no pinned name: refused");
	ok(HTTP("SSH-2.0-OpenSSH_9.2\r\n", name) == 1 && name[0] == '\0',
	    "neither TLS nor HTTP: the address decides");

	/* TLS */
	n = client_hello(tls, "api.example");
	ok(peek(tls, n, name) == 1 && strcmp(name, "api.example") == 0, "TLS SNI");
	ok(peek(tls, n - 3, name) == 0, "a partial ClientHello: more bytes");
	ok(peek(tls, 3, name) == 0, "a partial record header: more bytes");
	n = client_hello(tls, NULL);
	ok(peek(tls, n, name) == -1, "TLS without SNI: refused");
	n = client_hello(tls, "api.example");
	memcpy(tls + n - 5, "e\0vil", 5);
	ok(peek(tls, n, name) == -1, "a NUL inside the SNI: refused");
	n = client_hello(tls, "api.example");
	tls[n - 12] = 0xff;    /* the server name's length, beyond its extension */
	ok(peek(tls, n, name) == -1, "an SNI longer than its extension: refused");
	n = client_hello(tls, "api.example");
	tls[5] = 2;            /* server_hello */
	ok(peek(tls, n, name) == -1, "not a ClientHello: refused");
	return done_testing();
}
