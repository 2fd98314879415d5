"""Python state bound to traced values by a compiled function (``self.total = ...``,
``self.h.append(h)``, a tuple of arrays, a dict item, a global): after every call the state holds
what NumPy's run leaves there (as device arrays), compared with NumPy over several calls."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import reactant

MODES = [(loops, opt) for loops in ("auto", "keep", "unroll") for opt in ("O0", "O2")]


def _close(a, b) -> None:
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-12, atol=1e-12)


class Decay:
    def __init__(self):
        self.total = np.zeros(3)

    def step(self, x):
        self.total = 0.9 * self.total + x
        return self.total.sum()


class DecayLoop(Decay):
    def step(self, x):
        self.total = 0.9 * self.total + x
        for i in range(3):  # rebinding in a loop: unrolled in auto mode
            self.total = self.total + x[i] * 0.01
        return self.total.sum()


XS = [np.array([1.0, 2.0, 3.0]) * k for k in (1.0, -0.5, 2.0, 0.25, 3.0)]


@pytest.mark.parametrize("loops,optimize", MODES)
def test_an_attribute_rebound_every_call_matches_numpy_and_runs_from_the_cache(loops, optimize):
    ref, dev = Decay(), Decay()
    step = reactant.compile(dev.step, loops=loops, optimize=optimize)
    for x in XS:
        want = ref.step(x)
        got = step(reactant.to_rarray(x))
        assert float(got) == pytest.approx(want, rel=1e-12)
        _close(ref.total, dev.total)
    # the first call read a NumPy array, the second the device array the first left; from then
    # on the guard follows the array each call writes
    assert step.compile_count == 2


@pytest.mark.parametrize("loops", ["auto", "unroll", "keep"])
def test_an_attribute_rebound_in_a_loop(loops):
    ref, dev = DecayLoop(), DecayLoop()
    step = reactant.compile(dev.step, loops=loops)
    if loops == "keep":  # a kept loop carries variables, not attributes: a clear error
        with pytest.raises(reactant.EscapedTracerError, match="carry values out of loops in variables"):
            step(reactant.to_rarray(XS[0]))
        return
    for x in XS:
        assert float(step(reactant.to_rarray(x))) == pytest.approx(ref.step(x), rel=1e-12)
        _close(ref.total, dev.total)


class Branchy(Decay):
    def __init__(self):
        super().__init__()
        self.flag = False
        self.n = 0.0

    def step(self, x):
        self.total = self.total + x
        if x[0] > 1.5:  # a traced if rebinding attributes: carried like variables
            self.total = self.total * 0.5
            self.flag = True
            self.n = self.n + 1.0
        else:
            self.flag = True
        return self.total.sum()


@pytest.mark.parametrize("loops,optimize", MODES)
def test_attributes_rebound_in_a_traced_if_match_numpy(loops, optimize):
    ref, dev = Branchy(), Branchy()
    step = reactant.compile(dev.step, loops=loops, optimize=optimize)
    for x in XS:  # both branches taken
        assert float(step(reactant.to_rarray(x))) == pytest.approx(ref.step(x), rel=1e-12)
        _close(ref.total, dev.total)
        assert bool(dev.flag) is True
        _close(ref.n, dev.n)


class EarlyReturn(Decay):
    def step(self, x):
        if x[0] > 1.5:
            return x.sum() * 0.0
        self.total = 0.9 * self.total + x  # (after lowering: inside the traced if's else)
        return self.total.sum()


def test_state_rebound_after_a_traced_early_return():
    ref, dev = EarlyReturn(), EarlyReturn()
    step = reactant.compile(dev.step)
    for x in XS:
        assert float(step(reactant.to_rarray(x))) == pytest.approx(ref.step(x), rel=1e-12)
        _close(ref.total, dev.total)


def test_an_attribute_set_in_one_branch_only_is_a_clear_error_and_left_unset():
    class OneSided:
        def step(self, x):
            if x[0] > 1.5:
                self.seen = x * 2.0
            return x.sum()

    m = OneSided()
    with pytest.raises(reactant.ReactantError, match="attribute 'seen' is assigned only in one branch"):
        reactant.compile(m.step)(reactant.to_rarray(XS[0]))
    assert not hasattr(m, "seen")


def test_the_old_value_held_elsewhere_keeps_its_value():
    class Hist:
        def __init__(self):
            self.total = np.zeros(2)
            self.prev = []

        def step(self, x):
            old = self.total
            self.total = old + x
            self.prev.append(old)  # the old array, stored: a cached call would not store it
            return self.total.sum()

    ref, dev = Hist(), Hist()
    step = reactant.compile(dev.step)
    for k in range(4):
        x = np.array([1.0, 2.0]) * (k + 1)
        assert float(step(reactant.to_rarray(x))) == pytest.approx(ref.step(x))
        held = dev.total
        assert len(dev.prev) == len(ref.prev)
        for a, b in zip(ref.prev, dev.prev):
            _close(a, b)
        _close(ref.total, held)


def test_a_reference_taken_between_calls_is_not_changed_by_the_next_call():
    dev, ref = Decay(), Decay()
    step = reactant.compile(dev.step)
    step(reactant.to_rarray(XS[0]))
    step(reactant.to_rarray(XS[1]))
    ref.step(XS[0])
    ref.step(XS[1])
    kept = dev.total  # NumPy: rebinding self.total does not change this array
    want = np.array(ref.total)
    step(reactant.to_rarray(XS[2]))
    _close(want, kept)


class Cell:
    def __init__(self, h0):
        self.h = [h0]

    def step(self, x):
        h = np.tanh(self.h[-1] + x)
        self.h.append(h)
        return h


@pytest.mark.parametrize("optimize", ["O0", "O2"])
def test_the_issue_cell_appends_a_new_state_per_call(optimize):
    ref, dev = Cell(np.zeros(3)), Cell(np.zeros(3))
    step = reactant.compile(dev.step, optimize=optimize)
    x = np.array([0.5, 1.0, -1.0])
    for _ in range(3):
        _close(ref.step(x), step(reactant.to_rarray(x)))
    assert len(dev.h) == 4
    for a, b in zip(ref.h, dev.h):
        _close(a, b)


class Pair:
    def __init__(self):
        self.state = (np.zeros(2), np.ones(2))
        self.last = None
        self.grads = {"W": np.zeros(2), "b": 0.0}

    def step(self, x):
        a, b = self.state
        self.state = (a + x, b * 2.0)  # a tuple of new arrays
        self.last = a  # the old one
        self.grads["W"] = x * a.sum()  # a dict item
        self.grads["b"] = x.sum()
        return a.sum()


def test_tuples_dict_items_and_old_values_match_numpy():
    ref, dev = Pair(), Pair()
    step = reactant.compile(dev.step)
    for k in range(4):
        x = np.array([1.0, 2.0]) * (k + 1)
        assert float(step(reactant.to_rarray(x))) == pytest.approx(ref.step(x))
        assert type(dev.state) is tuple and len(dev.state) == 2
        for a, b in zip(ref.state, dev.state):
            _close(a, b)
        _close(ref.last, dev.last)
        _close(ref.grads["W"], dev.grads["W"])
        _close(ref.grads["b"], dev.grads["b"])


LAST = None


def _remember(x):
    global LAST
    y = x * 2.0
    LAST = y
    return y.sum()


def test_a_global_rebound_by_the_compiled_function():
    global LAST
    LAST = None
    f = reactant.compile(_remember)
    for k in range(3):
        x = np.arange(3.0) + k
        assert float(f(reactant.to_rarray(x))) == pytest.approx((x * 2).sum())
        _close(x * 2.0, LAST)


def test_process_exit_waits_for_a_dropped_speculative_compile(tmp_path):
    # a state rebound to a tuple traces again at every call; the same program's executable is
    # reused while a speculative compile of it still runs: exiting then aborted the process
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import numpy as np, reactant

        class P:
            def __init__(self):
                self.state = (np.zeros(2), np.ones(2))

            def step(self, x):
                a, b = self.state
                self.state = (a + x, b * 2)
                return a.sum()

        p = P()
        g = reactant.compile(p.step, optimize="O2")
        for k in range(3):
            g(reactant.to_rarray(np.array([1.0, 2.0]) * k))
        print("done")
    """))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().endswith("done")
