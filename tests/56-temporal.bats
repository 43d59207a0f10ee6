#!/usr/bin/env bats
# contrib/temporal/ as far as it goes without a Temporal server (the SDK's
# test server is a binary it downloads at run time, which this machine
# cannot fetch): the workflow bundles as the worker bundles it, and the
# activities, run by the SDK's MockActivityEnvironment against this build,
# give one result per key, heartbeat sbx's --progress json lines and fail
# for good on an exit of 65. The SDK comes from npm, pinned, installed under
# build/temporal on first use.
load helpers

REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
TM=$REPO/build/temporal

setup_file() {
	npm_pinned "$REPO/contrib/temporal/package.json" "$TM" node_modules/@temporalio/testing/package.json
	# beside its node_modules, where node finds the SDK
	cp "$REPO"/contrib/temporal/*.mjs "$TM/"
}

@test "temporal: the workflow bundles as the worker bundles it, and the worker's, client's and activities' modules load" {
	command -v node >/dev/null || { echo "node is needed (Debian's nodejs)"; false; }
	for f in workflow.mjs activities.mjs worker.mjs start.mjs; do
		node --check "$TM/$f"
	done
	cat > "$TM/check-bundle.mjs" <<'EOF'
import { fileURLToPath } from "node:url";
import { bundleWorkflowCode } from "@temporalio/worker";
const quiet = () => {};
const { code } = await bundleWorkflowCode({
  workflowsPath: fileURLToPath(new URL("./workflow.mjs", import.meta.url)),
  logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: console.error },
});
const act = await import("./activities.mjs");
console.log(code.includes("sandboxFlow"), Object.keys(act).sort().join(" "));
EOF
	run -0 node "$TM/check-bundle.mjs"
	[ "$output" = "true fork gc once provision select snapshot" ]
}

@test "temporal: the activities against sbx: a repeat gives the first result, snapshot and fork heartbeat their progress to 100%, a key clash is a non-retryable ApplicationFailure" {
	command -v node >/dev/null || { echo "node is needed (Debian's nodejs)"; false; }
	cat > "$TM/check-activities.mjs" <<'EOF'
import { MockActivityEnvironment } from "@temporalio/testing";
import { ApplicationFailure } from "@temporalio/activity";
import * as act from "./activities.mjs";

// an activity run as a worker runs it: its result and its heartbeats
async function run(fn, ...args) {
  const env = new MockActivityEnvironment();
  const beats = [];
  env.on("heartbeat", (d) => beats.push(d));
  return { result: await env.run(fn, ...args), beats };
}
const k = process.argv[2];
const m = `sandbox_id: ${k}-base\nread_only_root: false\nfork: {max_fork_factor: 16}\n`;
const r = {};
r.base = (await run(act.provision, "provision", m)).result;
r.base2 = (await run(act.provision, "provision", m)).result;
r.setup = (await run(act.once, "run", `${k}/setup`, r.base, "echo run >> /root/runs; echo setup")).result;
r.setup2 = (await run(act.once, "run", `${k}/setup`, r.base, "echo run >> /root/runs; echo setup")).result;
const s = await run(act.snapshot, "snapshot", `${k}-s`, r.base);
r.snap = s.result;
r.snapBeats = s.beats;
r.snap2 = (await run(act.snapshot, "snapshot", `${k}-s`, r.base)).result;
const f = await run(act.fork, "fork", `${k}-b`, 2, r.snap);
r.kids = f.result;
r.forkBeats = f.beats;
r.branch = (await run(act.once, "branch", `${k}/branch-1`, r.kids[0], "echo run >> /root/runs; wc -l < /root/runs")).result;
try {
  await run(act.snapshot, "snapshot", `${k}-s`, r.kids[0]);
  r.clash = null;
} catch (e) {
  r.clash = { app: e instanceof ApplicationFailure, type: e.type, nonRetryable: e.nonRetryable, message: e.message };
}
r.head = (await run(act.select, "select", r.kids[0], `${k}-head`)).result;
r.gc = (await run(act.gc, "gc", [r.base, r.kids[0]])).result;
console.log(JSON.stringify(r));
EOF
	run -0 node "$TM/check-activities.mjs" tm
	python3 -c '
import json, sys
r = json.loads(sys.argv[1].splitlines()[-1])
assert r["base"] == r["base2"] == "tm-base", r
assert r["setup"] == r["setup2"] and r["setup"]["stdout"] == "setup\n", r
assert r["snap"] == r["snap2"] == "tm-s", r
assert r["kids"] == ["tm-b-1", "tm-b-2"], r
assert r["branch"]["stdout"] == "2\n", r
for beats, verb in ((r["snapBeats"], "snapshot"), (r["forkBeats"], "fork")):
    assert beats and all(b["progress"] == verb for b in beats), beats
    assert beats[-1]["phase"] == "done" and beats[-1]["percent"] == 100, beats
c = r["clash"]
assert c and c["app"] and c["type"] == "SbxExit65" and c["nonRetryable"], c
assert "snapshot ID tm-s is taken" in c["message"], c
assert r["head"] == "tm-head", r
assert r["gc"].split() == ["tm-base", "tm-b-1"], r' "$output"
	# each step's work done once: one provision of the base, one setup run, one snapshot
	[ "$(grep '"sandbox":"tm-base"' "$SBX_ROOT/audit.log" | grep -c '"event":"provision"')" = 1 ]
	[ "$(grep '"sandbox":"tm-base"' "$SBX_ROOT/audit.log" | grep -c '"event":"run-start"')" = 1 ]
	[ "$(grep '"event":"snapshot"' "$SBX_ROOT/audit.log" | grep -c '"detail":"tm-s"')" = 1 ]
	run -0 sbx-ls -q
	[ -z "$output" ]
}
