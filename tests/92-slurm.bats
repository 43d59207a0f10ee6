#!/usr/bin/env bats
# Scaling out on an existing scheduler: a real Slurm (tests/slurm/server.sh)
# runs an array job whose tasks each take their own state root, fork one child
# from a snapshot in the S3 store, run one branch of a speculative task and
# push the result; a final job selects the winner and collects the rest.
# The job scripts are the ones shipped in contrib/scale-out/.
load helpers
load s3/lib

setup_file() {
	s3_start_server
	if command -v slurmctld >/dev/null; then
		SLURM_OWN=$(mktemp -d /tmp/sbx-slurm.XXXXXX)
		"$BATS_TEST_DIRNAME/slurm/server.sh" start "$SLURM_OWN" >/dev/null
	fi
	export SLURM_OWN
}

teardown_file() {
	if [ -n "${SLURM_OWN:-}" ]; then
		"$BATS_TEST_DIRNAME/slurm/server.sh" stop "$SLURM_OWN"
		rm -rf "$SLURM_OWN"
	fi
	s3_stop_server
}

# Wait until none of the jobs is queued or running (at most 180 s).
wait_jobs() {
	local _
	for _ in $(seq 900); do
		[ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
		# A failed branch leaves the final job pending for good.
		if squeue -h -j "$1" -o %r 2>/dev/null | grep -q DependencyNeverSatisfied; then
			break
		fi
		sleep 0.2
	done
	echo "jobs $1 still queued or running:"
	squeue -j "$1"
	cat "$WORK"/*.out
	return 1
}

@test "a Slurm array forks branches from the store, pushes results; the final job keeps the best" {
	s3_init
	[ -n "${SLURM_OWN:-}" ] || skip "Slurm is not installed (contrib/install-deps.sh s3)"
	# shellcheck disable=SC1091
	. "$SLURM_OWN/env"
	provision <<<'read_only_root: false'
	assert_confined "$ID"
	# The speculative task: each branch scores differently (3, 0, 7).
	run -0 sbx-run "$ID" -- sh -c 'cat > /root/branch.sh <<"SH"
#!/bin/sh
echo $(( (BRANCH * 7 + 3) % 10 )) > /root/score
echo "answer from branch $BRANCH" > /root/answer
SH
chmod +x /root/branch.sh'
	run -0 sbx-snap create "$ID"
	base=$output
	run -0 sbx-snap push --store "$STORE" "$base"
	scripts="$BATS_TEST_DIRNAME/../contrib/scale-out"
	# The tasks' state roots go under $WORK: sandboxes must be able to pass through.
	chmod 711 "$WORK"
	run -0 sbatch --parsable --array=0-2 -o "$WORK/branch-%a.out" \
		--export="ALL,SBX_STORE=$STORE,SBX_BASE=$base,SBX_ROOT_BASE=$WORK" \
		"$scripts/slurm-branch.sbatch"
	job=${output%%;*}
	SLURM_JOBS="$job"
	run -0 sbatch --parsable --dependency="afterok:$job" -o "$WORK/select.out" \
		--export="ALL,SBX_STORE=$STORE,SBX_ARRAY_JOB=$job,SBX_BRANCHES=3,SBX_ROOT_BASE=$WORK,SBX_GRACE=0" \
		"$scripts/slurm-select.sbatch"
	sel=${output%%;*}
	SLURM_JOBS="$job,$sel"
	wait_jobs "$job,$sel"
	cat "$WORK"/branch-*.out "$WORK/select.out"
	grep -q "winner: res-$job-2 score 7" "$WORK/select.out"
	# Each task had its own state root, and removed it.
	[ -z "$(find "$WORK" -maxdepth 1 -name "sbx-$job-*")" ]
	# The store keeps the base and the winner; the losers and their layers are gone.
	run -0 sbx-snap list --store "$STORE"
	[ "$output" = "$base
res-$job-2" ]
	run -0 s3keys team/a/layers/
	[ "$(wc -l <<<"$output")" -eq 2 ]
	# Anyone with the store can carry on from the winner.
	other_root
	run -0 env SBX_ROOT="$HOST_B" sbx-fork --store "$STORE" "res-$job-2"
	run -0 env SBX_ROOT="$HOST_B" sbx-run "$output" -- cat /root/answer
	[ "$output" = "answer from branch 2" ]
}

teardown() {
	if [ -n "${SLURM_JOBS:-}" ]; then
		scancel "${SLURM_JOBS//,/ }" 2>/dev/null
	fi
	s3_teardown
}
