#!/usr/bin/env bats
# The documentation is true: man page EXAMPLES run, example manifests work,
# completions load, make install puts everything in place.
load helpers

REPO="$BATS_TEST_DIRNAME/.."

# Print each ``` block of the EXAMPLES section of a scdoc page, NUL-separated.
examples() {
	awk '/^# EXAMPLES/ { on = 1; next } /^# / { on = 0 }
	     on && /^```/ { if (inblock) { printf "%c", 0; inblock = 0 } else inblock = 1; next }
	     on && inblock { print }' "$1"
}

@test "every man page's EXAMPLES run as written" {
	local page block n=0
	cd "$REPO"
	for page in man/*.scd; do
		while IFS= read -r -d '' block; do
			n=$((n + 1))
			run bash -euo pipefail -c "$block"
			[ "$status" -eq 0 ] || { echo "$page example failed:"; echo "$block"; echo "$output"; false; }
		done < <(examples "$page")
	done
	[ "$n" -ge 10 ]
	# the examples cleaned up after themselves
	[ -z "$(sbx-ls -q)" ]
}

@test "every program has a man page, and every page builds" {
	local p
	for p in "$REPO"/cmd/sbx-*.c; do
		p=$(basename "$p" .c)
		[ -f "$REPO/man/$p.1.scd" ] || { echo "no man page for $p"; false; }
	done
	for p in "$REPO"/man/*.scd; do
		scdoc < "$p" > /dev/null
	done
}

@test "manifests/minimal.yaml provisions and runs" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- echo ok
}

@test "manifests/python-analysis.yaml: a Python job in its workspace" {
	mkdir -p "$WORK/workspace" && chmod 755 "$WORK" "$WORK/workspace"
	sed "s#/srv/sbx/workspace#$WORK/workspace#" "$MANIFESTS/python-analysis.yaml" > "$WORK/py.yaml"
	provision "$WORK/py.yaml"
	run -0 sbx-run "$ID" -- python3 -c '
import csv, statistics
rows = [(i, i * i) for i in range(100)]
with open("data.csv", "w") as f: csv.writer(f).writerows(rows)
print(statistics.mean(r[1] for r in rows))'
	[ "$output" = "3283.5" ]
	[ -f "$WORK/workspace/data.csv" ]
	grep -q 'cpu_cores: 2' <(sbx-inspect "$ID")
	grep -q 'memory_mb: 2048' <(sbx-inspect "$ID")
}

@test "manifests/trusted-build.yaml: a build as user 1000 with a writable root" {
	mkdir -p "$WORK/src" && printf 'all:\n\techo built > /home/sandbox/out\n' > "$WORK/src/Makefile"
	chmod -R a+rX "$WORK/src"
	sed "s#/srv/sbx/src#$WORK/src#" "$MANIFESTS/trusted-build.yaml" > "$WORK/tb.yaml"
	# trust is the operator's to grant (sbx-policy(5))
	echo 'max_trust: trusted' | policy
	provision "$WORK/tb.yaml"
	run -0 sbx-run "$ID" -- sh -c 'id -u; cp -r /src /tmp/b && cd /tmp/b && (command -v make >/dev/null && make -s || echo built > /home/sandbox/out); cat /home/sandbox/out; echo x > /var/tmp/tool && echo root-writable'
	[ "${lines[0]}" = "1000" ]
	[[ $output == *"built"* ]]
	[[ $output == *"root-writable"* ]]
	run -1 sbx-run "$ID" -- touch /src/x
}

@test "manifests/egress-allow-list.yaml is valid and asks for the allow-list" {
	run -0 sbx-provision --dry-run -o yaml "$MANIFESTS/egress-allow-list.yaml"
	[[ $output == *'network_policy: "egress-allow-list"'* ]]
	[[ $output == *"files.pythonhosted.org:443"* ]]
	[[ $output == *"egress_refresh_s: 600"* ]]
}

@test "manifests/spec-example.yaml is valid; its example host paths are named when missing" {
	run -0 sbx-provision --dry-run "$MANIFESTS/spec-example.yaml"
	[ -e /data/workspace/agent-7 ] && skip "this host has the example's paths"
	run -66 sbx-provision "$MANIFESTS/spec-example.yaml"
	[[ $output == *"/data/workspace/agent-7"* ]]
	[ -z "$(sbx-ls -q)" ]
}

@test "completions load in bash and name every program" {
	run -0 bash -c "source '$REPO/completions/sbx.bash' && complete -p sbx sbx-provision sbx-run sbx-snap sbx-fork sbx-inspect sbx-ls sbx-gc sbx-watchdog sbx-pause"
	local p
	for p in "$REPO"/cmd/sbx-*.c; do
		p=$(basename "$p" .c)
		grep -q "$p" "$REPO/completions/sbx.bash" "$REPO/completions/_sbx" "$REPO/completions/sbx.fish"
	done
	if command -v zsh >/dev/null; then zsh -n "$REPO/completions/_sbx"; fi
	if command -v fish >/dev/null; then fish -n "$REPO/completions/sbx.fish"; fi
}

@test "make install honours PREFIX and DESTDIR" {
	run -0 make -s -C "$REPO" install DESTDIR="$WORK/dest" PREFIX=/opt/sbx
	[ -x "$WORK/dest/opt/sbx/bin/sbx-run" ]
	[ -f "$WORK/dest/opt/sbx/share/man/man1/sbx-run.1" ]
	[ -f "$WORK/dest/opt/sbx/share/man/man5/sbx-manifest.5" ]
	[ -f "$WORK/dest/opt/sbx/share/man/man7/sbx.7" ]
	[ -f "$WORK/dest/opt/sbx/share/bash-completion/completions/sbx" ]
	[ -f "$WORK/dest/opt/sbx/share/zsh/site-functions/_sbx" ]
	[ -f "$WORK/dest/opt/sbx/share/fish/vendor_completions.d/sbx.fish" ]
	run -0 make -s -C "$REPO" uninstall DESTDIR="$WORK/dest" PREFIX=/opt/sbx
	[ ! -e "$WORK/dest/opt/sbx/bin/sbx-run" ]
}
