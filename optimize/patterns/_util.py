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


def def_of(v: ir.Value, name: str):
    """The defining op of ``v`` if it is ``stablehlo.<name>``, else None."""
    op = defining_op(v)
    if op is not None and op.operation.name == "stablehlo." + name:
        return op
    return None


def replace_with(rw, op, v: ir.Value) -> bool:
    """Replace ``op``'s single result by ``v`` (a pattern's usual last step); True."""
    rw.replace_op(op, [v])
    return True


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


# ---- helpers appended for pattern families A (algebraic, constants, layout, dot, reduce) ----

def np_dtype(t: ir.Type):
    """The NumPy dtype of an MLIR element type, or None (complex, f8, index, odd widths)."""
    if isinstance(t, ir.F32Type):
        return np.dtype(np.float32)
    if isinstance(t, ir.F64Type):
        return np.dtype(np.float64)
    if isinstance(t, ir.F16Type):
        return np.dtype(np.float16)
    if isinstance(t, ir.BF16Type):
        try:
            import ml_dtypes
        except ImportError:  # pragma: no cover
            return None
        return np.dtype(ml_dtypes.bfloat16)
    if isinstance(t, ir.IntegerType):
        w = t.width
        if w == 1:
            return np.dtype(np.bool_)
        if w not in (8, 16, 32, 64):
            return None
        return np.dtype(f"{'u' if t.is_unsigned else ''}int{w}")
    return None


def num_elements(v_or_type) -> int:
    t = v_or_type.type if isinstance(v_or_type, ir.Value) else v_or_type
    n = 1
    for d in ir.RankedTensorType(t).shape:
        n *= d
    return n


def has_one_use(v: ir.Value) -> bool:
    it = iter(v.uses)
    return next(it, None) is not None and next(it, None) is None


def const_array(v: ir.Value, max_elements: int | None = None):
    """The value of a ``stablehlo.constant`` as a NumPy array in the element's dtype, or None
    (not a constant, unsupported element type, or a non-splat bigger than ``max_elements``).
    A splat is returned as a read-only broadcast view (no materialization)."""
    op = defining_op(v)
    if op is None or op.operation.name != "stablehlo.constant":
        return None
    attr = op.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr):
        return None
    tt = ir.RankedTensorType(attr.type)
    dt = np_dtype(tt.element_type)
    if dt is None:
        return None
    shape = tuple(tt.shape)
    if attr.is_splat:
        s = attr.get_splat_value()
        if not isinstance(s, (ir.FloatAttr, ir.IntegerAttr, ir.BoolAttr)):
            return None
        return np.broadcast_to(np.asarray(s.value).astype(dt), shape)
    if max_elements is not None and int(np.prod(shape)) > max_elements:
        return None
    try:
        arr = np.array(attr)
    except Exception:  # e.g. bf16 dense data cannot be read through the buffer protocol
        return None
    return arr.astype(dt, copy=False).reshape(shape)


def dense_attr(arr, type_: ir.RankedTensorType) -> ir.DenseElementsAttr:
    """A DenseElementsAttr of ``type_`` holding ``arr`` (a splat when all elements are equal)."""
    et = type_.element_type
    dt = np_dtype(et)
    arr = np.asarray(arr).astype(dt, copy=False)
    flat = arr.reshape(-1)
    if flat.size > 0 and (flat.size == 1 or _all_same(flat)):
        x = flat[0]
        if isinstance(et, ir.IntegerType):
            scalar = ir.BoolAttr.get(bool(x)) if et.width == 1 else ir.IntegerAttr.get(et, int(x))
        else:
            scalar = ir.FloatAttr.get(et, float(x))
        return ir.DenseElementsAttr.get_splat(type_, scalar)
    return ir.DenseElementsAttr.get(np.ascontiguousarray(arr), type=et, shape=list(type_.shape))


def _all_same(flat) -> bool:
    if flat.dtype.kind == "f" or flat.dtype.name == "bfloat16":
        bits = flat.view(f"u{flat.dtype.itemsize}")
        return bool((bits == bits[0]).all())
    return bool((flat == flat[0]).all())


def constant_value(arr, type_: ir.RankedTensorType, *, loc: ir.Location) -> ir.Value:
    """A ``stablehlo.constant`` of ``type_`` holding ``arr``."""
    return create("stablehlo.constant", [], [type_], {"value": dense_attr(arr, type_)}, loc=loc).result


