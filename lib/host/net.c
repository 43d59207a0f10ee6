/* SPDX-License-Identifier: MIT */
/* The sandbox's network: see net.h. */
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "egress.h"
#include "id.h"
#include "audit.h"
#include "net.h"
#include "netlink.h"
#include "util.h"

#define LEASE_MAX 4096

int
sbx_net_wanted(const struct sbx_manifest *m)
{
	return strcmp(m->network_policy, "egress-allow-list") == 0;
}

/* libnftables, loaded when a sandbox needs it (it brings libnftnl, libmnl,
 * libjansson and libxtables, which no other program should load). */

struct nft_ctx;
static struct {
	struct nft_ctx *(*ctx_new)(uint32_t);
	void (*ctx_free)(struct nft_ctx *);
	int (*buffer_output)(struct nft_ctx *);
	int (*buffer_error)(struct nft_ctx *);
	const char *(*get_output)(struct nft_ctx *);
	const char *(*get_error)(struct nft_ctx *);
	int (*run)(struct nft_ctx *, const char *);
} nft;

static int
nft_load(struct sbx_err *e)
{
	static int loaded;
	void *h;

	if (loaded)
		return 0;
	if ((h = dlopen("libnftables.so.1", RTLD_NOW | RTLD_LOCAL)) == NULL)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "network_policy egress-allow-list needs "
		    "libnftables (Debian: libnftables1): %s", dlerror());
#define SYM(field, name) \
	if ((*(void **)(void *)&nft.field = dlsym(h, name)) == NULL) \
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "libnftables lacks %s", name);
	SYM(ctx_new, "nft_ctx_new")
	SYM(ctx_free, "nft_ctx_free")
	SYM(buffer_output, "nft_ctx_buffer_output")
	SYM(buffer_error, "nft_ctx_buffer_error")
	SYM(get_output, "nft_ctx_get_output_buffer")
	SYM(get_error, "nft_ctx_get_error_buffer")
	SYM(run, "nft_run_cmd_from_buffer")
#undef SYM
	loaded = 1;
	return 0;
}

/* Run nft commands; with out, a copy of what they print. */
static int
nft_cmd(const char *cmds, char **out, struct sbx_err *e)
{
	struct nft_ctx *ctx;
	int r;

	if (nft_load(e) == -1)
		return -1;
	if ((ctx = nft.ctx_new(0)) == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "nftables: cannot make a context");
	nft.buffer_output(ctx);
	nft.buffer_error(ctx);
	r = nft.run(ctx, cmds);
	if (r != 0) {
		const char *msg = nft.get_error(ctx);
		size_t l = msg ? strcspn(msg, "\n") : 0;

		sbx_err_set(e, SBX_EX_OSERR, "nftables: %.*s", (int)(l > 300 ? 300 : l),
		    msg ? msg : "failed");
	} else if (out && (*out = strdup(nft.get_output(ctx) ? nft.get_output(ctx) : "")) == NULL) {
		r = -1;
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
	nft.ctx_free(ctx);
	return r == 0 ? 0 : -1;
}

/* rtnetlink, enough for a veth pair, its addresses and a default route. */

static int
veth_create(int nl, const char *host_if, pid_t pid)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct rtattr *info, *data, *peer;
	struct sbx_nlbuf b;
	unsigned p = (unsigned)pid;

	sbx_nl_init(&b, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof ifi);
	if (sbx_nla_put(&b, IFLA_IFNAME, host_if, strlen(host_if) + 1) == NULL ||
	    (info = sbx_nla_put(&b, IFLA_LINKINFO, NULL, 0)) == NULL ||
	    sbx_nla_put(&b, IFLA_INFO_KIND, "veth", 5) == NULL ||
	    (data = sbx_nla_put(&b, IFLA_INFO_DATA, NULL, 0)) == NULL ||
	    (peer = sbx_nla_put(&b, VETH_INFO_PEER, &ifi, sizeof ifi)) == NULL ||
	    sbx_nla_put(&b, IFLA_IFNAME, "eth0", 5) == NULL ||
	    sbx_nla_put(&b, IFLA_NET_NS_PID, &p, sizeof p) == NULL)
		return -ENOBUFS;
	sbx_nla_end(&b, peer);
	sbx_nla_end(&b, data);
	sbx_nla_end(&b, info);
	return sbx_nl_talk(nl, &b);
}

static int
link_del(int nl, const char *ifname)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct sbx_nlbuf b;

	sbx_nl_init(&b, RTM_DELLINK, 0, &ifi, sizeof ifi);
	if (sbx_nla_put(&b, IFLA_IFNAME, ifname, strlen(ifname) + 1) == NULL)
		return -ENOBUFS;
	return sbx_nl_talk(nl, &b);
}

static int
link_up(int nl, int index)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = index,
		.ifi_flags = IFF_UP, .ifi_change = IFF_UP };
	struct sbx_nlbuf b;

	sbx_nl_init(&b, RTM_NEWLINK, 0, &ifi, sizeof ifi);
	return sbx_nl_talk(nl, &b);
}

/* A bridge, made in the namespace of the socket's maker. */
static int
bridge_create(int nl, const char *name)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct rtattr *info;
	struct sbx_nlbuf b;

	sbx_nl_init(&b, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof ifi);
	if (sbx_nla_put(&b, IFLA_IFNAME, name, strlen(name) + 1) == NULL ||
	    (info = sbx_nla_put(&b, IFLA_LINKINFO, NULL, 0)) == NULL ||
	    sbx_nla_put(&b, IFLA_INFO_KIND, "bridge", 7) == NULL)
		return -ENOBUFS;
	sbx_nla_end(&b, info);
	return sbx_nl_talk(nl, &b);
}

