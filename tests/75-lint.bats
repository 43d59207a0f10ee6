#!/usr/bin/env bats
# The source checks of `make lint` catch what they are there for, and the
# tree passes them: lib/'s layers (lib/README: core store host tier life,
# bottom first; an include that points up fails the build and make lint, and
# so does a circle), headers that compile on their own, short functions.
load helpers

REPO="$BATS_TEST_DIRNAME/.."

# A C file with one function of $1 lines, from its name to its closing brace,
# in the house layout, beside a prototype and a struct.
long_function() {
	local i
	printf 'struct s {\n\tint a;\n};\n\nstatic int\nshort_one(void);\n\n'
	printf 'static int\nlong_one(int a,\n    int b)\n{\n'
	for ((i = 0; i < $1 - 5; i++)); do
		printf '\ta += b;\n'
	done
	printf '\treturn a;\n}\n\nstatic int\nshort_one(void)\n{\n\treturn 0;\n}\n'
}

@test "func-length.sh lists a function over 150 lines, with its file, line and length" {
	mkdir "$WORK/src"
	long_function 151 > "$WORK/src/a.c"
	long_function 150 > "$WORK/src/b.c"
	run -1 "$REPO/contrib/lint/func-length.sh" "$WORK/src"
	[ "$output" = "$WORK/src/a.c:9 long_one 151 lines" ]
	run -0 "$REPO/contrib/lint/func-length.sh" "$WORK/src/b.c"
	[ "$output" = "" ]
	run -1 "$REPO/contrib/lint/func-length.sh" -n 3 "$WORK/src/b.c"
	[ "${lines[0]}" = "$WORK/src/b.c:9 long_one 150 lines" ]
	[ "${lines[1]}" = "$WORK/src/b.c:$((9 + 150 + 2)) short_one 4 lines" ]
	run -64 "$REPO/contrib/lint/func-length.sh"
	run -66 "$REPO/contrib/lint/func-length.sh" "$WORK/nothing"
	# a folder's folders are read too (lib/'s layers), and one with no C file is an error
	mkdir -p "$WORK/tree/core" "$WORK/empty"
	long_function 151 > "$WORK/tree/core/c.c"
	run -1 "$REPO/contrib/lint/func-length.sh" "$WORK/tree"
	[ "$output" = "$WORK/tree/core/c.c:9 long_one 151 lines" ]
	run -66 "$REPO/contrib/lint/func-length.sh" "$WORK/empty"
}

@test "no function in lib/ is over 150 lines" {
	run -0 "$REPO/contrib/lint/func-length.sh" "$REPO/lib"
	# and the check reads lib/'s layers: at 100 it finds some
	run -1 "$REPO/contrib/lint/func-length.sh" -n 100 "$REPO/lib"
	[[ $output == *"lib/"*"/"*".c:"* ]]
}

@test "every header compiles on its own, and the lint check catches one that does not" {
	mkdir -p "$WORK/hdr"
	cp "$REPO"/lib/*/*.h "$WORK/hdr/"
	run -0 "$REPO/contrib/lint/headers.sh" "$WORK/hdr"
	[ -z "$output" ]
	# a header that uses size_t without including <stddef.h>, as s3.h did
	printf '#ifndef B_H\n#define B_H\nsize_t b_len(void);\n#endif\n' > "$WORK/hdr/b.h"
	run -1 "$REPO/contrib/lint/headers.sh" "$WORK/hdr"
	[[ ${lines[0]} == "$WORK/hdr/b.h: does not compile on its own" ]]
	[ "$(grep -c 'does not compile on its own' <<< "$output")" -eq 1 ]
}

@test "lib/ has no include that points up and no include circle" {
	run -0 "$REPO/contrib/lint/layers.sh" "$REPO/lib"
	[ -z "$output" ]
}

@test "the layer check names an include that points up, and a circle" {
	cp -r "$REPO/lib" "$WORK/lib"
	printf '#include "sandbox.h"\n' >> "$WORK/lib/store/layer.c"
	run -1 "$REPO/contrib/lint/layers.sh" "$WORK/lib"
	[[ $output == *"store/layer.c includes sandbox.h: life is above store"* ]]
	cp "$REPO/lib/store/layer.c" "$WORK/lib/store/layer.c"
	# a circle inside one layer: snap -> sandbox -> snap
	printf '#include "snap.h"\n' >> "$WORK/lib/life/sandbox.c"
	run -1 "$REPO/contrib/lint/layers.sh" "$WORK/lib"
	[[ $output == *"include circle: "*"sandbox -> "*"snap"* ]]
	[[ $output != *"is above"* ]]
	# an include by path, which the include path would not stop
	printf '#include "../life/sandbox.h"\n' >> "$WORK/lib/store/layer.c"
	run -1 "$REPO/contrib/lint/layers.sh" "$WORK/lib"
	[[ $output == *'store/layer.c includes "../life/sandbox.h": include lib/ headers by name'* ]]
	cp "$REPO/lib/store/layer.c" "$WORK/lib/store/layer.c"
	# a file outside the layer folders
	cp "$REPO/lib/life/sandbox.c" "$WORK/lib/life/sandbox.c"
	printf 'int x;\n' > "$WORK/lib/stray.c"
	run -1 "$REPO/contrib/lint/layers.sh" "$WORK/lib"
	[[ $output == *"stray.c: not in a layer folder"* ]]
}

@test "the build refuses an include that points up" {
	mkdir "$WORK/tree"
	cp -r "$REPO/lib" "$REPO/Makefile" "$WORK/tree/"
	# the plain build, whatever the suite runs under (make check SANITIZE=1)
	MAKEFLAGS='' run -0 make -s -C "$WORK/tree" SANITIZE= build/rel/lib/core/util.o
	printf '#include "snapshot.h"\n' >> "$WORK/tree/lib/core/util.c"
	# (the edit may share the object's timestamp tick: make would skip it)
	rm "$WORK/tree/build/rel/lib/core/util.o"
	MAKEFLAGS='' run -2 make -s -C "$WORK/tree" SANITIZE= build/rel/lib/core/util.o
	[[ $output == *"snapshot.h: No such file or directory"* ]]
}
