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

from ...ir import build as B
from ...ir.attrs import i64_list
from ...ir.attrs import copy_attrs
from ...ir.contracts import IN_BOUNDS
from ...ir.regions import terminator
from ...ir.types import element_type_of, i1, i64, like, rank_of, ranked, shape_of
from . import emit as E
from .errors import ADError
from .ir_util import sort_permutation_operand
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
    et = element_type_of(idx)
    ishape = list(shape_of(idx))
    if ivd == len(ishape):
        assert len(highs) == 1
        return B.full(highs[0], idx.type)
    vec = B.constant(np.array(highs, dtype=np.int64), ranked([len(highs)], et))
    return B.broadcast_in_dim(vec, ishape, [ivd])


def clamp_gather_indices(idx, operand_shape, dn, slice_sizes):
    highs = [operand_shape[d] - slice_sizes[d] for d in dn["start_index_map"]]
    hi = _component_bounds(idx, dn["index_vector_dim"], highs)
    return B.clamp(B.zeros(idx.type), idx, hi)


def _gather_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    return [B.op1("stablehlo.gather", [t, prim(cx, op, 1)], op.results[0].type, copy_attrs(op))]


def _gather_rev(cx, op, cts, want):
    g = cts[0]
    dn = _gdn(op)
    sizes = i64_list(op.attributes["slice_sizes"])
    x = op.operands[0]
    idx = clamp_gather_indices(prim(cx, op, 1), list(shape_of(x)), dn, sizes)
    gx = B.scatter(B.zeros(x.type), idx, g, update_window_dims=dn["offset_dims"],
                   inserted_window_dims=dn["collapsed_slice_dims"], input_batching_dims=dn["operand_batching_dims"],
                   scatter_indices_batching_dims=dn["start_indices_batching_dims"],
                   scatter_dims_to_operand_dims=dn["start_index_map"], index_vector_dim=dn["index_vector_dim"],
                   combiner="stablehlo.add")
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
    us = list(shape_of(upd))
    r = rank_of(x)
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
    return B.gather(v, idx, slice_sizes=sizes, **gdn)


def _update_scatter_dims(op, dn):
    ur = rank_of(op.operands[2])
    return [d for d in range(ur) if d not in dn["update_window_dims"]]


def _inbounds_mask(op, dn, idx):
    """Float mask shaped like the updates: 1 where the update window is inside the operand;
    None when the producer guarantees every window is (the IN_BOUNDS contract)."""
    if IN_BOUNDS in op.attributes:
        return None
    x, upd = op.operands[0], op.operands[2]
    xs = list(shape_of(x))
    sizes = _window_sizes(op, dn)
    ivd = dn["index_vector_dim"]
    highs = [xs[d] - sizes[d] for d in dn["scatter_dims_to_operand_dims"]]
    hi = _component_bounds(idx, ivd, highs)
    ok = B.and_(B.compare(idx, B.zeros(idx.type), "GE"), B.compare(idx, hi, "LE"))
    if ivd < rank_of(idx):
        ok = B.reduce(ok, B.scalar(True, i1()), [ivd], "stablehlo.and")
    m = B.select(ok, B.full(1, like(ok, elem=element_type_of(upd))), B.zeros(like(ok, elem=element_type_of(upd))))
    return B.broadcast_in_dim(m, list(shape_of(upd)), _update_scatter_dims(op, dn))


def _masked(v, mask):
    return v if mask is None else B.multiply(v, mask)


def _scatter_ids(op, dn, idx):
    """(landed-operand mask, winning-update mask) for a scatter-set, via scattered ids."""
    x, upd = op.operands[0], op.operands[2]
    us = list(shape_of(upd))
    sdims = _update_scatter_dims(op, dn)
    n = int(np.prod([us[d] for d in sdims])) if sdims else 1
    it = ranked([n], i64())
    ids = B.add(B.iota(it, 0), B.full(1, it))
    ids = B.reshape(ids, [us[d] for d in sdims])
    ids = B.broadcast_in_dim(ids, us, sdims)
    zi = B.zeros(ranked(list(shape_of(x)), i64()))
    landed = B.scatter(zi, idx, ids, combiner=None, **dn)
    back = _gather_updates(landed, idx, op, dn)
    win_mask = B.compare(back, ids, "EQ")
    kept_mask = B.compare(landed, zi, "EQ")
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
        return [B.scatter(or_zeros(tx, x), idx, or_zeros(tu, upd), combiner="stablehlo.add", **dn)]
    if _unique(op):
        # one update per place: the same scatter on the tangents (in place, O(window))
        return [B.scatter(or_zeros(tx, x), idx, or_zeros(tu, upd), combiner=None, **dn)]
    kept, win = _scatter_ids(op, dn, idx)
    out = None
    if tx is not None:
        out = B.select(kept, tx, B.zeros(x.type))
    if tu is not None:
        tu_w = B.select(win, tu, B.zeros(upd.type))
        s = B.scatter(B.zeros(x.type), idx, tu_w, combiner="stablehlo.add", **dn)
        out = s if out is None else B.add(out, s)
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
    gx = B.scatter(g, idx, B.zeros(upd.type), combiner=None, **dn) if want[0] else None
    gu = None
    if want[2]:
        if _unique(op):
            gu = _masked(_gather_updates(g, idx, op, dn), _inbounds_mask(op, dn, idx))
        else:
            _, win = _scatter_ids(op, dn, idx)  # which update landed where (duplicates, out of bounds)
            gu = B.select(win, _gather_updates(g, idx, op, dn), B.zeros(upd.type))
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
        dim += rank_of(op.operands[0])
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
    return [E.take_along(t, idx, rank_of(t) - 1), None]


def _topk_rev(cx, op, cts, want):
    g = cts[0]
    idx = res(cx, op, 1)
    return [E.scatter_add_along(op.operands[0].type, idx, g, rank_of(g) - 1)]


register("chlo.top_k", _topk_fwd, _topk_rev)