/* Interface index into bridge master, and up. */
static int
link_enslave(int nl, int index, int master)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = index,
		.ifi_flags = IFF_UP, .ifi_change = IFF_UP };
	struct sbx_nlbuf b;

	sbx_nl_init(&b, RTM_NEWLINK, 0, &ifi, sizeof ifi);
	if (sbx_nla_put(&b, IFLA_MASTER, &master, sizeof master) == NULL)
		return -ENOBUFS;
	return sbx_nl_talk(nl, &b);
}

/* An address of a /30 (IPv4) or /126 (IPv6), usable at once (no duplicate detection). */
static int
addr_add(int nl, int index, int family, const void *addr)
{
	struct ifaddrmsg ifa = { .ifa_family = (unsigned char)family,
		.ifa_prefixlen = family == AF_INET ? 30 : 126, .ifa_scope = RT_SCOPE_UNIVERSE,
		.ifa_index = (unsigned)index };
	struct sbx_nlbuf b;
	size_t len = family == AF_INET ? 4 : 16;
	uint32_t flags = IFA_F_NODAD;

	sbx_nl_init(&b, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa, sizeof ifa);
	if (sbx_nla_put(&b, IFA_LOCAL, addr, len) == NULL || sbx_nla_put(&b, IFA_ADDRESS, addr, len) == NULL ||
	    (family == AF_INET6 && sbx_nla_put(&b, IFA_FLAGS, &flags, sizeof flags) == NULL))
		return -ENOBUFS;
	return sbx_nl_talk(nl, &b);
}

static int
route_default(int nl, int index, int family, const void *gw)
{
	struct rtmsg rt = { .rtm_family = (unsigned char)family, .rtm_table = RT_TABLE_MAIN,
		.rtm_protocol = RTPROT_BOOT, .rtm_scope = RT_SCOPE_UNIVERSE,
		.rtm_type = RTN_UNICAST };
	struct sbx_nlbuf b;

	sbx_nl_init(&b, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, &rt, sizeof rt);
	if (sbx_nla_put(&b, RTA_GATEWAY, gw, family == AF_INET ? 4 : 16) == NULL ||
	    sbx_nla_put(&b, RTA_OIF, &index, 4) == NULL)
		return -ENOBUFS;
	return sbx_nl_talk(nl, &b);
}

/* The addresses of one sandbox's veth pair. */
struct link {
	uint32_t net;                    /* the /30 (host order): .1 the host, .2 the sandbox */
	int v6;                          /* IPv6 too: POOL6 with the IPv4 address in its last 32 bits */
	unsigned char host4[4], sb4[4], host6[16], sb6[16], pool6[16];
};

/*
 * IPv6 on an end: off, or on with only the address we give it (no link-local
 * address, so that nothing but that address can be a source or a target).
 */
static void
ipv6_mode(const char *ifname, int on)
{
	char p[128];

	snprintf(p, sizeof p, "/proc/sys/net/ipv6/conf/%s/%s", ifname,
	    on ? "addr_gen_mode" : "disable_ipv6");
	sbx_write_str(p, "1");
}

/*
 * The sandbox's end, configured from here: a netlink socket made inside the
 * sandbox's network namespace keeps working there after we leave it.
 */
static int
config_inside(pid_t pid, const struct link *k, const char *port, struct sbx_err *e)
{
	char p[64];
	int self = -1, target = -1, nl = -1, rc = 0, index, br = 0, pi = 0;

	snprintf(p, sizeof p, "/proc/%d/ns/net", (int)pid);
	if ((self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) == -1 ||
	    (target = open(p, O_RDONLY | O_CLOEXEC)) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "open %s", p);
		goto out;
	}
	if (setns(target, CLONE_NEWNET) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "enter the sandbox's network namespace");
		goto out;
	}
	nl = sbx_nl_socket(NETLINK_ROUTE);
	ipv6_mode("eth0", k->v6);
	index = (int)if_nametoindex("eth0");
	if (port != NULL && nl != -1) {
		/* No address here, no IPv6 of its own: the bridge only carries
		 * the guest's frames between port and eth0. */
		sbx_write_str("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
		if (bridge_create(nl, "br0") == 0)
			br = (int)if_nametoindex("br0");
		pi = (int)if_nametoindex(port);
	}
	if (setns(self, CLONE_NEWNET) == -1) {
		/* Staying in the sandbox's namespace would be worse than dying. */
		abort();
	}
	if (nl == -1 || index == 0) {
		sbx_err_sys(e, SBX_EX_OSERR, "the sandbox's eth0");
		goto out;
	}
	if (port != NULL) {
		if (br == 0 || pi == 0 || (rc = link_enslave(nl, index, br)) < 0 ||
		    (rc = link_enslave(nl, pi, br)) < 0 || (rc = link_up(nl, br)) < 0) {
			if (br != 0 && pi != 0)
				errno = -rc;
			sbx_err_sys(e, SBX_EX_OSERR, "bridge %s and the sandbox's eth0", port);
			goto out;
		}
	} else if ((rc = addr_add(nl, index, AF_INET, k->sb4)) < 0 ||
	    (k->v6 && (rc = addr_add(nl, index, AF_INET6, k->sb6)) < 0) ||
	    (rc = link_up(nl, index)) < 0 ||
	    (rc = route_default(nl, index, AF_INET, k->host4)) < 0 ||
	    (k->v6 && (rc = route_default(nl, index, AF_INET6, k->host6)) < 0)) {
		errno = -rc;
		sbx_err_sys(e, SBX_EX_OSERR, "configure the sandbox's eth0");
		goto out;
	}
	close(nl);
	close(self);
	close(target);
	return 0;
out:
	if (nl != -1)
		close(nl);
	if (self != -1)
		close(self);
	if (target != -1)
		close(target);
	return -1;
}

/* The address pool and its leases */

struct lease {
	uint32_t net;            /* the /30's network address */
	char root[1024], id[SBX_ID_MAX + 1];
	long long pid, ticks, relay_pid, relay_ticks;
};

