"""median / quantile / percentile and their nan* variants, traced (O0 and O2) and eager, against
NumPy: a slice holding a NaN gives NaN (only that slice), the nan* variants ignore NaN (an
all-NaN slice gives NaN), values and dtypes as NumPy's."""

import warnings

import numpy as np
import pytest
from npcheck import assert_same, check

import reactant
from reactant.tracing.errors import OptionError, UnsupportedError

NANS = np.array([[3.0, np.nan, 1.0, 2.0, 7.0],
                 [0.5, -1.0, 4.0, 2.0, 2.5],
                 [np.nan, np.nan, np.nan, np.nan, np.nan],
                 [1.0, 2.0, 3.0, 4.5, np.inf]])
LEVELS = ["O0", "O2"]


def _eager(fn, *args):
    """``fn`` on device arrays outside compile (reactant's eager NumPy)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(*reactant.to_rarray(args))
    return tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else np.asarray(out)


def _want(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


@pytest.mark.parametrize("opt", LEVELS)
def test_median_is_nan_where_a_slice_holds_nan(opt):
    f = lambda a: (np.median(a), np.median(a, axis=0), np.median(a, axis=1),  # noqa: E731
                   np.median(a, axis=(0, 1)), np.median(a, axis=1, keepdims=True), np.median(a[1]),
                   np.median(a[:, 1:3], axis=0))
    got = check(f, NANS, optimize=opt)
    assert np.isnan(got[0]) and np.isnan(got[2][0]) and not np.isnan(got[2][1])  # only slices with a NaN


@pytest.mark.parametrize("opt", LEVELS)
def test_quantile_percentile_nan_per_slice(opt):
    f = lambda a: (np.quantile(a, 0.3), np.quantile(a, 0.3, axis=1),  # noqa: E731
                   np.quantile(a, [0.1, 0.5, 0.9], axis=0), np.quantile(a, 1.0, axis=1), np.quantile(a, 0, axis=1),
                   np.percentile(a, 40, axis=1),
                   np.percentile(a, [10, 90], axis=1, keepdims=True), np.quantile(a[1], [[0.2, 0.4], [0.6, 0.8]]))
    check(f, NANS, optimize=opt)


@pytest.mark.parametrize("opt", LEVELS)
def test_nan_variants_ignore_nan(opt):
    f = lambda a: (np.nanmedian(a), np.nanmedian(a, axis=0), np.nanmedian(a, axis=1),  # noqa: E731
                   np.nanmedian(a, axis=1, keepdims=True), np.nanquantile(a, 0.3, axis=1),
                   np.nanquantile(a, [0.0, 0.25, 0.5, 1.0], axis=1), np.nanquantile(a, 1, axis=1),
                   np.nanquantile(a, 0, axis=0), np.nanpercentile(a, [10, 90], axis=1, keepdims=True),
                   np.nanpercentile(a, 50))
    got = check(f, NANS, optimize=opt)
    assert np.isnan(got[2][2]) and not np.isnan(got[2][0])  # all-NaN row only


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_dtypes_and_weak_q(dtype):
    x = np.array([[3, 1, 2, 7, 5, 4], [0, -1, 4, 2, 9, 9]]).astype(dtype)
    if x.dtype.kind == "f":
        x[0, 2] = np.nan
    f = lambda a: (np.median(a, 0), np.median(a, 1), np.quantile(a, 0.3, axis=1),  # noqa: E731
                   np.quantile(a, [0.3], axis=1), np.quantile(a, np.float32(0.7), axis=1),
                   np.quantile(a, np.array([0.2, 0.7], np.float32), axis=1),
                   np.quantile(a, 1, axis=1), np.quantile(a, [0, 1], axis=0), np.percentile(a, 30, axis=1),
                   np.nanmedian(a, 1), np.nanquantile(a, 0.3, axis=1), np.nanquantile(a, [0.3], axis=1),
                   np.nanquantile(a, np.array([0.2, 0.7], np.float32), axis=1), np.nanpercentile(a, 30, axis=1))
    check(f, x)


def test_interpolation_at_infinities_matches_numpy():
    # NumPy's lerp gives NaN between equal infinities (inf - inf): the same formula here
    x = np.array([[1.0, np.inf, np.inf, 2.0], [-np.inf, 1.0, 2.0, 3.0], [-np.inf, np.inf, 0.0, 1.0]])
    check(lambda a: (np.median(a, 1), np.quantile(a, [0.0, 0.5, 0.9, 1.0], axis=1),
                     np.nanquantile(a, [0.0, 0.5, 1.0], axis=1), np.nanmedian(a, 1)), x)


@pytest.mark.parametrize("fn", [lambda a: np.median(a, axis=1), lambda a: np.quantile(a, [0.25, 0.75], axis=0),
                                lambda a: np.percentile(a, 50), lambda a: np.nanmedian(a, axis=1),
                                lambda a: np.nanquantile(a, [0.25, 0.75], axis=0), lambda a: np.nanpercentile(a, 30)],
                         ids=["median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile"])
def test_eager_on_device_arrays(fn):
    assert_same(_eager(fn, NANS), _want(fn, NANS))


def test_empty_and_errors():
    check(lambda a: (np.median(a, axis=0), np.nanmedian(a, axis=0)), np.zeros((0, 3)))
    check(lambda a: (np.quantile(a, [], axis=1), np.nanquantile(a, np.array([], np.float32), axis=0),
                     np.percentile(a, [], axis=1, keepdims=True)), np.ones((2, 3), np.float32))
    x = reactant.to_rarray(np.ones(4))
    with pytest.raises(OptionError, match=r"range \[0, 1\]"):
        reactant.compile(lambda a: np.quantile(a, 1.5))(x)
    with pytest.raises(OptionError, match=r"range \[0, 1\]"):
        reactant.compile(lambda a: np.nanpercentile(a, -1))(x)
    with pytest.raises(UnsupportedError, match="method='lower'"):
        reactant.compile(lambda a: np.quantile(a, 0.5, method="lower"))(x)
    with pytest.raises(UnsupportedError, match="array q on the device"):
        reactant.compile(lambda a, q: np.quantile(a, q))(x, reactant.to_rarray(np.array([0.5])))
    with pytest.raises(TypeError, match="real numbers"):
        reactant.compile(np.median)(reactant.to_rarray(np.ones(3, np.complex64)))
