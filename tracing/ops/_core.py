"""Op emission and constants: the bottom of the Ops layer.

Ops are created with ``ir.Operation.create`` (2-3x faster than the generated builders) at
the trace's current insertion point, located at the user's source line. Result types come
from our shape rules, never from MLIR inference, so shapes stay plain Python tuples.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from jaxlib.mlir import ir

from ...ir.attrs import dense_attr
from ..context import current
from ..dtypes import canonical
from ..errors import ShapeError, describe
from ..traced import TracedRArray, wrap

Spec = tuple[tuple[int, ...], np.dtype]


def emit(
    name: str,
    operands: Sequence[TracedRArray],
    results: Sequence[Spec],
    attributes: dict | None = None,
    regions: int = 0,
) -> ir.Operation:
    """Create op ``name`` with result (shape, dtype) specs; returns the ir.Operation."""
    tc = current()
    return ir.Operation.create(
        name,
        results=[tc.tensor_type(s, d) for s, d in results],
        operands=[o.value for o in operands],
        attributes=attributes,
        regions=regions,
        loc=tc.location(),
        ip=tc.ip,
    )


def emit1(name, operands, shape, dtype, attributes=None) -> TracedRArray:
    """Create a single-result op and wrap its result."""
    op = emit(name, operands, [(shape, dtype)], attributes)
    return wrap(op.result, shape, dtype)


def results_of(op: ir.Operation, specs: Sequence[Spec]) -> list[TracedRArray]:
    return [wrap(r, s, d) for r, (s, d) in zip(op.results, specs)]


# -- constants -----------------------------------------------------------------------------
def constant(value, dtype=None) -> TracedRArray:
    """A stablehlo.constant holding ``value`` (array-like) as ``dtype``."""
    arr = np.asarray(value, dtype=dtype)
    dt = canonical(arr.dtype)
    tc = current()
    ttype = tc.tensor_type(arr.shape, dt)
    attr = dense_attr(arr, ttype)
    op = ir.Operation.create(
        "stablehlo.constant",
        results=[ttype],
        attributes={"value": attr},
        loc=tc.location(),
        ip=tc.ip,
    )
    return wrap(op.result, arr.shape, dt)


def full(shape: tuple[int, ...], fill, dtype) -> TracedRArray:
    """A constant of ``shape`` filled with ``fill``: a scalar constant broadcast (cheap IR)."""
    from .structural import broadcast_in_dim

    dt = np.dtype(dtype)
    scalar = constant(np.asarray(fill, dtype=dt))
    if shape == ():
        return scalar
    return broadcast_in_dim(scalar, shape, ())


def check_same(opname: str, *xs: TracedRArray) -> None:
    """Elementwise StableHLO ops need identical shapes and dtypes."""
    s, d = xs[0].shape, xs[0].dtype
    for x in xs[1:]:
        if x.shape != s or x.dtype != d:
            raise ShapeError(
                f"{opname}: operands must have the same shape and dtype, got "
                + ", ".join(describe(y) for y in xs)
            )



# -- regions ----------------------------------------------------------------------------------
def build_region(op: ir.Operation, index: int, arg_specs: Sequence[Spec], body) -> list[TracedRArray]:
    """Fill region ``index`` of ``op`` with one block: args of ``arg_specs``; ``body(*args)``
    returns the values for ``stablehlo.return``. Returns those values."""
    tc = current()
    block = op.regions[index].blocks.append(*[tc.tensor_type(s, d) for s, d in arg_specs])
    args = [wrap(a, s, d) for a, (s, d) in zip(block.arguments, arg_specs)]
    with tc.insert_into(block):
        outs = body(*args)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        ir.Operation.create("stablehlo.return", operands=[o.value for o in outs],
                            loc=tc.location(), ip=tc.ip)
    return outs