def scalar_value(v: ir.Value):
    """The Python scalar ``v`` is filled with, when ``v`` is a splat constant, possibly seen
    through ``broadcast_in_dim`` / ``reshape`` / ``transpose`` (which keep a splat a splat)."""
    for _ in range(8):
        s = splat_value(v)
        if s is not None:
            return s
        op = defining_op(v)
        if op is None or op.operation.name not in (
                "stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.transpose"):
            return None
        v = op.operands[0]
    return None


def is_scalar_value(v: ir.Value, value) -> bool:
    """``v`` is everywhere ``value`` (same sign for a float zero); sees through broadcasts."""
    s = scalar_value(v)
    if s is None:
        return False
    if isinstance(s, float) or isinstance(value, float):
        s, value = float(s), float(value)
        if np.isnan(value):
            return bool(np.isnan(s))
        return s == value and bool(np.signbit(s)) == bool(np.signbit(value))
    return s == value


def all_ones_value(et: ir.Type):
    """The all-bits-set value of an integer element type (True, -1 or the unsigned max)."""
    w = ir.IntegerType(et).width
    if w == 1:
        return True
    return (1 << w) - 1 if ir.IntegerType(et).is_unsigned else -1


def op_result_type(op) -> ir.RankedTensorType:
    return ir.RankedTensorType(op.results[0].type)


def build(name: str, operands: Sequence[ir.Value], result_type: ir.Type, attributes: dict | None = None,
          *, loc: ir.Location) -> ir.Value:
    """One-result op ``name`` with an explicit result type (inside ``with rewriter.ip``)."""
    return create(name, operands, [result_type], attributes, loc=loc).result


def same_type_op(name: str, operands: Sequence[ir.Value], *, loc: ir.Location,
                 result_elem: ir.Type | None = None) -> ir.Value:
    """Elementwise op whose result has the first operand's shape (and its element type
    unless ``result_elem``)."""
    t = ir.RankedTensorType(operands[0].type)
    rt = t if result_elem is None else ranked(t.shape, result_elem)
    return build(name, operands, rt, loc=loc)


def broadcast_value(x: ir.Value, shape: Sequence[int], dims: Sequence[int], *, loc: ir.Location) -> ir.Value:
    """``stablehlo.broadcast_in_dim`` of ``x`` to ``shape`` (element type kept)."""
    return build("stablehlo.broadcast_in_dim", [x], ranked(shape, element_type(x)),
                 {"broadcast_dimensions": i64_array(dims)}, loc=loc)


def reshape_value(x: ir.Value, shape: Sequence[int], *, loc: ir.Location) -> ir.Value:
    if tuple(shape) == shape_of(x):
        return x
    return build("stablehlo.reshape", [x], ranked(shape, element_type(x)), loc=loc)


def transpose_value(x: ir.Value, perm: Sequence[int], *, loc: ir.Location) -> ir.Value:
    perm = [int(p) for p in perm]
    if perm == list(range(len(perm))):
        return x
    s = shape_of(x)
    return build("stablehlo.transpose", [x], ranked([s[p] for p in perm], element_type(x)),
                 {"permutation": i64_array(perm)}, loc=loc)


def convert_value(x: ir.Value, elem: ir.Type, *, loc: ir.Location) -> ir.Value:
    if element_type(x) == elem:
        return x
    return build("stablehlo.convert", [x], ranked(shape_of(x), elem), loc=loc)


def scalar_constant_like(value, v: ir.Value, *, loc: ir.Location) -> ir.Value:
    """A splat constant with ``v``'s type."""
    return splat_constant(value, ir.RankedTensorType(v.type), loc=loc)


def dot_dims(op) -> tuple[list[int], list[int], list[int], list[int]]:
    """(lhs_batch, rhs_batch, lhs_contracting, rhs_contracting) of a ``stablehlo.dot_general``."""
    from jaxlib.mlir.dialects import stablehlo as _hlo
    dn = _hlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    return (list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions),
            list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions))


def dot_general_value(lhs: ir.Value, rhs: ir.Value, lb, rb, lc, rc, result_type: ir.Type, *,
                      loc: ir.Location, like=None) -> ir.Value:
    """A ``stablehlo.dot_general``; ``like`` (a dot_general op) lends its precision config
    and algorithm (swapped by the caller if operands were swapped)."""
    from jaxlib.mlir.dialects import stablehlo as _hlo
    attrs = {"dot_dimension_numbers": _hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lb), rhs_batching_dimensions=list(rb),
        lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc))}
    if like is not None:
        for k in ("precision_config", "algorithm"):
            if k in like.attributes:
                attrs[k] = like.attributes[k]
    return build("stablehlo.dot_general", [lhs, rhs], result_type, attrs, loc=loc)


