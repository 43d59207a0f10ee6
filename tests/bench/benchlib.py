# SPDX-License-Identifier: MIT
# What the benchmark scripts share: running commands, hyperfine, medians, and
# the rows they print and append to the YAML results file.
import json, os, statistics, subprocess, tempfile

RUNS = int(os.environ.get("SBX_BENCH_RUNS", "100"))

def sh(*a):
    return subprocess.run(a, check=True, capture_output=True, text=True).stdout.strip()

def med(xs): return statistics.median(xs) * 1000
def p90(xs): return sorted(xs)[int(0.9 * (len(xs) - 1))] * 1000

def hyperfine(cmds, out_json, runs=None, warmup=5, prepare=()):
    """Each command's times in seconds, run without a shell (-N); prepare:
    one untimed command before each run of each command, in their order."""
    subprocess.run(["hyperfine", "-N", "--warmup", str(warmup), "--runs", str(runs or RUNS),
                    "--style", "none", "--export-json", out_json]
                   + [a for p in prepare for a in ("--prepare", p)] + cmds, check=True,
                   stdout=subprocess.DEVNULL)
    with open(out_json) as f:
        return [r["times"] for r in json.load(f)["results"]]

def ratio_rows(times, ref):
    """{name: (median_ms, p90_ms, ratio to ref[name]'s median or None)}."""
    return {n: (med(xs), p90(xs), med(xs) / med(times[ref[n]]) if n in ref else None)
            for n, xs in times.items()}

def write_rows(out, section, rows, extra=()):
    """Append rows {name: (median_ms, p90_ms, ratio or None)} under section."""
    if not out:
        return
    with open(out, "a") as f:
        f.write(f"{section}:\n")
        for n, (m, p, r) in rows.items():
            f.write(f"  - {{command: {json.dumps(n)}, median_ms: {m:.3f}, p90_ms: {p:.3f}"
                    + (f", ratio: {r:.3f}" if r else "") + "}\n")
        for line in extra:
            f.write(f"  {line}\n")

def runc_bundle(root):
    """A bundle below root for `runc run`: /bin/true, the host's /usr read-only."""
    b = tempfile.mkdtemp(dir=root)
    os.mkdir(f"{b}/rootfs")
    for d in ("proc", "dev", "tmp", "usr", "etc"):
        os.mkdir(f"{b}/rootfs/{d}")
    for l in ("bin", "sbin", "lib", "lib64"):
        if os.path.islink(f"/{l}"):
            os.symlink(os.readlink(f"/{l}"), f"{b}/rootfs/{l}")
    subprocess.run(["runc", "spec", "--bundle", b], check=True)
    with open(f"{b}/config.json") as f:
        c = json.load(f)
    c["process"]["args"] = ["/bin/true"]
    c["process"]["terminal"] = False
    c["root"]["readonly"] = True
    c["mounts"].append({"destination": "/usr", "type": "bind", "source": "/usr",
                        "options": ["rbind", "ro"]})
    with open(f"{b}/config.json", "w") as f:
        json.dump(c, f)
    return b
