"""Calls of user functions inside a trace: a helper is traced once and replayed (``func.call``)
only when replaying it is NumPy's answer. A method reads its object's state, a function may read
a global list or append to one: replaying their first trace froze that state or skipped the
effect (found by hand while hunting the differential generator's crashes)."""

from __future__ import annotations

import numpy as np
import pytest

import reactant

from .inplace_check import MODES, check


class Lin:
    def __init__(self, W):
        self.W = W

    def fwd(self, x):
        return x @ self.W


def method_reads_changed_attribute(x, W):
    m = Lin(W)
    y1 = m.fwd(x)
    m.W = m.W * 2.0  # the second call must see the new weights
    y2 = m.fwd(x)
    return y1.sum() + y2.sum()


SCALE = [1.0]


def _scaled(x):
    return x * SCALE[0]


def function_reads_changed_global_list(x, W):
    a = _scaled(x)
    SCALE[0] = 3.0
    b = _scaled(x)
    SCALE[0] = 1.0
    return a.sum() + b.sum()


class Acc:
    def __init__(self):
        self.items = []

    def add(self, v):
        self.items.append(np.tanh(v) * 2.0)
        return v * 1.0


def method_appends_to_its_state(x, W):
    a = Acc()
    y = a.add(x) + a.add(x + 1.0)
    return y.sum() + a.items[0].sum() + a.items[1].sum()


LOG: list = []


def _log(v):
    LOG.append(v.sum())
    return v


def _pure_calling_impure(v):
    w = v * 2.0
    return _log(w) + 1.0


def pure_helper_calls_an_impure_one(x, W):
    LOG.clear()
    y = _pure_calling_impure(x) + _pure_calling_impure(x + 1.0)
    total = y.sum() + LOG[0] + LOG[1] + len(LOG)
    LOG.clear()
    return total


def _push(stack, v):
    stack.append(np.tanh(v) * 2.0)
    return v


def helper_appends_to_a_list_argument(x, W):
    s = []
    for k in range(3):
        _push(s, x + k)
    return np.array(s).sum()


def _affine(v, w):
    return np.tanh(v @ w) + 1.0


def pure_helper_many_calls(x, W):
    return _affine(x, W).sum() + _affine(x + 1.0, W).sum() + _affine(x - 1.0, W * 0.5).sum()


CASES = [method_reads_changed_attribute, function_reads_changed_global_list, method_appends_to_its_state,
         pure_helper_calls_an_impure_one, helper_appends_to_a_list_argument, pure_helper_many_calls]
X, W = np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 1.5, 12).reshape(4, 3)


@pytest.mark.parametrize("loops,optimize", MODES[::4] + [("auto", "O2")])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_helper_calls_give_numpy_answer(fn, loops, optimize):
    if fn is helper_appends_to_a_list_argument and loops == "keep":
        # a forced loop runs its body once: the list cannot hold one value per iteration
        with pytest.raises(reactant.EscapedTracerError, match="after the loop body"):
            check(fn, X, W, loops=loops, optimize=optimize)
        return
    check(fn, X, W, loops=loops, optimize=optimize)


def test_a_pure_helper_is_still_traced_once():
    # its three calls with one signature... two signatures (W, W * 0.5 have one): one private
    # function per signature, called three times
    text = reactant.compile(pure_helper_many_calls).lower(
        reactant.to_rarray(X), reactant.to_rarray(W), optimize=False).text()
    assert text.count("call @") == 3, text
    assert text.count("func.func private") == 1, text


def test_values_of_an_undone_loop_attempt_are_errors_not_crashes():
    # a kept loop traced twice (the first attempt finds that ``s`` must be carried as a new array
    # each iteration): the list holds a value of each attempt; every one must be an escaped
    # tracer (reading the erased attempt's value corrupted the heap, crashing later compiles)
    kept = []

    def f(x):
        s = x[0]
        for i in range(reactant.keep(3)):
            kept.append(x * 2.0)
            s = s + x[i]
        return s

    # (appending to a list in a traced loop is itself refused: the list would get one value;
    # the error leaves the list as it was)
    kept.append("before")
    with pytest.raises(reactant.ConcretizationError, match="changes Python state"):
        reactant.compile(f)(reactant.to_rarray(X))
    assert kept[0] == "before"
    for v in kept[1:]:
        assert type(v).__name__ == "EscapedTracer"
        with pytest.raises(reactant.EscapedTracerError, match="after the loop body"):
            np.asarray(v) + 1
