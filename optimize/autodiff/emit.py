"""Small StableHLO builders used by the derivative rules and the AD engines.

Every function builds at the ambient ``ir.InsertionPoint`` with the ambient ``ir.Location``
and returns the result ``ir.Value`` (or values). Result types are computed here (plain
``ir.Operation.create``), so nothing depends on which generated builders infer types.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

# ---------------------------------------------------------------------------------------------
# types


def ttype(v: ir.Value | ir.Type) -> ir.RankedTensorType:
    t = v if isinstance(v, ir.Type) else v.type
    return ir.RankedTensorType(t)


def shape(v) -> list[int]:
    return list(ttype(v).shape)


def rank(v) -> int:
    return ttype(v).rank


def etype(v) -> ir.Type:
    return ttype(v).element_type


def tensor(shp: Sequence[int], et: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get([int(s) for s in shp], et)


def like(v, shp: Sequence[int] | None = None, et: ir.Type | None = None) -> ir.RankedTensorType:
    return tensor(shape(v) if shp is None else shp, etype(v) if et is None else et)


def is_float(et: ir.Type) -> bool:
    return isinstance(et, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)) or "f8" in str(et).lower()


def is_complex(et: ir.Type) -> bool:
    return isinstance(et, ir.ComplexType)


def is_int(et: ir.Type) -> bool:
    return isinstance(et, ir.IntegerType)


def is_differentiable_type(t: ir.Type) -> bool:
    """Float or complex ranked tensors carry derivatives; integers, booleans, tokens do not."""
    try:
        et = ir.RankedTensorType(t).element_type
    except ValueError:
        return False
    return is_float(et) or is_complex(et)


def complex_part_type(et: ir.Type) -> ir.Type:
    return ir.ComplexType(et).element_type


def i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def i1() -> ir.Type:
    return ir.IntegerType.get_signless(1)


def i64_array(xs: Sequence[int]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(x) for x in xs])


def i64_list(attr) -> list[int]:
    if attr is None:
        return []
    if isinstance(attr, ir.DenseI64ArrayAttr):
        return list(attr)
    try:
        return list(ir.DenseI64ArrayAttr(attr))
    except (ValueError, TypeError):
        pass
    try:
        return [int(x) for x in ir.DenseIntElementsAttr(attr)]
    except (ValueError, TypeError):
        pass
    return [int(x) for x in np.array(ir.DenseElementsAttr(attr)).reshape(-1)]


def bool_attr(v: bool) -> ir.Attribute:
    return ir.BoolAttr.get(bool(v))


def get_attr(op, name, default=None):
    attrs = op.attributes
    return attrs[name] if name in attrs else default


def copy_attrs(op) -> dict:
    out = {}
    attrs = op.attributes
    for k in attrs:
        name = k if isinstance(k, str) else k.name
        out[name] = attrs[name]
    return out


# ---------------------------------------------------------------------------------------------
# generic creation


def create(name: str, operands: Sequence[ir.Value], types: Sequence[ir.Type], attrs: dict | None = None,
           regions: int = 0) -> ir.Operation:
    return ir.Operation.create(name, results=list(types), operands=list(operands), attributes=attrs or None,
                               regions=regions)


def op1(name: str, operands: Sequence[ir.Value], type_: ir.Type, attrs: dict | None = None) -> ir.Value:
    return create(name, operands, [type_], attrs).result


# ---------------------------------------------------------------------------------------------
# constants


def _np_dtype(et: ir.Type):
    if isinstance(et, ir.F64Type):
        return np.float64
    if isinstance(et, ir.F32Type):
        return np.float32
    if isinstance(et, ir.F16Type):
        return np.float16
    if is_complex(et):
        inner = complex_part_type(et)
        return np.complex128 if isinstance(inner, ir.F64Type) else np.complex64
    raise TypeError(str(et))


def scalar_const(value, et: ir.Type) -> ir.Value:
    """A rank-0 constant of element type ``et``."""
    t = tensor([], et)
    if is_int(et):
        w = ir.IntegerType(et).width
        s = ir.BoolAttr.get(bool(value)) if w == 1 else ir.IntegerAttr.get(et, int(value))
        attr = ir.DenseElementsAttr.get_splat(t, s)
    elif is_complex(et):
        v = complex(value)
        part = complex_part_type(et)
        return complex_(scalar_const(v.real, part), scalar_const(v.imag, part))
    else:
        attr = ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(et, float(value)))
    return op1("stablehlo.constant", [], t, {"value": attr})


def full(value, type_: ir.Type) -> ir.Value:
    """A constant of (tensor) type ``type_`` filled with ``value``."""
    t = ttype(type_)
    et = t.element_type
    if t.rank == 0:
        return scalar_const(value, et)
    if is_complex(et):
        return broadcast_in_dim(scalar_const(value, et), list(t.shape), [])
    if is_int(et):
        w = ir.IntegerType(et).width
        s = ir.BoolAttr.get(bool(value)) if w == 1 else ir.IntegerAttr.get(et, int(value))
    else:
        s = ir.FloatAttr.get(et, float(value))
    return op1("stablehlo.constant", [], t, {"value": ir.DenseElementsAttr.get_splat(t, s)})


def zeros(type_: ir.Type) -> ir.Value:
    return full(0, type_)


def zeros_like(v: ir.Value) -> ir.Value:
    return full(0, v.type)


def full_like(v: ir.Value, value) -> ir.Value:
    return full(value, v.type)


def const_array(arr: np.ndarray, et: ir.Type) -> ir.Value:
    t = tensor(arr.shape, et)
    if is_int(et) and ir.IntegerType(et).width != 1:
        width = ir.IntegerType(et).width
        arr = np.asarray(arr, dtype={8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[width])
    elif is_int(et):
        arr = np.asarray(arr, dtype=np.bool_)
    else:
        arr = np.asarray(arr, dtype=_np_dtype(et))
    return op1("stablehlo.constant", [], t, {"value": ir.DenseElementsAttr.get(arr, type=t)})


# ---------------------------------------------------------------------------------------------
# elementwise


def _ew(name, *xs):
    return op1(name, xs, xs[0].type)


def add(a, b):
    return _ew("stablehlo.add", a, b)


def sub(a, b):
    return _ew("stablehlo.subtract", a, b)


def mul(a, b):
    return _ew("stablehlo.multiply", a, b)


def div(a, b):
    return _ew("stablehlo.divide", a, b)


def neg(a):
    return _ew("stablehlo.negate", a)


def exp(a):
    return _ew("stablehlo.exponential", a)


def log(a):
    return _ew("stablehlo.log", a)


def sqrt(a):
    return _ew("stablehlo.sqrt", a)


def rsqrt(a):
    return _ew("stablehlo.rsqrt", a)


def sin(a):
    return _ew("stablehlo.sine", a)


def cos(a):
    return _ew("stablehlo.cosine", a)


def tanh(a):
    return _ew("stablehlo.tanh", a)


def abs_(a):
    if is_complex(etype(a)):
        return op1("stablehlo.abs", [a], like(a, et=complex_part_type(etype(a))))
    return _ew("stablehlo.abs", a)


def sign(a):
    return _ew("stablehlo.sign", a)


def floor(a):
    return _ew("stablehlo.floor", a)


def maximum(a, b):
    return _ew("stablehlo.maximum", a, b)


def minimum(a, b):
    return _ew("stablehlo.minimum", a, b)


def power(a, b):
    return _ew("stablehlo.power", a, b)


def square(a):
    return mul(a, a)


def and_(a, b):
    return _ew("stablehlo.and", a, b)


def or_(a, b):
    return _ew("stablehlo.or", a, b)


def not_(a):
    return _ew("stablehlo.not", a)


def real(a):
    et = etype(a)
    if not is_complex(et):
        return a
    return op1("stablehlo.real", [a], like(a, et=complex_part_type(et)))


def imag(a):
    et = etype(a)
    return op1("stablehlo.imag", [a], like(a, et=complex_part_type(et)))


def complex_(re, im):
    return op1("stablehlo.complex", [re, im], like(re, et=ir.ComplexType.get(etype(re))))


def conj(a):
    if not is_complex(etype(a)):
        return a
    return complex_(real(a), neg(imag(a)))


def compare(a, b, direction: str):
    et = etype(a)
    if is_float(et) or is_complex(et):
        ctype = "FLOAT"
    elif is_int(et) and ir.IntegerType(et).is_unsigned:
        ctype = "UNSIGNED"
    elif is_int(et) and ir.IntegerType(et).width == 1:
        ctype = "UNSIGNED"
    else:
        ctype = "SIGNED"
    attrs = {"comparison_direction": hlo.ComparisonDirectionAttr.get(direction),
             "compare_type": hlo.ComparisonTypeAttr.get(ctype)}
    return op1("stablehlo.compare", [a, b], like(a, et=i1()), attrs)


def select(pred, a, b):
    return op1("stablehlo.select", [pred, a, b], a.type)


def convert(a, et: ir.Type):
    if etype(a) == et:
        return a
    return op1("stablehlo.convert", [a], like(a, et=et))


def clamp(lo, x, hi):
    return op1("stablehlo.clamp", [lo, x, hi], x.type)


# ---------------------------------------------------------------------------------------------
# shape ops


def broadcast_in_dim(x, out_shape: Sequence[int], dims: Sequence[int]):
    out_shape = [int(s) for s in out_shape]
    if list(shape(x)) == out_shape and list(dims) == list(range(len(out_shape))):
        return x
    return op1("stablehlo.broadcast_in_dim", [x], tensor(out_shape, etype(x)),
               {"broadcast_dimensions": i64_array(dims)})


def broadcast_to(x, type_or_shape):
    """Broadcast a rank-0 value (or same-rank value) to a shape."""
    shp = list(ttype(type_or_shape).shape) if isinstance(type_or_shape, ir.Type) else list(type_or_shape)
    if rank(x) == 0:
        return broadcast_in_dim(x, shp, [])
    return broadcast_in_dim(x, shp, list(range(rank(x))))


def reshape(x, out_shape: Sequence[int]):
    out_shape = [int(s) for s in out_shape]
    if shape(x) == out_shape:
        return x
    return op1("stablehlo.reshape", [x], tensor(out_shape, etype(x)))


def transpose(x, perm: Sequence[int]):
    perm = [int(p) for p in perm]
    if perm == list(range(len(perm))):
        return x
    s = shape(x)
    return op1("stablehlo.transpose", [x], tensor([s[p] for p in perm], etype(x)), {"permutation": i64_array(perm)})


def inverse_perm(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[int(p)] = i
    return inv


def slice_(x, start, limit, strides=None):
    strides = strides or [1] * len(start)
    out = [(int(l) - int(s) + int(st) - 1) // int(st) for s, l, st in zip(start, limit, strides)]
    out = [max(0, o) for o in out]
    if out == shape(x) and all(int(s) == 0 for s in start):
        return x
    return op1("stablehlo.slice", [x], tensor(out, etype(x)),
               {"start_indices": i64_array(start), "limit_indices": i64_array(limit), "strides": i64_array(strides)})


def slice_in_dim(x, start: int, limit: int, dim: int, stride: int = 1):
    s = shape(x)
    st = [0] * len(s)
    lm = list(s)
    sd = [1] * len(s)
    st[dim], lm[dim], sd[dim] = start, limit, stride
    return slice_(x, st, lm, sd)


def pad(x, pv, lo, hi, interior=None):
    interior = interior or [0] * len(lo)
    s = shape(x)
    out = [int(l) + int(h) + n + max(0, n - 1) * int(i) for n, l, h, i in zip(s, lo, hi, interior)]
    if all(int(v) == 0 for v in list(lo) + list(hi) + list(interior)):
        return x
    return op1("stablehlo.pad", [x, pv], tensor(out, etype(x)),
               {"edge_padding_low": i64_array(lo), "edge_padding_high": i64_array(hi),
                "interior_padding": i64_array(interior)})


def concatenate(xs: Sequence[ir.Value], dim: int):
    xs = list(xs)
    if len(xs) == 1:
        return xs[0]
    s = shape(xs[0])
    s[dim] = sum(shape(x)[dim] for x in xs)
    return op1("stablehlo.concatenate", xs, tensor(s, etype(xs[0])),
               {"dimension": ir.IntegerAttr.get(i64(), dim)})


def reverse(x, dims):
    if not dims:
        return x
    return op1("stablehlo.reverse", [x], x.type, {"dimensions": i64_array(dims)})


def iota(type_: ir.Type, dim: int):
    return op1("stablehlo.iota", [], type_, {"iota_dimension": ir.IntegerAttr.get(i64(), dim)})


def dynamic_slice(x, idx: Sequence[ir.Value], sizes: Sequence[int]):
    return op1("stablehlo.dynamic_slice", [x, *idx], tensor(sizes, etype(x)), {"slice_sizes": i64_array(sizes)})


def dynamic_update_slice(x, upd, idx: Sequence[ir.Value]):
    return op1("stablehlo.dynamic_update_slice", [x, upd, *idx], x.type)


# ---------------------------------------------------------------------------------------------
# reductions


def _scalar_body(region: ir.Region, et: ir.Type, name: str, n: int = 1):
    t = tensor([], et)
    blk = ir.Block.create_at_start(region, [t] * (2 * n))
    with ir.InsertionPoint(blk):
        outs = [op1(name, [blk.arguments[i], blk.arguments[n + i]], t) for i in range(n)]
        create("stablehlo.return", outs, [])
    return blk


def reduce(x, init, dims: Sequence[int], body: str = "stablehlo.add"):
    dims = sorted(int(d) for d in dims)
    if not dims:
        return x
    s = shape(x)
    out = [n for i, n in enumerate(s) if i not in dims]
    op = create("stablehlo.reduce", [x, init], [tensor(out, etype(x))], {"dimensions": i64_array(dims)}, regions=1)
    _scalar_body(op.regions[0], etype(x), body)
    return op.result


def reduce_sum(x, dims: Sequence[int]):
    if not list(dims):
        return x
    return reduce(x, scalar_const(0, etype(x)), dims, "stablehlo.add")


def sum_to_shape(x, out_shape: Sequence[int]):
    """Sum ``x`` over leading/broadcast dims so it has ``out_shape`` (numpy broadcasting)."""
    s = shape(x)
    out_shape = list(out_shape)
    if s == out_shape:
        return x
    if not out_shape:
        return reduce_sum(x, range(len(s)))
    lead = len(s) - len(out_shape)
    dims = list(range(lead)) + [lead + i for i, n in enumerate(out_shape) if n == 1 and s[lead + i] != 1]
    r = reduce_sum(x, dims)
    return reshape(r, out_shape)


# ---------------------------------------------------------------------------------------------
# contractions and indexing


def dot_general(lhs, rhs, lb, rb, lc, rc, out_et: ir.Type | None = None, precision=None):
    ls, rs = shape(lhs), shape(rhs)
    lfree = [d for d in range(len(ls)) if d not in lb and d not in lc]
    rfree = [d for d in range(len(rs)) if d not in rb and d not in rc]
    out = [ls[d] for d in lb] + [ls[d] for d in lfree] + [rs[d] for d in rfree]
    attrs = {"dot_dimension_numbers": hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lb), rhs_batching_dimensions=list(rb),
        lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc))}
    if precision is not None:
        attrs["precision_config"] = precision
    return op1("stablehlo.dot_general", [lhs, rhs], tensor(out, out_et or etype(lhs)), attrs)


def gather_shape(operand_shape, indices_shape, offset_dims, collapsed, operand_batching, index_vector_dim,
                 slice_sizes):
    offs = [slice_sizes[i] for i in range(len(operand_shape)) if i not in collapsed and i not in operand_batching]
    batch = [n for i, n in enumerate(indices_shape) if i != index_vector_dim]
    out_rank = len(offs) + len(batch)
    out = []
    oi = bi = 0
    for d in range(out_rank):
        if d in offset_dims:
            out.append(offs[oi])
            oi += 1
        else:
            out.append(batch[bi])
            bi += 1
    return out


def gather(operand, indices, *, offset_dims, collapsed_slice_dims, operand_batching_dims=(),
           start_indices_batching_dims=(), start_index_map, index_vector_dim, slice_sizes, sorted_=False):
    out = gather_shape(shape(operand), shape(indices), list(offset_dims), list(collapsed_slice_dims),
                       list(operand_batching_dims), index_vector_dim, list(slice_sizes))
    dn = hlo.GatherDimensionNumbers.get(
        offset_dims=list(offset_dims), collapsed_slice_dims=list(collapsed_slice_dims),
        operand_batching_dims=list(operand_batching_dims),
        start_indices_batching_dims=list(start_indices_batching_dims),
        start_index_map=list(start_index_map), index_vector_dim=int(index_vector_dim))
    return op1("stablehlo.gather", [operand, indices], tensor(out, etype(operand)),
               {"dimension_numbers": dn, "slice_sizes": i64_array(slice_sizes),
                "indices_are_sorted": bool_attr(sorted_)})


def scatter(operand, indices, updates, *, update_window_dims, inserted_window_dims, input_batching_dims=(),
            scatter_indices_batching_dims=(), scatter_dims_to_operand_dims, index_vector_dim, combiner="add",
            sorted_=False, unique=False):
    dn = hlo.ScatterDimensionNumbers.get(
        update_window_dims=list(update_window_dims), inserted_window_dims=list(inserted_window_dims),
        input_batching_dims=list(input_batching_dims),
        scatter_indices_batching_dims=list(scatter_indices_batching_dims),
        scattered_dims_to_operand_dims=list(scatter_dims_to_operand_dims), index_vector_dim=int(index_vector_dim))
    op = create("stablehlo.scatter", [operand, indices, updates], [operand.type],
                {"scatter_dimension_numbers": dn, "indices_are_sorted": bool_attr(sorted_),
                 "unique_indices": bool_attr(unique)}, regions=1)
    et = etype(operand)
    t = tensor([], et)
    blk = ir.Block.create_at_start(op.regions[0], [t, t])
    with ir.InsertionPoint(blk):
        if combiner == "add":
            r = op1("stablehlo.add", [blk.arguments[0], blk.arguments[1]], t)
        elif combiner == "set":
            r = blk.arguments[1]
        else:
            raise ValueError(combiner)
        create("stablehlo.return", [r], [])
    return op.result


def take_along(x, idx, dim: int):
    """``x`` gathered along ``dim`` by ``idx`` (numpy take_along_axis: idx has x's rank and,
    outside ``dim``, x's sizes; the result has idx's shape)."""
    s = shape(idx)
    r = len(s)
    idx2 = reshape(idx, s + [1])
    others = [d for d in range(r) if d != dim]
    return gather(x, idx2, offset_dims=[], collapsed_slice_dims=[dim], operand_batching_dims=others,
                  start_indices_batching_dims=others, start_index_map=[dim], index_vector_dim=r,
                  slice_sizes=[1] * r)


def scatter_add_along(target_type, idx, upd, dim: int):
    """Transpose of ``take_along``: zeros(target) with ``upd`` added at ``idx`` along ``dim``."""
    s = shape(upd)
    r = len(s)
    idx2 = reshape(idx, s + [1])
    others = [d for d in range(r) if d != dim]
    return scatter(zeros(target_type), idx2, upd, update_window_dims=[], inserted_window_dims=[dim],
                   input_batching_dims=others, scatter_indices_batching_dims=others,
                   scatter_dims_to_operand_dims=[dim], index_vector_dim=r, combiner="add")


def matmul_t(a, b, *, ta=False, tb=False):
    """(Batched) a @ b over the last two dims with optional transposes; equal leading dims."""
    r = rank(a)
    batch = list(range(r - 2))
    lc = r - 2 if ta else r - 1
    rc = r - 1 if tb else r - 2
    out = dot_general(a, b, batch, batch, [lc], [rc])
    return out


def triangular_solve(a, b, *, left_side: bool, lower: bool, unit_diagonal: bool = False,
                     transpose_a: str = "NO_TRANSPOSE"):
    return op1("stablehlo.triangular_solve", [a, b], b.type,
               {"left_side": bool_attr(left_side), "lower": bool_attr(lower),
                "unit_diagonal": bool_attr(unit_diagonal), "transpose_a": hlo.TransposeAttr.get(transpose_a)})


def tril_mask(type_: ir.Type, k: int = 0, upper: bool = False):
    """An i1 mask of the last two dims: row - col >= -k (lower) or col - row >= k (upper)."""
    s = list(ttype(type_).shape)
    it = tensor(s, i64())
    rows = iota(it, len(s) - 2)
    cols = iota(it, len(s) - 1)
    if upper:
        return compare(sub(cols, rows), full(k, it), "GE")
    return compare(sub(rows, cols), full(-k, it), "GE")


def swap_last2(x):
    r = rank(x)
    return transpose(x, list(range(r - 2)) + [r - 1, r - 2])


def placeholder(type_: ir.Type) -> ir.Value:
    """A temporary value (unregistered op) to be replaced before the pass ends."""
    return op1("enzyme.placeholder", [], type_)


# ---------------------------------------------------------------------------------------------
# accumulation of cotangents


def is_zero(v) -> bool:
    """Whether ``v`` is a constant zero (a splat constant, possibly broadcast)."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return False
    op = owner.operation
    if op.name == "stablehlo.broadcast_in_dim":
        return is_zero(op.operands[0])
    if op.name != "stablehlo.constant":
        return False
    attr = op.attributes["value"]
    try:
        d = ir.DenseElementsAttr(attr)
    except (ValueError, TypeError):
        return False
    if not d.is_splat:
        return False
    s = d.get_splat_value()
    try:
        return float(getattr(s, "value", 1.0)) == 0.0
    except TypeError:
        return False


