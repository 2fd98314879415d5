"""Reductions (sum, prod, mean, var, std, max, min, argmax, argmin, any, all, ...) and scans
(cumsum, cumprod, ...) with NumPy's ``axis``/``keepdims``/``dtype`` semantics."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import canonical, is_complex, is_float
from ..errors import ShapeError, UnsupportedError, describe
from ..traced import TracedRArray
from ._registry import implements
from .convert import as_traced, normalize_axes, normalize_axis


def _acc_dtype(x: TracedRArray, dtype, ufunc) -> np.dtype:
    """NumPy's accumulator dtype: bool/small ints sum in the platform int (int64)."""
    if dtype is not None:
        return canonical(dtype)
    if x.dtype.kind == "b" and ufunc in (np.add, np.multiply):
        return np.dtype(np.int64)
    if x.dtype.kind == "i" and x.dtype.itemsize < 8 and ufunc in (np.add, np.multiply):
        return np.dtype(np.int64)
    if x.dtype.kind == "u" and x.dtype.itemsize < 8 and ufunc in (np.add, np.multiply):
        return np.dtype(np.uint64)
    return x.dtype


def _identity(ufunc, dtype: np.dtype):
    if ufunc is np.add:
        return 0
    if ufunc is np.multiply:
        return 1
    if ufunc is np.logical_or or ufunc is np.bitwise_or or ufunc is np.bitwise_xor:
        return 0
    if ufunc is np.logical_and:
        return True
    if ufunc is np.bitwise_and:
        return -1 if dtype.kind == "i" else (np.iinfo(dtype).max if dtype.kind == "u" else True)
    if ufunc is np.maximum:
        return -np.inf if is_float(dtype) else (np.iinfo(dtype).min if dtype.kind in "iu" else False)
    if ufunc is np.minimum:
        return np.inf if is_float(dtype) else (np.iinfo(dtype).max if dtype.kind in "iu" else True)
    raise UnsupportedError(f"numpy.{ufunc.__name__}.reduce is not supported inside a trace")


def _body(ufunc):
    from .ufuncs import ELEMENTWISE

    f = ELEMENTWISE[ufunc]
    if ufunc is np.logical_and:
        return ops.and_
    if ufunc is np.logical_or:
        return ops.or_
    return f


def reduce_ufunc(ufunc, a, axis=0, dtype=None, keepdims=False, initial=None, where=True):
    """``ufunc.reduce`` (and through it sum/prod/max/min/any/all); ``out=`` is written by the
    dispatcher."""
    x = as_traced(a)
    if ufunc in (np.logical_and, np.logical_or):
        x = ops.convert(x, np.bool_) if x.dtype != np.bool_ else x
    axes = normalize_axes(axis, x.ndim)
    acc = _acc_dtype(x, dtype, ufunc)
    x = ops.convert(x, acc)
    if ufunc in (np.maximum, np.minimum) and initial is None and any(x.shape[d] == 0 for d in axes):
        raise ShapeError(f"zero-size array {describe(x)} to reduction operation {ufunc.__name__} which has no identity")
    if where is not True:
        w = as_traced(where, np.bool_)
        from .convert import broadcast_to

        x = ops.select(broadcast_to(w, x.shape), x, ops.full(x.shape, _identity(ufunc, acc), acc))
    init = ops.constant(np.asarray(_identity(ufunc, acc), dtype=acc))
    body = _body(ufunc)
    (out_,) = ops.reduce([x], [init], axes, lambda a, b: [body(a, b)])
    if initial is not None:
        out_ = body(out_, ops.full(out_.shape, initial, acc))
    if keepdims:
        out_ = ops.reshape(out_, tuple(1 if d in axes else n for d, n in enumerate(x.shape)))
    return out_


for _uf in (np.add, np.multiply, np.maximum, np.minimum, np.logical_and, np.logical_or,
            np.bitwise_and, np.bitwise_or, np.bitwise_xor):
    implements(_uf, method="reduce")(lambda a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                                     where=True, _uf=_uf: reduce_ufunc(_uf, a, axis, dtype, keepdims,
                                                                       initial, where))


