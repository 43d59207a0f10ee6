#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# How a new process enters its cgroup, side by side in one run: made there by
# clone3(CLONE_INTO_CGROUP) (cgroup v2, sbx's default) against made outside and
# moved in by a write (SBX_CLONE_INTO_CGROUP=0, as on v1), for an exec into a
# live sandbox and for provision + gc. On a v1 host both rows take the write
# path; make bench-v2 runs this in the cgroup v2 guest. Appends to $1.
import os, subprocess, sys, time

from benchlib import RUNS, hyperfine, med, ratio_rows, sh, write_rows

root = os.environ["SBX_ROOT"]
minimal = "manifests/minimal.yaml"

def loop(env, n):
    xs = []
    for _ in range(n):
        a = time.perf_counter()
        sid = subprocess.run(["sbx-provision", "--no-watchdog", minimal], check=True, env=env,
                             capture_output=True, text=True).stdout.strip()
        subprocess.run(["sbx-gc", sid], check=True, env=env, stdout=subprocess.DEVNULL)
        xs.append(time.perf_counter() - a)
    return xs

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    v2 = open("/proc/self/mounts").read().count(" cgroup2 ") > 0 and not os.path.isdir(
        "/sys/fs/cgroup/memory")
    sid = sh("sbx-provision", minimal)
    into, write = "clone3(CLONE_INTO_CGROUP)", "cgroup.procs write"
    cmds = {
        f"sbx-run ID, {into}": f"env SBX_CLONE_INTO_CGROUP=1 sbx-run {sid} -- /bin/true",
        f"sbx-run ID, {write}": f"env SBX_CLONE_INTO_CGROUP=0 sbx-run {sid} -- /bin/true",
    }
    names = list(cmds)
    times = dict(zip(names, hyperfine([cmds[n] for n in names], os.path.join(root, "cg.json"))))
    sh("sbx-gc", sid)
    n = max(10, RUNS // 5)
    for label, flag in ((into, "1"), (write, "0")):
        times[f"provision + gc, {label}"] = loop(dict(os.environ, SBX_CLONE_INTO_CGROUP=flag), n)
    ref = {f"sbx-run ID, {into}": f"sbx-run ID, {write}",
           f"provision + gc, {into}": f"provision + gc, {write}"}
    print(f"cgroup {'v2' if v2 else 'v1 (both rows write: CLONE_INTO_CGROUP is v2 only)'}")
    print(f"{'command':<46} {'median':>9} {'p90':>9}  ratio")
    rows = ratio_rows(times, ref)
    for name, (m, p, r) in rows.items():
        print(f"{name:<46} {m:8.2f}ms {p:8.2f}ms  {f'{r:.2f}x the write' if r else ''}")
    write_rows(out, "cgroup_entry", rows, [f"cgroup_v2: {'true' if v2 else 'false'}"])

main()
