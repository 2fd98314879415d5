"""Traced values kept beyond their trace (or loop body / branch) raise a clear error naming
where they were made and where they are used, instead of crashing or giving invalid IR; loops
whose variables change what they refer to are unrolled (loops="auto") or refused clearly."""


import numpy as np
import pytest

import reactant
from reactant import EscapedTracerError, NonUniformLoopError
from .inplace_check import check


class Model:
    def fit(self, X):
        self.X = X * 2.0  # a traced value kept on the object: the call leaves its value there
        return X.sum()

    def predict(self, Y):
        return (self.X * Y).sum()


def test_value_kept_on_the_object_is_read_by_another_compiled_function():
    m, ref = Model(), Model()
    x = np.arange(9.0).reshape(3, 3)
    reactant.compile(m.fit)(reactant.to_rarray(x))
    ref.fit(x)
    np.testing.assert_allclose(np.asarray(m.X), ref.X)
    got = reactant.compile(m.predict)(reactant.to_rarray(x))
    assert float(got) == pytest.approx(ref.predict(x))


class Stash:
    X = None  # a class attribute: not state the trace writes back (classes are not walked)


class ClassStash:
    def fit(self, X):
        Stash.X = X * 2.0
        return X.sum()

    def predict(self, Y):
        return (Stash.X * Y).sum()


def test_tracer_kept_where_the_state_is_not_written_back_then_used():
    m = ClassStash()
    x = reactant.to_rarray(np.ones((3, 3)))
    reactant.compile(m.fit)(x)
    with pytest.raises(EscapedTracerError, match=r"made at .*test_escapes.py:\d+") as e:
        reactant.compile(m.predict)(x)
    assert "after the trace of ClassStash.fit ended" in str(e.value)
    assert "return (Stash.X * Y).sum()" in str(e.value)  # the line where it is used
    with pytest.raises(EscapedTracerError):
        np.asarray(Stash.X + 1)  # eagerly, too


def list_in_traced_while(x):
    acc = []
    k = x[0] * 0
    while k < 3:
        acc.append(k * 2)
        k = k + 1
    return np.stack(acc)


def list_in_traced_if(x):
    acc = []
    if x[0] > 0:
        acc.append(x * 2)
    else:
        acc.append(x * 3)
    return np.stack(acc)


@pytest.mark.parametrize("fn", [list_in_traced_while, list_in_traced_if])
def test_values_kept_from_a_traced_body_are_a_clear_error(fn):
    with pytest.raises(EscapedTracerError, match="np.stack"):
        reactant.compile(fn)(reactant.to_rarray(np.ones(3)))


def write_then_rebind(x):
    y = x * 1.0
    for i in range(40):
        y[0] = y[0] + 1.0  # the first iteration writes the array y held before the loop
        y = y * 0.5
    return y


def test_loop_variable_written_then_rebound_is_unrolled_in_auto_mode():
    check(write_then_rebind, np.arange(4.0), loops="auto")
    check(write_then_rebind, np.arange(4.0), loops="unroll")


def test_loop_variable_written_then_rebound_is_refused_when_kept():
    with pytest.raises(NonUniformLoopError, match="both updated in place and reassigned"):
        reactant.compile(write_then_rebind, loops="keep")(reactant.to_rarray(np.arange(4.0)))


def argument_written_then_rebound(x):
    for i in range(40):
        x[0] = x[0] + 1.0
        x = x * 0.5
    return x


def test_argument_written_then_rebound_matches_numpy_when_auto():
    check(argument_written_then_rebound, np.arange(4.0), loops="auto")


def rebind_to_outer(x, z):
    y = x
    for i in range(40):
        y = z  # after the loop y is z itself
        z[0] = z[0] + 1.0
    y[1] = -5.0
    return y


def test_loop_variable_bound_to_an_outer_array():
    check(rebind_to_outer, np.arange(4.0), np.arange(4.0) + 10, loops="auto")
    with pytest.raises(NonUniformLoopError):
        reactant.compile(rebind_to_outer, loops="keep")(reactant.to_rarray(np.arange(4.0)),
                                                        reactant.to_rarray(np.arange(4.0)))