static void
names_for(uint32_t net, char *ifname, size_t ifsize, char *table, size_t tsize)
{
	if (ifname)
		snprintf(ifname, ifsize, "sbx-%08x", net);
	if (table)
		snprintf(table, tsize, "sbx_%08x", net);
}

/* NFLOG groups 16384..49151: one per /30 of any pool of /15 or smaller. */
static unsigned
group_for(uint32_t net)
{
	return 16384 + ((net >> 2) & 0x7fff);
}

static int
pool_get(uint32_t *base, int *prefix, struct sbx_err *e)
{
	const char *v = getenv("SBX_NET_POOL");
	char buf[64], *slash, *end;
	struct in_addr a;
	long pl;

	snprintf(buf, sizeof buf, "%s", v && *v ? v : SBX_NET_POOL_DEFAULT);
	if ((slash = strchr(buf, '/')) == NULL)
		goto bad;
	*slash = '\0';
	pl = strtol(slash + 1, &end, 10);
	if (*end != '\0' || pl < 15 || pl > 30 || inet_pton(AF_INET, buf, &a) != 1)
		goto bad;
	*prefix = (int)pl;
	*base = ntohl(a.s_addr) & (0xffffffffU << (32 - pl));
	return 0;
bad:
	return sbx_err_set(e, SBX_EX_DATAERR, "SBX_NET_POOL '%s' is not an IPv4 CIDR from /15 "
	    "to /30", v);
}

static int
lease_path(uint32_t net, char *buf, size_t size)
{
	struct in_addr a = { htonl(net) };
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a, ip, sizeof ip);
	return snprintf(buf, size, "%s/%s", SBX_NET_RUN_DIR, ip) >= (int)size ? -1 : 0;
}

static int
lease_write(const struct lease *l, int create, struct sbx_err *e)
{
	char path[256], text[LEASE_MAX];
	int n;

	lease_path(l->net, path, sizeof path);
	n = snprintf(text, sizeof text, "root %s\nsandbox %s\npid %lld\nticks %lld\n"
	    "relay_pid %lld\nrelay_ticks %lld\n", l->root, l->id, l->pid, l->ticks,
	    l->relay_pid, l->relay_ticks);
	if (n < 0 || n >= (int)sizeof text)
		return sbx_err_set(e, SBX_EX_SOFTWARE, "lease too long");
	return create ? sbx_write_atomic_new(path, text, (size_t)n, 0644, e) :
	    sbx_write_atomic_nosync(path, text, (size_t)n, 0644, e);
}

static int
lease_read(uint32_t net, struct lease *l)
{
	char path[256], text[LEASE_MAX], *line, *save = NULL;

	memset(l, 0, sizeof *l);
	l->net = net;
	if (lease_path(net, path, sizeof path) == -1 || sbx_read_str(path, text, sizeof text) < 0)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "root ", 5) == 0)
			snprintf(l->root, sizeof l->root, "%s", line + 5);
		else if (strncmp(line, "sandbox ", 8) == 0)
			snprintf(l->id, sizeof l->id, "%s", line + 8);
		else if (sscanf(line, "pid %lld", &l->pid) != 1 && sscanf(line, "ticks %lld",
		    &l->ticks) != 1 && sscanf(line, "relay_pid %lld", &l->relay_pid) != 1)
			sscanf(line, "relay_ticks %lld", &l->relay_ticks);
	}
	return 0;
}

/* Is any address of the host's interfaces in, or on a subnet around, net/30? */
static int
clashes(const struct ifaddrs *ifs, uint32_t net)
{
	const struct ifaddrs *i;

	for (i = ifs; i; i = i->ifa_next) {
		uint32_t a, mask;

		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET || i->ifa_netmask == NULL)
			continue;
		a = ntohl(((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr);
		mask = ntohl(((const struct sockaddr_in *)(const void *)i->ifa_netmask)->sin_addr.s_addr);
		if (mask < 0xfffffffcU)
			mask = mask == 0 ? 0 : mask;
		else
			mask = 0xfffffffcU;
		if ((a & mask) == (net & mask))
			return 1;
	}
	return 0;
}

/* Take the next free /30 after the last one handed out (so an address just
 * freed is the last to be used again), under the pool's lock. */
static int
lease_take(const struct sbx_store *s, const struct sbx_manifest *m, pid_t pid,
    struct lease *l, struct sbx_err *e)
{
	char path[256], buf[32];
	struct ifaddrs *ifs = NULL;
	uint32_t base = 0, slots, cursor = 0, k;
	int prefix = 30, lock, r = -1;

	if (pool_get(&base, &prefix, e) == -1 ||
	    sbx_mkdir_p(SBX_NET_RUN_DIR, 0755, e) == -1)
		return -1;
	snprintf(path, sizeof path, "%s/lock", SBX_NET_RUN_DIR);
	if ((lock = sbx_lock_file(path, 1, e)) == -1)
		return -1;
	if (getifaddrs(&ifs) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "getifaddrs");
		goto out;
	}
	slots = 1U << (30 - prefix);
	snprintf(path, sizeof path, "%s/cursor", SBX_NET_RUN_DIR);
	if (sbx_read_str(path, buf, sizeof buf) > 0)
		cursor = (uint32_t)strtoul(buf, NULL, 10);
	for (k = 1; k <= slots; k++) {
		uint32_t slot = (cursor + k) % slots, net = base + slot * 4;

		if (lease_path(net, path, sizeof path) == -1 || access(path, F_OK) == 0 ||
		    clashes(ifs, net))
			continue;
		memset(l, 0, sizeof *l);
		l->net = net;
		snprintf(l->root, sizeof l->root, "%s", s->root);
		snprintf(l->id, sizeof l->id, "%s", m->sandbox_id);
		l->pid = pid;
		l->ticks = (long long)sbx_proc_starttime(pid);
		if (lease_write(l, 1, e) == -1)
			goto out;
		snprintf(buf, sizeof buf, "%u\n", slot);
		snprintf(path, sizeof path, "%s/cursor", SBX_NET_RUN_DIR);
		sbx_write_atomic_nosync(path, buf, strlen(buf), 0644, NULL);
		r = 0;
		goto out;
	}
	sbx_err_set(e, SBX_EX_TEMPFAIL, "no free address in the sandbox network pool %s "
	    "(SBX_NET_POOL)", getenv("SBX_NET_POOL") ? getenv("SBX_NET_POOL") :
	    SBX_NET_POOL_DEFAULT);
out:
	if (ifs)
		freeifaddrs(ifs);
	close(lock);
	return r;
}

