"""Every supported ufunc, traced vs NumPy, across the dtypes it accepts, with broadcasting
and NEP 50 promotion of Python scalars."""

import warnings

import numpy as np
import pytest
from npcheck import assert_same, check, rand, reference, to_numpy

import reactant
from reactant.tracing.numpy_api.ufuncs import ELEMENTWISE

FLOATS = ["float32", "float64"]
INTS = ["int32", "int64", "uint8"]
ALL = FLOATS + INTS + ["bool", "complex64"]

# ufuncs whose inputs must be kept in a safe domain
POSITIVE = {np.log, np.log2, np.log10, np.sqrt, np.reciprocal, np.arccosh, np.power, np.float_power}
UNIT = {np.arcsin, np.arccos, np.arctanh}


def _accepts(ufunc, dtype):
    """Whether NumPy itself accepts the dtype for this ufunc."""
    x = np.ones(2, dtype=dtype)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ufunc(*([x] * ufunc.nin))
        return True
    except TypeError:
        return False


def _inputs(rng, ufunc, dtype, shapes):
    out = []
    for s in shapes:
        if ufunc in UNIT and np.dtype(dtype).kind == "f":
            out.append(rng.uniform(-0.9, 0.9, s).astype(dtype))
        elif ufunc is np.arccosh and np.dtype(dtype).kind == "f":
            out.append(rng.uniform(1.1, 3, s).astype(dtype))
        else:
            out.append(rand(rng, s, dtype, positive=ufunc in POSITIVE or ufunc in (np.left_shift, np.right_shift, np.ldexp)))
    if ufunc in (np.left_shift, np.right_shift) and np.dtype(dtype).kind in "iu":
        out[1] = (out[1] % 7).astype(dtype)
    if ufunc in (np.floor_divide, np.remainder, np.fmod, np.divmod) and np.dtype(dtype).kind in "iu":
        out[1] = np.where(out[1] == 0, 3, out[1]).astype(dtype)
    if ufunc is np.power and np.dtype(dtype).kind in "iu":
        out[1] = (out[1] % 4).astype(dtype)
    return out


UFUNCS = sorted(ELEMENTWISE, key=lambda u: u.__name__)


_COMPLEX_SKIP = (np.arccosh, np.arcsinh, np.arctanh, np.arcsin, np.arccos, np.arctan, np.power, np.float_power,
                 np.log2, np.log10, np.exp2, np.sign, np.reciprocal)  # (complex branch cuts/edge conventions)


@pytest.mark.parametrize("dtype", ALL)
def test_ufuncs_match_numpy(dtype):
    """Every ufunc NumPy accepts for ``dtype``, on its own inputs, in one compiled program (one
    compile per dtype); the ones NumPy refuses raise TypeError when traced, as in NumPy.
    (ldexp takes an int exponent: tested separately.)"""
    cases = []
    for ufunc in UFUNCS:
        if ufunc is np.ldexp:
            continue
        if not _accepts(ufunc, dtype):
            with pytest.raises(TypeError):
                reactant.compile(lambda *a: ufunc(*a))(*reactant.to_rarray([np.ones(2, dtype)] * ufunc.nin))
            continue
        if np.dtype(dtype).kind == "c" and ufunc in _COMPLEX_SKIP:
            continue
        rng = np.random.default_rng(hash((ufunc.__name__, dtype)) % 2**32)
        cases.append((ufunc, _inputs(rng, ufunc, dtype, [(3, 4)] * ufunc.nin)))
    assert cases
    flat = [a for _, args in cases for a in args]

    def all_ufuncs(*xs):
        out, k = [], 0
        for ufunc, args in cases:
            out.append(ufunc(*xs[k:k + len(args)]))
            k += len(args)
        return out

    got = reactant.compile(all_ufuncs)(*reactant.to_rarray(flat))
    tol = 1e-4 if dtype in ("float32", "complex64") else None
    for (ufunc, args), g in zip(cases, got):
        want = reference(ufunc, *args)
        try:
            assert_same(to_numpy(g), want, rtol=tol, atol=tol)
        except AssertionError as e:
            raise AssertionError(f"{ufunc.__name__} on {dtype}: {e}") from None


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.arctan2, np.less, np.logical_and],
                         ids=lambda u: u.__name__)
