# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# For the bats files that need an S3 server (90-s3, 92-slurm): a real radosgw,
# started here unless .ci/run started one and named its environment in
# $SBX_TEST_S3_ENV; a bucket per test; our own signed requests beside sbx's.
# shellcheck disable=SC2034,SC2154

s3_start_server() {
	if [ -n "${SBX_TEST_S3_ENV:-}" ]; then
		S3_ENV=$SBX_TEST_S3_ENV
	elif command -v radosgw >/dev/null; then
		S3_OWN=$(mktemp -d /tmp/sbx-s3.XXXXXX)
		"$BATS_TEST_DIRNAME/s3/server.sh" start "$S3_OWN/srv" >/dev/null
		S3_ENV=$S3_OWN/srv/env
	fi
	export S3_ENV S3_OWN
}

s3_stop_server() {
	if [ -n "${S3_OWN:-}" ]; then
		"$BATS_TEST_DIRNAME/s3/server.sh" stop "$S3_OWN/srv"
		rm -rf "$S3_OWN"
	fi
}

EMPTY_SHA=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

# s3curl METHOD PATH [curl options]: a signed request of our own, beside sbx's.
# The body's SHA-256 is $BODY_SHA (else that of an empty body).
s3curl() {
	local m=$1 path=$2
	shift 2
	curl -sS --aws-sigv4 "aws:amz:$AWS_REGION:s3" \
		--user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -X "$m" \
		-H "x-amz-content-sha256: ${BODY_SHA:-$EMPTY_SHA}" "$@" "$AWS_ENDPOINT_URL/$path"
}

# Per test: the server's credentials, a bucket of its own, STORE naming it.
s3_init() {
	[ -n "${S3_ENV:-}" ] || skip "no S3 server: radosgw is not installed (contrib/install-deps.sh s3)"
	# shellcheck disable=SC1090
	. "$S3_ENV"
	BUCKET="sbx-t$BATS_TEST_NUMBER-$$-$RANDOM"
	run -0 s3curl PUT "$BUCKET" -w '%{http_code}'
	[ "$output" = 200 ]
	STORE="s3://$BUCKET/team/a"
	export SBX_NO_PROGRESS=1
}

# Keys under a bucket-relative prefix, one a line.
s3keys() {
	s3curl GET "$BUCKET?list-type=2&prefix=${1//\//%2F}" | grep -o '<Key>[^<]*</Key>' |
		sed 's/<Key>\(.*\)<\/Key>/\1/'
}

# A writable sandbox, confinement proven, holding FILE=/root/note and N MiB of
# random bytes in /root/big; sets $ID.
sandbox_with() {
	provision <<<'read_only_root: false'
	assert_confined "$ID"
	run -0 sbx-run "$ID" -- sh -c "echo '$1' > /root/note; head -c ${2:-1}M /dev/urandom > /root/big"
}

# A second "host": another state root on this machine.
other_root() {
	HOST_B=$(mktemp -d /tmp/sbx-test.XXXXXX)
}

s3_teardown() {
	local id key
	# The test server keeps objects in memory: empty and remove the bucket.
	if [ -n "${BUCKET:-}" ]; then
		for key in $(s3keys ""); do
			s3curl DELETE "$BUCKET/$key" >/dev/null 2>&1
		done
		s3curl DELETE "$BUCKET" >/dev/null 2>&1
	fi
	if [ -n "${HOST_B:-}" ]; then
		for id in $(SBX_ROOT=$HOST_B sbx-ls -q 2>/dev/null); do
			SBX_ROOT=$HOST_B sbx-gc "$id" >/dev/null 2>&1
		done
		rm -rf "$HOST_B"
	fi
	local p
	for p in "${TEST_PIDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	TEST_PIDS=()
	if [ -d "$SBX_ROOT/sandboxes" ]; then
		for id in $(sbx-ls -q 2>/dev/null); do
			sbx-gc "$id" >/dev/null 2>&1
		done
	fi
	rm -rf "$SBX_ROOT" "$WORK"
}


teardown() {
	s3_teardown
}
