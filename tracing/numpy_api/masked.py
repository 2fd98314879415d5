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

    __slots__ = ("values", "mask", "where", "lead", "user_mask")
    __array_priority__ = 2000  # over traced arrays and ndarrays in mixed operators

    def __init__(self, values: TracedRArray, mask: TracedRArray, where=None, lead: int | None = None,
                 user_mask=None):
        self.values = values
        self.mask = mask  # broadcast to the values' shape
        self.where = where if where is not None else user_location()  # the user's line that selected
        # the mask selects along the leading ``lead`` dims (rows of a matrix: 1): the selection
        # is (selected, *values.shape[lead:])
        self.lead = values.ndim if lead is None else lead
        self.user_mask = mask if user_mask is None else user_mask

    def _like(self, values) -> "MaskedSelection":
        return MaskedSelection(values, self.mask, self.where, self.lead, self.user_mask)

    def __repr__(self) -> str:
        return f"MaskedSelection<{describe(self.values)} where {describe(self.user_mask)}>"

    # -- what needs the length ----------------------------------------------------------------
    def _shape_error(self, what: str, *, at_selection: bool = False):
        raise IndexError_(f"x[mask] with a traced mask {describe(self.user_mask)} has a data-dependent shape (the "
                          f"number of selected elements is only known when the program runs): {what} needs it",
                          hint=_HINT, location=self.where if at_selection else None)

    def _full_axes(self, axis) -> tuple[int, ...]:
        """The axes of the full-shaped values that a reduction over ``axis`` of the selection
        reduces; the selection's axis 0 (the selected elements) must be among them."""
        nd = self.ndim
        axes = tuple(range(nd)) if axis is None else (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        try:
            axes = tuple(sorted({int(np.lib.array_utils.normalize_axis_index(a, nd)) for a in axes}))
        except (TypeError, ValueError, np.exceptions.AxisError) as e:
            raise IndexError_(f"axis {axis!r} of x[mask] (traced mask): {e}") from None
        if 0 not in axes:
            self._shape_error(f"a reduction over axis {axis!r} (one value per selected element)")
        return tuple(range(self.lead)) + tuple(self.lead + a - 1 for a in axes if a > 0)

    def __getitem__(self, index):
        self._shape_error("indexing")

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def ndim(self) -> int:
        return 1 + self.values.ndim - self.lead

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
            return tuple(self._like(r) for r in res)
        return self._like(res)

    def __array_function__(self, func, types, args, kwargs):
        red = _REDUCTIONS.get(func)
        if red is None:
            self._shape_error(f"numpy.{getattr(func, '__name__', func)}")
        sel = args[0]
        if kwargs.get("out") is not None or len(args) > 2:
            sel._shape_error(f"numpy.{func.__name__} with out= or positional options after the axis")
        axis = args[1] if len(args) == 2 else kwargs.get("axis")
        axes = sel._full_axes(axis)
        out = red(sel, axes=axes, **{k: v for k, v in kwargs.items() if k not in ("axis", "out", "keepdims")})
        if kwargs.get("keepdims"):  # NumPy's shape: the selection's reduced axes kept as 1
            shape = [1] + [n for n in sel.values.shape[sel.lead:]]
            for a in axes[sel.lead:]:
                shape[a - sel.lead + 1] = 1
            out = np.reshape(out, tuple(shape))
        return out

    def astype(self, dtype, **kwargs) -> "MaskedSelection":
        return self._like(self.values.astype(dtype))


install_operators(MaskedSelection, methods=[("var", np.var), ("std", np.std)])


# -- reductions over the selected elements ---------------------------------------------------------
def _fill(sel: MaskedSelection, fill) -> TracedRArray:
    return np.where(sel.mask, sel.values, np.asarray(fill, dtype=sel.values.dtype))


def _count(sel: MaskedSelection, axes) -> TracedRArray:
    return np.sum(sel.mask, axis=axes)


def _sum(sel, dtype=None, axes=None, **kw):
    return np.sum(_fill(sel, 0), axis=axes, dtype=dtype)


def _prod(sel, dtype=None, axes=None, **kw):
    return np.prod(_fill(sel, 1), axis=axes, dtype=dtype)


def _extreme(sel, op, float_fill, int_fill, axes):
    dt = sel.values.dtype
    if dt.kind == "f" or dt.kind == "c":
        # an empty selection (NumPy raises) gives NaN: the identity would pass for a value
        out = op(_fill(sel, float_fill), axis=axes)
        return np.where(np.any(sel.mask, axis=axes), out, np.asarray(np.nan, dtype=dt))
    if dt == np.bool_:
        return op(_fill(sel, float_fill > 0), axis=axes)
    return op(_fill(sel, int_fill(np.iinfo(dt))), axis=axes)


def _max(sel, axes=None, **kw):
    return _extreme(sel, np.max, -np.inf, lambda i: i.min, axes)


def _min(sel, axes=None, **kw):
    return _extreme(sel, np.min, np.inf, lambda i: i.max, axes)


def _mean(sel, dtype=None, axes=None, **kw):
    dt = np.dtype(dtype) if dtype is not None else np.result_type(sel.values.dtype, np.float64) \
        if sel.values.dtype.kind in "biu" else sel.values.dtype
    return (_sum(sel, dtype=dt, axes=axes) / _count(sel, axes)).astype(dt)


def _var(sel, dtype=None, ddof=0, axes=None, **kw):
    m = _mean(sel, dtype=dtype, axes=axes)
    m = np.expand_dims(m, axes) if axes is not None else m
    d = np.where(sel.mask, sel.values - m, 0)
    sq = np.real(d * np.conj(d)) if d.dtype.kind == "c" else d * d
    return (np.sum(sq, axis=axes) / (_count(sel, axes) - ddof)).astype(sq.dtype)


def _std(sel, dtype=None, ddof=0, axes=None, **kw):
    return np.sqrt(_var(sel, dtype=dtype, ddof=ddof, axes=axes))


def _any(sel, axes=None, **kw):
    return np.any(sel.mask & (sel.values != 0), axis=axes)


def _all(sel, axes=None, **kw):
    return np.all(~sel.mask | (sel.values != 0), axis=axes)


def _count_nonzero(sel, axes=None, **kw):
    return np.sum(sel.mask & (sel.values != 0), axis=axes)


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
    return MaskedSelection(x, as_traced(m), lead=len(mask.shape), user_mask=mask)
