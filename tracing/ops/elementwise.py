"""Elementwise StableHLO / CHLO ops: the dtype checks of the Ops layer over
``reactant.ir.build``'s builders (operands share one shape and dtype; the result has that
shape, and a dtype the builder's rule gives)."""

from __future__ import annotations

import numpy as np

from ...ir import build as B
from ..context import current
from ..dtypes import is_complex, is_float
from ..errors import DTypeError, ShapeError, describe
from ..traced import TracedRArray
from ._core import build, check_same

_BOOL = np.dtype(bool)


def _builder(opname: str):
    """The ``reactant.ir.build`` builder of an elementwise op (named as the op, or with a
    trailing ``_`` where that is a Python keyword)."""
    short = opname.split(".")[1]
    return getattr(B, short, None) or getattr(B, short + "_")


def _unary(opname: str, *, accepts=None):
    builder = _builder(opname)

    def op(x: TracedRArray) -> TracedRArray:
        if accepts is not None and not accepts(x.dtype):
            raise DTypeError(f"{opname} does not accept {describe(x)}")
        return build(builder, x.value)

    op.__name__ = opname.split(".")[-1]
    op.__doc__ = f"``{opname}`` (elementwise)."
    return op


def _binary(opname: str):
    builder = _builder(opname)

    def op(x: TracedRArray, y: TracedRArray) -> TracedRArray:
        check_same(opname, x, y)
        return build(builder, x.value, y.value)

    op.__name__ = opname.split(".")[-1]
    op.__doc__ = f"``{opname}`` (elementwise, same shape and dtype)."
    return op


_inexact = lambda d: is_float(d) or is_complex(d)  # noqa: E731

negate = _unary("stablehlo.negate")
abs = _unary("stablehlo.abs")  # noqa: A001 - the op's name (complex: the real magnitude)
exp = _unary("stablehlo.exponential", accepts=_inexact)
expm1 = _unary("stablehlo.exponential_minus_one", accepts=_inexact)
log = _unary("stablehlo.log", accepts=_inexact)
log1p = _unary("stablehlo.log_plus_one", accepts=_inexact)
sqrt = _unary("stablehlo.sqrt", accepts=_inexact)
rsqrt = _unary("stablehlo.rsqrt", accepts=_inexact)
cbrt = _unary("stablehlo.cbrt", accepts=is_float)
sine = _unary("stablehlo.sine", accepts=_inexact)
cosine = _unary("stablehlo.cosine", accepts=_inexact)
tan = _unary("stablehlo.tan", accepts=_inexact)
tanh = _unary("stablehlo.tanh", accepts=_inexact)
logistic = _unary("stablehlo.logistic", accepts=_inexact)
floor = _unary("stablehlo.floor", accepts=is_float)
ceil = _unary("stablehlo.ceil", accepts=is_float)
round_nearest_even = _unary("stablehlo.round_nearest_even", accepts=is_float)
round_nearest_afz = _unary("stablehlo.round_nearest_afz", accepts=is_float)
sign = _unary("stablehlo.sign")
not_ = _unary("stablehlo.not", accepts=lambda d: d.kind in "biu")
popcnt = _unary("stablehlo.popcnt", accepts=lambda d: d.kind in "iu")
count_leading_zeros = _unary("stablehlo.count_leading_zeros", accepts=lambda d: d.kind in "iu")
is_finite = _unary("stablehlo.is_finite", accepts=is_float)
# the parts of a complex value (callers take a real value's own parts themselves)
real = _unary("stablehlo.real", accepts=is_complex)
imag = _unary("stablehlo.imag", accepts=is_complex)

sinh = _unary("chlo.sinh", accepts=_inexact)
cosh = _unary("chlo.cosh", accepts=_inexact)
asin = _unary("chlo.asin", accepts=_inexact)
acos = _unary("chlo.acos", accepts=_inexact)
atan = _unary("chlo.atan", accepts=_inexact)
asinh = _unary("chlo.asinh", accepts=_inexact)
acosh = _unary("chlo.acosh", accepts=_inexact)
atanh = _unary("chlo.atanh", accepts=_inexact)
erf = _unary("chlo.erf", accepts=is_float)
erfc = _unary("chlo.erfc", accepts=is_float)
erf_inv = _unary("chlo.erf_inv", accepts=is_float)
lgamma = _unary("chlo.lgamma", accepts=is_float)
digamma = _unary("chlo.digamma", accepts=is_float)
is_inf = _unary("chlo.is_inf", accepts=is_float)
is_pos_inf = _unary("chlo.is_pos_inf", accepts=is_float)
is_neg_inf = _unary("chlo.is_neg_inf", accepts=is_float)
conj = _unary("chlo.conj", accepts=is_complex)

