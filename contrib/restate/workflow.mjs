// SPDX-License-Identifier: MIT
// A durable sandbox workflow on Restate: provision -> run -> snapshot ->
// fork N -> run the branches -> select the best -> gc. Every step is an sbx
// command with a caller's key derived from the workflow's key, so a step
// that Restate runs again (its service died after the work, before the
// journal had it) returns the first result instead of doing the work twice.
//
//   PORT=9080 SBX_ROOT=... node workflow.mjs
//   curl -X POST localhost:8080/SandboxFlow/KEY/run/send -d '{"branches":3}'
//
// SBX_WF_CRASH_AT=STEP (tests only): the service SIGKILLs itself right after
// STEP's command succeeded, before Restate journals it.
import { spawnSync } from "node:child_process";

// The SDK uses Promise.withResolvers (Node 22); Node 18 and 20 get it here,
// before the SDK is loaded.
Promise.withResolvers ??= function withResolvers() {
  let resolve, reject;
  const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
};
const restate = await import("@restatedev/restate-sdk");

const crashAt = process.env.SBX_WF_CRASH_AT;

// An sbx program's stdout, or an error: a key clash (65) or bad input is
// terminal (retrying cannot help); anything else Restate retries.
function sbx(argv, input) {
  const r = spawnSync(argv[0], argv.slice(1), { input, encoding: "utf8" });
  if (r.error) throw r.error;
  if (r.status === 0) return r.stdout.trim();
  const msg = `${argv.join(" ")}: exit ${r.status}: ${r.stderr.trim()}`;
  if (r.status === 64 || r.status === 65 || r.status === 77) throw new restate.TerminalError(msg);
  throw new Error(msg);
}

// A command run once for key in sandbox id: its recorded result object.
function once(key, id, script) {
  const r = spawnSync("sbx-run", ["--once", key, "-o", "json", id, "--", "sh", "-c", script],
    { encoding: "utf8" });
  if (r.error) throw r.error;
  let res;
  try {
    res = JSON.parse(r.stdout);
  } catch {
    const msg = `sbx-run --once ${key}: exit ${r.status}: ${r.stderr.trim()}`;
    if (r.status === 65) throw new restate.TerminalError(msg);
    throw new Error(msg);
  }
  return { exit_code: res.exit_code, stdout: res.stdout, run_id: res.run_id };
}

// A journaled step; the test's crash comes after the work, before the journal.
function step(ctx, name, fn) {
  return ctx.run(name, () => {
    const out = fn();
    if (crashAt === name) process.kill(process.pid, "SIGKILL");
    return out;
  });
}

const flow = restate.workflow({
  name: "SandboxFlow",
  handlers: {
    run: async (ctx, req) => {
      const k = ctx.key;
      const n = Math.max(1, Math.min(8, (req && req.branches) || 2));
      const base = await step(ctx, "provision", () => sbx(["sbx-provision", "-"],
        `sandbox_id: ${k}-base\nread_only_root: false\nfork: {max_fork_factor: 16}\n`));
      await step(ctx, "run", () => once(`${k}/setup`, base,
        "echo run >> /root/runs; echo setup"));
      const snap = await step(ctx, "snapshot", () => sbx(["sbx-snap", "--id", `${k}-s`, base]));
      const kids = (await step(ctx, "fork", () =>
        sbx(["sbx-fork", "--id", `${k}-b`, "-n", String(n), snap]))).split("\n");
      const scores = [];
      for (let i = 0; i < kids.length; i++) {
        const r = await step(ctx, i === 0 ? "branch" : `branch-${i + 1}`, () =>
          once(`${k}/branch-${i + 1}`, kids[i],
            `echo run >> /root/runs; echo $(( (${i} * 7 + 3) % 5 )) $(wc -l < /root/runs)`));
        const [score, runs] = r.stdout.trim().split(" ").map(Number);
        scores.push({ id: kids[i], score, runs, run_id: r.run_id });
      }
      const best = scores.reduce((a, b) => (b.score > a.score ? b : a));
      const head = await step(ctx, "select", () =>
        sbx(["sbx-fork", "--select", best.id, "--id", `${k}-head`]));
      await step(ctx, "gc", () => sbx(["sbx-gc", base, best.id]));
      return { base, snapshot: snap, head, winner: best.id, scores };
    },
  },
});

restate.endpoint().bind(flow).listen(Number(process.env.PORT || 9080));
