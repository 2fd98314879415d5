"""Textbook loop kernels (``loop_kernels.py``: triangular solve, LU two ways, Cholesky,
Gauss-Seidel, a Jacobi time loop, Levinson-Durbin, doitgen) run unmodified through
``@reactant.compile``: the first call (trace, optimize, compile, run) and the steady time with
the default ``loops="auto"`` (loops over plain ints rolled into ``stablehlo.while`` when that
is right) and with ``loops="unroll"`` (every loop unrolled, the behaviour before loop rolling),
next to NumPy and to ``jax.jit`` of the same algorithm written with ``lax.fori_loop``.

Each reactant configuration runs in its own process (first-call time from a cold process,
peak RSS, a time limit: an unrolled kernel can take minutes). Results are checked against
NumPy.

    python benchmarks/bench_loop_kernels.py [--sizes 64,128] [--timeout 300] [--only a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _median_time(call, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def child(name: str, n: int, mode: str) -> dict:
    """One configuration in this process: 'numpy', 'jax', 'auto' or 'unroll'."""
    import numpy as np

    import loop_kernels as lk

    args = lk.inputs(name, n)
    want = lk.KERNELS[name](*[a.copy() for a in args])
    out: dict = {}
    if mode == "numpy":
        out["steady"] = _median_time(lambda: lk.KERNELS[name](*[a.copy() for a in args]), 5)
        return out
    if mode == "jax":
        jfns, jax = lk.jax_versions()
        jax.config.update("jax_enable_x64", True)
        f = jax.jit(jfns[name])
        jargs = [jax.device_put(a) for a in args]
        t0 = time.perf_counter()
        got = np.asarray(f(*jargs).block_until_ready())
        out["first"] = time.perf_counter() - t0
        out["steady"] = _median_time(lambda: f(*jargs).block_until_ready(), 15)
        out["ok"] = bool(np.allclose(got, want, rtol=1e-6, atol=1e-8))
        return out
    import reactant

    f = reactant.compile(lk.KERNELS[name], loops=mode)
    rargs = [reactant.to_rarray(a) for a in args]
    t0 = time.perf_counter()
    got = np.asarray(f(*rargs))
    out["first"] = time.perf_counter() - t0
    out["steady"] = _median_time(lambda: f(*rargs).block_until_ready(), 15)
    out["ok"] = bool(np.allclose(got, want, rtol=1e-6, atol=1e-8))
    out["whiles"] = reactant.code_hlo(f, *rargs).count("stablehlo.while")
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _run_child(name, n, mode, timeout):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, str(n), mode]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": time.perf_counter() - t0}
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:80]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def _fmt_t(r, key):
    if "timeout" in r:
        return f">{r['timeout']:.0f} s"
    if "error" in r:
        return "error"
    v = r.get(key)
    if v is None:
        return "-"
    if v < 1e-3:
        return f"{v * 1e6:.0f} us"
    return f"{v * 1e3:.1f} ms" if v < 1 else f"{v:.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="64,128")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--only", default="")
    ap.add_argument("--child", nargs=3)
    a = ap.parse_args()
    if a.child:
        name, n, mode = a.child
        print(json.dumps(child(name, int(n), mode)))
        return
    import loop_kernels as lk

    names = [k for k in lk.KERNELS if not a.only or k in a.only.split(",")]
    print("| kernel | n | NumPy | jax.jit first / steady | auto first / steady (whiles, ok) | "
          "unroll first / steady (ok) | auto steady / NumPy | auto steady / jax |")
    print("|---|---|---|---|---|---|---|---|")
    for n in [int(s) for s in a.sizes.split(",")]:
        for name in names:
            r = {m: _run_child(name, n, m, a.timeout) for m in ("numpy", "jax", "auto", "unroll")}
            au, un, jx, npy = r["auto"], r["unroll"], r["jax"], r["numpy"]

            def ratio(x, y):
                if "steady" in x and "steady" in y:
                    return f"{x['steady'] / y['steady']:.2f}"
                return "-"

            print(f"| {name} | {n} | {_fmt_t(npy, 'steady')} | {_fmt_t(jx, 'first')} / {_fmt_t(jx, 'steady')} | "
                  f"{_fmt_t(au, 'first')} / {_fmt_t(au, 'steady')} ({au.get('whiles', '-')}, {au.get('ok', '-')}) | "
                  f"{_fmt_t(un, 'first')} / {_fmt_t(un, 'steady')} ({un.get('ok', '-')}) | "
                  f"{ratio(au, npy)} | {ratio(au, jx)} |", flush=True)


if __name__ == "__main__":
    main()
