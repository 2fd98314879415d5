"""Constant folding: an op whose operands are all ``stablehlo.constant`` becomes a constant.

One pattern per op (``fold_<op>``), computed with NumPy in the op's own element type, with
StableHLO's semantics: integers wrap; integer division and remainder truncate toward zero;
float arithmetic is IEEE (NaN, Inf and the sign of zero as XLA computes them). Where
StableHLO leaves a result implementation-defined (integer division by zero or INT_MIN / -1,
out-of-range shifts, negative integer exponents, float → int conversion of NaN, Inf or an
out-of-range value, min/max of zeros of different signs) the op is not folded.
Transcendental functions are evaluated in float64 and rounded once to the element type, so
they agree with XLA's own to within its error bound (a few ulp).

Size cap: a non-splat operand or result with more than ``FOLD_LIMIT`` elements is not
folded (a big dense constant costs more than the op); splats are folded at any size (a
splat constant is a broadcast scalar to XLA). Compare and select/clamp folding live with
family B (``select.py``).
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from ._registry import pattern
from ...ir import build as B
from ...ir.attrs import i64_list, is_splat_constant, read_constant
from ...ir.types import np_dtype, num_elements, shape_of, tensor_type
from ._util import reduce_kind

FAMILY = "constants"
FOLD_LIMIT = 65_536


# -- operand reading -------------------------------------------------------------------------

def _operands(op, n: int | None = None):
    """(arrays, all_splat) for an op whose operands are all constants (non-splats within
    the cap); None otherwise. With all_splat, the arrays are 0-d scalars."""
    vs = list(op.operands) if n is None else list(op.operands)[:n]
    if not vs:
        return None
    arrays, all_splat = [], True
    for v in vs:
        a = read_constant(v, FOLD_LIMIT)
        if a is None:
            return None
        s = is_splat_constant(v)
        all_splat &= s
        arrays.append(a)
    if all_splat:
        arrays = [np.asarray(a.reshape(-1)[0]) if a.size else a for a in arrays]
        if any(a.size == 0 for a in arrays):
            return None
    return arrays, all_splat


def _is_f(dt) -> bool:
    return dt.kind == "f" or dt.name == "bfloat16"


def _replace_with(op, rewriter, arr, all_splat: bool) -> bool:
    rt = tensor_type(op.results[0])
    dt = np_dtype(rt.element_type)
    if dt is None or dt.kind == "c":  # complex constants cannot be read back (ir.attrs): no folding into them
        return False
    arr = np.asarray(arr)
    if all_splat and arr.ndim == 0:
        arr = np.broadcast_to(arr.astype(dt), tuple(rt.shape))
    elif arr.size > FOLD_LIMIT:
        flat = arr.reshape(-1)
        if not (flat.size and (flat == flat[0]).all()):
            return False
    if tuple(arr.shape) != tuple(rt.shape):
        return False
    with rewriter.ip:
        rewriter.replace_op(op, [B.constant(arr.astype(dt, copy=False), rt, loc=op.location)])
    return True


# -- elementwise -----------------------------------------------------------------------------

def _in_f64(fn):
    """Evaluate a float function in float64 and round once to the input's dtype."""

    def f(x):
        return fn(x.astype(np.float64)).astype(x.dtype)

    return f


def _float_only(fn):
    def f(*xs):
        return fn(*xs) if _is_f(xs[0].dtype) else None

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
    if _is_f(x.dtype):
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
        return None  # XLA's HLO evaluator gets negative inputs wrong; do not fold them
    w = 8 * x.dtype.itemsize
    u = x.view(f"u{x.dtype.itemsize}").astype(np.uint64)
    n = np.full(x.shape, w, dtype=np.int64)
    for b in range(w):
        hit = ((u >> np.uint64(b)) & np.uint64(1)).astype(bool)
        n = np.where(hit, w - 1 - b, n)
    return n.astype(x.dtype)


def _not(x):
    return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


