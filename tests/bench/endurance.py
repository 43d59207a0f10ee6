#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Endurance: N provision / run / destroy cycles must leave the host as they
# found it: the same mounts, cgroups, network namespaces, loop devices, open
# file descriptors of the tools (none survive them) and processes.
# Appends its figures to the YAML results file given as $1.
import glob, os, subprocess, sys, time

N = int(os.environ.get("SBX_BENCH_CYCLES", "500"))

def count():
    with open("/proc/self/mountinfo") as f:
        mounts = sum(1 for _ in f)
    cgroups = sum(len(dirs) for _, dirs, _ in os.walk("/sys/fs/cgroup/freezer")) + \
        sum(len(dirs) for _, dirs, _ in os.walk("/sys/fs/cgroup/memory"))
    netns, procs = set(), 0
    for p in glob.glob("/proc/[0-9]*"):
        try:
            with open(p + "/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            # zombies wait for PID 1 and hold nothing; kernel threads come and go
            if fields[0] == "Z" or fields[1] == "2" or p == "/proc/2":
                continue
            netns.add(os.readlink(p + "/ns/net"))
            procs += 1
        except OSError:
            pass
    loops = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout.count("\n")
    return {"mounts": mounts, "cgroups": cgroups, "netns": len(netns), "processes": procs,
            "loop_devices": loops}

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    m = os.path.join(os.environ["SBX_ROOT"], "endurance.yaml")
    with open(m, "w") as f:
        f.write("resource_allocation: {memory_mb: 128, pids: 64, disk_mb: 16}\nread_only_root: false\n"
                "tmpfs: [{guest: /scratch, size_mb: 4}]\n")
    subprocess.run(["sbx-gc"], capture_output=True)
    before = count()
    a = time.perf_counter()
    for i in range(N):
        sid = subprocess.run(["sbx-provision", m], check=True, capture_output=True,
                             text=True).stdout.strip()
        subprocess.run(["sbx-run", sid, "--", "sh", "-c",
                        "echo x > /root/f; sleep 30 & echo y > /scratch/g"], check=True,
                       capture_output=True)
        subprocess.run(["sbx-gc", sid], check=True, capture_output=True)
    took = time.perf_counter() - a
    subprocess.run(["sbx-gc"], capture_output=True)
    time.sleep(0.5)
    after = count()
    leaked = {k: after[k] - before[k] for k in before if after[k] != before[k]}
    print(f"endurance: {N} provision/run/destroy cycles in {took:.1f} s "
          f"({N / took:.1f}/s); before {before}; after {after}; "
          + ("nothing leaked" if not leaked else f"CHANGED {leaked}"))
    if out:
        with open(out, "a") as f:
            f.write(f"endurance: {{cycles: {N}, seconds: {took:.1f}, before: {before}, after: {after}}}\n")
    return 1 if leaked else 0

sys.exit(main())
