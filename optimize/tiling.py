"""Strip-mining of large scatters (a late pass, after automatic differentiation).

XLA's CPU backend does not fuse producers into a scatter's index or update operands: for a
scatter of N updates it first materializes the N indices and N updates computed by
elementwise ops (e.g. the negative-index wrap ``(i + n) rem n`` and ``x * w``), then scatters
them, so each producer costs a full write and re-read of N elements through memory. This pass
runs such a scatter as a ``stablehlo.while`` over chunks of about ``CHUNK`` updates: each
iteration slices the leaves, recomputes the elementwise producers for the chunk (their
results stay in cache) and scatters into the carried accumulator. Measured on the
segment-sum workload (1e6 updates into 1e4 bins): 2.95 ms → 2.43-2.60 ms (within 3-5 % of a
scatter whose indices need no computation at all).

The update order across chunks is the original order, and StableHLO leaves the order of
non-unique updates unspecified anyway, so the result is the same scatter.
"""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from ..ir import build as B
from ..ir.attrs import is_splat_constant
from ..ir.opinfo import ELEMENTWISE
from ..ir.types import ranked, shape_of
from ..ir.values import defining_op
from .passes import PassOptions, register_pass

CHUNK = 16384  # updates per iteration: indices + updates of a chunk stay in L2
MIN_UPDATES = 1 << 18  # below this the loop overhead outweighs the saved memory traffic