def _sparse_parts(g):
    """If ``g`` is zeros with a window written (dynamic_update_slice / scatter-add / pad into
    zeros), a function that adds that window into another tensor in place."""
    owner = g.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation
    name = op.name
    if name == "stablehlo.dynamic_update_slice" and is_zero(op.operands[0]):
        upd, idx = op.operands[1], list(op.operands[2:])

        def into(cur):
            window = dynamic_slice(cur, idx, shape(upd))
            return dynamic_update_slice(cur, add(window, upd), idx)

        return into
    if name == "stablehlo.scatter" and is_zero(op.operands[0]) and len(op.operands) == 3:
        blk = op.regions[0].blocks[0]
        ops = list(blk.operations)
        if len(ops) == 2 and ops[0].operation.name == "stablehlo.add":
            def into(cur):
                new = ir.Operation.create("stablehlo.scatter", results=[cur.type],
                                          operands=[cur, op.operands[1], op.operands[2]],
                                          attributes={k: op.attributes[k] for k in
                                                      ("scatter_dimension_numbers", "indices_are_sorted",
                                                       "unique_indices") if k in op.attributes},
                                          regions=1)
                et = etype(cur)
                t = tensor([], et)
                b = ir.Block.create_at_start(new.regions[0], [t, t])
                with ir.InsertionPoint(b):
                    create("stablehlo.return", [op1("stablehlo.add", [b.arguments[0], b.arguments[1]], t)], [])
                return new.result

            return into
    if name == "stablehlo.pad" and is_zero(op.operands[1]):
        lo = i64_list(op.attributes["edge_padding_low"])
        hi = i64_list(op.attributes["edge_padding_high"])
        interior = i64_list(op.attributes["interior_padding"])
        if any(i != 0 for i in interior) or any(v < 0 for v in lo + hi):
            return None
        upd = op.operands[0]

        def into(cur):
            idx = [scalar_const(v, i64()) for v in lo]
            window = slice_(cur, lo, [a + b for a, b in zip(lo, shape(upd))])
            return dynamic_update_slice(cur, add(window, upd), idx)

        return into
    return None


def accumulate(cur, g):
    """``cur + g`` for cotangents; a window written into zeros is added in place instead
    (O(window) rather than O(tensor): what keeps reverse loops over ``x[i]`` linear)."""
    if cur is None:
        return g
    if g is None:
        return cur
    if cur.type == g.type:
        into = _sparse_parts(g)
        if into is not None:
            return into(cur)
        into = _sparse_parts(cur)
        if into is not None:
            return into(g)
    return add(cur, g)
