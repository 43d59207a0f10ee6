#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Density: host memory per idle sandbox, 500 of them, and per member of a
# warm pool (sbx-policy(5) pools). An upper bound: the memory charged to the
# sandboxes' cgroups (tmpfs, overlay, kernel objects), plus the proportional
# set size (PSS) of their inits (whose copy-on-write pages stay charged to
# the caller's cgroup), of their watchdogs and of their runners with their
# workers (which live outside); init pages counted in both are counted twice.
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

def tree_pss_kb(pid):
    # the process and its descendants (a runner's workers)
    kb, todo = 0, [pid]
    while todo:
        p = todo.pop()
        kb += pss_kb(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo += f.read().split()
        except OSError:
            pass
    return kb

def memcg_bytes(spec):
    # "1:cpu=/x,memory=/y,..." (v1) or "2:/path" (v2)
    if spec.startswith("2:"):
        path = "/sys/fs/cgroup" + spec[2:] + "/memory.current"
    else:
        parts = dict(p.split("=", 1) for p in spec[2:].split(","))
        path = "/sys/fs/cgroup/memory" + parts["memory"] + "/memory.usage_in_bytes"
    with open(path) as f:
        return int(f.read())

def cost(ids):
    st = [state(i) for i in ids]
    n = len(ids)
    cg = sum(memcg_bytes(s["cgroup"]) for s in st) / n / 1024
    init = sum(pss_kb(s["pid"]) for s in st) / n
    wd = sum(pss_kb(s["watchdog_pid"]) for s in st if "watchdog_pid" in s) / n
    rn = sum(tree_pss_kb(s["runner_pid"]) for s in st if "runner_pid" in s) / n
    return {"mib_each_at_most": (cg + init + wd + rn) / 1024, "cgroup_kib_each": cg,
            "init_pss_kib_each": init, "watchdog_pss_kib_each": wd, "runner_pss_kib_each": rn}

def show(what, n, c):
    print(f"{what}: {n}: at most {c['mib_each_at_most']:.3f} MiB each "
          f"(cgroup-charged {c['cgroup_kib_each']:.0f} KiB + init PSS {c['init_pss_kib_each']:.0f} KiB "
          f"+ watchdog PSS {c['watchdog_pss_kib_each']:.0f} KiB "
          f"+ runner PSS {c['runner_pss_kib_each']:.0f} KiB)   goal: <= 1 MiB")

def yaml(c):
    return ", ".join(f"{k}: {v:.3f}" if k.startswith("mib") else f"{k}: {v:.1f}"
                     for k, v in c.items())

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        ids = list(ex.map(lambda _: sh("sbx-provision", "manifests/minimal.yaml"), range(N)))
    idle = cost(ids)
    show("density: idle sandboxes", N, idle)
    subprocess.run(["sbx-gc"] + ids, check=True, stdout=subprocess.DEVNULL)
    # a warm pool's members: made ahead, unclaimed, each with its watchdog and runner
    P = min(N, 50)
    root = os.environ["SBX_ROOT"]
    pol = os.path.join(root, "density-pool.yaml")
    with open(pol, "w") as f:
        f.write(f"pools:\n  - {{name: density, manifest: {os.path.abspath('manifests/minimal.yaml')}, "
                f"size: {P}}}\n")
    os.chmod(pol, 0o600)
    env = dict(os.environ, SBX_POLICY=pol)
    made = subprocess.run(["sbx-provision", "--fill-pools"], env=env, check=True,
                          capture_output=True, text=True).stdout.split()
    members = [w for w in made if w.startswith("sbx-")]
    pool = cost(members)
    show("density: warm pool members", len(members), pool)
    subprocess.run(["sbx-gc"] + members, check=True, stdout=subprocess.DEVNULL)
    os.unlink(pol)
    if out:
        with open(out, "a") as f:
            f.write(f"density: {{sandboxes: {N}, {yaml(idle)}}}\n")
            f.write(f"density_pool: {{members: {len(members)}, {yaml(pool)}}}\n")

main()
