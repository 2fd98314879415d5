"""One analysis of ``stablehlo.while`` loops, shared by the rewrite patterns and the AD pass.

``analyze(w)`` finds, once per loop: the pass-through slots (returned unchanged), the
integer counters (scalar slots stepped by a constant, up or down), the counter the condition
compares against a bound (a constant, or a pass-through slot holding one), the static trip
count, and for counters stepping up to their bound the range of values they take inside the
body (only when that range cannot overflow the counter's type). Constants are found by the
evaluator, so ``init = 2 * 3`` or a converted constant counts.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
from jaxlib.mlir import ir

from .attrs import compare_parts, int_attr_value, read_constant
from .evaluate import scalar_int_value
from .regions import single_block, terminator
from .types import np_dtype, shape_of, tensor_type
from .values import defining_op

_MIRROR = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE"}


@dataclass
class WhileLoopInfo:
    op: object  # the stablehlo.while
    inits: list  # initial values of the carried slots
    cond: ir.Block
    body: ir.Block
    yields: list  # the values the body returns per slot
    passthrough: set = field(default_factory=set)  # slots the body returns unchanged
    steps: dict = field(default_factory=dict)  # counter slot -> constant step (negative: counts down)
    counter: int | None = None  # the counter slot the condition compares against its bound
    trip_count: int | None = None  # iterations, when static
    trip_bound: int | None = None  # an upper bound on the iterations (== trip_count when static)
    ranges: dict = field(default_factory=dict)  # counter slot -> (lo, hi) of its values in the body

    @property
    def n(self) -> int:
        return len(self.inits)


def while_parts(w):
    """(inits, cond block, body block, yields) of a ``stablehlo.while`` with single-block
    regions, else None."""
    cond, body = single_block(w.regions[0]), single_block(w.regions[1])
    if cond is None or body is None:
        return None
    ret, inits = terminator(body), list(w.operands)
    # (a loop the tracer is still building has no return yet: nothing is known of it)
    cret = terminator(cond)
    if ret is None or ret.operation.name != "stablehlo.return" or len(ret.operands) != len(inits) \
            or cret is None or cret.operation.name != "stablehlo.return":
        return None
    return inits, cond, body, list(ret.operands)


def analyze(w) -> WhileLoopInfo | None:
    """The facts of loop ``w`` (None when a region has several blocks)."""
    parts = while_parts(w)
    if parts is None:
        return None
    inits, cond, body, yields = parts
    info = WhileLoopInfo(w, inits, cond, body, yields)
    info.passthrough = {j for j, (a, y) in enumerate(zip(body.arguments, yields)) if y == a}
    for j, a in enumerate(body.arguments):
        step = _step(a, yields[j])
        if step is not None:
            info.steps[j] = step
    _condition(info)
    return info


def _step(arg: ir.Value, y: ir.Value) -> int | None:
    """``c`` when the body returns ``arg + c`` / ``c + arg`` (or ``arg - c``: ``-c``) for an
    integer scalar ``arg`` and a constant ``c``."""
    t = arg.type
    if not isinstance(t, ir.RankedTensorType) or not isinstance(t.element_type, ir.IntegerType) \
            or t.rank != 0 or t.element_type.width == 1:  # (tokens are carried too)
        return None
    op = defining_op(y)
    if op is None or op.operation.name not in ("stablehlo.add", "stablehlo.subtract"):
        return None
    a, b = op.operands
    if a == arg:
        c = scalar_int_value(b)
        return None if c is None else (-c if op.operation.name == "stablehlo.subtract" else c)
    if b == arg and op.operation.name == "stablehlo.add":
        return scalar_int_value(a)
    return None


def slot_of(v: ir.Value, block: ir.Block) -> int | None:
    """The argument number of ``v`` when it is an argument of ``block``, else None."""
    owner = v.owner
    if isinstance(owner, ir.Block) and owner == block:
        return ir.BlockArgument(v).arg_number
    return None


def _bound(v: ir.Value, info: WhileLoopInfo) -> int | None:
    """A constant, or a pass-through slot of the condition holding one."""
    k = slot_of(v, info.cond)
    if k is not None:
        return scalar_int_value(info.inits[k]) if k in info.passthrough else None
    return scalar_int_value(v)


def _condition(info: WhileLoopInfo) -> None:
    """The counter, trip count and counter ranges from the condition ``counter <op> bound``."""
    term = terminator(info.cond)
    if term is None or len(term.operands) != 1:
        return
    cmp = defining_op(term.operands[0])
    if cmp is None or cmp.operation.name != "stablehlo.compare" or tensor_type(cmp.results[0]).rank != 0:
        return
    direction, ct = compare_parts(cmp)
    lhs, rhs = cmp.operands
    dt = np_dtype(tensor_type(lhs).element_type)
    signed_ok = not ((ct == "UNSIGNED" and dt.kind == "i") or (ct == "SIGNED" and dt.kind == "u"))
    k, bound = slot_of(lhs, info.cond), None
    if k is not None and k in info.steps:
        bound = _bound(rhs, info)
        if bound is None:
            _trip_bound(info, k, direction, rhs, dt, signed_ok)
    if bound is None:
        k, direction = slot_of(rhs, info.cond), _MIRROR[direction]
        if k is None or k not in info.steps:
            return
        bound = _bound(lhs, info)
        if bound is None:
            if info.trip_bound is None:
                _trip_bound(info, k, direction, lhs, dt, signed_ok)
            return
    init = scalar_int_value(info.inits[k])
    if init is None:
        return
    info.counter = k
    step = info.steps[k]
    info.trip_count = _trip_count(direction, init, bound, step)
    info.trip_bound = info.trip_count
    _counter_range(info, k, direction, init, bound, step, dt, signed_ok)


def _counter_range(info: WhileLoopInfo, k: int, direction: str, init: int, bound: int, step: int, dt,
                   signed_ok: bool) -> None:
    """The range of counter ``k`` in the body when it steps up from ``init`` while it is below
    ``bound`` (or at most ``bound``, LE), the largest value the bound takes: every value the
    body sees passed the condition, and none overflows on its way there."""
    if step > 0 and direction in ("LT", "LE") and signed_ok:
        hi = bound - 1 if direction == "LT" else bound
        if init <= hi and hi + step <= int(np.iinfo(dt).max):
            info.ranges[k] = (init, hi)


def _trip_bound(info: WhileLoopInfo, k: int, direction: str, bound_value: ir.Value, dt, signed_ok: bool) -> None:
    """An upper bound on the trip count when the bound is not a constant but its range is
    known (e.g. an inner loop ``for j in range(i + 1)`` of a loop over ``i``), and the
    counter's range in the body below the bound's largest value."""
    init = scalar_int_value(info.inits[k])
    if init is None:
        return
    step = info.steps[k]
    src = bound_value
    j = slot_of(bound_value, info.cond)
    if j is not None:
        if j not in info.passthrough:
            return
        src = info.inits[j]
    r = int_range(src)
    if r is None:
        return
    lo, hi = r
    t = _trip_count(direction, init, hi if step > 0 else lo, step)
    if t is not None:
        info.trip_bound = t
    _counter_range(info, k, direction, init, hi, step, dt, signed_ok)


def _type_bounds(dt) -> tuple[int, int] | None:
    if dt == np.bool_:
        return 0, 1
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(info.min), int(info.max)
    return None


# the values and loops one ``int_range`` query has bounded: a query walks the DAG of the
# values it depends on, through the loops whose counters it reaches, and meets the same ones
# many times (741 visits for 113 queries in one pattern pass of an LU factorization). Kept for
# one outermost query only, during which nothing changes the IR.
_QUERY = threading.local()


def int_range(v: ir.Value, _depth: int = 0, env: dict | None = None) -> tuple[int, int] | None:
    """Inclusive bounds (lo, hi) of an integer tensor's elements, from constants, iotas and
    interval arithmetic through layout ops and overflow-free arithmetic; None if unknown.
    ``env`` maps values (e.g. a loop's induction variable) to known bounds."""
    memo = getattr(_QUERY, "memo", None)
    if memo is None:
        with unchanged_ir():
            return int_range(v, _depth, env)
    key = v
    if env:  # (bounds under assumptions are kept apart)
        memo.setdefault(("env", id(env)), env)  # (kept alive: no other env takes its id)
        key = (id(env), v)
    hit = memo.get(key)
    # (a bound found with less depth left holds for any query; an unknown only for as little)
    if hit is not None and (hit[1] is not None or hit[0] <= _depth):
        return hit[1]
    out = _int_range(v, _depth, env)
    memo[key] = (_depth, out)
    return out


class unchanged_ir:
    """``with unchanged_ir():`` — the integer ranges and loop facts found in the block are
    remembered until it ends: for analyses that query many values before rewriting anything
    (the IR must not change inside; nested blocks share the outermost's memo)."""

    def __enter__(self):
        self.outer = getattr(_QUERY, "memo", None) is not None
        if not self.outer:
            _QUERY.memo = {}
        return self

    def __exit__(self, *exc):
        if not self.outer:
            _QUERY.memo = None
        return False


def _int_range(v: ir.Value, _depth: int, env: dict | None) -> tuple[int, int] | None:
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
                "stablehlo.negate", "stablehlo.convert", "stablehlo.remainder", "stablehlo.divide"):
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
    if name == "stablehlo.divide":  # truncated, by a positive constant
        a, b = r(ops_[0]), r(ops_[1])
        if a is None or b is None or b[0] != b[1] or b[0] <= 0:
            return None
        return _tdiv(a[0], b[0]), _tdiv(a[1], b[0])
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


