/* SPDX-License-Identifier: MIT */
/* The egress allow-list: see egress.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress.h"

/* One entry split into its host part (brackets gone) and its ports. */
static int
split(const char *entry, char *host, size_t size, unsigned *lo, unsigned *hi, struct sbx_err *e)
{
	const char *colon = strrchr(entry, ':');
	size_t len;
	char *end;
	long port;

	if (colon == NULL || colon == entry) {
		sbx_err_set(e, SBX_EX_DATAERR, "allowed_egress: '%s' has no port", entry);
		return -1;
	}
	len = (size_t)(colon - entry);
	if (entry[0] == '[' && len >= 2 && entry[len - 1] == ']') {
		entry++;
		len -= 2;
	}
	if (len == 0 || len >= size) {
		sbx_err_set(e, SBX_EX_DATAERR, "allowed_egress: '%s': bad host", entry);
		return -1;
	}
	memcpy(host, entry, len);
	host[len] = '\0';
	if (strcmp(colon + 1, "*") == 0) {
		*lo = 1;
		*hi = 65535;
		return 0;
	}
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port < 1 || port > 65535 || errno) {
		sbx_err_set(e, SBX_EX_DATAERR, "allowed_egress: '%s': bad port", entry);
		return -1;
	}
	*lo = *hi = (unsigned)port;
	return 0;
}

static void
mask(unsigned char *a, int prefix, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		int bits = prefix - (int)i * 8;

		a[i] &= bits >= 8 ? 0xff : bits <= 0 ? 0 : (unsigned char)(0xff << (8 - bits));
	}
}

