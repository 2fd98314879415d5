"""Constant folding: an op whose operands are all ``stablehlo.constant`` becomes a constant.

One pattern per op (``fold_<op>``), computed by the op's kernel (``reactant.ir.kernels``) in
the op's own element type, with StableHLO's semantics: integers wrap; integer division and remainder truncate toward zero;
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

from ...ir import build as B
from ...ir import kernels as K
from ...ir.attrs import i64_list, is_splat_constant, read_constant
from ...ir.evaluate import evaluate_value
from ...ir.opinfo import OPS, reduce_body_kind
from ...ir.types import np_dtype, num_elements, shape_of, tensor_type
from ._registry import pattern

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


for _k, _f in K.UNARY.items():
    _register_elementwise(_k, _f, 1)
for _k, _f in K.BINARY.items():
    _register_elementwise(_k, _f, 2)


# -- convert ---------------------------------------------------------------------------------

@pattern("fold_convert", FAMILY, "stablehlo.convert", benefit=4)
def fold_convert(op, rewriter):
    """convert of a constant → constant (float → int only for finite in-range values)."""
    def convert(x, dt):
        with np.errstate(all="ignore"):
            return K.convert(x, dt)
    return _fold_cast(op, rewriter, convert)


def _fold_cast(op, rewriter, cast) -> bool:
    """Fold a one-operand cast of a constant: ``cast(x, result dtype)``, None for no fold."""
    got = _operands(op)
    if got is None:
        return False
    (x,), all_splat = got
    dt = np_dtype(tensor_type(op.results[0]).element_type)
    res = None if dt is None else cast(x, dt)
    return res is not None and _replace_with(op, rewriter, res, all_splat)


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

def _fold_in_type(x: np.ndarray, init, dims, fn) -> np.ndarray:
    """The init, then the terms in order, in x's own type: one order XLA may pick (a float64
    sum rounded once may be none, so folding with it would not be exact: ``exactness``)."""
    dims = sorted(dims)
    kept = [i for i in range(x.ndim) if i not in dims]
    flat = np.transpose(x, dims + kept).reshape((-1, *[x.shape[i] for i in kept]))
    acc = np.full(flat.shape[1:], np.asarray(init).reshape(-1)[0], x.dtype)
    for row in flat:
        acc = fn(acc, row)
    return acc


@pattern("fold_reduce", FAMILY, "stablehlo.reduce", benefit=4)
def fold_reduce(op, rewriter):
    """reduce of a (non-splat, capped) constant with a constant init → constant. Integer
    sums wrap; float sums and products are folded in the element type, the init first and
    then the terms in order (an order XLA may pick)."""
    x = read_constant(op.operands[0], FOLD_LIMIT)  # (first: the cheapest test)
    init = None if x is None else read_constant(op.operands[1])
    if x is None or init is None or x.size == 0:
        return False
    kind = reduce_body_kind(op)
    if kind is None:
        return False
    short = kind.split(".", 1)[1]
    dims = i64_list(op.attributes["dimensions"])
    with np.errstate(all="ignore"):
        if K.is_float(x.dtype) and short in ("add", "multiply"):
            r = _fold_in_type(x, init, dims, np.add if short == "add" else np.multiply)
        else:
            r = K.reduce(x, init, dims, short)
    if r is None or len(shape_of(op.results[0])) != np.ndim(r):
        return False
    return _replace_with(op, rewriter, r, False)


@pattern("fold_bitcast_convert", FAMILY, "stablehlo.bitcast_convert", benefit=4)
def fold_bitcast_convert(op, rewriter):
    """bitcast_convert of a constant between types of the same width → constant."""
    return _fold_cast(op, rewriter, K.bitcast_convert)


# -- tables of a math function over an iota ------------------------------------------------------
TABLE_LIMIT = 4_096  # elements of a table computed at compile time in place of its math calls


def _fold_table(op, rewriter):
    """A math-library function (cosine, exp, power, ...) of values computed from iotas and
    constants alone (``cos(pi * k * (2n+1) / 2N)``: the basis of a transform written with
    loops) → the constant table, up to ``TABLE_LIMIT`` elements: each call then costs nothing
    at run time and XLA compiles no polynomial for it. Computed as the folds above compute."""
    if num_elements(op.results[0]) > TABLE_LIMIT or _operands(op) is not None:
        return False  # (constants alone: the op's own fold)
    res = evaluate_value(op.results[0], TABLE_LIMIT, kinds="biuf")
    return res is not None and _replace_with(op, rewriter, res, False)


# (divide and remainder count as transcendental in the cost model, but are no library call: a
# table of them would only grow the program)
for _name, _info in OPS.items():
    if _info.transcendental and _info.kernel is not None and _name not in ("stablehlo.divide", "stablehlo.remainder"):
        pattern(f"fold_table@{_name.split('.')[-1]}", FAMILY, _name, benefit=4)(_fold_table)
