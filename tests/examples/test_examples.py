"""The examples run and match their references."""

import os
import runpy
import sys

import numpy as np

import reactant

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
sys.path.insert(0, EXAMPLES)


def test_quickstart_runs(capsys):
    runpy.run_path(os.path.join(EXAMPLES, "quickstart.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "assignments equal: True" in out and "compiled once: True" in out


def test_heat_equation_one_while_matches_numpy_and_jax_grad():
    import heat_equation as h

    x = np.linspace(0, 1, 64)
    u0_np = np.exp(-((x - 0.5) ** 2) / 0.01)
    u0, n = reactant.to_rarray((u0_np, np.int32(100)))
    solve = reactant.compile(h.heat)
    np.testing.assert_allclose(np.asarray(solve(u0, n, 0.25)), h.heat(u0_np, 100, 0.25), rtol=1e-12, atol=1e-12)
    text = reactant.code_hlo(solve, u0, n, 0.25)
    assert text.count("stablehlo.while") == 1
    g = reactant.compile(lambda a, k: reactant.gradient(h.loss, a, k, 0.25), ad_max_trip_count=256)(u0, n)
    np.testing.assert_allclose(np.asarray(g), h.jax_reference(u0_np, 100, 0.25), rtol=1e-10, atol=1e-12)


def test_sharded_training_matches_numpy(capsys):
    runpy.run_path(os.path.join(EXAMPLES, "sharded_training.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert out.count("parameters equal NumPy's: True") == 3 and "all equal: True" in out
