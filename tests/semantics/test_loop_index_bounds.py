"""Integer indices computed from loop counters (``A[i - 1, j]`` in ``for i in range(1, n - 1)``),
written as NumPy users write them: an index whose range lies inside the dimension is used as it
is; one that can be negative still counts from the end, as in NumPy."""

import numpy as np
import pytest

import reactant

from .inplace_check import MODES, check


def stencil_sweep(A):  # Gauss-Seidel: every index within [0, n)
    n = A.shape[0]
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            A[i, j] = (A[i - 1, j] + A[i, j - 1] + A[i, j] + A[i, j + 1] + A[i + 1, j]) / 5.0


def rows_from_behind(x, out):  # i - 3 is negative for i < 3: x[-3], x[-2], x[-1]
    for i in range(x.shape[0]):
        out[i] = x[i - 3] * 2.0 + x[i]


def filters_by_index(img, filters, bias, out):  # out[f, i, j]: three counters, each in range
    for f in range(filters.shape[0]):
        for i in range(img.shape[0] - 2):
            for j in range(img.shape[1] - 2):
                out[f, i, j] = np.sum(img[i:i + 3, j:j + 3] * filters[f]) + bias[f]


def sweep_through_a_view(A):  # j - 1 is -1 at j = 0: the view's last column, not A's
    inner = A[1:-1, 1:-1]
    for i in range(1, inner.shape[0]):
        for j in range(inner.shape[1]):
            inner[i, j] += 0.5 * inner[i - 1, j - 1]


def smooth_into(x, out, taps):  # np.convolve of a strided view, written into an argument
    out[:] = np.convolve(x[::2], taps, mode="same")


@pytest.mark.parametrize("loops,optimize", MODES)
def test_indices_from_loop_counters_match_numpy(loops, optimize):
    rng = np.random.default_rng(3)
    check(stencil_sweep, rng.standard_normal((7, 7)), loops=loops, optimize=optimize)
    check(rows_from_behind, rng.standard_normal(8), np.zeros(8), loops=loops, optimize=optimize)
    check(filters_by_index, rng.standard_normal((6, 6)), rng.standard_normal((2, 3, 3)), rng.standard_normal(2),
          np.zeros((2, 4, 4)), loops=loops, optimize=optimize)
    check(sweep_through_a_view, rng.standard_normal((6, 7)), loops=loops, optimize=optimize)


@pytest.mark.parametrize("loops,optimize", MODES)
@pytest.mark.parametrize("m", [3, 40])  # (40 taps: a loop over them)
def test_convolve_of_a_view_into_an_argument_matches_numpy(loops, optimize, m):
    rng = np.random.default_rng(4)
    check(smooth_into, rng.standard_normal(120), np.zeros(60), rng.standard_normal(m), loops=loops, optimize=optimize)


def _traced(fn, *args) -> str:
    c = reactant.compile(fn, loops="keep")
    return reactant.code_hlo(c, *[reactant.to_rarray(a) for a in args], optimize=False)


def test_an_index_inside_the_dimension_is_not_wrapped():
    # (the wrap from the end is (i + n) % n in unsigned arithmetic: a remainder per index)
    text = _traced(stencil_sweep, np.zeros((7, 7)))
    assert "stablehlo.while" in text and "stablehlo.remainder" not in text, text


def test_an_index_that_can_be_negative_is_wrapped():
    text = _traced(rows_from_behind, np.zeros(8), np.zeros(8))
    assert text.count("stablehlo.remainder") == 1, text  # x[i - 3]; x[i] and out[i] are in range
