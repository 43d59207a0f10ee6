#!/usr/bin/env bats
# Every fuzz corpus file, every example manifest and every invalid fixture,
# replayed through the fuzz targets (built without libFuzzer): what once
# crashed a parser stays fixed.
load helpers

REPO="$BATS_TEST_DIRNAME/.."

replay() {
	local target=$1 before
	shift
	before=$(find /tmp -maxdepth 1 -name 'sbx-fuzz-*' | wc -l)
	run -0 "${SBX_REPLAY:?run through make check}/fuzz-$target" "$@"
	[[ $output == *"inputs replayed"* ]]
	# the targets' scratch directories go with them
	[ "$(find /tmp -maxdepth 1 -name 'sbx-fuzz-*' | wc -l)" -eq "$before" ]
}

@test "fuzz corpus: manifest and state documents" {
	replay manifest "$REPO"/tests/fuzz/corpus/manifest/* "$REPO"/manifests/* \
		"$REPO"/tests/fixtures/invalid/*
}

@test "fuzz corpus: ID reader" {
	replay id "$REPO"/tests/fuzz/corpus/id/*
}

@test "fuzz corpus: audit log verifier" {
	replay audit "$REPO"/tests/fuzz/corpus/audit/*
}

@test "fuzz corpus: operator policies" {
	replay policy "$REPO"/tests/fuzz/corpus/policy/* "$REPO"/tests/fuzz/corpus/manifest/*
}

@test "fuzz corpus: seccomp policy files" {
	replay seccomp "$REPO"/tests/fuzz/corpus/seccomp/*
}

@test "fuzz corpus: snapshot layers (hostile, truncated, and real ones with whiteouts)" {
	replay layer "$REPO"/tests/fuzz/corpus/layer/*
}

@test "fuzz corpus: the relay's TLS SNI and HTTP Host reader" {
	replay peek "$REPO"/tests/fuzz/corpus/peek/*
}
