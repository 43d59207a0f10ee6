#!/usr/bin/env bats
# lib/'s layers (lib/README): core store host tier life, bottom first. An
# include that points up fails the build and make lint; so does a circle.
load helpers

REPO="$BATS_TEST_DIRNAME/.."

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
	# a file outside the layer folders
	cp "$REPO/lib/life/sandbox.c" "$WORK/lib/life/sandbox.c"
	printf 'int x;\n' > "$WORK/lib/stray.c"
	run -1 "$REPO/contrib/lint/layers.sh" "$WORK/lib"
	[[ $output == *"stray.c: not in a layer folder"* ]]
}

@test "the build refuses an include that points up" {
	mkdir "$WORK/tree"
	cp -r "$REPO/lib" "$REPO/Makefile" "$WORK/tree/"
	run -0 make -s -C "$WORK/tree" build/rel/lib/core/util.o
	printf '#include "snapshot.h"\n' >> "$WORK/tree/lib/core/util.c"
	run -2 make -s -C "$WORK/tree" build/rel/lib/core/util.o
	[[ $output == *"snapshot.h: No such file or directory"* ]]
}
