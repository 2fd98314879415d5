"""np.clip (reversed bounds, None bounds, array bounds, integer dtypes, NaN, complex) and
integer powers with negative exponents, traced (O0 and O2) and eager, against NumPy."""

import warnings

import numpy as np
import pytest
from npcheck import assert_same, check

import reactant
from reactant.tracing.errors import DomainError

LEVELS = ["O0", "O2"]
X = np.array([0.0, 2.0, np.nan, 5.0, -1.0, 1.5, np.inf, -np.inf])
LO = np.array([0.0, 5.0, np.nan, 1.0, 1.0, 0.0, 0.0, 0.0])
HI = np.array([1.0, 2.0, 3.0, np.nan, 0.0, 9.0, 9.0, 9.0])


def _eager(fn, *args):
    out = fn(*reactant.to_rarray(args))
    return tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else np.asarray(out)


# -- clip -------------------------------------------------------------------------------------
@pytest.mark.parametrize("opt", LEVELS)
def test_clip_reversed_bounds_upper_wins(opt):
    got = check(lambda a: (np.clip(a, 3, 1), a.clip(3, 1), np.clip(a, min=3, max=1), np.clip(a, 1, 3)), X, optimize=opt)
    np.testing.assert_array_equal(got[0], [1, 1, np.nan, 1, 1, 1, 1, 1])


@pytest.mark.parametrize("opt", LEVELS)
def test_clip_none_and_nan_bounds(opt):
    check(lambda a: (a.clip(2), a.clip(max=2), a.clip(min=1), np.clip(a, None, 1), np.clip(a, 1, None),
                     np.clip(a, None, None), np.clip(a, np.nan, 1), np.clip(a, 0, np.nan)), X, optimize=opt)


@pytest.mark.parametrize("opt", LEVELS)
def test_clip_array_bounds(opt):
    check(lambda a, lo, hi: (np.clip(a, lo, hi), np.clip(a, lo, None), np.clip(a, None, hi), np.clip(a, hi, lo),
                             np.clip(a.astype(np.float32), lo.astype(np.float32), 1.0),
                             np.clip(a.astype(np.float32), 0.5, np.float64(2.0)),
                             np.clip(a[:3], np.array([[0.0], [2.0]]), 2.5)), X, LO, HI, optimize=opt)


@pytest.mark.parametrize("opt", LEVELS)
def test_clip_integer_dtypes(opt):
    check(lambda a: (np.clip(a, 3, 1), np.clip(a, 1.5, 3), np.clip(a, -1, 300), a.clip(2),
                     np.clip(a.astype(np.int8), 1, 300), np.clip(a.astype(np.int8), -300, 2),
                     np.clip(a.astype(np.uint8), -1, 3), np.clip(a, np.int8(1), np.int16(3)),
                     np.clip(a, np.arange(9)[::-1], 4)), np.arange(-3, 6), optimize=opt)
    check(lambda b: (np.clip(b, 0, 1), np.clip(b, False, True), np.clip(b, 0.5, 1)), np.array([True, False]),
          optimize=opt)


@pytest.mark.parametrize("opt", LEVELS)
def test_clip_complex_lexicographic(opt):
    # XLA has no complex order (its clamp of complex constants aborts): NumPy's order by parts
    z = np.array([1 + 2j, 3 - 1j, complex(np.nan, 1), 0.5 + 0.5j, -1 - 1j, 2 + 1j])
    check(lambda a: (np.clip(a, 0, 2), np.clip(a, 2, 0), np.clip(a, 1 + 1.5j, 1 + 2.5j), np.maximum(a, 1 + 2j),
                     np.minimum(a, a[::-1]), np.fmax(a, a[::-1]), np.fmin(a, 2), np.max(a[3:]), np.min(a)), z,
          optimize=opt)


