"""Reductions, windows and sorting: ``stablehlo.reduce``, ``reduce_window``, ``sort``."""

from __future__ import annotations

from typing import Callable, Sequence

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir import shapes
from ...ir.attrs import i64_array, i64_attr
from ..errors import ShapeError, describe
from ..traced import TracedRArray
from ._core import build_region, emit, results_of

Body = Callable[..., Sequence[TracedRArray]]


def reduce(
    operands: Sequence[TracedRArray],
    inits: Sequence[TracedRArray],
    dims: Sequence[int],
    body: Body,
) -> list[TracedRArray]:
    """``stablehlo.reduce`` of ``operands`` over ``dims``. ``body(acc..., x...)`` combines
    scalars (0-d traced values) and returns the new accumulators."""
    dims = tuple(sorted(int(d) for d in dims))
    x0 = operands[0]
    for x in operands:
        if x.shape != x0.shape:
            raise ShapeError("reduce: operands differ in shape: " + ", ".join(describe(o) for o in operands))
    for x, i in zip(operands, inits):
        if i.shape != () or i.dtype != x.dtype:
            raise ShapeError(f"reduce: init {describe(i)} does not fit operand {describe(x)}")
    shape = shapes.reduce(x0.shape, dims)
    specs = [(shape, x.dtype) for x in operands]
    op = emit("stablehlo.reduce", [*operands, *inits], specs, {"dimensions": i64_array(dims)}, regions=1)
    scal = [((), x.dtype) for x in operands]
    build_region(op, 0, scal + scal, body)
    return results_of(op, specs)


def reduce_window(
    operands: Sequence[TracedRArray],
    inits: Sequence[TracedRArray],
    window: Sequence[int],
    strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    body: Body,
    base_dilations: Sequence[int] | None = None,
    window_dilations: Sequence[int] | None = None,
) -> list[TracedRArray]:
    """``stablehlo.reduce_window``: a reduction over every (strided, padded) window."""
    x0 = operands[0]
    n = x0.ndim
    base_dilations = base_dilations or [1] * n
    window_dilations = window_dilations or [1] * n
    shape = shapes.reduce_window(x0.shape, window, strides, padding, base_dilations, window_dilations)
    if 0 in shape and 0 not in x0.shape:
        raise ShapeError(f"reduce_window: window {list(window)} larger than padded {describe(x0)}")
    specs = [(shape, x.dtype) for x in operands]
    op = emit("stablehlo.reduce_window", [*operands, *inits], specs,
              B.reduce_window_attrs(window, strides, padding, base_dilations, window_dilations), regions=1)
    scal = [((), x.dtype) for x in operands]
    build_region(op, 0, scal + scal, body)
    return results_of(op, specs)


def sort(operands: Sequence[TracedRArray], dim: int, comparator: Body, *, stable: bool = True) -> list[TracedRArray]:
    """``stablehlo.sort`` of same-shaped operands along ``dim``; ``comparator(a0, b0, a1, b1, ...)``
    returns a bool scalar: whether element a goes before b."""
    specs = [(x.shape, x.dtype) for x in operands]
    op = emit("stablehlo.sort", list(operands), specs,
              {"dimension": i64_attr(dim), "is_stable": ir.BoolAttr.get(stable)}, regions=1)
    scal = []
    for x in operands:
        scal += [((), x.dtype), ((), x.dtype)]
    build_region(op, 0, scal, comparator)
    return results_of(op, specs)