def dot_result_shape(lhs_shape, rhs_shape, lb, rb, lc, rc) -> list[int]:
    lf = [d for d in range(len(lhs_shape)) if d not in lb and d not in lc]
    rf = [d for d in range(len(rhs_shape)) if d not in rb and d not in rc]
    return [lhs_shape[d] for d in lb] + [lhs_shape[d] for d in lf] + [rhs_shape[d] for d in rf]


REDUCE_KINDS = ("stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum",
                "stablehlo.and", "stablehlo.or")


def reduce_kind(op) -> str | None:
    """For a single-input ``stablehlo.reduce`` whose body is ``return op(arg0, arg1)`` (either
    order) with ``op`` one of REDUCE_KINDS, that op's name; else None."""
    if op.operation.name != "stablehlo.reduce" or len(op.operands) != 2:
        return None
    blocks = op.regions[0].blocks
    if len(blocks) != 1:
        return None
    block = blocks[0]
    ops = list(block.operations)
    if len(ops) != 2 or ops[1].operation.name != "stablehlo.return":
        return None
    body = ops[0]
    name = body.operation.name
    if name not in REDUCE_KINDS or len(body.operands) != 2:
        return None
    args = list(block.arguments)
    if len(args) != 2 or len(ops[1].operands) != 1 or ops[1].operands[0] != body.results[0]:
        return None
    if {body.operands[0], body.operands[1]} != {args[0], args[1]} or body.operands[0] == body.operands[1]:
        return None
    return name


def reduce_identity(kind: str, et: ir.Type):
    """The identity of a reduction kind for element type ``et`` (a Python scalar), or None."""
    dt = np_dtype(et)
    if dt is None:
        return None
    isf = dt.kind == "f" or dt.name == "bfloat16"
    if kind == "stablehlo.add":
        return 0.0 if isf else (False if dt == np.bool_ else 0)
    if kind == "stablehlo.multiply":
        return 1.0 if isf else (True if dt == np.bool_ else 1)
    if kind == "stablehlo.maximum":
        if isf:
            return float("-inf")
        return False if dt == np.bool_ else int(np.iinfo(dt).min)
    if kind == "stablehlo.minimum":
        if isf:
            return float("inf")
        return True if dt == np.bool_ else int(np.iinfo(dt).max)
    if kind == "stablehlo.and" and not isf:
        return all_ones_value(et)
    if kind == "stablehlo.or" and not isf:
        return False if dt == np.bool_ else 0
    return None


def is_reduce_identity(init: ir.Value, kind: str) -> bool:
    """``init`` is the identity of ``kind`` (for add, either float zero: XLA treats a reduce's
    init as an identity that it may apply any number of times)."""
    ident = reduce_identity(kind, element_type(init))
    if ident is None:
        return False
    s = scalar_value(init)
    if s is None:
        return False
    if isinstance(ident, float):
        return float(s) == ident
    return s == ident


def reduce_value(x: ir.Value, init: ir.Value, dims: Sequence[int], kind: str, *,
                 loc: ir.Location) -> ir.Value:
    """A single-input ``stablehlo.reduce`` of ``x`` over ``dims`` with body ``kind``."""
    dims = sorted(int(d) for d in dims)
    s = shape_of(x)
    et = element_type(x)
    rt = ranked([s[i] for i in range(len(s)) if i not in dims], et)
    op = create("stablehlo.reduce", [x, init], [rt], {"dimensions": i64_array(dims)}, loc=loc,
                regions=1)
    st = ranked([], et)
    block = op.regions[0].blocks.append(st, st)
    with ir.InsertionPoint(block):
        r = build(kind, [block.arguments[0], block.arguments[1]], st, loc=loc)
        create("stablehlo.return", [r], [], loc=loc)
    return op.result


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


# ---- helpers appended for pattern families B (slicing, gather/scatter, control flow, select) ----

ELEMENTWISE_OPS = frozenset("stablehlo." + n for n in (
    "abs add and atan2 cbrt ceil clamp compare complex convert cosine count_leading_zeros divide "
    "exponential exponential_minus_one floor imag is_finite log log_plus_one logistic maximum "
    "minimum multiply negate not or popcnt power real reduce_precision remainder "
    "round_nearest_afz round_nearest_even rsqrt select shift_left shift_right_arithmetic "
    "shift_right_logical sign sine sqrt subtract tan tanh xor").split())

