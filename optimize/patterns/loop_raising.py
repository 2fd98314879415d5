"""Family ``raising``: loops whose iterations are independent become tensor operations
("while loop raising").

A ``stablehlo.while`` whose counter ``i`` runs ``lo .. hi`` by steps of 1 (a static trip count,
``reactant.ir.loops.analyze``) is raised when every carried slot is one of

- pass-through (returned unchanged) or the counter itself;
- an array written only inside row ``i + c`` of one dimension (one or a chain of
  ``dynamic_update_slice`` ops per iteration), whose updates depend on the iteration only
  through the counter, reads of rows ``i + c'`` (or windows from there) of loop-invariant
  arrays, and reads inside the row being written (which holds the array's initial values
  plus this iteration's writes: no iteration reads what another one wrote);
- an accumulator ``acc = acc (+ - * max min) h(i)`` that nothing else in the loop reads.

The body is then vectorized over the iterations (``batching.Batcher``: one batching rule per
op), and the loop is replaced by the batched computation: one ``dynamic_update_slice`` of all
the rows at once per array, one ``reduce`` per accumulator. A body with an op that has no
batching rule, a side effect, or a read that could see another iteration's write (a real
recurrence) is left alone. Nested loops raise from the inside out: once the inner loop is a
tensor operation the outer body becomes batchable.

Memory: the vectorized body holds the temporaries of every iteration at once (a loop holds
one iteration's); a batched temporary larger than a few times the largest array the loop
touches (and over ``_SMALL`` elements) keeps the loop.

Rounding: a float sum or product accumulated in a loop becomes a ``reduce``, which XLA may
evaluate in another order (as NumPy's and XLA's own reductions do); the result then differs
from the sequential loop by rounding only. Maximum and minimum, integer and every
row-by-row result are exact.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.loops import analyze
from ...ir.opinfo import is_pure_op, reduce_identity
from ...ir.regions import block_ops, captured_values
from ...ir.types import element_type_of, np_dtype, num_elements, ranked, shape_of
from ...ir.values import defining_op
from ._registry import pattern, replace
from .batching import Batcher, Reject

FAMILY = "raising"
_SMALL = 1 << 22  # elements of a batched temporary that are always fine (32 MiB of f64)
_GROWTH = 4  # a batched temporary may be this many times the largest array the loop touches

_ACCUMULATE = {"stablehlo.add": "stablehlo.add", "stablehlo.subtract": "stablehlo.add",
               "stablehlo.multiply": "stablehlo.multiply", "stablehlo.maximum": "stablehlo.maximum",
               "stablehlo.minimum": "stablehlo.minimum"}


class _Plan:
    """What each slot of a raisable loop becomes."""

    def __init__(self, info, lo: int, n: int):
        self.info, self.lo, self.n = info, lo, n
        self.arrays: dict = {}  # slot -> (dim, offset) of the row it writes
        self.accs: dict = {}  # slot -> (combining op name, the per-iteration term)
        self.batcher: Batcher | None = None


def _array_write(info, k: int, b_offset) -> tuple | None:
    """(dim, offset) when slot ``k`` returns a chain of ``dynamic_update_slice`` ops on its
    argument whose first write is at row ``i + offset`` of ``dim`` (the batcher checks that
    every write and read stays in that row)."""
    arg, v = info.body.arguments[k], info.yields[k]
    first = None
    while v != arg:
        d = defining_op(v)
        if d is None or d.operation.name != "stablehlo.dynamic_update_slice" or d.operation.block != info.body:
            return None
        first, v = d, d.operands[0]
    if first is None:
        return None
    moving = [(e, c) for e, c in ((e, b_offset(ix)) for e, ix in enumerate(first.operands[2:])) if c is not None]
    return moving[0] if len(moving) == 1 else None


def _accumulator(info, k: int) -> tuple | None:
    """(op name, term) when slot ``k`` returns ``arg <op> term`` (``term <op> arg`` for the
    commutative ones) and nothing else reads ``arg``."""
    arg, y = info.body.arguments[k], info.yields[k]
    d = defining_op(y)
    if d is None or d.operation.block != info.body or d.operation.name not in _ACCUMULATE:
        return None
    uses = list(arg.uses)
    if len(uses) != 1 or uses[0].owner.operation != d.operation:
        return None
    a, t = d.operands
    if a != arg:
        if d.operation.name == "stablehlo.subtract":
            return None
        a, t = t, a
    if a != arg or t == arg or reduce_identity(_ACCUMULATE[d.operation.name], element_type_of(arg)) is None:
        return None
    return d.operation.name, t


def plan_raise(w) -> _Plan | None:
    """How loop ``w`` raises into tensor operations, or None when it does not."""
    info = analyze(w)
    if info is None or info.counter is None or info.steps.get(info.counter) != 1:
        return None
    rng = info.ranges.get(info.counter)
    if rng is None or info.trip_count is None or info.trip_count != rng[1] - rng[0] + 1 or info.trip_count < 1:
        return None
    lo, n = rng[0], info.trip_count
    if not all(is_pure_op(o) for o in block_ops(info.body)) or not all(is_pure_op(o) for o in block_ops(info.cond)):
        return None
    plan = _Plan(info, lo, n)
    counter_arg = info.body.arguments[info.counter]
    leaves = {info.body.arguments[k]: info.inits[k] for k in info.passthrough}
    probe = Batcher(info.body, counter_arg, lo, n, leaves, {})
    rows = {}
    for k in range(info.n):
        if k == info.counter or k in info.passthrough:
            continue
        if list(info.cond.arguments[k].uses):
            return None
        arr = _array_write(info, k, probe.offset)
        if arr is not None:
            dim, off = arr
            size = shape_of(info.inits[k])[dim]
            if lo + off < 0 or lo + off + n > size:
                return None  # the loop's writes would be clamped
            plan.arrays[k] = arr
            rows[info.body.arguments[k]] = (dim, off, info.inits[k])
            continue
        acc = _accumulator(info, k)
        if acc is None:
            return None
        plan.accs[k] = acc
    if not plan.arrays and not plan.accs:
        return None
    # The batched body holds every iteration's temporaries at once: allow a few times the
    # largest array the loop touches (its rows are as large), and anything small.
    touched = [num_elements(v) for v in list(info.inits) + captured_values(w)
               if isinstance(v.type, ir.RankedTensorType)]
    budget = max(_SMALL, _GROWTH * max(touched, default=0))
    b = Batcher(info.body, counter_arg, lo, n, leaves, rows, max_elements=budget)
    try:
        for k, arr in plan.arrays.items():
            if b.slab_of(info.yields[k]) != arr:
                return None
        for _, t in plan.accs.values():
            b.check(t)
    except Reject:
        return None
    plan.batcher = b
    return plan


def _write_rows(plan: _Plan, k: int) -> ir.Value:
    """All the rows slot ``k``'s loop writes, written at once into its initial value."""
    b = plan.batcher
    dim, off = plan.arrays[k]
    init, y = plan.info.inits[k], plan.info.yields[k]
    d = defining_op(y)
    idx = list(d.operands[2:])
    if d.operands[0] == plan.info.body.arguments[k]:
        # one write per iteration: its updates side by side, at the write's other indices
        # (the whole row would not keep a nest raisable from the inside out)
        rows, starts = b.batched(d.operands[1]), [None if e == dim else b.get(ix).value for e, ix in enumerate(idx)]
    else:  # several writes: the whole row as they leave it
        rows = b.slab(y)
        starts = [B.full(0, ranked([], element_type_of(ix))) for ix in idx]
    us = list(shape_of(rows))[1:]  # us[dim] == 1
    rows = B.reshape(rows, [plan.n, *us[:dim], *us[dim + 1:]])
    rows = B.transpose(rows, list(range(1, dim + 1)) + [0] + list(range(dim + 1, len(us))))
    starts[dim] = B.full(plan.lo + off, ranked([], element_type_of(idx[dim])))
    return B.dynamic_update_slice(init, rows, starts)


