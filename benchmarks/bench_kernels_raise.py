"""Loop-heavy NumPy kernels, unmodified, through ``@reactant.compile`` (default ``loops="auto"``,
O2: loops rolled into ``stablehlo.while`` and raised into tensor operations where their
iterations are independent) next to NumPy and to ``jax.jit`` of the same algorithm written the
natural JAX way (``lax.fori_loop``, ``einsum``). Kernels: ``loop_kernels.py`` (triangular solve,
LU by dot products and by outer products, Cholesky by hand, Gauss-Seidel, Jacobi 2-D time loop,
Levinson-Durbin, doitgen) and ``raise_kernels.py`` (FDTD 2-D, 3-D heat, channel flow,
Floyd-Warshall, a 1-D recurrence, a histogram by loop). float64.

Per kernel: results equal to NumPy's (and to the unraised program's, O0), first-call time,
steady time paired and interleaved (the ratio is the median of per-round ratios), and the
``stablehlo.while`` ops left at O0 (rolled loops) and at O2 (after raising), and which of the
raising and in-place rewrites changed the kernel's program (``RULES``).

    python benchmarks/bench_kernels_raise.py [--sizes 128] [--only a,b] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

import loop_kernels as LK  # noqa: E402
import raise_kernels as RK  # noqa: E402
from harness import geomean, measure  # noqa: E402


def _jax_lu_dots():
    """LU by dot products written for jax the natural way: the same loops as ``fori_loop``s,
    the index-bounded slices as masks (``loop_kernels``' jax version of ``lu_dots`` is the
    outer-product form, a different algorithm)."""
    import jax.numpy as jnp
    from jax import lax

    def lu_dots(A):
        n = A.shape[0]
        idx = jnp.arange(n)

        def row(i, A):
            def lower(j, A):
                s = jnp.dot(jnp.where(idx < j, A[i], 0.0), jnp.where(idx < j, A[:, j], 0.0))
                return A.at[i, j].set((A[i, j] - s) / A[j, j])

            def upper(j, A):
                s = jnp.dot(jnp.where(idx < i, A[i], 0.0), jnp.where(idx < i, A[:, j], 0.0))
                return A.at[i, j].set(A[i, j] - s)
            return lax.fori_loop(i, n, upper, lax.fori_loop(0, i, lower, A))
        return lax.fori_loop(0, n, row, A)
    return lu_dots


def kernels():
    lk_jax, jax = LK.jax_versions()
    rk_jax, _ = RK.jax_versions()
    out = {}
    for name, f in LK.KERNELS.items():
        out[name] = (f, lk_jax[name], LK.inputs)
    out["lu_dots"] = (LK.KERNELS["lu_dots"], _jax_lu_dots(), LK.inputs)
    for name, f in RK.KERNELS.items():
        out[name] = (f, rk_jax[name], RK.inputs)
    return out, jax


# rewrites that raise loops or keep their updates in place: a rule "fired" on a kernel when
# disabling it changes the kernel's O2 program
RULES = ("while_raise", "while_map_to_elementwise", "while_sum_to_reduce", "dynamic_slice_of_updated_element",
         "if_sink_update_slice", "slice_dynamic_update_slice")


def fired_rules(o0_text: str) -> list[str]:
    from reactant.ir import context as irc
    from reactant.optimize import PassOptions, pipeline, run_pipeline

    def o2(disabled=frozenset()):
        m = irc.parse_module(o0_text)
        run_pipeline(m, pipeline("O2"), PassOptions(disabled=frozenset(disabled)))
        return irc.to_text(m)
    full = o2()
    return [r for r in RULES if o2({r}) != full]


def run_kernel(name, n, spec, jax, rounds):
    import reactant

    f_np, f_jax, make = spec
    args = make(name, n)
    want = f_np(*[a.copy() for a in args])
    rargs = reactant.to_rarray(args)
    cf = reactant.compile(f_np)
    t0 = time.perf_counter()
    got = np.asarray(cf(*rargs))
    first = time.perf_counter() - t0
    o0 = np.asarray(reactant.compile(f_np, optimize="O0")(*rargs))
    o0_text = reactant.code_hlo(f_np, *rargs, optimize="O0")
    whiles = (o0_text.count("stablehlo.while"), reactant.code_hlo(f_np, *rargs).count("stablehlo.while"))
    rules = fired_rules(o0_text)
    jf = jax.jit(f_jax)
    jargs = [jax.device_put(a) for a in args]
    jgot = np.asarray(jf(*jargs))
    ok = bool(np.allclose(got, want, rtol=1e-7, atol=1e-9) and np.allclose(got, o0, rtol=1e-9, atol=1e-11))
    jok = bool(np.allclose(jgot, want, rtol=1e-7, atol=1e-9))
    mine = lambda: cf(*rargs).block_until_ready()  # noqa: E731
    # two pairs: NumPy's BLAS threads spin on after a call and would slow the next program
    pairs = {}
    for other, fn in (("jax", lambda: jf(*jargs).block_until_ready()), ("numpy", lambda: f_np(*args))):
        slowest = 0.0
        for g in (mine, fn):  # one call each: the slower sets the calls per timing
            t0 = time.perf_counter()
            g()
            slowest = max(slowest, time.perf_counter() - t0)
        pairs[other] = measure(f"{name} n={n} {other}", {"reactant": mine, other: fn}, rounds=rounds,
                               inner=max(1, int(0.05 / slowest)))
    return {"name": name, "n": n, "ok": ok, "jax_ok": jok, "first": first, "whiles": whiles, "rules": rules,
            "reactant": pairs["jax"].median("reactant"), "vs_numpy": pairs["numpy"].ratio("reactant", "numpy"),
            "vs_jax": pairs["jax"].ratio("reactant", "jax")}


def _fmt(s):
    return f"{s * 1e3:9.3f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="128")
    ap.add_argument("--only", default="")
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    specs, jax = kernels()
    jax.config.update("jax_enable_x64", True)
    only = set(filter(None, a.only.split(",")))
    rows = []
    print(f"{'kernel':<16} {'n':>4} {'reactant':>12} {'/numpy':>8} {'/jax':>8} {'first':>8} "
          f"{'whiles O0->O2':>14}  ok  rules that fired")
    for name, spec in specs.items():
        if only and name not in only:
            continue
        for n in (int(s) for s in a.sizes.split(",")):
            r = run_kernel(name, n, spec, jax, a.rounds)
            rows.append(r)
            print(f"{name:<16} {n:>4} {_fmt(r['reactant'])} {r['vs_numpy']:8.3f} {r['vs_jax']:8.3f} "
                  f"{r['first']:7.2f}s {r['whiles'][0]:>6} -> {r['whiles'][1]:<5} "
                  f"{'ok' if r['ok'] else 'MISMATCH'}{'' if r['jax_ok'] else ' (jax differs)'}  "
                  f"{', '.join(r['rules']) or '-'}", flush=True)
    print()
    print(f"geomean reactant/numpy {geomean([r['vs_numpy'] for r in rows]):.3f} "
          f"(worst {max(r['vs_numpy'] for r in rows):.3f}); geomean reactant/jax "
          f"{geomean([r['vs_jax'] for r in rows]):.3f} (worst {max(r['vs_jax'] for r in rows):.3f})")
    bad = [r["name"] for r in rows if not r["ok"]]
    print("results equal NumPy's and the unraised program's" if not bad else f"MISMATCH: {bad}")


if __name__ == "__main__":
    main()
