"""Control-flow benchmark (issue: control flow): the heat-equation example with 100 steps.

- compile time (trace + optimize + XLA) with the loop kept as a stablehlo.while versus
  unrolled (100 copies of the step);
- run time of the kept loop versus jax.jit of the jax.lax.fori_loop version.

Run:  python benchmarks/bench_control_flow.py
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import heat_equation as h  # noqa: E402
from harness import Result, measure, print_table  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import reactant  # noqa: E402


def heat_static(u0, alpha):
    return h.heat(u0, 100, alpha)


def jax_heat(u0, alpha):
    def step(_, u):
        return u.at[1:-1].add(alpha * (u[:-2] - 2 * u[1:-1] + u[2:]))

    return jax.lax.fori_loop(0, 100, step, u0)


def main(n=4096, rounds=5):
    x = np.linspace(0, 1, n, dtype=np.float32)
    u0_np = np.exp(-((x - 0.5) ** 2) / 0.005).astype(np.float32)
    u0 = reactant.to_rarray(u0_np)
    ju = jax.device_put(u0_np)
    times = {"keep (while)": [], "unrolled": [], "jax.jit(fori_loop)": []}
    for r in range(rounds):
        for k in times:
            t0 = time.perf_counter()
            if k == "keep (while)":
                f = reactant.compile(lambda a, al: heat_static(a, al), loops="keep")
                f(u0, np.float32(0.25)).block_until_ready()
            elif k == "unrolled":
                f = reactant.compile(lambda a, al: heat_static(a, al))
                f(u0, np.float32(0.25)).block_until_ready()
            else:
                g = jax.jit(lambda a, al: jax_heat(a, al))
                g(ju, np.float32(0.25)).block_until_ready()
            times[k].append(time.perf_counter() - t0)
    print_table([Result("heat 1-D n=4096, 100 steps: first call (trace+compile+run)", times)],
                base="keep (while)", title="compile time: loop kept vs unrolled (and jax.jit)")

    kept = reactant.compile(heat_static, loops="keep")
    unrolled = reactant.compile(heat_static)
    jf = jax.jit(jax_heat)
    a = np.float32(0.25)
    np.testing.assert_allclose(np.asarray(kept(u0, a)), np.asarray(jf(ju, a)), rtol=1e-5, atol=1e-6)
    assert reactant.code_hlo(kept, u0, a).count("stablehlo.while") == 1
    res = measure("heat 1-D n=4096, 100 steps: steady run",
                  {"jax.jit(fori_loop)": lambda: jf(ju, a).block_until_ready(),
                   "reactant keep": lambda: kept(u0, a).block_until_ready(),
                   "reactant unrolled": lambda: unrolled(u0, a).block_until_ready()}, rounds=21)
    print_table([res], base="jax.jit(fori_loop)", title="run time versus jax.lax.fori_loop")


if __name__ == "__main__":
    main()
