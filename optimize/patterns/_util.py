"""Analyses shared by the pattern families: reduction identities of init values, broadcast
sources, and value ranges of integer index computations. Types, constants, op facts,
evaluation, loops and builders come from ``reactant.ir``."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from ...ir.attrs import i64_list, int_attr_value, read_constant, scalar_value, splat_value
from ...ir.loops import loop_counter_range
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


def _type_bounds(dt) -> tuple[int, int] | None:
    if dt == np.bool_:
        return 0, 1
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(info.min), int(info.max)
    return None


def int_range(v: ir.Value, _depth: int = 0, env: dict | None = None) -> tuple[int, int] | None:
    """Inclusive bounds (lo, hi) of an integer tensor's elements, from constants, iotas and
    interval arithmetic through layout ops and overflow-free arithmetic; None if unknown.
    ``env`` maps values (e.g. a loop's induction variable) to known bounds."""
    if env and v in env:
        return env[v]
    if not isinstance(v.type, ir.RankedTensorType):  # tokens, tuples
        return None
    dt = np_dtype(v.type.element_type)
    if dt is None or dt.kind not in "iu" or _depth > 32:
        return None
    tb = _type_bounds(dt)
    op = defining_op(v)
    if op is None:
        return loop_counter_range(v)
    name = op.operation.name
    if name == "stablehlo.constant":
        a = read_constant(v, 1 << 16)
        if a is None or a.size == 0:
            return None
        return int(a.min()), int(a.max())
    if name == "stablehlo.iota":
        n = shape_of(v)[int_attr_value(op.attributes["iota_dimension"])]
        if n == 0 or n - 1 > tb[1]:
            return None
        return 0, n - 1
    if name in ("stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.transpose",
                "stablehlo.slice", "stablehlo.reverse", "stablehlo.dynamic_slice", "stablehlo.pad",
                "stablehlo.concatenate", "stablehlo.maximum", "stablehlo.minimum", "stablehlo.select",
                "stablehlo.clamp", "stablehlo.add", "stablehlo.subtract", "stablehlo.multiply",
                "stablehlo.negate", "stablehlo.convert", "stablehlo.remainder"):
        pass
    else:
        return None

    def r(x):
        return int_range(x, _depth + 1, env)

    def fits(lo, hi):
        return (lo, hi) if tb[0] <= lo and hi <= tb[1] else None

    ops_ = list(op.operands)
    if name in ("stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.transpose",
                "stablehlo.slice", "stablehlo.reverse", "stablehlo.dynamic_slice"):
        return r(ops_[0])
    if name == "stablehlo.convert":
        src = r(ops_[0])
        return None if src is None else fits(*src)
    if name == "stablehlo.remainder":  # truncated: sign of the dividend, |result| < |divisor|
        a, b = r(ops_[0]) or tb, r(ops_[1])  # an unknown dividend still has its type's bounds
        if b is None or b[0] <= 0:
            return None
        m = b[1] - 1
        return (0 if a[0] >= 0 else max(a[0], -m), min(a[1], m) if a[1] >= 0 else 0)
    rs = [r(x) for x in (ops_[1:] if name == "stablehlo.select" else ops_)]
    if any(x is None for x in rs):
        return None
    if name in ("stablehlo.pad", "stablehlo.concatenate", "stablehlo.select"):
        return min(x[0] for x in rs), max(x[1] for x in rs)
    if name == "stablehlo.maximum":
        return max(rs[0][0], rs[1][0]), max(rs[0][1], rs[1][1])
    if name == "stablehlo.minimum":
        return min(rs[0][0], rs[1][0]), min(rs[0][1], rs[1][1])
    if name == "stablehlo.clamp":
        (l0, h0), (l1, h1), (l2, h2) = rs
        lo = min(max(l1, l0), l2)
        hi = min(max(h1, h0), h2)
        return (min(lo, hi), max(lo, hi)) if lo <= hi else None
    if name == "stablehlo.add":
        return fits(rs[0][0] + rs[1][0], rs[0][1] + rs[1][1])
    if name == "stablehlo.subtract":
        return fits(rs[0][0] - rs[1][1], rs[0][1] - rs[1][0])
    if name == "stablehlo.negate":
        return fits(-rs[0][1], -rs[0][0])
    if name == "stablehlo.multiply":
        c = [a * b for a in rs[0] for b in rs[1]]
        return fits(min(c), max(c))
    return None