static int
add_rule(struct sbx_egress *p, int family, const unsigned char *addr, int prefix, unsigned lo,
    unsigned hi, const char *name, struct sbx_err *e)
{
	struct sbx_egress_rule *nr = realloc(p->r, (p->n + 1) * sizeof *nr);

	if (nr == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	p->r = nr;
	nr = &p->r[p->n];
	memset(nr, 0, sizeof *nr);
	nr->family = family;
	memcpy(nr->addr, addr, family == AF_INET ? 4 : 16);
	mask(nr->addr, prefix, family == AF_INET ? 4 : 16);
	nr->prefix = prefix;
	nr->port_lo = lo;
	nr->port_hi = hi;
	if (name && (nr->name = strdup(name)) == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	p->n++;
	return 0;
}

static int
is_name(const char *h)
{
	const char *c;

	if (*h == '\0' || *h == '-' || *h == '.')
		return 0;
	for (c = h; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '.' && *c != '_')
			return 0;
	/* All digits and dots is an address that did not parse, not a name. */
	return strspn(h, "0123456789.") != strlen(h);
}

/* Classify one entry: 0 address/CIDR (filled), 1 host name, -1 error. */
static int
classify(const char *entry, char *host, size_t size, int *family, unsigned char *addr,
    int *prefix, unsigned *lo, unsigned *hi, struct sbx_err *e)
{
	const char *why = NULL;
	char *slash, *end;
	long pl = -1;

	if (split(entry, host, size, lo, hi, e) == -1)
		return -1;
	if ((slash = strchr(host, '/')) != NULL) {
		*slash = '\0';
		errno = 0;
		pl = strtol(slash + 1, &end, 10);
		if (slash[1] == '\0' || *end != '\0' || errno)
			why = "bad prefix length";
	}
	if (why) {
		/* reported below */
	} else if (inet_pton(AF_INET6, host, addr) == 1) {
		*family = AF_INET6;
		*prefix = pl == -1 ? 128 : (int)pl;
		if (entry[0] != '[')
			why = "write an IPv6 address in brackets, [ADDRESS]:PORT";
		else if (*prefix < 0 || *prefix > 128)
			why = "prefix length must be 0 to 128";
	} else if (inet_pton(AF_INET, host, addr) == 1) {
		*family = AF_INET;
		*prefix = pl == -1 ? 32 : (int)pl;
		if (*prefix < 0 || *prefix > 32)
			why = "prefix length must be 0 to 32";
	} else if (slash == NULL && is_name(host)) {
		return 1;
	} else {
		why = "not HOST:PORT, IP:PORT, CIDR:PORT or CIDR:*";
	}
	if (why) {
		sbx_err_set(e, SBX_EX_DATAERR, "allowed_egress: '%s': %s", entry, why);
		return -1;
	}
	return 0;
}

int
sbx_egress_wants_ipv6(const struct sbx_strv *entries)
{
	size_t i;

	for (i = 0; i < entries->n; i++)
		if (entries->v[i][0] == '[')
			return 1;
	return 0;
}

int
sbx_egress_resolve(const struct sbx_strv *entries, int ipv6, struct sbx_strv *pins,
    struct sbx_err *e)
{
	struct addrinfo hints = { .ai_family = ipv6 ? AF_UNSPEC : AF_INET,
		.ai_socktype = SOCK_STREAM }, *res, *ai;
	char host[256], line[320], ip[INET6_ADDRSTRLEN];
	unsigned char addr[16];
	unsigned lo = 0, hi = 0;
	int family = AF_INET, prefix = 0, rc;
	size_t i, j, found;

	sbx_strv_free(pins);
	for (i = 0; i < entries->n; i++) {
		rc = classify(entries->v[i], host, sizeof host, &family, addr, &prefix, &lo, &hi, e);
		if (rc == -1)
			return -1;
		if (rc == 0)
			continue;
		/* The same name twice (two ports) is pinned once. */
		for (j = 0; j < pins->n; j++)
			if (strncmp(pins->v[j], host, strlen(host)) == 0 &&
			    pins->v[j][strlen(host)] == ' ')
				break;
		if (j < pins->n)
			continue;
		if ((rc = getaddrinfo(host, NULL, &hints, &res)) != 0)
			return sbx_err_set(e, SBX_EX_UNAVAILABLE, "allowed_egress: cannot resolve "
			    "%s: %s", host, gai_strerror(rc));
		found = 0;
		for (ai = res; ai; ai = ai->ai_next) {
			const void *a;

			if (ai->ai_family == AF_INET) {
				a = &((const struct sockaddr_in *)(const void *)ai->ai_addr)->sin_addr;
				/* Loopback inside the sandbox is the sandbox's own. */
				if (*(const unsigned char *)a == 127)
					continue;
			} else if (ai->ai_family == AF_INET6) {
				a = &((const struct sockaddr_in6 *)(const void *)ai->ai_addr)->sin6_addr;
				if (IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_V4MAPPED(a))
					continue;
			} else {
				continue;
			}
			inet_ntop(ai->ai_family, a, ip, sizeof ip);
			snprintf(line, sizeof line, "%s %s", host, ip);
			for (j = 0; j < pins->n; j++)
				if (strcmp(pins->v[j], line) == 0)
					break;
			if (j < pins->n)
				continue;
			if (sbx_strv_add(pins, line) == -1) {
				freeaddrinfo(res);
				return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
			}
			found++;
		}
		freeaddrinfo(res);
		if (found == 0)
			return sbx_err_set(e, SBX_EX_UNAVAILABLE, "allowed_egress: %s has no address "
			    "other than loopback%s (loopback inside the sandbox is its own)", host,
			    ipv6 ? "" : " in IPv4");
	}
	return 0;
}

int
sbx_egress_parse(const struct sbx_strv *entries, const struct sbx_strv *pins,
    struct sbx_egress *p, struct sbx_err *e)
{
	struct sbx_strv own = { NULL, 0 };
	const struct sbx_strv *use = pins;
	char host[256];
	unsigned char addr[16];
	unsigned lo = 0, hi = 0;
	int family = AF_INET, prefix = 0, rc;
	size_t i, j;

	memset(p, 0, sizeof *p);
	if (pins == NULL) {
		if (sbx_egress_resolve(entries, sbx_egress_wants_ipv6(entries), &own, e) == -1)
			goto fail;
		use = &own;
	}
	for (i = 0; i < entries->n; i++) {
		rc = classify(entries->v[i], host, sizeof host, &family, addr, &prefix, &lo, &hi, e);
		if (rc == -1)
			goto fail;
		if (rc == 0) {
			if (add_rule(p, family, addr, prefix, lo, hi, NULL, e) == -1)
				goto fail;
			continue;
		}
		for (j = 0; j < use->n; j++) {
			size_t hl = strlen(host);
			const char *a = use->v[j] + hl + 1;

			if (strncmp(use->v[j], host, hl) != 0 || use->v[j][hl] != ' ')
				continue;
			if (inet_pton(AF_INET, a, addr) == 1)
				family = AF_INET;
			else if (inet_pton(AF_INET6, a, addr) == 1)
				family = AF_INET6;
			else {
				sbx_err_set(e, SBX_EX_DATAERR, "egress pin '%s' is not NAME ADDRESS",
				    use->v[j]);
				goto fail;
			}
			if (add_rule(p, family, addr, family == AF_INET ? 32 : 128, lo, hi, host,
			    e) == -1)
				goto fail;
		}
	}
	sbx_strv_free(&own);
	return 0;
fail:
	sbx_strv_free(&own);
	sbx_egress_free(p);
	return -1;
}

void
sbx_egress_free(struct sbx_egress *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->r[i].name);
	free(p->r);
	p->r = NULL;
	p->n = 0;
}

static int
covers(const struct sbx_egress_rule *r, int family, const void *addr, unsigned port)
{
	unsigned char a[16];
	size_t len = family == AF_INET ? 4 : 16;

	if (r->family != family || port < r->port_lo || port > r->port_hi)
		return 0;
	memcpy(a, addr, len);
	mask(a, r->prefix, len);
	return memcmp(a, r->addr, len) == 0;
}

int
sbx_egress_match(const struct sbx_egress *p, int family, const void *addr, unsigned port,
    const char **names, size_t max_names)
{
	size_t i, n = 0;

	for (i = 0; i < p->n; i++)
		if (p->r[i].name == NULL && covers(&p->r[i], family, addr, port))
			return SBX_EGRESS_ADDR;
	for (i = 0; i < p->n; i++)
		if (p->r[i].name && covers(&p->r[i], family, addr, port) && n + 1 < max_names)
			names[n++] = p->r[i].name;
	if (max_names > 0)
		names[n] = NULL;
	return n > 0 ? SBX_EGRESS_NAME : SBX_EGRESS_NO;
}

const struct sbx_egress_rule *
sbx_egress_resolver(const struct sbx_egress *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->r[i].name == NULL && p->r[i].prefix == (p->r[i].family == AF_INET ? 32 : 128) &&
		    p->r[i].port_lo == 53 && p->r[i].port_hi == 53)
			return &p->r[i];
	return NULL;
}
