"""From MLIR to e-graph: split a block into segments and encode a segment as loader tables.

A *segment* is a run of consecutive modelled ops of one block (see ``lang.CTORS``). Opaque
ops (anything not modelled: while, if, custom_call, scatter, gather, sort, ops with extra
attributes, non-static shapes, ...) end the current segment when they consume one of its
values (also from inside their regions); an opaque op that does not depend on the segment
stays in place inside it and its results become leaves. So every leaf of a segment is
defined before the segment's end, and every use of a segment value outside the segment
comes after its end: the rebuilt code is inserted at the end (before ``end_op``).

The encoding numbers every value of the segment (a *slot*). Leaves become
``(Leaf slot ty)``, op results ``(Ctor ... (Slot child) ...)``; n-ary concatenates become
nested binary ones on internal slots. The tables are written as TSV files and loaded with
egglog's ``input`` command (one bulk load instead of one command per op).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from ...ir.opinfo import reduce_body_kind
from .lang import BINARY, CTORS, DTYPES, MAX_RANK, MAX_VEC, UNARY

_ELEMENTWISE_ATTRS: set[str] = set()
_ALLOWED_ATTRS = {
    "stablehlo.constant": {"value"},
    "stablehlo.iota": {"iota_dimension"},
    "stablehlo.compare": {"comparison_direction", "compare_type"},
    "stablehlo.broadcast_in_dim": {"broadcast_dimensions"},
    "stablehlo.transpose": {"permutation"},
    "stablehlo.reverse": {"dimensions"},
    "stablehlo.slice": {"start_indices", "limit_indices", "strides"},
    "stablehlo.concatenate": {"dimension"},
    "stablehlo.pad": {"edge_padding_low", "edge_padding_high", "interior_padding"},
    "stablehlo.dot_general": {"dot_dimension_numbers", "precision_config"},
    "stablehlo.reduce": {"dimensions"},
}


# tensor_info per type while an eqsat pass runs (a segment asks about the same few types
# thousands of times); emptied at the end of each pass so that no type outlives its context
TYPE_INFO: dict = {}
_MISSING = object()


def tensor_info(t: ir.Type) -> tuple[str, tuple[int, ...]] | None:
    """(dtype name, static shape) of a ranked tensor type we model, else None."""
    r = TYPE_INFO.get(t, _MISSING)
    if r is _MISSING:
        r = TYPE_INFO[t] = _tensor_info(t)
    return r


def _tensor_info(t: ir.Type) -> tuple[str, tuple[int, ...]] | None:
    if not isinstance(t, ir.RankedTensorType) and not ir.RankedTensorType.isinstance(t):
        return None
    rt = ir.RankedTensorType(t)
    if rt.encoding is not None or not rt.has_static_shape or rt.rank > MAX_RANK:
        return None
    d = str(rt.element_type)
    if d not in DTYPES:
        return None
    return d, tuple(rt.shape)


def _i64s(attr) -> list[int]:
    return [int(x) for x in ir.DenseI64ArrayAttr(attr)]


def _float_repr(x: float) -> str:
    if x != x:
        return "nan"
    return repr(float(x))


def classify(op) -> tuple[str, list] | None:
    """The constructor and data arguments of a modelled op (Op operands as ir.Values), else None.

    The returned list has the constructor's arguments without the final type; ``Op``
    positions hold ``ir.Value``s, ``IVec`` positions tuples of ints."""
    name = op.operation.name
    if not name.startswith("stablehlo."):
        return None
    short = name[10:]
    if len(op.results) != 1 or len(op.regions) != (1 if short == "reduce" else 0):
        return None
    if tensor_info(op.results[0].type) is None:
        return None
    for v in op.operands:
        if tensor_info(v.type) is None:
            return None
    allowed = _ALLOWED_ATTRS.get(name, _ELEMENTWISE_ATTRS)
    attrs = op.attributes
    for a in attrs:
        if (a if isinstance(a, str) else a.name) not in allowed:
            return None
    ops = list(op.operands)
    try:
        if short in UNARY and len(ops) == 1:
            return "Un", [short, ops[0]]
        if short in BINARY and len(ops) == 2:
            return "Bin", [short, ops[0], ops[1]]
        if short == "constant":
            attr = attrs["value"]
            if isinstance(attr, ir.DenseElementsAttr) or ir.DenseElementsAttr.isinstance(attr):
                dattr = ir.DenseElementsAttr(attr)
                d, _ = tensor_info(op.results[0].type)
                if dattr.is_splat:
                    s = dattr.get_splat_value()
                    if d in ("f16", "bf16", "f32", "f64"):
                        return "SplatF", [_float_repr(ir.FloatAttr(s).value)]
                    if d == "i1":
                        return "SplatI", [int(bool(ir.BoolAttr(s).value))]
                    if d in ("i8", "i16", "i32", "i64"):
                        return "SplatI", [int(ir.IntegerAttr(s).value)]
            return "Dense", [attr]
        if short == "iota":
            return "Iota", [int(ir.IntegerAttr(attrs["iota_dimension"]).value)]
        if short == "compare":
            dirn = hlo.ComparisonDirectionAttr(attrs["comparison_direction"]).value
            ct = hlo.ComparisonTypeAttr(attrs["compare_type"]).value if "compare_type" in attrs else ""
            return "Cmp", [dirn, ct, ops[0], ops[1]]
        if short == "select":
            return "Sel", ops
        if short == "clamp":
            return "Clamp", ops
        if short == "convert":
            return "Cvt", ops
        if short == "broadcast_in_dim":
            return "Bcast", [ops[0], tuple(_i64s(attrs["broadcast_dimensions"]))]
        if short == "reshape":
            return "Reshape", ops
        if short == "transpose":
            return "Transpose", [ops[0], tuple(_i64s(attrs["permutation"]))]
        if short == "reverse":
            return "Reverse", [ops[0], tuple(_i64s(attrs["dimensions"]))]
        if short == "slice":
            return "Slice", [ops[0], tuple(_i64s(attrs["start_indices"])), tuple(_i64s(attrs["limit_indices"])),
                             tuple(_i64s(attrs["strides"]))]
        if short == "concatenate" and len(ops) >= 1:
            return "Concat", [ops, int(ir.IntegerAttr(attrs["dimension"]).value)]
        if short == "pad":
            return "Pad", [ops[0], ops[1], tuple(_i64s(attrs["edge_padding_low"])),
                           tuple(_i64s(attrs["edge_padding_high"])), tuple(_i64s(attrs["interior_padding"]))]
        if short == "dot_general":
            if "precision_config" in attrs:
                for p in ir.ArrayAttr(attrs["precision_config"]):
                    if "DEFAULT" not in str(p):
                        return None
            dn = hlo.DotDimensionNumbers(attrs["dot_dimension_numbers"])
            return "Dot", [ops[0], ops[1], tuple(dn.lhs_batching_dimensions), tuple(dn.rhs_batching_dimensions),
                           tuple(dn.lhs_contracting_dimensions), tuple(dn.rhs_contracting_dimensions)]
        if short == "reduce":
            kind = reduce_body_kind(op)
            if kind is None or len(op.results) != 1:
                return None
            return "Reduce", [kind[len("stablehlo."):], ops[0], ops[1], tuple(_i64s(attrs["dimensions"]))]
    except (ValueError, TypeError, KeyError):
        return None
    return None


# ----------------------------------------------------------------------------- segments


@dataclass
class Segment:
    ops: list = field(default_factory=list)  # modelled ops, in block order
    kinds: list = field(default_factory=list)  # constructor name per op (operands are read at encode time)
    end_op: object = None  # rebuilt ops go before this op


def _used_values(op) -> list:
    """Operands of ``op`` and of every op nested in its regions."""
    vals = list(op.operands)
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                vals.extend(_used_values(inner))
    return vals


def segments_of_block(block, max_ops: int) -> list[Segment]:
    segs: list[Segment] = []
    cur = Segment()
    cur_vals: set = set()

    def flush(end_op):
        nonlocal cur, cur_vals
        if cur.ops:
            cur.end_op = end_op
            segs.append(cur)
        cur = Segment()
        cur_vals = set()

    ops = list(block.operations)
    for op in ops:
        kind = classify(op)
        if kind is not None:
            if len(cur.ops) >= max_ops:
                flush(op)
            cur.ops.append(op)
            cur.kinds.append(kind[0])
            cur_vals.update(op.results)
            continue
        if cur.ops and any(v in cur_vals for v in _used_values(op)):
            flush(op)
    # the block's terminator is never modelled, so the segment always ends before an op
    if cur.ops:
        flush(ops[-1])
    return segs


# ----------------------------------------------------------------------------- encoding


@dataclass
class Encoded:
    tables: dict = field(default_factory=dict)  # table name -> list of rows (tuples)
    slot_value: dict = field(default_factory=dict)  # slot -> ir.Value (leaves and op results)
    leaf_slots: set = field(default_factory=set)
    roots: list = field(default_factory=list)  # slots whose values are used outside the segment
    dense: dict = field(default_factory=dict)  # dense id -> attribute
    ranks: set = field(default_factory=set)
    n_nodes: int = 0

    @property
    def dense_np(self) -> dict:
        """The dense constants as NumPy arrays (for checking; computed on demand)."""
        out = {}
        for k, attr in self.dense.items():
            try:
                out[k] = np.array(ir.DenseElementsAttr(attr))
            except (TypeError, ValueError):  # no buffer for bf16; dense resources
                out[k] = None
        return out


class Encoder:
    """Numbers values, vectors, types and constants. One encoder may encode several segments
    into one e-graph: the numbers keep counting (a slot, leaf or constant of one segment is
    never another's), and a vector or type already loaded is not loaded again."""

    def __init__(self):
        self.vec_ids: dict[tuple, int] = {}
        self.ty_ids: dict[tuple, int] = {}
        self.enc = Encoded()
        self.value_slot: dict = {}
        self.next_slot = 0
        self.next_dense = 0

    def vec(self, items) -> int:
        items = tuple(int(x) for x in items)
        if len(items) > MAX_VEC:
            raise ValueError("vector too long")
        k = self.vec_ids.get(items)
        if k is None:
            k = self.vec_ids[items] = len(self.vec_ids)
            self.enc.tables.setdefault(f"InVec{len(items)}", []).append((k, *items))
        return k

    def ty(self, dtype: str, shape) -> int:
        key = (dtype, tuple(shape))
        k = self.ty_ids.get(key)
        if k is None:
            k = self.ty_ids[key] = len(self.ty_ids)
            self.enc.tables.setdefault("InTy", []).append((k, dtype, self.vec(shape)))
        self.enc.ranks.add(len(shape))
        return k

    def new_slot(self) -> int:
        s = self.next_slot
        self.next_slot += 1
        return s

    def slot_of(self, v) -> int:
        s = self.value_slot.get(v)
        if s is None:  # a leaf: defined outside the segment or by an opaque op
            s = self.new_slot()
            self.value_slot[v] = s
            self.enc.slot_value[s] = v
            self.enc.leaf_slots.add(s)
            d, shape = tensor_info(v.type)
            self.row("Leaf", s, [s], self.ty(d, shape))
        return s

    def row(self, ctor: str, slot: int, args: list, ty: int) -> None:
        self.enc.tables.setdefault(f"In{ctor}", []).append((slot, *args, ty))
        self.enc.n_nodes += 1

    def encode(self, seg: Segment) -> Encoded:
        # a value of an earlier segment is a leaf of this one (never a shared class)
        self.enc, self.value_slot = Encoded(), {}
        seg_ops = set()
        for op in seg.ops:
            # classify again: earlier segments may have been rebuilt since segmentation,
            # which replaced (and erased) values this segment's ops use
            kind = classify(op)
            if kind is None:
                raise ValueError(f"op no longer modelled: {op.operation.name}")
            ctor, args = kind
            res = op.results[0]
            d, shape = tensor_info(res.type)
            t = self.ty(d, shape)
            if ctor == "Concat":
                vals, dim = args
                cur = self.slot_of(vals[0])
                cur_shape = list(tensor_info(vals[0].type)[1])
                for i, v in enumerate(vals[1:], 1):
                    vs = self.slot_of(v)
                    cur_shape[dim] += tensor_info(v.type)[1][dim]
                    s = self.new_slot() if i < len(vals) - 1 else None
                    if s is None:
                        s = self.new_slot()
                        self.value_slot[res] = s
                        self.enc.slot_value[s] = res
                    self.row("Concat", s, [cur, vs, dim], self.ty(d, cur_shape))
                    cur = s
                if len(vals) == 1:  # concatenate of one operand: the operand itself
                    s = self.new_slot()
                    self.value_slot[res] = s
                    self.enc.slot_value[s] = res
                    self.row("Reshape", s, [cur], t)
                seg_ops.add(op)
                continue
            sorts = CTORS[ctor][:-1]
            row = []
            for a, sort in zip(args, sorts):
                if sort == "Op":
                    row.append(self.slot_of(a))
                elif sort == "IVec":
                    row.append(self.vec(a))
                elif ctor == "Dense":
                    k = self.next_dense
                    self.next_dense += 1
                    self.enc.dense[k] = a
                    row.append(k)
                else:
                    row.append(a)
            s = self.new_slot()
            self.value_slot[res] = s
            self.enc.slot_value[s] = res
            self.row(ctor, s, row, t)
            seg_ops.add(op)
        # roots: values with a use outside the segment's ops
        seg_op_set = {op.operation for op in seg.ops}
        for op in seg.ops:
            res = op.results[0]
            if any(u.owner not in seg_op_set for u in res.uses):
                self.enc.roots.append(self.value_slot[res])
        return self.enc


def write_tables(enc: Encoded, directory: str) -> list[tuple[str, str]]:
    """Write each table as a TSV file; returns (table name, path) pairs."""
    out = []
    for name, rows in enc.tables.items():
        path = os.path.join(directory, f"{name}.tsv")
        with open(path, "w") as f:
            for row in rows:
                f.write("\t".join(str(x) for x in row))
                f.write("\n")
        out.append((name, path))
    return out
