"""``reduce``, ``accumulate``, ``reduceat`` and ``at`` for every binary ufunc that has no
specialised traced version (``subtract``, ``divide``, ``power``, ``arctan2``, comparisons on
booleans, ...): NumPy's definitions, applied in order. ``reduce`` and ``accumulate`` fold along
the axis (unrolled for short axes, a ``stablehlo.while`` for long ones); ``at`` applies the
ufunc index by index, so repeated indices combine in sequence as NumPy's unbuffered ``at``
does."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..control_flow import fori_loop
from ..dtypes import resolve_ufunc
from ..errors import DTypeError, ShapeError, UnsupportedError, describe
from ..traced import TracedRArray, rebind
from ._registry import FUNCTIONS, UFUNC_METHODS, implements
from .convert import as_traced, normalize_axis
from .indexing import getitem, updated
from .ordering import _reduceat

UNROLL = 16  # folds over at most this many elements are unrolled


def _axis_first(a, axis, dtype, name: str) -> TracedRArray:
    x = as_traced(a)
    if dtype is not None:
        x = x.astype(dtype)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"reduction operation '{name}' is not reorderable, so at most one axis may be specified")
        return np.ravel(x)
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise ValueError(f"reduction operation '{name}' is not reorderable, so at most one axis may be specified")
        axis = axis[0]
    return np.moveaxis(x, normalize_axis(axis, x.ndim), 0)


def _step_dtype(ufunc: np.ufunc, acc: TracedRArray, x: TracedRArray, method: str) -> None:
    """NumPy refuses a fold whose step changes the accumulator's dtype (e.g. ``equal.reduce``
    on floats)."""
    loop = resolve_ufunc(ufunc, [acc.dtype, x.dtype])
    step = None if loop is None else loop[-1]
    if step != acc.dtype:
        raise DTypeError(f"numpy.{ufunc.__name__}.{method} on {describe(x)}: the step gives {step}, "
                         f"not the accumulator's {acc.dtype} (NumPy refuses it too)")


def _fold(ufunc: np.ufunc, x: TracedRArray, acc: TracedRArray, start: int, keep_all: bool):
    """``acc = ufunc(acc, x[i])`` for i in start..n-1; with ``keep_all`` also every partial."""
    n = x.shape[0]
    if n - start <= UNROLL:
        parts = [acc]
        for i in range(start, n):
            acc = ufunc(acc, getitem(x, i))
            parts.append(acc)
        return np.stack(parts) if keep_all else acc
    if not keep_all:
        return fori_loop(start, n, lambda i, c: ufunc(c, getitem(x, i)), acc)
    out = updated(np.zeros_like(x, dtype=acc.dtype), start - 1, acc)

    def body(i, carry):
        c, o = carry
        c = ufunc(c, getitem(x, i))
        return c, updated(o, i, c)

    _, out = fori_loop(start, n, body, (acc, out))
    return out


def _reduce(ufunc: np.ufunc) -> Callable:
    def reduce(a, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        if where is not True:
            raise UnsupportedError(f"numpy.{ufunc.__name__}.reduce(where=...) is not supported inside a trace")
        src = as_traced(a)
        x = _axis_first(src, axis, dtype, ufunc.__name__)
        if initial is np._NoValue or initial is None:
            if x.shape[0] == 0:
                raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} which has no identity")
            acc, start = getitem(x, 0), 1
        else:
            acc, start = as_traced(np.broadcast_to(np.asarray(initial, dtype=x.dtype), x.shape[1:])), 0
        if x.shape[0] > start:
            _step_dtype(ufunc, acc, x, "reduce")
        r = _fold(ufunc, x, acc, start, keep_all=False)
        if keepdims:
            if axis is None:
                return np.reshape(r, (1,) * src.ndim)
            ax = normalize_axis(axis[0] if isinstance(axis, tuple) else axis, src.ndim)
            return np.expand_dims(r, ax)
        return r

    return reduce


def _accumulate(ufunc: np.ufunc) -> Callable:
    def accumulate(array, axis=0, dtype=None, out=None):
        x = _axis_first(array, axis, dtype, ufunc.__name__)
        if x.shape[0] == 0:
            return np.moveaxis(x, 0, normalize_axis(axis, as_traced(array).ndim))
        acc = getitem(x, 0)
        if x.shape[0] > 1:
            _step_dtype(ufunc, acc, x, "accumulate")
        r = _fold(ufunc, x, acc, 1, keep_all=True)
        return np.moveaxis(r, 0, normalize_axis(axis, as_traced(array).ndim))

    return accumulate


def _at(ufunc: np.ufunc) -> Callable:
    def at(a, indices, b=None):
        if not isinstance(a, TracedRArray):
            raise UnsupportedError(f"numpy.{ufunc.__name__}.at needs a traced target array")
        if b is None:
            raise ShapeError(f"numpy.{ufunc.__name__}.at needs a second operand")
        cols = indices if isinstance(indices, tuple) else (indices,)
        cols = [c if isinstance(c, TracedRArray) else np.asarray(c) for c in cols]
        k = int(np.prod(np.broadcast_shapes(*[tuple(np.shape(c)) for c in cols])))
        flat = [np.ravel(np.broadcast_to(c, np.broadcast_shapes(*[tuple(np.shape(c)) for c in cols])))
                for c in cols]
        def pick(f, j):
            return getitem(f, j) if isinstance(f, TracedRArray) else f[j]

        item_shape = getitem(a, tuple(pick(f, 0) for f in flat)).shape if k else ()
        vals = np.broadcast_to(as_traced(b, a.dtype), (k,) + tuple(item_shape)) if k else None
        new = a
        for j in range(k):  # in order: repeated indices combine in sequence
            idx = tuple(pick(f, j) for f in flat)
            new = updated(new, idx if len(idx) > 1 else idx[0], ufunc(getitem(new, idx if len(idx) > 1 else idx[0]),
                                                                      getitem(vals, j)).astype(a.dtype))
        rebind(a, new)

    return at


def _register() -> None:
    for f in list(FUNCTIONS):
        if not (isinstance(f, np.ufunc) and f.nin == 2 and f.nout == 1) or f in (np.matmul, np.vecdot):
            continue
        if (f, "reduce") not in UFUNC_METHODS:
            implements(f, method="reduce")(_reduce(f))
        if (f, "accumulate") not in UFUNC_METHODS:
            implements(f, method="accumulate")(_accumulate(f))
        if (f, "reduceat") not in UFUNC_METHODS:
            implements(f, method="reduceat")(_reduceat(f))
        if (f, "at") not in UFUNC_METHODS:
            implements(f, method="at")(_at(f))


_register()
