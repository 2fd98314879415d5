"""Inputs that once crashed the process (a signal: segmentation fault, abort) must raise a Python
exception instead. Each reproduction runs in a fresh interpreter, so a crash fails its test
instead of ending the test run."""

import os
import subprocess
import sys
import textwrap

import pytest


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONFAULTHANDLER="1")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300, env=env)


def _assert_raises(code: str, error: str) -> str:
    """The program ends with a Python traceback of ``error`` (not a signal); returns stderr."""
    p = _run(code)
    assert p.returncode >= 0, f"killed by signal {-p.returncode}:\n{p.stderr[-3000:]}"
    assert p.returncode != 0, f"no error raised:\n{p.stdout[-2000:]}"
    assert "Traceback (most recent call last)" in p.stderr and error in p.stderr, p.stderr[-3000:]
    return p.stderr


def test_as_strided_with_bad_strides_on_a_traced_array():
    # NumPy's as_strided built its view over the object array holding the tracer: a segfault
    err = _assert_raises("""
        import numpy as np, reactant

        @reactant.compile
        def f(x):
            return np.lib.stride_tricks.as_strided(x, (100, 3), (8, 8)).sum()

        f(reactant.to_rarray(np.arange(4.0)))
    """, "ShapeError")
    assert "outside its 4 elements" in err


def test_invalid_module_given_to_the_optimizer():
    # a function without terminator: the inline pass crashed on it
    err = _assert_raises("""
        from reactant.ir.context import parse_module
        from reactant.optimize import optimize

        m = parse_module('''
        func.func private @f(%arg0: tensor<3xf32>) -> tensor<3xf32> {
          %0 = stablehlo.add %arg0, %arg0 : tensor<3xf32>
          return %0 : tensor<3xf32>
        }
        func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
          %0 = func.call @f(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
          return %0 : tensor<3xf32>
        }''')
        m.body.operations[0].regions[0].blocks[0].operations[1].erase()  # @f's return
        optimize(m, "O2")
    """, "InvalidModuleError")
    assert "before pass 'inline'" in err and "block with no terminator" in err


def test_clip_of_complex_values_by_constants():
    # XLA turned min(max(x, c1), c2) of complex constants into a clamp and aborted
    p = _run("""
        import numpy as np, reactant

        f = reactant.compile(lambda z: np.clip(z, 0, 2))
        z = np.array([1 + 2j, 3 - 1j, -1j])
        np.testing.assert_array_equal(np.asarray(f(reactant.to_rarray(z))), np.clip(z, 0, 2))
    """)
    assert p.returncode == 0, f"returncode {p.returncode}:\n{p.stderr[-3000:]}"


def test_traced_value_kept_from_another_compiled_function():
    _assert_raises("""
        import numpy as np, reactant

        class S:
            X = None  # a class attribute: not written back (classes are not walked)

        class M:
            def fit(self, X):
                S.X = X * 2.0
                return X.sum()

            def predict(self, Y):
                return (S.X * Y).sum()

        m = M(); fit = reactant.compile(m.fit); pred = reactant.compile(m.predict)
        x = reactant.to_rarray(np.ones((3, 3))); fit(x); pred(x)
    """, "Error")


def test_equality_saturation_leaves_the_heap_sound():
    # egglog's (push)/(pop) on a cached e-graph corrupted the heap: an abort in a later compile
    # (found by the differential generator: this program at O2, a failing trace, O2 again)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = textwrap.dedent("""
        from tests.differential.runner import run_seed
        r = run_seed(60, "small", modes=["auto-O2", "keep-O2", "auto-O2", "unroll-O2"])
        assert all(o.status in ("ok", "error") for o in r.outcomes), r.outcomes
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=repo)
    assert p.returncode == 0, f"returncode {p.returncode}:\\n{p.stderr[-3000:]}"
