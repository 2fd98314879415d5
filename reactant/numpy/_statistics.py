"""Statistical and utility functions (reductions and scans)."""

from __future__ import annotations

from typing import Optional, Union

import numpy as np

from ._base import Array, fused, to_array
from ._dtypes import as_dtype

Axes = Union[int, tuple[int, ...], None]


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _dt(dtype):
    return None if dtype is None else as_dtype(dtype)


def sum(x: Array, /, *, axis: Axes = None, dtype=None, keepdims: bool = False) -> Array:  # noqa: A001
    """Sum over ``axis``; integers accumulate in (u)int64, floats in their own dtype."""
    return to_array(np.sum(x, axis=_axis(axis), dtype=_dt(dtype), keepdims=keepdims))


def prod(x: Array, /, *, axis: Axes = None, dtype=None, keepdims: bool = False) -> Array:
    """Product over ``axis``; integers accumulate in (u)int64, floats in their own dtype."""
    return to_array(np.prod(x, axis=_axis(axis), dtype=_dt(dtype), keepdims=keepdims))


def max(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Maximum over ``axis`` (NaN if any element is NaN)."""
    return to_array(np.max(x, axis=_axis(axis), keepdims=keepdims))


def min(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Minimum over ``axis`` (NaN if any element is NaN)."""
    return to_array(np.min(x, axis=_axis(axis), keepdims=keepdims))


def mean(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:
    """Arithmetic mean over ``axis``."""
    return to_array(np.mean(x, axis=_axis(axis), keepdims=keepdims))


def var(x: Array, /, *, axis: Axes = None, correction: Union[int, float] = 0.0, keepdims: bool = False) -> Array:
    """Variance over ``axis`` with ``correction`` degrees of freedom removed."""
    return to_array(np.var(x, axis=_axis(axis), ddof=correction, keepdims=keepdims))


def std(x: Array, /, *, axis: Axes = None, correction: Union[int, float] = 0.0, keepdims: bool = False) -> Array:
    """Standard deviation over ``axis`` with ``correction`` degrees of freedom removed."""
    return to_array(np.std(x, axis=_axis(axis), ddof=correction, keepdims=keepdims))


def all(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Whether every element along ``axis`` is true (non-zero)."""
    return to_array(np.all(x, axis=_axis(axis), keepdims=keepdims))


def any(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Whether some element along ``axis`` is true (non-zero)."""
    return to_array(np.any(x, axis=_axis(axis), keepdims=keepdims))


@fused
def _cumulative(x, axis, dtype, include_initial: bool, product: bool):
    scan = np.cumprod if product else np.cumsum
    out = scan(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(out.shape)
        shape[axis] = 1
        first = np.ones(tuple(shape), out.dtype) if product else np.zeros(tuple(shape), out.dtype)
        out = np.concatenate([first, out], axis=axis)
    return out


def _scan(x, axis, dtype, include_initial, product: bool):
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"axis is required for an array of dimension {x.ndim}")
        axis = 0
    if x.ndim == 0:
        raise ValueError("cumulative functions need an array of at least one dimension")
    if not -x.ndim <= axis < x.ndim:
        raise IndexError(f"axis {axis} is out of bounds for an array of dimension {x.ndim}")
    return _cumulative(x, axis % x.ndim, _dt(dtype), bool(include_initial), product)


def cumulative_sum(x: Array, /, *, axis: Optional[int] = None, dtype=None, include_initial: bool = False) -> Array:
    """Running sum along ``axis`` (optional for 1-D); ``include_initial`` prepends a zero."""
    return _scan(x, axis, dtype, include_initial, product=False)


def cumulative_prod(x: Array, /, *, axis: Optional[int] = None, dtype=None, include_initial: bool = False) -> Array:
    """Running product along ``axis`` (optional for 1-D); ``include_initial`` prepends a one."""
    return _scan(x, axis, dtype, include_initial, product=True)


def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Optional[Array] = None,
         append: Optional[Array] = None) -> Array:
    """``n``-th forward difference along ``axis`` (after joining ``prepend``/``append``)."""
    kwargs = {}
    if prepend is not None:
        kwargs["prepend"] = prepend
    if append is not None:
        kwargs["append"] = append
    return np.diff(x, n=n, axis=axis, **kwargs)
