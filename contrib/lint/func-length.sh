#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Functions longer than the limit (150 lines) in C files, house layout: the
# name at column 0 (return type on the line above or before it on the same
# line), the body's braces at column 0. Prints "file:line name N lines" for
# each, from the name's line to the closing brace, and exits 1 if any.
#
# usage: contrib/lint/func-length.sh [-n MAX] DIR|FILE...  (a DIR: every *.c below it)
set -eu

max=150
usage() {
	echo "usage: func-length.sh [-n MAX] DIR|FILE..." >&2
	exit 64
}
while getopts n:h opt; do
	case $opt in
	n) max=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || usage
case $max in
'' | *[!0-9]*) usage ;;
esac

files=()
for arg in "$@"; do
	if [ -d "$arg" ]; then
		# Every C file below it (lib/'s layers are folders).
		mapfile -t found < <(find "$arg" -name '*.c' -type f | sort)
		if [ ${#found[@]} -eq 0 ]; then
			echo "func-length.sh: $arg: no C files" >&2
			exit 66
		fi
		files+=("${found[@]}")
	elif [ -f "$arg" ]; then
		files+=("$arg")
	else
		echo "func-length.sh: $arg: no such file or directory" >&2
		exit 66
	fi
done
[ ${#files[@]} -gt 0 ] || exit 0

awk -v max="$max" '
FNR == 1 { cand = ""; infn = 0 }
# A declarator at column 0: identifiers, spaces and stars, then "(".
/^[A-Za-z_][A-Za-z0-9_ \t*]*\(/ && !/^(typedef|extern|return)[ \t]/ {
	if (infn)
		next
	line = $0
	sub(/\(.*/, "", line)
	n = split(line, w, /[ \t*]+/)
	# A prototype ends at its semicolon; a definition does not.
	if ($0 ~ /;[ \t]*$/ || w[n] == "")
		cand = ""
	else {
		cand = w[n]
		start = FNR
	}
	next
}
/^\{/ && cand != "" && !infn { infn = 1; next }
/^\}/ && infn {
	len = FNR - start + 1
	if (len > max) {
		printf "%s:%d %s %d lines\n", FILENAME, start, cand, len
		bad = 1
	}
	infn = 0
	cand = ""
}
END { exit bad }
' "${files[@]}"
