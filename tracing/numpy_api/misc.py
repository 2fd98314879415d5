"""Selection, rounding, sorting, comparisons of whole arrays, complex parts, and the
array-creation functions that receive a traced argument (``*_like``, ``linspace``...).

Creation functions that receive no traced argument (``np.zeros((3, 3))``, ``np.arange(5)``)
are not dispatched to us: they build NumPy arrays, which become constants of the trace."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import canonical, is_complex, is_float, resolve_ufunc, result_type
from ..errors import DTypeError, IndexError_, OptionError, ShapeError, UnsupportedError, describe
from ..traced import TracedRArray, wrap
from ._registry import implements
from .convert import array_dtype, as_traced, broadcast_all, broadcast_to, dtype_for_promotion, flat_or_axis, normalize_axis


def _promoted(*xs):
    dt = result_type(*[dtype_for_promotion(x) for x in xs])
    return [as_traced(x, dt) for x in xs], dt


@implements(np.where)
def where(condition, x=None, y=None, /):
    if x is None and y is None:
        raise IndexError_("numpy.where(condition) with one argument returns a data-dependent shape",
                          hint="use np.where(condition, x, y)")
    if x is None or y is None:
        raise ShapeError("either both or neither of x and y should be given")
    (tx, ty), _ = _promoted(x, y)
    c = as_traced(condition)
    if c.dtype != np.bool_:
        c = np.not_equal(c, 0)
    c, tx, ty = broadcast_all(c, tx, ty)
    return ops.select(c, tx, ty)


@implements(np.select)
def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ShapeError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise OptionError("select with an empty condition list is not possible")
    for i, c in enumerate(condlist):
        if array_dtype(c) != np.bool_:
            raise DTypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    # one dtype for all choices and the default, as NumPy's (Python scalars promote weakly)
    dt = result_type(*[dtype_for_promotion(v) for v in list(choicelist) + [default]])
    out = as_traced(default, dt)
    for c, v in reversed(list(zip(condlist, choicelist))):
        out = where(c, as_traced(v, dt), out)
    return out


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


@implements(np.iscomplexobj)
def iscomplexobj(x):
    return is_complex(as_traced(x).dtype)


@implements(np.isrealobj)
def isrealobj(x):
    return not is_complex(as_traced(x).dtype)


# -- whole-array comparisons ------------------------------------------------------------------
@implements(np.isclose)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    (x, y), dt = _promoted(a, b)
    if not (is_float(dt) or is_complex(dt)):
        x, y = ops.convert(x, np.float64), ops.convert(y, np.float64)
    x, y = broadcast_all(x, y)
    diff = np.abs(np.subtract(x, y))
    tol = np.add(atol, np.multiply(rtol, np.abs(y)))
    close = np.logical_or(np.equal(x, y), np.less_equal(diff, tol))
    finite = np.logical_and(np.isfinite(x), np.isfinite(y))
    close = np.logical_or(np.logical_and(close, finite), np.equal(x, y))
    if equal_nan:
        close = np.logical_or(close, np.logical_and(np.isnan(x), np.isnan(y)))
    return close


@implements(np.allclose)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return np.all(isclose(a, b, rtol, atol, equal_nan))


@implements(np.array_equal)
def array_equal(a1, a2, equal_nan=False):
    x, y = as_traced(a1), as_traced(a2)
    if x.shape != y.shape:
        return False
    eq = np.equal(x, y)
    if equal_nan:
        eq = np.logical_or(eq, np.logical_and(np.isnan(x), np.isnan(y)))
    return np.all(eq)


@implements(np.count_nonzero)
def count_nonzero(a, axis=None, *, keepdims=False):
    return np.sum(np.not_equal(as_traced(a), 0), axis=axis, keepdims=keepdims, dtype=np.int64)


# -- sorting ----------------------------------------------------------------------------------
def _less_nan_last(a, b):
    """NumPy's sort order: NaNs go last."""
    lt = ops.compare(a, b, "LT")
    if is_float(a.dtype):
        a_nan = ops.compare(a, a, "NE")
        b_nan = ops.compare(b, b, "NE")
        lt = ops.or_(lt, ops.and_(b_nan, ops.not_(a_nan)))
    return lt


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    x, d = flat_or_axis(as_traced(a), axis)
    if is_complex(x.dtype):
        raise UnsupportedError("sorting complex arrays is not supported inside a trace")
    (out,) = ops.sort([x], d, lambda a, b: _less_nan_last(a, b))
    return out