_UNARY = {
    "negate": lambda x: None if x.dtype == np.bool_ else np.negative(x),
    "abs": lambda x: None if x.dtype.kind == "u" or x.dtype == np.bool_ else np.abs(x),
    "not": lambda x: None if _is_f(x.dtype) else _not(x),
    "exponential": _float_only(_in_f64(np.exp)),
    "exponential_minus_one": _float_only(_in_f64(np.expm1)),
    "log": _float_only(_in_f64(np.log)),
    "log_plus_one": _float_only(_in_f64(np.log1p)),
    "sqrt": _float_only(_in_f64(np.sqrt)),
    "rsqrt": _float_only(_in_f64(lambda x: 1.0 / np.sqrt(x))),
    "cbrt": _float_only(_in_f64(np.cbrt)),
    "sine": _float_only(_in_f64(np.sin)),
    "cosine": _float_only(_in_f64(np.cos)),
    "tan": _float_only(_in_f64(np.tan)),
    "tanh": _float_only(_in_f64(np.tanh)),
    "logistic": _float_only(_in_f64(lambda x: 1.0 / (1.0 + np.exp(-x)))),
    "floor": _float_only(np.floor),
    "ceil": _float_only(np.ceil),
    "round_nearest_even": _float_only(np.rint),
    "round_nearest_afz": _float_only(_round_afz),
    "sign": lambda x: None if x.dtype.kind == "u" or x.dtype == np.bool_ else _sign(x),
    "is_finite": _float_only(np.isfinite),
    "popcnt": _int_only(_popcnt),
    "count_leading_zeros": _int_only(_clz),
}


def _int_div_ok(a, b) -> bool:
    if (b == 0).any():
        return False
    if a.dtype.kind == "i":
        lo = np.iinfo(a.dtype).min
        if ((a == lo) & (b == -1)).any():
            return False
    return True


def _divide(a, b):
    if _is_f(a.dtype):
        return a / b
    if a.dtype == np.bool_ or not _int_div_ok(a, b):
        return None
    q, r = np.floor_divide(a, b), np.remainder(a, b)  # floor division: adjust to truncation
    return np.where((r != 0) & ((a < 0) != (b < 0)), q + 1, q).astype(a.dtype)


def _remainder(a, b):
    if _is_f(a.dtype):
        return np.fmod(a, b)
    if a.dtype == np.bool_ or not _int_div_ok(a, b):
        return None
    if a.dtype.kind == "i":
        r = np.fmod(a.astype(np.int64), b.astype(np.int64))
    else:
        r = np.fmod(a, b)
    return r.astype(a.dtype)


def _minmax(fn):
    def f(a, b):
        if _is_f(a.dtype):
            if ((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))).any():
                return None
        return fn(a, b)

    return f


def _power(a, b):
    if _is_f(a.dtype):
        return np.power(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)
    if a.dtype == np.bool_ or (b < 0).any():
        return None
    return np.power(a, b)


def _shift(kind):
    def f(a, b):
        if _is_f(a.dtype) or a.dtype == np.bool_:
            return None
        w = 8 * a.dtype.itemsize
        if ((b < 0) | (b >= w)).any():
            return None
        u = np.dtype(f"u{a.dtype.itemsize}")
        s = np.dtype(f"i{a.dtype.itemsize}")
        bb = b.astype(u)
        if kind == "left":
            return np.left_shift(a.view(u), bb).view(a.dtype)
        if kind == "arith":
            return np.right_shift(a.view(s), bb.astype(s)).view(a.dtype)
        return np.right_shift(a.view(u), bb).view(a.dtype)

    return f


def _bitwise(fn_bool, fn_int):
    def f(a, b):
        if _is_f(a.dtype):
            return None
        return fn_bool(a, b) if a.dtype == np.bool_ else fn_int(a, b)

    return f


def _arith(fn):
    def f(a, b):
        if a.dtype == np.bool_:
            return None
        return fn(a, b)

    return f


_BINARY = {
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
    "shift_right_arithmetic": _shift("arith"),
    "shift_right_logical": _shift("logical"),
}


def _register_elementwise(short: str, fn, arity: int):
    name = "stablehlo." + short

    def fold(op, rewriter):
        got = _operands(op)
        if got is None or len(got[0]) != arity:
            return False
        arrays, all_splat = got
        with np.errstate(all="ignore"):
            res = fn(*arrays)
        if res is None:
            return False
        return _replace_with(op, rewriter, res, all_splat)

    fold.__doc__ = f"{short} of constants → constant."
    fold.__name__ = f"fold_{short}"
    pattern(f"fold_{short}", FAMILY, name, benefit=4)(fold)


for _k, _f in _UNARY.items():
    _register_elementwise(_k, _f, 1)
