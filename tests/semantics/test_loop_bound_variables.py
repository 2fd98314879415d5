"""Variables first assigned inside a loop and read after it, as Python binds them: by the
loop's iterations (a constant range runs at least once: the value of the last one), or, when
nothing tells at trace time whether the body runs (a traced condition or traced bounds), the
clear error naming the variable and the loop, never a placeholder returned as a result.
Written as NumPy users write them, in every loop mode and optimization level."""

import numpy as np
import pytest

import reactant

from .inplace_check import MODES, check


def last_labels(X, C):  # k-means' labels: assigned in every step, returned after the loop
    C = C.copy()
    for _ in range(3):
        d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
        labels = d.argmin(axis=1)
        C = 0.5 * C + 0.5 * X[:3]
    return C, labels


def running_state_written_in_place(x, out):  # the argument updated in place, a value kept
    for i in range(4):
        scaled = x * (i + 1)
        out += scaled
    out[0] = scaled.sum()


def single_iteration(x):  # one iteration: the first is the last
    for i in range(1):
        y = x * 3.0 + i
    return y


def assigned_in_a_nested_loop(A):  # bound by the inner loop of the last outer iteration
    for i in range(2):
        for j in range(3):
            last = A[j] * (i + 1)
    return last


CASES = {
    "last_labels": (last_labels, lambda r: (r.standard_normal((12, 2)), r.standard_normal((3, 2)))),
    "running_state_written_in_place": (running_state_written_in_place,
                                       lambda r: (r.standard_normal(5), np.zeros(5))),
    "single_iteration": (single_iteration, lambda r: (r.standard_normal(4),)),
    "assigned_in_a_nested_loop": (assigned_in_a_nested_loop, lambda r: (r.standard_normal((3, 4)),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("loops,level", MODES)
def test_bound_by_the_loop_as_in_numpy(name, loops, level):
    fn, make = CASES[name]
    check(fn, *make(np.random.default_rng(0)), loops=loops, optimize=level)


def traced_while(x):
    while np.sum(x) < 10.0:
        x = x * 2.0
        y = x + 1.0
    return y


def traced_bounds(x, n):
    for i in range(n):
        y = x * i
    return x, {"y": y}


@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
def test_unknown_whether_the_body_runs_is_a_clear_error(loops):
    x = reactant.to_rarray(np.ones(3))
    for fn, args in ((traced_while, (x,)), (traced_bounds, (x, reactant.to_rarray(np.array(3))))):
        with pytest.raises(reactant.ReactantError) as e:
            reactant.compile(fn, loops=loops)(*args)
        msg = str(e.value)
        assert "variable 'y' is undefined" in msg and "test_loop_bound_variables.py" in msg, msg
        # the loop's line is named (the while's or the for's)
        src = fn.__code__.co_firstlineno + 1
        assert f"test_loop_bound_variables.py:{src}" in msg, msg


def read_before_bound_caught(x):  # Python's NameError caught: the first iteration binds it
    for i in range(3):
        try:
            y = y + 1.0  # noqa: F821
        except Exception:
            y = x * 2.0
    return y


@pytest.mark.parametrize("loops,level", MODES)
def test_a_read_of_the_unbound_variable_is_never_a_zero(loops, level):
    # a kept loop carries a first-assigned variable from zeros only when its body never read
    # it unbound (here the read's error is caught by the body): NumPy's value or the error
    x = np.ones(3)
    try:
        check(read_before_bound_caught, x, loops=loops, optimize=level)
    except reactant.ReactantError as e:
        assert loops == "keep" and "variable 'y' is undefined" in str(e), e


def test_a_kept_loop_changing_python_state_names_the_users_loop():
    # (the error names the loop of the user's source, not reactant's own code)
    seen = []

    def f(x, out):
        for i in range(reactant.keep(4)):
            seen.append(i)
            y = x[i] * 2.0
            out[i] = y
        return y

    with pytest.raises(reactant.ReactantError) as e:
        reactant.compile(f)(reactant.to_rarray(np.ones(4)), reactant.to_rarray(np.zeros(4)))
    msg = str(e.value)
    assert "test_loop_bound_variables.py" in msg.splitlines()[0] and "autograph" not in msg, msg
