"""The twelve workloads of the shared benchmark set (the peers' figures are measured on them), written in plain NumPy and run through
@reactant.compile, against jax.jit of the jax.numpy version; forward (issue: optimizer, part
b) and gradient (issue: autodiff; reactant differentiates the optimized IR). Results are
checked against each other before timing; times are paired, interleaved medians.

Run:  python benchmarks/bench_workloads.py [--mode fwd|grad|both] [--only NAME,...] [--level O2]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from harness import geomean, hlo_fingerprint, measure, print_table  # noqa: E402
from workloads import WORKLOADS, grad_programs  # noqa: E402

import jax  # noqa: E402

import reactant  # noqa: E402


def _block(x):
    for leaf in jax.tree_util.tree_leaves(x, is_leaf=lambda v: isinstance(v, reactant.ConcreteRArray)):
        leaf.block_until_ready()
    return x


def _close(a, b, name):
    la = jax.tree_util.tree_leaves(a, is_leaf=lambda v: isinstance(v, reactant.ConcreteRArray))
    lb = jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb), f"{name}: {len(la)} vs {len(lb)} results"
    for x, y in zip(la, lb):
        # the same precision on both sides, or the timing compares float64 with float32 work
        assert np.asarray(x).dtype == np.asarray(y).dtype, f"{name}: {np.asarray(x).dtype} vs {np.asarray(y).dtype}"
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        scale = max(1.0, float(np.abs(y).max()) if y.size else 1.0)
        err = float(np.abs(x - y).max()) / scale if y.size else 0.0
        assert err < 2e-3, f"{name}: reactant and jax differ (max rel err {err:.2e})"


def run(mode: str, only: set | None, level: str, rounds: int):
    rows, infos = [], []
    for w in WORKLOADS:
        if only and w.name not in only:
            continue
        rng = np.random.default_rng(0)
        args = w.make(rng)
        if mode == "grad" and w.np_grad is None:
            out_shape = np.shape(w.np_fn(*args)) if w.name != "normalize_loop" else args[0].shape
            ct = rng.standard_normal(out_shape).astype(np.float32)
            args = tuple(args) + (ct,)
        if mode == "fwd":
            rf, jf = w.np_fn, w.jnp_fn
        else:
            rf, jf = grad_programs(w, None, None)
        rargs = reactant.to_rarray(args)
        jargs = jax.device_put(args)
        rc = reactant.compile(rf, optimize=level, loops=w.loops)
        jc = jax.jit(jf)
        t0 = time.perf_counter()
        r_out = _block(rc(*rargs))
        t_r = time.perf_counter() - t0
        t0 = time.perf_counter()
        j_out = _block(jc(*jargs))
        t_j = time.perf_counter() - t0
        _close(r_out, j_out, w.name)
        res = measure(f"{w.name}.{mode}", {"jax.jit": lambda: _block(jc(*jargs)),
                                            "reactant": lambda: _block(rc(*rargs))}, rounds=rounds)
        rows.append(res)
        # when XLA compiled both to the same code, their ratio only samples machine noise
        same = hlo_fingerprint(reactant.code_xla(rc, *rargs)) == hlo_fingerprint(jc.lower(*jargs).compile().as_text())
        infos.append((w.name, t_r, t_j, same))
        print(f"  {w.name}.{mode}: reactant/jax = {res.ratio('reactant', 'jax.jit'):.3f}  "
              f"(first call {t_r:.2f}s vs {t_j:.2f}s){'  [same XLA code]' if same else ''}", flush=True)
    print_table(rows, base="jax.jit", title=f"{mode}: reactant ({level}) vs jax.jit, run time")
    ratios = [r.ratio("reactant", "jax.jit") for r in rows]
    speedups = [1 / x for x in ratios]
    print(f"\ngeomean speedup over jax.jit: {geomean(speedups):.3f}x; slowest case: "
          f"{min(speedups):.3f}x ({rows[int(np.argmin(speedups))].name})")
    print("\nfirst call (trace + optimize + compile + run), seconds:")
    for name, tr, tj, _ in infos:
        print(f"  {name}: reactant {tr:.2f}  jax {tj:.2f}")
    same = [f"{name}.{mode}" for name, *_, s in infos if s]
    print("\nXLA compiled both versions to the same code (ratio = noise): " + (", ".join(same) or "none"))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="both", choices=["fwd", "grad", "both"])
    ap.add_argument("--only", default="")
    ap.add_argument("--level", default="O2")
    ap.add_argument("--rounds", type=int, default=11)
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    print(f"jax {jax.__version__}; {os.cpu_count()} cores")
    for mode in (["fwd", "grad"] if a.mode == "both" else [a.mode]):
        run(mode, only, a.level, a.rounds)


if __name__ == "__main__":
    main()
