"""Manipulation functions (shapes, axes, joining and splitting). They call the NumPy function
of the same meaning, which runs eagerly on device arrays and is recorded inside a trace."""

from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np

from ._base import Array, host, is_array, to_array, tracing

Axes = Union[int, tuple[int, ...]]


def broadcast_arrays(*arrays: Array) -> list[Array]:
    """The arrays broadcast to their common shape."""
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def broadcast_to(x: Array, /, shape: tuple[int, ...]) -> Array:
    """``x`` broadcast to ``shape``."""
    return to_array(np.broadcast_to(x, tuple(shape)))


def concat(arrays: Sequence[Array], /, *, axis: Optional[int] = 0) -> Array:
    """The arrays joined along ``axis`` (``None``: flattened first), promoted to a common
    dtype."""
    arrays = list(arrays)
    if axis is None:
        arrays = [np.reshape(a, (-1,)) for a in arrays]
        axis = 0
    return np.concatenate(arrays, axis=axis)


def expand_dims(x: Array, /, axis: int = 0) -> Array:
    """``x`` with a new axis of length 1 at ``axis`` (``-x.ndim-1 <= axis <= x.ndim``)."""
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise IndexError(f"axis {axis} is out of bounds for a result of dimension {x.ndim + 1}")
    return np.expand_dims(x, axis)


def flip(x: Array, /, *, axis: Optional[Axes] = None) -> Array:
    """``x`` reversed along ``axis`` (all axes by default)."""
    return np.flip(x, axis=axis)


def moveaxis(x: Array, source: Axes, destination: Axes, /) -> Array:
    """``x`` with axes moved from ``source`` to ``destination``."""
    return np.moveaxis(x, source, destination)


def permute_dims(x: Array, /, axes: tuple[int, ...]) -> Array:
    """``x`` with its axes permuted (negative axes count from the end)."""
    axes = tuple(a + x.ndim if a < 0 else a for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"axes {axes} is not a permutation of the {x.ndim} axes")
    return np.transpose(x, axes)


def repeat(x: Array, repeats: Union[int, Array], /, *, axis: Optional[int] = None) -> Array:
    """Each element repeated ``repeats`` times along ``axis`` (``None``: of flattened ``x``).
    An array of repeats sets the result's length: eagerly it is read on the host; inside a
    trace it must be a NumPy array or a Python int."""
    if is_array(repeats) and not tracing():
        repeats = [int(r) for r in host(repeats).reshape(-1)]
        if len(repeats) == 1:
            repeats = repeats[0]
    return np.repeat(x, repeats, axis=axis)


def reshape(x: Array, /, shape: tuple[int, ...], *, copy: Optional[bool] = None) -> Array:
    """``x`` with a new shape (one dimension may be -1). ``copy=False`` is refused: our arrays
    have no views, so the result never shares ``x``'s memory."""
    if copy is False:
        raise ValueError("reshape(copy=False): device arrays have no views; use copy=None")
    return np.reshape(x, tuple(shape))


def roll(x: Array, /, shift: Union[int, tuple[int, ...]], *, axis: Optional[Axes] = None) -> Array:
    """``x`` rolled by ``shift`` along ``axis`` (``None``: flattened, shape kept)."""
    return np.roll(x, shift, axis=axis)


def squeeze(x: Array, /, axis: Axes) -> Array:
    """``x`` without the axes ``axis`` (each must have length 1)."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise IndexError(f"axis {a} is out of bounds for an array of dimension {x.ndim}")
        if x.shape[a] != 1:
            raise ValueError(f"cannot squeeze axis {a} of length {x.shape[a]}")
    return np.squeeze(x, axis=axes)


def stack(arrays: Sequence[Array], /, *, axis: int = 0) -> Array:
    """The arrays (of one shape) joined along a new axis."""
    return np.stack(list(arrays), axis=axis)


def tile(x: Array, repetitions: tuple[int, ...], /) -> Array:
    """``x`` repeated ``repetitions`` times along each axis."""
    return np.tile(x, tuple(repetitions))


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``, as a tuple."""
    if not -x.ndim <= axis < x.ndim:
        raise IndexError(f"axis {axis} is out of bounds for an array of dimension {x.ndim}")
    moved = np.moveaxis(x, axis, 0)
    return tuple(moved[i] for i in range(moved.shape[0]))
