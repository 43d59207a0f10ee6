#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every header compiles on its own: for each *.h under the given directories
# (default: lib), a file holding nothing but `#include "X.h"` must pass
# $CC -fsyntax-only with the project's warnings. The include path is every
# directory under them that holds a header, so a flat lib/ and one split into
# folders are checked alike. Prints each header that fails; exits 1 if any did.
set -u
read -ra cc <<< "${CC:-cc}"
[ $# -gt 0 ] || set -- lib
mapfile -t headers < <(find "$@" -name '*.h' -type f | sort)
if [ "${#headers[@]}" -eq 0 ]; then
	echo "headers.sh: no headers under $*" >&2
	exit 64
fi
incs=()
while IFS= read -r d; do
	incs+=("-I$d")
done < <(for h in "${headers[@]}"; do dirname "$h"; done | sort -u)
bad=0
for h in "${headers[@]}"; do
	if ! out=$(printf '#include "%s"\n' "${h##*/}" | "${cc[@]}" -std=c11 -D_GNU_SOURCE \
	    -Wall -Wextra -Werror -fsyntax-only "${incs[@]}" -x c - 2>&1); then
		printf '%s: does not compile on its own\n%s\n' "$h" "$out" >&2
		bad=1
	fi
done
exit "$bad"
