/* SPDX-License-Identifier: MIT */
/* The operator's policy: parsing, defaults, and each ceiling, egress ranges above all. */
#include <math.h>
#include <stdlib.h>

#include "manifest.h"
#include "policy.h"
#include "tap.h"

static struct sbx_store store = { "/nonexistent/sbx-unit-root", "r0", 0 };

static struct sbx_policy *
policy(const char *text)
{
	struct sbx_policy *p = NULL;
	struct sbx_err e = { 0 };

	if (sbx_policy_parse("p.yaml", text, strlen(text), &p, &e) == -1)
		fprintf(stderr, "# %s\n", e.msg);
	return p;
}

/* Does the manifest text pass the policy text? 1 yes, 0 refused with 77, -1 other. */
static int
allowed(const char *ptext, const char *mtext, char *why, size_t size)
{
	struct sbx_policy *p = policy(ptext);
	struct sbx_manifest m;
	struct sbx_err e = { 0 };
	char filled[256];
	int r = -1;

	if (p == NULL)
		return -1;
	if (sbx_manifest_parse("m.yaml", mtext, strlen(mtext), &m, &e) == 0) {
		sbx_policy_defaults(p, &store, &m, filled, sizeof filled);
		if (sbx_manifest_defaults(&m, &e) == 0) {
			r = sbx_policy_check(p, &store, &m, m.rootfs, &e) == 0 ? 1 :
			    e.code == SBX_EX_NOPERM ? 0 : -1;
			snprintf(why, size, "%s", e.msg);
		}
		sbx_manifest_free(&m);
	}
	sbx_policy_free(p);
	return r;
}

static int
egress(const char *range, const char *entry)
{
	char pt[256], mt[256], why[1024];

	snprintf(pt, sizeof pt, "allowed_egress: [\"%s\"]\n", range);
	snprintf(mt, sizeof mt, "network_policy: egress-allow-list\nallowed_egress: [\"%s\"]\n",
	    entry);
	return allowed(pt, mt, why, sizeof why);
}

static int
refused_at(const char *ptext, const char *mtext, const char *want)
{
	char why[1024] = "";

	if (allowed(ptext, mtext, why, sizeof why) != 0 || strstr(why, want) == NULL) {
		fprintf(stderr, "# got: %s\n", why);
		return 0;
	}
	return 1;
}

static int
parse_fails(const char *text, const char *want)
{
	struct sbx_policy *p = NULL;
	struct sbx_err e = { 0 };

	if (sbx_policy_parse("p.yaml", text, strlen(text), &p, &e) == 0) {
		sbx_policy_free(p);
		return 0;
	}
	if (e.code != SBX_EX_DATAERR || strstr(e.msg, want) == NULL) {
		fprintf(stderr, "# got %d %s\n", e.code, e.msg);
		return 0;
	}
	return 1;
}

