#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The network policies' cost, in one run: provision + destroy, and exec into a
# live sandbox, with deny-all against egress-allow-list (veth pair, nftables
# table, relay). No traffic is sent: the one allowed address is never used.
# Appends its figures to the YAML results file given as $1. Needs root.
import os, subprocess, sys, tempfile, time

from benchlib import RUNS, hyperfine, ratio_rows, sh, write_rows

root = os.environ["SBX_ROOT"]
minimal = "manifests/minimal.yaml"

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    if os.geteuid() != 0:
        print("network: skipped (the allow-list needs root)")
        return
    fd, allow = tempfile.mkstemp(suffix=".yaml", dir=root)
    with os.fdopen(fd, "w") as f:
        f.write(open(minimal).read())
        f.write('network_policy: egress-allow-list\nallowed_egress: ["10.250.0.2:8080"]\n')
    times = {}
    # interleaved, so that drift on a noisy machine hits both alike
    for _ in range(max(20, RUNS // 4)):
        for name, m in (("provision + gc, deny-all", minimal),
                        ("provision + gc, egress-allow-list", allow)):
            a = time.perf_counter()
            subprocess.run(["sbx-gc", sh("sbx-provision", "--no-watchdog", m)], check=True,
                           stdout=subprocess.DEVNULL)
            times.setdefault(name, []).append(time.perf_counter() - a)
    ids = {"sbx-run ID, deny-all": sh("sbx-provision", "--no-watchdog", minimal),
           "sbx-run ID, egress-allow-list": sh("sbx-provision", "--no-watchdog", allow)}
    times.update(zip(ids, hyperfine([f"sbx-run {i} -- /bin/true" for i in ids.values()],
                                    os.path.join(root, "hf-net.json"))))
    subprocess.run(["sbx-gc"] + list(ids.values()), check=True, stdout=subprocess.DEVNULL)
    ref = {"provision + gc, egress-allow-list": "provision + gc, deny-all",
           "sbx-run ID, egress-allow-list": "sbx-run ID, deny-all"}
    print(f"{'network policy':<38} {'median':>9} {'p90':>9}  {'ratio':>14}")
    rows = ratio_rows(times, ref)
    for n, (m, p, ratio) in rows.items():
        rs = f"{ratio:.2f}x deny-all" if ratio else ""
        print(f"{n:<38} {m:8.2f}ms {p:8.2f}ms  {rs:>14}")
    write_rows(out, "network", rows)

main()
