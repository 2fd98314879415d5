"""Reductions, windows and sorting (``stablehlo.reduce``, ``reduce_window``, ``sort``): the
Ops layer's checks over ``reactant.ir.build``'s builders, with bodies traced from Python."""

from __future__ import annotations

from typing import Callable, Sequence

from ...ir import build as B
from ...ir import shapes
from ..errors import ShapeError, describe
from ..traced import TracedRArray
from ._core import body as traced_body
from ._core import build_n

Body = Callable[..., Sequence[TracedRArray]]


def reduce(
    operands: Sequence[TracedRArray],
    inits: Sequence[TracedRArray],
    dims: Sequence[int],
    body: Body,
) -> list[TracedRArray]:
    """``stablehlo.reduce`` of ``operands`` over ``dims``. ``body(acc..., x...)`` combines
    scalars (0-d traced values) and returns the new accumulators."""
    x0 = operands[0]
    for x in operands:
        if x.shape != x0.shape:
            raise ShapeError("reduce: operands differ in shape: " + ", ".join(describe(o) for o in operands))
    for x, i in zip(operands, inits):
        if i.shape != () or i.dtype != x.dtype:
            raise ShapeError(f"reduce: init {describe(i)} does not fit operand {describe(x)}")
    return build_n(B.variadic_reduce, [x.value for x in operands], [i.value for i in inits], dims, traced_body(body))


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
    """``stablehlo.reduce_window``: a reduction (``body`` as for ``reduce``) over every (strided,
    padded) window."""
    x0 = operands[0]
    n = x0.ndim
    base_dilations = base_dilations or [1] * n
    window_dilations = window_dilations or [1] * n
    shape = shapes.reduce_window(x0.shape, window, strides, padding, base_dilations, window_dilations)
    if 0 in shape and 0 not in x0.shape:
        raise ShapeError(f"reduce_window: window {list(window)} larger than padded {describe(x0)}")
    return build_n(B.variadic_reduce_window, [x.value for x in operands], [i.value for i in inits], window, strides,
                   base_dilations, window_dilations, padding, traced_body(body))


def sort(operands: Sequence[TracedRArray], dim: int, comparator: Body, *, stable: bool = True) -> list[TracedRArray]:
    """``stablehlo.sort`` of same-shaped operands along ``dim``; ``comparator(a0, b0, a1, b1, ...)``
    returns a bool scalar: whether element a goes before b."""
    return build_n(B.sort, [x.value for x in operands], dim, traced_body(comparator), stable=stable)