def _chunks(n: int) -> int | None:
    """The number of equal chunks for ``n`` updates: the divisor of ``n`` whose chunk size is
    nearest to ``CHUNK`` (at least 4096 per chunk), or None."""
    best = None
    for k in range(2, n // 4096 + 1):
        if n % k == 0:
            c = n // k
            if best is None or abs(c - CHUNK) < abs(n // best - CHUNK):
                best = k
    return best


class _Plan:
    """The producers of a scatter's indices and updates that are recomputed per chunk."""

    def __init__(self, n: int):
        self.n = n
        self.internal: list = []  # ops recomputed per chunk, in program order
        self.leaves: list[ir.Value] = []  # values sliced per chunk (leading dim n)
        self.seen: set = set()

    def visit(self, v: ir.Value) -> bool:
        key = v
        if key in self.seen:
            return True
        self.seen.add(key)
        shape = shape_of(v)
        op = defining_op(v)
        if op is not None and _row_op(op, self.n):
            if op.operation.name != "stablehlo.broadcast_in_dim":  # (its operand is invariant)
                for o in op.operands:
                    if not self.visit(o):
                        return False
            self.internal.append(op)
            return True
        if op is not None and op.operation.name == "stablehlo.constant":
            if is_splat_constant(op.results[0]) and shape and shape[0] == self.n:
                self.internal.append(op)
                return True
        if not shape or shape[0] != self.n:
            return False  # a value the chunks cannot be cut from
        self.leaves.append(v)
        return True


def _row_op(op, n: int) -> bool:
    """An op whose result rows (leading dim ``n``) depend only on the same operand rows."""
    name = op.operation.name
    res = op.results
    if len(res) != 1:
        return False
    out = shape_of(res[0])
    if not out or out[0] != n:
        return False
    if name in ELEMENTWISE:
        return all(shape_of(o) == out for o in op.operands)
    if name == "stablehlo.reshape":  # [n, a...] -> [n, b...]: rows stay rows
        src = shape_of(op.operands[0])
        return bool(src) and src[0] == n
    if name == "stablehlo.broadcast_in_dim":  # operand broadcast along the rows
        dims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
        return 0 not in dims
    return False


def _scatter_shape_ok(op) -> int | None:
    """N, the number of updates, if ``op`` is a single-input scatter whose only update
    scatter dim is the leading dim of the indices and updates; else None."""
    if len(op.operands) != 3 or len(op.results) != 1:
        return None
    dn = hlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    if list(dn.input_batching_dims) or list(dn.scatter_indices_batching_dims):
        return None
    _, idx, upd = op.operands
    ishape, ushape = shape_of(idx), shape_of(upd)
    ivd = dn.index_vector_dim
    batch_i = [d for d in range(len(ishape)) if d != ivd]
    batch_u = [d for d in range(len(ushape)) if d not in list(dn.update_window_dims)]
    if batch_i != [0] or batch_u != [0] or ishape[0] != ushape[0]:
        return None
    return ishape[0]


def _tile(op, n: int, k: int, plan: _Plan) -> None:
    c = n // k
    acc0 = op.operands[0]
    loc = op.location
    i32 = ir.IntegerType.get_signless(32)
    scalar = ranked([], i32)

    def i32_const(v: int) -> ir.Value:
        attr = ir.DenseElementsAttr.get_splat(scalar, ir.IntegerAttr.get(i32, v))
        return B.create("stablehlo.constant", [], [scalar], {"value": attr}, loc=loc).results[0]

    with ir.InsertionPoint(op), loc:
        zero = i32_const(0)
        loop = B.create("stablehlo.while", [zero, acc0], [scalar, acc0.type], {}, loc=loc, regions=2)
    cond = loop.regions[0].blocks.append(scalar, acc0.type)
    body = loop.regions[1].blocks.append(scalar, acc0.type)
    with ir.InsertionPoint(cond), loc:
        lim = i32_const(k)
        lt = B.create("stablehlo.compare", [cond.arguments[0], lim], [ranked([], ir.IntegerType.get_signless(1))],
                    {"comparison_direction": hlo.ComparisonDirectionAttr.get("LT"),
                     "compare_type": hlo.ComparisonTypeAttr.get("SIGNED")}, loc=loc).results[0]
        B.create("stablehlo.return", [lt], [], loc=loc)
    with ir.InsertionPoint(body), loc:
        it, acc = body.arguments
        off = B.create("stablehlo.multiply", [it, i32_const(c)], [scalar], loc=loc).results[0]
        zero_b = i32_const(0)
        mapping: dict = {}
        for leaf in plan.leaves:
            shape = shape_of(leaf)
            et = ir.RankedTensorType(leaf.type).element_type
            sl = B.create("stablehlo.dynamic_slice", [leaf, off] + [zero_b] * (len(shape) - 1),
                        [ranked([c] + list(shape[1:]), et)],
                        {"slice_sizes": ir.DenseI64ArrayAttr.get([c] + list(shape[1:]))}, loc=loc)
            mapping[leaf] = sl.results[0]
        ip = ir.InsertionPoint(body)
        for p in plan.internal:
            new = p.operation.clone(ip=ip)
            for j, o in enumerate(new.operands):
                if o in mapping:
                    new.operands[j] = mapping[o]
            r = new.results[0]
            t = ir.RankedTensorType(r.type)
            chunk_t = ranked([c] + list(t.shape[1:]), t.element_type)
            if p.operation.name == "stablehlo.constant":
                splat = ir.DenseElementsAttr(p.attributes["value"]).get_splat_value()
                new.attributes["value"] = ir.DenseElementsAttr.get_splat(chunk_t, splat)
            r.set_type(chunk_t)
            mapping[p.results[0]] = r
        sc = op.operation.clone(ip=ip)
        sc.operands[0] = acc
        for j in (1, 2):  # indices and updates: leaves or recomputed, always mapped
            sc.operands[j] = mapping[op.operands[j]]
        one = i32_const(1)
        nxt = B.create("stablehlo.add", [it, one], [scalar], loc=loc).results[0]
        B.create("stablehlo.return", [nxt, sc.results[0]], [], loc=loc)
    op.results[0].replace_all_uses_with(loop.results[1])
    op.operation.erase()


def _computes(plan: _Plan) -> bool:
    return any(p.operation.name not in ("stablehlo.constant", "stablehlo.reshape", "stablehlo.broadcast_in_dim")
               for p in plan.internal)


def _exclusive(plan: _Plan, scatter) -> bool:
    """Every recomputed value feeds only the scatter (a value also needed elsewhere, e.g. by
    a gradient's gather, would be computed twice: measured 1.1x slower)."""
    inside = {p.operation for p in plan.internal} | {scatter.operation}
    for p in plan.internal:
        for r in p.results:
            for use in r.uses:
                if use.owner.operation not in inside:
                    return False
    return True


@register_pass("scatter_tiling")
def scatter_tiling(module: ir.Module, options: PassOptions) -> bool:
    """Run large scatters with computed indices/updates as a loop over cache-sized chunks."""
    todo = []

    def visit(o):
        if o.name == "stablehlo.scatter":
            todo.append(o)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    changed = False
    for op in todo:
        n = _scatter_shape_ok(op)
        if n is None or n < MIN_UPDATES:
            continue
        k = _chunks(n)
        if k is None:
            continue
        idx_plan = _Plan(n)
        if not idx_plan.visit(op.operands[1]) or not _computes(idx_plan):
            # indices read straight from memory: XLA's scatter streams them as well as a
            # loop would, and chunking only the updates measured slower (1.08-1.10x)
            continue
        plan = _Plan(n)
        if not (plan.visit(op.operands[1]) and plan.visit(op.operands[2])) or not _exclusive(plan, op):
            continue
        _tile(op, n, k, plan)
        changed = True
    return changed
