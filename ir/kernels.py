"""NumPy kernels with exact StableHLO semantics, one per op: the reference every evaluation
in the project uses (constant folding, index analyses, the e-graph checker).

A kernel takes NumPy arrays of the operands' element types (and the op's attributes as plain
Python values) and returns the result array, or None when StableHLO leaves the result
implementation-defined or NumPy cannot reproduce XLA's bits (integer division by zero or
``INT_MIN / -1``, shifts by the bit width or more, ``pow`` of a negative integer exponent,
``max``/``min`` of a +0/-0 pair, ``count_leading_zeros`` of a negative signed value, which
XLA's evaluator gets wrong). Integer arithmetic wraps; comparisons honour ``compare_type``;
transcendental float functions are computed in float64 and rounded once to the element type.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .types import bfloat16


def is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt == bfloat16


# -- helpers -------------------------------------------------------------------------------------
def _in_f64(fn):
    """A float function evaluated in float64 and rounded once to the input's dtype."""

    def f(x):
        return fn(x.astype(np.float64)).astype(x.dtype) if is_float(x.dtype) else None

    return f


def _float_only(fn):
    def f(*xs):
        return fn(*xs) if is_float(xs[0].dtype) else None

    return f


def _int_only(fn):
    def f(*xs):
        return fn(*xs) if xs[0].dtype.kind in "iu" else None

    return f


def _round_afz(x):
    t = np.trunc(x)
    frac = np.abs(x - t)
    return np.where(frac >= 0.5, t + np.copysign(np.ones_like(x), x), t).astype(x.dtype)


def _sign(x):
    if x.dtype.kind == "u" or x.dtype == np.bool_:
        return None
    if is_float(x.dtype):
        y = np.sign(x.astype(np.float64)).astype(x.dtype)
        return np.where(x == 0, x, y)  # keeps -0.0 and +0.0
    return np.sign(x)


def _popcnt(x):
    u = x.view(f"u{x.dtype.itemsize}").astype(np.uint64)
    c = np.zeros(x.shape, dtype=np.uint64)
    for _ in range(8 * x.dtype.itemsize):
        c += u & np.uint64(1)
        u = u >> np.uint64(1)
    return c.astype(x.dtype)


def _clz(x):
    if x.dtype.kind == "i" and (x < 0).any():
        return None  # XLA's HLO evaluator gets negative inputs wrong: never fold them
    w = 8 * x.dtype.itemsize
    u = x.view(f"u{x.dtype.itemsize}").astype(np.uint64)
    n = np.full(x.shape, w, dtype=np.int64)
    for b in range(w):
        hit = ((u >> np.uint64(b)) & np.uint64(1)).astype(bool)
        n = np.where(hit, w - 1 - b, n)
    return n.astype(x.dtype)


def _not(x):
    if is_float(x.dtype):
        return None
    return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


def _int_div_ok(a, b) -> bool:
    if (b == 0).any():
        return False
    if a.dtype.kind == "i" and ((a == np.iinfo(a.dtype).min) & (b == -1)).any():
        return False
    return True


def _divide(a, b):
    if is_float(a.dtype):
        return a / b
    if a.dtype == np.bool_ or not _int_div_ok(a, b):
        return None
    q, r = np.floor_divide(a, b), np.remainder(a, b)  # floor division: adjust to truncation
    return np.where((r != 0) & ((a < 0) != (b < 0)), q + 1, q).astype(a.dtype)


def _remainder(a, b):
    if is_float(a.dtype):
        return np.fmod(a, b)
    if a.dtype == np.bool_ or not _int_div_ok(a, b):
        return None
    if a.dtype.kind == "i":
        return np.fmod(a.astype(np.int64), b.astype(np.int64)).astype(a.dtype)
    return np.fmod(a, b).astype(a.dtype)


def _minmax(fn):
    def f(a, b):
        if is_float(a.dtype) and ((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))).any():
            return None
        return fn(a, b)

    return f


def _power(a, b):
    if is_float(a.dtype):
        return np.power(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)
    if a.dtype == np.bool_ or (b < 0).any():
        return None
    return np.power(a, b)


def _shift(kind: str):
    def f(a, b):
        if is_float(a.dtype) or a.dtype == np.bool_:
            return None
        if ((b < 0) | (b >= 8 * a.dtype.itemsize)).any():
            return None
        u, s = np.dtype(f"u{a.dtype.itemsize}"), np.dtype(f"i{a.dtype.itemsize}")
        bb = b.astype(u)
        if kind == "left":
            return np.left_shift(a.view(u), bb).view(a.dtype)
        if kind == "arithmetic":
            return np.right_shift(a.view(s), bb.astype(s)).view(a.dtype)
        return np.right_shift(a.view(u), bb).view(a.dtype)

    return f


