#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Start-up side by side with the peers, in one run: hyperfine -N for single
# commands, a timing loop for the composite ones. Medians and ratios only.
# Appends its figures to the YAML results file given as $1.
import concurrent.futures, json, os, shutil, subprocess, sys, time

from benchlib import RUNS, hyperfine, med, ratio_rows, runc_bundle, sh, write_rows

root = os.environ["SBX_ROOT"]
floor = os.environ["SBX_FLOOR"]
minimal = "manifests/minimal.yaml"

def loop(fn, n):
    xs = []
    for _ in range(n):
        a = time.perf_counter(); fn(); xs.append(time.perf_counter() - a)
    return xs

def state(sid, key):
    for line in sh("sbx-inspect", sid).splitlines():
        k, _, v = line.strip().partition(":")
        if k == key:
            return v.strip().strip('"')
    return None

def mcp_runs(sid, n):
    """An agent's exec: the round trip of sbx-mcp's run tool (argv /bin/true in
    sid), one server kept for all n requests, its JSON encoding and this
    client's reading of it counted in."""
    p = subprocess.Popen(["sbx-mcp", "--any-sandbox"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, bufsize=0)
    def call(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                                   "params": params}) + "\n").encode())
        return json.loads(p.stdout.readline())
    call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "bench", "version": "0"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    xs = []
    for i in range(n + 5):
        a = time.perf_counter()
        r = call(i + 1, "tools/call", {"name": "run", "arguments": {"sandbox_id": sid,
                                                                     "argv": ["/bin/true"]}})
        b = time.perf_counter()
        if r.get("result", {}).get("structuredContent", {}).get("exit_code") != 0:
            sys.exit(f"sbx-mcp run: {r}")
        if i >= 5:
            xs.append(b - a)
    p.stdin.close()
    p.wait()
    return xs

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    sid = sh("sbx-provision", minimal)
    # the same sandbox without its runner: sbx-run does the whole run itself
    bare = sh("sbx-provision", minimal)
    os.kill(int(state(bare, "runner_pid")), 9)
    init = state(sid, "pid")
    bundle = runc_bundle(root) if shutil.which("runc") else None
    cmds = {
        "floor (clone3 + exec)": floor,
        "bwrap --unshare-all": "bwrap --ro-bind / / --unshare-all --die-with-parent /bin/true",
        "unshare -Urmpfnui --mount-proc": "unshare -Urmpfnui --mount-proc true",
        "sbx-run -m minimal.yaml (one-shot)": f"sbx-run -m {minimal} -- /bin/true",
        "/bin/true": "/bin/true",
        "sbx-run ID (exec into a sandbox)": f"sbx-run {sid} -- /bin/true",
        "sbx-run ID, no runner": f"sbx-run {bare} -- /bin/true",
        "nsenter -t INIT -a (setns + exec)": f"nsenter -t {init} -a /bin/true",
    }
    if bundle:
        cmds["runc run"] = f"runc run --bundle {bundle} sbx-bench-{os.getpid()}"
    names = list(cmds)
    times = dict(zip(names, hyperfine([cmds[n] for n in names], os.path.join(root, "hf.json"))))
    times["sbx-mcp run (an agent's exec)"] = mcp_runs(sid, RUNS)
    # provision + destroy, without a watchdog to match a one-shot peer
    times["sbx provision + gc"] = loop(
        lambda: subprocess.run(["sbx-gc", sh("sbx-provision", minimal)], check=True,
                               stdout=subprocess.DEVNULL), max(20, RUNS // 4))
    sh("sbx-gc", sid, bare)
    # acquisition: a sandbox claimed from a warm pool of the same manifest
    # against one made fresh, both ready to exec, and the one-shot a member
    # serves (claim, run, kill; its teardown detached) against bwrap. Timed
    # by hyperfine like the rows above; each run's preparation (untimed)
    # removes the last one's sandbox, fills the pool for the claims, and
    # lets the machine settle for 0.1 s, before bwrap's runs too.
    pol = os.path.join(root, "pool-policy.yaml")
    with open(pol, "w") as f:
        f.write(f"pools:\n  - {{name: bench, manifest: {os.path.abspath(minimal)}, size: 1}}\n")
    os.chmod(pol, 0o600)
    os.environ["SBX_POLICY"] = pol
    gc_ready = "ids=$(sbx-ls -q -f status=ready); [ -z \"$ids\" ] || sbx-gc $ids >/dev/null"
    fill = "sbx-provision --fill-pools >/dev/null"
    prep = lambda *steps: "sh -c '" + "; ".join(steps + ("sleep 0.1",)) + "'"
    n = max(20, RUNS // 4)
    pooled = {
        "sbx-provision, claimed from a pool": (f"sbx-provision {minimal}", prep(gc_ready, fill)),
        "sbx-provision, made fresh": (f"sbx-provision {minimal}", prep(gc_ready)),
        "bwrap --unshare-all, after a pause": (cmds["bwrap --unshare-all"], prep()),
        "sbx-run -m, claimed from a pool": (f"sbx-run -m {minimal} -- /bin/true", prep(fill)),
    }
    got = hyperfine([c for c, _ in pooled.values()], os.path.join(root, "hf-pool.json"),
                    runs=n, warmup=2, prepare=[p for _, p in pooled.values()])
    times.update(zip(pooled, got))
    subprocess.run(["sh", "-c", gc_ready])
    del os.environ["SBX_POLICY"]
    os.unlink(pol)
    # 100 sandboxes provisioned in parallel
    a = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        ids = list(ex.map(lambda _: sh("sbx-provision", "--no-watchdog", minimal), range(100)))
    par = 100 / (time.perf_counter() - a)
    subprocess.run(["sbx-gc"] + ids, check=True, stdout=subprocess.DEVNULL)

    ref = {"sbx-run -m minimal.yaml (one-shot)": "bwrap --unshare-all",
           "sbx-run ID (exec into a sandbox)": "/bin/true",
           "sbx-run ID, no runner": "/bin/true",
           "nsenter -t INIT -a (setns + exec)": "/bin/true",
           "sbx-mcp run (an agent's exec)": "/bin/true",
           "sbx provision + gc": "bwrap --unshare-all",
           "sbx-provision, claimed from a pool": "sbx-provision, made fresh",
           "sbx-run -m, claimed from a pool": "bwrap --unshare-all, after a pause"}
    goals = {"sbx-run -m minimal.yaml (one-shot)": "<= 1.0x bwrap, <= 1.6x floor",
             "sbx-run ID (exec into a sandbox)": "<= 2.0x /bin/true, <= 1.0x nsenter",
             "sbx-mcp run (an agent's exec)": "<= 2.0x /bin/true, <= 1.0x nsenter",
             "sbx provision + gc": "<= 1.5x bwrap",
             "sbx-provision, claimed from a pool": "<= 2 ms",
             "sbx-run -m, claimed from a pool": "<= 1.0x bwrap"}
    print(f"{'command':<38} {'median':>9} {'p90':>9}  {'ratio':>14}  goal")
    rows = ratio_rows(times, ref)
    for n, (m, p, ratio) in rows.items():
        extra = ""
        if n.startswith("sbx-run -m"):
            extra = f", {m / med(times['floor (clone3 + exec)']):.1f}x floor"
        if n.startswith("sbx-run ID") or n.startswith("sbx-mcp"):
            extra = f", {m / med(times['nsenter -t INIT -a (setns + exec)']):.1f}x nsenter"
        rs = f"{ratio:.2f}x fresh" if n == "sbx-provision, claimed from a pool" else \
            f"{ratio:.1f}x {ref[n].split()[0]}" if ratio else ""
        print(f"{n:<38} {m:8.2f}ms {p:8.2f}ms  {rs:>14}{extra}  {goals.get(n, '')}")
    print(f"{'100 sandboxes provisioned in parallel':<38} {par:8.1f}/s")
    write_rows(out, "startup", rows, [f"parallel_provision_per_s: {par:.1f}"])

main()
