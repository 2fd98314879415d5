"""Data-movement StableHLO ops (broadcast, reshape, transpose, slices, concatenate, pad,
reverse, iota): the Ops layer's checks over ``reactant.ir.build``'s builders. An op that would
be an identity is not built: the operand itself (the same traced array) is returned."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...ir import build as B
from ...ir import shapes
from ..context import current
from ..errors import IndexError_, ShapeError, describe
from ..traced import TracedRArray
from ._core import build


def broadcast_in_dim(x: TracedRArray, shape: Sequence[int], dims: Sequence[int]) -> TracedRArray:
    """``stablehlo.broadcast_in_dim``: operand dim i goes to result dim ``dims[i]``."""
    shape, dims = tuple(int(s) for s in shape), tuple(int(d) for d in dims)
    if len(dims) != x.ndim or any(not (x.shape[i] in (1, shape[d])) for i, d in enumerate(dims)):
        raise ShapeError(f"cannot broadcast {describe(x)} to shape {list(shape)} along dims {list(dims)}")
    if shape == x.shape and dims == tuple(range(x.ndim)):
        return x
    return build(B.broadcast_in_dim, x.value, shape, dims)


def reshape(x: TracedRArray, shape: Sequence[int]) -> TracedRArray:
    """``stablehlo.reshape`` (row-major) to a fully static shape."""
    shape = tuple(int(s) for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise ShapeError(f"cannot reshape {describe(x)} ({x.size} elements) to {list(shape)}")
    if shape == x.shape:
        return x
    return build(B.reshape, x.value, shape)


def transpose(x: TracedRArray, perm: Sequence[int]) -> TracedRArray:
    """``stablehlo.transpose``: result dim i is operand dim ``perm[i]``."""
    perm = tuple(int(p) for p in perm)
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"transpose: {list(perm)} is not a permutation of the axes of {describe(x)}")
    if perm == tuple(range(x.ndim)):
        return x
    return build(B.transpose, x.value, perm)


def slice(x: TracedRArray, start: Sequence[int], limit: Sequence[int], strides: Sequence[int] | None = None) -> TracedRArray:  # noqa: A001
    """``stablehlo.slice`` with static start/limit/strides (limit exclusive, strides >= 1)."""
    strides = strides or [1] * x.ndim
    start, limit, strides = (tuple(int(v) for v in t) for t in (start, limit, strides))
    if not (len(start) == len(limit) == len(strides) == x.ndim) or any(
        not (0 <= a <= b <= n) or s < 1 for a, b, s, n in zip(start, limit, strides, x.shape)
    ):
        raise IndexError_(f"slice [{start}:{limit}:{strides}] out of range for {describe(x)}")
    if shapes.slice(x.shape, start, limit, strides) == x.shape:
        return x
    return build(B.slice, x.value, start, limit, strides)


def dynamic_slice(x: TracedRArray, starts: Sequence[TracedRArray], sizes: Sequence[int]) -> TracedRArray:
    """``stablehlo.dynamic_slice``: scalar integer starts (clamped into range by XLA)."""
    sizes = tuple(int(s) for s in sizes)
    if len(starts) != x.ndim or len(sizes) != x.ndim or any(s > n for s, n in zip(sizes, x.shape)):
        raise ShapeError(f"dynamic_slice of sizes {list(sizes)} does not fit {describe(x)}")
    return build(B.dynamic_slice, x.value, [s.value for s in starts], sizes)


def dynamic_update_slice(x: TracedRArray, update: TracedRArray, starts: Sequence[TracedRArray]) -> TracedRArray:
    """``stablehlo.dynamic_update_slice``: write ``update`` into ``x`` at scalar starts."""
    if update.dtype != x.dtype or update.ndim != x.ndim or any(u > n for u, n in zip(update.shape, x.shape)):
        raise ShapeError(f"dynamic_update_slice: update {describe(update)} does not fit {describe(x)}")
    return build(B.dynamic_update_slice, x.value, update.value, [s.value for s in starts])


def concatenate(xs: Sequence[TracedRArray], dim: int) -> TracedRArray:
    """``stablehlo.concatenate`` along ``dim`` (same dtype, other dims equal)."""
    xs = list(xs)
    if len(xs) == 1:
        return xs[0]
    x0 = xs[0]
    for x in xs[1:]:
        if x.dtype != x0.dtype or x.ndim != x0.ndim or any(
            a != b for i, (a, b) in enumerate(zip(x.shape, x0.shape)) if i != dim
        ):
            raise ShapeError(
                f"concatenate along axis {dim}: shapes do not fit: " + ", ".join(describe(y) for y in xs)
            )
    return build(B.concatenate, [x.value for x in xs], dim)


def pad(x: TracedRArray, value: TracedRArray, low: Sequence[int], high: Sequence[int], interior: Sequence[int] | None = None) -> TracedRArray:
    """``stablehlo.pad`` with a scalar padding value; negative low/high crop."""
    interior = interior or [0] * x.ndim
    low, high, interior = (tuple(int(v) for v in t) for t in (low, high, interior))
    shape = shapes.pad(x.shape, low, high, interior)
    if value.shape != () or value.dtype != x.dtype or any(s < 0 for s in shape):
        raise ShapeError(f"pad of {describe(x)} with {describe(value)} low={low} high={high} is invalid")
    if not any(low) and not any(high) and not any(interior):
        return x
    return build(B.pad, x.value, value.value, low, high, interior)


def reverse(x: TracedRArray, dims: Sequence[int]) -> TracedRArray:
    """``stablehlo.reverse`` along ``dims``."""
    dims = tuple(sorted(int(d) for d in dims))
    if not dims:
        return x
    return build(B.reverse, x.value, dims)


def iota(shape: Sequence[int], dtype, dim: int = 0) -> TracedRArray:
    """``stablehlo.iota``: 0, 1, 2... along ``dim``."""
    shape = tuple(int(s) for s in shape)
    return build(B.iota, current().tensor_type(shape, np.dtype(dtype)), dim)

