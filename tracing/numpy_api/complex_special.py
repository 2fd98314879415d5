"""IEEE special values of the complex elementary functions (C99 Annex G, which NumPy and the
Array API standard follow). XLA's complex kernels compute these functions from real formulas
that turn an infinite or NaN part into NaN + NaN j; each function here keeps XLA's result for
finite input and substitutes the specified value where a part is infinite or NaN.

Every rule reads ``x`` (real part) and ``y`` (imaginary part) of the input; the cases are
those where C99's value differs from what the real formulas give.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .. import ops
from ..traced import TracedRArray


class _Parts:
    """Predicates and constants on one complex operand, in its real dtype."""

    def __init__(self, z: TracedRArray):
        self.x, self.y = ops.real(z), ops.imag(z)
        self.shape, self.real_dtype = self.x.shape, self.x.dtype

    def c(self, v) -> TracedRArray:
        return ops.full(self.shape, v, self.real_dtype)

    def isnan(self, v):
        return ops.compare(v, v, "NE")

    def isinf(self, v):
        return ops.compare(ops.abs(v), self.c(math.inf), "EQ")

    def iszero(self, v):
        return ops.compare(v, self.c(0.0), "EQ")

    def nonfinite(self, v):
        return ops.or_(self.isnan(v), self.isinf(v))

    def finite(self, v):
        return ops.not_(self.nonfinite(v))

    def signbit(self, v):
        """``v`` is negative or -0 (the sign a conjugate or odd symmetry carries over)."""
        neg_zero = ops.and_(self.iszero(v), ops.compare(ops.divide(self.c(1.0), v), self.c(0.0), "LT"))
        return ops.or_(ops.compare(v, self.c(0.0), "LT"), neg_zero)

    def copysign(self, magnitude: float, v):
        """``magnitude`` with the sign of ``v``."""
        return ops.select(self.signbit(v), self.c(-magnitude), self.c(magnitude))


def _patch(out: TracedRArray, cases) -> TracedRArray:
    """``out`` with ``re + im j`` where each ``(cond, re, im)`` holds (later cases win)."""
    re, im = ops.real(out), ops.imag(out)
    for cond, r, i in cases:
        re, im = ops.select(cond, r, re), ops.select(cond, i, im)
    return ops.complex_(re, im)


def _exp_like(kernel: Callable, at_minus_inf: float) -> Callable:
    # exp / expm1: an infinite real part with an infinite or NaN imaginary part
    def f(z):
        p = _Parts(z)
        x_ninf = ops.and_(p.isinf(p.x), ops.compare(p.x, p.c(0.0), "LT"))
        x_pinf = ops.and_(p.isinf(p.x), ops.compare(p.x, p.c(0.0), "GT"))
        bad_y = p.nonfinite(p.y)
        return _patch(kernel(z), [
            (ops.and_(x_ninf, bad_y), p.c(at_minus_inf), p.c(0.0)),
            (ops.and_(x_pinf, bad_y), p.c(math.inf), p.c(math.nan)),
        ])
    return f


def _cosh(z):
    p = _Parts(z)
    bad_y = p.nonfinite(p.y)
    return _patch(ops.cosh(z), [
        (ops.and_(p.iszero(p.x), bad_y), p.c(math.nan), p.c(0.0)),
        (ops.and_(p.isinf(p.x), bad_y), p.c(math.inf), p.c(math.nan)),
    ])


def _sinh(z):
    p = _Parts(z)
    bad_y = p.nonfinite(p.y)
    return _patch(ops.sinh(z), [
        (ops.and_(p.iszero(p.x), bad_y), p.x, p.c(math.nan)),      # keeps the sign of x
        (ops.and_(p.isinf(p.x), bad_y), p.c(math.inf), p.c(math.nan)),  # sign unspecified: NumPy's +
    ])


def _tanh(z):
    p = _Parts(z)
    return _patch(ops.tanh(z), [
        (ops.and_(p.iszero(p.x), p.nonfinite(p.y)), p.x, p.c(math.nan)),
    ])


def _log_like(kernel: Callable) -> Callable:
    # log / log1p: an infinite part with a NaN part has an infinite modulus
    def f(z):
        p = _Parts(z)
        inf_nan = ops.or_(ops.and_(p.isinf(p.x), p.isnan(p.y)), ops.and_(p.isnan(p.x), p.isinf(p.y)))
        return _patch(kernel(z), [(inf_nan, p.c(math.inf), p.c(math.nan))])
    return f


def _sqrt(z):
    p = _Parts(z)
    inf_nan = ops.and_(p.isinf(p.x), p.isnan(p.y))
    neg = ops.compare(p.x, p.c(0.0), "LT")
    return _patch(ops.sqrt(z), [
        (ops.and_(ops.and_(p.isinf(p.x), neg), p.finite(p.y)), p.c(0.0), p.copysign(math.inf, p.y)),
        (ops.and_(inf_nan, neg), p.c(math.nan), p.c(math.inf)),
        (ops.and_(inf_nan, ops.not_(neg)), p.c(math.inf), p.c(math.nan)),
        (p.isinf(p.y), p.c(math.inf), p.y),  # any x, even NaN
    ])


def _acos(z):
    p = _Parts(z)
    neg = ops.compare(p.x, p.c(0.0), "LT")
    return _patch(ops.acos(z), [
        (ops.and_(p.isinf(p.x), p.finite(p.y)), ops.select(neg, p.c(math.pi), p.c(0.0)),
         p.copysign(math.inf, ops.negate(p.y))),
        (ops.and_(p.iszero(p.x), p.isnan(p.y)), p.c(math.pi / 2), p.c(math.nan)),
    ])


def _acosh(z):
    p = _Parts(z)
    return _patch(ops.acosh(z), [
        (ops.and_(p.iszero(p.x), p.isnan(p.y)), p.c(math.nan), p.c(math.pi / 2)),
    ])


def _asinh(z):
    p = _Parts(z)
    return _patch(ops.asinh(z), [
        (ops.and_(p.finite(p.x), p.isinf(p.y)), p.copysign(math.inf, p.x), p.copysign(math.pi / 2, p.y)),
        (ops.and_(p.isnan(p.x), p.iszero(p.y)), p.c(math.nan), p.y),  # keeps the sign of y
    ])


def _atanh(z):
    p = _Parts(z)
    nan_y = p.isnan(p.y)
    return _patch(ops.atanh(z), [
        (ops.and_(p.isnan(p.x), ops.not_(p.isinf(p.y))), p.c(math.nan), p.c(math.nan)),
        (nan_y, p.c(math.nan), p.c(math.nan)),
        (ops.and_(nan_y, p.iszero(p.x)), p.x, p.c(math.nan)),
        (ops.and_(nan_y, p.isinf(p.x)), ops.select(ops.compare(p.x, p.c(0.0), "LT"), p.c(-0.0), p.c(0.0)),
         p.c(math.nan)),
    ])


# ufunc -> complex body with the special values
COMPLEX_BODIES = {
    np.exp: _exp_like(ops.exp, 0.0), np.expm1: _exp_like(ops.expm1, -1.0),
    np.cosh: _cosh, np.sinh: _sinh, np.tanh: _tanh,
    np.log: _log_like(ops.log), np.log1p: _log_like(ops.log1p), np.sqrt: _sqrt,
    np.arccos: _acos, np.arccosh: _acosh, np.arcsinh: _asinh, np.arctanh: _atanh,
}
