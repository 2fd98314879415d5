"""The benchmarks' in-place loop kernels (update their arguments, return None) at tiny sizes with
their loops kept as ``stablehlo.while``: every argument's final state equals NumPy's running the
same function on copies; and the benchmark's checking and timing helpers do what they claim."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import reactant

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))

import harness  # noqa: E402
import inplace  # noqa: E402
import loop_kernels as LK  # noqa: E402
import raise_kernels as RK  # noqa: E402

# (module, kernel, n): small enough to compile in about a second each
CASES = [(LK, "cholesky", 6), (LK, "jacobi", 6), (LK, "lu_outer", 5),
         (RK, "fdtd_2d", 5), (RK, "histogram_loop", 4)]
# a view with a traced bound (A[i+1:, i], y[:k]) updated in place inside a kept loop: the
# update does not reach the argument yet
VIEWS = [(LK, "lu_outer_views", 5), (LK, "levinson_views", 6)]


def _check(mod, name, n):
    f = mod.INPLACE[name]
    args = mod.inplace_inputs(name, n)
    before = [a.copy() for a in args]
    want_ret, want_args = inplace.numpy_state(f, args)
    got_ret, got_args = inplace.reactant_state(reactant.compile(f, loops="keep"), args)
    for a, b in zip(args, before):  # the inputs themselves are never touched
        np.testing.assert_array_equal(a, b)
    assert want_ret is None and got_ret is None
    assert any(not np.array_equal(w, b) for w, b in zip(want_args, before))  # the kernel updates something
    for g, w in zip(got_args, want_args):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    assert inplace.differences((want_ret, want_args), (got_ret, got_args)) == []


@pytest.mark.parametrize("mod, name, n", CASES, ids=[c[1] for c in CASES])
def test_inplace_kernel_matches_numpy_in_every_argument(mod, name, n):
    _check(mod, name, n)


@pytest.mark.parametrize("mod, name, n", VIEWS, ids=[c[1] for c in VIEWS])
def test_inplace_kernel_through_traced_bound_views(mod, name, n):
    _check(mod, name, n)


def test_differences_names_the_argument_that_differs():
    want = (None, [np.zeros(3), np.ones(2)])
    assert inplace.differences(want, (None, [np.zeros(3), np.ones(2)])) == []
    bad = inplace.differences(want, (None, [np.zeros(3), np.array([1.0, 2.0])]))
    assert len(bad) == 1 and bad[0].startswith("argument 1: 1 of 2 elements differ")
    assert inplace.differences(want, (np.zeros(3), want[1])) == ["returns ndarray, NumPy returns None"]


def test_fresh_timing_starts_every_call_from_new_inputs():
    made, seen = [], []

    def setup():
        made.append(np.zeros(2))
        return made[-1]

    def run(x):
        seen.append(float(x.sum()))
        x += 1.0

    res = harness.measure("fresh", {"a": harness.Fresh(setup, run), "b": lambda: None}, rounds=3, inner=2, warmup=1)
    assert len(res.times["a"]) == 3
    assert len(made) == len(seen) == 1 + 3 * 2 and seen == [0.0] * len(seen)


def test_loop_decisions_summarized_per_line():
    small = "reactant: f: loop at k.py:14 (range(0, 3, 1): 3 iterations): unrolled: 3 x 4 ops is below 1000 unrolled ops"
    log = "\n".join(["reactant: f: loop at k.py:12 (range(0, 9, 1): 9 iterations): kept as stablehlo.while (9 x 5 ops)",
                     small, small, "reactant: f: pass cse 1.0 ms, 10 -> 9 ops"])
    assert inplace.loop_decisions(log) == "12:kept 14:unrolled:small x2"
    assert inplace.loop_decisions("") == "-"
