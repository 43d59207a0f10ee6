#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Watchdog benchmark: how late after its deadline is a sandbox dead (p50, p99),
# and how much CPU does the watchdog use while supervising 100 sandboxes.
# Prints a table; appends its figures to the YAML results file given as $1.
import os, select, statistics, subprocess, sys, tempfile, time, calendar

def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout

def state(sid, key):
    for line in sh("sbx-inspect", sid).splitlines():
        k, _, v = line.strip().partition(": ")
        if k == key:
            return v.strip('"')
    return None

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]

def kill_latency(n):
    m = os.path.join(os.environ["SBX_ROOT"], "short.yaml")
    with open(m, "w") as f:
        f.write("resource_allocation: {max_wall_clock_s: 2, pids: 16, memory_mb: 64}\n")
    ids = [sh("sbx-provision", m).strip() for _ in range(n)]
    fds = {}
    for sid in ids:
        pid = int(state(sid, "pid"))
        exp = state(sid, "expires_at")
        base, _, frac = exp.rstrip("Z").partition(".")
        deadline = calendar.timegm(time.strptime(base, "%Y-%m-%dT%H:%M:%S")) + float("0." + (frac or "0"))
        fds[os.pidfd_open(pid)] = deadline
    p = select.poll()
    for fd in fds:
        p.register(fd, select.POLLIN)
    late = []
    while fds:
        for fd, _ in p.poll(10000):
            late.append((time.time() - fds.pop(fd)) * 1000)
            p.unregister(fd)
            os.close(fd)
    subprocess.run(["sbx-gc"], capture_output=True)
    return late

def cpu_of(pids):
    # schedstat: nanoseconds on a CPU, exact (utime/stime are tick samples and
    # miss a process that wakes for microseconds)
    t = 0
    for pid in pids:
        with open(f"/proc/{pid}/schedstat") as f:
            t += int(f.read().split()[0])
    return t / 1e9

def watchdog_cpu(n, seconds):
    m = os.path.join(os.environ["SBX_ROOT"], "long.yaml")
    with open(m, "w") as f:
        f.write("resource_allocation: {max_wall_clock_s: 600, pids: 16, memory_mb: 64}\n")
    # one --all watchdog for n sandboxes
    ids = [sh("sbx-provision", "--no-watchdog", m).strip() for _ in range(n)]
    wd = subprocess.Popen(["sbx-watchdog", "--all"])
    time.sleep(1.5)
    a = cpu_of([wd.pid]); time.sleep(seconds); b = cpu_of([wd.pid])
    wd.kill(); wd.wait()
    all_pct = (b - a) / seconds * 100
    subprocess.run(["sbx-gc"] + ids, capture_output=True)
    # n per-sandbox watchdogs (the default)
    ids = [sh("sbx-provision", m).strip() for _ in range(n)]
    pids = [int(state(s, "watchdog_pid")) for s in ids]
    time.sleep(1.5)
    a = cpu_of(pids); time.sleep(seconds); b = cpu_of(pids)
    per_pct = (b - a) / seconds * 100
    subprocess.run(["sbx-gc"] + ids, capture_output=True)
    return all_pct, per_pct

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    late = kill_latency(50)
    all_pct, per_pct = watchdog_cpu(100, 10)
    rows = [
        ("kill latency after deadline, 50 sandboxes", f"p50 {pct(late, 50):.1f} ms", f"p99 {pct(late, 99):.1f} ms", "goal: p99 <= 100 ms"),
        ("watchdog --all CPU, 100 sandboxes, 0.1 s sampling", f"{all_pct:.2f} % of a core", "", "goal: < 1 %"),
        ("100 per-sandbox watchdogs CPU, together", f"{per_pct:.2f} % of a core", "", ""),
    ]
    for r in rows:
        print(f"{r[0]:<52} {r[1]:>18} {r[2]:>14}   {r[3]}")
    if out:
        with open(out, "a") as f:
            f.write("watchdog:\n")
            f.write(f"  kill_latency_ms: {{p50: {pct(late, 50):.2f}, p99: {pct(late, 99):.2f}, n: {len(late)}}}\n")
            f.write(f"  cpu_percent_all_100: {all_pct:.3f}\n")
            f.write(f"  cpu_percent_per_sandbox_100: {per_pct:.3f}\n")

main()
