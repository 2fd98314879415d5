"""The compile-scale benchmark's programs at about 10^3 traced ops: they compile at O2 with
every loop unrolled, give NumPy's (or jax.grad's) results, and report every stage."""

from __future__ import annotations

import importlib.util
import os

import jax
import numpy as np
import pytest

pytestmark = pytest.mark.slow  # thousand-op compiles: the long-form tier (REACTANT_SLOW=1)

import reactant

jax.config.update("jax_enable_x64", True)

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "bench_compile_scale.py")
_spec = importlib.util.spec_from_file_location("bench_compile_scale", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.mark.parametrize("name", bench.PROGRAMS)
def test_program_at_a_thousand_ops(name, capsys):
    reps = bench._reps(name, 1000)
    f, args = bench._np_program(name, reps)
    cf = reactant.compile(f, loops="unroll", verbose=True)
    rargs = [[reactant.to_rarray(a) for a in x] if isinstance(x, list) else reactant.to_rarray(x) for x in args]
    got = cf(*rargs)
    log = capsys.readouterr().err
    m = bench._STAGE.search(log)
    assert m is not None and m.group(1) == "trace"
    traced = int(m.group(3))
    assert 500 <= traced <= 2000, traced  # the program has the size the benchmark states
    assert "XLA compile" in log and "pass eqsat" in log
    if name in ("mlp_grad", "mlp_stacked"):
        want = bench._jax_program(name, reps)(*args)  # jax.grad of the same loss
        if name == "mlp_stacked":
            got, want = [got], [want]
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-12)
    else:
        want = f(*[a.copy() for a in args])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=1e-12)
