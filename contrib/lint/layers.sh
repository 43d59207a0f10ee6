#!/bin/sh
# SPDX-License-Identifier: MIT
# The library's house rules, from its #include lines (make lint):
#  - the folders of lib/ are layers, bottom first: core store host tier life;
#    a file includes headers of its own folder and the folders below it only;
#  - no include circle between modules (a module is X.c with X.h) in lib/;
#  - headers are included by name ("x.h"), never by a path the rules miss.
# Usage: contrib/lint/layers.sh [LIBDIR]   (default lib). Exit 1 naming each break.
set -eu
lib=${1:-lib}
layers="core store host tier life"
# Each header's folder, found once: "NAME FOLDER" lines.
headers=$(find "$lib" -name '*.h' | sed 's|.*/\([^/]*\)/\([A-Za-z0-9_]*\)\.h$|\2 \1|')
find "$lib" -name '*.[ch]' | sort | while read -r f; do
	dir=$(basename "$(dirname "$f")")
	printf '%s %s - - -\n' "$f" "$dir"
	# An include by path would pass the include-path rule: headers by name only.
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\/[^"]*\)".*/\1/p' "$f" |
		while read -r inc; do
			printf '%s %s - /PATH %s\n' "$f" "$dir" "$inc"
		done
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([A-Za-z0-9_]*\)\.h".*/\1/p' "$f" |
		while read -r inc; do
			todir=$(printf '%s\n' "$headers" | awk -v h="$inc" '$1 == h { print $2; exit }')
			[ -n "$todir" ] || continue
			from=${f##*/}
			printf '%s %s %s %s %s\n' "$f" "$dir" "${from%.[ch]}" "$todir" "$inc"
		done
done | awk -v layers="$layers" '
BEGIN { n = split(layers, L, " "); for (i = 1; i <= n; i++) rank[L[i]] = i }
{
	file = $1; dir = $2; from = $3; todir = $4; to = $5
	if (!(dir in rank)) {
		if (to == "-") { printf "%s: not in a layer folder (%s)\n", file, layers; bad = 1 }
		next
	}
	if (to == "-")
		next
	if (todir == "/PATH") {
		printf "%s includes \"%s\": include lib/ headers by name, not by path\n", file, to
		bad = 1
		next
	}
	if (rank[todir] > rank[dir]) {
		printf "%s includes %s.h: %s is above %s\n", file, to, todir, dir; bad = 1
	}
	if (from != to && !((from, to) in edge)) {
		edge[from, to] = 1; out[from] = out[from] " " to; node[from] = 1; node[to] = 1
	}
}
function visit(v,    k, m, w, i) {
	state[v] = 1; path[++depth] = v
	m = split(out[v], w, " ")
	for (k = 1; k <= m; k++) {
		if (state[w[k]] == 1) {
			s = ""
			for (i = depth; i >= 1 && path[i] != w[k]; i--) s = path[i] " -> " s
			printf "include circle: %s -> %s%s\n", w[k], s, w[k]; bad = 1
		} else if (state[w[k]] == 0) {
			visit(w[k])
		}
	}
	depth--; state[v] = 2
}
END {
	for (v in node) state[v] = 0
	for (v in node) if (state[v] == 0) visit(v)
	exit bad
}'
