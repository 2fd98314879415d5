"""The seed case of the autodiff issue: normalize with the norm recomputed in every loop
iteration, differentiated. JAX differentiates the loop as written (every reverse iteration
back-propagates through a norm: O(n^2)); reactant optimizes first (the norm is hoisted out
of the loop) and differentiates the optimized loop: O(n). Times at two sizes.

Run:  python benchmarks/bench_seed_normalize.py
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from harness import measure, print_table  # noqa: E402
from workloads import BY_NAME, grad_programs  # noqa: E402

import jax  # noqa: E402

import reactant  # noqa: E402


def main(sizes=(10_000, 40_000)):
    w = BY_NAME["normalize_loop"]
    rows = []
    for n in sizes:
        rng = np.random.default_rng(0)
        x = rng.standard_normal(n, dtype=np.float32)
        ct = rng.standard_normal(n).astype(np.float32)
        rf, jf = grad_programs(w, None, None)
        rc = reactant.compile(rf, loops="keep")
        jc = jax.jit(jf)
        rargs, jargs = reactant.to_rarray((x, ct)), jax.device_put((x, ct))
        r_out, j_out = rc(*rargs), jc(*jargs)
        np.testing.assert_allclose(np.asarray(r_out[1][0]), np.asarray(j_out[1][0]), rtol=2e-3, atol=1e-6)
        rows.append(measure(f"normalize_loop.grad n={n}",
                            {"jax.jit(value_and_grad)": lambda: jc(*jargs)[1][0].block_until_ready(),
                             "reactant": lambda: rc(*rargs)[1][0].block_until_ready()}, rounds=5))
    print_table(rows, base="jax.jit(value_and_grad)", title="seed case: gradient of the normalize loop")
    (a, b) = rows
    k = sizes[1] / sizes[0]
    for impl in ("jax.jit(value_and_grad)", "reactant"):
        g = b.median(impl) / a.median(impl)
        print(f"{impl}: time grows {g:.1f}x for {k:.0f}x the size (linear: {k:.0f}x, quadratic: {k * k:.0f}x)")


if __name__ == "__main__":
    main()