# Ops without side effects whose only inputs are their operands (and, for the ones with
# regions, values their regions use): safe to move, duplicate (at a cost) or drop.
PURE_OPS = ELEMENTWISE_OPS | frozenset("stablehlo." + n for n in (
    "constant iota broadcast_in_dim reshape transpose slice dynamic_slice dynamic_update_slice "
    "concatenate pad reverse dot_general dot reduce gather scatter select_and_scatter sort "
    "reduce_window bitcast_convert convolution get_tuple_element tuple while if case map "
    "dynamic_broadcast_in_dim dynamic_reshape dynamic_iota get_dimension_size real_dynamic_slice "
    "dynamic_pad dynamic_gather return").split()) | frozenset(("chlo.erf", "chlo.erf_inv",
                                                              "chlo.lgamma", "chlo.digamma"))


def user_ops(v: ir.Value) -> list:
    """The ops using ``v`` (one entry per use)."""
    return [u.owner for u in v.uses]


def num_uses(v: ir.Value) -> int:
    return sum(1 for _ in v.uses)


def copy_attrs(op) -> dict:
    """The op's attributes as a dict name -> Attribute."""
    attrs = op.attributes
    return {n: attrs[n] for n in attrs}


def is_pure_op(op) -> bool:
    """No side effects, recursively through regions (loops and branches included)."""
    o = op.operation
    if not len(o.regions):
        return o.name in PURE_OPS
    ok = [True]

    def visit(o):
        if o.name not in PURE_OPS:
            ok[0] = False
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.operation.walk(visit)
    return ok[0]