def _tdiv(a: int, c: int) -> int:
    return abs(a) // c if a >= 0 else -(abs(a) // c)


def add_affine(a: tuple[dict, int], b: tuple[dict, int], sign: int = 1) -> tuple[dict, int]:
    """``a + sign * b`` for ``(coefficients, constant)`` forms, dropping zero coefficients."""
    coefs = dict(a[0])
    for key, k in b[0].items():
        coefs[key] = coefs.get(key, 0) + sign * k
    return {key: k for key, k in coefs.items() if k}, a[1] + sign * b[1]


def scale_affine(a: tuple[dict, int], k: int) -> tuple[dict, int]:
    """``k * a`` for a ``(coefficients, constant)`` form, dropping zero coefficients."""
    return {key: c * k for key, c in a[0].items() if c * k}, a[1] * k


def affine_form(v: ir.Value, depth: int = 24) -> tuple[dict, int] | None:
    """``v`` (an integer scalar) as ``sum(coef * leaf) + const`` over leaf values, through
    +, -, negation, multiplication by a constant and integer conversions; None when it is not
    of that form (so ``affine_form(b) - affine_form(a)`` tells whether ``b - a`` is a
    constant)."""
    c = scalar_int_value(v)
    if c is not None:
        return {}, c
    op = defining_op(v) if depth else None
    name = op.operation.name if op is not None else None
    if name == "stablehlo.convert" and np_dtype(tensor_type(op.operands[0]).element_type).kind in "iu":
        return affine_form(op.operands[0], depth - 1)
    if name in ("stablehlo.add", "stablehlo.subtract"):
        a, b = affine_form(op.operands[0], depth - 1), affine_form(op.operands[1], depth - 1)
        if a is None or b is None:
            return None
        return add_affine(a, b, 1 if name == "stablehlo.add" else -1)
    if name == "stablehlo.negate":
        a = affine_form(op.operands[0], depth - 1)
        return None if a is None else ({leaf: -k for leaf, k in a[0].items()}, -a[1])
    if name == "stablehlo.multiply":
        for x, y in (op.operands, reversed(list(op.operands))):
            k = scalar_int_value(y)
            if k is not None:
                a = affine_form(x, depth - 1)
                return None if a is None else scale_affine(a, k)
        return None
    return {v: 1}, 0


