#!/usr/bin/env bats
# The source checks of `make lint` catch what they are there for.
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
}

@test "no function in lib/ is over 150 lines" {
	run -0 "$REPO/contrib/lint/func-length.sh" "$REPO/lib"
}
