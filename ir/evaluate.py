"""The evaluator: StableHLO ops on NumPy arrays with exact semantics, through the kernels of
``reactant.ir.kernels``.

``evaluate_op(name, args, ...)`` evaluates one op from its operand arrays and its attributes
given as plain Python values (so callers that do not hold MLIR ops, like the e-graph checker,
use it too); ``evaluate_value(v)`` evaluates an integer or boolean value of a module that is
computed from constants and iotas only (index arithmetic, masks), through any op the
evaluator knows. Both return None when the value is unknown or not exactly defined.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from jaxlib.mlir import ir

from . import kernels as K
from .attrs import compare_parts, i64_list, int_attr_value, read_constant, splat_value
from .opinfo import OPS, reduce_body_kind
from .types import np_dtype
from .values import defining_op


def evaluate_op(name: str, args: Sequence[np.ndarray], *, result_dtype: np.dtype | None = None,
                result_shape: Sequence[int] | None = None, **attrs: Any) -> np.ndarray | None:
    """Op ``name`` (``"stablehlo.add"``...) on ``args``. Attributes by name: ``direction`` and
    ``compare_type`` (compare), ``dimension`` (iota, concatenate), ``dims`` (broadcast_in_dim,
    reverse, reduce), ``permutation``, ``start``/``limit``/``strides`` (slice), ``low``/``high``/
    ``interior`` (pad), ``lb``/``rb``/``lc``/``rc`` (dot_general), ``kind`` (reduce: the body op's
    short name); ``result_dtype`` / ``result_shape`` where the op needs them."""
    short = name.split(".", 1)[-1]
    with np.errstate(all="ignore"):
        info = OPS.get(name)
        if info is not None and info.kernel is not None:
            return info.kernel(*args)
        if short == "compare":
            return K.compare(args[0], args[1], attrs["direction"], attrs.get("compare_type"))
        if short == "select":
            return K.select(*args)
        if short == "clamp":
            return K.clamp(*args)
        if short == "convert":
            return K.convert(args[0], np.dtype(result_dtype))
        if short == "bitcast_convert":
            return K.bitcast_convert(args[0], np.dtype(result_dtype))
        if short == "iota":
            return K.iota(result_shape, attrs["dimension"], np.dtype(result_dtype))
        if short == "broadcast_in_dim":
            return K.broadcast_in_dim(args[0], attrs["dims"], result_shape)
        if short == "reshape":
            return np.reshape(args[0], tuple(result_shape))
        if short == "transpose":
            return np.transpose(args[0], attrs["permutation"])
        if short == "slice":
            return K.slice_(args[0], attrs["start"], attrs["limit"], attrs["strides"])
        if short == "reverse":
            return K.reverse(args[0], attrs["dims"])
        if short == "concatenate":
            return np.concatenate(list(args), axis=attrs["dimension"])
        if short == "pad":
            return K.pad(args[0], np.asarray(args[1]).reshape(()).item(), attrs["low"], attrs["high"],
                         attrs["interior"])
        if short == "dot_general":
            return K.dot_general(args[0], args[1], attrs["lb"], attrs["rb"], attrs["lc"], attrs["rc"])
        if short == "reduce":
            return K.reduce(args[0], args[1], attrs["dims"], attrs["kind"])
    return None


def attributes_of(op) -> dict | None:
    """The attributes ``evaluate_op`` needs for ``op``, as plain values (None when the op is
    not one the evaluator knows in this form)."""
    name = op.operation.name
    a = op.attributes
    if name == "stablehlo.compare":
        direction, ct = compare_parts(op)
        return {"direction": direction, "compare_type": ct}
    if name == "stablehlo.iota":
        return {"dimension": int_attr_value(a["iota_dimension"])}
    if name == "stablehlo.concatenate":
        return {"dimension": int_attr_value(a["dimension"])}
    if name == "stablehlo.broadcast_in_dim":
        return {"dims": i64_list(a["broadcast_dimensions"])}
    if name == "stablehlo.reverse":
        return {"dims": i64_list(a["dimensions"])}
    if name == "stablehlo.transpose":
        return {"permutation": i64_list(a["permutation"])}
    if name == "stablehlo.slice":
        return {"start": i64_list(a["start_indices"]), "limit": i64_list(a["limit_indices"]),
                "strides": i64_list(a["strides"])}
    if name == "stablehlo.pad":
        return {"low": i64_list(a["edge_padding_low"]), "high": i64_list(a["edge_padding_high"]),
                "interior": i64_list(a["interior_padding"])}
    if name == "stablehlo.reduce":
        kind = reduce_body_kind(op)
        return None if kind is None else {"dims": i64_list(a["dimensions"]), "kind": kind.split(".", 1)[1]}
    if name == "stablehlo.dot_general":
        from .build import dot_dims

        lb, rb, lc, rc = dot_dims(op)
        return {"lb": lb, "rb": rb, "lc": lc, "rc": rc}
    return {}


def evaluate_value(v: ir.Value, max_elements: int = 1 << 22, *, kinds: str = "biu", _memo=None,
                   _depth: int = 0) -> np.ndarray | None:
    """The value of ``v`` when it is computed only from constants and iotas, through ops the
    evaluator knows, with every intermediate of an element kind in ``kinds`` (NumPy kinds:
    booleans and integers by default) and at most ``max_elements`` elements; else None."""
    memo = {} if _memo is None else _memo
    if v in memo:
        return memo[v]
    memo[v] = None  # failures (and cycles, impossible in SSA)
    if _depth > 64 or not isinstance(v.type, ir.RankedTensorType):
        return None
    tt = v.type
    dt = np_dtype(tt.element_type)
    shape = tuple(tt.shape)
    if dt is None or dt.kind not in kinds or math.prod(shape) > max_elements:
        return None
    op = defining_op(v)
    if op is None or len(op.results) != 1:
        return None
    if op.operation.name == "stablehlo.constant":
        res = read_constant(v, max_elements)
    else:
        attrs = attributes_of(op)
        if attrs is None:
            return None
        args = []
        for x in op.operands:
            a = evaluate_value(x, max_elements, kinds=kinds, _memo=memo, _depth=_depth + 1)
            if a is None:
                return None
            args.append(a)
        res = evaluate_op(op.operation.name, args, result_dtype=dt, result_shape=shape, **attrs)
    if res is None or tuple(np.shape(res)) != shape:
        return None
    res = np.asarray(res)
    if res.dtype != dt:
        res = res.astype(dt)
    memo[v] = res
    return res


def scalar_int_value(v: ir.Value) -> int | None:
    """The value of a one-element integer tensor computed from constants (see
    ``evaluate_value``), else None."""
    op = defining_op(v)
    if op is not None and op.operation.name == "stablehlo.constant":
        # (the common case, read without NumPy: loop analyses ask for thousands of bounds)
        et = v.type.element_type if isinstance(v.type, ir.RankedTensorType) else None
        if not isinstance(et, ir.IntegerType) or et.width == 1 or math.prod(v.type.shape) != 1:
            return None
        x = splat_value(v)
        if x is not None and et.is_unsigned and x < 0:  # (MLIR reads unsigned values back as signed)
            x += 1 << et.width
        return x
    a = evaluate_value(v, 1)
    return None if a is None or a.dtype.kind not in "iu" else int(np.asarray(a).reshape(()).item())
