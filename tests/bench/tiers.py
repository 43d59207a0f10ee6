#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The tiers side by side, in one run: for the namespace tier and the OCI tier
# under each runtime installed (runc, crun, runsc), provision + exec of
# `true` + gc, the one-shot `sbx-run -m`, and an exec into a live sandbox,
# next to the runtimes' own `runc run` and `runsc do`; then runsc's memory
# snapshots: checkpoint (sbx-snap), restore, and a fork of 4 children, with
# the checkpoint's size; then the microVM tier's (with a guest kit,
# $SBX_GUEST_KIT): a cold boot and a snapshot-boot to ready-to-exec, the first exec after it, an exec, and the same
# memory snapshot rows; in every tier, a sandbox claimed from a warm pool and its first exec, on a busybox root directory (the kit's). Slow tiers
# run fewer times (their counts are in the rows). Appends its figures to the
# YAML results file given as $1.
import json, os, shutil, subprocess, sys, tempfile, time

from benchlib import RUNS, hyperfine, med, p90, runc_bundle, sh, write_rows

root = os.environ["SBX_ROOT"]
policy = f"{root}/policy.yaml"

def manifest(tier, extra=""):
    if tier == "namespace":
        text = "isolation_level: namespace\n"
    elif tier == "microvm":
        text = "isolation_level: microvm\n"
    else:
        text = f"isolation_level: oci\nruntime: {tier}\nsecurity:\n  landlock: false\n"
    path = f"{root}/bench-{tier}.yaml"
    with open(path, "w") as f:
        f.write(text + extra)
    return path

def loop(fn, n):
    xs = []
    for _ in range(n):
        a = time.perf_counter(); fn(); xs.append(time.perf_counter() - a)
    return xs

def lifecycle(m):
    sid = sh("sbx-provision", "--no-watchdog", m)
    subprocess.run(["sbx-run", sid, "--", "true"], check=True)
    subprocess.run(["sbx-gc", sid], check=True, stdout=subprocess.DEVNULL)

def tier_rows(tier, runs):
    m = manifest(tier)
    sid = sh("sbx-provision", "--no-watchdog", m)
    hf = hyperfine([f"sbx-run -m {m} -- true", f"sbx-run {sid} -- true"],
                   os.path.join(root, f"hf-{tier}.json"), runs=runs, warmup=2)
    sh("sbx-gc", sid)
    claim, first = pool_rows(m, runs)
    return {f"{tier}: provision + exec true + gc": loop(lambda: lifecycle(m), runs),
            f"{tier}: one-shot sbx-run -m": hf[0],
            f"{tier}: exec into a live sandbox": hf[1],
            f"{tier}: claimed from a warm pool": claim,
            f"{tier}: first exec after the claim": first}

def pool_rows(m, runs):
    """Acquisition from a warm pool of m (one member, filled untimed before
    each run): sbx-provision's claim, ready to exec, and the first exec."""
    with open(policy) as f:
        before = f.read()
    with open(policy, "a") as f:
        f.write(f"pools:\n  - {{name: bench, manifest: {m}, size: 1}}\n")
    xs, first = [], []
    for _ in range(runs):
        subprocess.run(["sbx-provision", "--fill-pools", "--no-watchdog"], check=True,
                       stdout=subprocess.DEVNULL)
        a = time.perf_counter()
        sid = sh("sbx-provision", "--no-watchdog", m)
        xs.append(time.perf_counter() - a)
        a = time.perf_counter()
        subprocess.run(["sbx-run", sid, "--", "true"], check=True)
        first.append(time.perf_counter() - a)
        sh("sbx-gc", sid)
    with open(policy, "w") as f:
        f.write(before)
    return xs, first

def memory_rows(sid, runs):
    """Checkpoint sid, restore and fork 4 from it, runs times, each timed; the size."""
    ck, rs, fk, size = [], [], [], 0
    for _ in range(runs):
        a = time.perf_counter(); snap = sh("sbx-snap", sid); ck.append(time.perf_counter() - a)
        meta = json.loads(sh("sbx-snap", "inspect", "-o", "json", snap))
        size = meta.get("checkpoint", {}).get("size", 0)
        a = time.perf_counter(); kid = sh("sbx-snap", "restore", snap)
        rs.append(time.perf_counter() - a)
        sh("sbx-gc", kid)
        a = time.perf_counter(); kids = sh("sbx-fork", "-n", "4", snap).split()
        fk.append(time.perf_counter() - a)
        sh("sbx-gc", *kids)
        sh("sbx-snap", "remove", snap)
    return ck, rs, fk, size

