"""Family ``select``: select / compare / boolean logic / clamp simplifications.

Every rewrite is exact: float compares are only inverted or folded where NaN cannot change
the answer (EQ/NE, TOTALORDER, or constants evaluated with IEEE semantics); rewrites that
would change NaN or signed-zero results live behind ``fast_math``.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from ...ir import build as B
from ...ir import kernels as K
from ...ir.attrs import all_ones_value, compare_attrs, compare_parts, read_constant, scalar_value
from ...ir.loops import unchanged_ir
from ...ir.types import element_type_of, is_float_type, np_dtype, ranked, shape_of
from ...ir.values import def_of, defining_op, has_one_use, op_name
from ._registry import pattern, replace
from ._util import int_range

FAMILY = "select"
_FOLD_LIMIT = 1 << 16

_INVERSE = {"EQ": "NE", "NE": "EQ", "LT": "GE", "GE": "LT", "LE": "GT", "GT": "LE"}
_SWAP = {"EQ": "EQ", "NE": "NE", "LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE"}


def _bool_scalar(v):
    s = scalar_value(v)
    if s is None:
        return None
    return bool(s)


def _is_int(v) -> bool:
    et = element_type_of(v)
    return isinstance(et, ir.IntegerType) and ir.IntegerType(et).width > 1


def _is_bool(v) -> bool:
    et = element_type_of(v)
    return isinstance(et, ir.IntegerType) and ir.IntegerType(et).width == 1


def _exact_compare_type(op) -> bool:
    """The compare is over integers (or a total order), so x<=y <=> !(x>y) etc."""
    _, ct = compare_parts(op)
    a = op.operands[0]
    if ct == "TOTALORDER":
        return True
    return isinstance(element_type_of(a), ir.IntegerType)


def _to_result_shape(p: ir.Value, result_type: ir.RankedTensorType, loc) -> ir.Value:
    """``p`` with ``result_type``'s shape (broadcast a rank-0 ``p``)."""
    if shape_of(p) == tuple(result_type.shape):
        return p
    return B.op1("stablehlo.broadcast_in_dim", [p], ranked(result_type.shape, element_type_of(p)),
                 {"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])}, loc=loc)


def _select_parts(op):
    return op.operands[0], op.operands[1], op.operands[2]


def _replace_by_select(rewriter, op, p, a, b) -> bool:
    """Replace ``op`` by select(p, a, b) of its result type."""
    with rewriter.ip:
        r = B.op1("stablehlo.select", [p, a, b], op.results[0].type, loc=op.location)
    return replace(rewriter, op, r)


# -- select ----------------------------------------------------------------------------------

@pattern("select_const_pred", FAMILY, "stablehlo.select", benefit=3)
def select_const_pred(op, rewriter):
    """select(true, a, b) -> a; select(false, a, b) -> b (splat predicate)."""
    p, a, b = _select_parts(op)
    s = _bool_scalar(p)
    if s is None:
        return False
    return replace(rewriter, op, a if s else b)


@pattern("select_one_zero_to_convert", FAMILY, "stablehlo.select", benefit=1)
def select_one_zero_to_convert(op, rewriter):
    """select(p, 1, 0) -> convert(p); select(p, 0, 1) -> convert(not p) (int/float results)."""
    p, a, b = _select_parts(op)
    et = element_type_of(a)
    if _is_bool(a) or np_dtype(et) is None:
        return False
    sa, sb = scalar_value(a), scalar_value(b)
    if sa is None or sb is None:
        return False

    def is_(s, v):
        if isinstance(s, float):
            return s == v and not np.signbit(s)
        return s == v

    if is_(sa, 1) and is_(sb, 0):
        neg = False
    elif is_(sa, 0) and is_(sb, 1):
        neg = True
    else:
        return False
    rt = ir.RankedTensorType(op.results[0].type)
    with rewriter.ip:
        q = B.op1("stablehlo.not", [p], p.type, loc=op.location) if neg else p
        q = _to_result_shape(q, rt, op.location)
        r = B.op1("stablehlo.convert", [q], rt, loc=op.location)
    return replace(rewriter, op, r)


@pattern("select_broadcast_scalar_pred", FAMILY, "stablehlo.select", benefit=1)
def select_broadcast_scalar_pred(op, rewriter):
    """select(broadcast_in_dim(p: tensor<i1>), a, b) -> select(p, a, b) (rank-0 predicate)."""
    p, a, b = _select_parts(op)
    d = def_of(p, "broadcast_in_dim")
    if d is None:
        return False
    src = d.operands[0]
    if shape_of(src) != () or shape_of(p) == ():
        return False
    if scalar_value(p) is not None:  # select_const_pred handles it
        return False
    return _replace_by_select(rewriter, op, src, a, b)

@pattern("select_bool_to_logic", FAMILY, "stablehlo.select", benefit=2)
def select_bool_to_logic(op, rewriter):
    """For booleans: select(p, q, false) -> and(p, q); select(p, true, q) -> or(p, q)."""
    p, a, b = _select_parts(op)
    if not _is_bool(a) or p.type != op.results[0].type:
        return False
    sa, sb = _bool_scalar(a), _bool_scalar(b)
    if sa is not None and sb is not None:
        return False  # select_bool_branches / select_const_pred
    if sb is False:
        name, other = "stablehlo.and", a
    elif sa is True:
        name, other = "stablehlo.or", b
    else:
        return False
    with rewriter.ip:
        r = B.op1(name, [p, other], op.results[0].type, loc=op.location)
    return replace(rewriter, op, r)


@pattern("select_merge_common_branch", FAMILY, "stablehlo.select", benefit=1)
def select_merge_common_branch(op, rewriter):
    """select(p, select(q, a, b), b) -> select(and(p, q), a, b);
    select(p, a, select(q, a, b)) -> select(or(p, q), a, b) (same-shaped predicates)."""
    p, a, b = _select_parts(op)
    if p.type != ir.RankedTensorType.get(shape_of(a), ir.IntegerType.get_signless(1)):
        return False
    da, db = defining_op(a), defining_op(b)
    if da is not None and da.operation.name == "stablehlo.select" and has_one_use(a):
        q, x, y = _select_parts(da)
        if y == b and q.type == p.type and q != p:
            with rewriter.ip:
                pq = B.op1("stablehlo.and", [p, q], p.type, loc=op.location)
                r = B.op1("stablehlo.select", [pq, x, b], op.results[0].type, loc=op.location)
            return replace(rewriter, op, r)
    if db is not None and db.operation.name == "stablehlo.select" and has_one_use(b):
        q, x, y = _select_parts(db)
        if x == a and q.type == p.type and q != p:
            with rewriter.ip:
                pq = B.op1("stablehlo.or", [p, q], p.type, loc=op.location)
                r = B.op1("stablehlo.select", [pq, a, y], op.results[0].type, loc=op.location)
            return replace(rewriter, op, r)
    return False


@pattern("select_eq_const_identity", FAMILY, "stablehlo.select", benefit=2)
def select_eq_const_identity(op, rewriter):
    """select(x == c, c, x) -> x and select(x != c, x, c) -> x (integers, or a float c that
    is neither zero nor NaN, where equality means identical bits)."""
    p, a, b = _select_parts(op)
    c = defining_op(p)
    if c is None or c.operation.name != "stablehlo.compare" or shape_of(p) != shape_of(a):
        return False
    direction, ct = compare_parts(c)
    if direction == "EQ":
        k, x = a, b
    elif direction == "NE":
        x, k = a, b
    else:
        return False
    ops_ = list(c.operands)
    if not ((ops_[0] == x and ops_[1] == k) or (ops_[1] == x and ops_[0] == k)):
        return False
    et = element_type_of(x)
    if is_float_type(et):
        s = scalar_value(k)
        if s is None or s == 0 or s != s or ct == "TOTALORDER":
            return False
    elif not _is_int(x) and not _is_bool(x):
        return False
    if x.type != op.results[0].type:
        return False
    return replace(rewriter, op, x)

@pattern("select_same_operands", FAMILY, "stablehlo.select", benefit=3)
def select_same_operands(op, rewriter):
    """select(p, a, a) -> a."""
    p, a, b = _select_parts(op)
    if a != b:
        return False
    return replace(rewriter, op, a)


@pattern("select_not_pred", FAMILY, "stablehlo.select", benefit=2)
def select_not_pred(op, rewriter):
    """select(not p, a, b) -> select(p, b, a)."""
    p, a, b = _select_parts(op)
    d = def_of(p, "not")
    if d is None:
        return False
    return _replace_by_select(rewriter, op, d.operands[0], b, a)


@pattern("select_select_same_pred", FAMILY, "stablehlo.select", benefit=2)
def select_select_same_pred(op, rewriter):
    """select(p, select(p, a, b), c) -> select(p, a, c); select(p, a, select(p, b, c)) -> select(p, a, c)."""
    p, a, b = _select_parts(op)
    new_a, new_b = a, b
    da, db = defining_op(a), defining_op(b)
    if da is not None and da.operation.name == "stablehlo.select" and da.operands[0] == p:
        new_a = da.operands[1]
    if db is not None and db.operation.name == "stablehlo.select" and db.operands[0] == p:
        new_b = db.operands[2]
    if new_a == a and new_b == b:
        return False
    return _replace_by_select(rewriter, op, p, new_a, new_b)


@pattern("select_bool_consts", FAMILY, "stablehlo.select", benefit=2)
def select_bool_consts(op, rewriter):
    """select(p, true, false) -> p; select(p, false, true) -> not p (i1 results)."""
    p, a, b = _select_parts(op)
    if not _is_bool(a):
        return False
    sa, sb = _bool_scalar(a), _bool_scalar(b)
    if sa is None or sb is None or sa == sb:
        return False
    rt = ir.RankedTensorType(op.results[0].type)
    with rewriter.ip:
        r = p if sa else B.op1("stablehlo.not", [p], p.type, loc=op.location)
        r = _to_result_shape(r, rt, op.location)
    return replace(rewriter, op, r)


def _minmax_from_select(op, allow_float: bool):
    p, a, b = _select_parts(op)
    c = defining_op(p)
    if c is None or c.operation.name != "stablehlo.compare":
        return None
    if shape_of(p) != shape_of(a):
        return None
    x, y = c.operands[0], c.operands[1]
    et = element_type_of(a)
    if is_float_type(et):
        if not allow_float:
            return None
    elif not _is_int(a):
        return None
    direction, ct = compare_parts(c)
    if direction not in ("LT", "LE", "GT", "GE"):
        return None
    if isinstance(et, ir.IntegerType):
        unsigned = ir.IntegerType(et).is_unsigned
        if ct not in (None, "UNSIGNED" if unsigned else "SIGNED"):
            return None
    elif ct not in (None, "FLOAT"):
        return None
    greater = direction in ("GT", "GE")
    if (x, y) == (a, b):
        return "stablehlo.maximum" if greater else "stablehlo.minimum"
    if (x, y) == (b, a):
        return "stablehlo.minimum" if greater else "stablehlo.maximum"
    return None


@pattern("select_compare_to_minmax", FAMILY, "stablehlo.select", benefit=1)
def select_compare_to_minmax(op, rewriter):
    """select(a > b, a, b) -> max(a, b); select(a < b, a, b) -> min(a, b) (integers)."""
    name = _minmax_from_select(op, allow_float=False)
    if name is None:
        return False
    _, a, b = _select_parts(op)
    with rewriter.ip:
        r = B.op1(name, [a, b], op.results[0].type, loc=op.location)
    return replace(rewriter, op, r)


@pattern("select_compare_to_minmax_float", FAMILY, "stablehlo.select", benefit=1, fast_math=True)
def select_compare_to_minmax_float(op, rewriter):
    """select(a > b, a, b) -> max(a, b) for floats (NaN and signed-zero behaviour may change)."""
    if not is_float_type(element_type_of(op.operands[1])):
        return False
    name = _minmax_from_select(op, allow_float=True)
    if name is None:
        return False
    _, a, b = _select_parts(op)
    with rewriter.ip:
        r = B.op1(name, [a, b], op.results[0].type, loc=op.location)
    return replace(rewriter, op, r)


# -- compare ---------------------------------------------------------------------------------

def _compare_fold_constants_value(op):
    a, b = op.operands
    direction, ct = compare_parts(op)
    if ct == "TOTALORDER":
        return None
    x = read_constant(a, _FOLD_LIMIT)
    y = read_constant(b, _FOLD_LIMIT)
    if x is None or y is None:
        return None
    if x.dtype.kind not in "biuf" or x.dtype.name == "bfloat16":
        return None
    with np.errstate(all="ignore"):
        return K.compare(x, y, direction, ct)


@pattern("compare_fold_constants", FAMILY, "stablehlo.compare", benefit=3)
def compare_fold_constants(op, rewriter):
    """compare(c1, c2) -> constant (IEEE semantics for floats; size-capped)."""
    res = _compare_fold_constants_value(op)
    if res is None:
        return False
    rt = ir.RankedTensorType(op.results[0].type)
    with rewriter.ip:
        r = B.constant(np.broadcast_to(res, tuple(rt.shape)), rt, loc=op.location)
    return replace(rewriter, op, r)


def _range_decides(direction, ra, rb):
    (la, ha), (lb, hb) = ra, rb
    if direction == "LT":
        return True if ha < lb else (False if la >= hb else None)
    if direction == "LE":
        return True if ha <= lb else (False if la > hb else None)
    if direction == "GT":
        return True if la > hb else (False if ha <= lb else None)
    if direction == "GE":
        return True if la >= hb else (False if ha < lb else None)
    if direction == "EQ":
        if la == ha == lb == hb:
            return True
        return False if (ha < lb or hb < la) else None
    if direction == "NE":
        if la == ha == lb == hb:
            return False
        return True if (ha < lb or hb < la) else None
    return None


@pattern("compare_range_fold", FAMILY, "stablehlo.compare", benefit=2)
def compare_range_fold(op, rewriter):
    """compare(a, b) -> constant when the value ranges of integer a and b decide it
    (e.g. iota < 0 is false everywhere)."""
    a, b = op.operands
    if not _is_int(a):
        return False
    direction, ct = compare_parts(op)
    with unchanged_ir():  # (one query: both sides often read the same loop counters)
        ra = int_range(a)
        rb = None if ra is None else int_range(b)
    if ra is None or rb is None:
        return False
    unsigned_type = ir.IntegerType(element_type_of(a)).is_unsigned
    if ct == "UNSIGNED" and not unsigned_type and (ra[0] < 0 or rb[0] < 0):
        return False
    if ct == "SIGNED" and unsigned_type:
        return False
    if ra[0] == ra[1] and rb[0] == rb[1] and defining_op(a) is not None \
            and op_name(a) == "stablehlo.constant" and op_name(b) == "stablehlo.constant":
        return False  # compare_fold_constants
    val = _range_decides(direction, ra, rb)
    if val is None:
        return False
    with rewriter.ip:
        r = B.full(val, ir.RankedTensorType(op.results[0].type), loc=op.location)
    return replace(rewriter, op, r)


def _is_constant_like(v) -> bool:
    return scalar_value(v) is not None or op_name(v) == "stablehlo.constant"


@pattern("compare_const_to_rhs", FAMILY, "stablehlo.compare", benefit=1)
def compare_const_to_rhs(op, rewriter):
    """compare(c, x) -> compare(x, c) with the swapped direction (canonical form)."""
    a, b = op.operands
    if not _is_constant_like(a) or _is_constant_like(b):
        return False
    direction, ct = compare_parts(op)
    with rewriter.ip:
        r = B.op1("stablehlo.compare", [b, a], op.results[0].type,
                  compare_attrs(_SWAP[direction], ct), loc=op.location)
    return replace(rewriter, op, r)

@pattern("compare_of_select_consts", FAMILY, "stablehlo.compare", benefit=2)
def compare_of_select_consts(op, rewriter):
    """compare(select(p, c1, c2), c3) -> select(p, c1 ? c3, c2 ? c3) with the compares folded
    (splat constants; the select then simplifies to p, not p or a constant)."""
    a, b = op.operands
    d = defining_op(a)
    if d is None or d.operation.name != "stablehlo.select" or not has_one_use(a):
        return False
    p, x, y = _select_parts(d)
    sx, sy, sb = scalar_value(x), scalar_value(y), scalar_value(b)
    if sx is None or sy is None or sb is None:
        return False
    direction, ct = compare_parts(op)
    if ct == "TOTALORDER":
        return False
    dt = np_dtype(element_type_of(a))
    if dt is None or dt.name == "bfloat16":
        return False
    with np.errstate(all="ignore"):
        vx = bool(K.compare(np.array([sx], dt), np.array([sb], dt), direction, ct)[0])
        vy = bool(K.compare(np.array([sy], dt), np.array([sb], dt), direction, ct)[0])
    rt = ir.RankedTensorType(op.results[0].type)
    with rewriter.ip:
        if vx == vy:
            r = B.full(vx, rt, loc=op.location)
        else:
            q = p if vx else B.op1("stablehlo.not", [p], p.type, loc=op.location)
            r = _to_result_shape(q, rt, op.location)
    return replace(rewriter, op, r)


def _widening_source(v):
    """For v = convert(x) widening an integer without changing signedness: x."""
    d = defining_op(v)
    if d is None or d.operation.name != "stablehlo.convert":
        return None
    x = d.operands[0]
    src, dst = element_type_of(x), element_type_of(v)
    if not (isinstance(src, ir.IntegerType) and isinstance(dst, ir.IntegerType)):
        return None
    s, t = ir.IntegerType(src), ir.IntegerType(dst)
    if s.width == 1 or s.width >= t.width or s.is_unsigned != t.is_unsigned:
        return None
    return x


@pattern("compare_convert_widen", FAMILY, "stablehlo.compare", benefit=1)
def compare_convert_widen(op, rewriter):
    """compare(convert(x), convert(y)) -> compare(x, y) for sign-preserving integer widening;
    compare(convert(x), c) -> compare(x, c') when the constant c fits x's type."""
    a, b = op.operands
    xa = _widening_source(a)
    if xa is None:
        return False
    direction, ct = compare_parts(op)
    unsigned = ir.IntegerType(element_type_of(a)).is_unsigned
    if ct not in (None, "UNSIGNED" if unsigned else "SIGNED"):
        return False
    xb = _widening_source(b)
    if xb is not None:
        if element_type_of(xb) != element_type_of(xa):
            return False
        new_b = xb
        with rewriter.ip:
            r = B.op1("stablehlo.compare", [xa, new_b], op.results[0].type,
                      compare_attrs(direction, ct), loc=op.location)
        return replace(rewriter, op, r)
    s = scalar_value(b)
    if s is None:
        return False
    dt = np_dtype(element_type_of(xa))
    info = np.iinfo(dt)
    if not (int(info.min) <= int(s) <= int(info.max)):
        return False
    with rewriter.ip:
        k = B.full(int(s), ir.RankedTensorType(xa.type), loc=op.location)
        r = B.op1("stablehlo.compare", [xa, k], op.results[0].type,
                  compare_attrs(direction, ct), loc=op.location)
    return replace(rewriter, op, r)

@pattern("compare_same_operand", FAMILY, "stablehlo.compare", benefit=3)
def compare_same_operand(op, rewriter):
    """compare(x, x): EQ/LE/GE -> true, NE/LT/GT -> false (integers or TOTALORDER)."""
    a, b = op.operands
    if a != b or not _exact_compare_type(op):
        return False
    direction, _ = compare_parts(op)
    val = direction in ("EQ", "LE", "GE")
    with rewriter.ip:
        r = B.full(val, ir.RankedTensorType(op.results[0].type), loc=op.location)
    return replace(rewriter, op, r)


@pattern("compare_i1_with_const", FAMILY, "stablehlo.compare", benefit=2)
def compare_i1_with_const(op, rewriter):
    """compare(p, true, EQ) -> p; compare(p, false, NE) -> p; the other two -> not p (i1)."""
    a, b = op.operands
    if not _is_bool(a):
        return False
    direction, _ = compare_parts(op)
    if direction not in ("EQ", "NE"):
        return False
    s = _bool_scalar(b)
    x = a
    if s is None:
        s = _bool_scalar(a)
        x = b
    if s is None or _bool_scalar(x) is not None:
        return False
    keep = (direction == "EQ") == s
    with rewriter.ip:
        r = x if keep else B.op1("stablehlo.not", [x], x.type, loc=op.location)
    return replace(rewriter, op, r)


# -- boolean logic ---------------------------------------------------------------------------

@pattern("not_compare", FAMILY, "stablehlo.not", benefit=2)
def not_compare(op, rewriter):
    """not(compare(a, b, d)) -> compare(a, b, inverse d) (integers/TOTALORDER; EQ/NE for floats)."""
    c = defining_op(op.operands[0])
    if c is None or c.operation.name != "stablehlo.compare" or not has_one_use(c.results[0]):
        return False
    direction, ct = compare_parts(c)
    if not _exact_compare_type(c) and direction not in ("EQ", "NE"):
        return False
    with rewriter.ip:
        r = B.op1("stablehlo.compare", list(c.operands), op.results[0].type,
                  compare_attrs(_INVERSE[direction], ct), loc=op.location)
    return replace(rewriter, op, r)


@pattern("logic_not_not", FAMILY, "stablehlo.not", benefit=3)
def logic_not_not(op, rewriter):
    """not(not x) -> x."""
    d = defining_op(op.operands[0])
    if d is None or d.operation.name != "stablehlo.not":
        return False
    return replace(rewriter, op, d.operands[0])


@pattern("logic_idempotent", FAMILY, ("stablehlo.and", "stablehlo.or"), benefit=3)
def logic_idempotent(op, rewriter):
    """and(x, x) -> x; or(x, x) -> x."""
    a, b = op.operands
    if a != b:
        return False
    return replace(rewriter, op, a)


@pattern("logic_xor_self", FAMILY, "stablehlo.xor", benefit=3)
def logic_xor_self(op, rewriter):
    """xor(x, x) -> 0."""
    a, b = op.operands
    if a != b:
        return False
    with rewriter.ip:
        r = B.full(0, ir.RankedTensorType(op.results[0].type), loc=op.location)
    return replace(rewriter, op, r)


@pattern("logic_complement", FAMILY, ("stablehlo.and", "stablehlo.or"), benefit=2)
def logic_complement(op, rewriter):
    """and(x, not x) -> 0; or(x, not x) -> all ones (booleans and integers)."""
    a, b = op.operands
    hit = False
    for x, y in ((a, b), (b, a)):
        d = defining_op(y)
        if d is not None and d.operation.name == "stablehlo.not" and d.operands[0] == x:
            hit = True
    if not hit:
        return False
    rt = ir.RankedTensorType(op.results[0].type)
    val = 0 if op.operation.name == "stablehlo.and" else all_ones_value(rt.element_type)
    with rewriter.ip:
        r = B.full(val, rt, loc=op.location)
    return replace(rewriter, op, r)


@pattern("logic_bool_consts", FAMILY, ("stablehlo.and", "stablehlo.or"), benefit=2)
def logic_bool_consts(op, rewriter):
    """and(x, all-ones) -> x, and(x, 0) -> 0, or(x, 0) -> x, or(x, all-ones) -> all-ones."""
    a, b = op.operands
    rt = ir.RankedTensorType(op.results[0].type)
    et = rt.element_type
    if not isinstance(et, ir.IntegerType):
        return False
    ones = int(all_ones_value(et))
    is_and = op.operation.name == "stablehlo.and"
    for x, y in ((a, b), (b, a)):
        s = scalar_value(y)
        if s is None:
            continue
        s = int(s)
        if (is_and and s == ones) or (not is_and and s == 0):
            if x.type != op.results[0].type:
                return False
            return replace(rewriter, op, x)
        if (is_and and s == 0) or (not is_and and s == ones):
            with rewriter.ip:
                r = B.full(s, rt, loc=op.location)
            return replace(rewriter, op, r)
    return False


# -- clamp -----------------------------------------------------------------------------------

def _clamp_bound(v, lower: bool):
    s = scalar_value(v)
    if s is not None:
        return s
    a = read_constant(v, _FOLD_LIMIT)
    if a is None or a.size == 0:
        return None
    return a.max() if lower else a.min()


@pattern("clamp_covering", FAMILY, "stablehlo.clamp", benefit=2)
def clamp_covering(op, rewriter):
    """clamp(lo, x, hi) -> x when [lo, hi] covers the element type's range (ints) or is
    [-inf, inf] (floats), or when x's known value range lies within [lo, hi] (ints)."""
    lo_v, x, hi_v = op.operands
    if x.type != op.results[0].type:
        return False
    et = element_type_of(x)
    lo, hi = _clamp_bound(lo_v, True), _clamp_bound(hi_v, False)
    if lo is None or hi is None:
        return False
    if is_float_type(et):
        ok = np.isneginf(lo) and np.isposinf(hi)
    elif _is_int(x):
        dt = np_dtype(et)
        if dt is None:
            return False
        info = np.iinfo(dt)
        lo, hi = int(lo), int(hi)
        ok = lo <= int(info.min) and hi >= int(info.max)
        if not ok:
            r = int_range(x)
            ok = r is not None and lo <= r[0] and r[1] <= hi
    else:
        return False
    if not ok:
        return False
    return replace(rewriter, op, x)

@pattern("clamp_clamp", FAMILY, "stablehlo.clamp", benefit=2)
def clamp_clamp(op, rewriter):
    """clamp(a, clamp(b, x, c), d) -> clamp(max(a,b), x, min(c,d)) for integer scalar constant
    bounds (a constant when the intervals do not meet)."""
    lo1, inner, hi1 = op.operands
    d = defining_op(inner)
    if d is None or d.operation.name != "stablehlo.clamp" or not _is_int(inner):
        return False
    lo2, x, hi2 = d.operands
    b = [scalar_value(v) for v in (lo1, hi1, lo2, hi2)]
    if any(v is None for v in b) or any(shape_of(v) != () for v in (lo1, hi1, lo2, hi2)):
        return False
    a_, d_, b_, c_ = (int(v) for v in b)
    if b_ > c_ or a_ > d_:
        return False
    lo, hi = max(a_, b_), min(c_, d_)
    et = ir.RankedTensorType(lo1.type)
    with rewriter.ip:
        if lo > hi:  # disjoint: everything ends at the outer clamp of the inner interval
            val = a_ if c_ < a_ else d_
            r = B.full(val, ir.RankedTensorType(op.results[0].type), loc=op.location)
        else:
            r = B.op1("stablehlo.clamp", [B.full(lo, et, loc=op.location), x,
                                          B.full(hi, et, loc=op.location)],
                      op.results[0].type, loc=op.location)
    return replace(rewriter, op, r)


@pattern("clamp_fold_constants", FAMILY, "stablehlo.clamp", benefit=3)
def clamp_fold_constants(op, rewriter):
    """clamp(lo, c, hi) with all-constant integer operands -> constant."""
    lo, x, hi = op.operands
    if not _is_int(x):
        return False
    arrs = [read_constant(v, _FOLD_LIMIT) for v in (lo, x, hi)]
    if any(a is None for a in arrs):
        return False
    rt = ir.RankedTensorType(op.results[0].type)
    res = np.minimum(np.maximum(arrs[1], arrs[0]), arrs[2])
    with rewriter.ip:
        r = B.constant(np.broadcast_to(res, tuple(rt.shape)), rt, loc=op.location)
    return replace(rewriter, op, r)
