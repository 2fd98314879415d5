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


# -- attributes rebound to arrays in a loop: carried like variables --------------------------------
class EMA:  # (benchmarks/kernels' updates its value in place; this one rebinds it)
    def __init__(self, alpha, n):
        self.alpha, self.value, self.started = alpha, np.zeros(n), False

    def update(self, x):
        if self.started:
            self.value = (1 - self.alpha) * self.value + self.alpha * x
        else:  # a plain flag set by the first iteration only
            self.value, self.started = np.array(x), True
        return self.value


def ema_rows(signal, out):
    ema = EMA(0.1, signal.shape[1])
    for t in range(signal.shape[0]):
        out[t] = ema.update(signal[t])
    return ema.value.sum()


class Momentum:
    def __init__(self, lr, beta):
        self.lr, self.beta, self.velocity = lr, beta, 0.0

    def step(self, w, g):
        self.velocity = self.beta * self.velocity + g  # rebound to a new array each step
        return w - self.lr * self.velocity


def descend(w, A, b):
    opt = Momentum(0.01, 0.9)
    for _ in range(300):
        w = opt.step(w, A.T @ (A @ w - b))
    return w, opt.velocity


@pytest.mark.parametrize("loops,optimize", MODES)
def test_objects_keeping_arrays_in_attributes_across_a_loop_match_numpy(loops, optimize):
    rng = np.random.default_rng(8)
    A = rng.standard_normal((12, 4))
    cases = [(ema_rows, (np.cumsum(rng.standard_normal((64, 5)), axis=0), np.zeros((64, 5))), "ema.update"),
             (descend, (np.zeros(4), A, A @ rng.standard_normal(4)), "self.velocity = ")]
    for fn, args, line in cases:
        if loops == "keep":  # a forced loop traces its body once: a clear error naming the line
            with pytest.raises(reactant.ReactantError, match=line):
                reactant.compile(fn, loops=loops, optimize=optimize)(*[reactant.to_rarray(a) for a in args])
        else:
            check(fn, *args, loops=loops, optimize=optimize)


def test_attributes_rebound_to_arrays_are_carried_by_the_kept_loop(capsys):
    rng = np.random.default_rng(9)
    A = rng.standard_normal((12, 4))
    for fn, args in ((ema_rows, (np.cumsum(rng.standard_normal((64, 5)), axis=0), np.zeros((64, 5)))),
                     (descend, (np.zeros(4), A, A @ rng.standard_normal(4)))):
        reactant.compile(fn, verbose=True)(*[reactant.to_rarray(a) for a in args])
        dec = [line for line in capsys.readouterr().err.splitlines() if ": loop at " in line]
        assert len(dec) == 1 and "kept as stablehlo.while" in dec[0] and "carrying" in dec[0], dec


class Model:
    def __init__(self):
        self.h = np.zeros(3)
        self.steps = 0

    def run(self, xs):
        for x in xs:
            self.h = np.tanh(self.h * 0.5 + x)
            self.steps += 1  # a counter: the loop is unrolled, NumPy's answer
        return self.h


@pytest.mark.parametrize("loops", ["auto", "unroll"])
def test_an_object_state_and_a_counter_after_a_loop_match_numpy(loops):
    xs = np.random.default_rng(10).standard_normal((30, 3))
    ref, dev = Model(), Model()
    want = ref.run(xs)
    got = reactant.compile(dev.run, loops=loops)(reactant.to_rarray(xs))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(dev.h), ref.h, rtol=1e-12)
    assert dev.steps == ref.steps == 30


TICKS = 0


def ticking(x):
    global TICKS
    for i in range(reactant.keep(20)):
        TICKS += 1
        x = x * 0.5 + i
    return x


def ticking_if(x):
    global TICKS
    if x.sum() > 0:
        TICKS += 1
    return x * 2.0


@pytest.mark.parametrize("fn", [ticking, ticking_if])
def test_a_global_rebound_in_a_traced_region_is_a_clear_error_and_put_back(fn):
    global TICKS
    TICKS = 5
    with pytest.raises(ConcretizationError, match="change Python state|changes Python state"):
        reactant.compile(fn)(reactant.to_rarray(np.ones(3)))
    assert TICKS == 5