add = _binary("stablehlo.add")
subtract = _binary("stablehlo.subtract")
multiply = _binary("stablehlo.multiply")
divide = _binary("stablehlo.divide")
remainder = _binary("stablehlo.remainder")
power = _binary("stablehlo.power")
maximum = _binary("stablehlo.maximum")
minimum = _binary("stablehlo.minimum")
atan2 = _binary("stablehlo.atan2")
and_ = _binary("stablehlo.and")
or_ = _binary("stablehlo.or")
xor = _binary("stablehlo.xor")
shift_left = _binary("stablehlo.shift_left")
shift_right_arithmetic = _binary("stablehlo.shift_right_arithmetic")
shift_right_logical = _binary("stablehlo.shift_right_logical")
next_after = _binary("chlo.next_after")
polygamma = _binary("chlo.polygamma")
zeta = _binary("chlo.zeta")


def complex_(re: TracedRArray, im: TracedRArray) -> TracedRArray:
    """``stablehlo.complex``: float32 pairs to complex64, float64 pairs to complex128."""
    check_same("stablehlo.complex", re, im)
    if re.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise DTypeError(f"stablehlo.complex needs float32 or float64 parts, got {describe(re)}")
    return build(B.complex_, re.value, im.value)


_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def compare(x: TracedRArray, y: TracedRArray, direction: str) -> TracedRArray:
    """``stablehlo.compare`` -> bool. Floats use FLOAT (IEEE) ordering, like NumPy (the
    builder's compare type of the element type)."""
    check_same("stablehlo.compare", x, y)
    assert direction in _DIRECTIONS, direction
    if is_complex(x.dtype) and direction not in ("EQ", "NE"):
        return _complex_order(x, y, direction)
    return build(B.compare, x.value, y.value, direction)


def _complex_order(x: TracedRArray, y: TracedRArray, direction: str) -> TracedRArray:
    """NumPy's order of complex numbers, from compares of the parts: the real parts decide
    when neither imaginary part is NaN, else equal real parts and the imaginary parts (so a
    NaN part gives False). XLA's CPU back end has no complex order of its own everywhere (its
    older emitters reject it)."""
    xr, xi, yr, yi = real(x), imag(x), real(y), imag(y)
    no_nan = and_(compare(xi, xi, "EQ"), compare(yi, yi, "EQ"))
    return or_(and_(compare(xr, yr, direction[0] + "T"), no_nan),
               and_(compare(xr, yr, "EQ"), compare(xi, yi, direction)))


def select(pred: TracedRArray, on_true: TracedRArray, on_false: TracedRArray) -> TracedRArray:
    """``stablehlo.select``: pred is bool of the same shape (or a scalar)."""
    check_same("stablehlo.select", on_true, on_false)
    if pred.dtype != _BOOL or (pred.shape != on_true.shape and pred.shape != ()):
        raise ShapeError(
            f"stablehlo.select: predicate {describe(pred)} does not fit operands {describe(on_true)}"
        )
    return build(B.select, pred.value, on_true.value, on_false.value)


def clamp(lo: TracedRArray, x: TracedRArray, hi: TracedRArray) -> TracedRArray:
    """``stablehlo.clamp``: bounds are scalars or of x's shape."""
    for b in (lo, hi):
        if b.dtype != x.dtype or (b.shape != x.shape and b.shape != ()):
            raise ShapeError(f"stablehlo.clamp: bound {describe(b)} does not fit {describe(x)}")
    return build(B.clamp, lo.value, x.value, hi.value)


def convert(x: TracedRArray, dtype) -> TracedRArray:
    """``stablehlo.convert`` to ``dtype`` (``x`` itself when it already has it)."""
    dt = np.dtype(dtype)
    if dt == x.dtype:
        return x
    if x.dtype.kind == "c" and dt.kind != "c":
        # NumPy drops the imaginary part (with a ComplexWarning); StableHLO's convert rejects it.
        return convert(real(x), dt)
    return build(B.convert, x.value, current().elem_type(dt))


def bitcast_convert(x: TracedRArray, dtype) -> TracedRArray:
    """``stablehlo.bitcast_convert`` between dtypes of equal width."""
    dt = np.dtype(dtype)
    if dt.itemsize != x.dtype.itemsize:
        raise DTypeError(f"bitcast_convert: {describe(x)} to {dt} changes the element width")
    return build(B.bitcast_convert, x.value, current().elem_type(dt))
