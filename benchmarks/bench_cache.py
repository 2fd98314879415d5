"""The persistent compile cache: a first call in a fresh process without the cache, with a cold
cache (an empty directory: compiled, then stored) and with a warm one (the entry the cold run
stored: no optimizer, no XLA compile). Every run is its own process; the backend is started
before timing. The goal: warm <= 0.25 x cold.

Programs: a small gradient program, an MLP training step (``workloads.mlp_grad_np``: value and
gradient of a 3-layer MLP and an SGD update) and loop kernels updating their arguments in place
(``loop_kernels.INPLACE``).

    python benchmarks/bench_cache.py [--repeat 3] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import hashlib, json, os, sys, time
t_start = time.perf_counter()
sys.path.insert(0, {here!r})
import numpy as np, jax, reactant
name = {name!r}
if name == "grad_small":
    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)
    def fn(w, x):
        return reactant.gradient(loss, w, x)
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((6, 3)), rng.standard_normal((5, 6)))
elif name == "mlp_step":
    import workloads
    fn = workloads.mlp_grad_np
    args = workloads._mlp_inputs(np.random.default_rng(0))
else:
    import loop_kernels as lk
    kernel, n = name.split(":")
    fn, args = lk.INPLACE[kernel], lk.inplace_inputs(kernel, int(n))
np.asarray(reactant.to_rarray(np.ones(2)))  # the backend is up before any timing
dev = reactant.to_rarray(args)
t_imported = time.perf_counter() - t_start
f = reactant.compile(fn)
t0 = time.perf_counter()
out = f(*dev)
leaves = [np.asarray(x) for x in jax.tree_util.tree_leaves((out, dev))]  # results and updated arguments
t_first = time.perf_counter() - t0
digest = hashlib.sha256(b"".join(np.ascontiguousarray(x).tobytes() for x in leaves)).hexdigest()[:16]
print(json.dumps({{"first": t_first, "startup": t_imported, "stats": reactant.cache.stats,
                  "xla": f.xla_compile_count, "digest": digest}}))
"""

PROGRAMS = ["grad_small", "mlp_step", "lu_outer:64", "gauss_seidel:32", "cholesky:64"]


def run(name: str, cache_dir: str | None) -> dict:
    env = dict(os.environ)
    env.pop("REACTANT_CACHE_DIR", None)
    if cache_dir is not None:
        env["REACTANT_CACHE_DIR"] = cache_dir
    r = subprocess.run([sys.executable, "-c", CHILD.format(here=HERE, name=name)], capture_output=True, text=True,
                       env=env, timeout=1200, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{name}: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure(name: str, repeat: int) -> dict:
    """Median first-call seconds of each mode over ``repeat`` processes each, and whether every
    run computed the same bytes. A warm run that missed is measured again with a new cold
    entry (in a checkout edited meanwhile, the sources' hash in the key changed): ``retries``."""
    times: dict[str, list[float]] = {"none": [], "cold": [], "warm": []}
    digests = set()
    retries = 0
    root = tempfile.mkdtemp(prefix="reactant-bench-cache-")
    try:
        for i in range(repeat):
            r = run(name, None)
            times["none"].append(r["first"])
            digests.add(r["digest"])
            for attempt in range(4):
                d = os.path.join(root, f"c{i}-{attempt}")
                cold = run(name, d)
                assert cold["stats"]["writes"] == 1, cold["stats"]
                warm = run(name, d)
                digests.update((cold["digest"], warm["digest"]))
                if warm["stats"]["hits"] == 1 and warm["xla"] == 0:
                    break
                retries += 1
            else:
                raise RuntimeError(f"{name}: the warm run missed 4 times")
            times["cold"].append(cold["first"])
            times["warm"].append(warm["first"])
            entry = [os.path.getsize(os.path.join(d, e)) for e in os.listdir(d)]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"name": name, **med, "ratio": med["warm"] / med["cold"], "same": len(digests) == 1,
            "retries": retries, "entry_kb": sum(entry) / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    names = a.only or PROGRAMS
    run("grad_small", None)  # (calibrates the optimizer's cost model once, if this machine has not)
    print(f"first call in a fresh process, median of {a.repeat} processes each (seconds)")
    print(f"{'program':<18} {'no cache':>9} {'cold':>9} {'warm':>9} {'warm/cold':>10} {'entry KB':>9} "
          f"{'same values':>12} {'retries':>8}")
    for name in names:
        r = measure(name, a.repeat)
        print(f"{r['name']:<18} {r['none']:9.3f} {r['cold']:9.3f} {r['warm']:9.3f} {r['ratio']:10.2f} "
              f"{r['entry_kb']:9.1f} {str(r['same']):>12} {r['retries']:>8}", flush=True)


if __name__ == "__main__":
    main()