def test_broadcasting(ufunc):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 1, 4)).astype(np.float32)
    b = rng.standard_normal((3, 1)).astype(np.float32)
    check(lambda x, y: ufunc(x, y), a, b)
    check(lambda x: ufunc(x, np.float32(0.5)), a)


def test_ldexp():
    x = np.array([1.5, -2.0, 3.25])
    n = np.array([1, 3, -2], dtype=np.int32)
    check(np.ldexp, x, n)


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "float16", "int64", "bool"])
@pytest.mark.parametrize("scalar", [2, 2.5, True, -1])
def test_python_scalars_are_weak(dtype, scalar):
    """NEP 50: a Python scalar takes the array's dtype unless it needs a wider kind."""
    x = rand(np.random.default_rng(0), (5,), dtype)
    if dtype == "uint8" and scalar == -1:
        with pytest.raises(Exception):
            reference(lambda a: a + scalar, x)
        return
    if dtype == "bool" and type(scalar) is not bool:
        check(lambda a: a * scalar, x)
        return
    check(lambda a: a + scalar, x)
    check(lambda a: scalar * a, x)
    check(lambda a: a / scalar if scalar else a, x)


@pytest.mark.parametrize("pair", [("float32", "float64"), ("int32", "float32"), ("int8", "uint8"),
                                  ("int64", "float16"), ("bool", "int32"), ("float32", "complex128")])
def test_mixed_array_promotion(pair):
    rng = np.random.default_rng(2)
    a, b = rand(rng, (4,), pair[0], positive=True), rand(rng, (4,), pair[1], positive=True)
    check(lambda x, y: x + y, a, b)
    check(lambda x, y: x * y - x, a, b)


def test_numpy_scalars_are_strong():
    x = np.ones(3, np.float32)
    check(lambda a: a * np.float64(2.0), x)
    check(lambda a: a + np.int64(3), x)


def test_operators_and_inplace():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3)).astype(np.float32)
    b = rng.standard_normal((3, 3)).astype(np.float32) + 3

    def f(x, y):
        z = x.copy()
        z += y
        z *= 2
        z -= x
        z /= y
        return (-x, +x, abs(x), x ** 2, 2 ** x, x // y, x % y, divmod(x, y), x < y, x <= y, x > y, x >= y,
                x == y, x != y, z)

    check(f, a, b)
    i = rng.integers(-9, 9, (4,)).astype(np.int32)
    j = rng.integers(1, 5, (4,)).astype(np.int32)
    check(lambda x, y: (x & y, x | y, x ^ y, ~x, x << (y % 3), x >> (y % 3), x // y, x % y), i, j)


def test_inplace_same_kind_casting_error():
    x = reactant.to_rarray(np.ones(3, np.int32))

    @reactant.compile
    def f(a):
        a += 1.5
        return a

    with pytest.raises(reactant.DTypeError, match="same_kind"):
        f(x)
    np.testing.assert_array_equal(np.asarray(x), np.ones(3, np.int32))


def test_special_float_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], np.float64)
    check(lambda a: (np.isnan(a), np.isinf(a), np.isfinite(a), np.signbit(a), np.maximum(a, 0.0),
                     np.fmax(a, 0.0), np.fmin(a, 0.0), np.minimum(a, 0.0), np.sign(a)), x)