def _bitwise(fn_bool, fn_int):
    def f(a, b):
        if is_float(a.dtype):
            return None
        return fn_bool(a, b) if a.dtype == np.bool_ else fn_int(a, b)

    return f


def _arith(fn):
    def f(a, b):
        return None if a.dtype == np.bool_ else fn(a, b)

    return f


# -- elementwise kernels (operands of one element type; the result has it too, except
#    is_finite) --------------------------------------------------------------------------------
UNARY = {
    "negate": lambda x: None if x.dtype == np.bool_ else np.negative(x),
    "abs": lambda x: None if x.dtype.kind == "u" or x.dtype == np.bool_ else np.abs(x),
    "not": _not,
    "exponential": _in_f64(np.exp),
    "exponential_minus_one": _in_f64(np.expm1),
    "log": _in_f64(np.log),
    "log_plus_one": _in_f64(np.log1p),
    "sqrt": _in_f64(np.sqrt),
    "rsqrt": _in_f64(lambda x: 1.0 / np.sqrt(x)),
    "cbrt": _in_f64(np.cbrt),
    "sine": _in_f64(np.sin),
    "cosine": _in_f64(np.cos),
    "tan": _in_f64(np.tan),
    "tanh": _in_f64(np.tanh),
    "logistic": _in_f64(lambda x: 1.0 / (1.0 + np.exp(-x))),
    "floor": _float_only(np.floor),
    "ceil": _float_only(np.ceil),
    "round_nearest_even": _float_only(np.rint),
    "round_nearest_afz": _float_only(_round_afz),
    "sign": _sign,
    "is_finite": _float_only(np.isfinite),
    "popcnt": _int_only(_popcnt),
    "count_leading_zeros": _int_only(_clz),
}

BINARY = {
    "add": _arith(np.add),
    "subtract": _arith(np.subtract),
    "multiply": _arith(np.multiply),
    "divide": _divide,
    "remainder": _remainder,
    "maximum": _minmax(np.maximum),
    "minimum": _minmax(np.minimum),
    "power": _power,
    "atan2": _float_only(lambda a, b: np.arctan2(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)),
    "and": _bitwise(np.logical_and, np.bitwise_and),
    "or": _bitwise(np.logical_or, np.bitwise_or),
    "xor": _bitwise(np.logical_xor, np.bitwise_xor),
    "shift_left": _shift("left"),
    "shift_right_arithmetic": _shift("arithmetic"),
    "shift_right_logical": _shift("logical"),
}

_CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
        "GE": np.greater_equal}


def _as_compared(a: np.ndarray, compare_type: str | None) -> np.ndarray:
    """An integer array reinterpreted for a SIGNED / UNSIGNED comparison."""
    if a.dtype.kind in "iu" and compare_type in ("SIGNED", "UNSIGNED"):
        want = "i" if compare_type == "SIGNED" else "u"
        if a.dtype.kind != want:
            a = np.ascontiguousarray(a).view(f"{want}{a.dtype.itemsize}")
    return a


def compare(a: np.ndarray, b: np.ndarray, direction: str, compare_type: str | None = None):
    """``stablehlo.compare``. FLOAT compares follow IEEE (NaN is unordered); TOTALORDER is not
    evaluated (None)."""
    if compare_type == "TOTALORDER" or a.dtype.kind == "c":
        return None
    return _CMP[direction](_as_compared(a, compare_type), _as_compared(b, compare_type))


def select(pred, on_true, on_false):
    return np.where(pred, on_true, on_false)


def clamp(lo, x, hi):
    """``min(max(x, lo), hi)`` (integers; for floats None where NaN or signed zeros decide)."""
    if is_float(x.dtype) and (np.isnan(x).any() or np.isnan(lo).any() or np.isnan(hi).any()
                              or ((x == 0).any() and ((lo == 0).any() or (hi == 0).any()))):
        return None
    return np.minimum(np.maximum(x, lo), hi)


def convert(x: np.ndarray, dt: np.dtype):
    """``stablehlo.convert`` to ``dt``: float -> integer truncates (None unless finite and in
    range); integer -> float rounds once (None past 2**53, which would round twice through
    float64); float64 -> bfloat16 None where rounding through float32 would round twice."""
    if is_float(x.dtype) and dt.kind in "iu":
        if not np.isfinite(x).all():
            return None
        t = np.trunc(x.astype(np.float64))
        info = np.iinfo(dt)
        if (t < info.min).any() or (t > info.max).any():
            return None
        return t.astype(dt)
    if x.dtype.kind in "iu" and is_float(dt):
        if (np.abs(x.astype(np.float64)) > 2.0 ** 53).any():
            return None
        return x.astype(np.float64).astype(dt)
    if is_float(x.dtype) and dt == bfloat16 and x.dtype == np.float64:
        if not (x.astype(np.float32).astype(np.float64) == x)[np.isfinite(x)].all():
            return None
    if dt == np.bool_:
        return x != 0
    return x.astype(dt)