def _accumulate(plan: _Plan, k: int) -> ir.Value:
    """The initial value combined with the reduction of every iteration's term."""
    b = plan.batcher
    name, t = plan.accs[k]
    kind = _ACCUMULATE[name]
    et = element_type_of(t)
    ident = reduce_identity(kind, et)
    if kind == "stablehlo.add" and np_dtype(et).kind == "f":
        ident = -0.0  # the exact additive identity (x + -0.0 == x, -0.0 included)
    total = B.reduce(b.batched(t), B.full(ident, ranked([], et)), [0], kind)
    return B.op1(name, [plan.info.inits[k], total], plan.info.inits[k].type)


@pattern("while_raise", FAMILY, "stablehlo.while", benefit=3)
def while_raise(op, rewriter):
    """A counted loop whose iterations are independent (rows written at the counter, reads of
    invariant rows or of the row being written, accumulators) becomes its body vectorized
    over the iterations: the rows written at once, accumulators as ``reduce`` (float sums
    reassociated: rounding only). Loops with a recurrence or an op without a batching rule
    are left alone."""
    plan = plan_raise(op)
    if plan is None:
        return False
    info = plan.info
    with rewriter.ip, op.location:
        out = []
        for k in range(info.n):
            if k == info.counter:
                out.append(B.full(plan.lo + plan.n, op.results[k].type))
            elif k in info.passthrough:
                out.append(info.inits[k])
            elif k in plan.arrays:
                out.append(_write_rows(plan, k))
            else:
                out.append(_accumulate(plan, k))
    return replace(rewriter, op, out)
