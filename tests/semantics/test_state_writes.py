"""NumPy arrays held as Python state (``self.total``, a global) updated in place by a compiled
method: the same NumPy array objects end up with NumPy's values after every call."""

from __future__ import annotations

import numpy as np
import pytest

import reactant


class Model:
    def __init__(self, n):
        self.total = np.zeros(n)
        self.count = np.zeros(1)

    def step(self, x):
        self.total[1] = self.total[1] + x[0]  # a store (read before the update: guarded)
        self.total += x * 0.5  # out= the state array
        for i in range(reactant.keep(2)):  # augmented subscript store in a kept loop
            self.count[0] += x[i]
        if x[0] > 0.1:  # a store in a traced if
            self.total[0] = -1.0
        return self.total.sum() + np.sum(self.count)


INPUTS = [np.linspace(0.0, 1.0, 4), np.linspace(1.0, 0.0, 4), np.linspace(0.0, 1.0, 4) * 0.1]


@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
@pytest.mark.parametrize("optimize", ["O0", "O2"])
def test_state_arrays_updated_in_place_match_numpy(loops, optimize):
    ref, dev = Model(4), Model(4)
    total, count = dev.total, dev.count
    step = reactant.compile(dev.step, loops=loops, optimize=optimize)
    for x in INPUTS:
        want = ref.step(x.copy())
        got = step(reactant.to_rarray(x))
        assert float(got) == pytest.approx(want, rel=1e-12)
        assert dev.total is total and dev.count is count  # the same NumPy arrays, updated
        assert type(dev.total) is np.ndarray
        np.testing.assert_allclose(dev.total, ref.total, rtol=1e-12)
        np.testing.assert_allclose(dev.count, ref.count, rtol=1e-12)


ACC = np.zeros(3)
ALIAS = ACC  # a second global name of the same array: sees the update, as in NumPy


def _accumulate(x):
    ACC[:] = ACC + x
    return ALIAS.sum()


def test_a_global_state_array_and_its_global_alias():
    ACC[:] = 0.0
    f = reactant.compile(_accumulate)
    x = np.array([1.0, 2.0, 3.0])
    assert float(f(reactant.to_rarray(x))) == pytest.approx(6.0)
    assert float(f(reactant.to_rarray(x))) == pytest.approx(12.0)
    np.testing.assert_array_equal(ACC, 2 * x)
    assert ALIAS is ACC


class Aliased:
    def __init__(self):
        self.v = np.zeros(3)

    def step(self, x):
        t = self.v  # a local name of the state array, read after the update
        self.v[0] = x[0]
        return t.sum()


class ViewState:
    def __init__(self):
        self.base = np.zeros(6)
        self.v = self.base[:3]

    def step(self, x):
        self.v[0] = x[0]
        return x.sum()


@pytest.mark.parametrize("cls,match", [(Aliased, "the variable 't'"), (ViewState, "view of another NumPy array")])
def test_updates_the_trace_cannot_redirect_are_clear_errors(cls, match):
    obj = cls()
    before = {k: v.copy() for k, v in vars(obj).items()}
    with pytest.raises(reactant.ConcretizationError, match=match):
        reactant.compile(obj.step)(reactant.to_rarray(np.ones(3)))
    for k, v in vars(obj).items():  # nothing half-written, the state holds its arrays again
        assert type(v) is np.ndarray
        np.testing.assert_array_equal(v, before[k])


class Counter:
    def __init__(self):
        self.count = 0
        self.total = np.zeros(3)

    def early_return(self, x):  # the seed-21213 shape: state changed after a traced early return
        self.count += 1
        if x[0] > 0.5:
            return x.sum()
        self.count += 1
        return x.sum() * 2.0

    def kept_loop(self, x):
        for i in range(reactant.keep(3)):
            self.count += 1
        return x.sum()

    def via_helper(self, x):  # auto mode tries the loop as a loop: the effect is in a helper
        s = x[0] * 0
        for i in range(300):
            s = s + x[i % 3] * self._bump()
        return s

    def _bump(self):
        self.count += 1
        return 1.0

    def traced_state_in_branch(self, x):  # a traced update of a state array: carried, fine
        if x[0] > 0.5:
            self.total[0] = x[1]
        return x.sum()


@pytest.mark.parametrize("method", ["kept_loop", "via_helper"])
def test_python_state_changed_under_traced_control_flow_is_a_clear_error(method):
    c = Counter()
    with pytest.raises(reactant.ConcretizationError, match="change.? Python state"):
        reactant.compile(getattr(c, method))(reactant.to_rarray(np.array([1.0, 2.0, 3.0])))


def test_an_attribute_set_after_a_traced_early_return_is_carried():
    # the seed-21213 shape: self.count is 1 or 2 depending on the traced condition: after the
    # call it holds that value (a device scalar), as NumPy's run would
    ref, dev = Counter(), Counter()
    step = reactant.compile(dev.early_return)
    for x in (np.array([1.0, 2.0, 3.0]), np.array([0.0, 5.0, 1.0]), np.array([0.9, 1.0, 1.0])):
        assert float(step(reactant.to_rarray(x))) == pytest.approx(ref.early_return(x.copy()))
        assert int(dev.count) == ref.count


def test_traced_state_updates_in_a_branch_are_not_state_changes():
    ref, dev = Counter(), Counter()
    step = reactant.compile(dev.traced_state_in_branch)
    for x in (np.array([1.0, 2.0, 3.0]), np.array([0.0, 5.0, 1.0])):
        assert float(step(reactant.to_rarray(x))) == pytest.approx(ref.traced_state_in_branch(x.copy()))
        np.testing.assert_array_equal(dev.total, ref.total)


class Layer:
    """Gradients and parameters in a dict and a list, updated in place (library style)."""

    def __init__(self):
        self.grads = {"W": np.zeros(3), "b": np.zeros(1)}
        self.params = [np.ones(3)]

    def backward(self, g):
        self.grads["W"] += g * 2.0
        self.grads["b"] += g.sum()
        self.params[0] -= 0.1 * self.grads["W"]
        return self.params[0].sum()


@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
@pytest.mark.parametrize("optimize", ["O0", "O2"])
def test_state_arrays_in_dicts_and_lists_updated_in_place(loops, optimize):
    ref, dev = Layer(), Layer()
    W, params = dev.grads["W"], dev.params[0]
    step = reactant.compile(dev.backward, loops=loops, optimize=optimize)
    for g in INPUTS:
        assert float(step(reactant.to_rarray(g[:3]))) == pytest.approx(ref.backward(g[:3].copy()), rel=1e-12)
        assert dev.grads["W"] is W and dev.params[0] is params  # the same arrays, updated
        for k in ("W", "b"):
            np.testing.assert_allclose(dev.grads[k], ref.grads[k], rtol=1e-12)
        np.testing.assert_allclose(dev.params[0], ref.params[0], rtol=1e-12)
