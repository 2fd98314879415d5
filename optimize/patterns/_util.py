"""Small helpers shared by the pattern families: reading constants and types, and building
ops at the rewriter's insertion point. Keep each helper here once; families import them."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from jaxlib.mlir import ir


def defining_op(v: ir.Value):
    """The op that produces ``v`` (an OpView), or None for a block argument."""
    owner = v.owner
    return None if isinstance(owner, ir.Block) else owner


def op_name(v: ir.Value) -> str | None:
    op = defining_op(v)
    return None if op is None else op.operation.name


def tensor_type(v: ir.Value) -> ir.RankedTensorType:
    return ir.RankedTensorType(v.type)


def shape_of(v: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(v.type).shape)


def element_type(v: ir.Value) -> ir.Type:
    return ir.RankedTensorType(v.type).element_type


def is_float_type(t: ir.Type) -> bool:
    return isinstance(t, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))


def is_integer_type(t: ir.Type) -> bool:
    """Integers of any width, bool (i1) included."""
    return isinstance(t, ir.IntegerType)


def splat_value(v: ir.Value):
    """The Python scalar of a splat ``stablehlo.constant`` (or None)."""
    op = defining_op(v)
    if op is None or op.operation.name != "stablehlo.constant":
        return None
    attr = op.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or not attr.is_splat:
        return None
    s = attr.get_splat_value()  # bindings downcast: FloatAttr / IntegerAttr / BoolAttr
    if isinstance(s, (ir.FloatAttr, ir.IntegerAttr, ir.BoolAttr)):
        return s.value
    return None


def is_splat(v: ir.Value, value) -> bool:
    s = splat_value(v)
    return s is not None and s == value and not (isinstance(s, float) and np.signbit(s) != np.signbit(value))


def i64_list(attr: ir.Attribute) -> list[int]:
    """Values of a DenseI64ArrayAttr (e.g. permutation, broadcast_dimensions)."""
    return list(ir.DenseI64ArrayAttr(attr))


def i64_array(values: Sequence[int]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(x) for x in values])


def ranked(shape: Sequence[int], elem: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), elem)


def create(name: str, operands: Sequence[ir.Value], result_types: Sequence[ir.Type],
           attributes: dict | None = None, *, loc: ir.Location, regions: int = 0) -> ir.Operation:
    """``ir.Operation.create`` at the current insertion point (use inside ``with rewriter.ip``)."""
    return ir.Operation.create(name, results=list(result_types), operands=list(operands),
                               attributes=attributes, regions=regions, loc=loc)


def splat_constant(value, type_: ir.RankedTensorType, *, loc: ir.Location) -> ir.Value:
    """A splat ``stablehlo.constant`` of ``type_`` (float, int or bool element)."""
    et = type_.element_type
    if isinstance(et, ir.IntegerType):
        width = et.width
        scalar = ir.BoolAttr.get(bool(value)) if width == 1 else ir.IntegerAttr.get(et, int(value))
    else:
        scalar = ir.FloatAttr.get(et, float(value))
    attr = ir.DenseElementsAttr.get_splat(type_, scalar)
    return create("stablehlo.constant", [], [type_], {"value": attr}, loc=loc).result