def conditional_alias(x, z):
    if x[0] > 0:
        y = x
    else:
        y = z
    y[1] = -5.0  # NumPy writes x or z depending on the condition


def test_write_through_a_conditional_alias_is_refused():
    with pytest.raises(reactant.ReactantError, match="depends on the condition"):
        reactant.compile(conditional_alias)(reactant.to_rarray(np.ones(3)), reactant.to_rarray(np.ones(3)))


def conditional_new_array(x):
    y = x * 1.0
    if x[0] > 0:
        y = y * 2.0
    y[1] = -5.0  # the old y is gone: nobody else can see the write
    return y


def test_write_after_a_conditional_rebinding_of_a_temporary():
    check(conditional_new_array, np.ones(3))
    check(conditional_new_array, -np.ones(3))


def _fails_when_index_is_traced(i):
    if isinstance(i, reactant.TracedRArray):
        raise RuntimeError("a bug that only shows when the loop is staged")
    return 1.0


def loop_with_a_staging_bug(x):
    for i in range(60):
        x = x * 1.01 + _fails_when_index_is_traced(i) * np.sin(x)
    return x


def test_a_failure_while_staging_a_loop_is_not_hidden_by_unrolling():
    # only the failures that call for unrolling (the body needs a Python int, aliasing that
    # changes between iterations, our own errors) unroll; anything else is reported as is
    with pytest.raises(RuntimeError, match="only shows when the loop is staged"):
        reactant.compile(loop_with_a_staging_bug)(reactant.to_rarray(np.ones(3)))


def loop_needing_a_python_int(x):
    out = x * 0.0
    for i in range(60):
        out[i % 3] += np.ones(i + 1).sum()  # np.ones needs a Python int: unrolled
    return out


def test_a_body_needing_the_index_as_a_python_int_is_unrolled():
    check(loop_needing_a_python_int, np.ones(3))


class _Smoother:
    def __init__(self, n):
        self.value = np.zeros(n)
        self.seen = None

    def update(self, x):
        self.value = 0.9 * self.value + 0.1 * x
        self.seen = self.value  # the body keeps the array it made: the loop is unrolled
        return self.value


def test_a_trace_collects_only_what_it_made_and_leaves_the_heap_as_it_was():
    import gc

    observed = []

    def f(sig):
        s = _Smoother(sig.shape[1])
        out = np.empty_like(sig)
        for t in range(sig.shape[0]):
            out[t] = s.update(sig[t])
        observed.append(gc.get_freeze_count())
        return out

    sig = np.random.default_rng(0).standard_normal((20, 4))
    before = gc.get_freeze_count()
    got = reactant.compile(f)(reactant.to_rarray(sig))
    # what existed before the trace was out of the collector's way during it, and is back after
    assert before == 0 and observed and observed[0] > 1000 and gc.get_freeze_count() == 0
    observed.clear()
    np.testing.assert_allclose(np.asarray(got), f(sig), rtol=1e-12)
    # a heap the program froze itself stays frozen, as much as it was
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        reactant.compile(f)(reactant.to_rarray(sig * 2.0))
        assert frozen - 100 < gc.get_freeze_count() <= frozen  # (less: some freed by reference counts)
    finally:
        gc.unfreeze()


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="fork")
@pytest.mark.filterwarnings("ignore:os.fork")  # (the child runs nothing of jax's)
def test_a_child_forked_during_a_trace_has_its_heap_thawed():
    import gc
    import os

    from reactant.tracing import escape

    r, w = os.pipe()
    with escape.heap_frozen():
        assert gc.get_freeze_count() > 0
        pid = os.fork()
        if pid == 0:  # (the child reports and leaves without running anything else)
            os.write(w, f"{gc.get_freeze_count()} {escape._FREEZE['depth']}".encode())
            os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(r, 64).decode() == "0 0" and gc.get_freeze_count() == 0
    os.close(r)
    os.close(w)
