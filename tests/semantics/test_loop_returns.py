"""``return`` inside a ``for`` loop under a traced condition (an early exit from a search loop):
the result NumPy gives, in every loop mode and optimization level, with in-place updates made
before the return kept and those after it not made."""

from __future__ import annotations

import numpy as np
import pytest

import reactant

from .inplace_check import check

MODES = [(loops, opt) for loops in ("auto", "keep", "unroll") for opt in ("O0", "O2")]


def first_above(x):
    for i in range(6):
        if x[i % 4] > 1.5:
            return x.sum() * 2.0 + i
    return x.sum()


def first_heavy_row(A):
    for i in range(A.shape[0]):
        if A[i].sum() > 2.0:
            return A[i] * 2.0, i
    return A[0], -1


def fill_until(x, out):
    for i in range(5):
        out[i] = x[i] * 2.0
        if x[i] > 0.5:
            return out.sum()
        out[i] += 1.0
    return out.sum() - 100.0


def nested(A):
    total = A[0, 0] * 0.0
    for i in range(3):
        for j in range(3):
            total = total + A[i, j]
            if total > 1.5:
                return total, A[i, j]
    return total, A[2, 2] * 0.0


CASES = [
    (first_above, [np.array([0.1, 0.2, 1.9, 0.3])], [np.array([0.1, 0.2, 0.3, 0.4])]),
    (first_heavy_row, [np.array([[0.1, 0.2], [1.5, 1.0], [3.0, 3.0]])], [np.full((3, 2), 0.1)]),
    (fill_until, [np.array([0.1, 0.2, 0.9, 0.1, 0.1]), np.zeros(5)], [np.full(5, 0.1), np.zeros(5)]),
    (nested, [np.array([[0.2, 0.3, 0.4], [0.5, 0.6, 0.1], [0.1, 0.1, 0.1]])], [np.full((3, 3), 0.01)]),
]


@pytest.mark.parametrize("loops,optimize", MODES)
@pytest.mark.parametrize("fn,taken,not_taken", CASES, ids=[c[0].__name__ for c in CASES])
def test_return_inside_a_loop_matches_numpy(fn, taken, not_taken, loops, optimize):
    for args in (taken, not_taken):  # the return reached, and the loop running to its end
        check(fn, *args, loops=loops, optimize=optimize)


def falls_off(x):
    for i in range(3):
        if x[i] > 0:
            return x[i]


def test_a_path_returning_nothing_is_a_clear_error():
    # NumPy returns an array on one path and None on the other: no single program does both
    with pytest.raises(reactant.ShapeError, match="NoneType"):
        reactant.compile(falls_off)(reactant.to_rarray(np.array([-1.0, 2.0, 3.0])))


def test_eager_gives_numpy_answer():
    x = np.array([0.1, 0.2, 1.9, 0.3])
    assert float(first_above(reactant.to_rarray(x))) == pytest.approx(first_above(x))
