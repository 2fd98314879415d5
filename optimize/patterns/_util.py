"""Analyses shared by the pattern families (reduction kinds and identities, exact evaluation
and value ranges of integer index computations, equivalence of regions). Types, constants
and op builders come from ``reactant.ir``."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from ...ir.attrs import all_ones_value, compare_parts, i64_list, int_attr_value, read_constant, scalar_value, splat_value
from ...ir.types import element_type_of, np_dtype, shape_of
from ...ir.values import defining_op



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
    if dt is None or dt.kind == "c":
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
            res = read_constant(v, max_elements)
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
        dt = np_dtype(element_type_of(v))
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
