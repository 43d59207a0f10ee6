#!/usr/bin/env bats
# Manifests: strict parsing, file:line:col errors with exit 65, nothing changed.
load helpers

@test "every invalid fixture exits 65 with file:line:col and creates nothing" {
	local f
	for f in "$FIXTURES"/invalid/*; do
		run -65 sbx-provision "$f"
		[[ $output =~ ^sbx-provision:\ $f:[0-9]+:[0-9]+:\  ]] || { echo "$f: $output"; false; }
	done
	run -0 sbx-ls -q
	[ -z "$output" ]
	[ -z "$(ls "$SBX_ROOT/sandboxes")" ]
}

@test "a document over 1 MiB is refused with exit 65" {
	python3 -c "
print('env:')
for i in range(12000): print('  K%d: \"%s\"' % (i, 'x' * 90))" > "$WORK/huge.yaml"
	run -65 sbx-provision "$WORK/huge.yaml"
	[[ $output == *"huge.yaml:1:1: document is larger than 1 MiB"* ]]
}

@test "bad input leaves an existing sandbox untouched" {
	provision "$MANIFESTS/minimal.yaml"
	before=$(sbx-inspect "$ID")
	run -65 sbx-provision "$FIXTURES/invalid/unknown-key.yaml"
	[ "$(sbx-inspect "$ID")" = "$before" ]
	run -0 sbx-run "$ID" -- true
}

@test "the seed's example document is accepted and round-trips through -o json" {
	run -0 sbx-provision --dry-run -o json "$MANIFESTS/seed-example.json"
	echo "$output" > "$WORK/out.json"
	python3 - "$MANIFESTS/seed-example.json" "$WORK/out.json" <<'PY'
import json, sys
src, out = (json.load(open(p)) for p in sys.argv[1:])
def sub(a, b, path=""):
    if isinstance(a, dict):
        for k, v in a.items():
            assert k in b, path + "/" + k
            sub(v, b[k], path + "/" + k)
    elif isinstance(a, list) and a and isinstance(a[0], dict):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            sub(x, y, "%s[%d]" % (path, i))
    else:
        assert a == b, (path, a, b)
sub(src, out)
PY
	# and the output is itself a valid input
	run -0 sbx-provision --dry-run "$WORK/out.json"
}

@test "status: forking is none; the seed's running is read in a manifest, refused in a state document" {
	printf 'status: forking\n' > "$WORK/forking.yaml"
	run -65 sbx-provision "$WORK/forking.yaml"
	[[ $output == *"forking.yaml:1:9: status: 'forking' is not one of provisioning, ready,"* ]]
	run -0 sbx-provision --dry-run -o yaml "$MANIFESTS/seed-example.json"
	[[ $output == *'status: "running"'* ]]
	provision "$MANIFESTS/minimal.yaml"
	local st=$SBX_ROOT/sandboxes/$ID/state.yaml
	sed -i 's/^status: "ready"/status: "running"/' "$st"
	run -65 sbx-inspect "$ID"
	[ "$output" = "sbx-inspect: $ID: $st: status 'running' is not a state sbx writes" ]
	run -65 sbx-gc "$ID"
	sed -i 's/^status: "running"/status: "ready"/' "$st"
	run -0 sbx-gc "$ID"
}

@test "YAML output of a dry run is a valid manifest again" {
	run -0 sbx-provision -n -o yaml "$MANIFESTS/spec-example.yaml"
	echo "$output" > "$WORK/again.yaml"
	run -0 sbx-provision -n -o yaml "$WORK/again.yaml"
	[ "$output" = "$(cat "$WORK/again.yaml")" ]
}

@test "every example manifest passes a dry run (the trusted one once the policy allows trust)" {
	local f
	for f in "$MANIFESTS"/*; do
		[ "$(basename "$f")" = trusted-build.yaml ] && continue
		run -0 sbx-provision --dry-run "$f"
	done
	run -77 sbx-provision --dry-run "$MANIFESTS/trusted-build.yaml"
	[[ $output == *"trust: trusted: not allowed by the built-in policy (max_trust: untrusted)"* ]]
	# a workspace is its owner's only where the policy says so
	run -0 sbx-provision --dry-run -o json "$MANIFESTS/python-analysis.yaml"
	[[ $output == *'"host":"/srv/sbx/workspace","guest":"/workspace","mode":"rw","idmap":false'* ]]
	printf 'max_trust: trusted\nmounts: [{path: /srv/sbx, mode: rw}, {path: /data, mode: rw}]\n' | policy
	for f in "$MANIFESTS"/*; do
		run -0 sbx-provision --dry-run "$f"
	done
	run -0 sbx-provision --dry-run -o json "$MANIFESTS/python-analysis.yaml"
	[[ $output == *'"host":"/srv/sbx/workspace","guest":"/workspace","mode":"rw","idmap":true'* ]]
}

@test "defaults are least privilege" {
	echo '{}' > "$WORK/empty.yaml"
	run -0 sbx-provision -n -o json "$WORK/empty.yaml"
	[[ $output == *'"network_policy":"deny-all"'* ]]
	[[ $output == *'"read_only_root":true'* ]]
	[[ $output == *'"capabilities":[]'* ]]
	[[ $output == *'"seccomp":"default"'* ]]
	[[ $output == *'"no_new_privileges":true'* ]]
	[[ $output == *'"landlock":true'* ]]
	# the seed's limits, always set: 1 CPU, 512 MiB, a pids limit, 300 s
	[[ $output == *'"resource_allocation":{"cpu_cores":1,"memory_mb":512,"memory_soft_pct":80,"pids":1024,"max_wall_clock_s":300}'* ]]
	# and a writable root gets a 1 GiB quota on the host's disk
	echo 'read_only_root: false' > "$WORK/rw.yaml"
	run -0 sbx-provision -n -o json "$WORK/rw.yaml"
	[[ $output == *'"disk_mb":1024'* ]]
}

@test "an unknown key names the nearest known one, when one is near" {
	run -65 sbx-provision -n - <<<'resource_allocation: {memroy_mb: 256}'
	[[ $output == *"<stdin>:1:23: resource_allocation: unknown key 'memroy_mb': did you mean 'memory_mb'? (known: cpu_cores"* ]]
	run -65 sbx-provision -n - <<<'netwrok_policy: host'
	[[ $output == *"did you mean 'network_policy'?"* ]]
	run -65 sbx-provision -n - <<<'colour: blue'
	[[ $output == *"unknown key 'colour' (known: "* ]]
	[[ $output != *"did you mean"* ]]
}

@test "manifest from stdin; a terminal on stdin is a usage error" {
	run -0 sbx-provision -n - < "$MANIFESTS/minimal.yaml"
	run -64 sbx-provision -o xml "$MANIFESTS/minimal.yaml"
}

@test "tiers and policies this build cannot enforce fail closed with 69" {
	run -69 sbx-provision "$MANIFESTS/seed-example.json"
	[[ $output == *"microvm"* ]]
	printf 'isolation_level: auto\n' > "$WORK/auto.yaml"
	run -69 sbx-provision "$WORK/auto.yaml"
	[ -z "$(sbx-ls -q)" ]
}
