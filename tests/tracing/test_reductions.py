"""Reductions and scans, traced vs NumPy: axis (incl. negative and tuples), keepdims, dtype."""

import numpy as np
import pytest
from npcheck import check, rand

DTYPES = ["float32", "float64", "int32", "int64", "bool", "uint8", "complex64"]
AXES = [None, 0, -1, (0, 2), (-1, -3)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "any", "all"])
def test_reduction(name, dtype):
    if name in ("max", "min") and dtype == "complex64":
        pytest.skip("complex ordering")
    rng = np.random.default_rng(0)
    x = rand(rng, (2, 3, 4), dtype, low=-1.5, high=1.5)
    fn = getattr(np, name)
    # every axis, with and without keepdims, in one program (one compile per case)
    check(lambda a: tuple(fn(a, axis=axis, keepdims=k) for axis in AXES for k in (False, True)), x,
          rtol=1e-4 if dtype in ("float32", "complex64") else None)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("ddof", [0, 1])
def test_var_std(dtype, axis, ddof):
    x = rand(np.random.default_rng(1), (3, 4, 5), dtype)
    check(lambda a: np.var(a, axis=axis, ddof=ddof), x, rtol=1e-4)
    check(lambda a: np.std(a, axis=axis, ddof=ddof, keepdims=True), x, rtol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "uint8"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmax_argmin(dtype, axis):
    rng = np.random.default_rng(2)
    x = rand(rng, (5, 6), dtype)
    x[1] = x[0]  # ties: the first index wins
    check(lambda a: (np.argmax(a, axis=axis), np.argmin(a, axis=axis)), x)
    check(lambda a: (a.argmax(axis=axis, keepdims=True), a.argmin(axis=axis, keepdims=True)), x)


def test_argmax_nan_wins():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, 0.0]])
    check(lambda a: (np.argmax(a, axis=1), np.argmin(a, axis=1), np.argmax(a)), x)


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "float64"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_cumsum_cumprod(dtype, axis):
    x = rand(np.random.default_rng(3), (4, 5), dtype, low=0.5, high=1.5)
    check(lambda a: (np.cumsum(a, axis=axis), np.cumprod(a, axis=axis)), x, rtol=1e-5)


def test_reduction_dtype_and_where_and_initial():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    check(lambda a: np.sum(a, axis=1, dtype=np.float64), x)
    check(lambda a: np.sum(a, initial=5), x)
    check(lambda a: np.max(a, axis=0, initial=7), x)
    m = x % 2 == 0
    check(lambda a, w: np.sum(a, axis=1, where=w), x, m)
    check(lambda a: np.mean(a, axis=0, dtype=np.float32), x)


def test_ufunc_reduce_accumulate_methods():
    x = rand(np.random.default_rng(4), (3, 4), "float64")
    check(lambda a: (np.add.reduce(a), np.multiply.reduce(a, axis=1), np.maximum.reduce(a, axis=None),
                     np.add.accumulate(a, axis=1), np.minimum.accumulate(a)), x)


def test_methods_and_misc_reductions():
    x = rand(np.random.default_rng(5), (4, 5), "float32")
    check(lambda a: (a.sum(), a.mean(axis=0), a.max(1), a.min(), a.prod(0), a.var(), a.std(1), a.cumsum(0),
                     a.any(), a.all(1), np.ptp(a, axis=1)), x, rtol=1e-4)


def test_nan_reductions():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, 0.5]])
    check(lambda a: (np.nansum(a, axis=1), np.nanmax(a, axis=0), np.nanmin(a), np.nanmean(a, axis=1),
                     np.nancumsum(a, axis=1)), x)


def test_diff_and_average():
    x = rand(np.random.default_rng(6), (4, 6), "float64")
    w = np.arange(1.0, 7.0)
    check(lambda a: (np.diff(a), np.diff(a, n=2, axis=0), np.diff(a, prepend=0.0), np.average(a, axis=1, weights=w),
                     np.average(a)), x)


def test_max_of_empty_raises():
    import reactant

    x = reactant.to_rarray(np.zeros((0, 3), np.float32))
    with pytest.raises(ValueError, match="zero-size"):
        reactant.compile(lambda a: np.max(a, axis=0))(x)
