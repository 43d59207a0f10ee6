# SPDX-License-Identifier: MIT
# What the benchmark scripts share: running commands, hyperfine, medians, and
# the rows they print and append to the YAML results file.
import json, os, statistics, subprocess

RUNS = int(os.environ.get("SBX_BENCH_RUNS", "100"))

def sh(*a):
    return subprocess.run(a, check=True, capture_output=True, text=True).stdout.strip()

def med(xs): return statistics.median(xs) * 1000
def p90(xs): return sorted(xs)[int(0.9 * (len(xs) - 1))] * 1000

def hyperfine(cmds, out_json):
    """Each command's times in seconds, run without a shell (-N)."""
    subprocess.run(["hyperfine", "-N", "--warmup", "5", "--runs", str(RUNS), "--style", "none",
                    "--export-json", out_json] + cmds, check=True, stdout=subprocess.DEVNULL)
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
