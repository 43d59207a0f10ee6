#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# S3 stores, side by side: push and pull of a 500 MB layer with sbx-snap
# against `curl --aws-sigv4` PUT and GET of the same file, on the same server
# (a real radosgw: $SBX_TEST_S3_ENV, else one started here), in the same run,
# interleaved, the median of each. sbx's push signs each part's SHA-256 and
# its pull checks the whole layer's before keeping it (and fsyncs it); curl
# is given the payload's SHA-256 too. Appends its figures to the YAML file $1.
import os, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ["SBX_ROOT"]
MB = int(os.environ.get("SBX_BENCH_S3_MB", "500"))
RUNS = 3

def sh(*a, inp=None, env=None):
    return subprocess.run(a, check=True, capture_output=True, text=True, input=inp,
                          env=env).stdout.strip()

def timed(*a, env=None):
    t = time.perf_counter()
    sh(*a, env=env)
    return time.perf_counter() - t

def server():
    if os.environ.get("SBX_TEST_S3_ENV"):
        return os.environ["SBX_TEST_S3_ENV"], None
    d = tempfile.mkdtemp(prefix="sbx-bench-s3.")
    sh(f"{HERE}/../s3/server.sh", "start", f"{d}/srv")
    return f"{d}/srv/env", d

def load_env(path):
    env = dict(os.environ)
    for line in open(path):
        line = line.strip()
        if line.startswith("export "):
            line = line[7:]
        if "=" in line:
            k, v = line.split("=", 1)
            env[k] = v
    return env

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    envfile, own = server()
    env = load_env(envfile)
    env["SBX_NO_PROGRESS"] = "1"
    ep, region = env["AWS_ENDPOINT_URL"], env["AWS_REGION"]
    auth = ["--aws-sigv4", f"aws:amz:{region}:s3", "--user",
            f"{env['AWS_ACCESS_KEY_ID']}:{env['AWS_SECRET_ACCESS_KEY']}"]
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    def curl(*a, sha=empty):
        return sh("curl", "-sSf", *auth, "-H", f"x-amz-content-sha256: {sha}", *a, env=env)

    bucket = f"sbx-bench-{os.getpid()}"
    store = f"s3://{bucket}/bench"
    try:
        curl("-X", "PUT", f"{ep}/{bucket}")
        sid = sh("sbx-provision", "-", inp="read_only_root: false\n", env=env)
        sh("sbx-run", sid, "--", "sh", "-c", f"head -c {MB}M /dev/urandom > /root/big", env=env)
        snap = sh("sbx-snap", sid, env=env)
        layers = os.listdir(f"{ROOT}/layers")
        hexd = [x for x in layers if x.endswith(".tar.zst")][0][:64]
        layer = f"{ROOT}/layers/{hexd}.tar.zst"
        size = os.path.getsize(layer)
        pull_root = tempfile.mkdtemp(prefix="sbx-bench-pull.", dir="/tmp")
        os.chmod(pull_root, 0o711)
        penv = dict(env, SBX_ROOT=pull_root)
        got = f"{pull_root}/curl-get"
        t_push, t_put, t_pull, t_get = [], [], [], []
        for _ in range(RUNS):
            # push: the store empty of this layer each time
            curl("-X", "DELETE", f"{ep}/{bucket}/bench/snapshots/{snap}.yaml")
            curl("-X", "DELETE", f"{ep}/{bucket}/bench/layers/sha256/{hexd}")
            t_push.append(timed("sbx-snap", "push", "--store", store, snap, env=env))
            t_put.append(timed("curl", "-sSf", *auth, "-H", f"x-amz-content-sha256: {hexd}",
                               "-T", layer, f"{ep}/{bucket}/curl-object", env=env))
            # pull: a state root without it each time
            shutil.rmtree(pull_root)
            os.mkdir(pull_root, 0o711)
            t_pull.append(timed("sbx-snap", "pull", "--store", store, snap, env=penv))
            t_get.append(timed("curl", "-sSf", *auth, "-H", f"x-amz-content-sha256: {empty}",
                               "-o", got, f"{ep}/{bucket}/curl-object", env=env))
            os.unlink(got)
        for key in (f"bench/snapshots/{snap}.yaml", f"bench/layers/sha256/{hexd}", "curl-object"):
            curl("-X", "DELETE", f"{ep}/{bucket}/{key}")
        curl("-X", "DELETE", f"{ep}/{bucket}")
        sh("sbx-gc", sid, env=env)
        sh("sbx-snap", "remove", snap, env=env)
        sh("sbx-gc", env=env)
        shutil.rmtree(pull_root)
        m = lambda v: statistics.median(v)
        mbs = lambda t: size / 1e6 / t
        push, put, pull, get = m(t_push), m(t_put), m(t_pull), m(t_get)
        print(f"S3 push of a {size / 1e6:.0f} MB layer: sbx-snap {mbs(push):.0f} MB/s, curl PUT "
              f"{mbs(put):.0f} MB/s ({put / push:.2f}x; goal >= 0.9x); pull: sbx-snap "
              f"{mbs(pull):.0f} MB/s, curl GET {mbs(get):.0f} MB/s ({get / pull:.2f}x; goal >= 0.9x)")
        if out:
            with open(out, "a") as f:
                f.write(f"s3: {{layer_mb: {size / 1e6:.0f}, push_mbs: {mbs(push):.0f}, "
                        f"curl_put_mbs: {mbs(put):.0f}, push_ratio: {put / push:.2f}, "
                        f"pull_mbs: {mbs(pull):.0f}, curl_get_mbs: {mbs(get):.0f}, "
                        f"pull_ratio: {get / pull:.2f}}}\n")
    finally:
        if own:
            subprocess.run([f"{HERE}/../s3/server.sh", "stop", f"{own}/srv"])
            shutil.rmtree(own, ignore_errors=True)

if __name__ == "__main__":
    main()