static int
lease_of(const struct sbx_manifest *m, uint32_t *net)
{
	struct in_addr a;
	char buf[32];

	if (sbx_rt_str(m, "net_addr") == NULL)
		return -1;
	snprintf(buf, sizeof buf, "%s", sbx_rt_str(m, "net_addr"));
	buf[strcspn(buf, "/")] = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	*net = ntohl(a.s_addr) & 0xfffffffcU;
	return 0;
}

/* The rules */

static void
addr_str(uint32_t a, char *buf, size_t size)
{
	struct in_addr in = { htonl(a) };

	inet_ntop(AF_INET, &in, buf, (socklen_t)size);
}

/* "ADDR/LEN . LO-HI, ..." of the family's single addresses (exact) or ranges;
 * NULL when out of memory. */
static char *
set_elements(const struct sbx_egress *p, int family, int exact)
{
	char a[INET6_ADDRSTRLEN], *els = strdup(""), *more;
	int full = family == AF_INET ? 32 : 128;
	size_t i;

	for (i = 0; els && i < p->n; i++) {
		const struct sbx_egress_rule *r = &p->r[i];

		if (r->family != family || (r->prefix == full) != exact)
			continue;
		inet_ntop(family, r->addr, a, sizeof a);
		if (asprintf(&more, "%s%s%s/%d . %u-%u", els, *els ? ", " : "", a, r->prefix,
		    r->port_lo, r->port_hi) == -1)
			more = NULL;
		free(els);
		els = more;
	}
	return els;
}

static char *
set_def(const char *name, const struct sbx_egress *p, int family, int exact)
{
	char *els = set_elements(p, family, exact), *def;

	if (els == NULL)
		return NULL;
	if (asprintf(&def, "set %s { type %s . inet_service; flags interval; %s%s%s }", name,
	    family == AF_INET ? "ipv4_addr" : "ipv6_addr", *els ? "elements = { " : "", els,
	    *els ? " }" : "") == -1)
		def = NULL;
	free(els);
	return def;
}

