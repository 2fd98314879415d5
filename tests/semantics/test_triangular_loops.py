"""Triangular loop nests (``for j in range(i + 1)``) written as NumPy users write them: arguments
updated in place, writes through views, indices that go negative and wrap (``A[i, j - 1]`` at
j = 0 is the last column). The inner counter's range comes from the outer counter's, so the
optimizer drops the wrap arithmetic only where no index can be negative."""

import numpy as np
import pytest

from .inplace_check import MODES, check


def wrapped_reads_into_out(A, out):
    n = A.shape[0]
    for i in range(n):
        for j in range(i + 1):
            out[i, j] = A[i, j - 1] + 2.0 * A[i - j, j]  # j - 1 is -1 at j = 0: A[i, -1]


def reads_behind_the_diagonal(x, out):
    n = x.shape[0]
    for i in range(n):
        for j in range(i + 2):  # j - i runs from -i to 1: negative reads wrap to the end
            out[i] += x[j - i] * (j + 1)


def cholesky_through_a_transposed_view(A):
    """Cholesky of the lower triangle, written into the upper triangle through ``A.T``."""
    n = A.shape[0]
    U = A.T
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j] - np.dot(U[:j, i], U[:j, j])
            U[j, i] = np.sqrt(s) if i == j else s / U[j, j]


def _spd(n, rng):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


@pytest.mark.parametrize("loops,optimize", MODES)
def test_wrapped_reads_in_a_triangular_nest_match_numpy(loops, optimize):
    rng = np.random.default_rng(0)
    check(wrapped_reads_into_out, rng.standard_normal((7, 7)), np.zeros((7, 7)), loops=loops, optimize=optimize)
    check(reads_behind_the_diagonal, rng.standard_normal(9), np.zeros(9), loops=loops, optimize=optimize)


@pytest.mark.parametrize("loops,optimize", MODES)
def test_cholesky_written_through_a_view_matches_numpy(loops, optimize):
    check(cholesky_through_a_transposed_view, _spd(6, np.random.default_rng(1)), loops=loops, optimize=optimize)
