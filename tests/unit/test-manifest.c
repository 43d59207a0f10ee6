/* SPDX-License-Identifier: MIT */
/* Manifest parsing, errors with positions, defaults and round trips. */
#include <stdlib.h>

#include "id.h"
#include "manifest.h"
#include "tap.h"
#include "util.h"

static int
parse(const char *text, struct sbx_manifest *m, struct sbx_err *e)
{
	return sbx_manifest_parse("t.yaml", text, strlen(text), m, e);
}

static int
fails_at(const char *text, const char *where)
{
	struct sbx_manifest m;
	struct sbx_err e = { 0 };

	if (parse(text, &m, &e) == 0) {
		sbx_manifest_free(&m);
		return 0;
	}
	if (e.code != SBX_EX_DATAERR || strncmp(e.msg, where, strlen(where)) != 0) {
		fprintf(stderr, "# got %d %s\n", e.code, e.msg);
		return 0;
	}
	return 1;
}

static char *
emit(const struct sbx_manifest *m, enum sbx_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	sbx_manifest_emit(f, m, fmt);
	fclose(f);
	return buf;
}

int
main(void)
{
	struct sbx_manifest m, m2;
	struct sbx_err e = { 0 };
	char *a, *b, *buf;
	unsigned u, g;

	ok(sbx_manifest_load("manifests/seed-example.json", &m, &e) == 0, "manifest: seed example "
	    "parses (%s)", e.msg);
	ok(m.res.memory_mb == 1024 && m.res.cpu_cores == 2 && m.n_mounts == 2 &&
	    strcmp(m.mounts[1].mode, "ro") == 0 && m.allowed_egress.n == 2 &&
	    m.trace.elapsed_s > 42.6 && m.trace.elapsed_s < 42.8 &&
	    strcmp(m.snapshot.last_snapshot_id, "snap-x9y8z7") == 0, "manifest: seed values");
	a = emit(&m, SBX_FMT_YAML);
	ok(parse(a, &m2, &e) == 0, "manifest: emitted YAML parses again (%s)", e.msg);
	b = emit(&m2, SBX_FMT_YAML);
	ok(strcmp(a, b) == 0, "manifest: YAML round trip is stable");
	free(b);
	sbx_manifest_free(&m2);
	b = emit(&m, SBX_FMT_JSON);
	ok(parse(b, &m2, &e) == 0, "manifest: emitted JSON parses again");
	free(b);
	b = emit(&m2, SBX_FMT_YAML);
	ok(strcmp(a, b) == 0, "manifest: JSON and YAML carry the same document");
	free(a);
	free(b);
	sbx_manifest_free(&m2);
	sbx_manifest_free(&m);

	ok(parse("{}", &m, &e) == 0 && sbx_manifest_defaults(&m, &e) == 0 &&
	    strcmp(m.network_policy, "deny-all") == 0 && m.read_only_root == 1 &&
	    m.security.landlock == 1 && m.security.no_new_privileges == 1 &&
	    m.security.capabilities.n == 0 && m.res.max_wall_clock_s == 300 &&
	    strcmp(m.user, "0:0") == 0, "manifest: defaults are least privilege");
	sbx_manifest_free(&m);
	ok(parse("isolation_level: auto\ntrust: trusted\n", &m, &e) == 0 &&
	    sbx_manifest_defaults(&m, &e) == 0 && strcmp(m.isolation_level, "namespace") == 0,
	    "manifest: auto picks namespace for trusted code");
	sbx_manifest_free(&m);

	ok(fails_at("a: 1\nresource_allocation:\n  cpu_core: 2\n", "t.yaml:1:1: unknown key 'a'"),
	    "manifest: unknown top-level key at 1:1");
	ok(fails_at("resource_allocation:\n  cpu_core: 2\n", "t.yaml:2:3: resource_allocation: "
	    "unknown key"), "manifest: unknown nested key at 2:3");
	ok(fails_at("resource_allocation: {memory_mb: \"5\"}\n", "t.yaml:1:34:"),
	    "manifest: a quoted number is a string");
	ok(fails_at("resource_allocation: {pids: 1.5}\n", "t.yaml:1:29: pids: expected a whole"),
	    "manifest: integers are whole");
	ok(fails_at("x: &a 1\n", "t.yaml:1:4: YAML anchors"), "manifest: anchors refused");
	ok(fails_at("trust: !!python/object x\n", "t.yaml:1:8: YAML tags"),
	    "manifest: foreign tags refused");
	ok(fails_at("read_only_root: 1\n", "t.yaml:1:17: read_only_root: expected true or false"),
	    "manifest: booleans are true or false");
	ok(fails_at("tmpfs: [{guest: /dev/shm}]\n", "t.yaml:1:17: guest: '/dev/shm' is inside /dev"),
	    "manifest: /dev is sbx's");
	ok(fails_at("filesystem_mounts: [{host: relative, guest: /w}]\n", "t.yaml:1:28: host: "
	    "'relative' is not an absolute path"), "manifest: host paths are absolute");
	ok(fails_at("filesystem_mounts: [{host: /a, guest: /w}, {host: /b, guest: /w}]\n",
	    "t.yaml:1:44: filesystem_mounts: guest '/w' appears twice"), "manifest: guests unique");
	ok(fails_at("allowed_egress: [\"example.com:99999\"]\nnetwork_policy: egress-allow-list\n",
	    "t.yaml:1:18: allowed_egress:"), "manifest: egress ports are checked");
	ok(fails_at("security: {capabilities: [CAP_NOPE]}\n", "t.yaml:1:27: capabilities: unknown "
	    "capability"), "manifest: capability names are checked");
	ok(fails_at("security: {seccomp: unconfined}\n", "t.yaml:1:21: seccomp: unconfined is "
	    "allowed only with trust: trusted"), "manifest: unconfined needs trusted");
	ok(fails_at("env: {A: [1]}\n", "t.yaml:1:10: A: expected a scalar"), "manifest: env values "
	    "are scalars");
	buf = calloc(1, SBX_DOC_MAX + 2);
	memset(buf, '#', SBX_DOC_MAX + 1);
	ok(sbx_manifest_parse("big", buf, SBX_DOC_MAX + 1, &m, &e) == -1 &&
	    strstr(e.msg, "larger than 1 MiB") != NULL, "manifest: 1 MiB cap");
	free(buf);

	ok(sbx_manifest_user_parse("1000:100", &u, &g) == 0 && u == 1000 && g == 100, "user: UID:GID");
	ok(sbx_manifest_user_parse("7", &u, &g) == 0 && u == 7 && g == 7, "user: UID alone");
	ok(sbx_manifest_user_parse("65536", &u, &g) == -1 && sbx_manifest_user_parse("1:", &u, &g) == -1 &&
	    sbx_manifest_user_parse("-1", &u, &g) == -1, "user: out of range and malformed");
	ok(sbx_id_valid("sbx-a1b2c3d4") && sbx_id_valid("job-42.step_1") && !sbx_id_valid("..") &&
	    !sbx_id_valid(".x") && !sbx_id_valid("a/b") && !sbx_id_valid("") &&
	    !sbx_id_valid("0123456789012345678901234567890123456789012345678901234567890123456"),
	    "id: validation");
	/* The tier's own runtime state: kept as written, read and written by key. */
	ok(parse("runtime_state: {watchdog_pid: 7, namespace: {pid: 42, cgroup: \"1:cpu=/a\", "
	    "rootless: true}}", &m, &e) == 0, "runtime_state: the tier's key parses (%s)", e.msg);
	ok(m.rt.watchdog_pid == 7 && sbx_rt_int(&m, "pid") == 42 &&
	    strcmp(sbx_rt_str(&m, "cgroup"), "1:cpu=/a") == 0 && sbx_rt_bool(&m, "rootless") &&
	    sbx_rt_int(&m, "cgroup") == SBX_UNSET_INT && sbx_rt_str(&m, "uid_base") == NULL,
	    "runtime_state: the tier's values by key, by type");
	ok(sbx_rt_set_int(&m, "pid", 43) == 0 && sbx_rt_set_str(&m, "cgroup", NULL) == 0 &&
	    sbx_rt_set_str(&m, "net_addr", "10.0.0.0/30") == 0, "runtime_state: set and remove");
	a = emit(&m, SBX_FMT_YAML);
	ok(strstr(a, "  namespace:\n    pid: 43\n    rootless: true\n    net_addr: \"10.0.0.0/30\"\n")
	    != NULL && strstr(a, "cgroup") == NULL, "runtime_state: written under the tier's key");
	ok(parse(a, &m2, &e) == 0 && sbx_rt_int(&m2, "pid") == 43, "runtime_state: round trip");
	free(a);
	sbx_manifest_free(&m2);
	sbx_manifest_strip_state(&m);
	ok(sbx_rt_int(&m, "pid") == SBX_UNSET_INT, "runtime_state: stripped with the state keys");
	sbx_manifest_free(&m);
	ok(fails_at("runtime_state: {namespace: {pid: 1}, oci: {pid: 2}}", "t.yaml:1:"),
	    "runtime_state: two tiers' state is refused");
	ok(parse("isolation_level: oci\nruntime_state: {namespace: {pid: 42}}", &m, &e) == 0 &&
	    sbx_rt_int(&m, "pid") == SBX_UNSET_INT, "runtime_state: another tier's map is not read");
	sbx_manifest_free(&m);
	ok(fails_at("runtime_state: {namespace: {pid: [1]}}", "t.yaml:1:"),
	    "runtime_state: a tier's value that is not a scalar is refused");
	/* A state document of a build before the tiers' keys: read, written anew. */
	ok(parse("runtime_state: {pid: 42, uid_base: 100000, cgroup: \"1:cpu=/a\", "
	    "watchdog_pid: 7}", &m, &e) == 0 && sbx_rt_int(&m, "pid") == 42 &&
	    sbx_rt_int(&m, "uid_base") == 100000 && m.rt.watchdog_pid == 7 &&
	    strcmp(m.rt.tier, "namespace") == 0, "runtime_state: an earlier build's keys (%s)",
	    e.msg);
	a = emit(&m, SBX_FMT_YAML);
	ok(strstr(a, "  namespace:\n    pid: 42\n    uid_base: 100000\n") != NULL,
	    "runtime_state: an earlier build's keys are written under the tier's");
	free(a);
	sbx_manifest_free(&m);
	ok(fails_at("runtime_state: {pid: 1, oci: {pid: 2}}", "t.yaml:1:"),
	    "runtime_state: an earlier build's keys with another tier's are refused");

	sbx_manifest_init(&m);
	m.isolation_level = strdup("namespace");
	ok(sbx_rt_set_int(&m, "pid", 9) == 0 && strcmp(m.rt.tier, "namespace") == 0,
	    "runtime_state: the first set names the map for the sandbox's tier");
	sbx_manifest_free(&m);

	return done_testing();
}