int
main(void)
{
	struct sbx_manifest m;
	struct sbx_policy *p;
	struct sbx_err e = { 0 };
	char filled[256], why[1024];

	/* The built-in defaults: the seed's least privilege. */
	p = policy("{}");
	sbx_manifest_parse("m.yaml", "read_only_root: false\n", 22, &m, &e);
	sbx_policy_defaults(p, &store, &m, filled, sizeof filled);
	ok(m.res.cpu_cores == 1 && m.res.memory_mb == 512 && m.res.pids == 1024 &&
	    m.res.max_wall_clock_s == 300 && m.res.disk_mb == 1024,
	    "policy: the built-in defaults are 1 CPU, 512 MiB, 1024 pids, 300 s, 1 GiB of disk");
	ok(strcmp(filled, "cpu_cores 1, memory_mb 512, pids 1024, disk_mb 1024") == 0,
	    "policy: the defaults it filled are named");
	sbx_manifest_free(&m);
	sbx_manifest_parse("m.yaml", "resource_allocation: {memory_mb: 64}\n", 37, &m, &e);
	sbx_policy_defaults(p, &store, &m, filled, sizeof filled);
	ok(m.res.memory_mb == 64 && m.res.disk_mb == SBX_UNSET_INT,
	    "policy: a manifest's own limit stays; a read-only root gets no disk quota");
	sbx_manifest_free(&m);
	sbx_policy_free(p);
	p = policy("defaults: {memory_mb: null, pids: null}\n");
	sbx_manifest_parse("m.yaml", "{}", 2, &m, &e);
	sbx_policy_defaults(p, &store, &m, filled, sizeof filled);
	ok(m.res.memory_mb == SBX_UNSET_INT && m.res.pids == SBX_UNSET_INT && m.res.cpu_cores == 1,
	    "policy: null means no default");
	sbx_manifest_free(&m);
	sbx_policy_free(p);

	/* Trust and the relaxations. */
	ok(refused_at("{}", "trust: trusted\n", "trust: trusted: not allowed by the policy (p.yaml, "
	    "which keeps the built-in rule: max_trust: untrusted)"),
	    "policy: trust is not self-declared");
	ok(allowed("{}", "trust: sensitive\n", why, sizeof why) == 1, "policy: less trust is fine");
	ok(refused_at("max_trust: semi-trusted\n", "trust: trusted\n", "p.yaml:1: max_trust"),
	    "policy: a refusal names the policy's line");
	ok(allowed("max_trust: trusted\n", "trust: trusted\n", why, sizeof why) == 1,
	    "policy: max_trust grants");
	ok(refused_at("{}", "security: {capabilities: [CAP_SYS_ADMIN]}\n",
	    "security.capabilities: CAP_SYS_ADMIN"), "policy: CAP_SYS_ADMIN needs a grant");
	ok(allowed("{}", "security: {capabilities: [cap_net_bind_service]}\n", why, sizeof why)
	    == 1, "policy: capability names compare as capabilities");
	ok(allowed("capabilities: [CAP_SYS_PTRACE]\n", "security: {capabilities: [CAP_SYS_PTRACE]}\n",
	    why, sizeof why) == 1, "policy: a listed capability is granted");
	ok(refused_at("capabilities: [CAP_SYS_PTRACE]\n", "security: {capabilities: [CAP_KILL]}\n",
	    "p.yaml:1:"), "policy: a capabilities list replaces the built-in one");
	ok(refused_at("{}", "security: {seccomp: /etc/sbx/allow-all}\n", "seccomp_files: none"),
	    "policy: no custom seccomp file without a grant");
	ok(allowed("seccomp_files: [/etc/sbx]\n", "security: {seccomp: /etc/sbx/p}\n", why,
	    sizeof why) == 1, "policy: seccomp_files grants below a prefix");
	ok(refused_at("seccomp_files: [/etc/sbx]\n", "security: {seccomp: /etc/sbxx/p}\n",
	    "seccomp_files"), "policy: a prefix is a directory, not a string prefix");
	ok(refused_at("max_trust: trusted\n", "{trust: trusted, security: {seccomp: unconfined}}\n",
	    "seccomp_unconfined"), "policy: unconfined needs allow");
	ok(refused_at("{}", "security: {landlock: false}\n", "landlock_off"),
	    "policy: Landlock off needs allow");
	ok(allowed("allow: {landlock_off: true}\n", "security: {landlock: false}\n", why,
	    sizeof why) == 1, "policy: allow grants");
	ok(refused_at("max_trust: trusted\n", "{trust: trusted, network_policy: host}\n",
	    "network_policy: host"), "policy: the host's network needs a grant");

	/* Limits. */
	ok(refused_at("limits: {memory_mb: 1024}\n", "resource_allocation: {memory_mb: 2048}\n",
	    "resource_allocation.memory_mb: 2048: not allowed by the policy (p.yaml:1: limits: "
	    "memory_mb 1024)"), "policy: a limit bounds");
	ok(refused_at("limits: {memory_mb: 1024}\ndefaults: {memory_mb: null}\n", "{}",
	    "memory_mb: unlimited"), "policy: unlimited is beyond any limit");
	ok(allowed("limits: {disk_mb: 10}\n", "{}", why, sizeof why) == 1,
	    "policy: disk_mb does not bound a read-only root");
	ok(allowed("limits: {disk_mb: 10}\n", "read_only_root: false\n", why, sizeof why) == 1,
	    "policy: a built-in default comes down to the file's limit");
	ok(refused_at("limits: {tmpfs_mb: 100}\n", "tmpfs: [{guest: /t, size_mb: 200}]\n",
	    "tmpfs[0]: size_mb 200"), "policy: tmpfs_mb bounds each tmpfs");
	ok(parse_fails("limits: {pids: 10}\ndefaults: {pids: 20}\n", "above limits"),
	    "policy: a default beyond its limit is the policy's error");

	/* Egress ranges. */
	ok(egress("10.0.0.0/8:443", "10.1.2.3:443") == 1, "egress: an address in a range");
	ok(egress("10.0.0.0/8:443", "10.1.0.0/16:443") == 1, "egress: a narrower range");
	ok(egress("10.0.0.0/16:443", "10.0.0.0/8:443") == 0, "egress: a wider range is not inside");
	ok(egress("10.0.0.0/8:443", "11.0.0.1:443") == 0, "egress: outside the range");
	ok(egress("10.0.0.0/8:443", "10.0.0.1:80") == 0, "egress: another port");
	ok(egress("10.0.0.0/8:*", "10.0.0.1:80") == 1, "egress: any port");
	ok(egress("10.0.0.0/8:443", "10.0.0.0/8:*") == 0, "egress: any port is not one port");
	ok(egress("[fd00::]/8:443", "[fd12::1]:443") == 1, "egress: IPv6 ranges");
	ok(egress("10.0.0.0/8:443", "[::ffff:10.0.0.1]:443") == 0, "egress: families differ");
	ok(egress("pypi.org:443", "PyPI.org:443") == 1, "egress: names compare without case");
	ok(egress("*.example.org:443", "files.example.org:443") == 1, "egress: a wildcard domain");
	ok(egress("*.example.org:443", "example.org:443") == 0, "egress: the wildcard is below");
	ok(egress("*.example.org:443", "evilexample.org:443") == 0,
	    "egress: the wildcard is a whole label");
	ok(egress("0.0.0.0/0:*", "pypi.org:443") == 0, "egress: a name is not matched by address");
	ok(egress("pypi.org:443", "1.2.3.4:443") == 0, "egress: an address is not a name");

	/* Reading. */
	ok(parse_fails("max_trusted: x\n", "p.yaml:1:1: unknown key 'max_trusted'"),
	    "policy: unknown keys are errors");
	ok(parse_fails("mounts: [{path: relative}]\n", "p.yaml:1:"), "policy: paths are absolute");
	ok(parse_fails("capabilities: [CAP_NOPE]\n", "not a capability"),
	    "policy: capabilities are names");
	ok(parse_fails("defaults: {max_wall_clock_s: null}\n", "max_wall_clock_s"),
	    "policy: a lifetime always has a default");
	ok(parse_fails("allowed_egress: [\"10.0.0.0/33:1\"]\n", "allowed_egress"),
	    "policy: egress entries are checked");
	ok(parse_fails("x: &a 1\n", "anchors"), "policy: as strict as a manifest");
	/* Warm pools: their keys, their defaults, what is refused. */
	{
		const struct sbx_pool_conf *pc;

		p = policy("pools:\n  - {name: py, manifest: /etc/sbx/py.yaml, size: 3, refill: claim}\n"
		    "  - {name: sh-2, manifest: /etc/sbx/sh.yaml, size: 0}\n");
		ok(p != NULL && sbx_policy_pools(p, &pc) == 2 && strcmp(pc[0].name, "py") == 0 &&
		    pc[0].size == 3 && pc[0].refill_on_claim && pc[0].max_idle_s == 3600 &&
		    pc[1].size == 0 && !pc[1].refill_on_claim,
		    "policy: pools are read with their defaults (max_idle_s 3600, refill watchdog)");
		sbx_policy_free(p);
		p = policy("{}");
		ok(p != NULL && sbx_policy_pools(p, &pc) == 0, "policy: no pools built in");
		sbx_policy_free(p);
	}
	ok(parse_fails("pools:\n  - {name: a, manifest: rel.yaml}\n", "not an absolute"),
	    "policy: a pool's manifest is an absolute path");
	ok(parse_fails("pools:\n  - {name: a, manifest: /a.yaml, size: 257}\n", "size"),
	    "policy: a pool's size is at most 256");
	ok(parse_fails("pools:\n  - {name: a, manifest: /a.yaml, refill: often}\n", "refill"),
	    "policy: refill is watchdog or claim");
	ok(parse_fails("pools:\n  - {manifest: /a.yaml}\n", "needs a name"),
	    "policy: a pool needs a name");
	return done_testing();
}
