"""Elementwise functions of the standard. Most are NumPy's ufunc of the same meaning under
the standard's name (NumPy's dispatch runs them eagerly on device arrays and records them
inside a trace); the few whose semantics differ are written out."""

from __future__ import annotations

from typing import Callable, Union

import numpy as np

from ._base import Array, is_array, to_array

Scalar = Union[int, float, complex, bool]


def _unary(name: str, ufunc: np.ufunc) -> Callable[[Array], Array]:
    def f(x, /):
        return ufunc(x)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` (NumPy's ``{ufunc.__name__}``)."
    return f


def _binary(name: str, ufunc: np.ufunc) -> Callable[[Array, Array], Array]:
    def f(x1, x2, /):
        return to_array(ufunc(x1, x2))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}``; either operand may be a Python scalar (NumPy's ``{ufunc.__name__}``)."
    return f


_UNARY = {
    "abs": np.absolute, "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin,
    "asinh": np.arcsinh, "atan": np.arctan, "atanh": np.arctanh, "bitwise_invert": np.invert,
    "conj": np.conjugate, "cos": np.cos, "cosh": np.cosh, "exp": np.exp, "expm1": np.expm1,
    "isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan, "log": np.log,
    "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "logical_not": np.logical_not,
    "negative": np.negative, "positive": np.positive, "reciprocal": np.reciprocal,
    "sign": np.sign, "signbit": np.signbit, "sin": np.sin, "sinh": np.sinh,
    "square": np.square, "sqrt": np.sqrt, "tan": np.tan, "tanh": np.tanh,
}
_BINARY = {
    "add": np.add, "atan2": np.arctan2, "bitwise_and": np.bitwise_and,
    "bitwise_left_shift": np.left_shift, "bitwise_or": np.bitwise_or,
    "bitwise_right_shift": np.right_shift, "bitwise_xor": np.bitwise_xor,
    "copysign": np.copysign, "divide": np.divide, "equal": np.equal,
    "floor_divide": np.floor_divide, "greater": np.greater, "greater_equal": np.greater_equal,
    "hypot": np.hypot, "less": np.less, "less_equal": np.less_equal,
    "logaddexp": np.logaddexp, "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "maximum": np.maximum, "minimum": np.minimum,
    "multiply": np.multiply, "nextafter": np.nextafter, "not_equal": np.not_equal,
    "pow": np.power, "remainder": np.remainder, "subtract": np.subtract,
}

globals().update({name: _unary(name, uf) for name, uf in _UNARY.items()})
globals().update({name: _binary(name, uf) for name, uf in _BINARY.items()})


def _rounding(name: str, ufunc: np.ufunc) -> Callable[[Array], Array]:
    def f(x, /):
        # integers are already whole: the standard keeps their dtype (NumPy would give float)
        if x.dtype.kind in "biu":
            return np.copy(x)
        return ufunc(x)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}``; integer arrays come back unchanged (same dtype)."
    return f


ceil = _rounding("ceil", np.ceil)
floor = _rounding("floor", np.floor)
trunc = _rounding("trunc", np.trunc)
round = _rounding("round", np.rint)  # noqa: A001 - half to even, also per part of complex values


def real(x: Array, /) -> Array:
    """Real part (a real array is returned as a copy)."""
    return np.real(x) if x.dtype.kind == "c" else np.copy(x)


def imag(x: Array, /) -> Array:
    """Imaginary part (zeros for a real array)."""
    return np.imag(x) if x.dtype.kind == "c" else np.zeros_like(x)


def clip(x: Array, /, min: Union[Scalar, Array, None] = None,  # noqa: A002
         max: Union[Scalar, Array, None] = None) -> Array:  # noqa: A002
    """``x`` limited to ``[min, max]`` elementwise; the result keeps ``x``'s dtype and shape
    (bounds broadcast against ``x``). NaN bounds give NaN, as in ``maximum``/``minimum``."""
    out = x
    if min is not None:
        out = np.maximum(out, _bound(min, x.dtype))
    if max is not None:
        out = np.minimum(out, _bound(max, x.dtype))
    if out is x:
        return np.copy(x)
    out = np.broadcast_to(out, np.broadcast_shapes(x.shape, np.shape(out)))
    return to_array(np.astype(out, x.dtype) if out.dtype != x.dtype else out)


def _bound(b, dtype: np.dtype):
    """A clip bound in ``x``'s dtype; Python ints outside an integer dtype's range are
    saturated to it (clipping to them changes nothing / everything)."""
    if is_array(b):
        return b
    if dtype.kind in "iu" and isinstance(b, int):
        info = np.iinfo(dtype)
        b = int(np.clip(b, info.min, info.max))
    return b
