"""Family ``slicing``: slice / pad / concatenate / dynamic_slice / dynamic_update_slice /
reverse simplification, and slice pushdown (compute only the part of a tensor that is used:
``(dot(x, y) * z + 4)[0:10]`` computes 10 elements, not 1e5).

Pushdown patterns move a slice towards the program's inputs. They fire when the sliced
producer has no other use (so no work is duplicated), or when the producer is cheap and
fuses anyway (broadcasts, pads). Every rewrite is exact.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from ...ir import build as B
from ...ir import shapes
from ...ir.attrs import copy_attrs, i64_array, i64_list, int_attr_value, read_constant, scalar_value
from ...ir.evaluate import evaluate_op, evaluate_value
from ...ir.opinfo import ELEMENTWISE
from ...ir.types import element_type_of, np_dtype, num_elements, ranked, shape_of
from ...ir.values import def_of, defining_op, has_one_use, op_name, user_ops
from ._registry import identity_pattern, pattern, replace
from ._util import int_range

FAMILY = "slicing"
_FOLD_LIMIT = 1 << 16


# -- helpers -----------------------------------------------------------------------------------

def _slice_params(op):
    return (i64_list(op.attributes["start_indices"]), i64_list(op.attributes["limit_indices"]),
            i64_list(op.attributes["strides"]))


def _pad_params(op):
    return (i64_list(op.attributes["edge_padding_low"]), i64_list(op.attributes["edge_padding_high"]),
            i64_list(op.attributes["interior_padding"]))


def _result_type(op) -> ir.RankedTensorType:
    return ir.RankedTensorType(op.results[0].type)


def _scalar_source(v: ir.Value, loc) -> ir.Value | None:
    """A rank-0 value that ``v`` is filled with: the operand of ``broadcast_in_dim(s, [])``,
    ``v`` itself if rank 0, or a new rank-0 constant for a splat constant. None otherwise.
    (Creates ops: call inside ``with rewriter.ip``.)"""
    if shape_of(v) == ():
        return v
    d = def_of(v, "broadcast_in_dim")
    if d is not None and shape_of(d.operands[0]) == ():
        return d.operands[0]
    if op_name(v) == "stablehlo.constant":
        s = scalar_value(v)
        if s is not None:
            return B.full(s, ranked([], element_type_of(v)), loc=loc)
    return None


def _splat_key(v: ir.Value):
    """Something equal for two values filled with the same scalar (constant value or the same
    rank-0 SSA value), or None."""
    d = def_of(v, "broadcast_in_dim")
    if d is not None and shape_of(d.operands[0]) == ():
        s = scalar_value(d.operands[0])
        return ("c", repr(s)) if s is not None else ("v", d.operands[0])
    s = scalar_value(v)
    if s is not None and (op_name(v) == "stablehlo.constant" or shape_of(v) == ()):
        return ("c", repr(s))
    if shape_of(v) == ():
        return ("v", v)
    return None


def _same_scalar(a: ir.Value, b: ir.Value) -> bool:
    if a == b:
        return True
    ka, kb = _splat_key(a), _splat_key(b)
    return ka is not None and ka == kb and element_type_of(a) == element_type_of(b)


def _is_full_slice(shape, start, limit, strides) -> bool:
    return all(s == 0 and e == n and (t == 1 or n <= 1) for n, s, e, t in zip(shape, start, limit, strides))


def _slice_users_cover(v: ir.Value) -> bool:
    """All users of v are slices whose outputs together are no bigger than v."""
    total = 0
    for u in user_ops(v):
        if u.operation.name != "stablehlo.slice":
            return False
        total += num_elements(u.results[0])
    return total <= num_elements(v)


def _zero_sized(v) -> bool:
    return 0 in shape_of(v)


# -- slice of a slice / full slice / constants ----------------------------------------------------

@pattern("slice_full", FAMILY, "stablehlo.slice", benefit=3)
def slice_full(op, rewriter):
    """slice(x) covering all of x -> x."""
    x = op.operands[0]
    if x.type != op.results[0].type:
        return False
    if not _is_full_slice(shape_of(x), *_slice_params(op)):
        return False
    return replace(rewriter, op, x)


@pattern("slice_slice", FAMILY, "stablehlo.slice", benefit=2)
def slice_slice(op, rewriter):
    """slice(slice(x)) -> one slice of x (starts, limits and strides composed)."""
    inner = def_of(op.operands[0], "slice")
    if inner is None:
        return False
    s1, _, t1 = _slice_params(inner)
    s2, _, t2 = _slice_params(op)
    out = shape_of(op.results[0])
    start, limit, strides = [], [], []
    for a, ta, b, tb, n in zip(s1, t1, s2, t2, out):
        s = a + b * ta
        t = ta * tb
        start.append(s)
        strides.append(t)
        limit.append(s if n == 0 else s + (n - 1) * t + 1)
    with rewriter.ip:
        r = B.slice(inner.operands[0], start, limit, strides, loc=op.location)
    return replace(rewriter, op, r)


# -- slice pushdown -------------------------------------------------------------------------------

@pattern("slice_elementwise", FAMILY, "stablehlo.slice", benefit=1)
def slice_elementwise(op, rewriter):
    """slice(f(a, b, ...)) -> f(slice a, slice b, ...) for elementwise f, when f's result is
    used only by this slice (or only by slices that together need no more than all of it).
    Rank-0 operands (select's predicate, clamp's bounds) stay; splat constants shrink."""
    x = op.operands[0]
    ew = defining_op(x)
    if ew is None or ew.operation.name not in ELEMENTWISE or len(ew.results) != 1:
        return False
    if _zero_sized(op.results[0]):
        return False
    if not has_one_use(x) and not _slice_users_cover(x):
        return False
    full = shape_of(x)
    start, limit, strides = _slice_params(op)
    out = shape_of(op.results[0])
    if any(shape_of(v) not in ((), full) for v in ew.operands):
        return False
    with rewriter.ip:
        new_operands = []
        for v in ew.operands:
            sv = shape_of(v)
            if sv == () and full != ():
                new_operands.append(v)
            elif op_name(v) == "stablehlo.constant" and scalar_value(v) is not None:
                new_operands.append(B.full(scalar_value(v), ranked(out, element_type_of(v)),
                                                   loc=op.location))
            else:
                new_operands.append(B.slice(v, start, limit, strides, loc=op.location))
        r = B.op1(ew.operation.name, new_operands, ranked(out, element_type_of(x)), copy_attrs(ew),
                  loc=ew.location)
    return replace(rewriter, op, r)


@pattern("slice_broadcast_in_dim", FAMILY, "stablehlo.slice", benefit=1)
def slice_broadcast_in_dim(op, rewriter):
    """slice(broadcast_in_dim(x)) -> broadcast_in_dim(slice x) (x sliced along the dimensions
    it really spans; broadcast dimensions just get smaller)."""
    b = def_of(op.operands[0], "broadcast_in_dim")
    if b is None:
        return False
    x = b.operands[0]
    dims = i64_list(b.attributes["broadcast_dimensions"])
    start, limit, strides = _slice_params(op)
    xs = shape_of(x)
    full = shape_of(op.operands[0])
    xstart, xlimit, xstrides = [], [], []
    for i, d in enumerate(dims):
        if xs[i] == 1 and full[d] != 1:
            xstart.append(0)
            xlimit.append(1)
            xstrides.append(1)
        else:
            xstart.append(start[d])
            xlimit.append(limit[d])
            xstrides.append(strides[d])
    with rewriter.ip:
        xv = B.slice(x, xstart, xlimit, xstrides, loc=op.location)
        r = B.op1("stablehlo.broadcast_in_dim", [xv], _result_type(op),
                  {"broadcast_dimensions": i64_array(dims)}, loc=op.location)
    return replace(rewriter, op, r)


@pattern("slice_transpose", FAMILY, "stablehlo.slice", benefit=1)
def slice_transpose(op, rewriter):
    """slice(transpose(x)) -> transpose(slice x) (transpose used only here)."""
    t = def_of(op.operands[0], "transpose")
    if t is None or not has_one_use(op.operands[0]):
        return False
    perm = i64_list(t.attributes["permutation"])
    start, limit, strides = _slice_params(op)
    n = len(perm)
    xs, xl, xt = [0] * n, [0] * n, [1] * n
    for i, p in enumerate(perm):
        xs[p], xl[p], xt[p] = start[i], limit[i], strides[i]
    with rewriter.ip:
        xv = B.slice(t.operands[0], xs, xl, xt, loc=op.location)
        r = B.op1("stablehlo.transpose", [xv], _result_type(op),
                  {"permutation": i64_array(perm)}, loc=op.location)
    return replace(rewriter, op, r)


def _unit_dim_map(src_shape, dst_shape):
    """For a reshape that only inserts/removes size-1 dims: list mapping each non-unit dst dim
    to its src dim (None for unit dst dims); else None."""
    fwd = shapes.unit_dims_map(src_shape, dst_shape)
    if fwd is None:
        return None
    m = [None] * len(dst_shape)
    for i, j in enumerate(fwd):
        if j is not None and src_shape[i] != 1:
            m[j] = i
    return m


@pattern("slice_reshape_unit_dims", FAMILY, "stablehlo.slice", benefit=1)
def slice_reshape_unit_dims(op, rewriter):
    """slice(reshape(x)) -> reshape(slice x) when the reshape only adds or drops size-1 dims."""
    r0 = def_of(op.operands[0], "reshape")
    if r0 is None:
        return False
    x = r0.operands[0]
    xs, ys = shape_of(x), shape_of(op.operands[0])
    m = _unit_dim_map(xs, ys)
    if m is None or _zero_sized(op.results[0]):
        return False
    start, limit, strides = _slice_params(op)
    xst, xl, xt = [0] * len(xs), list(xs), [1] * len(xs)
    for j, i in enumerate(m):
        if i is not None:
            xst[i], xl[i], xt[i] = start[j], limit[j], strides[j]
    with rewriter.ip:
        xv = B.slice(x, xst, xl, xt, loc=op.location)
        r = B.op1("stablehlo.reshape", [xv], _result_type(op), loc=op.location)
    return replace(rewriter, op, r)


@pattern("slice_reshape_major", FAMILY, "stablehlo.slice", benefit=1)
def slice_reshape_major(op, rewriter):
    """slice(reshape(x)) where the reshape merges x's leading dims [a, b, ...] into one of size
    a*b*... and the slice keeps whole rows of the leading dim: reshape(slice x)."""
    r0 = def_of(op.operands[0], "reshape")
    if r0 is None or not has_one_use(op.operands[0]):
        return False
    x = r0.operands[0]
    xs, ys = shape_of(x), shape_of(op.operands[0])
    if len(ys) == 0 or len(xs) < 2 or _unit_dim_map(xs, ys) is not None:
        return False
    start, limit, strides = _slice_params(op)
    # only dim 0 of y is sliced
    if any((s, e, t) != (0, n, 1) for s, e, t, n in zip(start[1:], limit[1:], strides[1:], ys[1:])):
        return False
    if strides[0] != 1:
        return False
    # find k with prod(xs[:k]) == ys[0] and xs[k:] == ys[1:]
    k, p = 0, 1
    while k < len(xs) and p < ys[0]:
        p *= xs[k]
        k += 1
    if p != ys[0] or tuple(xs[k:]) != tuple(ys[1:]) or k < 2:
        return False
    inner = int(np.prod(xs[1:k]))
    if start[0] % inner or limit[0] % inner:
        return False
    s0, e0 = start[0] // inner, limit[0] // inner
    with rewriter.ip:
        xv = B.slice(x, [s0] + [0] * (len(xs) - 1), [e0] + list(xs[1:]), loc=op.location)
        r = B.op1("stablehlo.reshape", [xv], _result_type(op), loc=op.location)
    return replace(rewriter, op, r)


@pattern("slice_dot_general", FAMILY, "stablehlo.slice", benefit=1)
def slice_dot_general(op, rewriter):
    """slice(dot_general(a, b)) -> dot_general(slice a, slice b): batch and free dimensions of
    the result are sliced in the operands instead (dot used only here)."""
    d = def_of(op.operands[0], "dot_general")
    if d is None or not has_one_use(op.operands[0]):
        return False
    from jaxlib.mlir.dialects import stablehlo as _hlo
    dn = _hlo.DotDimensionNumbers(d.attributes["dot_dimension_numbers"])
    lb, rb = list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions)
    lc, rc = list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)
    a, b = d.operands
    sa, sb = shape_of(a), shape_of(b)
    lf = [i for i in range(len(sa)) if i not in lb and i not in lc]
    rf = [i for i in range(len(sb)) if i not in rb and i not in rc]
    if len(lb) + len(lf) + len(rf) != len(shape_of(op.results[0])):
        return False
    start, limit, strides = _slice_params(op)
    a_s, a_l, a_t = [0] * len(sa), list(sa), [1] * len(sa)
    b_s, b_l, b_t = [0] * len(sb), list(sb), [1] * len(sb)
    k = 0
    for i, j in zip(lb, rb):
        a_s[i], a_l[i], a_t[i] = start[k], limit[k], strides[k]
        b_s[j], b_l[j], b_t[j] = start[k], limit[k], strides[k]
        k += 1
    for i in lf:
        a_s[i], a_l[i], a_t[i] = start[k], limit[k], strides[k]
        k += 1
    for j in rf:
        b_s[j], b_l[j], b_t[j] = start[k], limit[k], strides[k]
        k += 1
    with rewriter.ip:
        av = B.slice(a, a_s, a_l, a_t, loc=op.location)
        bv = B.slice(b, b_s, b_l, b_t, loc=op.location)
        r = B.op1("stablehlo.dot_general", [av, bv], _result_type(op), copy_attrs(d), loc=d.location)
    return replace(rewriter, op, r)


@pattern("slice_reduce", FAMILY, "stablehlo.slice", benefit=1)
def slice_reduce(op, rewriter):
    """slice(reduce(x, dims)) -> reduce(slice x, dims): the kept dimensions are sliced before
    reducing (single-input reduce used only here)."""
    red = def_of(op.operands[0], "reduce")
    if red is None or len(red.results) != 1 or len(red.operands) != 2 or not has_one_use(op.operands[0]):
        return False
    x = red.operands[0]
    xs = shape_of(x)
    rdims = set(i64_list(red.attributes["dimensions"]))
    kept = [i for i in range(len(xs)) if i not in rdims]
    start, limit, strides = _slice_params(op)
    s, e, t = [0] * len(xs), list(xs), [1] * len(xs)
    for k, i in enumerate(kept):
        s[i], e[i], t[i] = start[k], limit[k], strides[k]
    with rewriter.ip:
        xv = B.slice(x, s, e, t, loc=op.location)
        new = red.operation.clone(rewriter.ip)
        new.operands[0] = xv
        new.results[0].set_type(op.results[0].type)
    return replace(rewriter, op, new.results[0])


@pattern("slice_concatenate", FAMILY, "stablehlo.slice", benefit=2)
def slice_concatenate(op, rewriter):
    """slice(concatenate(a, b, ...)) -> the one operand the slice falls in (sliced), or a
    smaller concatenate of slices of the operands it overlaps."""
    c = def_of(op.operands[0], "concatenate")
    if c is None or _zero_sized(op.results[0]):
        return False
    dim = int_attr_value(c.attributes["dimension"])
    start, limit, strides = _slice_params(op)
    s, e, t = start[dim], limit[dim], strides[dim]
    n_out = shape_of(op.results[0])[dim]
    last = s + (n_out - 1) * t
    pieces = []  # (operand, local start, local limit)
    off = 0
    for v in c.operands:
        n = shape_of(v)[dim]
        lo, hi = off, off + n
        off = hi
        if n == 0:
            continue
        if t == 1:
            a, b = max(s, lo), min(e, hi)
            if a < b:
                pieces.append((v, a - lo, b - lo))
        elif lo <= s and last < hi:
            pieces.append((v, s - lo, last - lo + 1))
    if not pieces:
        return False
    n_nonempty = sum(1 for v in c.operands if shape_of(v)[dim] != 0)
    if len(pieces) == n_nonempty and not has_one_use(op.operands[0]):
        return False
    if t != 1 and len(pieces) != 1:
        return False
    with rewriter.ip:
        vals = []
        for v, a, b in pieces:
            ss, ee, tt = list(start), list(limit), list(strides)
            ss[dim], ee[dim], tt[dim] = a, b, t
            vals.append(B.slice(v, ss, ee, tt, loc=op.location))
        r = B.concatenate(vals, dim, loc=op.location)
    return replace(rewriter, op, r)


@pattern("slice_pad", FAMILY, "stablehlo.slice", benefit=2)
def slice_pad(op, rewriter):
    """slice(pad(x, v)) -> pad(slice x, v) with the padding the window still sees (just a
    slice of x inside the unpadded region, a broadcast of v inside the padding); unit
    strides and no interior padding."""
    p = def_of(op.operands[0], "pad")
    if p is None:
        return False
    start, limit, strides = _slice_params(op)
    lo, hi, it = _pad_params(p)
    if any(t != 1 for t in strides) or any(it):
        return False
    x, pv = p.operands
    xs = shape_of(x)
    out = shape_of(op.results[0])
    xa, xb, nlo, nhi = [], [], [], []
    empty = False
    for i, n in enumerate(xs):
        a = max(0, start[i] - lo[i])
        b = min(n, limit[i] - lo[i])
        if b <= a:
            empty = True
            break
        xa.append(a)
        xb.append(b)
        low = a + lo[i] - start[i]
        nlo.append(low)
        nhi.append(out[i] - low - (b - a))
    with rewriter.ip:
        if empty:
            r = B.op1("stablehlo.broadcast_in_dim", [pv], _result_type(op),
                      {"broadcast_dimensions": i64_array([])}, loc=op.location)
        else:
            xv = B.slice(x, xa, xb, loc=op.location)
            r = B.pad(xv, pv, nlo, nhi, loc=op.location)
    return replace(rewriter, op, r)


def _iota_exact_limit(et) -> int:
    if isinstance(et, ir.F16Type):
        return 1 << 11
    if isinstance(et, ir.BF16Type):
        return 1 << 8
    if isinstance(et, ir.F32Type):
        return 1 << 24
    if isinstance(et, ir.F64Type):
        return 1 << 53
    dt = np_dtype(et)
    if dt is None or dt.kind not in "iu":
        return 0
    return int(np.iinfo(dt).max)


@pattern("slice_iota", FAMILY, "stablehlo.slice", benefit=2)
def slice_iota(op, rewriter):
    """slice(iota) -> iota (when the slice starts at 0 with unit stride along the iota
    dimension), or iota * stride + start."""
    io = def_of(op.operands[0], "iota")
    if io is None or _zero_sized(op.results[0]):
        return False
    d = int_attr_value(io.attributes["iota_dimension"])
    start, limit, strides = _slice_params(op)
    rt = _result_type(op)
    et = rt.element_type
    s, t = start[d], strides[d]
    n = shape_of(op.results[0])[d]
    if (s != 0 or t != 1) and s + t * (n - 1) > _iota_exact_limit(et):
        return False
    with rewriter.ip:
        r = B.iota(rt, d, loc=op.location)
        if t != 1:
            r = B.op1("stablehlo.multiply", [r, B.full(t, rt, loc=op.location)], rt, loc=op.location)
        if s != 0:
            r = B.op1("stablehlo.add", [r, B.full(s, rt, loc=op.location)], rt, loc=op.location)
    return replace(rewriter, op, r)


@pattern("slice_reverse", FAMILY, "stablehlo.slice", benefit=1)
def slice_reverse(op, rewriter):
    """slice(reverse(x)) -> reverse(slice x) with the window mirrored (reverse used only here)."""
    rv = def_of(op.operands[0], "reverse")
    if rv is None or not has_one_use(op.operands[0]) or _zero_sized(op.results[0]):
        return False
    dims = i64_list(rv.attributes["dimensions"])
    x = rv.operands[0]
    xs = shape_of(x)
    start, limit, strides = _slice_params(op)
    out = shape_of(op.results[0])
    s, e, t = list(start), list(limit), list(strides)
    for d in dims:
        first = start[d]
        lastv = start[d] + (out[d] - 1) * strides[d]
        s[d] = xs[d] - 1 - lastv
        e[d] = xs[d] - first
    with rewriter.ip:
        xv = B.slice(x, s, e, t, loc=op.location)
        r = B.op1("stablehlo.reverse", [xv], _result_type(op),
                  {"dimensions": i64_array(dims)}, loc=op.location)
    return replace(rewriter, op, r)


def _const_indices(values) -> list[int] | None:
    out = []
    for v in values:
        a = evaluate_value(v, 1)
        if a is None:
            return None
        out.append(int(np.asarray(a).reshape(())))
    return out


@pattern("slice_dynamic_update_slice", FAMILY, "stablehlo.slice", benefit=2)
def slice_dynamic_update_slice(op, rewriter):
    """slice(dynamic_update_slice(x, u, constant idx)) -> slice of u when the window lies in
    the updated box, slice of x when it misses the box. Only when slices are all the update is
    used for (it then dies): otherwise u or x gets a second consumer next to an in-place update
    that stays, and XLA recomputes, materializes or copies it (a Jacobi time loop ran 1.8x
    slower reading u; an FDTD time loop copied two arrays per step reading x)."""
    d = def_of(op.operands[0], "dynamic_update_slice")
    if d is None:
        return False
    x, u = d.operands[0], d.operands[1]
    idx = _const_indices(d.operands[2:])
    if idx is None:
        return False
    xs, us = shape_of(x), shape_of(u)
    idx = [min(max(i, 0), n - m) for i, n, m in zip(idx, xs, us)]
    start, limit, strides = _slice_params(op)
    out = shape_of(op.results[0])
    if 0 in out:
        return False
    lasts = [s + (n - 1) * t for s, n, t in zip(start, out, strides)]
    inside = all(i <= s and l < i + m for s, l, i, m in zip(start, lasts, idx, us))
    outside = any(l < i or s >= i + m for s, l, i, m in zip(start, lasts, idx, us))
    if any(o.operation.name != "stablehlo.slice" for o in user_ops(op.operands[0])):
        return False  # the update stays: reading around it would make XLA copy the array
    with rewriter.ip:
        if inside:
            r = B.slice(u, [s - i for s, i in zip(start, idx)],
                            [l - i + 1 for l, i in zip(lasts, idx)], strides, loc=op.location)
        elif outside:
            r = B.slice(x, start, limit, strides, loc=op.location)
        else:
            return False
    return replace(rewriter, op, r)


@pattern("dynamic_slice_of_updated_element", FAMILY, "stablehlo.dynamic_slice", benefit=2)
def dynamic_slice_of_updated_element(op, rewriter):
    """dynamic_slice(dynamic_update_slice(x, u, s), s') of one element, ``u`` one element ->
    ``u`` where the (clamped) indices agree, else dynamic_slice(x, s'). Scalar loop code writes
    an element and then reads another (``A[i, j] -= ...; A[i, j] /= A[j, j]``): the read through
    the update gave the updated array a second consumer inside the loop, and XLA copied the whole
    array twice per iteration (LU by dot products, n = 128: 2 us -> 0.5 us per iteration). Only
    when ``x`` is not itself an update: one level, so a chain of k writes never turns each read
    into k selects."""
    d = def_of(op.operands[0], "dynamic_update_slice")
    if d is None:
        return False
    x, u = d.operands[0], d.operands[1]
    if def_of(x, "dynamic_update_slice") is not None:
        return False
    if any(n != 1 for n in shape_of(u)) or any(n != 1 for n in shape_of(op.results[0])):
        return False
    s, s2 = list(d.operands[2:]), list(op.operands[1:])
    if all(a == b for a, b in zip(s, s2)):
        return replace(rewriter, op, u)
    if any(a.type != b.type for a, b in zip(s, s2)):
        return False
    with rewriter.ip, op.location:
        same = None
        for a, b, n in zip(s, s2, shape_of(x)):
            if a == b:
                continue
            lo, hi = B.zeros(a.type), B.full(n - 1, a.type)  # both ops clamp a start into range
            eq = B.compare(B.clamp(lo, a, hi), B.clamp(lo, b, hi), "EQ")
            same = eq if same is None else B.and_(same, eq)
        r = B.select(same, u, B.dynamic_slice(x, s2, [1] * len(s2)))
    return replace(rewriter, op, r)


@pattern("slice_dynamic_slice", FAMILY, "stablehlo.slice", benefit=1)
def slice_dynamic_slice(op, rewriter):
    """slice(dynamic_slice(x, i, sizes)) -> dynamic_slice(x, clamp(i) + start, smaller sizes)
    (unit strides; the explicit clamp keeps the original index clamping)."""
    ds = def_of(op.operands[0], "dynamic_slice")
    if ds is None or not has_one_use(op.operands[0]):
        return False
    start, limit, strides = _slice_params(op)
    if any(t != 1 for t in strides) or _zero_sized(op.results[0]):
        return False
    x = ds.operands[0]
    idx = list(ds.operands[1:])
    xs = shape_of(x)
    sizes = i64_list(ds.attributes["slice_sizes"])
    out = shape_of(op.results[0])
    it = ir.RankedTensorType(idx[0].type)
    dt = np_dtype(it.element_type)
    if dt is None or dt.kind not in "iu":
        return False
    if any(n > np.iinfo(dt).max for n in xs):
        return False
    with rewriter.ip:
        new_idx = []
        for i, v in enumerate(idx):
            if start[i] == 0 and sizes[i] == out[i]:
                new_idx.append(v)
                continue
            lo = B.full(0, it, loc=op.location)
            hi = B.full(xs[i] - sizes[i], it, loc=op.location)
            c = B.op1("stablehlo.clamp", [lo, v, hi], it, loc=op.location)
            if start[i]:
                c = B.op1("stablehlo.add", [c, B.full(start[i], it, loc=op.location)], it,
                          loc=op.location)
            new_idx.append(c)
        r = B.op1("stablehlo.dynamic_slice", [x] + new_idx, _result_type(op),
                  {"slice_sizes": i64_array(out)}, loc=op.location)
    return replace(rewriter, op, r)


# -- concatenate -----------------------------------------------------------------------------------

def _concat_dim(op) -> int:
    return int_attr_value(op.attributes["dimension"])


@pattern("concat_single_operand", FAMILY, "stablehlo.concatenate", benefit=3)
def concat_single_operand(op, rewriter):
    """concatenate(x) -> x."""
    if len(op.operands) != 1 or op.operands[0].type != op.results[0].type:
        return False
    return replace(rewriter, op, op.operands[0])


@pattern("concat_remove_empty", FAMILY, "stablehlo.concatenate", benefit=3)
def concat_remove_empty(op, rewriter):
    """concatenate(a, <empty>, b) -> concatenate(a, b)."""
    dim = _concat_dim(op)
    keep = [v for v in op.operands if shape_of(v)[dim] != 0]
    if len(keep) == len(op.operands) or not keep:
        return False
    with rewriter.ip:
        r = B.concatenate(keep, dim, loc=op.location)
    return replace(rewriter, op, r)


@pattern("concat_flatten", FAMILY, "stablehlo.concatenate", benefit=2)
def concat_flatten(op, rewriter):
    """concatenate(a, concatenate(b, c), d) -> concatenate(a, b, c, d) (same dimension)."""
    dim = _concat_dim(op)
    vals, hit = [], False
    for v in op.operands:
        inner = def_of(v, "concatenate")
        if inner is not None and _concat_dim(inner) == dim and has_one_use(v):
            vals.extend(inner.operands)
            hit = True
        else:
            vals.append(v)
    if not hit:
        return False
    with rewriter.ip:
        r = B.concatenate(vals, dim, loc=op.location)
    return replace(rewriter, op, r)


@pattern("concat_adjacent_slices", FAMILY, "stablehlo.concatenate", benefit=2)
def concat_adjacent_slices(op, rewriter):
    """concatenate(..., x[a:b], x[b:c], ...) -> concatenate(..., x[a:c], ...) along the
    concatenation dimension (unit stride, same window elsewhere)."""
    dim = _concat_dim(op)
    vals = list(op.operands)
    out, hit = [], False
    for v in vals:
        if out:
            p, q = def_of(out[-1], "slice"), def_of(v, "slice")
            if p is not None and q is not None and p.operands[0] == q.operands[0]:
                ps, pe, pt = _slice_params(p)
                qs, qe, qt = _slice_params(q)
                same_else = all((ps[i], pe[i], pt[i]) == (qs[i], qe[i], qt[i])
                                for i in range(len(ps)) if i != dim)
                if same_else and pt[dim] == 1 and qt[dim] == 1 and pe[dim] == qs[dim]:
                    ns, ne = list(ps), list(pe)
                    ne[dim] = qe[dim]
                    with rewriter.ip:
                        out[-1] = B.slice(p.operands[0], ns, ne, pt, loc=op.location)
                    hit = True
                    continue
        out.append(v)
    if not hit:
        return False
    with rewriter.ip:
        r = B.concatenate(out, dim, loc=op.location)
    return replace(rewriter, op, r)


@pattern("concat_merge_constants", FAMILY, "stablehlo.concatenate", benefit=2)
def concat_merge_constants(op, rewriter):
    """concatenate(x, c1, c2, y) -> concatenate(x, c12, y): adjacent constant operands merged
    into one (up to 65536 elements; all-constant concatenates are fold_concatenate's)."""
    dim = _concat_dim(op)
    vals = list(op.operands)
    if all(op_name(v) == "stablehlo.constant" for v in vals):
        return False
    groups = []
    for v in vals:
        a = read_constant(v, _FOLD_LIMIT) if op_name(v) == "stablehlo.constant" else None
        if a is not None and groups and groups[-1][0] == "c":
            groups[-1][1].append((v, a))
        elif a is not None:
            groups.append(["c", [(v, a)]])
        else:
            groups.append(["v", v])
    merged = [g for g in groups if g[0] == "c" and len(g[1]) > 1]
    if not merged:
        return False
    if sum(num_elements(v) for g in merged for v, _ in g[1]) > _FOLD_LIMIT:
        return False
    with rewriter.ip:
        new = []
        for g in groups:
            if g[0] == "v":
                new.append(g[1])
            elif len(g[1]) == 1:
                new.append(g[1][0][0])
            else:
                arr = np.concatenate([np.asarray(a) for _, a in g[1]], axis=dim)
                shape = list(shape_of(g[1][0][0]))
                shape[dim] = arr.shape[dim]
                new.append(B.constant(arr, ranked(shape, element_type_of(op.results[0])), loc=op.location))
        r = B.concatenate(new, dim, loc=op.location)
    return replace(rewriter, op, r)


@pattern("concat_same_splat", FAMILY, "stablehlo.concatenate", benefit=2)
def concat_same_splat(op, rewriter):
    """concatenate of operands all filled with the same scalar -> one splat / broadcast."""
    vals = list(op.operands)
    if len(vals) < 2 or not all(_same_scalar(vals[0], v) for v in vals[1:]):
        return False
    if _splat_key(vals[0]) is None:
        return False
    with rewriter.ip:
        s = _scalar_source(vals[0], op.location)
        if s is None:
            return False
        r = B.op1("stablehlo.broadcast_in_dim", [s], _result_type(op),
                  {"broadcast_dimensions": i64_array([])}, loc=op.location)
    return replace(rewriter, op, r)


@pattern("concat_splat_to_pad", FAMILY, "stablehlo.concatenate", benefit=1)
def concat_splat_to_pad(op, rewriter):
    """concatenate(splat c, x, splat c) -> pad(x, c) (leading and/or trailing operands filled
    with the pad value)."""
    dim = _concat_dim(op)
    vals = list(op.operands)
    if len(vals) < 2:
        return False
    i, j = 0, len(vals)
    key = None

    def k(v):
        return _splat_key(v)

    if k(vals[0]) is not None:
        key = vals[0]
        while i < j and k(vals[i]) is not None and _same_scalar(vals[i], key):
            i += 1
    if k(vals[-1]) is not None and (key is None or _same_scalar(vals[-1], key)):
        key = vals[-1] if key is None else key
        while j > i and k(vals[j - 1]) is not None and _same_scalar(vals[j - 1], key):
            j -= 1
    if key is None or i >= j or (i == 0 and j == len(vals)):
        return False
    lo = sum(shape_of(v)[dim] for v in vals[:i])
    hi = sum(shape_of(v)[dim] for v in vals[j:])
    rank = len(shape_of(vals[0]))
    low, high = [0] * rank, [0] * rank
    low[dim], high[dim] = lo, hi
    with rewriter.ip:
        s = _scalar_source(key, op.location)
        if s is None:
            return False
        mid = B.concatenate(vals[i:j], dim, loc=op.location)
        r = B.pad(mid, s, low, high, loc=op.location)
    return replace(rewriter, op, r)


# -- pad ----------------------------------------------------------------------------------------------

@pattern("pad_noop", FAMILY, "stablehlo.pad", benefit=3)
def pad_noop(op, rewriter):
    """pad(x) with all paddings zero -> x."""
    lo, hi, it = _pad_params(op)
    if any(lo) or any(hi) or any(it) or op.operands[0].type != op.results[0].type:
        return False
    return replace(rewriter, op, op.operands[0])


@pattern("pad_pad", FAMILY, "stablehlo.pad", benefit=2)
def pad_pad(op, rewriter):
    """pad(pad(x, v, l1, h1), v, l2, h2) -> pad(x, v, l1+l2, h1+h2) (same pad value; the inner
    pad has no negative or interior padding, the outer no interior padding)."""
    inner = def_of(op.operands[0], "pad")
    if inner is None:
        return False
    l1, h1, i1 = _pad_params(inner)
    l2, h2, i2 = _pad_params(op)
    if any(i1) or any(i2) or any(x < 0 for x in l1 + h1):
        return False
    if not _same_scalar(inner.operands[1], op.operands[1]):
        return False
    with rewriter.ip:
        r = B.op1("stablehlo.pad", [inner.operands[0], op.operands[1]], _result_type(op),
                  {"edge_padding_low": i64_array([a + b for a, b in zip(l1, l2)]),
                   "edge_padding_high": i64_array([a + b for a, b in zip(h1, h2)]),
                   "interior_padding": i64_array(i1)}, loc=op.location)
    return replace(rewriter, op, r)


@pattern("pad_negative_to_slice", FAMILY, "stablehlo.pad", benefit=2)
def pad_negative_to_slice(op, rewriter):
    """pad with negative edge padding -> pad(slice x) with non-negative padding (or the slice)."""
    lo, hi, it = _pad_params(op)
    if not any(p < 0 for p in lo + hi):
        return False
    x = op.operands[0]
    xs = shape_of(x)
    s, e = [0] * len(xs), list(xs)
    for i, n in enumerate(xs):
        if lo[i] < 0 or hi[i] < 0:
            if it[i]:
                return False
            s[i] = max(0, -lo[i])
            e[i] = n - max(0, -hi[i])
            if e[i] <= s[i]:
                return False  # all padding along a dim: let slice/broadcast patterns handle it
    with rewriter.ip:
        xv = B.slice(x, s, e, loc=op.location)
        r = B.pad(xv, op.operands[1], [max(0, p) for p in lo], [max(0, p) for p in hi], it,
                      loc=op.location)
    return replace(rewriter, op, r)


@pattern("pad_of_splat", FAMILY, "stablehlo.pad", benefit=2)
def pad_of_splat(op, rewriter):
    """pad(splat c, c) -> splat c of the padded shape."""
    x, v = op.operands
    if _splat_key(x) is None or not _same_scalar(x, v):
        return False
    with rewriter.ip:
        r = B.op1("stablehlo.broadcast_in_dim", [v], _result_type(op),
                  {"broadcast_dimensions": i64_array([])}, loc=op.location)
    return replace(rewriter, op, r)


_FOLDED = ("stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum")


def _scalar_apply(name: str, scalars: list[ir.Value], result_elem: ir.Type, attrs: dict, loc) -> ir.Value:
    """``name`` applied to rank-0 values; folded when exact and all are constants."""
    vals = [scalar_value(s) if op_name(s) == "stablehlo.constant" else None for s in scalars]
    dt = np_dtype(result_elem)
    if name in _FOLDED and all(v is not None for v in vals) and dt is not None \
            and dt.name != "bfloat16" and all(element_type_of(s) == result_elem for s in scalars):
        res = evaluate_op(name, [np.asarray(v, dtype=dt) for v in vals])
        if res is not None:
            return B.constant(np.asarray(res).reshape(()), ranked([], result_elem), loc=loc)
    return B.op1(name, list(scalars), ranked([], result_elem), attrs, loc=loc)


@pattern("elementwise_of_pads", FAMILY, tuple(sorted(ELEMENTWISE)), benefit=1)
def elementwise_of_pads(op, rewriter):
    """f(pad(x, c1), pad(y, c2), k) -> pad(f(x, y, k), f(c1, c2, k)) for elementwise f, pads
    with identical padding (used only here) and splat operands k: f runs on the unpadded
    elements only."""
    pads = [def_of(v, "pad") for v in op.operands]
    if len(op.results) != 1 or all(p is None for p in pads):  # (the common case: no pad at all)
        return False
    res_shape = shape_of(op.results[0])
    config = None
    inner_shape = None
    kinds = []
    for v, p in zip(op.operands, pads):
        if p is not None and has_one_use(v):
            cfg = tuple(tuple(x) for x in _pad_params(p))
            if config is None:
                config, inner_shape = cfg, shape_of(p.operands[0])
            elif cfg != config or shape_of(p.operands[0]) != inner_shape:
                return False
            kinds.append(("pad", p))
        elif shape_of(v) == () and res_shape != ():
            kinds.append(("scalar", v))
        elif _splat_key(v) is not None:
            kinds.append(("splat", v))
        else:
            return False
    if config is None:
        return False
    et = element_type_of(op.results[0])
    attrs = copy_attrs(op)
    with rewriter.ip:
        inner_ops, pad_scalars = [], []
        for kind, v in kinds:
            if kind == "pad":
                inner_ops.append(v.operands[0])
                pad_scalars.append(v.operands[1])
            elif kind == "scalar":
                inner_ops.append(v)
                pad_scalars.append(v)
            else:
                s = _scalar_source(v, op.location)  # never None for a splat operand
                inner_ops.append(B.op1("stablehlo.broadcast_in_dim", [s],
                                       ranked(inner_shape, element_type_of(v)),
                                       {"broadcast_dimensions": i64_array([])}, loc=op.location))
                pad_scalars.append(s)
        inner = B.op1(op.operation.name, inner_ops, ranked(inner_shape, et), attrs, loc=op.location)
        pv = _scalar_apply(op.operation.name, pad_scalars, et, attrs, op.location)
        lo, hi, it = config
        r = B.op1("stablehlo.pad", [inner, pv], op.results[0].type,
                  {"edge_padding_low": i64_array(lo), "edge_padding_high": i64_array(hi),
                   "interior_padding": i64_array(it)}, loc=op.location)
    return replace(rewriter, op, r)


@pattern("mul_pad_zero", FAMILY, "stablehlo.multiply", benefit=1, fast_math=True)
def mul_pad_zero(op, rewriter):
    """mul(pad(x, 0), y) -> pad(mul(x, slice y), 0): only the unpadded part is multiplied
    (fast-math: 0 * inf/nan and the sign of zero are not kept)."""
    for i in (0, 1):
        pv, y = op.operands[i], op.operands[1 - i]
        p = def_of(pv, "pad")
        if p is None or not has_one_use(pv):
            continue
        s = scalar_value(p.operands[1])
        if s is None or s != 0:
            continue
        lo, hi, it = _pad_params(p)
        if any(x < 0 for x in lo + hi):
            continue
        x = p.operands[0]
        xs = shape_of(x)
        start = list(lo)
        strides = [t + 1 for t in it]
        limit = [l + (n - 1) * st + 1 if n else l for l, n, st in zip(lo, xs, strides)]
        if 0 in xs:
            continue
        with rewriter.ip:
            ys = B.slice(y, start, limit, strides, loc=op.location)
            m = B.op1("stablehlo.multiply", [x, ys] if i == 0 else [ys, x],
                      ranked(xs, element_type_of(x)), loc=op.location)
            r = B.op1("stablehlo.pad", [m, p.operands[1]], op.results[0].type, copy_attrs(p),
                      loc=op.location)
        return replace(rewriter, op, r)
    return False


# -- dynamic_slice / dynamic_update_slice ---------------------------------------------------------------

identity_pattern("dynamic_slice_full", FAMILY, "stablehlo.dynamic_slice", benefit=3,
                 doc="dynamic_slice(x, i, sizes = shape(x)) -> x (the indices clamp to 0).")


@pattern("dynamic_slice_const_index", FAMILY, "stablehlo.dynamic_slice", benefit=2)
def dynamic_slice_const_index(op, rewriter):
    """dynamic_slice(x, constant indices) -> slice(x) at the clamped indices."""
    x = op.operands[0]
    idx = _const_indices(op.operands[1:])
    if idx is None:
        return False
    xs = shape_of(x)
    sizes = i64_list(op.attributes["slice_sizes"])
    start = [min(max(i, 0), n - m) for i, n, m in zip(idx, xs, sizes)]
    with rewriter.ip:
        r = B.slice(x, start, [s + m for s, m in zip(start, sizes)], loc=op.location)
    return replace(rewriter, op, r)


@pattern("dynamic_slice_of_iota", FAMILY, "stablehlo.dynamic_slice", benefit=2)
def dynamic_slice_of_iota(op, rewriter):
    """dynamic_slice(iota, i) -> iota + clamp(i) (just the broadcast index for a size-1
    window); the clamp is left out when i's value range is known to be in bounds."""
    io = def_of(op.operands[0], "iota")
    if io is None:
        return False
    d = int_attr_value(io.attributes["iota_dimension"])
    x = op.operands[0]
    xs = shape_of(x)
    sizes = i64_list(op.attributes["slice_sizes"])
    idx = op.operands[1 + d]
    rt = _result_type(op)
    et = rt.element_type
    if xs[d] - 1 > _iota_exact_limit(et):
        return False
    it = ir.RankedTensorType(idx.type)
    hi = xs[d] - sizes[d]
    rng = int_range(idx)
    with rewriter.ip:
        k = idx
        if rng is None or rng[0] < 0 or rng[1] > hi:
            k = B.op1("stablehlo.clamp", [B.full(0, it, loc=op.location), idx,
                                          B.full(hi, it, loc=op.location)], it, loc=op.location)
        if it.element_type != et:
            k = B.op1("stablehlo.convert", [k], ranked([], et), loc=op.location)
        r = B.op1("stablehlo.broadcast_in_dim", [k], rt, {"broadcast_dimensions": i64_array([])},
                  loc=op.location)
        if sizes[d] != 1:
            r = B.op1("stablehlo.add", [B.iota(rt, d, loc=op.location), r], rt, loc=op.location)
    return replace(rewriter, op, r)


@pattern("dynamic_slice_of_splat", FAMILY, "stablehlo.dynamic_slice", benefit=3)
def dynamic_slice_of_splat(op, rewriter):
    """dynamic_slice of a tensor filled with one value -> that value at the window's shape."""
    x = op.operands[0]
    if _splat_key(x) is None or shape_of(x) == ():
        return False
    with rewriter.ip:
        s = _scalar_source(x, op.location)
        r = B.op1("stablehlo.broadcast_in_dim", [s], _result_type(op),
                  {"broadcast_dimensions": i64_array([])}, loc=op.location)
    return replace(rewriter, op, r)


@pattern("dynamic_slice_of_broadcast", FAMILY, "stablehlo.dynamic_slice", benefit=1)
def dynamic_slice_of_broadcast(op, rewriter):
    """dynamic_slice(broadcast_in_dim(x)) -> broadcast_in_dim(dynamic_slice x) (only the dims
    x really spans are sliced; the broadcast gets smaller)."""
    b = def_of(op.operands[0], "broadcast_in_dim")
    if b is None:
        return False
    x = b.operands[0]
    dims = i64_list(b.attributes["broadcast_dimensions"])
    xs = shape_of(x)
    full = shape_of(op.operands[0])
    sizes = i64_list(op.attributes["slice_sizes"])
    idx = list(op.operands[1:])
    if tuple(sizes) == full:
        return False  # dynamic_slice_full
    with rewriter.ip:
        zero = None
        xi, xsz = [], []
        for k, d in enumerate(dims):
            if xs[k] == 1:
                if zero is None:
                    zero = B.full(0, ir.RankedTensorType(idx[0].type), loc=op.location)
                xi.append(zero)
                xsz.append(1 if xs[k] == 1 else sizes[d])
            else:
                xi.append(idx[d])
                xsz.append(sizes[d])
        if xs == ():
            xv = x
        elif tuple(xsz) == xs:
            xv = x
        else:
            xv = B.op1("stablehlo.dynamic_slice", [x] + xi, ranked(xsz, element_type_of(x)),
                       {"slice_sizes": i64_array(xsz)}, loc=op.location)
        r = B.op1("stablehlo.broadcast_in_dim", [xv], _result_type(op),
                  {"broadcast_dimensions": i64_array(dims)}, loc=op.location)
    return replace(rewriter, op, r)


@pattern("dynamic_slice_elementwise", FAMILY, "stablehlo.dynamic_slice", benefit=1)
def dynamic_slice_elementwise(op, rewriter):
    """dynamic_slice(f(a, b), i) -> f(dynamic_slice a, dynamic_slice b) for elementwise f used
    only here (same clamping: the operands have f's shape); rank-0 operands stay."""
    x = op.operands[0]
    ew = defining_op(x)
    if ew is None or ew.operation.name not in ELEMENTWISE or len(ew.results) != 1:
        return False
    if not has_one_use(x) or _zero_sized(op.results[0]):
        return False
    full = shape_of(x)
    if any(shape_of(v) not in ((), full) for v in ew.operands):
        return False
    idx = list(op.operands[1:])
    sizes = i64_list(op.attributes["slice_sizes"])
    out = shape_of(op.results[0])
    with rewriter.ip:
        new_operands = []
        for v in ew.operands:
            if shape_of(v) == () and full != ():
                new_operands.append(v)
            elif op_name(v) == "stablehlo.constant" and scalar_value(v) is not None:
                new_operands.append(B.full(scalar_value(v), ranked(out, element_type_of(v)), loc=op.location))
            else:
                new_operands.append(B.op1("stablehlo.dynamic_slice", [v] + idx, ranked(out, element_type_of(v)),
                                          {"slice_sizes": i64_array(sizes)}, loc=op.location))
        r = B.op1(ew.operation.name, new_operands, ranked(out, element_type_of(x)), copy_attrs(ew), loc=ew.location)
    return replace(rewriter, op, r)


def _shift_index(v: ir.Value, by: int, loc) -> ir.Value:
    if by == 0:
        return v
    t = ir.RankedTensorType(v.type)
    return B.op1("stablehlo.subtract", [v, B.full(by, t, loc=loc)], t, loc=loc)


@pattern("dynamic_slice_of_concat", FAMILY, "stablehlo.dynamic_slice", benefit=2)
def dynamic_slice_of_concat(op, rewriter):
    """dynamic_slice(concatenate(a, b, ...), i) -> dynamic_slice of the one operand the window
    stays in, for every value i can take (known value range)."""
    c = def_of(op.operands[0], "concatenate")
    if c is None:
        return False
    d = _concat_dim(c)
    idx = list(op.operands[1:])
    sizes = i64_list(op.attributes["slice_sizes"])
    rng = int_range(idx[d])
    if rng is None:
        return False
    off = 0
    for v in c.operands:
        n = shape_of(v)[d]
        if off <= rng[0] and rng[1] <= off + n - sizes[d]:
            with rewriter.ip:
                new_idx = list(idx)
                new_idx[d] = _shift_index(idx[d], off, op.location)
                r = B.op1("stablehlo.dynamic_slice", [v] + new_idx, _result_type(op),
                          {"slice_sizes": i64_array(sizes)}, loc=op.location)
            return replace(rewriter, op, r)
        off += n
    return False


@pattern("dynamic_slice_of_pad", FAMILY, "stablehlo.dynamic_slice", benefit=2)
def dynamic_slice_of_pad(op, rewriter):
    """dynamic_slice(pad(x), i) -> dynamic_slice(x, i - low) when every window i can select
    lies inside the unpadded region (known value ranges; no interior padding)."""
    p = def_of(op.operands[0], "pad")
    if p is None:
        return False
    lo, hi, it = _pad_params(p)
    if any(it):
        return False
    x = p.operands[0]
    xs = shape_of(x)
    idx = list(op.operands[1:])
    sizes = i64_list(op.attributes["slice_sizes"])
    for k, (n, a, b) in enumerate(zip(xs, lo, hi)):
        if a == 0 and b == 0:
            continue
        rng = int_range(idx[k])
        if rng is None or rng[0] < a or rng[1] > a + n - sizes[k]:
            return False
    with rewriter.ip:
        new_idx = [_shift_index(v, a, op.location) for v, a in zip(idx, lo)]
        r = B.op1("stablehlo.dynamic_slice", [x] + new_idx, _result_type(op),
                  {"slice_sizes": i64_array(sizes)}, loc=op.location)
    return replace(rewriter, op, r)


@pattern("dynamic_update_slice_of_own_slice", FAMILY, "stablehlo.dynamic_update_slice", benefit=3)
def dynamic_update_slice_of_own_slice(op, rewriter):
    """dynamic_update_slice(x, dynamic_slice(x, i), i) -> x (writing back what was read)."""
    x, u = op.operands[0], op.operands[1]
    d = def_of(u, "dynamic_slice")
    if d is None or d.operands[0] != x or list(d.operands[1:]) != list(op.operands[2:]):
        return False
    return replace(rewriter, op, x)


@pattern("dynamic_update_slice_full", FAMILY, "stablehlo.dynamic_update_slice", benefit=3)
def dynamic_update_slice_full(op, rewriter):
    """dynamic_update_slice(x, u, i) with u as big as x -> u (the indices clamp to 0)."""
    u = op.operands[1]
    if u.type != op.results[0].type:
        return False
    return replace(rewriter, op, u)


@pattern("dynamic_update_slice_splat_to_pad", FAMILY, "stablehlo.dynamic_update_slice", benefit=2)
def dynamic_update_slice_splat_to_pad(op, rewriter):
    """dynamic_update_slice(splat c, u, constant idx) -> pad(u, c)."""
    x, u = op.operands[0], op.operands[1]
    if _splat_key(x) is None:
        return False
    idx = _const_indices(op.operands[2:])
    if idx is None:
        return False
    xs, us = shape_of(x), shape_of(u)
    idx = [min(max(i, 0), n - m) for i, n, m in zip(idx, xs, us)]
    with rewriter.ip:
        s = _scalar_source(x, op.location)
        if s is None:
            return False
        r = B.pad(u, s, idx, [n - i - m for n, i, m in zip(xs, idx, us)], loc=op.location)
    return replace(rewriter, op, r)


@pattern("dynamic_update_slice_twice", FAMILY, "stablehlo.dynamic_update_slice", benefit=2)
def dynamic_update_slice_twice(op, rewriter):
    """dynamic_update_slice(dynamic_update_slice(x, u1, i), u2, i) -> dynamic_update_slice(x, u2, i)
    (same indices, same update shape: the second update overwrites the first)."""
    inner = def_of(op.operands[0], "dynamic_update_slice")
    if inner is None or not has_one_use(op.operands[0]):
        return False
    if inner.operands[1].type != op.operands[1].type:
        return False
    if list(inner.operands[2:]) != list(op.operands[2:]):
        return False
    with rewriter.ip:
        r = B.op1("stablehlo.dynamic_update_slice", [inner.operands[0]] + list(op.operands[1:]),
                  op.results[0].type, loc=op.location)
    return replace(rewriter, op, r)


# -- reverse -----------------------------------------------------------------------------------------

@pattern("reverse_reverse", FAMILY, "stablehlo.reverse", benefit=3)
def reverse_reverse(op, rewriter):
    """reverse(reverse(x, d1), d2) -> reverse(x, d1 xor d2) (x when they cancel)."""
    inner = def_of(op.operands[0], "reverse")
    if inner is None:
        return False
    d = set(i64_list(inner.attributes["dimensions"])) ^ set(i64_list(op.attributes["dimensions"]))
    x = inner.operands[0]
    with rewriter.ip:
        r = x if not d else B.op1("stablehlo.reverse", [x], op.results[0].type,
                                  {"dimensions": i64_array(sorted(d))}, loc=op.location)
    return replace(rewriter, op, r)


@pattern("reverse_unit_dims", FAMILY, "stablehlo.reverse", benefit=3)
def reverse_unit_dims(op, rewriter):
    """reverse over dimensions of size <= 1 does nothing: drop them (x when none is left)."""
    x = op.operands[0]
    xs = shape_of(x)
    dims = i64_list(op.attributes["dimensions"])
    keep = [d for d in dims if xs[d] > 1]
    if len(keep) == len(dims):
        return False
    with rewriter.ip:
        r = x if not keep else B.op1("stablehlo.reverse", [x], op.results[0].type,
                                     {"dimensions": i64_array(keep)}, loc=op.location)
    return replace(rewriter, op, r)


@pattern("reverse_broadcast", FAMILY, "stablehlo.reverse", benefit=2)
def reverse_broadcast(op, rewriter):
    """reverse(broadcast_in_dim(x)) -> broadcast_in_dim(reverse x) over the dims x spans
    (no reverse at all when only broadcast dims are reversed; splats included)."""
    x0 = op.operands[0]
    dims = i64_list(op.attributes["dimensions"])
    if op_name(x0) == "stablehlo.constant" and scalar_value(x0) is not None:
        return replace(rewriter, op, x0)
    b = def_of(x0, "broadcast_in_dim")
    if b is None:
        return False
    x = b.operands[0]
    bd = i64_list(b.attributes["broadcast_dimensions"])
    xs = shape_of(x)
    xr = [i for i, d in enumerate(bd) if d in dims and xs[i] > 1]
    with rewriter.ip:
        xv = x if not xr else B.op1("stablehlo.reverse", [x], x.type, {"dimensions": i64_array(xr)},
                                    loc=op.location)
        r = B.op1("stablehlo.broadcast_in_dim", [xv], op.results[0].type,
                  {"broadcast_dimensions": i64_array(bd)}, loc=op.location)
    return replace(rewriter, op, r)
