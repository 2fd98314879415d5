"""Constructs of real NumPy library code on traced values: ``np.c_``/``np.r_`` (a linear model's
intercept column), indexing with a ``range``, ``np.add.at`` into a ``np.zeros`` buffer: NumPy's
answer in every loop mode."""

from __future__ import annotations

import numpy as np
import pytest

import reactant

from .inplace_check import check

MODES = [(loops, opt) for loops in ("auto", "keep", "unroll") for opt in ("O0", "O2")]


def intercept(X, w):
    Xb = np.c_[np.ones(X.shape[0]), X]  # every linear model with an intercept
    return Xb @ w


def stacked(x):
    return np.r_[x, x * 2.0, 3.0] + np.r_[np.zeros(3), x[:3], x[-1]]


def range_index(x):
    return x[range(2)] + x[range(1, 5, 2)]


def scatter_add(x, idx):
    counts = np.zeros(4)
    np.add.at(counts, idx, x)  # repeated indices accumulate
    return counts


@pytest.mark.parametrize("loops,optimize", MODES)
def test_library_constructs_match_numpy(loops, optimize):
    X = np.arange(12.0).reshape(4, 3) * 0.5
    check(intercept, X, np.array([1.0, -2.0, 0.5, 0.25]), loops=loops, optimize=optimize)
    check(stacked, np.array([1.0, 2.0, 3.0]), loops=loops, optimize=optimize)
    check(range_index, np.arange(6.0), loops=loops, optimize=optimize)
    check(scatter_add, np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([0, 0, 3, 1, 0]), loops=loops,
          optimize=optimize)


def hist_auto(x):
    counts, edges = np.histogram(x, bins=4)  # edges from the data's min and max
    return counts, edges


def inserts(x, A):
    return (np.insert(x, 1, 5.0), np.insert(x, [0, 2, 2], x[:3] * 10.0), np.insert(A, 1, 7.0, axis=1),
            np.insert(A, -1, A[:, 0], axis=1))


@pytest.mark.parametrize("optimize", ["O0", "O2"])
def test_histogram_without_range_and_insert_match_numpy(optimize):
    for x in (np.array([1.0, 2.0, 2.5, 7.0, 3.0]), np.arange(10), np.array([3.0, 3.0])):
        check(hist_auto, x, optimize=optimize)
    check(inserts, np.arange(4.0), np.arange(6.0).reshape(2, 3), optimize=optimize)


def test_histogram_of_data_with_nan_raises_numpys_error_when_it_runs():
    f = reactant.compile(hist_auto)
    f(reactant.to_rarray(np.array([1.0, 2.0])))
    with pytest.raises(ValueError, match="autodetected range"):
        f(reactant.to_rarray(np.array([1.0, np.nan])))
    with pytest.raises(ValueError, match="autodetected range"):
        hist_auto(np.array([1.0, np.nan]))


def test_a_numpy_array_with_two_names_receiving_a_traced_value_is_a_clear_error():
    def f(x):
        a = np.zeros(3)
        b = a  # NumPy: b sees the write through a
        a[0] = x[0]
        return b

    with pytest.raises(reactant.ConcretizationError, match="named 'a' and 'b'"):
        reactant.compile(f)(reactant.to_rarray(np.array([1.0, 2.0, 3.0])))


def chained(x):
    a = np.zeros((3, 3))
    for i in range(3):
        a[i:, i] = a[i, i:] = x[i:] * 2.0  # one value, both targets, left to right
    return a


@pytest.mark.parametrize("loops,optimize", MODES)
def test_chained_assignment_into_a_numpy_array(loops, optimize):
    check(chained, np.array([1.0, -2.0, 3.0]), loops=loops, optimize=optimize)


def csr_matvec(vals, cols, rowptr, v):
    out = np.zeros(rowptr.shape[0] - 1)
    for i in range(rowptr.shape[0] - 1):  # row lengths are data: slices with traced bounds
        out[i] = np.dot(vals[rowptr[i]:rowptr[i + 1]], v[cols[rowptr[i]:rowptr[i + 1]]])
    return out


@pytest.mark.parametrize("loops,optimize", MODES)
def test_sparse_rows_gathered_through_data_dependent_slices(loops, optimize):
    dense = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 3.0, 4.0, 5.0], [6.0, 0.0, 0.0, 0.0]])
    rows, cols = np.nonzero(dense)
    rowptr = np.concatenate([[0], np.cumsum(np.count_nonzero(dense, axis=1))])
    v = np.array([1.0, -2.0, 0.5, 3.0])
    got = check(csr_matvec, dense[rows, cols], cols, rowptr, v, loops=loops, optimize=optimize)
    np.testing.assert_allclose(np.asarray(got), dense @ v)


def dot_of_slices_of_different_dims(A, x):
    tri = np.zeros(3)
    for i in range(1, 3):  # A[i, :i] (a row of 10) and x[:i] (14 long): the same length i
        tri = tri + np.dot(A[i, :i], x[:i]) * 0.5
    return tri


def fixed_width_window_at_a_computed_start(x):
    y = x[:3] * 0.0
    for i in range(4):
        y = 0.5 * y + np.tanh(x[i % 3:i % 3 + 3])  # always 3 long: i % 3 is computed twice
    return y


@pytest.mark.parametrize("loops,optimize", MODES)
def test_windows_whose_lengths_are_equal_by_their_bounds(loops, optimize):
    rng = np.random.default_rng(3)
    check(dot_of_slices_of_different_dims, rng.standard_normal((3, 10)), rng.standard_normal(14), loops=loops,
          optimize=optimize)
    check(fixed_width_window_at_a_computed_start, rng.standard_normal(8), loops=loops, optimize=optimize)
