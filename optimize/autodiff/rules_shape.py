"""Derivative rules: data movement (broadcast, reshape, transpose, slices, pad, concatenate,
reverse, dynamic slices). All are linear in their data operands: the tangent applies the same
op, the cotangent its transpose. Index operands are never differentiated."""

from __future__ import annotations

from . import emit as E
from .rules import or_zeros, prim, register


def _attr_list(op, name):
    return E.i64_list(op.attributes[name]) if name in op.attributes else None


# broadcast_in_dim -------------------------------------------------------------------------------

def _bid_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    return [E.broadcast_in_dim(t, E.shape(op.results[0]), _attr_list(op, "broadcast_dimensions"))]


def _unbroadcast(g, in_shape, dims):
    """Transpose of broadcast_in_dim(in_shape -> shape(g), dims)."""
    out_shape = E.shape(g)
    kept = [i for i in range(len(in_shape)) if not (in_shape[i] == 1 and out_shape[dims[i]] != 1)]
    kept_out = {dims[i] for i in kept}
    red = [d for d in range(len(out_shape)) if d not in kept_out]
    r = E.reduce_sum(g, red)
    order = sorted(kept, key=lambda i: dims[i])  # operand dims in the order they appear in r
    perm = [order.index(i) for i in kept]
    r = E.transpose(r, perm)
    return E.reshape(r, in_shape)


def _bid_rev(cx, op, cts, want):
    return [_unbroadcast(cts[0], E.shape(op.operands[0]), _attr_list(op, "broadcast_dimensions"))]


register("stablehlo.broadcast_in_dim", _bid_fwd, _bid_rev)


def _bcast_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    out = E.shape(op.results[0])
    r = E.rank(t)
    return [E.broadcast_in_dim(t, out, list(range(len(out) - r, len(out))))]


def _bcast_rev(cx, op, cts, want):
    g = cts[0]
    lead = E.rank(g) - E.rank(op.operands[0])
    return [E.reduce_sum(g, range(lead))]


register("stablehlo.broadcast", _bcast_fwd, _bcast_rev)

# reshape / transpose / reverse -------------------------------------------------------------------

register("stablehlo.reshape",
         lambda cx, op, ts: [None if ts[0] is None else E.reshape(ts[0], E.shape(op.results[0]))],
         lambda cx, op, cts, want: [E.reshape(cts[0], E.shape(op.operands[0]))])

register("stablehlo.transpose",
         lambda cx, op, ts: [None if ts[0] is None else E.transpose(ts[0], _attr_list(op, "permutation"))],
         lambda cx, op, cts, want: [E.transpose(cts[0], E.inverse_perm(_attr_list(op, "permutation")))])

register("stablehlo.reverse",
         lambda cx, op, ts: [None if ts[0] is None else E.reverse(ts[0], _attr_list(op, "dimensions"))],
         lambda cx, op, cts, want: [E.reverse(cts[0], _attr_list(op, "dimensions"))])

# slice ------------------------------------------------------------------------------------------


def _slice_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    return [E.slice_(t, _attr_list(op, "start_indices"), _attr_list(op, "limit_indices"),
                     _attr_list(op, "strides"))]


def _slice_rev(cx, op, cts, want):
    g = cts[0]
    in_shape = E.shape(op.operands[0])
    out_shape = E.shape(g)
    start = _attr_list(op, "start_indices")
    strides = _attr_list(op, "strides") or [1] * len(start)
    if any(n == 0 for n in out_shape):
        return [E.zeros(op.operands[0].type)]
    lo = start
    hi = [n - (s + (o - 1) * st + 1) for n, s, o, st in zip(in_shape, start, out_shape, strides)]
    interior = [st - 1 for st in strides]
    return [E.pad(g, E.scalar_const(0, E.etype(g)), lo, hi, interior)]


register("stablehlo.slice", _slice_fwd, _slice_rev)

# dynamic slices ---------------------------------------------------------------------------------


def _ds_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    idx = [prim(cx, op, i) for i in range(1, len(op.operands))]
    return [E.dynamic_slice(t, idx, _attr_list(op, "slice_sizes"))]


def _ds_rev(cx, op, cts, want):
    idx = [prim(cx, op, i) for i in range(1, len(op.operands))]
    z = E.zeros(op.operands[0].type)
    return [E.dynamic_update_slice(z, cts[0], idx)] + [None] * len(idx)


register("stablehlo.dynamic_slice", _ds_fwd, _ds_rev)


def _dus_fwd(cx, op, ts):
    tx, tu = ts[0], ts[1]
    if tx is None and tu is None:
        return [None]
    idx = [prim(cx, op, i) for i in range(2, len(op.operands))]
    return [E.dynamic_update_slice(or_zeros(tx, op.operands[0]), or_zeros(tu, op.operands[1]), idx)]


def _dus_rev(cx, op, cts, want):
    g = cts[0]
    idx = [prim(cx, op, i) for i in range(2, len(op.operands))]
    upd = op.operands[1]
    gx = E.dynamic_update_slice(g, E.zeros(upd.type), idx) if want[0] else None
    gu = E.dynamic_slice(g, idx, E.shape(upd)) if want[1] else None
    return [gx, gu] + [None] * len(idx)


register("stablehlo.dynamic_update_slice", _dus_fwd, _dus_rev)

# pad --------------------------------------------------------------------------------------------


def _pad_fwd(cx, op, ts):
    tx, tp = ts
    if tx is None and tp is None:
        return [None]
    return [E.pad(or_zeros(tx, op.operands[0]), or_zeros(tp, op.operands[1]), _attr_list(op, "edge_padding_low"),
                  _attr_list(op, "edge_padding_high"), _attr_list(op, "interior_padding"))]


def _pad_rev(cx, op, cts, want):
    g = cts[0]
    lo = _attr_list(op, "edge_padding_low")
    hi = _attr_list(op, "edge_padding_high")
    interior = _attr_list(op, "interior_padding")
    in_shape = E.shape(op.operands[0])
    if any(n == 0 for n in in_shape):
        gx = E.zeros(op.operands[0].type)
    else:
        # undo the edge padding (negative padding re-adds what was cut), then take every
        # (interior+1)-th element
        unpadded = E.pad(g, E.scalar_const(0, E.etype(g)), [-v for v in lo], [-v for v in hi], [0] * len(lo))
        us = E.shape(unpadded)
        gx = E.slice_(unpadded, [0] * len(us), us, [i + 1 for i in interior])
    gp = None
    if want[1]:
        total = E.reduce_sum(g, range(E.rank(g)))
        gp = E.sub(total, E.reduce_sum(gx, range(E.rank(gx))))
    return [gx if want[0] else None, gp]


register("stablehlo.pad", _pad_fwd, _pad_rev)

# concatenate ------------------------------------------------------------------------------------


def _dim(op):
    from jaxlib.mlir import ir

    return int(ir.IntegerAttr(op.attributes["dimension"]).value)


def _concat_fwd(cx, op, ts):
    if all(t is None for t in ts):
        return [None]
    return [E.concatenate([or_zeros(t, v) for t, v in zip(ts, op.operands)], _dim(op))]


def _concat_rev(cx, op, cts, want):
    g = cts[0]
    d = _dim(op)
    out = []
    off = 0
    for w, v in zip(want, op.operands):
        n = E.shape(v)[d]
        out.append(E.slice_in_dim(g, off, off + n, d) if w else None)
        off += n
    return out


register("stablehlo.concatenate", _concat_fwd, _concat_rev)
