#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Density: host memory per idle sandbox, 500 of them. An upper bound: the
# memory charged to the sandboxes' cgroups (tmpfs, overlay, kernel objects),
# plus the proportional set size (PSS) of their inits (whose copy-on-write
# pages stay charged to the caller's cgroup) and of their watchdogs (which
# live outside); init pages counted in both are counted twice.
# Appends its figures to the YAML results file given as $1.
import concurrent.futures, os, subprocess, sys

N = int(os.environ.get("SBX_BENCH_DENSITY", "500"))

def sh(*a):
    return subprocess.run(a, check=True, capture_output=True, text=True).stdout.strip()

def state(sid):
    d = {}
    for line in sh("sbx-inspect", sid).splitlines():
        k, _, v = line.strip().partition(": ")
        d.setdefault(k, v.strip('"'))
    return d

def pss_kb(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0

def memcg_bytes(spec):
    # "1:cpu=/x,memory=/y,..." (v1) or "2:/path" (v2)
    if spec.startswith("2:"):
        path = "/sys/fs/cgroup" + spec[2:] + "/memory.current"
    else:
        parts = dict(p.split("=", 1) for p in spec[2:].split(","))
        path = "/sys/fs/cgroup/memory" + parts["memory"] + "/memory.usage_in_bytes"
    with open(path) as f:
        return int(f.read())

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        ids = list(ex.map(lambda _: sh("sbx-provision", "manifests/minimal.yaml"), range(N)))
    st = [state(i) for i in ids]
    cg = sum(memcg_bytes(s["cgroup"]) for s in st)
    wd = sum(pss_kb(s["watchdog_pid"]) for s in st) * 1024
    init_pss = sum(pss_kb(s["pid"]) for s in st) * 1024
    per = (cg + wd + init_pss) / N / (1 << 20)
    print(f"density: {N} idle sandboxes: at most {per:.3f} MiB each "
          f"(cgroup-charged {cg / N / 1024:.0f} KiB + init PSS {init_pss / N / 1024:.0f} KiB "
          f"+ watchdog PSS {wd / N / 1024:.0f} KiB)   goal: <= 1 MiB")
    subprocess.run(["sbx-gc"] + ids, check=True, stdout=subprocess.DEVNULL)
    if out:
        with open(out, "a") as f:
            f.write(f"density: {{sandboxes: {N}, mib_each_at_most: {per:.3f}, "
                    f"cgroup_kib_each: {cg / N / 1024:.1f}, init_pss_kib_each: {init_pss / N / 1024:.1f}, "
                    f"watchdog_pss_kib_each: {wd / N / 1024:.1f}}}\n")

main()
