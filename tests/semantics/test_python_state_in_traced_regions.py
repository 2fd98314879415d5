"""Plain Python values (a counter, a list of floats, a flag) changed by code a traced region
runs, often inside a method it calls: a region traced once changes them once. A loop that can
be unrolled is unrolled (NumPy's answer); a loop or an if that cannot gives a clear error
naming the line, and leaves the objects as they were."""

from __future__ import annotations

import numpy as np
import pytest

import reactant
from reactant.tracing.errors import ConcretizationError

from .inplace_check import MODES, check


class Counter:
    def __init__(self):
        self.n = 0
        self.seen = []

    def step(self, x):
        self.n += 1
        self.seen.append(float(self.n))
        return x * 0.5 + 1.0


def count_steps(x):
    c = Counter()
    for _ in range(1200):  # large: tried as a while first
        x = c.step(x)
    return x, np.float64(c.n), np.float64(sum(c.seen))


class Smoother:
    def __init__(self):
        self.calls = 0

    def __call__(self, row):
        self.calls += 1
        return row * 0.9


def smooth_rows(A):  # rows of an argument updated in place, a Python counter in the method
    s = Smoother()
    for i in range(A.shape[0]):
        A[i] = s(A[i])
    A[0, 0] = s.calls


@pytest.mark.parametrize("loops,optimize", [m for m in MODES if m[0] != "keep"])
def test_a_python_counter_in_a_method_called_by_a_loop_matches_numpy(loops, optimize):
    check(count_steps, np.ones(3), loops=loops, optimize=optimize)
    check(smooth_rows, np.random.default_rng(5).standard_normal((40, 3)), loops=loops, optimize=optimize)


GLOBAL = Counter()


def step_global(x):
    for _ in range(reactant.keep(50)):
        x = GLOBAL.step(x)
    return x


def branch_global(x):
    if x.sum() > 0:  # traced: one branch runs
        x = GLOBAL.step(x)
    return x


def while_global(x):
    while x.sum() < 100.0:  # traced condition
        x = GLOBAL.step(x) * 3.0
    return x


@pytest.mark.parametrize("fn,line", [(step_global, "x = GLOBAL.step(x)\n"), (branch_global, "x = GLOBAL.step(x)\n"),
                                     (while_global, "x = GLOBAL.step(x) * 3.0")])
def test_a_region_that_cannot_unroll_and_changes_python_state_is_a_clear_error(fn, line):
    GLOBAL.n, GLOBAL.seen = 7, [1.0]
    with pytest.raises(ConcretizationError, match="changes Python state") as e:
        reactant.compile(fn)(reactant.to_rarray(np.ones(3)))
    assert "test_python_state_in_traced_regions.py" in str(e.value) and line in str(e.value) + "\n"
    assert GLOBAL.n == 7 and GLOBAL.seen == [1.0]  # as they were


def local_counter_in_a_branch(x):
    c = Counter()
    if x.sum() > 0:
        x = c.step(x)
    return x, np.float64(c.n)


def test_a_local_object_changed_in_a_traced_branch_is_a_clear_error():
    with pytest.raises(ConcretizationError, match="a branch of the if at .* changes Python state [(]attribute 'n' of "
                       "a Counter was rebound"):
        reactant.compile(local_counter_in_a_branch)(reactant.to_rarray(np.ones(3)))


def test_a_counter_in_a_kept_loop_is_a_clear_error_in_keep_mode():
    with pytest.raises(ConcretizationError, match="unroll the loop"):
        reactant.compile(count_steps, loops="keep")(reactant.to_rarray(np.ones(3)))