def test_floor_divide_and_remainder_match_numpy_signs():
    a = np.array([-7, -7, 7, 7, 0, 5], np.int64)
    b = np.array([2, -2, 2, -2, 3, 0], np.int64)
    check(lambda x, y: (x // y, x % y, np.fmod(x, y)), a, b)
    af = a.astype(np.float64) + 0.5
    bf = np.array([2.0, -2.0, 2.0, -2.0, 3.0, 0.5])
    check(lambda x, y: (x // y, x % y, np.fmod(x, y)), af, bf)


def test_ufunc_dtype_and_out_kwargs():
    x = np.arange(5, dtype=np.int32)
    check(lambda a: np.add(a, 1, dtype=np.float64), x)

    def f(a, b):
        np.multiply(a, 2, out=b)
        return b

    check(f, x.astype(np.float32), np.zeros(5, np.float32))


COMPLEX_SPECIAL = [complex(a, b) for a in (0.0, -0.0, 1.5, -np.inf, np.inf, np.nan)
                   for b in (0.0, -0.0, 2.0, np.inf, -np.inf, np.nan)]


@pytest.mark.parametrize("ufunc", [np.exp, np.cosh, np.sinh, np.tanh, np.log, np.log1p, np.sqrt,
                                   np.arccos, np.arccosh, np.arcsinh, np.arctanh],
                         ids=lambda u: u.__name__)
def test_complex_special_values_match_numpy(ufunc):
    # C99 Annex G values for infinite and NaN parts, which NumPy follows: NaN parts compare
    # as NaN wherever NumPy has NaN (their signs are unspecified), infinities and zeros exactly
    z = np.array(COMPLEX_SPECIAL, np.complex128)
    with np.errstate(all="ignore"):
        want = ufunc(z)
    got = np.asarray(reactant.compile(lambda a: ufunc(a))(reactant.to_rarray(z)))
    for part in (np.real, np.imag):
        g, w = part(got), part(want)
        assert np.array_equal(np.isnan(g), np.isnan(w)), (ufunc.__name__, z[np.isnan(g) != np.isnan(w)])
        finite_or_inf = ~np.isnan(w) & (np.isinf(w) | (w == 0))
        np.testing.assert_array_equal(g[finite_or_inf], w[finite_or_inf])


def test_complex_order_matches_numpy_with_nan_and_infinite_parts():
    # every pair of COMPLEX_SPECIAL values in one program: NumPy orders complex numbers by the
    # real parts (only when no imaginary part is NaN), then the imaginary ones
    z = np.array(COMPLEX_SPECIAL, np.complex128)
    a, b = (m.ravel() for m in np.meshgrid(z, z))
    fns = (np.greater, np.greater_equal, np.less, np.less_equal, np.maximum, np.minimum)
    got = reactant.compile(lambda x, y: [f(x, y) for f in fns])(reactant.to_rarray(a), reactant.to_rarray(b))
    for f, g in zip(fns, got):
        with np.errstate(all="ignore"):
            want = f(a, b)
        np.testing.assert_array_equal(np.asarray(g), want, err_msg=f.__name__)


def test_complex_expm1_follows_exp_at_infinity():
    # NumPy gives NaN + NaN j here; the Array API standard (and exp(z) - 1) gives these
    z = np.array([complex(-np.inf, np.inf), complex(-np.inf, np.nan), complex(np.inf, np.nan)])
    got = np.asarray(reactant.compile(lambda a: np.expm1(a))(reactant.to_rarray(z)))
    np.testing.assert_array_equal(got[:2], [-1 + 0j, -1 + 0j])
    assert np.isinf(got[2].real) and np.isnan(got[2].imag)


def test_sign_of_signed_zero_is_positive_zero():
    x = np.array([-0.0, 0.0, -3.0])
    got = np.asarray(reactant.compile(lambda a: np.sign(a))(reactant.to_rarray(x)))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.sign(x)))
    z = np.array([complex(-0.0, -0.0)])
    got = np.asarray(reactant.compile(lambda a: np.sign(a))(reactant.to_rarray(z)))
    assert not np.signbit(got.real[0]) and not np.signbit(got.imag[0])
