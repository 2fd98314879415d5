"""The loop variable after a ``for`` loop, as Python leaves it: the last index or item; the value
it had before when the loop runs no iteration; what the body assigned to it in the last
iteration when the body rebinds it. Written as NumPy users write them (update arguments in
place, use the index after the loop), in every loop mode and optimization level."""

import numpy as np
import pytest

import reactant

from .inplace_check import MODES, check


def last_index_used_after(x, out):  # the index after the loop addresses the next write
    i = 0
    for i in range(x.shape[0] - 1):
        out[i] = x[i] * 2.0
    out[i + 1] = -1.0


def empty_range_keeps_the_target(x, out):  # range(5, 5) runs nothing: k stays 2
    k = 2
    for k in range(5, 5):
        out[k] = 100.0
    out[k] = x[k]


def body_rebinds_the_index(x, out):  # after the loop i is 2 * (n - 1), not n - 1
    i = 0
    for i in range(x.shape[0]):
        out[i] += x[i]
        i = i * 2
    out[0] = i


def body_rebinds_the_row(A, out):  # after the loop r is twice the last row
    r = A[0]
    for r in A:
        out[0] += r.sum()
        r = r * 2.0
    out[1:] = r


def inner_loop_rebinds_the_outer_index(x, out):  # after both loops i is 1 + 10
    i = 0
    for i in range(3):
        for j in range(2):
            out[i] += x[j]
            i = j + 10
    out[0] = i


def branch_rebinds_the_index(x, out):  # i is 7 where x[i] > 0, the index elsewhere
    for i in range(4):
        if x[i] > 0:
            i = 7
        out[i % 4] += 1.0
    out[0] += i


def traced_bound(x, n, out):  # n == 0 at run time: i keeps 7
    i = 7
    for i in range(n):
        out[i] = x[i]
    out[-1] = i


@pytest.mark.parametrize("loops,optimize", MODES)
def test_loop_variable_after_the_loop_matches_python(loops, optimize):
    rng = np.random.default_rng(5)
    check(last_index_used_after, rng.standard_normal(6), np.zeros(6), loops=loops, optimize=optimize)
    check(empty_range_keeps_the_target, rng.standard_normal(6), np.zeros(6), loops=loops, optimize=optimize)
    check(body_rebinds_the_index, rng.standard_normal(5), np.zeros(9), loops=loops, optimize=optimize)
    check(body_rebinds_the_row, rng.standard_normal((4, 3)), np.zeros(4), loops=loops, optimize=optimize)
    check(inner_loop_rebinds_the_outer_index, rng.standard_normal(4), np.zeros(12), loops=loops, optimize=optimize)
    check(branch_rebinds_the_index, np.array([0.5, -1.0, 2.0, 3.0]), np.zeros(4), loops=loops, optimize=optimize)
    for n in (0, 3):
        check(traced_bound, rng.standard_normal(5), np.array(n), np.zeros(5), loops=loops, optimize=optimize)


def test_a_rebound_index_first_defined_in_a_kept_loop_is_bound_by_the_loop():
    """Without a value before the loop, the rebound index after a kept loop over a constant
    range is what Python binds (the range runs at least once): its first iteration runs as it
    is, the rest stays a loop."""
    def f(x):
        for i in range(reactant.keep(4)):
            x = x + i
            i = i * 10
        return x + i

    x = np.ones(2)
    np.testing.assert_allclose(np.asarray(reactant.compile(f)(reactant.to_rarray(x))), f(x))