for _k, _f in _BINARY.items():
    _register_elementwise(_k, _f, 2)


# -- convert ---------------------------------------------------------------------------------

def _convert(x: np.ndarray, dt: np.dtype):
    if _is_f(x.dtype) and dt.kind in "iu":
        if not np.isfinite(x).all():
            return None
        t = np.trunc(x.astype(np.float64))
        info = np.iinfo(dt)
        if (t < info.min).any() or (t > info.max).any():
            return None
        return t.astype(dt)
    if x.dtype.kind in "iu" and _is_f(dt):
        if (np.abs(x.astype(np.float64)) > 2.0 ** 53).any():
            return None  # would round twice through float64
        return x.astype(np.float64).astype(dt)
    if _is_f(x.dtype) and _is_f(dt) and dt.name == "bfloat16" and x.dtype == np.float64:
        if not (x.astype(np.float32).astype(np.float64) == x)[np.isfinite(x)].all():
            return None  # f64 → bf16 may round twice through float32
    if dt == np.bool_:
        return x != 0
    return x.astype(dt)


@pattern("fold_convert", FAMILY, "stablehlo.convert", benefit=4)
def fold_convert(op, rewriter):
    """convert of a constant → constant (float → int only for finite in-range values)."""
    got = _operands(op)
    if got is None:
        return False
    (x,), all_splat = got
    dt = np_dtype(tensor_type(op.results[0]).element_type)
    if dt is None:
        return False
    with np.errstate(all="ignore"):
        res = _convert(x, dt)
    if res is None:
        return False
    return _replace_with(op, rewriter, res, all_splat)


# -- shape ops -------------------------------------------------------------------------------

def _structural(op, rewriter, compute) -> bool:
    """Fold a shape op: a splat operand gives a splat of the result type at any size;
    otherwise the result must be within the cap."""
    v = op.operands[0]
    if is_splat_constant(v):
        x = read_constant(v)
        if x is None or x.size == 0:
            return False
        return _replace_with(op, rewriter, np.asarray(x.reshape(-1)[0]), True)
    if num_elements(op.results[0]) > FOLD_LIMIT:
        return False
    x = read_constant(v, FOLD_LIMIT)
    if x is None:
        return False
    return _replace_with(op, rewriter, compute(np.asarray(x)), False)


@pattern("fold_broadcast_in_dim", FAMILY, "stablehlo.broadcast_in_dim", benefit=4)
def fold_broadcast_in_dim(op, rewriter):
    """broadcast_in_dim of a constant → constant."""
    dims = i64_list(op.attributes["broadcast_dimensions"])
    out = tuple(tensor_type(op.results[0]).shape)

    def compute(x):
        order = np.argsort(dims)
        xt = np.transpose(x, order) if x.ndim else x
        shape = [1] * len(out)
        for i, d in enumerate(sorted(dims)):
            shape[d] = xt.shape[i]
        return np.broadcast_to(xt.reshape(shape), out)

    return _structural(op, rewriter, compute)


@pattern("fold_reshape", FAMILY, "stablehlo.reshape", benefit=4)
def fold_reshape(op, rewriter):
    """reshape of a constant → constant."""
    out = tuple(tensor_type(op.results[0]).shape)
    return _structural(op, rewriter, lambda x: x.reshape(out))


@pattern("fold_transpose", FAMILY, "stablehlo.transpose", benefit=4)
def fold_transpose(op, rewriter):
    """transpose of a constant → constant."""
    perm = i64_list(op.attributes["permutation"])
    return _structural(op, rewriter, lambda x: np.transpose(x, perm))


@pattern("fold_reverse", FAMILY, "stablehlo.reverse", benefit=4)
def fold_reverse(op, rewriter):
    """reverse of a constant → constant."""
    dims = i64_list(op.attributes["dimensions"])
    return _structural(op, rewriter, lambda x: np.flip(x, axis=tuple(dims)) if dims else x)


@pattern("fold_slice", FAMILY, "stablehlo.slice", benefit=4)
def fold_slice(op, rewriter):
    """slice of a constant → constant."""
    st = i64_list(op.attributes["start_indices"])
    li = i64_list(op.attributes["limit_indices"])
    sd = i64_list(op.attributes["strides"])
    return _structural(op, rewriter, lambda x: x[tuple(slice(a, b, c) for a, b, c in zip(st, li, sd))])


