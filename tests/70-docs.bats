#!/usr/bin/env bats
# The documentation is true: man page EXAMPLES run, example manifests work,
# completions load, make install puts everything in place.
load helpers

REPO="$BATS_TEST_DIRNAME/.."

# Print each example of a rendered man page, as man shows it to a reader: the
# indented blocks of its EXAMPLES section, without their indentation, NUL-separated.
rendered_examples() {
	MANWIDTH=120 MAN_KEEP_FORMATTING='' man -l "$1" 2>/dev/null | awk '
		function flush() { if (block != "") printf "%s%c", block, 0; block = "" }
		/^[^ ]/ { flush(); on = ($0 == "EXAMPLES"); next }
		!on { next }
		/^           / { sub(/^           /, ""); block = block $0 "\n"; next }
		/^ *$/ { if (block != "") block = block "\n"; next }
		{ flush() }
		END { flush() }'
}

@test "every man page's EXAMPLES, as man renders them, run when pasted anywhere" {
	local page block n pages=0
	command -v man >/dev/null || skip "man is not installed (contrib/install-deps.sh installs man-db)"
	# an empty directory: an example that needs the source tree fails here
	mkdir "$WORK/paste"
	cd "$WORK/paste"
	for page in "$REPO"/build/man/*; do
		pages=$((pages + 1))
		n=0
		while IFS= read -r -d '' block; do
			n=$((n + 1))
			if LC_ALL=C grep -q '[^ -~	]' <<<"$block"; then
				echo "$page: an example has characters that are not plain ASCII:"
				echo "$block"
				false
			fi
			run bash -euo pipefail -c "$block"
			[ "$status" -eq 0 ] || { echo "$page example $n failed ($status):"; echo "$block"; echo "$output"; false; }
		done < <(rendered_examples "$page")
		[ "$n" -ge 1 ] || { echo "$page has no examples"; false; }
	done
	[ "$pages" -eq "$(find "$REPO/man" -name '*.scd' | wc -l)" ]
	# the examples cleaned up after themselves
	[ -z "$(sbx-ls -q)" ]
	[ -z "$(find "$WORK/paste" -mindepth 1)" ]
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
	printf 'mounts: [{path: %s, mode: rw}]\n' "$WORK/workspace" | policy
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
	[ -f "$WORK/dest/opt/sbx/share/sbx/manifests/minimal.yaml" ]
	PATH="$WORK/dest/opt/sbx/bin:$PATH" run -0 sbx-provision -n "$WORK/dest/opt/sbx/share/sbx/manifests/minimal.yaml"
	run -0 make -s -C "$REPO" uninstall DESTDIR="$WORK/dest" PREFIX=/opt/sbx
	[ ! -e "$WORK/dest/opt/sbx/bin/sbx-run" ]
	[ ! -e "$WORK/dest/opt/sbx/share/sbx" ]
}
