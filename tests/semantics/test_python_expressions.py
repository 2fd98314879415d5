"""Python expressions on traced values, as library code writes them: ``a if c else b``,
``and``/``or``/``not`` in conditions, the builtins ``max``/``min``, and objects called like
functions (``__call__``) holding a traced ``if``: NumPy's answer in each case, or a clear error
where the answer would be one of two differently typed operands."""

from __future__ import annotations

import numpy as np
import pytest

import reactant

from .inplace_check import check

OPT = ["O0", "O2"]
XS = [np.array([1.0, -2.0, 3.0]), np.array([-1.0, 2.0, -3.0]), np.array([0.0, 0.0, 5.0])]


def ifexp(x):
    y = x * 2.0 if x.sum() > 0 else x - 1.0
    return y + (1.0 if x[0] > 0 else -1.0)


def bool_ops(x):
    if x[0] > 0 and x[1] < 0:
        x = x * 2.0
    if x[2] > 4 or not x[0] < 0:
        x = x + 1.0
    if not (x[1] > 0 and x[2] > 0 and x[0] > 0):
        x = -x
    return x


def short_circuit(x, flag=False):
    # a concrete False ends the chain before the traced operand, as in Python
    return x * 3.0 if flag and x[0] > 0 else x


def builtins_minmax(x):
    a = max(x[0], x[1])
    b = min(x[0], x[1], x[2])
    c = max(x[2], 0.0)
    return a + 10.0 * b + 100.0 * c


@pytest.mark.parametrize("optimize", OPT)
@pytest.mark.parametrize("fn", [ifexp, bool_ops, short_circuit, builtins_minmax])
def test_expressions_match_numpy(fn, optimize):
    for x in XS:
        check(fn, x, optimize=optimize)


def test_max_keeps_pythons_nan_order():
    # Python: max(nan, 1.0) is nan (1.0 > nan is False), max(1.0, nan) is 1.0
    f = reactant.compile(lambda x: (max(x[0], x[1]), max(x[1], x[0])))
    got = f(reactant.to_rarray(np.array([np.nan, 1.0])))
    want = (max(np.nan, 1.0), max(1.0, np.nan))
    assert np.isnan(float(got[0])) and np.isnan(want[0])
    assert float(got[1]) == want[1]


def test_and_of_non_bool_traced_values_is_a_clear_error():
    def f(x):
        return x[0] and x[1]  # Python: x[1] or x[0] itself, a float; not a bool

    with pytest.raises(reactant.ConcretizationError, match="not all bools"):
        reactant.compile(f)(reactant.to_rarray(np.array([1.0, 2.0])))


def test_not_of_a_traced_array_with_many_elements_is_numpys_error():
    def f(x):
        return 1.0 if not x > 0 else 2.0

    with pytest.raises(ValueError, match="ambiguous"):
        reactant.compile(f)(reactant.to_rarray(np.array([1.0, 2.0])))


class Momentum:
    """An optimizer object: ``__call__`` holds a traced if (its source is converted)."""

    def __init__(self, lr):
        self.lr = lr

    def __call__(self, w, g):
        if np.abs(g).max() > 1.0:
            g = g / np.abs(g).max()
        return w - self.lr * g


def train(w, g):
    return Momentum(0.5)(w, g)


@pytest.mark.parametrize("optimize", OPT)
def test_an_object_called_like_a_function_is_converted(optimize):
    for g in (np.array([3.0, -1.0]), np.array([0.5, 0.25])):
        check(train, np.array([1.0, 2.0]), g, optimize=optimize)


def validate(x, out):
    assert x.ndim == 1  # concrete: Python's assert
    assert np.all(np.isfinite(x)), "x must be finite"
    _check_positive(x[0])
    out[0] = x.sum()
    return x * 2.0


def _check_positive(v):
    assert v > 0, "first element must be positive"


@pytest.mark.parametrize("optimize", OPT)
def test_assert_on_traced_values_is_checked_when_the_program_runs(optimize):
    f = reactant.compile(validate, optimize=optimize)
    check(validate, np.array([1.0, 2.0, 3.0]), np.zeros(2), optimize=optimize)
    for bad, msg in ((np.array([1.0, np.nan, 3.0]), "x must be finite"),
                     (np.array([-1.0, 2.0, 3.0]), "first element must be positive")):
        out = reactant.to_rarray(np.zeros(2))
        with pytest.raises(AssertionError, match=msg) as e:
            f(reactant.to_rarray(bad), out)
        assert "test_python_expressions.py" in str(e.value)
        np.testing.assert_array_equal(np.asarray(out), np.zeros(2))  # nothing written
        with pytest.raises(AssertionError, match=msg):
            validate(bad, np.zeros(2))  # NumPy's run fails the same assert


def test_assert_inside_a_traced_if_is_a_clear_error():
    def f(x):
        if x[0] > 0:
            assert x[1] > 0
        return x

    with pytest.raises(reactant.ConcretizationError, match="assert on a traced value"):
        reactant.compile(f)(reactant.to_rarray(np.array([1.0, 2.0])))


def test_while_loop_with_a_python_int_in_the_carry():
    def f(x):
        def body(c):
            i, s = c
            return i + 1, s + x[i]
        return reactant.while_loop(lambda c: c[0] < 3, body, (0, x[0] * 0))[1]

    x = np.array([1.0, -2.0, 3.0])
    assert float(reactant.compile(f)(reactant.to_rarray(x))) == pytest.approx(f(x))
