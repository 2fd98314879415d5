"""Derivative rules: data movement (broadcast, reshape, transpose, slices, pad, concatenate,
reverse, dynamic slices). All are linear in their data operands: the tangent applies the same
op, the cotangent its transpose. Index operands are never differentiated."""

from __future__ import annotations

from ...ir import build as B
from ...ir.attrs import i64_list
from ...ir.types import element_type_of, rank_of, shape_of
from .rules import or_zeros, prim, register


def _attr_list(op, name):
    return i64_list(op.attributes[name]) if name in op.attributes else None


# broadcast_in_dim -------------------------------------------------------------------------------

def _bid_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    return [B.broadcast_in_dim(t, list(shape_of(op.results[0])), _attr_list(op, "broadcast_dimensions"))]


def _unbroadcast(g, in_shape, dims):
    """Transpose of broadcast_in_dim(in_shape -> shape(g), dims)."""
    out_shape = list(shape_of(g))
    kept = [i for i in range(len(in_shape)) if not (in_shape[i] == 1 and out_shape[dims[i]] != 1)]
    kept_out = {dims[i] for i in kept}
    red = [d for d in range(len(out_shape)) if d not in kept_out]
    r = B.reduce_sum(g, red)
    order = sorted(kept, key=lambda i: dims[i])  # operand dims in the order they appear in r
    perm = [order.index(i) for i in kept]
    r = B.transpose(r, perm)
    return B.reshape(r, in_shape)


def _bid_rev(cx, op, cts, want):
    return [_unbroadcast(cts[0], list(shape_of(op.operands[0])), _attr_list(op, "broadcast_dimensions"))]


register("stablehlo.broadcast_in_dim", _bid_fwd, _bid_rev)


def _bcast_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    out = list(shape_of(op.results[0]))
    r = rank_of(t)
    return [B.broadcast_in_dim(t, out, list(range(len(out) - r, len(out))))]


def _bcast_rev(cx, op, cts, want):
    g = cts[0]
    lead = rank_of(g) - rank_of(op.operands[0])
    return [B.reduce_sum(g, range(lead))]


register("stablehlo.broadcast", _bcast_fwd, _bcast_rev)

# reshape / transpose / reverse -------------------------------------------------------------------

register("stablehlo.reshape",
         lambda cx, op, ts: [None if ts[0] is None else B.reshape(ts[0], list(shape_of(op.results[0])))],
         lambda cx, op, cts, want: [B.reshape(cts[0], list(shape_of(op.operands[0])))])

register("stablehlo.transpose",
         lambda cx, op, ts: [None if ts[0] is None else B.transpose(ts[0], _attr_list(op, "permutation"))],
         lambda cx, op, cts, want: [B.transpose(cts[0], B.inverse_permutation(_attr_list(op, "permutation")))])

register("stablehlo.reverse",
         lambda cx, op, ts: [None if ts[0] is None else B.reverse(ts[0], _attr_list(op, "dimensions"))],
         lambda cx, op, cts, want: [B.reverse(cts[0], _attr_list(op, "dimensions"))])

# slice ------------------------------------------------------------------------------------------


def _slice_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    return [B.slice(t, _attr_list(op, "start_indices"), _attr_list(op, "limit_indices"),
                     _attr_list(op, "strides"))]


def _slice_rev(cx, op, cts, want):
    g = cts[0]
    in_shape = list(shape_of(op.operands[0]))
    out_shape = list(shape_of(g))
    start = _attr_list(op, "start_indices")
    strides = _attr_list(op, "strides") or [1] * len(start)
    if any(n == 0 for n in out_shape):
        return [B.zeros(op.operands[0].type)]
    lo = start
    hi = [n - (s + (o - 1) * st + 1) for n, s, o, st in zip(in_shape, start, out_shape, strides)]
    interior = [st - 1 for st in strides]
    return [B.pad(g, B.scalar(0, element_type_of(g)), lo, hi, interior)]


register("stablehlo.slice", _slice_fwd, _slice_rev)

# dynamic slices ---------------------------------------------------------------------------------


def _ds_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    idx = [prim(cx, op, i) for i in range(1, len(op.operands))]
    return [B.dynamic_slice(t, idx, _attr_list(op, "slice_sizes"))]


def _ds_rev(cx, op, cts, want):
    idx = [prim(cx, op, i) for i in range(1, len(op.operands))]
    z = B.zeros(op.operands[0].type)
    return [B.dynamic_update_slice(z, cts[0], idx)] + [None] * len(idx)


register("stablehlo.dynamic_slice", _ds_fwd, _ds_rev)


def _dus_fwd(cx, op, ts):
    tx, tu = ts[0], ts[1]
    if tx is None and tu is None:
        return [None]
    idx = [prim(cx, op, i) for i in range(2, len(op.operands))]
    return [B.dynamic_update_slice(or_zeros(tx, op.operands[0]), or_zeros(tu, op.operands[1]), idx)]


def _dus_rev(cx, op, cts, want):
    g = cts[0]
    idx = [prim(cx, op, i) for i in range(2, len(op.operands))]
    upd = op.operands[1]
    gx = B.dynamic_update_slice(g, B.zeros(upd.type), idx) if want[0] else None
    gu = B.dynamic_slice(g, idx, list(shape_of(upd))) if want[1] else None
    return [gx, gu] + [None] * len(idx)


register("stablehlo.dynamic_update_slice", _dus_fwd, _dus_rev)

# pad --------------------------------------------------------------------------------------------


def _pad_fwd(cx, op, ts):
    tx, tp = ts
    if tx is None and tp is None:
        return [None]
    return [B.pad(or_zeros(tx, op.operands[0]), or_zeros(tp, op.operands[1]), _attr_list(op, "edge_padding_low"),
                  _attr_list(op, "edge_padding_high"), _attr_list(op, "interior_padding"))]


def _pad_rev(cx, op, cts, want):
    g = cts[0]
    lo = _attr_list(op, "edge_padding_low")
    hi = _attr_list(op, "edge_padding_high")
    interior = _attr_list(op, "interior_padding")
    in_shape = list(shape_of(op.operands[0]))
    if any(n == 0 for n in in_shape):
        gx = B.zeros(op.operands[0].type)
    else:
        # undo the edge padding (negative padding re-adds what was cut), then take every
        # (interior+1)-th element
        unpadded = B.pad(g, B.scalar(0, element_type_of(g)), [-v for v in lo], [-v for v in hi], [0] * len(lo))
        us = list(shape_of(unpadded))
        gx = B.slice(unpadded, [0] * len(us), us, [i + 1 for i in interior])
    gp = None
    if want[1]:
        total = B.reduce_sum(g, range(rank_of(g)))
        gp = B.subtract(total, B.reduce_sum(gx, range(rank_of(gx))))
    return [gx if want[0] else None, gp]


register("stablehlo.pad", _pad_fwd, _pad_rev)

# concatenate ------------------------------------------------------------------------------------


def _dim(op):
    from jaxlib.mlir import ir

    return int(ir.IntegerAttr(op.attributes["dimension"]).value)


def _concat_fwd(cx, op, ts):
    if all(t is None for t in ts):
        return [None]
    return [B.concatenate([or_zeros(t, v) for t, v in zip(ts, op.operands)], _dim(op))]


def _concat_rev(cx, op, cts, want):
    g = cts[0]
    d = _dim(op)
    out = []
    off = 0
    for w, v in zip(want, op.operands):
        n = list(shape_of(v))[d]
        out.append(B.slice_in_dim(g, off, off + n, d) if w else None)
        off += n
    return out


register("stablehlo.concatenate", _concat_fwd, _concat_rev)