def _trip_count(direction: str, init: int, bound: int, step: int) -> int | None:
    if step == 0:
        return None
    if direction == "LT" and step > 0:
        t = -(-(bound - init) // step)
    elif direction == "LE" and step > 0:
        t = (bound - init) // step + 1
    elif direction == "GT" and step < 0:
        t = -(-(init - bound) // (-step))
    elif direction == "GE" and step < 0:
        t = (init - bound) // (-step) + 1
    elif direction == "NE":
        d = bound - init
        if d % step != 0 or d // step < 0:
            return None
        t = d // step
    else:
        return None
    return max(0, int(t))


def loop_counter_range(v: ir.Value) -> tuple[int, int] | None:
    """(lo, hi) of the values a while-body argument takes, when it is a counter stepping up to
    a constant bound (see ``analyze``); else None."""
    blk = v.owner
    if not isinstance(blk, ir.Block):
        return None
    parent = blk.owner
    if parent is None or parent.operation.name != "stablehlo.while":
        return None
    w = parent.opview if hasattr(parent, "opview") else parent
    memo = getattr(_QUERY, "memo", None)
    key = ("while", w.operation)
    if memo is not None and key in memo:
        info = memo[key]
    else:
        info = analyze(w)
        if memo is not None:
            memo[key] = info
    if info is None or blk != info.body:
        return None
    return info.ranges.get(ir.BlockArgument(v).arg_number)