@implements(np.sum)
def sum_(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return reduce_ufunc(np.add, a, axis, dtype, keepdims, initial, where)


@implements(np.prod)
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return reduce_ufunc(np.multiply, a, axis, dtype, keepdims, initial, where)


@implements(np.max, np.amax)
def max_(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return reduce_ufunc(np.maximum, a, axis, None, keepdims, initial, where)


@implements(np.min, np.amin)
def min_(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return reduce_ufunc(np.minimum, a, axis, None, keepdims, initial, where)


@implements(np.any)
def any_(a, axis=None, out=None, keepdims=False, *, where=True):
    return reduce_ufunc(np.logical_or, a, axis, None, keepdims, None, where)


@implements(np.all)
def all_(a, axis=None, out=None, keepdims=False, *, where=True):
    return reduce_ufunc(np.logical_and, a, axis, None, keepdims, None, where)


def _count(x: TracedRArray, axes) -> int:
    return int(np.prod([x.shape[d] for d in axes], dtype=np.int64))


def _mean_dtype(x: TracedRArray, dtype) -> np.dtype:
    if dtype is not None:
        return canonical(dtype)
    return x.dtype if (is_float(x.dtype) or is_complex(x.dtype)) else np.dtype(np.float64)


@implements(np.mean)
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    x = as_traced(a)
    dt = _mean_dtype(x, dtype)
    axes = normalize_axes(axis, x.ndim)
    s = reduce_ufunc(np.add, ops.convert(x, dt), axes, dt, keepdims, None, where)
    if where is not True:
        n = reduce_ufunc(np.add, _broadcast_where(where, x.shape), axes, dt, keepdims)
        return ops.divide(s, n)
    return ops.divide(s, ops.full(s.shape, _count(x, axes), dt))


def _broadcast_where(where, shape):
    from .convert import broadcast_to

    return broadcast_to(as_traced(where, np.bool_), shape)


@implements(np.var)
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None, correction=None):
    if where is not True or mean is not None:
        raise UnsupportedError("numpy.var: where=/mean= are not supported inside a trace")
    if correction is not None:
        ddof = correction
    x = as_traced(a)
    dt = _mean_dtype(x, dtype)
    axes = normalize_axes(axis, x.ndim)
    xc = ops.convert(x, dt)
    m = globals()["mean"](xc, axes, dt, keepdims=True)
    from .convert import broadcast_to

    d = ops.subtract(xc, broadcast_to(m, xc.shape))
    sq = ops.multiply(d, ops.conj(d)) if is_complex(dt) else ops.multiply(d, d)
    if is_complex(dt):
        sq = ops.real(sq)
    s = reduce_ufunc(np.add, sq, axes, None, keepdims)
    n = max(_count(x, axes) - ddof, 0)
    return ops.divide(s, ops.full(s.shape, n, s.dtype))


@implements(np.std)
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None, correction=None):
    return ops.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


def _arg_reduce(a, axis, keepdims, direction: str):
    """argmax/argmin: a variadic reduce over (value, index) keeping the first extremum;
    NaN counts as the extremum, as in NumPy."""
    x = as_traced(a)
    if axis is None:
        x = ops.reshape(x, (x.size,))
        ax = 0
    else:
        ax = normalize_axis(axis, x.ndim)
    if x.shape[ax] == 0:
        raise ShapeError(f"attempt to get arg{direction} of an empty sequence")
    idt = np.dtype(np.int64)
    idx = ops.iota(x.shape, idt, ax)
    cmp = "GT" if direction == "max" else "LT"
    nanable = is_float(x.dtype)

    def body(av, ai, bv, bi):
        better = ops.compare(bv, av, cmp)
        if nanable:  # a NaN wins over numbers; between two NaNs the first wins
            a_nan = ops.compare(av, av, "NE")
            b_nan = ops.compare(bv, bv, "NE")
            better = ops.or_(ops.and_(b_nan, ops.not_(a_nan)), ops.and_(better, ops.not_(a_nan)))
        tie = ops.and_(ops.compare(bv, av, "EQ"), ops.compare(bi, ai, "LT"))
        if nanable:
            tie = ops.or_(tie, ops.and_(ops.and_(ops.compare(av, av, "NE"), ops.compare(bv, bv, "NE")),
                                        ops.compare(bi, ai, "LT")))
        take_b = ops.or_(better, tie)
        return [ops.select(take_b, bv, av), ops.select(take_b, bi, ai)]

    init_v = ops.constant(np.asarray(_identity(np.maximum if direction == "max" else np.minimum, x.dtype),
                                     dtype=x.dtype))
    init_i = ops.constant(np.asarray(0, idt))
    _, out = ops.reduce([x, idx], [init_v, init_i], (ax,), body)
    if keepdims:
        shape = list(as_traced(a).shape) if axis is not None else [1] * as_traced(a).ndim
        if axis is not None:
            shape[ax] = 1
        out = ops.reshape(out, tuple(shape))
    return out


@implements(np.argmax)
def argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce(a, axis, keepdims, "max")


@implements(np.argmin)
def argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce(a, axis, keepdims, "min")


@implements(np.ptp)
def ptp(a, axis=None, out=None, keepdims=False):
    return ops.subtract(max_(a, axis, keepdims=keepdims), min_(a, axis, keepdims=keepdims))


def _nan_to(x, v):
    return ops.select(ops.compare(x, x, "NE"), ops.full(x.shape, v, x.dtype), x)


@implements(np.nansum)
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    x = as_traced(a)
    if is_float(x.dtype) or is_complex(x.dtype):
        x = _nan_to(x, 0)
    return sum_(x, axis, dtype, out, keepdims, initial, where)


@implements(np.nanmax)
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    x = as_traced(a)
    if is_float(x.dtype):
        x = _nan_to(x, -np.inf)
    return max_(x, axis, out, keepdims, initial, where)


@implements(np.nanmin)
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    x = as_traced(a)
    if is_float(x.dtype):
        x = _nan_to(x, np.inf)
    return min_(x, axis, out, keepdims, initial, where)


@implements(np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    x = as_traced(a)
    ok = np.logical_not(np.isnan(x))
    s = nansum(x, axis, dtype, keepdims=keepdims)
    n = sum_(ok, axis, s.dtype, keepdims=keepdims)
    return ops.divide(s, n)


# -- scans ------------------------------------------------------------------------------------
def _scan(ufunc, a, axis, dtype):
    """Inclusive scan along ``axis`` as a ``reduce_window`` (XLA lowers it efficiently)."""
    x = as_traced(a)
    if axis is None:
        x = ops.reshape(x, (x.size,))
        axis = 0
    axis = normalize_axis(axis, x.ndim)
    acc = _acc_dtype(x, dtype, ufunc)
    x = ops.convert(x, acc)
    n = x.shape[axis]
    if n == 0:
        return x
    window = [1] * x.ndim
    window[axis] = n
    padding = [(0, 0)] * x.ndim
    padding[axis] = (n - 1, 0)
    init = ops.constant(np.asarray(_identity(ufunc, acc), acc))
    body = _body(ufunc)
    (out,) = ops.reduce_window([x], [init], window, [1] * x.ndim, padding, lambda a, b: [body(a, b)])
    return out


@implements(np.cumsum)
def cumsum(a, axis=None, dtype=None, out=None):
    return _scan(np.add, a, axis, dtype)


@implements(np.cumprod)
def cumprod(a, axis=None, dtype=None, out=None):
    return _scan(np.multiply, a, axis, dtype)


for _uf in (np.add, np.multiply, np.maximum, np.minimum):
    implements(_uf, method="accumulate")(
        lambda a, axis=0, dtype=None, out=None, _uf=_uf: _scan(_uf, a, axis, dtype))


@implements(np.nancumsum)
def nancumsum(a, axis=None, dtype=None, out=None):
    x = as_traced(a)
    return cumsum(_nan_to(x, 0) if is_float(x.dtype) else x, axis, dtype)


@implements(np.diff)
def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    from .shape import concatenate

    x = as_traced(a)
    axis = normalize_axis(axis, x.ndim)
    parts = []
    if prepend is not np._NoValue:
        parts.append(_expand_edge(prepend, x, axis))
    parts.append(x)
    if append is not np._NoValue:
        parts.append(_expand_edge(append, x, axis))
    if len(parts) > 1:
        x = concatenate(parts, axis)
    for _ in range(n):
        m = x.shape[axis]
        lo = [0] * x.ndim
        hi = list(x.shape)
        hi[axis] = m - 1
        a0 = ops.slice(x, lo, hi)
        lo[axis] = 1
        hi[axis] = m
        a1 = ops.slice(x, lo, hi)
        x = np.not_equal(a1, a0) if x.dtype == np.bool_ else np.subtract(a1, a0)
    return x


def _expand_edge(v, x, axis):
    from .convert import broadcast_to

    t = as_traced(v)
    if t.ndim == 0:
        shape = list(x.shape)
        shape[axis] = 1
        t = broadcast_to(t, tuple(shape))
    return t


@implements(np.average)
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    if weights is None:
        r = mean(a, axis, keepdims=keepdims)
        if returned:
            x = as_traced(a)
            return r, ops.full(r.shape, _count(x, normalize_axes(axis, x.ndim)), r.dtype)
        return r
    x = as_traced(a)
    w = as_traced(weights)
    if w.shape != x.shape:
        if axis is None or w.ndim != 1:
            raise ShapeError(f"average: weights {describe(w)} do not fit {describe(x)}")
        ax = normalize_axis(axis, x.ndim)
        shape = [1] * x.ndim
        shape[ax] = w.shape[0]
        w = ops.reshape(w, tuple(shape))
    num = np.sum(np.multiply(x, w), axis=axis, keepdims=keepdims)
    from .convert import broadcast_to

    den = np.sum(broadcast_to(w, np.broadcast_shapes(w.shape, x.shape)), axis=axis, keepdims=keepdims)
    r = np.divide(num, den)
    return (r, den) if returned else r
