"""Derivative rules: collectives inside manual computations (sharding constraints are with
the other identity-like ops in ``rules_elementwise``).

Reverse rules follow the varying-axes convention of :mod:`reactant.ir.manual`: the cotangent of
a value invariant over an axis is itself invariant, so the adjoint of a sum over devices is
the cotangent unchanged (a broadcast); the reverse engine sums a cotangent over the axes where
an invariant value meets a varying one. The adjoint of ``all_gather`` is a reduce-scatter, of
``reduce_scatter`` an all-gather, of a permutation the inverse permutation, of ``all_to_all``
the exchange back. Collectives outside a manual computation have no reverse rule here.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.attrs import copy_attrs
from .errors import ADError
from .rules import prim, register, res
from .rules_reduce import body_kind


def _in_manual(cx, op) -> None:
    s = cx
    while s is not None:
        if getattr(s, "manual", None) is not None:
            return
        s = getattr(s, "parent", None)
    raise ADError(f"no reverse rule for {op.name} outside a manual computation (shard_map)", op)


def _attr_int(op, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


# -- all_reduce -----------------------------------------------------------------------------------
def _ar_fwd(cx, op, ts):
    (t,) = ts
    if t is None:
        return [None]
    kind = body_kind(op)
    groups = B.collective_groups(op)
    if kind == "add":
        return [B.all_reduce(t, groups)]
    if kind in ("max", "min"):
        # the tangent of the device(s) holding the extreme (averaged over ties)
        x, y = prim(cx, op, 0), res(cx, op)
        hit = B.compare(x, y, "EQ")
        one, zero = B.full_like(t, 1.0), B.zeros_like(t)
        n = B.all_reduce(B.select(hit, one, zero), groups)
        return [B.divide(B.all_reduce(B.select(hit, t, zero), groups), n)]
    raise ADError(f"no derivative rule for an all_reduce combining with {kind}", op)


def _ar_rev(cx, op, cts, want):
    _in_manual(cx, op)
    (g,) = cts
    kind = body_kind(op)
    if kind == "add":
        return [g]
    if kind in ("max", "min"):
        x, y = prim(cx, op, 0), res(cx, op)
        return [B.select(B.compare(x, y, "EQ"), g, B.zeros_like(g))]
    raise ADError(f"no derivative rule for an all_reduce combining with {kind}", op)


register("stablehlo.all_reduce", _ar_fwd, _ar_rev)


# -- all_gather / reduce_scatter ------------------------------------------------------------------
def _ag_fwd(cx, op, ts):
    return [None if ts[0] is None else B.all_gather(ts[0], _attr_int(op, "all_gather_dim"),
                                                     B.collective_groups(op))]


def _ag_rev(cx, op, cts, want):
    _in_manual(cx, op)
    return [B.reduce_scatter(cts[0], _attr_int(op, "all_gather_dim"), B.collective_groups(op))]


register("stablehlo.all_gather", _ag_fwd, _ag_rev)


def _rs_fwd(cx, op, ts):
    if body_kind(op) != "add":
        raise ADError("no derivative rule for a reduce_scatter that does not add", op)
    return [None if ts[0] is None else B.reduce_scatter(ts[0], _attr_int(op, "scatter_dimension"),
                                                         B.collective_groups(op))]


def _rs_rev(cx, op, cts, want):
    _in_manual(cx, op)
    if body_kind(op) != "add":
        raise ADError("no derivative rule for a reduce_scatter that does not add", op)
    return [B.all_gather(cts[0], _attr_int(op, "scatter_dimension"), B.collective_groups(op))]


register("stablehlo.reduce_scatter", _rs_fwd, _rs_rev)


# -- collective_permute / all_to_all --------------------------------------------------------------
def _cp_fwd(cx, op, ts):
    return [None if ts[0] is None else B.collective_permute(ts[0], B.collective_groups(op))]


def _cp_rev(cx, op, cts, want):
    _in_manual(cx, op)
    pairs = B.collective_groups(op)
    return [B.collective_permute(cts[0], pairs[:, ::-1])]


register("stablehlo.collective_permute", _cp_fwd, _cp_rev)


def _a2a_fwd(cx, op, ts):
    return [None if ts[0] is None else B.create(op.name, [ts[0]], [op.results[0].type], copy_attrs(op)).result]


def _a2a_rev(cx, op, cts, want):
    _in_manual(cx, op)
    return [B.all_to_all(cts[0], _attr_int(op, "concat_dimension"), _attr_int(op, "split_dimension"),
                         B.collective_groups(op))]


register("stablehlo.all_to_all", _a2a_fwd, _a2a_rev)
