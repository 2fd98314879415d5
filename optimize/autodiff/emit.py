"""Helpers of the derivative rules and AD engines that are specific to differentiation:
accumulating cotangents, composite ops the rules share (conjugate, batched matmul with
transposes, triangular masks, gathers and scatters along one axis) and placeholders.

Single ops are built with ``reactant.ir.build``; every helper here builds at the ambient
``ir.InsertionPoint`` and ``ir.Location`` and returns the result value.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.attrs import i64_list, splat_value
from ...ir.types import element_type_of, i64, is_complex_type, rank_of, ranked, shape_of
from ...ir.values import defining_op


def square(a: ir.Value) -> ir.Value:
    return B.multiply(a, a)


def conj(a: ir.Value) -> ir.Value:
    """The complex conjugate (a real value is its own)."""
    if not is_complex_type(element_type_of(a)):
        return a
    return B.complex_(B.real(a), B.negate(B.imag(a)))


def matmul_t(a: ir.Value, b: ir.Value, *, ta: bool = False, tb: bool = False) -> ir.Value:
    """(Batched) a @ b over the last two dims with optional transposes; equal leading dims."""
    r = rank_of(a)
    batch = list(range(r - 2))
    lc = r - 2 if ta else r - 1
    rc = r - 1 if tb else r - 2
    return B.dot_general(a, b, batch, batch, [lc], [rc])


def swap_last2(x: ir.Value) -> ir.Value:
    r = rank_of(x)
    return B.transpose(x, list(range(r - 2)) + [r - 1, r - 2])


def tril_mask(type_: ir.Type, k: int = 0, upper: bool = False) -> ir.Value:
    """An i1 mask of the last two dims: row - col >= -k (lower) or col - row >= k (upper)."""
    s = list(shape_of(type_))
    it = ranked(s, i64())
    rows = B.iota(it, len(s) - 2)
    cols = B.iota(it, len(s) - 1)
    if upper:
        return B.compare(B.subtract(cols, rows), B.full(k, it), "GE")
    return B.compare(B.subtract(rows, cols), B.full(-k, it), "GE")


def take_along(x: ir.Value, idx: ir.Value, dim: int) -> ir.Value:
    """``x`` gathered along ``dim`` by ``idx`` (numpy take_along_axis: idx has x's rank and,
    outside ``dim``, x's sizes; the result has idx's shape)."""
    s = list(shape_of(idx))
    r = len(s)
    others = [d for d in range(r) if d != dim]
    return B.gather(x, B.reshape(idx, s + [1]), offset_dims=[], collapsed_slice_dims=[dim],
                    operand_batching_dims=others, start_indices_batching_dims=others, start_index_map=[dim],
                    index_vector_dim=r, slice_sizes=[1] * r)


def scatter_add_along(target_type: ir.Type, idx: ir.Value, upd: ir.Value, dim: int) -> ir.Value:
    """Transpose of ``take_along``: zeros(target) with ``upd`` added at ``idx`` along ``dim``."""
    s = list(shape_of(upd))
    r = len(s)
    others = [d for d in range(r) if d != dim]
    return B.scatter(B.zeros(target_type), B.reshape(idx, s + [1]), upd, update_window_dims=[],
                     inserted_window_dims=[dim], input_batching_dims=others, scatter_indices_batching_dims=others,
                     scatter_dims_to_operand_dims=[dim], index_vector_dim=r, combiner="stablehlo.add")


def placeholder(type_: ir.Type) -> ir.Value:
    """A temporary value (unregistered op) to be replaced before the pass ends."""
    return B.op1("enzyme.placeholder", [], type_)


# ---------------------------------------------------------------------------------------------
# accumulation of cotangents


def is_zero(v: ir.Value) -> bool:
    """Whether ``v`` is a constant zero (a splat constant, possibly broadcast)."""
    op = defining_op(v)
    if op is not None and op.operation.name == "stablehlo.broadcast_in_dim":
        return is_zero(op.operands[0])
    s = splat_value(v)
    return s is not None and float(s) == 0.0


def _sparse_parts(g: ir.Value):
    """If ``g`` is zeros with a window written (dynamic_update_slice / scatter-add / pad into
    zeros), a function that adds that window into another tensor in place."""
    op = defining_op(g)
    if op is None:
        return None
    op = op.operation
    name = op.name
    if name == "stablehlo.dynamic_update_slice" and is_zero(op.operands[0]):
        upd, idx = op.operands[1], list(op.operands[2:])

        def into(cur):
            window = B.dynamic_slice(cur, idx, shape_of(upd))
            return B.dynamic_update_slice(cur, B.add(window, upd), idx)

        return into
    if name == "stablehlo.scatter" and is_zero(op.operands[0]) and len(op.operands) == 3:
        ops = list(op.regions[0].blocks[0].operations)
        if len(ops) == 2 and ops[0].operation.name == "stablehlo.add":
            def into(cur):
                new = B.create("stablehlo.scatter", [cur, op.operands[1], op.operands[2]], [cur.type],
                               {k: op.attributes[k] for k in ("scatter_dimension_numbers", "indices_are_sorted",
                                                              "unique_indices") if k in op.attributes},
                               regions=1)
                B.scalar_body(new.regions[0], element_type_of(cur), "stablehlo.add")
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
            idx = [B.scalar(v, i64()) for v in lo]
            window = B.slice(cur, lo, [a + b for a, b in zip(lo, shape_of(upd))])
            return B.dynamic_update_slice(cur, B.add(window, upd), idx)

        return into
    return None


def accumulate(cur: ir.Value | None, g: ir.Value | None) -> ir.Value | None:
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
    return B.add(cur, g)
