"""Searching, sorting, set and indexing functions."""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from ._base import Array, data_dependent, fused, host, to_array

_SIZE_HINT = ("inside a compiled function use np.nonzero / np.unique with a static size= "
              "(results padded to that size), or call it outside the compiled function")


def argmax(x: Array, /, *, axis: Optional[int] = None, keepdims: bool = False) -> Array:
    """Index of the first maximum along ``axis`` (of flattened ``x`` for ``None``)."""
    return np.argmax(x, axis=axis, keepdims=keepdims)


def argmin(x: Array, /, *, axis: Optional[int] = None, keepdims: bool = False) -> Array:
    """Index of the first minimum along ``axis`` (of flattened ``x`` for ``None``)."""
    return np.argmin(x, axis=axis, keepdims=keepdims)


def count_nonzero(x: Array, /, *, axis=None, keepdims: bool = False) -> Array:
    """Number of non-zero elements along ``axis`` (int64)."""
    return to_array(np.count_nonzero(x, axis=axis, keepdims=keepdims))


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Indices of the non-zero elements, one int64 array per axis. Data-dependent length:
    computed on the host eagerly; refused inside a trace."""
    data_dependent("nonzero", _SIZE_HINT)
    if x.ndim == 0:
        raise ValueError("nonzero of a 0-d array is not defined; use expand_dims first")
    return tuple(to_array(i.astype(np.int64), device=x.device) for i in np.nonzero(host(x)))


def searchsorted(x1: Array, x2: Array, /, *, side: str = "left", sorter: Optional[Array] = None) -> Array:
    """Where ``x2``'s elements would be inserted into the sorted 1-D ``x1`` (int64)."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        x1 = np.take(x1, sorter)
    return np.searchsorted(x1, x2, side=side)


def where(condition: Array, x1, x2, /) -> Array:
    """``x1`` where ``condition`` holds, else ``x2`` (broadcast; scalars promote weakly)."""
    return to_array(np.where(condition, x1, x2))


@fused
def _sort_descending(x, axis: int, indices: bool):
    # a stable descending order: stable ascending order of the reversed array, whose ties
    # come out last-first, reversed back
    n = x.shape[axis]
    order = np.flip(np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable"), axis=axis)
    order = (n - 1) - order
    return order if indices else np.take_along_axis(x, order, axis=axis)


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Indices that sort ``x`` along ``axis`` (ties in their original order)."""
    if descending:
        return _sort_descending(x, axis, True)
    return np.argsort(x, axis=axis, kind="stable")


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """``x`` sorted along ``axis`` (NaNs last when ascending, first when descending)."""
    if descending:
        return _sort_descending(x, axis, False)
    return np.sort(x, axis=axis, kind="stable")


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _unique(x: Array, name: str):
    # the number of distinct values is the result's length: a data-dependent shape
    data_dependent(name, _SIZE_HINT)
    return host(x), (lambda a: to_array(a, device=x.device))


def unique_all(x: Array, /) -> UniqueAllResult:
    """Distinct values (NaNs each distinct), first indices, inverse indices (shaped like
    ``x``) and counts. Eager only (data-dependent length)."""
    h, dev = _unique(x, "unique_all")
    r = np.unique_all(h)
    return UniqueAllResult(dev(r.values), dev(r.indices.astype(np.int64)),
                           dev(r.inverse_indices.astype(np.int64).reshape(x.shape)), dev(r.counts.astype(np.int64)))


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """Distinct values and their counts. Eager only (data-dependent length)."""
    h, dev = _unique(x, "unique_counts")
    r = np.unique_counts(h)
    return UniqueCountsResult(dev(r.values), dev(r.counts.astype(np.int64)))


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """Distinct values and, shaped like ``x``, each element's index among them. Eager only."""
    h, dev = _unique(x, "unique_inverse")
    r = np.unique_inverse(h)
    return UniqueInverseResult(dev(r.values), dev(r.inverse_indices.astype(np.int64).reshape(x.shape)))


def unique_values(x: Array, /) -> Array:
    """Distinct values, sorted (NaNs each distinct). Eager only (data-dependent length)."""
    h, dev = _unique(x, "unique_values")
    return dev(np.unique_values(h))


def take(x: Array, indices: Array, /, *, axis: Optional[int] = None) -> Array:
    """Elements of ``x`` at the integer ``indices`` along ``axis`` (needed unless ``x`` is 1-D)."""
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take needs axis= for an array of dimension {x.ndim}")
        axis = 0
    return np.take(x, indices, axis=axis)


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """Elements of ``x`` at ``indices`` (same rank as ``x``) along ``axis``."""
    return np.take_along_axis(x, indices, axis=axis)

