"""The benchmark corpus (benchmarks/corpus: StableHLO modules lowered by JAX, written by
make_corpus.py): random inputs
for a module's @main, compiling module text with the PJRT CPU client, running it, and
comparing results."""

from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.join(HERE, "corpus")


def random_inputs(module, rng):
    """Random arguments for ``@main``: normal floats, random bools, ints in [0, 1000)."""
    from reactant.ir.context import main_arg_specs

    args = []
    for shape, dt in main_arg_specs(module):
        if dt.kind == "f":
            args.append(rng.standard_normal(shape).astype(dt))
        elif dt == np.bool_:
            args.append(rng.integers(0, 2, shape).astype(np.bool_))
        else:
            args.append(rng.integers(0, 1000, shape).astype(dt))
    return args


def compile_text(text: str):
    import jax.extend
    import jaxlib.xla_client as xc

    backend = jax.extend.backend.get_backend()
    dev = backend.devices()[0]
    return backend.compile_and_load(text, xc.DeviceList((dev,)), xc.CompileOptions())


def run(exe, bufs):
    outs = exe.execute(bufs)
    for o in outs:
        o.block_until_ready()
    return outs


def close(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "biu":
        return bool(np.array_equal(a, b))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = max(1.0, float(np.nanmax(np.abs(a64))) if a64.size else 1.0)
    return bool(np.allclose(a64, b64, rtol=2e-3, atol=2e-4 * scale, equal_nan=True))
