"""Algebraic identities and strength reduction on elementwise StableHLO ops.

Exactness rules. A pattern here is on by default only if it gives bit-identical results
(up to the rounding of the ops it leaves), NaN/Inf and the sign of zero included, for every
input of the element types it accepts. Identities that only hold for finite inputs or up to
the sign of zero (``x*0 → 0``, ``x+(+0.0) → x``, ``x-x → 0``, ``exp(log x) → x``,
re-association of float constants, ...) are registered with ``fast_math=True`` (the ``_fast``
names) and run only with ``PassOptions.fast_math``. Integer arithmetic wraps, so integer
re-association and cancellation are exact.

Every pattern strictly reduces the op count or replaces an op with a cheaper one of the same
count (``pow(x,2) → x*x``, ``x/c → x*(1/c)``); none has an inverse registered here, so the
greedy fixpoint exists.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from ...ir import build as B
from ...ir.attrs import all_ones_value
from ...ir.opinfo import OPS
from ...ir.types import element_type_of, is_float_type, np_dtype
from ...ir.values import def_of, defining_op
from ._registry import identity_pattern, pattern, replace, variant
from ._util import int_range, is_scalar_value, scalar_value

FAMILY = "algebraic"


# -- small helpers ---------------------------------------------------------------------------


def _is_float(v: ir.Value) -> bool:
    return is_float_type(element_type_of(v))


def _is_int(v: ir.Value) -> bool:
    """Integer (bool included)."""
    return isinstance(element_type_of(v), ir.IntegerType)


def _is_bool(v: ir.Value) -> bool:
    et = element_type_of(v)
    return isinstance(et, ir.IntegerType) and ir.IntegerType(et).width == 1


def _is_signed_int(v: ir.Value) -> bool:
    et = element_type_of(v)
    return (isinstance(et, ir.IntegerType) and ir.IntegerType(et).width > 1
            and not ir.IntegerType(et).is_unsigned)


def _pairs(op):
    a, b = op.operands[0], op.operands[1]
    return ((a, b), (b, a))


def _is_zero_exact(x: ir.Value, z: ir.Value) -> bool:
    """``z`` is the exact additive identity for ``x``: integer 0, float -0.0."""
    if _is_int(x):
        return is_scalar_value(z, 0)
    return _is_float(x) and is_scalar_value(z, -0.0)


def _is_pos_zero_float(x: ir.Value, z: ir.Value) -> bool:
    return _is_float(x) and is_scalar_value(z, 0.0)


def _zero_like(v: ir.Value, loc) -> ir.Value:
    return B.full(0, ir.RankedTensorType(v.type), loc=loc)


def _neg(x: ir.Value, loc) -> ir.Value:
    return B.elementwise("stablehlo.negate", [x], loc=loc)


def _direction(op) -> str:
    return hlo.ComparisonDirectionAttr(op.attributes["comparison_direction"]).value


def _compare_type(op) -> str | None:
    if "compare_type" in op.attributes:
        return hlo.ComparisonTypeAttr(op.attributes["compare_type"]).value
    return None


# -- add / subtract --------------------------------------------------------------------------

@pattern("add_zero", FAMILY, "stablehlo.add", benefit=3)
def add_zero(op, rewriter):
    """x + 0 → x and 0 + x → x for integers; x + (-0.0) → x for floats (exact)."""
    for x, z in _pairs(op):
        if _is_zero_exact(x, z):
            return replace(rewriter, op, x)
    return False


@pattern("add_zero_fast", FAMILY, "stablehlo.add", benefit=3, fast_math=True)
def add_zero_fast(op, rewriter):
    """x + (+0.0) → x for floats (wrong for x = -0.0)."""
    for x, z in _pairs(op):
        if _is_pos_zero_float(x, z):
            return replace(rewriter, op, x)
    return False


@pattern("sub_zero", FAMILY, "stablehlo.subtract", benefit=3)
def sub_zero(op, rewriter):
    """x - 0 → x (integers; floats with +0.0, which is exact: -0 - 0 = -0)."""
    x, z = op.operands
    if (_is_int(x) and is_scalar_value(z, 0)) or _is_pos_zero_float(x, z):
        return replace(rewriter, op, x)
    return False


@pattern("sub_zero_fast", FAMILY, "stablehlo.subtract", benefit=3, fast_math=True)
def sub_zero_fast(op, rewriter):
    """x - (-0.0) → x for floats (wrong for x = -0.0)."""
    x, z = op.operands
    if _is_float(x) and is_scalar_value(z, -0.0):
        return replace(rewriter, op, x)
    return False


def _sub_self_to_zero(op, rewriter, of_type) -> bool:
    x, y = op.operands
    if x == y and of_type(x):
        with rewriter.ip:
            return replace(rewriter, op, _zero_like(x, op.location))
    return False


variant("sub_self", FAMILY, "stablehlo.subtract", _sub_self_to_zero, _is_int, benefit=3,
        doc="x - x → 0 for integers.")
variant("sub_self_fast", FAMILY, "stablehlo.subtract", _sub_self_to_zero, _is_float, benefit=3, fast_math=True,
        doc="x - x → 0 for floats (wrong for Inf/NaN).")


@pattern("zero_sub", FAMILY, "stablehlo.subtract", benefit=2)
def zero_sub(op, rewriter):
    """0 - x → -x for signed integers; (-0.0) - x → -x for floats (exact)."""
    z, x = op.operands
    if (_is_signed_int(x) and is_scalar_value(z, 0)) or (_is_float(x) and is_scalar_value(z, -0.0)):
        with rewriter.ip:
            return replace(rewriter, op, _neg(x, op.location))
    return False


@pattern("zero_sub_fast", FAMILY, "stablehlo.subtract", benefit=2, fast_math=True)
def zero_sub_fast(op, rewriter):
    """(+0.0) - x → -x for floats (wrong sign of zero for x = +0.0)."""
    z, x = op.operands
    if _is_pos_zero_float(x, z):
        with rewriter.ip:
            return replace(rewriter, op, _neg(x, op.location))
    return False


@pattern("add_neg", FAMILY, "stablehlo.add", benefit=2)
def add_neg(op, rewriter):
    """a + (-b) → a - b and (-b) + a → a - b (IEEE defines a - b as a + (-b))."""
    for a, nb in _pairs(op):
        n = def_of(nb, "negate")
        if n is not None:
            with rewriter.ip:
                return replace(rewriter, op, B.elementwise("stablehlo.subtract", [a, n.operands[0]],
                                                     loc=op.location))
    return False


@pattern("sub_neg", FAMILY, "stablehlo.subtract", benefit=2)
def sub_neg(op, rewriter):
    """a - (-b) → a + b, unless a is +0.0: (+0.0) + b is exact too, but XLA folds it to b
    (-0.0 for b = -0.0, where (+0.0) - (-b) is +0.0)."""
    a, nb = op.operands
    n = def_of(nb, "negate")
    if n is not None and not _is_pos_zero_float(a, a):
        with rewriter.ip:
            return replace(rewriter, op, B.elementwise("stablehlo.add", [a, n.operands[0]], loc=op.location))
    return False


def _neg_sub_swap(op, rewriter, of_type) -> bool:
    s = def_of(op.operands[0], "subtract")
    if s is not None and of_type(op.operands[0]):
        with rewriter.ip:
            return replace(rewriter, op, B.elementwise("stablehlo.subtract", [s.operands[1], s.operands[0]],
                                                 loc=op.location))
    return False


variant("neg_sub", FAMILY, "stablehlo.negate", _neg_sub_swap, _is_int, benefit=2,
        doc="-(a - b) → b - a for integers.")
variant("neg_sub_fast", FAMILY, "stablehlo.negate", _neg_sub_swap, _is_float, benefit=2, fast_math=True,
        doc="-(a - b) → b - a for floats (a == b gives -0.0 before, +0.0 after).")


def _cancel_sub_of_add(op, rewriter, ok) -> bool:
    """(a + b) - b → a, (a + b) - a → b."""
    s, y = op.operands
    a = def_of(s, "add")
    if a is None or not ok(y):
        return False
    p, q = a.operands
    if q == y:
        return replace(rewriter, op, p)
    if p == y:
        return replace(rewriter, op, q)
    return False


def _cancel_add_of_sub(op, rewriter, ok) -> bool:
    """(a - b) + b → a and b + (a - b) → a."""
    for s, y in _pairs(op):
        d = def_of(s, "subtract")
        if d is not None and ok(y) and d.operands[1] == y:
            return replace(rewriter, op, d.operands[0])
    return False


variant("sub_add_cancel", FAMILY, "stablehlo.subtract", _cancel_sub_of_add, _is_int, benefit=2,
        doc="(a + b) - b → a for integers (wrapping arithmetic is a group).")
variant("sub_add_cancel_fast", FAMILY, "stablehlo.subtract", _cancel_sub_of_add, _is_float, benefit=2, fast_math=True,
        doc="(a + b) - b → a for floats (not exact: rounding, overflow).")
variant("add_sub_cancel", FAMILY, "stablehlo.add", _cancel_add_of_sub, _is_int, benefit=2,
        doc="(a - b) + b → a for integers.")
variant("add_sub_cancel_fast", FAMILY, "stablehlo.add", _cancel_add_of_sub, _is_float, benefit=2, fast_math=True,
        doc="(a - b) + b → a for floats (not exact).")


def _splat_operand(d):
    """(x, s, x's NumPy dtype or None) for the first operand order of the binary op ``d``
    with a splat constant ``s`` against a non-constant ``x``; None if there is none."""
    for x, c in _pairs(d):
        s = scalar_value(c)
        if s is not None and scalar_value(x) is None:
            return x, s, np_dtype(element_type_of(x))
    return None


def _replace_by_op_with_splat(rewriter, op, name: str, x, value) -> bool:
    """Replace ``op`` by ``name(x, splat(value))``."""
    with rewriter.ip:
        k = B.full(value, ir.RankedTensorType(x.type), loc=op.location)
        return replace(rewriter, op, B.elementwise(name, [x, k], loc=op.location))


def _const_reassoc(op, rewriter, ok) -> bool:
    """(x op c1) op c2 → x op (c1 op c2) for splat constants c1, c2 (op add or multiply)."""
    name = op.operation.name
    for inner, c2 in _pairs(op):
        s2 = scalar_value(c2)
        if s2 is None or not ok(inner):
            continue
        d = defining_op(inner)
        if d is None or d.operation.name != name:
            continue
        xs = _splat_operand(d)
        if xs is None:
            continue
        x, s1, dt = xs
        if dt is None:
            return False
        with np.errstate(all="ignore"):
            a, b = np.array(s1).astype(dt), np.array(s2).astype(dt)
            c = (a + b) if name == "stablehlo.add" else (a * b)
        return _replace_by_op_with_splat(rewriter, op, name, x, c.item())
    return False


def _int_not_bool(v):
    return _is_int(v) and not _is_bool(v)


variant("add_const_reassoc", FAMILY, "stablehlo.add", _const_reassoc, _int_not_bool, benefit=2,
        doc="(x + c1) + c2 → x + (c1 + c2) for integers (wrapping).")
variant("mul_const_reassoc", FAMILY, "stablehlo.multiply", _const_reassoc, _int_not_bool, benefit=2,
        doc="(x * c1) * c2 → x * (c1 * c2) for integers (wrapping).")
variant("add_const_reassoc_fast", FAMILY, "stablehlo.add", _const_reassoc, _is_float, benefit=2, fast_math=True,
        doc="(x + c1) + c2 → x + (c1 + c2) for floats (rounding changes).")
variant("mul_const_reassoc_fast", FAMILY, "stablehlo.multiply", _const_reassoc, _is_float, benefit=2, fast_math=True,
        doc="(x * c1) * c2 → x * (c1 * c2) for floats (rounding, overflow changes).")


# -- multiply / divide -----------------------------------------------------------------------

@pattern("mul_one", FAMILY, "stablehlo.multiply", benefit=3)
def mul_one(op, rewriter):
    """x * 1 → x and 1 * x → x (any element type)."""
    for x, o in _pairs(op):
        if is_scalar_value(o, 1 if _is_int(x) else 1.0):
            return replace(rewriter, op, x)
    return False


@pattern("mul_zero", FAMILY, "stablehlo.multiply", benefit=3)
def mul_zero(op, rewriter):
    """x * 0 → 0 for integers (bool included)."""
    for x, z in _pairs(op):
        if _is_int(x) and is_scalar_value(z, 0):
            return replace(rewriter, op, z) if z.type == op.results[0].type else _with_zero(rewriter, op)
    return False


def _with_zero(rewriter, op):
    with rewriter.ip:
        return replace(rewriter, op, _zero_like(op.results[0], op.location))


@pattern("mul_zero_fast", FAMILY, "stablehlo.multiply", benefit=3, fast_math=True)
def mul_zero_fast(op, rewriter):
    """x * 0.0 → 0.0 for floats (wrong for Inf/NaN and for the sign of zero)."""
    for x, z in _pairs(op):
        if _is_float(x) and scalar_value(z) is not None and float(scalar_value(z)) == 0.0:
            return _with_zero(rewriter, op)
    return False


@pattern("mul_neg_one", FAMILY, "stablehlo.multiply", benefit=2)
def mul_neg_one(op, rewriter):
    """x * -1 → -x (floats, signed integers; exact, INT_MIN included)."""
    for x, m in _pairs(op):
        if (_is_float(x) and is_scalar_value(m, -1.0)) or (_is_signed_int(x) and is_scalar_value(m, -1)):
            with rewriter.ip:
                return replace(rewriter, op, _neg(x, op.location))
    return False


def _drop_both_negations(op, rewriter) -> bool:
    """(-a) op (-b) → a op b, for the binary ``op``."""
    na, nb = def_of(op.operands[0], "negate"), def_of(op.operands[1], "negate")
    if na is not None and nb is not None:
        with rewriter.ip:
            return replace(rewriter, op, B.elementwise(op.operation.name, [na.operands[0], nb.operands[0]],
                                                 loc=op.location))
    return False


@pattern("mul_neg_neg", FAMILY, "stablehlo.multiply", benefit=2)
def mul_neg_neg(op, rewriter):
    """(-a) * (-b) → a * b."""
    return _drop_both_negations(op, rewriter)


@pattern("div_neg_neg", FAMILY, "stablehlo.divide", benefit=2)
def div_neg_neg(op, rewriter):
    """(-a) / (-b) → a / b for floats."""
    return _is_float(op.operands[0]) and _drop_both_negations(op, rewriter)


@pattern("neg_mul_const", FAMILY, "stablehlo.negate", benefit=2)
def neg_mul_const(op, rewriter):
    """-(x * c) → x * (-c) for a splat constant c (floats, signed integers)."""
    m = def_of(op.operands[0], "multiply")
    if m is None:
        return False
    v = op.operands[0]
    if not (_is_float(v) or _is_signed_int(v)):
        return False
    xs = _splat_operand(m)
    if xs is None:
        return False
    x, s, dt = xs
    if dt is None:
        return False
    with np.errstate(all="ignore"):
        nc = (-np.array(s).astype(dt)).item()
    return _replace_by_op_with_splat(rewriter, op, "stablehlo.multiply", x, nc)


@pattern("div_one", FAMILY, "stablehlo.divide", benefit=3)
def div_one(op, rewriter):
    """x / 1 → x."""
    x, o = op.operands
    if is_scalar_value(o, 1 if _is_int(x) else 1.0):
        return replace(rewriter, op, x)
    return False


@pattern("div_neg_one", FAMILY, "stablehlo.divide", benefit=2)
def div_neg_one(op, rewriter):
    """x / -1 → -x for floats."""
    x, o = op.operands
    if _is_float(x) and is_scalar_value(o, -1.0):
        with rewriter.ip:
            return replace(rewriter, op, _neg(x, op.location))
    return False


def _tiny(dt) -> float:
    """The smallest normal number of a float dtype (bfloat16 included)."""
    if dt.name == "bfloat16":
        import ml_dtypes

        return float(ml_dtypes.finfo(dt).tiny)
    return float(np.finfo(dt).tiny)


def _reciprocal_splat(op, exact_only: bool):
    x, c = op.operands
    if not _is_float(x):
        return None
    s = scalar_value(c)
    if s is None:
        return None
    dt = np_dtype(element_type_of(x))
    if dt is None:
        return None
    cv = np.array(s).astype(dt)
    if not np.isfinite(cv) or cv == 0:
        return None
    with np.errstate(all="ignore"):
        r = (np.array(1.0, dtype=np.float64) / cv.astype(np.float64)).astype(dt)
    if not np.isfinite(r) or abs(float(r)) < _tiny(dt):
        return None  # 1/c overflows or is subnormal: x*(1/c) would not round like x/c
    if exact_only:
        m, _ = np.frexp(float(cv))
        if abs(m) != 0.5:  # c is not a power of two
            return None
    return float(r)


def _div_by_reciprocal(op, rewriter, exact_only: bool) -> bool:
    r = _reciprocal_splat(op, exact_only=exact_only)
    if r is None:
        return False
    x = op.operands[0]
    with rewriter.ip:
        k = B.full(r, ir.RankedTensorType(x.type), loc=op.location)
        return replace(rewriter, op, B.elementwise("stablehlo.multiply", [x, k], loc=op.location))


variant("div_pow2", FAMILY, "stablehlo.divide", _div_by_reciprocal, True, benefit=2,
        doc="x / c → x * (1/c) for a float splat c = ±2^k whose reciprocal is a normal number "
            "(then both round the same real number once: exact).")
variant("div_const_fast", FAMILY, "stablehlo.divide", _div_by_reciprocal, False, benefit=1, fast_math=True,
        doc="x / c → x * (1/c) for any finite float splat c (one extra rounding).")


@pattern("div_self_fast", FAMILY, "stablehlo.divide", benefit=3, fast_math=True)
def div_self_fast(op, rewriter):
    """x / x → 1 for floats (wrong for 0, Inf, NaN)."""
    x, y = op.operands
    if x == y and _is_float(x):
        with rewriter.ip:
            return replace(rewriter, op, B.full(1.0, ir.RankedTensorType(x.type), loc=op.location))
    return False


@pattern("remainder_one", FAMILY, "stablehlo.remainder", benefit=3)
def remainder_one(op, rewriter):
    """x rem ±1 → 0 for integers."""
    x, o = op.operands
    if _int_not_bool(x) and (is_scalar_value(o, 1) or (_is_signed_int(x) and is_scalar_value(o, -1))):
        return _with_zero(rewriter, op)
    return False


@pattern("remainder_in_range", FAMILY, "stablehlo.remainder", benefit=3)
def remainder_in_range(op, rewriter):
    """x rem c → x - k·c for integers when every x lies in [k·c, (k+1)·c), k ≥ 0 (the
    negative-index wrap ``(i + n) rem n`` of a loop counter i in [0, n) becomes i + n - n)."""
    x, o = op.operands
    c = scalar_value(o) if _int_not_bool(x) else None
    if c is None or c <= 0:
        return False
    r = int_range(x)
    if r is None or r[0] < 0 or r[0] // c != r[1] // c:
        return False
    k = r[0] // c
    if k == 0:
        return replace(rewriter, op, x)
    with rewriter.ip:
        kc = B.full(k * c, ir.RankedTensorType(x.type), loc=op.location)
        return replace(rewriter, op, B.op1("stablehlo.subtract", [x, kc], x.type, loc=op.location))


# -- unary involutions and idempotents ---------------------------------------------------------

def _cancel(name: str, outer: str, inner: str, doc: str, *, fast_math: bool = False) -> None:
    """Register pattern ``name``: ``outer(inner(x)) → x``."""

    def fn(op, rewriter):
        d = def_of(op.operands[0], inner)
        return replace(rewriter, op, d.operands[0]) if d is not None else False

    fn.__doc__ = doc
    pattern(name, FAMILY, "stablehlo." + outer, benefit=3, fast_math=fast_math)(fn)


_cancel("neg_neg", "negate", "negate", "-(-x) → x.")


@pattern("abs_abs", FAMILY, "stablehlo.abs", benefit=3)
def abs_abs(op, rewriter):
    """abs(abs x) → abs x."""
    a = def_of(op.operands[0], "abs")
    if a is not None and a.results[0].type == op.results[0].type:
        return replace(rewriter, op, op.operands[0])
    return False


@pattern("abs_neg", FAMILY, "stablehlo.abs", benefit=2)
def abs_neg(op, rewriter):
    """abs(-x) → abs(x)."""
    n = def_of(op.operands[0], "negate")
    if n is not None:
        with rewriter.ip:
            return replace(rewriter, op, B.op1("stablehlo.abs", [n.operands[0]], op.results[0].type,
                                          loc=op.location))
    return False


@pattern("abs_square", FAMILY, "stablehlo.abs", benefit=2)
def abs_square(op, rewriter):
    """abs(x * x) → x * x for floats (a square is never negative; NaN stays NaN)."""
    m = def_of(op.operands[0], "multiply")
    if m is not None and m.operands[0] == m.operands[1] and _is_float(op.operands[0]):
        return replace(rewriter, op, op.operands[0])
    return False


_ROUNDING = ("stablehlo.floor", "stablehlo.ceil", "stablehlo.round_nearest_even",
             "stablehlo.round_nearest_afz")


@pattern("round_of_integral", FAMILY, _ROUNDING, benefit=3)
def round_of_integral(op, rewriter):
    """floor/ceil/round of a value that is already integral (another rounding op, or a
    float converted from an integer) → that value."""
    x = op.operands[0]
    d = defining_op(x)
    if d is None:
        return False
    if d.operation.name in _ROUNDING:
        return replace(rewriter, op, x)
    if d.operation.name == "stablehlo.convert" and _is_int(d.operands[0]) and _is_float(x):
        return replace(rewriter, op, x)
    return False


# -- exp / log / sqrt / pow ------------------------------------------------------------------

_cancel("exp_log_fast", "exponential", "log", "exp(log x) → x (wrong for x < 0 and up to rounding).",
        fast_math=True)
_cancel("log_exp_fast", "log", "exponential", "log(exp x) → x (exp overflows to Inf for large x, so not exact).",
        fast_math=True)


@pattern("sqrt_mul_self_fast", FAMILY, "stablehlo.multiply", benefit=3, fast_math=True)
def sqrt_mul_self_fast(op, rewriter):
    """sqrt(x) * sqrt(x) → x (wrong for x < 0 and up to rounding)."""
    a, b = op.operands
    s1, s2 = def_of(a, "sqrt"), def_of(b, "sqrt")
    if s1 is not None and s2 is not None and s1.operands[0] == s2.operands[0]:
        return replace(rewriter, op, s1.operands[0])
    return False


@pattern("sqrt_square_fast", FAMILY, "stablehlo.sqrt", benefit=3, fast_math=True)
def sqrt_square_fast(op, rewriter):
    """sqrt(x * x) → abs(x) (x*x overflows for large x)."""
    m = def_of(op.operands[0], "multiply")
    if m is not None and m.operands[0] == m.operands[1]:
        with rewriter.ip:
            return replace(rewriter, op, B.elementwise("stablehlo.abs", [m.operands[0]], loc=op.location))
    return False


def _pow_exponent(op):
    x, e = op.operands
    s = scalar_value(e)
    if s is None:
        return None
    return float(s)


@pattern("pow_two", FAMILY, "stablehlo.power", benefit=2)
def pow_two(op, rewriter):
    """pow(x, 2) → x * x."""
    if _pow_exponent(op) == 2.0:
        x = op.operands[0]
        with rewriter.ip:
            return replace(rewriter, op, B.elementwise("stablehlo.multiply", [x, x], loc=op.location))
    return False


@pattern("pow_one", FAMILY, "stablehlo.power", benefit=3)
def pow_one(op, rewriter):
    """pow(x, 1) → x."""
    if _pow_exponent(op) == 1.0:
        return replace(rewriter, op, op.operands[0])
    return False


@pattern("pow_zero", FAMILY, "stablehlo.power", benefit=3)
def pow_zero(op, rewriter):
    """pow(x, 0) → 1 (IEEE pow(x, ±0) is 1 for every x, NaN included; integers too)."""
    if _pow_exponent(op) == 0.0:
        x = op.operands[0]
        with rewriter.ip:
            return replace(rewriter, op, B.full(1, ir.RankedTensorType(x.type), loc=op.location))
    return False


@pattern("pow_neg_one", FAMILY, "stablehlo.power", benefit=2)
def pow_neg_one(op, rewriter):
    """pow(x, -1) → 1 / x for floats."""
    x = op.operands[0]
    if _is_float(x) and _pow_exponent(op) == -1.0:
        with rewriter.ip:
            one = B.full(1.0, ir.RankedTensorType(x.type), loc=op.location)
            return replace(rewriter, op, B.elementwise("stablehlo.divide", [one, x], loc=op.location))
    return False


@pattern("pow_half_fast", FAMILY, "stablehlo.power", benefit=2, fast_math=True)
def pow_half_fast(op, rewriter):
    """pow(x, 0.5) → sqrt(x) (differs at -0.0 and -Inf)."""
    x = op.operands[0]
    if _is_float(x) and _pow_exponent(op) == 0.5:
        with rewriter.ip:
            return replace(rewriter, op, B.elementwise("stablehlo.sqrt", [x], loc=op.location))
    return False


@pattern("pow_neg_half_fast", FAMILY, "stablehlo.power", benefit=2, fast_math=True)
def pow_neg_half_fast(op, rewriter):
    """pow(x, -0.5) → rsqrt(x) (differs at -0.0, -Inf, and in rounding)."""
    x = op.operands[0]
    if _is_float(x) and _pow_exponent(op) == -0.5:
        with rewriter.ip:
            return replace(rewriter, op, B.elementwise("stablehlo.rsqrt", [x], loc=op.location))
    return False


# -- convert ---------------------------------------------------------------------------------

_MANTISSA = {ir.F16Type: 11, ir.BF16Type: 8, ir.F32Type: 24, ir.F64Type: 53}
_FWIDTH = {ir.F16Type: 16, ir.BF16Type: 16, ir.F32Type: 32, ir.F64Type: 64}


def _mantissa(t):
    for k, v in _MANTISSA.items():
        if isinstance(t, k):
            return v
    return None


def lossless(src: ir.Type, dst: ir.Type) -> bool:
    """Every value of element type ``src`` converts to ``dst`` exactly (and back)."""
    if src == dst:
        return True
    if isinstance(src, ir.IntegerType):
        s = ir.IntegerType(src)
        if isinstance(dst, ir.IntegerType):
            d = ir.IntegerType(dst)
            if s.width == 1:
                return True
            if d.width == 1:
                return False
            if s.is_unsigned:
                return d.width >= s.width if d.is_unsigned else d.width > s.width
            return (not d.is_unsigned) and d.width >= s.width
        p = _mantissa(dst)
        if p is None:
            return False
        if s.width == 1:
            return True
        return s.width <= p if s.is_unsigned else s.width - 1 <= p
    ps, pd = _mantissa(src), _mantissa(dst)
    if ps is None or pd is None:
        return False
    if isinstance(src, ir.BF16Type):
        return isinstance(dst, (ir.F32Type, ir.F64Type))
    if isinstance(src, ir.F16Type):
        return isinstance(dst, (ir.F32Type, ir.F64Type))
    if isinstance(src, ir.F32Type):
        return isinstance(dst, ir.F64Type)
    return False


identity_pattern("convert_noop", FAMILY, "stablehlo.convert", benefit=3, doc="convert(x) to x's own type → x.")


@pattern("convert_convert", FAMILY, "stablehlo.convert", benefit=2)
def convert_convert(op, rewriter):
    """convert(convert(x : A → B) → C) → convert(x : A → C) when A → B is lossless (and not
    float → integer at the end); x itself when C == A."""
    inner = def_of(op.operands[0], "convert")
    if inner is None:
        return False
    x = inner.operands[0]
    a, b, c = element_type_of(x), element_type_of(op.operands[0]), element_type_of(op.results[0])
    if not lossless(a, b):
        return False
    if is_float_type(a) and isinstance(c, ir.IntegerType):
        return False
    with rewriter.ip:
        return replace(rewriter, op, B.convert(x, c, loc=op.location))


# -- compare / logic -------------------------------------------------------------------------

# (select, compare and and/or logic are family B's ``select.py``; only what it leaves out is here)

_SELF_TRUE = {"EQ": True, "LE": True, "GE": True, "NE": False, "LT": False, "GT": False}


def _bool_splat_like(v: ir.Value, value: bool, loc) -> ir.Value:
    return B.full(bool(value), ir.RankedTensorType(v.type), loc=loc)


@pattern("compare_self_fast", FAMILY, "stablehlo.compare", benefit=3, fast_math=True)
def compare_self_fast(op, rewriter):
    """compare(x, x) → constant for floats (wrong for NaN)."""
    x, y = op.operands
    if x == y and _is_float(x) and _compare_type(op) != "TOTALORDER":
        with rewriter.ip:
            return replace(rewriter, op, _bool_splat_like(op.results[0], _SELF_TRUE[_direction(op)],
                                                     op.location))
    return False


@pattern("xor_const", FAMILY, "stablehlo.xor", benefit=3)
def xor_const(op, rewriter):
    """x ^ 0 → x; x ^ all-ones → not x (integers and booleans)."""
    for x, k in _pairs(op):
        if not _is_int(x) or x.type != op.results[0].type:
            return False
        s = scalar_value(k)
        if s is None:
            continue
        if s == 0:
            return replace(rewriter, op, x)
        if (bool(s) if _is_bool(x) else s == all_ones_value(element_type_of(x))):
            with rewriter.ip:
                return replace(rewriter, op, B.elementwise("stablehlo.not", [x], loc=op.location))
    return False


@pattern("shift_zero", FAMILY, ("stablehlo.shift_left", "stablehlo.shift_right_arithmetic",
                                "stablehlo.shift_right_logical"), benefit=3)
def shift_zero(op, rewriter):
    """x << 0 → x, x >> 0 → x."""
    if is_scalar_value(op.operands[1], 0):
        return replace(rewriter, op, op.operands[0])
    return False


# -- min / max -------------------------------------------------------------------------------

@pattern("minmax_self", FAMILY, ("stablehlo.minimum", "stablehlo.maximum"), benefit=3)
def minmax_self(op, rewriter):
    """min(x, x) → x, max(x, x) → x."""
    if op.operands[0] == op.operands[1]:
        return replace(rewriter, op, op.operands[0])
    return False


@pattern("minmax_identity", FAMILY, ("stablehlo.minimum", "stablehlo.maximum"), benefit=3)
def minmax_identity(op, rewriter):
    """max(x, -Inf) → x, min(x, +Inf) → x (NaN propagates either way); integer min/max
    values likewise."""
    is_max = op.operation.name == "stablehlo.maximum"
    for x, k in _pairs(op):
        s = scalar_value(k)
        if s is None:
            continue
        if _is_float(x):
            ident = float("-inf") if is_max else float("inf")
            if float(s) == ident:
                return replace(rewriter, op, x)
        elif _is_int(x):
            dt = np_dtype(element_type_of(x))
            if dt is None:
                continue
            if dt == np.bool_:
                ident = False if is_max else True
                if bool(s) == ident:
                    return replace(rewriter, op, x)
                continue
            ident = int(np.iinfo(dt).min if is_max else np.iinfo(dt).max)
            if s == ident:
                return replace(rewriter, op, x)
    return False


@pattern("mul_neg_const", FAMILY, "stablehlo.multiply", benefit=2)
def mul_neg_const(op, rewriter):
    """(-x) * c → x * (-c) for a splat constant c (floats, signed integers): one op fewer."""
    v = op.results[0]
    if not (_is_float(v) or _is_signed_int(v)):
        return False
    for nx, c in _pairs(op):
        n = def_of(nx, "negate")
        s = scalar_value(c)
        if n is None or s is None:
            continue
        dt = np_dtype(element_type_of(v))
        if dt is None:
            return False
        with np.errstate(all="ignore"):
            nc = (-np.array(s).astype(dt)).item()
        with rewriter.ip:
            k = B.full(nc, ir.RankedTensorType(v.type), loc=op.location)
            return replace(rewriter, op, B.elementwise("stablehlo.multiply", [n.operands[0], k], loc=op.location))
    return False


@pattern("div_by_scalar_fast", FAMILY, "stablehlo.divide", benefit=1, fast_math=True)
def div_by_scalar_fast(op, rewriter):
    """x / broadcast(s) → x * broadcast(1 / s) for a rank-0 (non-constant) float s: one
    division instead of one per element (rounds twice)."""
    x, b = op.operands
    if not _is_float(x) or scalar_value(b) is not None:
        return False
    d = def_of(b, "broadcast_in_dim")
    if d is None:
        return False
    s = d.operands[0]
    if ir.RankedTensorType(s.type).rank != 0:
        return False
    with rewriter.ip:
        one = B.full(1.0, ir.RankedTensorType(s.type), loc=op.location)
        r = B.elementwise("stablehlo.divide", [one, s], loc=op.location)
        rb = B.op1("stablehlo.broadcast_in_dim", [r], b.type, {"broadcast_dimensions": d.attributes["broadcast_dimensions"]},
                   loc=op.location)
        return replace(rewriter, op, B.elementwise("stablehlo.multiply", [x, rb], loc=op.location))


_COMMUTATIVE = tuple(sorted(n for n, i in OPS.items() if i.commutative))


@pattern("commuted_duplicate", FAMILY, _COMMUTATIVE, benefit=3)
def commuted_duplicate(op, rewriter):
    """op(b, a) when op(a, b) is computed earlier in the same block → that earlier value
    (CSE that knows the op commutes; AD output often has both orders)."""
    a, b = op.operands
    if a == b:
        return False
    me = op.operation
    name = me.name
    for use in a.uses:
        other = use.owner
        other = getattr(other, "operation", other)
        if other.name != name or other == me:
            continue
        o = other.operands
        if len(o) != 2 or not (o[0] == b and o[1] == a):
            continue
        if other.results[0].type != op.results[0].type or other.block != me.block:
            continue
        if not other.is_before_in_block(me):
            continue
        return replace(rewriter, op, other.results[0])
    return False