def gvisor_memory(runs):
    """runsc: checkpoint, restore and fork of 4, each timed; the checkpoint's size."""
    m = manifest("runsc", "snapshot: {enabled: true}\nfork: {max_fork_factor: 64}\n")
    sid = sh("sbx-provision", "--no-watchdog", m)
    # a process holding memory, as an agent's interpreter would
    subprocess.Popen(["sbx-run", sid, "--", "python3", "-c",
                      "import time\nx = bytearray(32 << 20)\nwhile True: time.sleep(1)"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(3)
    ck, rs, fk, size = memory_rows(sid, runs)
    sh("sbx-gc", sid)
    return {"runsc: checkpoint (sbx-snap, memory)": ck,
            "runsc: restore from the checkpoint": rs,
            "runsc: fork of 4 children": fk}, size

def microvm(runs):
    """The microVM tier: boot, exec, checkpoint, restore, fork of 4 (under TCG here)."""
    kit = os.environ.get("SBX_GUEST_KIT")
    # outside the state root, which is never a sandbox's root
    rootdir = tempfile.mkdtemp(prefix="sbx-bench-vmroot.")
    os.chmod(rootdir, 0o755)
    os.makedirs(f"{rootdir}/bin", exist_ok=True)
    os.makedirs(f"{rootdir}/tmp", exist_ok=True)
    with open(f"{kit}/initrd", "rb") as f:
        subprocess.run(["cpio", "--quiet", "-id", "bin/busybox"], stdin=f, cwd=rootdir, check=True)
    for c in ("sh", "sleep", "true"):
        if not os.path.lexists(f"{rootdir}/bin/{c}"):
            os.symlink("busybox", f"{rootdir}/bin/{c}")
    with open(policy, "a") as f:
        f.write(f"rootfs: [\"{rootdir}\"]\n")
    m = manifest("microvm", f"rootfs: {rootdir}\nread_only_root: false\n"
                 "resource_allocation: {memory_mb: 128}\nfork: {max_fork_factor: 64}\n")
    def provision(env=None):
        a = time.perf_counter()
        sid = subprocess.run(["sbx-provision", "--no-watchdog", m], check=True, text=True,
                             capture_output=True, env=env).stdout.strip()
        return sid, time.perf_counter() - a
    boot, warm = [], []
    cold = dict(os.environ, SBX_VM_BOOT_SNAPSHOT="0")
    for _ in range(runs):
        sid, t = provision(cold)
        boot.append(t)
        sh("sbx-gc", sid)
    # the first makes the boot snapshot, the others start from it
    sh("sbx-gc", provision()[0])
    first = []
    for _ in range(runs):
        sid, t = provision()
        warm.append(t)
        # a new QEMU translates every guest path it runs for the first time
        a = time.perf_counter()
        subprocess.run(["sbx-run", sid, "--", "true"], check=True)
        first.append(time.perf_counter() - a)
        sh("sbx-gc", sid)
    sid = sh("sbx-provision", "--no-watchdog", m)
    ex = loop(lambda: subprocess.run(["sbx-run", sid, "--", "true"], check=True), runs * 4)
    subprocess.Popen(["sbx-run", "-d", sid, "--", "sh", "-c", "while :; do sleep 1; done"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).wait()
    ck, rs, fk, size = memory_rows(sid, runs)
    sh("sbx-gc", sid)
    pool, pool_first = pool_rows(m, runs)
    shutil.rmtree(rootdir)
    return {"microvm: cold boot, ready to exec": boot,
            "microvm: snapshot-boot, ready to exec": warm,
            "microvm: first exec after a snapshot-boot": first,
            "microvm: claimed from a warm pool": pool,
            "microvm: first exec after the claim": pool_first,
            "microvm: exec into a live VM": ex,
            "microvm: checkpoint (sbx-snap, memory)": ck,
            "microvm: restore from the checkpoint": rs,
            "microvm: fork of 4 children": fk}, size

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    with open(policy, "w") as f:
        f.write("allow:\n  landlock_off: true\n")
    tiers = ["namespace"] + [t for t in ("runc", "crun", "runsc") if shutil.which(t)]
    times, counts = {}, {}
    for t in tiers:
        n = max(5, RUNS // (20 if t == "runsc" else 5))
        rows = tier_rows(t, n)
        times.update(rows)
        counts.update({k: n for k in rows})
    peers = {}
    if shutil.which("runc"):
        bundle = runc_bundle(root)
        peers["runc run (its own bundle)"] = \
            f"runc run --bundle {bundle} sbx-bench-tiers-{os.getpid()}"
    if shutil.which("runsc"):
        peers["runsc do true"] = "runsc --network=none --platform=ptrace do true"
    if peers:
        n = max(5, RUNS // 20)
        for k, xs in zip(peers, hyperfine(list(peers.values()), os.path.join(root, "hf-peers.json"),
                                          runs=n, warmup=2)):
            times[k] = xs
            counts[k] = n
    size = None
    if "runsc" in tiers:
        n = max(3, RUNS // 30)
        rows, size = gvisor_memory(n)
        times.update(rows)
        counts.update({k: n for k in rows})
    vm_size = None
    if shutil.which("qemu-system-x86_64") and os.environ.get("SBX_GUEST_KIT"):
        n = max(3, RUNS // 30)
        rows, vm_size = microvm(n)
        times.update(rows)
        counts.update({k: n for k in rows})
    os.unlink(policy)
    ref = med(times["namespace: one-shot sbx-run -m"])
    print(f"{'command':<44} {'median':>10} {'p90':>10} {'runs':>5}  vs namespace one-shot")
    rows = {}
    for k, xs in times.items():
        r = med(xs) / ref
        rows[k] = (med(xs), p90(xs), r)
        print(f"{k:<44} {med(xs):9.1f}ms {p90(xs):9.1f}ms {counts[k]:>5}  {r:6.1f}x")
    extra = [f"runsc_checkpoint_bytes: {size}"] if size is not None else []
    if size is not None:
        print(f"{'runsc checkpoint size':<44} {size / 1e6:9.2f} MB")
    if vm_size is not None:
        extra.append(f"microvm_checkpoint_bytes: {vm_size}")
        print(f"{'microvm checkpoint size':<44} {vm_size / 1e6:9.2f} MB")
    write_rows(out, "tiers", rows, extra)

main()
