"""``x[mask]`` with a traced boolean mask: how many elements it selects is only known when the
program runs, so it cannot be an array of its own. It is a :class:`MaskedSelection` instead:
the full-shaped values and the mask. Elementwise NumPy math on it (with scalars or selections
by the same mask), its reductions (sum, mean, max, ...) and writing it back
(``y[mask] = f(x[mask])``, ``x[mask] += v``) compute over the full shape where the mask holds;
anything that needs its length raises a clear error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ir.values import same_computation
from ..errors import IndexError_, describe, user_location
from ..traced import TracedRArray
from ._run_time_length import RunTimeLength, install_operators
from .convert import as_traced

_HINT = ("elementwise math, reductions (sum, mean, max, min, prod, any, all, var, std) and "
         "x[mask] = ... / x[mask] += ... work on it; for anything else use np.where(mask, ...)")


class MaskedSelection(RunTimeLength):
    """The elements of ``values`` where ``mask`` holds (both of one shape)."""

    __slots__ = ("values", "mask", "where")
    __array_priority__ = 2000  # over traced arrays and ndarrays in mixed operators

    def __init__(self, values: TracedRArray, mask: TracedRArray, where=None):
        self.values = values
        self.mask = mask
        self.where = where if where is not None else user_location()  # the user's line that selected

    def __repr__(self) -> str:
        return f"MaskedSelection<{describe(self.values)} where {describe(self.mask)}>"

    # -- what needs the length ----------------------------------------------------------------
    def _shape_error(self, what: str, *, at_selection: bool = False):
        raise IndexError_(f"x[mask] with a traced mask {describe(self.mask)} has a data-dependent shape (the "
                          f"number of selected elements is only known when the program runs): {what} needs it",
                          hint=_HINT, location=self.where if at_selection else None)

    def __getitem__(self, index):
        self._shape_error("indexing")

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def ndim(self) -> int:
        return 1

    # -- elementwise ----------------------------------------------------------------------------
    def _operand(self, x):
        if isinstance(x, MaskedSelection):
            if x.mask is not self.mask and not same_computation(x.mask.value, self.mask.value):
                raise IndexError_("x[mask1] and y[mask2] with different traced masks cannot be combined "
                                  "(their elements need not line up)", hint=_HINT)
            return x.values
        if isinstance(x, (TracedRArray, np.ndarray)) and np.ndim(x) > 0:
            raise IndexError_(f"x[mask] (traced mask) meets an array {describe(x)}: its length is only known "
                              "when the program runs", hint=_HINT)
        return x

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs.get("out") is not None or "where" in kwargs:
            self._shape_error(f"numpy.{ufunc.__name__}.{method}" if method != "__call__" else "out= or where=")
        res = getattr(ufunc, method)(*[self._operand(x) for x in inputs], **kwargs)
        if isinstance(res, tuple):
            return tuple(MaskedSelection(r, self.mask, self.where) for r in res)
        return MaskedSelection(res, self.mask, self.where)

    def __array_function__(self, func, types, args, kwargs):
        red = _REDUCTIONS.get(func)
        if red is None:
            self._shape_error(f"numpy.{getattr(func, '__name__', func)}")
        sel = args[0]
        if kwargs.get("axis") is not None or kwargs.get("out") is not None or len(args) > 1:
            sel._shape_error(f"numpy.{func.__name__} with an axis or out=")
        return red(sel, **{k: v for k, v in kwargs.items() if k not in ("axis", "out")})

    def astype(self, dtype, **kwargs) -> "MaskedSelection":
        return MaskedSelection(self.values.astype(dtype), self.mask, self.where)


install_operators(MaskedSelection, methods=[("var", np.var), ("std", np.std)])


# -- reductions over the selected elements ---------------------------------------------------------
def _fill(sel: MaskedSelection, fill) -> TracedRArray:
    return np.where(sel.mask, sel.values, np.asarray(fill, dtype=sel.values.dtype))


def _count(sel: MaskedSelection) -> TracedRArray:
    return np.sum(sel.mask)


def _sum(sel, dtype=None, **kw):
    return np.sum(_fill(sel, 0), dtype=dtype)


def _prod(sel, dtype=None, **kw):
    return np.prod(_fill(sel, 1), dtype=dtype)


def _extreme(sel, op, float_fill, int_fill):
    dt = sel.values.dtype
    if dt.kind == "f" or dt.kind == "c":
        # an empty selection (NumPy raises) gives NaN: the identity would pass for a value
        out = op(_fill(sel, float_fill))
        return np.where(np.any(sel.mask), out, np.asarray(np.nan, dtype=dt))
    if dt == np.bool_:
        return op(_fill(sel, float_fill > 0))
    return op(_fill(sel, int_fill(np.iinfo(dt))))


def _max(sel, **kw):
    return _extreme(sel, np.max, -np.inf, lambda i: i.min)


def _min(sel, **kw):
    return _extreme(sel, np.min, np.inf, lambda i: i.max)


def _mean(sel, dtype=None, **kw):
    dt = np.dtype(dtype) if dtype is not None else np.result_type(sel.values.dtype, np.float64) \
        if sel.values.dtype.kind in "biu" else sel.values.dtype
    return (_sum(sel, dtype=dt) / _count(sel)).astype(dt)


def _var(sel, dtype=None, ddof=0, **kw):
    m = _mean(sel, dtype=dtype)
    d = np.where(sel.mask, sel.values - m, 0)
    sq = np.real(d * np.conj(d)) if d.dtype.kind == "c" else d * d
    return (np.sum(sq) / (_count(sel) - ddof)).astype(sq.dtype)


def _std(sel, dtype=None, ddof=0, **kw):
    return np.sqrt(_var(sel, dtype=dtype, ddof=ddof))


def _any(sel, **kw):
    return np.any(sel.mask & (sel.values != 0))


def _all(sel, **kw):
    return np.all(~sel.mask | (sel.values != 0))


def _count_nonzero(sel, **kw):
    return np.sum(sel.mask & (sel.values != 0))


_REDUCTIONS: dict[Any, Any] = {
    np.sum: _sum, np.prod: _prod, np.max: _max, np.amax: _max, np.min: _min, np.amin: _min, np.mean: _mean,
    np.var: _var, np.std: _std, np.any: _any, np.all: _all, np.count_nonzero: _count_nonzero,
}


def select(x: TracedRArray, mask: TracedRArray) -> MaskedSelection:
    """``x[mask]`` for a traced boolean mask of ``x``'s shape or of its leading dimensions."""
    if mask.shape != x.shape[:len(mask.shape)]:
        raise IndexError_(f"boolean mask {describe(mask)} does not match the leading dimensions of {describe(x)}")
    m = mask
    if mask.shape != x.shape:
        m = np.broadcast_to(np.reshape(mask, mask.shape + (1,) * (len(x.shape) - len(mask.shape))), x.shape)
    return MaskedSelection(x, as_traced(m))
