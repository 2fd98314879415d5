"""The bottom of the Ops layer: running ``reactant.ir.build``'s builders in the trace.

Every op is built by its builder (one per StableHLO op, with its shape rule) at the trace's
current insertion point, located at the user's source line (``TraceContext.location``); its
results come back as traced arrays whose shape and dtype are read from their types (cached
per type, so shapes stay plain Python tuples). Region bodies are Python functions on traced
scalars (``body``).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from jaxlib.mlir import ir

from ...ir import build as B
from ..context import TraceContext, current
from ..dtypes import canonical
from ..errors import ShapeError, describe
from ..traced import TracedRArray, wrap


def result(v: ir.Value, tc: TraceContext | None = None) -> TracedRArray:
    """The traced array of value ``v`` (its shape and dtype read from its type)."""
    shape, dtype = (tc or current()).spec(v.type)
    return wrap(v, shape, dtype)


def build(builder: Callable[..., ir.Value], *args, **kwargs) -> TracedRArray:
    """``builder(*args, **kwargs)`` (``args`` hold ``ir.Value``s) at the trace's insertion point,
    located at the user's line; its result as a traced array."""
    tc = current()
    return result(builder(*args, loc=tc.location(), ip=tc.ip, **kwargs), tc)


def build_n(builder: Callable[..., Sequence[ir.Value]], *args, **kwargs) -> list[TracedRArray]:
    """``build`` for a builder of several results."""
    tc = current()
    return [result(v, tc) for v in builder(*args, loc=tc.location(), ip=tc.ip, **kwargs)]


def body(fn: Callable[..., Any]) -> Callable[[ir.Block], list[ir.Value]]:
    """A region body for a builder: ``fn`` traced into the block on its arguments (traced
    scalars); it returns a traced array or a list of them, the block's results."""
    def build_block(block: ir.Block) -> list[ir.Value]:
        tc = current()
        args = [result(a, tc) for a in block.arguments]
        with tc.insert_into(block):
            outs = fn(*args)
            outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
            values = [o.value for o in outs]  # (a view's value is read inside the block)
            tc.location()  # back on the op's line: the handles made next are located there
        return values

    return build_block


# -- constants -----------------------------------------------------------------------------
def constant(value, dtype=None) -> TracedRArray:
    """A stablehlo.constant holding ``value`` (array-like) as ``dtype``."""
    arr = np.asarray(value, dtype=dtype)
    dt = canonical(arr.dtype)
    tc = current()
    v = B.constant(arr, tc.tensor_type(arr.shape, dt), loc=tc.location(), ip=tc.ip)
    return wrap(v, arr.shape, dt)


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