@implements(np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    x, d = flat_or_axis(as_traced(a), axis)
    idx = ops.iota(x.shape, np.int64, d)
    _, out = ops.sort([x, idx], d, lambda a, b, ia, ib: _less_nan_last(a, b))
    return out


@implements(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    if sorter is not None:
        a = np.take(a, sorter)
    x = as_traced(a)
    if x.ndim != 1:
        raise ShapeError(f"searchsorted needs a 1-d array, got {describe(x)}")
    (xs, vs), _ = _promoted(x, v)
    cmp = np.less if side == "left" else np.less_equal
    vv = ops.reshape(vs, vs.shape + (1,))
    return np.sum(cmp(xs, vv), axis=-1, dtype=np.int64)


# -- creation with traced inputs --------------------------------------------------------------
def _like(a, dtype, shape):
    x = as_traced(a)
    dt = canonical(dtype) if dtype is not None else x.dtype
    shp = x.shape if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
    return dt, shp


@implements(np.zeros_like)
def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    dt, shp = _like(a, dtype, shape)
    return ops.full(shp, 0, dt)


@implements(np.ones_like)
def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    dt, shp = _like(a, dtype, shape)
    return ops.full(shp, 1, dt)


@implements(np.empty_like)
def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    dt, shp = _like(prototype, dtype, shape)
    return ops.full(shp, 0, dt)


@implements(np.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    dt, shp = _like(a, dtype, shape)
    if isinstance(fill_value, TracedRArray):
        return broadcast_to(ops.convert(fill_value, dt), shp)
    return ops.full(shp, fill_value, dt)


@implements(np.copy)
def copy(a, order="K", subok=False):
    x = as_traced(a)
    # SSA values are immutable: a new handle is a copy (mutating it rebinds only the copy)
    return wrap(x.value, x.shape, x.dtype)


@implements(np.astype)
def astype(x, dtype, /, *, copy=True, device=None):
    t = as_traced(x)
    y = ops.convert(t, canonical(dtype))
    if y is t and copy:  # same dtype: still a new array unless copy=False (NumPy's rule)
        return wrap(t.value, t.shape, t.dtype)
    return y


@implements(np.linspace)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    num = int(num)
    (s, e), dt = _promoted(start, stop)
    cdt = dt if (is_float(dt) or is_complex(dt)) else np.dtype(np.float64)
    s, e = ops.convert(s, cdt), ops.convert(e, cdt)
    s, e = broadcast_all(s, e)
    div = (num - 1) if endpoint else num
    step = np.true_divide(np.subtract(e, s), div) if div > 0 else np.subtract(e, s)
    i = ops.iota((num,) + s.shape, cdt, 0)
    sb = ops.broadcast_in_dim(s, (num,) + s.shape, range(1, s.ndim + 1))
    stb = ops.broadcast_in_dim(step, (num,) + s.shape, range(1, s.ndim + 1))
    y = ops.add(sb, ops.multiply(i, stb))
    if endpoint and num > 1:  # the last sample is exactly `stop`
        eb = ops.reshape(e, (1,) + e.shape)
        y = ops.concatenate([ops.slice(y, [0] * y.ndim, (num - 1,) + s.shape), eb], 0)
    if axis != 0:
        y = np.moveaxis(y, 0, axis)
    if dtype is not None:
        y = ops.convert(y, canonical(dtype)) if not np.issubdtype(dtype, np.integer) else ops.convert(np.floor(y), dtype)
    return (y, step) if retstep else y


@implements(np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    xs = [ops.reshape(as_traced(x), (as_traced(x).size,)) for x in xi]
    n = len(xs)
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and n > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for k, x in enumerate(xs):
        d = k
        if indexing == "xy" and n > 1 and k < 2:
            d = 1 - k
        if sparse:
            s = [1] * n
            s[d] = x.shape[0]
            out.append(ops.reshape(x, tuple(s)))
        else:
            out.append(ops.broadcast_in_dim(x, tuple(shape), [d]))
    return tuple(out)


@implements(np.shape)
def shape(a):
    return as_traced(a).shape


@implements(np.ndim)
def ndim(a):
    return as_traced(a).ndim


@implements(np.size)
def size(a, axis=None):
    x = as_traced(a)
    return x.size if axis is None else x.shape[normalize_axis(axis, x.ndim)]


@implements(np.result_type)
def result_type_(*arrays_and_dtypes):
    return result_type(*[dtype_for_promotion(a) if not isinstance(a, (np.dtype, type, str)) else a
                         for a in arrays_and_dtypes])


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

