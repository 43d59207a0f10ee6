#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Snapshots and forks, side by side:
#  - snapshot throughput against `bsdtar --zstd` archiving the same tree (the
#    sandbox's writable layer) on the same machine, in the same run;
#  - an incremental snapshot: a 1 MB change in a sandbox on a 500 MB snapshot;
#  - time per child of `sbx-fork -n 100` from a 1 MB and from a 500 MB
#    snapshot, against a plain provision (the layer cache warm: extracting a
#    layer is once per host, and is reported on its own).
# Appends its figures to the YAML results file given as $1.
import os, statistics, subprocess, sys, time

ROOT = os.environ["SBX_ROOT"]
N = int(os.environ.get("SBX_BENCH_FORKS", "100"))
RW = f"read_only_root: false\nfork: {{max_fork_factor: {N + 10}}}\nresource_allocation: {{max_wall_clock_s: 3600}}\n"

def sh(*a, inp=None):
    return subprocess.run(a, check=True, capture_output=True, text=True, input=inp).stdout.strip()

def timed(*a, inp=None):
    t = time.perf_counter()
    out = sh(*a, inp=inp)
    return time.perf_counter() - t, out

def provision():
    return sh("sbx-provision", "-", inp=RW)

def upper(sid):
    return f"{ROOT}/sandboxes/{sid}/layer/upper"

def du_bytes(path):
    return int(sh("du", "-sb", path).split()[0])

def throughput():
    # A tree of real files: libraries and documentation copied from the host.
    sid = provision()
    sh("sbx-run", sid, "--", "sh", "-c",
       "mkdir -p /root/tree && cp -r /usr/lib/python3* /usr/share/doc /usr/share/locale "
       "/root/tree/ 2>/dev/null; true")
    size = du_bytes(upper(sid))
    runs_sbx, runs_tar = [], []
    for _ in range(3):
        subprocess.run(["sync"])
        t, snap = timed("sbx-snap", sid)
        runs_sbx.append(t)
        sh("sbx-snap", "remove", snap)
        sh("sbx-gc")
        subprocess.run(["sync"])
        t, _ = timed("bsdtar", "--zstd", "-cf", f"{ROOT}/bsdtar.tar.zst", "-C", upper(sid), ".")
        runs_tar.append(t)
        os.unlink(f"{ROOT}/bsdtar.tar.zst")
    sh("sbx-gc", sid)
    ts, tt = statistics.median(runs_sbx), statistics.median(runs_tar)
    return size, ts, tt

def big_snapshot(mb):
    sid = provision()
    # half compressible text, half random: neither flatters the compressor
    sh("sbx-run", sid, "--", "sh", "-c",
       f"head -c {mb // 2}M /dev/urandom > /root/random; "
       f"yes 'sandbox state line' | head -c {mb - mb // 2}M > /root/text")
    t, snap = timed("sbx-snap", sid)
    return sid, snap, t

def forks(snap):
    # warm the layer cache once (a restore), then time the fork of N children
    t_first, kid = timed("sbx-fork", snap)
    sh("sbx-gc", kid)
    t, out = timed("sbx-fork", "-n", str(N), snap)
    kids = out.split()
    assert len(kids) == N
    for i in range(0, N, 50):
        sh("sbx-gc", *kids[i:i + 50])
    return t / N, t_first

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    size, t_sbx, t_tar = throughput()
    mbs_sbx, mbs_tar = size / t_sbx / 1e6, size / t_tar / 1e6
    print(f"snapshot throughput: {size / 1e6:.0f} MB tree: sbx-snap {t_sbx * 1000:.0f} ms "
          f"({mbs_sbx:.0f} MB/s, freeze + fsync included), bsdtar --zstd {t_tar * 1000:.0f} ms "
          f"({mbs_tar:.0f} MB/s): {mbs_sbx / mbs_tar:.2f}x   goal: >= 0.9x")

    small_sid, small, _ = big_snapshot(1)
    big_sid, big, t_big = big_snapshot(500)
    # incremental: a sandbox on the 500 MB snapshot changes 1 MB
    kid = sh("sbx-fork", big)
    sh("sbx-run", kid, "--", "sh", "-c", "head -c 1M /dev/urandom > /root/change")
    incs = []
    for _ in range(5):
        t, s = timed("sbx-snap", kid)
        incs.append(t)
        sh("sbx-snap", "remove", s)
    inc = statistics.median(incs)
    sh("sbx-gc", kid)
    print(f"incremental snapshot: 1 MB changed on a 500 MB snapshot: {inc * 1000:.1f} ms "
          f"(the full 500 MB snapshot: {t_big * 1000:.0f} ms)   goal: <= 50 ms")

    per_small, first_small = forks(small)
    per_big, first_big = forks(big)
    provs = []
    for _ in range(20):
        t, sid = timed("sbx-provision", "-", inp=RW)
        provs.append(t)
        sh("sbx-gc", sid)
    prov = statistics.median(provs)
    print(f"sbx-fork -n {N}: {per_small * 1000:.1f} ms a child from 1 MB, "
          f"{per_big * 1000:.1f} ms from 500 MB ({per_big / per_small:.2f}x; goal <= 1.2x); "
          f"plain provision {prov * 1000:.1f} ms (goal: no slower); first fork, cache cold: "
          f"{first_small * 1000:.0f} ms / {first_big * 1000:.0f} ms")
    sh("sbx-gc", small_sid, big_sid)
    for s in (small, big):
        sh("sbx-snap", "remove", s)
    sh("sbx-gc")
    if out:
        with open(out, "a") as f:
            f.write(f"snapshot: {{tree_mb: {size / 1e6:.0f}, sbx_snap_ms: {t_sbx * 1000:.0f}, "
                    f"bsdtar_zstd_ms: {t_tar * 1000:.0f}, throughput_ratio: {mbs_sbx / mbs_tar:.2f}, "
                    f"incremental_1mb_on_500mb_ms: {inc * 1000:.1f}, full_500mb_ms: {t_big * 1000:.0f}, "
                    f"fork_child_ms_1mb: {per_small * 1000:.2f}, fork_child_ms_500mb: {per_big * 1000:.2f}, "
                    f"fork_ratio: {per_big / per_small:.2f}, provision_ms: {prov * 1000:.2f}, "
                    f"first_fork_cold_ms_1mb: {first_small * 1000:.0f}, "
                    f"first_fork_cold_ms_500mb: {first_big * 1000:.0f}}}\n")

if __name__ == "__main__":
    main()
