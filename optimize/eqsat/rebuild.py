"""From extracted terms back to MLIR: build one op per chosen e-class, in dependency order,
with result types taken from the nodes' ``Ty`` data."""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from .extract import Frozen


class RebuildError(Exception):
    pass


def _i64arr(xs) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(x) for x in xs])


class Builder:
    def __init__(self, fz: Frozen, choice, leaf_value: dict, dense: dict, loc: ir.Location):
        self.fz = fz
        self.choice = choice
        self.leaf_value = leaf_value  # leaf id (slot) -> ir.Value
        self.dense = dense  # dense id -> attribute
        self.loc = loc
        self.values: dict[int, ir.Value] = {}
        self.created: list[ir.Operation] = []
        self._types: dict = {}

    def ttype(self, ty) -> ir.RankedTensorType:
        t = self._types.get(ty)
        if t is None:
            d, shape = ty
            t = self._types[ty] = ir.RankedTensorType.get(list(shape), ir.Type.parse(d))
        return t

    def _op(self, name, operands, ty, attrs=None, regions=0) -> ir.Operation:
        op = ir.Operation.create(name, results=[self.ttype(ty)], operands=list(operands),
                                 attributes=attrs or {}, regions=regions, loc=self.loc)
        self.created.append(op)
        return op

    def build(self, cls: int) -> ir.Value:
        v = self.values.get(cls)
        if v is not None:
            return v
        node = self.fz.nodes[self.choice[cls]]
        args = self.fz.decode(node)
        ctor, ty = node.ctor, args[-1]
        V = lambda c: self.values[c]  # noqa: E731  (children are built first: dependency order)
        if ctor == "Leaf":
            v = self.leaf_value[args[0]]
            if v.type != self.ttype(ty):
                raise RebuildError("leaf type mismatch")
        elif ctor in ("SplatF", "SplatI"):
            t = self.ttype(ty)
            et = t.element_type
            if ctor == "SplatF":
                scalar = ir.FloatAttr.get(et, float(args[0]))
            elif ir.IntegerType(et).width == 1:
                scalar = ir.BoolAttr.get(bool(args[0]))
            else:
                scalar = ir.IntegerAttr.get(et, int(args[0]))
            v = self._op("stablehlo.constant", [], ty, {"value": ir.DenseElementsAttr.get_splat(t, scalar)}).result
        elif ctor == "Dense":
            attr = self.dense[args[0]]
            v = self._op("stablehlo.constant", [], ty, {"value": attr}).result
        elif ctor == "Iota":
            v = self._op("stablehlo.iota", [], ty,
                         {"iota_dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), args[0])}).result
        elif ctor == "Un":
            v = self._op(f"stablehlo.{args[0]}", [V(args[1])], ty).result
        elif ctor == "Bin":
            v = self._op(f"stablehlo.{args[0]}", [V(args[1]), V(args[2])], ty).result
        elif ctor == "Cmp":
            attrs = {"comparison_direction": hlo.ComparisonDirectionAttr.get(args[0])}
            if args[1]:
                attrs["compare_type"] = hlo.ComparisonTypeAttr.get(args[1])
            v = self._op("stablehlo.compare", [V(args[2]), V(args[3])], ty, attrs).result
        elif ctor == "Sel":
            v = self._op("stablehlo.select", [V(args[0]), V(args[1]), V(args[2])], ty).result
        elif ctor == "Clamp":
            v = self._op("stablehlo.clamp", [V(args[0]), V(args[1]), V(args[2])], ty).result
        elif ctor == "Cvt":
            v = self._op("stablehlo.convert", [V(args[0])], ty).result
        elif ctor == "Bcast":
            v = self._op("stablehlo.broadcast_in_dim", [V(args[0])], ty,
                         {"broadcast_dimensions": _i64arr(args[1])}).result
        elif ctor == "Reshape":
            v = self._op("stablehlo.reshape", [V(args[0])], ty).result
        elif ctor == "Transpose":
            v = self._op("stablehlo.transpose", [V(args[0])], ty, {"permutation": _i64arr(args[1])}).result
        elif ctor == "Reverse":
            v = self._op("stablehlo.reverse", [V(args[0])], ty, {"dimensions": _i64arr(args[1])}).result
        elif ctor == "Slice":
            v = self._op("stablehlo.slice", [V(args[0])], ty,
                         {"start_indices": _i64arr(args[1]), "limit_indices": _i64arr(args[2]),
                          "strides": _i64arr(args[3])}).result
        elif ctor == "Concat":
            v = self._op("stablehlo.concatenate", [V(args[0]), V(args[1])], ty,
                         {"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), args[2])}).result
        elif ctor == "Pad":
            v = self._op("stablehlo.pad", [V(args[0]), V(args[1])], ty,
                         {"edge_padding_low": _i64arr(args[2]), "edge_padding_high": _i64arr(args[3]),
                          "interior_padding": _i64arr(args[4])}).result
        elif ctor == "Dot":
            dn = hlo.DotDimensionNumbers.get(
                lhs_batching_dimensions=list(args[2]), rhs_batching_dimensions=list(args[3]),
                lhs_contracting_dimensions=list(args[4]), rhs_contracting_dimensions=list(args[5]))
            default = ir.ArrayAttr.get([hlo.PrecisionAttr.get("DEFAULT")] * 2)  # as JAX writes it
            v = self._op("stablehlo.dot_general", [V(args[0]), V(args[1])], ty,
                         {"dot_dimension_numbers": dn, "precision_config": default}).result
        elif ctor == "Reduce":
            kind, x, init, dims = args[0], V(args[1]), V(args[2]), args[3]
            op = self._op("stablehlo.reduce", [x, init], ty, {"dimensions": _i64arr(dims)}, regions=1)
            st = ir.RankedTensorType(init.type)
            blk = op.regions[0].blocks.append(st, st)
            with ir.InsertionPoint(blk):
                r = ir.Operation.create(f"stablehlo.{kind}", results=[st], operands=list(blk.arguments), loc=self.loc)
                ir.Operation.create("stablehlo.return", results=[], operands=[r.result], loc=self.loc)
            v = op.result
        else:  # pragma: no cover
            raise RebuildError(f"unknown constructor {ctor}")
        self.values[cls] = v
        return v

    def erase_created(self) -> None:
        for op in reversed(self.created):  # users first, so each op is unused when reached
            if all(len(list(r.uses)) == 0 for r in op.results):
                op.erase()
        self.created.clear()
