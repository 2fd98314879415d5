"""Every module of the benchmark corpus gives the same results at O0 and at O2 (whatever O2
is when the test runs) on random inputs, compiled by XLA through PJRT.

Set ``REACTANT_CORPUS_LEVELS=O1,O2,O3`` to check more levels against O0.
"""

import os

import numpy as np
import pytest
from hlo_corpus import MODULES as NAMES
from hlo_corpus import corpus_module

from reactant.optimize import pipeline, run_pipeline
from reactant.ir.context import load, to_text
from reactant.ir.context import count_ops

MODULES = [str(corpus_module(n)) for n in NAMES]  # the twelve shared workloads, fwd and grad
LEVELS = [x for x in os.environ.get("REACTANT_CORPUS_LEVELS", "O2").split(",") if x]



def _backend():
    import jax
    import jax.extend  # noqa: F401

    b = jax.extend.backend.get_backend()
    return b, b.devices()[0]


def main_signature(module):
    from reactant.ir.context import main_arg_specs

    return main_arg_specs(module)


def random_inputs(sig, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dt in sig:
        if dt == np.bool_:
            out.append(rng.random(shape) < 0.5)
        elif dt.kind in "iu":
            out.append(rng.integers(0, 100, size=shape).astype(dt))
        else:
            out.append(rng.standard_normal(shape).astype(dt))
    return out


def run(text, inputs):
    import jax
    import jaxlib.xla_client as xc

    b, dev = _backend()
    exe = b.compile_and_load(text, xc.DeviceList((dev,)), xc.CompileOptions())
    with jax.enable_x64(True):
        bufs = [jax.device_put(x, dev) for x in inputs]
        return [np.asarray(o) for o in exe.execute(bufs)]


def assert_close(ref, got, what):
    assert len(ref) == len(got), what
    for i, (a, b) in enumerate(zip(ref, got)):
        assert a.shape == b.shape and a.dtype == b.dtype, f"{what} result {i}: {a.shape}{a.dtype} vs {b.shape}{b.dtype}"
        if a.dtype.kind == "f":
            scale = float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0)) or 1.0
            np.testing.assert_allclose(b, a, rtol=2e-3, atol=1e-4 * scale, err_msg=f"{what} result {i}")
        else:
            np.testing.assert_array_equal(b, a, err_msg=f"{what} result {i}")


def optimized(path, level):
    m = load(path)
    n0 = count_ops(m)
    run_pipeline(m, pipeline(level))
    return to_text(m), n0, count_ops(m)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("path", MODULES, ids=[os.path.basename(p)[:-5] for p in MODULES])
def test_corpus_module_same_results(path, level):
    src = to_text(load(path))
    text, n0, n1 = optimized(path, level)
    inputs = random_inputs(main_signature(load(path)))
    ref = run(src, inputs)
    got = run(text, inputs)
    assert_close(ref, got, f"{os.path.basename(path)} {level}")


def test_corpus_is_complete():
    assert len(MODULES) == 24