static int
rules_add(const struct link *k, const struct sbx_egress *p, uint32_t pool, int pool_prefix,
    unsigned port4, unsigned port6, struct sbx_err *e)
{
	char ifname[IFNAMSIZ], table[32], pool4[INET_ADDRSTRLEN], pool6[INET6_ADDRSTRLEN];
	char sb4[INET_ADDRSTRLEN], sb6[INET6_ADDRSTRLEN], v6rules[512] = "", redirect6[128] = "";
	char *cmd = NULL, *sets[4] = { NULL, NULL, NULL, NULL };
	unsigned group = group_for(k->net);
	int r = -1, i;

	names_for(k->net, ifname, sizeof ifname, table, sizeof table);
	addr_str(pool, pool4, sizeof pool4);
	inet_ntop(AF_INET, k->sb4, sb4, sizeof sb4);
	inet_ntop(AF_INET6, k->pool6, pool6, sizeof pool6);
	inet_ntop(AF_INET6, k->sb6, sb6, sizeof sb6);
	if ((sets[0] = set_def("exact", p, AF_INET, 1)) == NULL ||
	    (sets[1] = set_def("ranges", p, AF_INET, 0)) == NULL ||
	    (sets[2] = set_def("exact6", p, AF_INET6, 1)) == NULL ||
	    (sets[3] = set_def("ranges6", p, AF_INET6, 0)) == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	if (k->v6) {
		/*
		 * The sandbox kernel's multicast listener reports (sent from ::
		 * when an address is added, and again within a second) are
		 * dropped unlogged: they are not the sandbox's egress, and
		 * counted they would land in whichever run was under way. Then
		 * neighbour discovery on the link itself, then what IPv4 gets.
		 */
		snprintf(v6rules, sizeof v6rules,
		    "  icmpv6 type { mld-listener-report, mld-listener-done, mld2-listener-report } "
		    "ip6 daddr ff02::/16 ip6 hoplimit 1 drop\n"
		    "  ip6 saddr != %s log group %u drop\n"
		    "  icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } ip6 hoplimit 255 "
		    "accept\n", sb6, group);
		snprintf(redirect6, sizeof redirect6,
		    "  iifname \"%s\" meta nfproto ipv6 meta l4proto tcp redirect to :%u\n", ifname,
		    port6);
	}
	/*
	 * Before routing (the host does not forward, and a packet it would not
	 * forward is dropped without an answer): what the policy allows goes on to
	 * the redirect; the rest is logged to the relay and refused at once. A
	 * packet from any address but the sandbox's is dropped without an answer
	 * (an answer would go to whatever address it forged).
	 * Exact entries may name the host's own addresses; ranges never reach them,
	 * the pool's other sandboxes, link-local (cloud metadata) or multicast.
	 */
	if (asprintf(&cmd,
	    "table inet %1$s {\n"
	    " %2$s\n %3$s\n %4$s\n %5$s\n"
	    " chain refuse {\n"
	    "  log group %6$u\n"
	    "  meta l4proto tcp reject with tcp reset\n"
	    "  reject with icmpx admin-prohibited\n"
	    " }\n"
	    " chain from_sandbox {\n"
	    "  type filter hook prerouting priority -150; policy accept;\n"
	    "  iifname != \"%7$s\" return\n"
	    "  ip saddr != %8$s log group %6$u drop\n"
	    "%9$s"
	    "  ct state established ct status dnat accept\n"
	    "  ip daddr . tcp dport @exact ct state new accept\n"
	    "  ip6 daddr . tcp dport @exact6 ct state new accept\n"
	    "  fib daddr type { local, broadcast, multicast, anycast } goto refuse\n"
	    "  ip daddr { 169.254.0.0/16, 224.0.0.0/3, %10$s/%11$d } goto refuse\n"
	    "  ip6 daddr { fe80::/10, ff00::/8, %12$s/96 } goto refuse\n"
	    "  ip daddr . tcp dport @ranges ct state new accept\n"
	    "  ip6 daddr . tcp dport @ranges6 ct state new accept\n"
	    "  goto refuse\n"
	    " }\n"
	    " chain to_relay {\n"
	    "  type nat hook prerouting priority dstnat; policy accept;\n"
	    "  iifname \"%7$s\" meta nfproto ipv4 meta l4proto tcp redirect to :%13$u\n"
	    "%14$s"
	    " }\n"
	    "}\n", table, sets[0], sets[1], sets[2], sets[3], group, ifname, sb4, v6rules, pool4,
	    pool_prefix, pool6, port4, redirect6) == -1) {
		cmd = NULL;
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	r = nft_cmd(cmd, NULL, e);
out:
	free(cmd);
	for (i = 0; i < 4; i++)
		free(sets[i]);
	return r;
}

static int
rules_del(uint32_t net, struct sbx_err *e)
{
	char table[32], cmd[96];

	names_for(net, NULL, 0, table, sizeof table);
	/* "destroy" would not fail on a missing table, but nft 1.0.6 lacks it. */
	snprintf(cmd, sizeof cmd, "delete table inet %s\n", table);
	if (nft_cmd(cmd, NULL, e) == -1) {
		if (strstr(e->msg, "No such file") != NULL)
			return 0;
		return -1;
	}
	return 0;
}

static int
same_pins(const struct sbx_strv *a, const struct sbx_strv *b)
{
	size_t i, j;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++) {
		for (j = 0; j < b->n && strcmp(a->v[i], b->v[j]) != 0; j++)
			;
		if (j == b->n)
			return 0;
	}
	return 1;
}

int
sbx_net_refresh(const struct sbx_store *s, struct sbx_manifest *m, int *changed,
    struct sbx_err *e)
{
	struct sbx_strv pins = { NULL, 0 }, old;
	struct sbx_egress p;
	char table[32], *ex = NULL, *ex6 = NULL, *cmd = NULL;
	uint32_t net;
	int r = -1;

	*changed = 0;
	if (!sbx_net_wanted(m) || m->rt.egress_pins.n == 0 || lease_of(m, &net) == -1)
		return 0;
	if (sbx_egress_resolve(&m->allowed_egress, sbx_egress_wants_ipv6(&m->allowed_egress),
	    &pins, e) == -1)
		return -1;
	if (same_pins(&pins, &m->rt.egress_pins)) {
		sbx_strv_free(&pins);
		return 0;
	}
	if (sbx_egress_parse(&m->allowed_egress, &pins, &p, e) == -1) {
		sbx_strv_free(&pins);
		return -1;
	}
	names_for(net, NULL, 0, table, sizeof table);
	if ((ex = set_elements(&p, AF_INET, 1)) == NULL ||
	    (ex6 = set_elements(&p, AF_INET6, 1)) == NULL ||
	    asprintf(&cmd, "flush set inet %1$s exact\nflush set inet %1$s exact6\n"
	    "%2$s%1$s%3$s%4$s%5$s" "%6$s%7$s%8$s%9$s%10$s", table,
	    *ex ? "add element inet " : "", *ex ? " exact { " : "", ex, *ex ? " }\n" : "",
	    *ex6 ? "add element inet " : "", *ex6 ? table : "", *ex6 ? " exact6 { " : "", ex6,
	    *ex6 ? " }\n" : "") == -1) {
		cmd = NULL;
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto out;
	}
	/* One transaction: the old addresses go and the new come at once. */
	if (nft_cmd(cmd, NULL, e) == -1)
		goto out;
	old = m->rt.egress_pins;
	m->rt.egress_pins = pins;
	pins = old;
	*changed = 1;
	r = 0;
out:
	sbx_strv_free(&pins);
	sbx_egress_free(&p);
	free(ex);
	free(ex6);
	free(cmd);
	return r;
}

void
sbx_net_repinned(const struct sbx_manifest *m)
{
	long long relay = sbx_rt_int(m, "relay_pid");

	if (relay > 0 &&
	    sbx_proc_alive((pid_t)relay, (unsigned long long)sbx_rt_int(m, "relay_start_ticks")))
		kill((pid_t)relay, SIGHUP);
}

/* The pieces */

/* The IPv6 prefix (a /96) whose last 32 bits are each sandbox's IPv4 addresses. */
static int
pool6_get(unsigned char *base, struct sbx_err *e)
{
	const char *v = getenv("SBX_NET_POOL6");
	char buf[64], *slash;

	snprintf(buf, sizeof buf, "%s", v && *v ? v : SBX_NET_POOL6_DEFAULT);
	if ((slash = strchr(buf, '/')) == NULL || strcmp(slash, "/96") != 0)
		goto bad;
	*slash = '\0';
	if (inet_pton(AF_INET6, buf, base) != 1 || base[0] == 0xfe || base[0] == 0xff)
		goto bad;
	memset(base + 12, 0, 4);
	return 0;
bad:
	return sbx_err_set(e, SBX_EX_DATAERR, "SBX_NET_POOL6 '%s' is not an IPv6 /96 (unicast)", v);
}

static int
link_of(uint32_t net, int v6, struct link *k, struct sbx_err *e)
{
	uint32_t h = htonl(net + 1), sb = htonl(net + 2);

	memset(k, 0, sizeof *k);
	k->net = net;
	k->v6 = v6;
	memcpy(k->host4, &h, 4);
	memcpy(k->sb4, &sb, 4);
	if (pool6_get(k->pool6, e) == -1)
		return -1;
	memcpy(k->host6, k->pool6, 12);
	memcpy(k->host6 + 12, &h, 4);
	memcpy(k->sb6, k->pool6, 12);
	memcpy(k->sb6 + 12, &sb, 4);
	return 0;
}

int
sbx_net_check(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	struct sbx_strv none = { NULL, 0 };
	struct sbx_egress p;
	unsigned char base6[16];
	uint32_t base;
	int prefix;

	if (!sbx_net_wanted(m))
		return 0;
	if (m->allowed_egress.n == 0)
		return sbx_err_set(e, SBX_EX_DATAERR, "network_policy egress-allow-list: "
		    "allowed_egress is empty (use deny-all for no network)");
	/* Syntax first; names are resolved when the sandbox is made. */
	if (sbx_egress_parse(&m->allowed_egress, &none, &p, e) == -1)
		return -1;
	sbx_egress_free(&p);
	if (pool_get(&base, &prefix, e) == -1 || pool6_get(base6, e) == -1)
		return -1;
	if (s->rootless)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "network_policy egress-allow-list cannot "
		    "be enforced without root: its veth pair and host firewall rules need "
		    "CAP_NET_ADMIN on the host, and user-mode networking (pasta, slirp4netns) "
		    "needs /dev/net/tun, which is root-only here; refusing to provision");
	if (nft_load(e) == -1)
		return -1;
	if (sbx_egress_wants_ipv6(&m->allowed_egress) &&
	    access("/proc/sys/net/ipv6/conf/all/disable_ipv6", F_OK) == -1)
		return sbx_err_set(e, SBX_EX_UNAVAILABLE, "allowed_egress names IPv6 destinations, "
		    "and this host has no IPv6");
	return 0;
}