@pattern("fold_concatenate", FAMILY, "stablehlo.concatenate", benefit=4)
def fold_concatenate(op, rewriter):
    """concatenate of constants → constant."""
    if num_elements(op.results[0]) > FOLD_LIMIT and not all(is_splat_constant(v) for v in op.operands):
        return False
    arrays = []
    for v in op.operands:
        a = read_constant(v, FOLD_LIMIT)
        if a is None:
            return False
        arrays.append(a)
    if all(is_splat_constant(v) for v in op.operands):
        firsts = {a.reshape(-1)[0].tobytes() for a in arrays if a.size}
        if len(firsts) == 1:
            a0 = next(a for a in arrays if a.size)
            return _replace_with(op, rewriter, np.asarray(a0.reshape(-1)[0]), True)
        if num_elements(op.results[0]) > FOLD_LIMIT:
            return False
    dim = ir.IntegerAttr(op.attributes["dimension"]).value
    return _replace_with(op, rewriter, np.concatenate([np.asarray(a) for a in arrays], axis=dim), False)


@pattern("fold_iota_unit", FAMILY, "stablehlo.iota", benefit=4)
def fold_iota_unit(op, rewriter):
    """iota along a dimension of size 1 → zeros."""
    d = ir.IntegerAttr(op.attributes["iota_dimension"]).value
    rt = tensor_type(op.results[0])
    if rt.shape[d] != 1 or np_dtype(rt.element_type) is None:
        return False
    return _replace_with(op, rewriter, np.zeros((), dtype=np_dtype(rt.element_type)), True)


# -- reduce ----------------------------------------------------------------------------------

_REDUCERS = {"stablehlo.add": np.add, "stablehlo.multiply": np.multiply,
             "stablehlo.maximum": np.maximum, "stablehlo.minimum": np.minimum,
             "stablehlo.and": np.logical_and, "stablehlo.or": np.logical_or}


@pattern("fold_reduce", FAMILY, "stablehlo.reduce", benefit=4)
def fold_reduce(op, rewriter):
    """reduce of a (non-splat, capped) constant with a constant init → constant. Integer
    sums wrap; float sums and products are accumulated in float64 and rounded once (more
    accurate than any order XLA may pick: equal up to float rounding)."""
    kind = reduce_kind(op)
    if kind is None:
        return False
    x = read_constant(op.operands[0], FOLD_LIMIT)
    init = read_constant(op.operands[1])
    if x is None or init is None:
        return False
    dims = tuple(i64_list(op.attributes["dimensions"]))
    dt = x.dtype
    if x.size == 0:
        return False
    if kind in ("stablehlo.and", "stablehlo.or"):
        if dt == np.bool_:
            fn = _REDUCERS[kind]
        else:
            fn = np.bitwise_and if kind == "stablehlo.and" else np.bitwise_or
    else:
        if dt == np.bool_:
            return False
        fn = _REDUCERS[kind]
    if _is_f(dt) and kind in ("stablehlo.maximum", "stablehlo.minimum"):
        if (x == 0).any() and np.signbit(x[x == 0]).any() and (~np.signbit(x[x == 0])).any():
            return False
    with np.errstate(all="ignore"):
        if _is_f(dt) and kind in ("stablehlo.add", "stablehlo.multiply"):
            r = fn.reduce(np.asarray(x, dtype=np.float64), axis=dims)
            r = fn(r, np.float64(init.reshape(-1)[0]))
        else:
            r = fn(fn.reduce(np.asarray(x), axis=dims), init.reshape(-1)[0])
    if len(shape_of(op.results[0])) != np.ndim(r):
        return False
    return _replace_with(op, rewriter, np.asarray(r).astype(dt), False)


@pattern("fold_bitcast_convert", FAMILY, "stablehlo.bitcast_convert", benefit=4)
def fold_bitcast_convert(op, rewriter):
    """bitcast_convert of a constant between types of the same width → constant."""
    got = _operands(op)
    if got is None:
        return False
    (x,), all_splat = got
    dt = np_dtype(tensor_type(op.results[0]).element_type)
    if dt is None or dt.itemsize != x.dtype.itemsize or np.dtype(np.bool_) in (dt, x.dtype):
        return False
    return _replace_with(op, rewriter, np.ascontiguousarray(x).view(dt), all_splat)
