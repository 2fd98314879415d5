"""Derivative rules: indexing (gather, scatter with set/add combiners), sorting (through the
permutation of a multi-operand sort with an iota) and chlo.top_k.

XLA semantics matter here: gather clamps its start indices into bounds, scatter drops
out-of-bounds update windows, and a scatter-set with duplicate indices keeps one update per
place. The rules reproduce exactly that (clamped indices in the gather transpose; an
in-bounds mask for scatter-add; for scatter-set, ids scattered the same way tell which
update landed where)."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from . import emit as E
from ...ir.contracts import IN_BOUNDS
from .errors import ADError
from .ir_util import copy_attrs, sort_permutation_operand, terminator
from .rules import or_zeros, prim, register, res
from .rules_reduce import body_kind

# ---------------------------------------------------------------------------------------------
# gather


def _gdn(op):
    d = hlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    return dict(offset_dims=list(d.offset_dims), collapsed_slice_dims=list(d.collapsed_slice_dims),
                operand_batching_dims=list(d.operand_batching_dims),
                start_indices_batching_dims=list(d.start_indices_batching_dims),
                start_index_map=list(d.start_index_map), index_vector_dim=int(d.index_vector_dim))


def _component_bounds(idx, ivd, highs):
    """A tensor shaped like ``idx`` holding ``highs[k]`` at index-vector component k."""
    et = E.etype(idx)
    ishape = E.shape(idx)
    if ivd == len(ishape):
        assert len(highs) == 1
        return E.full(highs[0], idx.type)
    vec = E.const_array(np.array(highs, dtype=np.int64), et)
    return E.broadcast_in_dim(vec, ishape, [ivd])


def clamp_gather_indices(idx, operand_shape, dn, slice_sizes):
    highs = [operand_shape[d] - slice_sizes[d] for d in dn["start_index_map"]]
    hi = _component_bounds(idx, dn["index_vector_dim"], highs)
    return E.clamp(E.zeros(idx.type), idx, hi)


def _gather_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    return [E.op1("stablehlo.gather", [t, prim(cx, op, 1)], op.results[0].type, copy_attrs(op))]


def _gather_rev(cx, op, cts, want):
    g = cts[0]
    dn = _gdn(op)
    sizes = E.i64_list(op.attributes["slice_sizes"])
    x = op.operands[0]
    idx = clamp_gather_indices(prim(cx, op, 1), E.shape(x), dn, sizes)
    gx = E.scatter(E.zeros(x.type), idx, g, update_window_dims=dn["offset_dims"],
                   inserted_window_dims=dn["collapsed_slice_dims"], input_batching_dims=dn["operand_batching_dims"],
                   scatter_indices_batching_dims=dn["start_indices_batching_dims"],
                   scatter_dims_to_operand_dims=dn["start_index_map"], index_vector_dim=dn["index_vector_dim"],
                   combiner="add")
    return [gx, None]


register("stablehlo.gather", _gather_fwd, _gather_rev)

# ---------------------------------------------------------------------------------------------
# scatter


def _sdn(op):
    d = hlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    return dict(update_window_dims=list(d.update_window_dims), inserted_window_dims=list(d.inserted_window_dims),
                input_batching_dims=list(d.input_batching_dims),
                scatter_indices_batching_dims=list(d.scatter_indices_batching_dims),
                scatter_dims_to_operand_dims=list(d.scattered_dims_to_operand_dims),
                index_vector_dim=int(d.index_vector_dim))


def _scatter_kind(op) -> str | None:
    blk = op.regions[0].blocks[0]
    ret = terminator(blk)
    if len(blk.arguments) == 2 and len(ret.operands) == 1 and ret.operands[0] == blk.arguments[1]:
        return "set"
    k = body_kind(op)
    return "add" if k == "add" else None


def _window_sizes(op, dn):
    """Per operand dim: the update window size (1 for inserted / batching dims)."""
    x, upd = op.operands[0], op.operands[2]
    us = E.shape(upd)
    r = E.rank(x)
    win = iter(us[d] for d in dn["update_window_dims"])
    out = []
    for d in range(r):
        if d in dn["inserted_window_dims"] or d in dn["input_batching_dims"]:
            out.append(1)
        else:
            out.append(next(win))
    return out


def _gather_updates(v, idx, op, dn, clamp=False):
    """Gather the update windows of the scatter ``op`` out of ``v`` (shaped like the operand)."""
    sizes = _window_sizes(op, dn)
    gdn = dict(offset_dims=dn["update_window_dims"], collapsed_slice_dims=dn["inserted_window_dims"],
               operand_batching_dims=dn["input_batching_dims"],
               start_indices_batching_dims=dn["scatter_indices_batching_dims"],
               start_index_map=dn["scatter_dims_to_operand_dims"], index_vector_dim=dn["index_vector_dim"])
    return E.gather(v, idx, slice_sizes=sizes, **gdn)


def _update_scatter_dims(op, dn):
    ur = E.rank(op.operands[2])
    return [d for d in range(ur) if d not in dn["update_window_dims"]]


def _inbounds_mask(op, dn, idx):
    """Float mask shaped like the updates: 1 where the update window is inside the operand;
    None when the producer guarantees every window is (the IN_BOUNDS contract)."""
    if IN_BOUNDS in op.attributes:
        return None
    x, upd = op.operands[0], op.operands[2]
    xs = E.shape(x)
    sizes = _window_sizes(op, dn)
    ivd = dn["index_vector_dim"]
    highs = [xs[d] - sizes[d] for d in dn["scatter_dims_to_operand_dims"]]
    hi = _component_bounds(idx, ivd, highs)
    ok = E.and_(E.compare(idx, E.zeros(idx.type), "GE"), E.compare(idx, hi, "LE"))
    if ivd < E.rank(idx):
        ok = E.reduce(ok, E.scalar_const(True, E.i1()), [ivd], "stablehlo.and")
    m = E.select(ok, E.full(1, E.like(ok, et=E.etype(upd))), E.zeros(E.like(ok, et=E.etype(upd))))
    return E.broadcast_in_dim(m, E.shape(upd), _update_scatter_dims(op, dn))


def _masked(v, mask):
    return v if mask is None else E.mul(v, mask)


def _scatter_ids(op, dn, idx):
    """(landed-operand mask, winning-update mask) for a scatter-set, via scattered ids."""
    x, upd = op.operands[0], op.operands[2]
    us = E.shape(upd)
    sdims = _update_scatter_dims(op, dn)
    n = int(np.prod([us[d] for d in sdims])) if sdims else 1
    it = E.tensor([n], E.i64())
    ids = E.add(E.iota(it, 0), E.full(1, it))
    ids = E.reshape(ids, [us[d] for d in sdims])
    ids = E.broadcast_in_dim(ids, us, sdims)
    zi = E.zeros(E.tensor(E.shape(x), E.i64()))
    landed = E.scatter(zi, idx, ids, combiner="set", **dn)
    back = _gather_updates(landed, idx, op, dn)
    win_mask = E.compare(back, ids, "EQ")
    kept_mask = E.compare(landed, zi, "EQ")
    return kept_mask, win_mask


def _scatter_check(op):
    if len(op.operands) != 3:
        raise ADError("no derivative rule for a variadic scatter", op)
    kind = _scatter_kind(op)
    if kind is None:
        raise ADError("no derivative rule for a scatter with this combiner (set and add are differentiable)", op)
    return kind


def _unique(op) -> bool:
    a = op.attributes
    return "unique_indices" in a and bool(ir.BoolAttr(a["unique_indices"]).value)


def _scatter_fwd(cx, op, ts):
    kind = _scatter_check(op)
    tx, _, tu = ts
    if tx is None and tu is None:
        return [None]
    dn = _sdn(op)
    idx = prim(cx, op, 1)
    x, upd = op.operands[0], op.operands[2]
    if kind == "add":
        return [E.scatter(or_zeros(tx, x), idx, or_zeros(tu, upd), combiner="add", **dn)]
    if _unique(op):
        # one update per place: the same scatter on the tangents (in place, O(window))
        return [E.scatter(or_zeros(tx, x), idx, or_zeros(tu, upd), combiner="set", **dn)]
    kept, win = _scatter_ids(op, dn, idx)
    out = None
    if tx is not None:
        out = E.select(kept, tx, E.zeros(x.type))
    if tu is not None:
        tu_w = E.select(win, tu, E.zeros(upd.type))
        s = E.scatter(E.zeros(x.type), idx, tu_w, combiner="add", **dn)
        out = s if out is None else E.add(out, s)
    return [out]


def _scatter_rev(cx, op, cts, want):
    kind = _scatter_check(op)
    g = cts[0]
    dn = _sdn(op)
    idx = prim(cx, op, 1)
    upd = op.operands[2]
    if kind == "add":
        gx = g if want[0] else None
        gu = None
        if want[2]:
            gu = _masked(_gather_updates(g, idx, op, dn), _inbounds_mask(op, dn, idx))
        return [gx, None, gu]
    # places that an update overwrote get no cotangent: scatter zeros there (O(window))
    gx = E.scatter(g, idx, E.zeros(upd.type), combiner="set", **dn) if want[0] else None
    gu = None
    if want[2]:
        if _unique(op):
            gu = _masked(_gather_updates(g, idx, op, dn), _inbounds_mask(op, dn, idx))
        else:
            _, win = _scatter_ids(op, dn, idx)  # which update landed where (duplicates, out of bounds)
            gu = E.select(win, _gather_updates(g, idx, op, dn), E.zeros(upd.type))
    return [gx, None, gu]


register("stablehlo.scatter", _scatter_fwd, _scatter_rev)

# ---------------------------------------------------------------------------------------------
# sort


def _sort_perm(cx, op):
    p = sort_permutation_operand(op)
    if p is None:
        raise ADError("internal: active sort without a permutation operand", op)
    dim = int(ir.IntegerAttr(op.attributes["dimension"]).value)
    if dim < 0:
        dim += E.rank(op.operands[0])
    return res(cx, op, p), dim, p


def _sort_fwd(cx, op, ts):
    if all(t is None for t in ts):
        return [None] * len(ts)
    perm, dim, p = _sort_perm(cx, op)
    return [None if (t is None or j == p) else E.take_along(t, perm, dim) for j, t in enumerate(ts)]


def _sort_rev(cx, op, cts, want):
    perm, dim, p = _sort_perm(cx, op)
    out = []
    for j, (w, g) in enumerate(zip(want, cts)):
        if not w or g is None or j == p:
            out.append(None)
        else:
            out.append(E.scatter_add_along(op.operands[j].type, perm, g, dim))
    return out


register("stablehlo.sort", _sort_fwd, _sort_rev)

# ---------------------------------------------------------------------------------------------
# top_k


def _topk_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None, None]
    idx = res(cx, op, 1)
    return [E.take_along(t, idx, E.rank(t) - 1), None]


def _topk_rev(cx, op, cts, want):
    g = cts[0]
    idx = res(cx, op, 1)
    return [E.scatter_add_along(op.operands[0].type, idx, g, E.rank(g) - 1)]


register("chlo.top_k", _topk_fwd, _topk_rev)
