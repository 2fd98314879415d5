"""Mathematical functions (NumPy's "Mathematical functions" section) that are not ufuncs:
clip, round/around, fix, nan_to_num, the complex parts (real, imag, angle), cross and
convolve. The ufuncs themselves are in ufuncs.py."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import canonical, is_complex, is_float, resolve_ufunc
from ..errors import DTypeError, ShapeError, describe
from ._registry import implements
from .convert import _promoted, as_traced, broadcast_all, dtype_for_promotion
from .indexing import where
from .statistics import _correlation, _vectors


@implements(np.clip)
def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue, **kw):
    """NumPy's clip: ``minimum(maximum(a, a_min), a_max)`` (so when ``a_min > a_max`` the upper
    bound wins), NaN in ``a`` or in a bound giving NaN, dtypes as NumPy's ``clip`` ufunc picks
    them; a Python int bound beyond an integer array's range is no bound (NEP 50)."""
    if a_min is np._NoValue and a_max is np._NoValue:
        lo = None if min is np._NoValue else min
        hi = None if max is np._NoValue else max
    elif a_min is np._NoValue or a_max is np._NoValue:
        missing = "a_min" if a_min is np._NoValue else "a_max"
        raise TypeError(f"clip() missing 1 required positional argument: '{missing}'")
    elif min is not np._NoValue or max is not np._NoValue:
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` are provided is forbidden.")
    else:
        lo, hi = a_min, a_max
    x = as_traced(a)
    if x.dtype.kind in "iu":  # NumPy's _clip: out-of-range Python ints bound nothing
        info = np.iinfo(x.dtype)
        if type(lo) is int and lo <= info.min:
            lo = None
        if type(hi) is int and hi >= info.max:
            hi = None
    if lo is None and hi is None:
        return np.positive(x, **kw)
    if lo is None:
        return np.minimum(x, hi, **kw)
    if hi is None:
        return np.maximum(x, lo, **kw)
    from .ufuncs import ELEMENTWISE

    loop = resolve_ufunc(np._core.umath.clip, [dtype_for_promotion(v) for v in (x, lo, hi)])
    if loop is None:
        raise DTypeError(f"ufunc 'clip' not supported for the input types {describe(x)}, "
                         f"{describe(as_traced(lo))}, {describe(as_traced(hi))}")
    if kw.get("dtype") is not None:
        loop = (canonical(kw["dtype"]),) * 4
    tx, tlo, thi = broadcast_all(*[as_traced(v, loop[0]) for v in (x, lo, hi)])
    r = ELEMENTWISE[np.minimum](ELEMENTWISE[np.maximum](tx, tlo), thi)
    return ops.convert(r, loop[3])



@implements(np.round, np.around)
def round_(a, decimals=0, out=None):
    x = as_traced(a)
    if x.dtype.kind in "biu":
        if decimals >= 0:
            return x
        f = 10 ** (-decimals)
        return np.multiply(np.rint(np.true_divide(x, f)), f).astype(x.dtype)
    if decimals == 0:
        return np.rint(x)
    f = 10.0 ** decimals
    return np.true_divide(np.rint(np.multiply(x, f)), f)



@implements(np.fix)
def fix(x, out=None):
    return np.trunc(x)



@implements(np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    t = as_traced(x)
    if is_complex(t.dtype):
        return ops.complex_(nan_to_num(ops.real(t), nan=nan, posinf=posinf, neginf=neginf),
                            nan_to_num(ops.imag(t), nan=nan, posinf=posinf, neginf=neginf))
    if not is_float(t.dtype):
        return t
    info = np.finfo(t.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    t = where(np.isnan(t), np.asarray(nan, t.dtype), t)
    t = where(np.logical_and(np.isinf(t), np.greater(t, 0)), np.asarray(posinf, t.dtype), t)
    return where(np.logical_and(np.isinf(t), np.less(t, 0)), np.asarray(neginf, t.dtype), t)



# -- complex parts ----------------------------------------------------------------------------
@implements(np.real)
def real(val):
    x = as_traced(val)
    return ops.real(x) if is_complex(x.dtype) else x



@implements(np.imag)
def imag(val):
    x = as_traced(val)
    return ops.imag(x) if is_complex(x.dtype) else ops.full(x.shape, 0, x.dtype)



@implements(np.angle)
def angle(z, deg=False):
    x = as_traced(z)
    if not is_complex(x.dtype):
        x = ops.convert(x, np.float64) if not is_float(x.dtype) else x
        r = np.arctan2(ops.full(x.shape, 0, x.dtype), x)
    else:
        r = ops.atan2(ops.imag(x), ops.real(x))
    return np.rad2deg(r) if deg else r



@implements(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    (x, y), _ = _promoted(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    x = np.moveaxis(x, axisa, -1)
    y = np.moveaxis(y, axisb, -1)
    if x.shape[-1] != 3 or y.shape[-1] != 3:
        raise ShapeError(f"cross: only 3-vectors are supported inside a trace, got {describe(x)}, {describe(y)}")
    x0, x1, x2 = (x[..., i] for i in range(3))
    y0, y1, y2 = (y[..., i] for i in range(3))
    c = np.stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0], axis=-1)
    return np.moveaxis(c, -1, axisc)


# -- convolve (correlation with the reversed kernel: helpers in statistics.py) ----------------
@implements(np.convolve)
def convolve(a, v, mode="full"):
    """Convolution is correlation with the reversed kernel (no conjugation)."""
    x, w = _vectors(a, v, "convolve")
    if w.shape[0] > x.shape[0]:  # convolution commutes; NumPy centres 'same' on the longer one
        x, w = w, x
    w = ops.reverse(w, [0])
    return _correlation(x, w, mode, "convolve")