def bitcast_convert(x: np.ndarray, dt: np.dtype):
    """Reinterpret the bits (same width; not to or from bool)."""
    if dt.itemsize != x.dtype.itemsize or np.dtype(np.bool_) in (dt, x.dtype):
        return None
    return np.ascontiguousarray(x).view(dt)


# -- data movement ---------------------------------------------------------------------------
def iota(shape: Sequence[int], dim: int, dt: np.dtype) -> np.ndarray:
    sh = [1] * len(shape)
    sh[dim] = shape[dim]
    return np.broadcast_to(np.arange(shape[dim]).astype(dt).reshape(sh), tuple(shape))


def broadcast_in_dim(x: np.ndarray, dims: Sequence[int], shape: Sequence[int]) -> np.ndarray:
    """Operand dim i goes to result dim ``dims[i]`` (dims in any order)."""
    order = np.argsort(dims)
    xt = np.transpose(x, order) if x.ndim else x
    sh = [1] * len(shape)
    for i, d in enumerate(sorted(dims)):
        sh[d] = xt.shape[i]
    return np.broadcast_to(xt.reshape(sh), tuple(shape))


def slice_(x: np.ndarray, start, limit, strides) -> np.ndarray:
    return x[tuple(slice(a, b, c) for a, b, c in zip(start, limit, strides))]


def reverse(x: np.ndarray, dims) -> np.ndarray:
    return np.flip(x, axis=tuple(dims)) if len(dims) else x


def pad(x: np.ndarray, value, low, high, interior) -> np.ndarray:
    """Interior padding first, then edges (negative edges crop)."""
    for d, k in enumerate(interior):
        if k > 0 and x.shape[d] > 0:
            n = x.shape[d]
            shape = list(x.shape)
            shape[d] = n + (n - 1) * k
            y = np.full(shape, value, dtype=x.dtype)
            idx = [slice(None)] * x.ndim
            idx[d] = slice(0, None, k + 1)
            y[tuple(idx)] = x
            x = y
    for d, (a, b) in enumerate(zip(low, high)):
        if a < 0:
            x = x[(slice(None),) * d + (slice(-a, None),)]
            a = 0
        if b < 0:
            x = x[(slice(None),) * d + (slice(0, x.shape[d] + b),)]
            b = 0
        widths = [(0, 0)] * x.ndim
        widths[d] = (a, b)
        x = np.pad(x, widths, constant_values=value)
    return x


def dot_general(a: np.ndarray, b: np.ndarray, lb, rb, lc, rc) -> np.ndarray:
    """Batch dims, then the lhs's free dims, then the rhs's (one matmul per batch)."""
    lf = [i for i in range(a.ndim) if i not in lb and i not in lc]
    rf = [i for i in range(b.ndim) if i not in rb and i not in rc]
    at = np.transpose(a, list(lb) + lf + list(lc))
    bt = np.transpose(b, list(rb) + list(rc) + rf)
    bs = [a.shape[i] for i in lb]
    nb = int(np.prod(bs)) if bs else 1
    m = int(np.prod([a.shape[i] for i in lf])) if lf else 1
    k = int(np.prod([a.shape[i] for i in lc])) if lc else 1
    n = int(np.prod([b.shape[i] for i in rf])) if rf else 1
    out = np.matmul(at.reshape(nb, m, k), bt.reshape(nb, k, n))
    return out.reshape(bs + [a.shape[i] for i in lf] + [b.shape[i] for i in rf])


_REDUCERS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum}


def reduce(x: np.ndarray, init, dims, kind: str):
    """A single-input reduction with body op ``kind`` (short name) over ``dims``, ``init``
    applied once. Float sums and products are accumulated in float64 and rounded once (as
    exact as any order XLA may pick); integers wrap; None where a +0/-0 pair decides a float
    max/min or the body is arithmetic on booleans."""
    dt = x.dtype
    if kind in ("and", "or"):
        fn = (np.logical_and if kind == "and" else np.logical_or) if dt == np.bool_ else \
            (np.bitwise_and if kind == "and" else np.bitwise_or)
    else:
        if dt == np.bool_ or kind not in _REDUCERS:
            return None
        fn = _REDUCERS[kind]
    if is_float(dt) and kind in ("maximum", "minimum"):
        z = x[x == 0]
        if z.size and np.signbit(z).any() and (~np.signbit(z)).any():
            return None
    init = np.asarray(init).reshape(-1)[0]
    if is_float(dt) and kind in ("add", "multiply"):
        r = fn(fn.reduce(np.asarray(x, dtype=np.float64), axis=tuple(dims)), np.float64(init))
    else:
        r = fn(fn.reduce(np.asarray(x), axis=tuple(dims)), init)
    return np.asarray(r).astype(dt)
