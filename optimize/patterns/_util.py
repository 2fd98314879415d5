"""Analyses shared by the pattern families: reduction identities of init values, broadcast
sources, and value ranges of integer index computations. Types, constants, op facts,
evaluation, loops and builders come from ``reactant.ir``."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from ...ir.attrs import i64_list, int_attr_value, read_constant, scalar_value, splat_value
from ...ir.loops import int_range, loop_counter_range  # noqa: F401  (int_range: used by the patterns)
from ...ir.opinfo import reduce_identity
from ...ir.types import element_type_of, np_dtype, shape_of
from ...ir.values import defining_op


def is_reduce_identity(init: ir.Value, kind: str) -> bool:
    """``init`` is the identity of ``kind`` (for add, either float zero: XLA treats a reduce's
    init as an identity that it may apply any number of times)."""
    ident = reduce_identity(kind, element_type_of(init))
    if ident is None:
        return False
    s = scalar_value(init)
    if s is None:
        return False
    if isinstance(ident, float):
        return float(s) == ident
    return s == ident


def broadcast_source(v: ir.Value):
    """For ``v = broadcast_in_dim(x, dims)``: (x, dims); else None."""
    op = defining_op(v)
    if op is None or op.operation.name != "stablehlo.broadcast_in_dim":
        return None
    return op.operands[0], i64_list(op.attributes["broadcast_dimensions"])


def is_rank0_broadcast(v: ir.Value):
    """The rank-0 tensor ``s`` when ``v`` is ``broadcast_in_dim(s, [])`` or a rank-0 value;
    a splat constant gives None (use scalar_value for those)."""
    if len(shape_of(v)) == 0 and splat_value(v) is None:
        return v
    b = broadcast_source(v)
    if b is not None and len(shape_of(b[0])) == 0:
        return b[0]
    return None


