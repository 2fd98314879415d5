"""Array creation (NumPy's "Array creation routines") from a traced argument: ``*_like``,
``copy``, ``astype``, ``linspace``, ``meshgrid``. ``np.array`` and the others that build
arrays from Python data are in construction.py, which convert.py builds on (so these, which
use convert.py, cannot live there without an import cycle).

Creation functions that receive no traced argument (``np.zeros((3, 3))``, ``np.arange(5)``)
are not dispatched to us: they build NumPy arrays, which become constants of the trace."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import canonical, is_complex, is_float
from ..traced import TracedRArray, wrap
from ._registry import implements
from .convert import _promoted, as_traced, broadcast_all, broadcast_to


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