int
sbx_net_prepare(struct sbx_manifest *m, struct sbx_err *e)
{
	if (!sbx_net_wanted(m))
		return 0;
	return sbx_egress_resolve(&m->allowed_egress, sbx_egress_wants_ipv6(&m->allowed_egress),
	    &m->rt.egress_pins, e);
}

static int
listener(int family, const unsigned char *addr, unsigned *port, struct sbx_err *e)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t len = family == AF_INET ? sizeof *sin : sizeof *sin6;
	int fd = -1, one = 1;

	memset(&ss, 0, sizeof ss);
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		memcpy(&sin->sin_addr, addr, 4);
	else
		memcpy(&sin6->sin6_addr, addr, 16);
	if ((fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == -1 ||
	    bind(fd, (struct sockaddr *)&ss, len) == -1 || listen(fd, 256) == -1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "the relay's listening socket");
		if (fd != -1)
			close(fd);
		return -1;
	}
	*port = ntohs(family == AF_INET ? sin->sin_port : sin6->sin6_port);
	return fd;
}

static int
control_socket(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (sbx_store_path(s, m->sandbox_id, "net.sock", sun.sun_path, sizeof sun.sun_path,
	    NULL) == -1)
		return sbx_err_set(e, SBX_EX_CANTCREAT, "the state root's path is too long for the "
		    "relay's socket (at most %zu bytes)", sizeof sun.sun_path - 40);
	unlink(sun.sun_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1 || listen(fd, 16) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "the relay's socket %s", sun.sun_path);
		if (fd != -1)
			close(fd);
		return -1;
	}
	chmod(sun.sun_path, 0600);
	return fd;
}

/* Forked, not executed: the relay needs nothing but its descriptors and the policy. */
static pid_t
relay_start(struct sbx_relay_cfg *c, pid_t init, struct sbx_err *e)
{
	pid_t pid;
	int null;

	if ((c->init_pidfd = (int)syscall(SYS_pidfd_open, init, 0)) == -1)
		return sbx_err_sys(e, SBX_EX_OSERR, "pidfd_open");
	if ((pid = fork()) == -1) {
		close(c->init_pidfd);
		return sbx_err_sys(e, SBX_EX_OSERR, "start the relay");
	}
	if (pid == 0) {
		int keep[5] = { c->listen_fd, c->listen6_fd, c->nflog_fd, c->ctl_fd, c->init_pidfd };
		int fd, i;

		setsid();
		if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		/* Only its own descriptors survive (the sandbox's lock is among the rest). */
		for (fd = 3; fd < 1024; fd++) {
			for (i = 0; i < 5 && keep[i] != fd; i++)
				;
			if (i == 5)
				close(fd);
		}
		{
			char title[SBX_ID_MAX + 16];

			snprintf(title, sizeof title, "sbx-relay %s", c->sandbox_id);
			sbx_proc_title(title);
		}
		sbx_relay_main(c);
	}
	close(c->init_pidfd);
	return pid;
}

static int
net_create(const struct sbx_store *s, struct sbx_manifest *m, pid_t pid, const char *port,
    struct sbx_err *e)
{
	struct sbx_egress p;
	struct sbx_relay_cfg c = { s, m->sandbox_id, NULL, { 0 }, { 0 }, -1, -1, -1, -1, -1 };
	struct lease l;
	struct link k;
	char ifname[IFNAMSIZ], buf[64], ctl[1200];
	uint32_t pool = 0;
	int nl = -1, rc, index, pool_prefix = 0, v6 = sbx_egress_wants_ipv6(&m->allowed_egress);
	unsigned port4 = 0, port6 = 0;
	pid_t relay;