def test_clip_eager_and_errors():
    assert_same(_eager(lambda a: (np.clip(a, 3, 1), a.clip(3, 1), np.clip(a, None, 1)), X),
                (np.clip(X, 3, 1), X.clip(3, 1), np.clip(X, None, 1)))
    x8 = reactant.to_rarray(np.arange(3, dtype=np.int8))
    with pytest.raises(OverflowError):  # as NumPy: -200 is not an int8 and bounds something
        reactant.compile(lambda a: np.clip(a, -300, -200))(x8)
    with pytest.raises(TypeError, match="a_max"):
        reactant.compile(lambda a: np.clip(a, 1, max=3))(x8)


# -- integer powers -----------------------------------------------------------------------------
BASE = np.array([-3, -2, -1, 0, 1, 2, 3] * 2)


def _raises_like_numpy(fn, x, opt):
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        fn(x)
    with pytest.raises(DomainError, match="Integers to negative integer powers are not allowed") as info:
        reactant.compile(fn, optimize=opt)(reactant.to_rarray(x))
    assert "test_clip_power.py" in str(info.value)  # names the user's line


def _ipow(a):
    a **= -1
    return a


@pytest.mark.parametrize("opt", LEVELS)
@pytest.mark.parametrize("fn", [lambda a: a ** -1, lambda a: np.power(a, np.int64(-2)),
                                lambda a: a ** np.array([1, -1] * 7), lambda a: np.power(a, [2, -1] * 7),
                                lambda a: np.power(a.astype(np.int32), np.int8(-1)), _ipow],
                         ids=["pyint", "npint", "array", "list", "int32", "inplace"])
def test_static_negative_integer_exponent_raises(fn, opt):
    _raises_like_numpy(fn, BASE, opt)


@pytest.mark.parametrize("opt", LEVELS)
def test_non_negative_and_float_powers_unaffected(opt):
    check(lambda a: (a ** 2, a ** 0, a ** np.arange(14), a ** -1.0, np.float_power(a, -2), 2 ** np.abs(a),
                     a.astype(np.float32) ** -2, np.power(a, -2, dtype=np.float64), a ** np.uint8(3)), BASE,
          optimize=opt)
    check(lambda a, k: (a ** k, np.power(a, k), k ** np.abs(a), a.astype(np.float64) ** -k), BASE, np.arange(14) % 4,
          optimize=opt)


@pytest.mark.parametrize("opt", LEVELS)
def test_traced_negative_exponent_gives_the_documented_value(opt):
    # NumPy raises at run time; a device cannot: trunc(a ** k), 0 for a == 0
    k = np.array([-1] * 7 + [-2] * 7)
    got = reactant.compile(lambda a, e: a ** e, optimize=opt)(*reactant.to_rarray((BASE, k)))
    want = np.where(BASE == 1, 1, np.where(BASE == -1, np.where(k % 2 == 1, -1, 1), 0))
    np.testing.assert_array_equal(np.asarray(got), want)
    mixed = np.array([2, -1, 3, -2, 0, 1, -3] * 2)
    got = reactant.compile(lambda a, e: a ** e, optimize=opt)(*reactant.to_rarray((BASE, mixed)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        safe = BASE ** np.maximum(mixed, 0)
    want = np.where(mixed >= 0, safe, np.where(BASE == 1, 1, np.where(BASE == -1, np.where(mixed % 2 == 1, -1, 1), 0)))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_eager_negative_exponent_raises_numpy_error():
    b, e = reactant.to_rarray((np.array([1, 2, 3]), np.array([1, -1, 2])))
    for fn in (lambda: b ** e, lambda: np.power(b, e), lambda: 2 ** e, lambda: b ** -1):
        with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
            fn()
    c = reactant.to_rarray(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        c **= e
    np.testing.assert_array_equal(np.asarray(c), [1, 2, 3])
    np.testing.assert_array_equal(np.asarray(b ** abs(e)), [1, 2, 9])
    np.testing.assert_allclose(np.asarray(2.0 ** e), [2.0, 0.5, 4.0])
