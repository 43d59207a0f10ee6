// SPDX-License-Identifier: MIT
// A durable sandbox workflow on Temporal, the shape of contrib/restate's:
// provision -> run -> snapshot -> fork N -> run the branches -> select the
// best -> gc, each step an activity (activities.mjs) whose sbx command has a
// caller's key derived from the workflow ID. An activity that Temporal runs
// again (its worker died after the work, before the result was recorded)
// returns the first result instead of doing the work twice.
//
// Workflow code: bundled by the worker and run in its deterministic sandbox,
// so nothing here touches the host; the activities do.
import { proxyActivities, workflowInfo } from "@temporalio/workflow";

// Retries: an sbx exit of 64, 65 or 77 is a non-retryable ApplicationFailure
// (activities.mjs), anything else is tried again, the step's key making the
// repeat safe.
const retry = { initialInterval: "1 second", maximumInterval: "30 seconds" };

// provision, sbx-run --once, select and gc: short, and silent while they run.
const { provision, once, select, gc } = proxyActivities({
  startToCloseTimeout: "30 minutes",
  retry,
});

// snapshot and fork heartbeat from their --progress json lines (and every
// few seconds while the command runs): a worker that dies is noticed within
// the heartbeat timeout, not at the end of the start-to-close one.
const { snapshot, fork } = proxyActivities({
  startToCloseTimeout: "2 hours",
  heartbeatTimeout: "1 minute",
  retry,
});

export async function sandboxFlow(req) {
  const k = workflowInfo().workflowId;
  const n = Math.max(1, Math.min(8, (req && req.branches) || 2));
  const base = await provision("provision",
    `sandbox_id: ${k}-base\nread_only_root: false\nfork: {max_fork_factor: 16}\n`);
  await once("run", `${k}/setup`, base, "echo run >> /root/runs; echo setup");
  const snap = await snapshot("snapshot", `${k}-s`, base);
  const kids = await fork("fork", `${k}-b`, n, snap);
  // the branches side by side: each is its own activity with its own key
  const results = await Promise.all(kids.map((kid, i) =>
    once(i === 0 ? "branch" : `branch-${i + 1}`, `${k}/branch-${i + 1}`, kid,
      `echo run >> /root/runs; echo $(( (${i} * 7 + 3) % 5 )) $(wc -l < /root/runs)`)));
  const scores = results.map((r, i) => {
    const [score, runs] = r.stdout.trim().split(" ").map(Number);
    return { id: kids[i], score, runs, run_id: r.run_id };
  });
  const best = scores.reduce((a, b) => (b.score > a.score ? b : a));
  const head = await select("select", best.id, `${k}-head`);
  await gc("gc", [base, best.id]);
  return { base, snapshot: snap, head, winner: best.id, scores };
}
