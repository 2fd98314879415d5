"""``stablehlo.gather`` and ``stablehlo.scatter``: the Ops layer's checks over
``reactant.ir.build``'s builders (their shape rules: ``reactant.ir.shapes``)."""

from __future__ import annotations

from typing import Callable, Sequence

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.contracts import IN_BOUNDS
from ..errors import ShapeError, describe
from ..traced import TracedRArray
from ._core import body, build


def gather(
    operand: TracedRArray,
    indices: TracedRArray,
    *,
    offset_dims: Sequence[int],
    collapsed_slice_dims: Sequence[int],
    start_index_map: Sequence[int],
    index_vector_dim: int,
    slice_sizes: Sequence[int],
    operand_batching_dims: Sequence[int] = (),
    start_indices_batching_dims: Sequence[int] = (),
    indices_are_sorted: bool = False,
) -> TracedRArray:
    """``stablehlo.gather``: slices of ``slice_sizes`` starting at each index vector."""
    dropped = set(collapsed_slice_dims) | set(operand_batching_dims)
    n_offsets = sum(1 for d in range(len(slice_sizes)) if d not in dropped)
    if len(slice_sizes) != operand.ndim or any(s > n for s, n in zip(slice_sizes, operand.shape)) or (
        sorted(offset_dims) != list(offset_dims) or len(offset_dims) != n_offsets
    ):
        raise ShapeError(f"gather: slice sizes {list(slice_sizes)} do not fit {describe(operand)}")
    return build(B.gather, operand.value, indices.value, offset_dims=offset_dims,
                 collapsed_slice_dims=collapsed_slice_dims, start_index_map=start_index_map,
                 index_vector_dim=index_vector_dim, slice_sizes=slice_sizes,
                 operand_batching_dims=operand_batching_dims,
                 start_indices_batching_dims=start_indices_batching_dims, indices_are_sorted=indices_are_sorted)


def scatter(
    operand: TracedRArray,
    indices: TracedRArray,
    updates: TracedRArray,
    combine: Callable[[TracedRArray, TracedRArray], TracedRArray] | None,
    *,
    update_window_dims: Sequence[int],
    inserted_window_dims: Sequence[int],
    scatter_dims_to_operand_dims: Sequence[int],
    index_vector_dim: int,
    input_batching_dims: Sequence[int] = (),
    scatter_indices_batching_dims: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    in_bounds: bool = False,
) -> TracedRArray:
    """``stablehlo.scatter``: combine ``updates`` into ``operand`` at ``indices``.
    ``combine(old, new)`` builds the update region; ``None`` means overwrite (set).
    ``in_bounds``: every update lands inside the operand by the caller's contract (NumPy
    indexing: an out-of-range index is an error there), recorded as the unit attribute
    ``reactant.indices_in_bounds`` so derivative rules need no bounds mask."""
    if updates.dtype != operand.dtype:
        raise ShapeError(f"scatter: updates {describe(updates)} do not match operand {describe(operand)}")
    return build(B.scatter, operand.value, indices.value, updates.value, update_window_dims=update_window_dims,
                 inserted_window_dims=inserted_window_dims, scatter_dims_to_operand_dims=scatter_dims_to_operand_dims,
                 index_vector_dim=index_vector_dim, input_batching_dims=input_batching_dims,
                 scatter_indices_batching_dims=scatter_indices_batching_dims,
                 combiner=None if combine is None else body(combine), indices_are_sorted=indices_are_sorted,
                 unique_indices=unique_indices, extra_attributes={IN_BOUNDS: ir.UnitAttr.get()} if in_bounds else None)
