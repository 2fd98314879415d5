"""Loop raising, measured: NumPy kernels written with Python loops (kept as ``stablehlo.while``
by the tracer), compiled three ways and timed side by side in one process (steady state,
interleaved, ``harness.measure``):

- ``raised``: the O2 pipeline (the ``raising`` family turns the loops into tensor ops);
- ``unraised``: the same O2 pipeline with the loop-to-tensor rewrites disabled
  (``while_raise``, ``while_raise_fast``): the loop runs;
- ``jax``: ``jax.jit`` of the same algorithm written with whole-array ops (``einsum``...);
- ``numpy``: the loop kernel itself, run by NumPy.

The two reactant programs run through the same PJRT call (``execute_sharded``), so their ratio
is the XLA runtime's. Usage: ``python benchmarks/bench_raise.py [n] [kernel ...]`` (default
n = 64, every kernel).
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
sys.path.insert(0, os.path.dirname(__file__))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import reactant  # noqa: E402
import reactant.optimize as ro  # noqa: E402
from reactant.ir.context import parse_module, to_text  # noqa: E402
from harness import measure, print_table  # noqa: E402
from loop_kernels import doitgen  # noqa: E402

jax.config.update("jax_enable_x64", True)

UNRAISED = frozenset({"while_raise", "while_raise_fast"})


def row_map(x, w):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = np.tanh(x[i] @ w) * 2.0 + np.sum(x[i])
    return out


def j_row_map(x, w):
    return jnp.tanh(x @ w) * 2.0 + jnp.sum(x, axis=1, keepdims=True)


def row_softmax(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        e = np.exp(x[i] - np.max(x[i]))
        out[i] = e / np.sum(e)
    return out


def j_row_softmax(x):
    e = jnp.exp(x - jnp.max(x, axis=1, keepdims=True))
    return e / jnp.sum(e, axis=1, keepdims=True)


def sum_of_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sum(x[i] * x[i])
    return s


def j_sum_of_squares(x):
    return jnp.sum(x * x)


def kernels(n: int, rng) -> dict:
    """name -> (numpy loop kernel, jax version, inputs)."""
    return {
        "doitgen": (doitgen, lambda A, C: jnp.einsum("rqs,sp->rqp", A, C),
                    (rng.standard_normal((n // 4, n // 4, n)), rng.standard_normal((n, n)))),
        "row_map": (row_map, j_row_map, (rng.standard_normal((4 * n, n)), rng.standard_normal((n, n)))),
        "row_softmax": (row_softmax, j_row_softmax, (rng.standard_normal((4 * n, n)),)),
        "sum_of_squares": (sum_of_squares, j_sum_of_squares, (rng.standard_normal((4 * n, n)),)),
    }


def _executable(text: str, disabled: frozenset):
    """The O2-optimized module of ``text`` (raising rules ``disabled``) compiled by XLA."""
    from reactant import runtime

    m = parse_module(text)
    with m.context:
        ro.run_pipeline(m, ro.pipeline("O2"), ro.PassOptions(disabled=disabled))
    out = to_text(m)
    return out, runtime.compile_module(out, [jax.devices("cpu")[0]])


def main(n: int = 64, names: list[str] | None = None) -> None:
    rng = np.random.default_rng(0)
    results = []
    dev = jax.devices("cpu")[0]
    for name, (f, jf, args) in kernels(n, rng).items():
        if names and name not in names:
            continue
        traced = reactant.compile(f, loops="keep")
        text = reactant.code_hlo(traced, *[reactant.to_rarray(a) for a in args], optimize=False)
        bufs = [jax.device_put(a, dev) for a in args]
        impls, want = {}, f(*args)
        for label, disabled in (("raised", frozenset()), ("unraised", UNRAISED)):
            mod, exe = _executable(text, disabled)
            got = np.asarray(exe.execute_sharded(bufs).disassemble_into_single_device_arrays()[0][0])
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
            print(f"{name} {label}: {'a loop' if 'stablehlo.while' in mod else 'no loop'}, "
                  f"{mod.count('stablehlo.dot_general')} dot_general", file=sys.stderr)

            def run(exe=exe):
                outs = exe.execute_sharded(bufs).disassemble_into_single_device_arrays()
                outs[0][0].block_until_ready()
            impls[label] = run
        jit = jax.jit(jf)
        np.testing.assert_allclose(np.asarray(jit(*bufs)), want, rtol=1e-9, atol=1e-9)
        impls["jax"] = lambda jit=jit: jit(*bufs).block_until_ready()
        impls["numpy"] = lambda f=f, args=args: f(*args)
        results.append(measure(f"{name} (n={n})", impls))
    print_table(results, "raised", f"steady time, raised vs unraised vs jax.jit vs NumPy (n={n})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 64, sys.argv[2:])