	if (!sbx_net_wanted(m))
		return 0;
	if (sbx_egress_parse(&m->allowed_egress, &m->rt.egress_pins, &p, e) == -1)
		return -1;
	c.policy = &p;
	if (pool_get(&pool, &pool_prefix, e) == -1 || lease_take(s, m, pid, &l, e) == -1) {
		sbx_egress_free(&p);
		return -1;
	}
	addr_str(l.net, buf, sizeof buf);
	snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "/30");
	if (sbx_rt_set_str(m, "net_addr", buf) == -1) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto fail;
	}
	if (link_of(l.net, v6, &k, e) == -1)
		goto fail;
	memcpy(c.sandbox4, k.sb4, 4);
	memcpy(c.sandbox6, k.sb6, 16);
	names_for(l.net, ifname, sizeof ifname, NULL, 0);
	if ((nl = sbx_nl_socket(NETLINK_ROUTE)) == -1) {
		sbx_err_sys(e, SBX_EX_OSERR, "netlink");
		goto fail;
	}
	if ((rc = veth_create(nl, ifname, pid)) < 0) {
		errno = -rc;
		sbx_err_sys(e, SBX_EX_OSERR, "create veth %s", ifname);
		goto fail;
	}
	ipv6_mode(ifname, v6);
	if ((index = (int)if_nametoindex(ifname)) == 0 ||
	    (rc = addr_add(nl, index, AF_INET, k.host4)) < 0 ||
	    (v6 && (rc = addr_add(nl, index, AF_INET6, k.host6)) < 0)) {
		errno = index == 0 ? errno : -rc;
		sbx_err_sys(e, SBX_EX_OSERR, "address of %s", ifname);
		goto fail;
	}
	if (config_inside(pid, &k, port, e) == -1 ||
	    (c.listen_fd = listener(AF_INET, k.host4, &port4, e)) == -1 ||
	    (v6 && (c.listen6_fd = listener(AF_INET6, k.host6, &port6, e)) == -1) ||
	    (c.nflog_fd = sbx_relay_nflog_open(group_for(l.net), e)) == -1 ||
	    (c.ctl_fd = control_socket(s, m, e)) == -1)
		goto fail;
	if ((relay = relay_start(&c, pid, e)) == -1)
		goto fail;
	l.relay_pid = relay;
	l.relay_ticks = (long long)sbx_proc_starttime(relay);
	lease_write(&l, 0, NULL);
	if (sbx_rt_set_int(m, "relay_pid", relay) == -1 ||
	    sbx_rt_set_int(m, "relay_start_ticks", l.relay_ticks) == -1) {
		kill(relay, SIGKILL);
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		goto fail;
	}
	/* The host's end comes up only once the rules are in place. */
	if (rules_add(&k, &p, pool, pool_prefix, port4, port6, e) == -1)
		goto fail;
	if ((rc = link_up(nl, index)) < 0) {
		errno = -rc;
		sbx_err_sys(e, SBX_EX_OSERR, "bring up %s", ifname);
		goto fail;
	}
	rc = 0;
	goto out;
fail:
	{
		struct sbx_err ignored;

		sbx_net_destroy(s, m, &ignored);
	}
	if (sbx_store_path(s, m->sandbox_id, "net.sock", ctl, sizeof ctl, NULL) == 0)
		unlink(ctl);
	rc = -1;
out:
	if (c.listen_fd != -1) close(c.listen_fd);
	if (c.listen6_fd != -1) close(c.listen6_fd);
	if (c.nflog_fd != -1) close(c.nflog_fd);
	if (c.ctl_fd != -1) close(c.ctl_fd);
	if (nl != -1)
		close(nl);
	sbx_egress_free(&p);
	return rc;
}

int
sbx_net_create(const struct sbx_store *s, struct sbx_manifest *m, pid_t pid, struct sbx_err *e)
{
	return net_create(s, m, pid, NULL, e);
}

int
sbx_net_create_bridged(const struct sbx_store *s, struct sbx_manifest *m, pid_t pid,
    const char *port, struct sbx_err *e)
{
	return net_create(s, m, pid, port, e);
}

int
sbx_net_guest(const struct sbx_manifest *m, unsigned char addr4[4], unsigned char gw4[4],
    int *prefix)
{
	const char *a = sbx_rt_str(m, "net_addr");
	struct in_addr in;
	char buf[32];
	uint32_t h, sb;

	if (a == NULL || strlen(a) >= sizeof buf || strchr(a, '/') == NULL)
		return -1;
	snprintf(buf, sizeof buf, "%.*s", (int)(strchr(a, '/') - a), a);
	if (inet_pton(AF_INET, buf, &in) != 1)
		return -1;
	h = htonl(ntohl(in.s_addr) + 1);
	sb = htonl(ntohl(in.s_addr) + 2);
	memcpy(gw4, &h, 4);
	memcpy(addr4, &sb, 4);
	*prefix = 30;
	return 0;
}

int
sbx_net_guest6(const struct sbx_manifest *m, unsigned char addr6[16], unsigned char gw6[16],
    int *prefix)
{
	unsigned char a4[4], g4[4];
	struct link k;
	uint32_t net;
	int p4;

	if (!sbx_egress_wants_ipv6(&m->allowed_egress))
		return 0;
	if (sbx_net_guest(m, a4, g4, &p4) == -1)
		return -1;
	memcpy(&net, g4, 4);
	if (link_of(ntohl(net) - 1, 1, &k, NULL) == -1)
		return -1;
	memcpy(addr6, k.sb6, 16);
	memcpy(gw6, k.host6, 16);
	*prefix = 126;
	return 1;
}

/* The relay: TERM (it writes its last audit events), KILL after a second. */
static void
stop(long long pid, long long ticks)
{
	if (pid > 0 && !sbx_proc_signal_wait((pid_t)pid, (unsigned long long)ticks, SIGTERM, 1000))
		kill((pid_t)pid, SIGKILL);
}

