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

	if (colon == NULL || colon == entry)
		return sbx_err_set(e, SBX_EX_DATAERR, "allowed_egress: '%s' has no port", entry);
	len = (size_t)(colon - entry);
	if (entry[0] == '[' && len >= 2 && entry[len - 1] == ']') {
		entry++;
		len -= 2;
	}
	if (len == 0 || len >= size)
		return sbx_err_set(e, SBX_EX_DATAERR, "allowed_egress: '%s': bad host", entry);
	memcpy(host, entry, len);
	host[len] = '\0';
	if (strcmp(colon + 1, "*") == 0) {
		*lo = 1;
		*hi = 65535;
		return 0;
	}
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port < 1 || port > 65535 || errno)
		return sbx_err_set(e, SBX_EX_DATAERR, "allowed_egress: '%s': bad port", entry);
	*lo = *hi = (unsigned)port;
	return 0;
}

static int
add_rule(struct sbx_egress *p, uint32_t addr, int prefix, unsigned lo, unsigned hi,
    const char *name, struct sbx_err *e)
{
	struct sbx_egress_rule *nr = realloc(p->r, (p->n + 1) * sizeof *nr);

	if (nr == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	p->r = nr;
	nr = &p->r[p->n];
	nr->addr = prefix ? addr & (0xffffffffU << (32 - prefix)) : 0;
	nr->prefix = prefix;
	nr->port_lo = lo;
	nr->port_hi = hi;
	nr->name = NULL;
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
classify(const char *entry, char *host, size_t size, uint32_t *addr, int *prefix,
    unsigned *lo, unsigned *hi, struct sbx_err *e)
{
	struct in_addr a;
	struct in6_addr a6;
	char *slash, *end;
	long pl = 32;

	if (split(entry, host, size, lo, hi, e) == -1)
		return -1;
	if ((slash = strchr(host, '/')) != NULL) {
		*slash = '\0';
		errno = 0;
		pl = strtol(slash + 1, &end, 10);
		if (slash[1] == '\0' || *end != '\0' || errno)
			return sbx_err_set(e, SBX_EX_DATAERR, "allowed_egress: '%s': bad prefix "
			    "length", entry);
	}
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "allowed_egress: '%s': IPv6 destinations "
		    "are not enforced by this build (IPv4 only); refusing to provision", entry);
	if (inet_pton(AF_INET, host, &a) == 1) {
		if (pl < 0 || pl > 32)
			return sbx_err_set(e, SBX_EX_DATAERR, "allowed_egress: '%s': prefix length "
			    "must be 0 to 32", entry);
		*addr = ntohl(a.s_addr);
		*prefix = (int)pl;
		return 0;
	}
	if (slash == NULL && is_name(host))
		return 1;
	return sbx_err_set(e, SBX_EX_DATAERR, "allowed_egress: '%s' is not HOST:PORT, IP:PORT, "
	    "CIDR:PORT or CIDR:*", entry);
}

int
sbx_egress_resolve(const struct sbx_strv *entries, struct sbx_strv *pins, struct sbx_err *e)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res, *ai;
	char host[256], line[320], ip[INET_ADDRSTRLEN];
	unsigned lo, hi;
	uint32_t addr;
	int prefix, rc;
	size_t i, j, found;

	sbx_strv_free(pins);
	for (i = 0; i < entries->n; i++) {
		rc = classify(entries->v[i], host, sizeof host, &addr, &prefix, &lo, &hi, e);
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
			const struct sockaddr_in *sin = (const struct sockaddr_in *)ai->ai_addr;

			/* Loopback inside the sandbox is the sandbox's own. */
			if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127)
				continue;
			inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof ip);
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
			return sbx_err_set(e, SBX_EX_UNAVAILABLE, "allowed_egress: %s has no IPv4 "
			    "address other than loopback (loopback inside the sandbox is its own)",
			    host);
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
	unsigned lo, hi;
	uint32_t addr;
	int prefix, rc;
	size_t i, j;

	memset(p, 0, sizeof *p);
	if (pins == NULL) {
		if (sbx_egress_resolve(entries, &own, e) == -1)
			goto fail;
		use = &own;
	}
	for (i = 0; i < entries->n; i++) {
		rc = classify(entries->v[i], host, sizeof host, &addr, &prefix, &lo, &hi, e);
		if (rc == -1)
			goto fail;
		if (rc == 0) {
			if (add_rule(p, addr, prefix, lo, hi, NULL, e) == -1)
				goto fail;
			continue;
		}
		for (j = 0; j < use->n; j++) {
			size_t hl = strlen(host);
			struct in_addr a;

			if (strncmp(use->v[j], host, hl) != 0 || use->v[j][hl] != ' ')
				continue;
			if (inet_pton(AF_INET, use->v[j] + hl + 1, &a) != 1) {
				sbx_err_set(e, SBX_EX_DATAERR, "egress pin '%s' is not NAME ADDRESS",
				    use->v[j]);
				goto fail;
			}
			if (add_rule(p, ntohl(a.s_addr), 32, lo, hi, host, e) == -1)
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
covers(const struct sbx_egress_rule *r, uint32_t addr, unsigned port)
{
	uint32_t mask = r->prefix ? 0xffffffffU << (32 - r->prefix) : 0;

	return (addr & mask) == r->addr && port >= r->port_lo && port <= r->port_hi;
}

int
sbx_egress_match(const struct sbx_egress *p, uint32_t addr, unsigned port,
    const char **names, size_t max_names)
{
	size_t i, n = 0;

	for (i = 0; i < p->n; i++)
		if (p->r[i].name == NULL && covers(&p->r[i], addr, port))
			return SBX_EGRESS_ADDR;
	for (i = 0; i < p->n; i++)
		if (p->r[i].name && covers(&p->r[i], addr, port) && n + 1 < max_names)
			names[n++] = p->r[i].name;
	if (max_names > 0)
		names[n] = NULL;
	return n > 0 ? SBX_EGRESS_NAME : SBX_EGRESS_NO;
}

int
sbx_egress_resolver(const struct sbx_egress *p, uint32_t *addr)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->r[i].name == NULL && p->r[i].prefix == 32 && p->r[i].port_lo == 53 &&
		    p->r[i].port_hi == 53) {
			*addr = p->r[i].addr;
			return 1;
		}
	return 0;
}
