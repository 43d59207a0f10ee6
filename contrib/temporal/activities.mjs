// SPDX-License-Identifier: MIT
// The activities of workflow.mjs: one sbx command each, with the caller's
// key that the workflow derived, so a repeat returns the first result. The
// first argument names the step, for SBX_WF_CRASH_AT (tests and
// demonstrations only: the worker SIGKILLs itself right after that step's
// command succeeded, before Temporal records the result).
import { spawn } from "node:child_process";
import { ApplicationFailure, Context } from "@temporalio/activity";

const crashAt = process.env.SBX_WF_CRASH_AT;

// Retrying cannot help bad usage (64), bad input or a key that names other
// work (65), or the operator's refusal (77): Temporal stops there.
const FINAL = new Set([64, 65, 77]);

function failure(argv, status, stderr) {
  const msg = `${argv.join(" ")}: exit ${status}: ${stderr.trim()}`;
  return FINAL.has(status)
    ? ApplicationFailure.nonRetryable(msg, `SbxExit${status}`, { status })
    : ApplicationFailure.retryable(msg, `SbxExit${status}`, { status });
}

// Run an sbx program: { status, stdout, stderr }. With heartbeat, its
// --progress json lines on stderr become the activity's heartbeats (the
// last one repeated every 10 s while the command is quiet), and a
// cancellation that a heartbeat brings back is a SIGTERM to it, which sbx
// answers by stopping cleanly (the repeat of the step finishes the work).
function run(argv, { input, heartbeat = false } = {}) {
  const ctx = Context.current();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "", stderr = "", partial = "", last = null, timer = null;
    const onAbort = () => child.kill("SIGTERM");
    child.stdout.setEncoding("utf8").on("data", (d) => { stdout += d; });
    child.stderr.setEncoding("utf8").on("data", (d) => {
      const lines = (partial + d).split("\n");
      partial = lines.pop();
      for (const line of lines) {
        let p = null;
        if (line.startsWith("{")) {
          try { p = JSON.parse(line); } catch { p = null; }
        }
        if (p && typeof p === "object" && "progress" in p) {
          last = p;
          if (heartbeat) ctx.heartbeat(p);
        } else {
          stderr += line + "\n";
        }
      }
    });
    if (heartbeat) {
      timer = setInterval(() => ctx.heartbeat(last), 10000);
      ctx.cancellationSignal.addEventListener("abort", onAbort);
    }
    child.on("error", reject);
    // a command that ends without reading its input must not end the worker
    child.stdin.on("error", () => {});
    child.on("close", (status, signal) => {
      clearInterval(timer);
      ctx.cancellationSignal.removeEventListener("abort", onAbort);
      if (heartbeat && ctx.cancellationSignal.aborted) {
        reject(ctx.cancellationSignal.reason);
        return;
      }
      resolve({ status: status ?? 128 + 15, signal, stdout, stderr: stderr + partial });
    });
    child.stdin.end(input ?? "");
  });
}

// An sbx program's stdout, or a failure (final for 64, 65, 77).
async function sbx(step, argv, opts) {
  const r = await run(argv, opts);
  if (r.status !== 0) throw failure(argv, r.status, r.stderr);
  if (crashAt === step) process.kill(process.pid, "SIGKILL");
  return r.stdout.trim();
}

export async function provision(step, manifest) {
  return sbx(step, ["sbx-provision", "-"], { input: manifest });
}

// A command run once for key in sandbox id: its recorded result object
// (sbx-run's status is the command's; the object says what it was).
export async function once(step, key, id, script) {
  const argv = ["sbx-run", "--once", key, "-o", "json", id, "--", "sh", "-c", script];
  const r = await run(argv);
  let res;
  try {
    res = JSON.parse(r.stdout);
  } catch {
    throw failure(argv, r.status, r.stderr);
  }
  if (crashAt === step) process.kill(process.pid, "SIGKILL");
  return { exit_code: res.exit_code, stdout: res.stdout, run_id: res.run_id };
}

export async function snapshot(step, snapId, id) {
  return sbx(step, ["sbx-snap", "--progress", "json", "--id", snapId, id], { heartbeat: true });
}

export async function fork(step, prefix, n, snap) {
  const out = await sbx(step, ["sbx-fork", "--progress", "json", "--id", prefix, "-n", String(n), snap],
    { heartbeat: true });
  return out.split("\n");
}

export async function select(step, winner, headId) {
  return sbx(step, ["sbx-fork", "--select", winner, "--id", headId]);
}

export async function gc(step, ids) {
  return sbx(step, ["sbx-gc", ...ids]);
}