/* Everything of one lease, missing pieces being fine; the lease goes last. */
static int
teardown(uint32_t net, long long relay_pid, long long relay_ticks, struct sbx_err *e)
{
	char ifname[IFNAMSIZ], path[256];
	int nl, r = 0, rc;

	stop(relay_pid, relay_ticks);
	names_for(net, ifname, sizeof ifname, NULL, 0);
	if (rules_del(net, e) == -1)
		r = -1;
	if ((nl = sbx_nl_socket(NETLINK_ROUTE)) != -1) {
		if ((rc = link_del(nl, ifname)) < 0 && rc != -ENODEV && r == 0) {
			errno = -rc;
			r = sbx_err_sys(e, SBX_EX_OSERR, "delete %s", ifname);
		}
		close(nl);
	}
	if (r == 0 && lease_path(net, path, sizeof path) == 0)
		unlink(path);
	return r;
}

int
sbx_net_destroy(const struct sbx_store *s, const struct sbx_manifest *m, struct sbx_err *e)
{
	struct lease l;
	uint32_t net;
	char ctl[1200];

	if (!sbx_net_wanted(m) || lease_of(m, &net) == -1)
		return 0;
	if (sbx_store_path(s, m->sandbox_id, "net.sock", ctl, sizeof ctl, NULL) == 0)
		unlink(ctl);
	/* Only our own lease: another sandbox may hold the address by now. */
	if (lease_read(net, &l) == -1 || strcmp(l.root, s->root) != 0 ||
	    strcmp(l.id, m->sandbox_id) != 0)
		return 0;
	return teardown(net, sbx_rt_int(m, "relay_pid"), sbx_rt_int(m, "relay_start_ticks"), e);
}

int
sbx_net_counts(const struct sbx_store *s, const struct sbx_manifest *m, int run_phase,
    struct sbx_relay_counts *c, struct sbx_err *e)
{
	char path[1200], req[160];

	memset(c, 0, sizeof *c);
	if (!sbx_net_wanted(m))
		return 0;
	if (sbx_store_path(s, m->sandbox_id, "net.sock", path, sizeof path, e) == -1)
		return -1;
	if (run_phase != 0)
		snprintf(req, sizeof req, "%s\t%s", run_phase > 0 ? "begin" : "end",
		    sbx_audit_correlation());
	return sbx_relay_query(path, run_phase ? req : NULL, c, e);
}

void
sbx_net_trace(const struct sbx_relay_counts *before, const struct sbx_relay_counts *after,
    struct sbx_trace *t)
{
	char line[160];
	size_t i, j;

	t->egress_denied = t->egress_sent_bytes = t->egress_received_bytes = 0;
	for (i = 0; i < after->n; i++) {
		struct sbx_relay_dest d = after->d[i];

		for (j = 0; j < before->n; j++)
			if (strcmp(before->d[j].name, d.name) == 0) {
				d.sent -= before->d[j].sent;
				d.received -= before->d[j].received;
				d.denied -= before->d[j].denied;
				break;
			}
		t->egress_denied += d.denied;
		t->egress_sent_bytes += d.sent;
		t->egress_received_bytes += d.received;
		if (d.sent == 0 && d.received == 0 && d.denied == 0)
			continue;
		snprintf(line, sizeof line, "%s sent=%lld received=%lld denied=%lld", d.name, d.sent,
		    d.received, d.denied);
		sbx_strv_add(&t->egress_destinations, line);
	}
}

int
sbx_net_gc(int dry_run, void (*report)(void *ctx, const char *kind, const char *name),
    void *ctx)
{
	DIR *d;
	struct dirent *de;
	struct sbx_err e;
	char *out = NULL, *line, *save = NULL, path[256];
	struct if_nameindex *ifs, *i;
	struct lease l;
	struct in_addr a;
	uint32_t net;
	int lock;

	snprintf(path, sizeof path, "%s/lock", SBX_NET_RUN_DIR);
	if (access(SBX_NET_RUN_DIR, F_OK) == -1 || (lock = sbx_lock_file(path, 1, &e)) == -1)
		return 0;
	/* Leases whose sandbox's init is gone. */
	if ((d = opendir(SBX_NET_RUN_DIR)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (inet_pton(AF_INET, de->d_name, &a) != 1)
				continue;
			net = ntohl(a.s_addr);
			if (lease_read(net, &l) == -1 || (l.pid > 0 &&
			    sbx_proc_alive((pid_t)l.pid, (unsigned long long)l.ticks)))
				continue;
			report(ctx, "netlease", de->d_name);
			if (!dry_run)
				teardown(net, l.relay_pid, l.relay_ticks, &e);
		}
		closedir(d);
	}
	/* Tables and veths of ours that no lease names. */
	if (nft_cmd("list tables inet\n", &out, &e) == 0) {
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			unsigned v;
			char name[64];

			if (sscanf(line, "table inet sbx_%8x", &v) != 1 || lease_path(v, path,
			    sizeof path) == -1 || access(path, F_OK) == 0)
				continue;
			snprintf(name, sizeof name, "sbx_%08x", v);
			report(ctx, "nft-table", name);
			if (!dry_run)
				rules_del(v, &e);
		}
		free(out);
	}
	if ((ifs = if_nameindex()) != NULL) {
		for (i = ifs; i->if_index; i++) {
			unsigned v;
			int nl;

			if (sscanf(i->if_name, "sbx-%8x", &v) != 1 || lease_path(v, path,
			    sizeof path) == -1 || access(path, F_OK) == 0)
				continue;
			report(ctx, "veth", i->if_name);
			if (!dry_run && (nl = sbx_nl_socket(NETLINK_ROUTE)) != -1) {
				link_del(nl, i->if_name);
				close(nl);
			}
		}
		if_freenameindex(ifs);
	}
	close(lock);
	return 0;
}