def slice_value(x: ir.Value, start: Sequence[int], limit: Sequence[int],
                strides: Sequence[int] | None = None, *, loc: ir.Location) -> ir.Value:
    """``stablehlo.slice`` (``x`` itself when the slice is the whole tensor)."""
    shape = shape_of(x)
    strides = [1] * len(shape) if strides is None else [int(t) for t in strides]
    start = [int(s) for s in start]
    limit = [int(e) for e in limit]
    if start == [0] * len(shape) and limit == list(shape) and strides == [1] * len(shape):
        return x
    out = [max(0, -(-(e - s) // t)) for s, e, t in zip(start, limit, strides)]
    return build("stablehlo.slice", [x], ranked(out, element_type(x)),
                 {"start_indices": i64_array(start), "limit_indices": i64_array(limit),
                  "strides": i64_array(strides)}, loc=loc)


def pad_value(x: ir.Value, padding_value: ir.Value, low: Sequence[int], high: Sequence[int],
              interior: Sequence[int] | None = None, *, loc: ir.Location) -> ir.Value:
    """``stablehlo.pad`` (``x`` itself when all paddings are zero)."""
    shape = shape_of(x)
    interior = [0] * len(shape) if interior is None else [int(i) for i in interior]
    low = [int(p) for p in low]
    high = [int(p) for p in high]
    if not any(low) and not any(high) and not any(interior):
        return x
    out = [lo + hi + n + max(n - 1, 0) * it for n, lo, hi, it in zip(shape, low, high, interior)]
    return build("stablehlo.pad", [x, padding_value], ranked(out, element_type(x)),
                 {"edge_padding_low": i64_array(low), "edge_padding_high": i64_array(high),
                  "interior_padding": i64_array(interior)}, loc=loc)


def concat_value(xs: Sequence[ir.Value], dim: int, *, loc: ir.Location) -> ir.Value:
    """``stablehlo.concatenate`` (the operand itself when there is one)."""
    xs = list(xs)
    if len(xs) == 1:
        return xs[0]
    shape = list(shape_of(xs[0]))
    shape[dim] = sum(shape_of(x)[dim] for x in xs)
    return build("stablehlo.concatenate", xs, ranked(shape, element_type(xs[0])),
                 {"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(dim))}, loc=loc)


def iota_value(type_: ir.RankedTensorType, dim: int, *, loc: ir.Location) -> ir.Value:
    return build("stablehlo.iota", [], type_,
                 {"iota_dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(dim))}, loc=loc)


def int_attr_value(attr) -> int:
    return ir.IntegerAttr(attr).value


def compare_parts(op) -> tuple[str, str | None]:
    """(direction, compare_type or None) of a ``stablehlo.compare``, e.g. ("LT", "SIGNED")."""
    d = str(op.attributes["comparison_direction"])  # '#stablehlo<comparison_direction LT>'
    direction = d.rsplit(" ", 1)[-1].rstrip(">")
    ct = None
    if "compare_type" in op.attributes:
        ct = str(op.attributes["compare_type"]).rsplit(" ", 1)[-1].rstrip(">")
    return direction, ct


def compare_attrs(direction: str, compare_type: str | None) -> dict:
    from jaxlib.mlir.dialects import stablehlo as _hlo
    attrs = {"comparison_direction": _hlo.ComparisonDirectionAttr.get(direction)}
    if compare_type is not None:
        attrs["compare_type"] = _hlo.ComparisonTypeAttr.get(compare_type)
    return attrs


_NP_CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
           "GT": np.greater, "GE": np.greater_equal}


def _int_view(a, compare_type: str | None):
    """Reinterpret an integer array for a SIGNED / UNSIGNED comparison."""
    if a.dtype.kind in "iu" and compare_type in ("SIGNED", "UNSIGNED"):
        want = "i" if compare_type == "SIGNED" else "u"
        if a.dtype.kind != want:
            a = np.ascontiguousarray(a).view(f"{want}{a.dtype.itemsize}")
    return a


def eval_int_array(v: ir.Value, max_elements: int = 1 << 22, _memo=None, _depth: int = 0):
    """Evaluate an integer/boolean tensor computed only from constants and iotas (through
    broadcasts, reshapes, slices, concatenations, integer arithmetic, compares, selects...)
    as a NumPy array with the exact wrap-around semantics of the element type; None when
    ``v`` depends on anything else, is a float, or is bigger than ``max_elements``."""
    memo = {} if _memo is None else _memo
    if v in memo:
        return memo[v]
    memo[v] = None  # cycles (cannot happen in SSA, but be safe) and failures
    if _depth > 64:
        return None
    try:
        tt = ir.RankedTensorType(v.type)
    except Exception:
        return None
    dt = np_dtype(tt.element_type)
    if dt is None or dt.kind not in "biu":
        return None
    shape = tuple(tt.shape)
    if int(np.prod(shape, dtype=np.int64)) > max_elements:
        return None
    op = defining_op(v)
    if op is None:
        return None
    name = op.operation.name

    def ev(x):
        return eval_int_array(x, max_elements, memo, _depth + 1)

    res = None
    with np.errstate(all="ignore"):
        if name == "stablehlo.constant":
            res = const_array(v, max_elements)
        elif name == "stablehlo.iota":
            d = int_attr_value(op.attributes["iota_dimension"])
            r = np.arange(shape[d]).astype(dt)
            sh = [1] * len(shape)
            sh[d] = shape[d]
            res = np.broadcast_to(r.reshape(sh), shape)
        else:
            args = [ev(x) for x in op.operands]
            if any(a is None for a in args):
                return None
            a = args[0] if args else None
            if name == "stablehlo.broadcast_in_dim":
                dims = i64_list(op.attributes["broadcast_dimensions"])
                sh = [1] * len(shape)
                for i, d in enumerate(dims):
                    sh[d] = a.shape[i]
                res = np.broadcast_to(np.reshape(a, sh), shape)
            elif name == "stablehlo.reshape":
                res = np.reshape(a, shape)
            elif name == "stablehlo.transpose":
                res = np.transpose(a, i64_list(op.attributes["permutation"]))
            elif name == "stablehlo.slice":
                s = i64_list(op.attributes["start_indices"])
                e = i64_list(op.attributes["limit_indices"])
                t = i64_list(op.attributes["strides"])
                res = a[tuple(slice(*z) for z in zip(s, e, t))]
            elif name == "stablehlo.reverse":
                res = np.flip(a, axis=tuple(i64_list(op.attributes["dimensions"])))
            elif name == "stablehlo.concatenate":
                res = np.concatenate(args, axis=int_attr_value(op.attributes["dimension"]))
            elif name == "stablehlo.convert":
                res = a.astype(dt)
            elif name in ("stablehlo.add", "stablehlo.subtract", "stablehlo.multiply",
                          "stablehlo.maximum", "stablehlo.minimum", "stablehlo.and",
                          "stablehlo.or", "stablehlo.xor"):
                f = {"stablehlo.add": np.add, "stablehlo.subtract": np.subtract,
                     "stablehlo.multiply": np.multiply, "stablehlo.maximum": np.maximum,
                     "stablehlo.minimum": np.minimum, "stablehlo.and": np.bitwise_and,
                     "stablehlo.or": np.bitwise_or, "stablehlo.xor": np.bitwise_xor}[name]
                if dt == np.bool_ and name in ("stablehlo.add", "stablehlo.subtract", "stablehlo.multiply"):
                    return None
                res = f(args[0], args[1]).astype(dt)
            elif name == "stablehlo.negate" and dt != np.bool_:
                res = np.negative(a).astype(dt)
            elif name == "stablehlo.not":
                res = np.logical_not(a) if dt == np.bool_ else np.invert(a)
            elif name == "stablehlo.select":
                res = np.where(args[0], args[1], args[2]).astype(dt)
            elif name == "stablehlo.clamp":
                res = np.minimum(np.maximum(args[1], args[0]), args[2]).astype(dt)
            elif name == "stablehlo.compare":
                direction, ct = compare_parts(op)
                if ct not in (None, "SIGNED", "UNSIGNED"):
                    return None
                res = _NP_CMP[direction](_int_view(args[0], ct), _int_view(args[1], ct))
            elif name in ("stablehlo.divide", "stablehlo.remainder") and dt.kind in "iu":
                x, y = np.broadcast_arrays(args[0], args[1])
                if (y == 0).any():
                    return None
                if dt.kind == "i" and ((x == np.iinfo(dt).min) & (y == -1)).any():
                    return None
                q = np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
                q = np.where((x < 0) != (y < 0), -q, q)
                res = (q if name == "stablehlo.divide" else x.astype(np.int64) - q * y).astype(dt)
    if res is None or tuple(np.shape(res)) != shape:
        return None
    memo[v] = res
    return res


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
    try:
        dt = np_dtype(element_type(v))
    except Exception:
        return None
    if dt is None or dt.kind not in "iu" or _depth > 32:
        return None
    tb = _type_bounds(dt)
    op = defining_op(v)
    if op is None:
        return _block_arg_range(v)
    name = op.operation.name
    if name == "stablehlo.constant":
        a = const_array(v, 1 << 16)
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


def _block_arg_range(v: ir.Value):
    """Bounds of a loop counter (a ``stablehlo.while`` body argument counting from a constant
    by a constant step up to a constant limit), else None."""
    try:
        from .control_flow import loop_counter_range
    except ImportError:  # pragma: no cover
        return None
    try:
        return loop_counter_range(v)
    except Exception:  # analysis must never break a pattern
        return None


def is_defined_outside(v: ir.Value, op) -> bool:
    """``v`` is defined outside ``op``'s regions (so it is invariant with respect to them)."""
    owner = v.owner
    o = owner.owner.operation if isinstance(owner, ir.Block) else owner.operation
    target = op.operation
    depth = 0
    while o is not None and depth < 1000:
        if o == target:
            return False
        o = o.parent
        depth += 1
    return True


def _attrs_equal(a, b) -> bool:
    na = sorted(n for n in a.attributes)
    nb = sorted(n for n in b.attributes)
    if na != nb:
        return False
    return all(a.attributes[n] == b.attributes[n] for n in na)


def regions_equivalent(ra: ir.Region, rb: ir.Region, mapping: dict | None = None) -> bool:
    """Two single-or-multi-block regions compute the same thing: same ops, attributes and
    types, operands equal up to the correspondence of values defined inside them."""
    mapping = {} if mapping is None else mapping
    ba, bb = list(ra.blocks), list(rb.blocks)
    if len(ba) != len(bb):
        return False
    for x, y in zip(ba, bb):
        if len(x.arguments) != len(y.arguments):
            return False
        for p, q in zip(x.arguments, y.arguments):
            if p.type != q.type:
                return False
            mapping[p] = q
    for x, y in zip(ba, bb):
        ox, oy = list(x.operations), list(y.operations)
        if len(ox) != len(oy):
            return False
        for a, b in zip(ox, oy):
            if a.operation.name != b.operation.name or len(a.operands) != len(b.operands) \
                    or len(a.results) != len(b.results) or len(a.regions) != len(b.regions):
                return False
            for p, q in zip(a.operands, b.operands):
                if mapping.get(p, p) != q:
                    return False
            for p, q in zip(a.results, b.results):
                if p.type != q.type:
                    return False
            if not _attrs_equal(a, b):
                return False
            for p, q in zip(a.regions, b.regions):
                if not regions_equivalent(p, q, mapping):
                    return False
            for p, q in zip(a.results, b.results):
                mapping[p] = q
    return True
