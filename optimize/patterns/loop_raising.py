"""Family ``raising``: loops whose iterations are independent become tensor operations
("while loop raising").

A ``stablehlo.while`` whose counter ``i`` runs ``lo .. hi`` by steps of 1 (a static trip count,
``reactant.ir.loops.analyze``) is raised when every carried slot is one of

- pass-through (returned unchanged) or the counter itself;
- an array written only inside one row of one dimension per iteration, rows that differ
  between iterations (``i + c``, ``c - i``, any permutation the body computes from the
  counter: ``batching.Rows``), by one or a chain of ``dynamic_update_slice`` ops, whose
  updates depend on the iteration only through the counter, reads of rows or windows of
  loop-invariant arrays, and reads inside the row being written (which holds the array's
  initial values plus this iteration's writes: no iteration reads what another one wrote);
- an accumulator that nothing else in the loop reads: ``acc = acc ± t1 ± t2 ...`` or
  ``acc = acc (* max min) t``.

The body is then vectorized over the iterations (``batching.Batcher``: one batching rule per
op), and the loop is replaced by the batched computation: all the rows written at once per
array, a sum over the iterations per accumulator (a ``reduce``; for a sum, ``_Sum`` keeps
the terms' structure where that avoids stacking them: ``Σ x * s(i) = x * Σ s(i)``, rows
written into zeros placed side by side). A body with an op that has no batching rule, a side
effect, or a read that could see another iteration's write (a real recurrence) is left
alone. Nested loops raise from the inside out: once the inner loop is a tensor operation the
outer body becomes batchable.

Memory: the vectorized body holds the temporaries of every iteration at once (a loop holds
one iteration's); a batched temporary larger than a few times the largest array the loop
touches (and over ``_SMALL`` elements) keeps the loop.

Exactness (``optimize.exactness``): row-by-row results are exact, and so are integer and
boolean accumulators (wrapping arithmetic is associative and distributive) and maxima and
minima. A loop fixes the order of a float sum or product, a ``reduce`` does not, and the
regroupings above round differently: ``while_raise`` keeps a loop with such an accumulator,
``while_raise_fast`` (fast-math only) raises it.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.attrs import copy_attrs, scalar_value
from ...ir.loops import analyze
from ...ir.opinfo import OPS, is_pure_op, reduce_identity
from ...ir.regions import block_ops, captured_values
from ...ir.types import element_type_of, np_dtype, num_elements, ranked, shape_of
from ...ir.values import defining_op, has_one_use
from ._registry import pattern, replace
from .batching import Batcher, Reject, place_rows

FAMILY = "raising"
_SMALL = 1 << 22  # elements of a batched temporary that are always fine (32 MiB of f64)
_GROWTH = 4  # a batched temporary may be this many times the largest array the loop touches

_ADD, _SUB = "stablehlo.add", "stablehlo.subtract"
# the op an accumulator combines with -> the reduction over the iterations
_ACCUMULATE = {_ADD: _ADD, _SUB: _ADD, "stablehlo.multiply": "stablehlo.multiply",
               "stablehlo.maximum": "stablehlo.maximum", "stablehlo.minimum": "stablehlo.minimum"}
# max and min: exact in any order, floats too (NaN and signed zeros included)
_ORDER_FREE = frozenset(n for n, i in OPS.items() if i.reduce_kind in ("max", "min"))


class _Plan:
    """What each slot of a raisable loop becomes."""

    def __init__(self, info, lo: int, n: int):
        self.info, self.lo, self.n = info, lo, n
        self.arrays: dict = {}  # slot -> (dim, Rows) of the row it writes
        self.accs: dict = {}  # slot -> (reduction, [(term, sign)]): acc = acc op term (op: ± terms)
        self.batcher: Batcher | None = None


def _array_write(info, k: int, rows_of) -> tuple | None:
    """(dim, rows) when slot ``k`` returns a chain of ``dynamic_update_slice`` ops on its
    argument whose first write is at a row of ``dim`` that differs in every iteration (the
    batcher checks that every write and read stays in that row)."""
    arg, v = info.body.arguments[k], info.yields[k]
    first = None
    while v != arg:
        d = defining_op(v)
        if d is None or d.operation.name != "stablehlo.dynamic_update_slice" or d.operation.block != info.body:
            return None
        first, v = d, d.operands[0]
    if first is None:
        return None
    moving = [(e, r) for e, r in ((e, rows_of(ix)) for e, ix in enumerate(first.operands[2:])) if r is not None]
    return moving[0] if len(moving) == 1 else None


def _accumulator(info, k: int, fast: bool) -> tuple | None:
    """(reduction, [(term, sign)]) when slot ``k`` returns ``arg ± t1 ± t2 ...`` (a tree of
    adds and subtracts) or ``arg <op> term`` (``term <op> arg``: multiply, maximum, minimum),
    nothing else reads ``arg``, and raising it is exact (or ``fast``)."""
    arg, y = info.body.arguments[k], info.yields[k]
    d = defining_op(y)
    if d is None or d.operation.block != info.body or d.operation.name not in _ACCUMULATE:
        return None
    kind = _ACCUMULATE[d.operation.name]
    et = element_type_of(arg)
    if not has_one_use(arg) or reduce_identity(kind, et) is None:
        return None
    if not fast and kind not in _ORDER_FREE and np_dtype(et).kind not in "biu":
        return None  # a float sum or product: the loop's order is part of its result
    if kind == _ADD:
        terms = _sum_terms(y, arg, info.body)
        return None if terms is None else (kind, terms)
    a, t = d.operands
    if a != arg:
        a, t = t, a
    return (kind, [(t, 1)]) if a == arg and t != arg else None


def _sum_terms(y, acc, body) -> list | None:
    """``y = acc ± t1 ± t2 ...`` (adds and subtracts of the body, each used only along the
    chain): ``[(term, sign)]``, or None unless ``acc`` appears once, with a plus sign."""
    terms, signs = [], []

    def reaches(v, depth=8) -> bool:  # v is acc or an add/subtract chain down to it
        if v == acc:
            return True
        d = defining_op(v)
        return depth > 0 and d is not None and d.operation.name in (_ADD, _SUB) \
            and any(reaches(x, depth - 1) for x in d.operands)

    def walk(v, sign, root):
        d = defining_op(v)
        if v == acc:
            signs.append(sign)
        elif d is not None and d.operation.block == body and d.operation.name in (_ADD, _SUB) \
                and (root or has_one_use(v)) and reaches(v):
            a, b = d.operands
            walk(a, sign, False)
            walk(b, -sign if d.operation.name == _SUB else sign, False)
        else:
            terms.append((v, sign))

    walk(y, 1, True)
    return terms if signs == [1] else None


def _classify(plan: _Plan, probe: Batcher, fast: bool) -> dict | None:
    """Fill ``plan.arrays`` and ``plan.accs`` (the rows in ``probe``'s order); returns the
    ``rows`` a ``Batcher`` takes, or None when a slot is neither."""
    info = plan.info
    plan.arrays, plan.accs, rows = {}, {}, {}
    for k in range(info.n):
        if k == info.counter or k in info.passthrough:
            continue
        if list(info.cond.arguments[k].uses):
            return None
        arr = _array_write(info, k, probe.rows_of)
        if arr is not None:
            dim, at = arr
            if at.low < 0 or at.high >= shape_of(info.inits[k])[dim]:
                return None  # the loop's writes would be clamped
            plan.arrays[k] = arr
            rows[info.body.arguments[k]] = (dim, at, info.inits[k])
            continue
        acc = _accumulator(info, k, fast)
        if acc is None:
            return None
        plan.accs[k] = acc
    return rows


def _backwards(body, probe: Batcher) -> bool:
    """Whether most of the body's slices and updates at rows that move with the counter go
    backwards (``c - i``): the iterations are then batched in that order, so that the rows
    they read and write are ranges in order, without reversals."""
    steps = []
    for o in body.operations:
        name = o.operation.name
        if name in ("stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice"):
            first = 1 if name == "stablehlo.dynamic_slice" else 2
            steps += [r.step for r in map(probe.rows_of, list(o.operands)[first:]) if r is not None]
    return steps.count(-1) > steps.count(1)


def plan_raise(w, fast: bool = False) -> _Plan | None:
    """How loop ``w`` raises into tensor operations (with ``fast``, float sums and products
    too: see the module), or None when it does not."""
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
    reverse = _backwards(info.body, probe)
    if reverse:
        probe = Batcher(info.body, counter_arg, lo, n, leaves, {}, reverse=True)
    rows = _classify(plan, probe, fast)
    if rows is None or (not plan.arrays and not plan.accs):
        return None
    # The batched body holds every iteration's temporaries at once: allow a few times the
    # largest array the loop touches (its rows are as large), and anything small.
    touched = [num_elements(v) for v in list(info.inits) + captured_values(w)
               if isinstance(v.type, ir.RankedTensorType)]
    budget = max(_SMALL, _GROWTH * max(touched, default=0))
    b = Batcher(info.body, counter_arg, lo, n, leaves, rows, max_elements=budget, reverse=reverse)
    try:
        for k, arr in plan.arrays.items():
            if b.slab_of(info.yields[k]) != arr:
                return None
        for kind, terms in plan.accs.values():
            for t, _ in terms:
                if kind == _ADD:
                    _Sum(b).check(t)
                else:
                    b.check(t)
    except Reject:
        return None
    plan.batcher = b
    return plan


def _write_rows(plan: _Plan, k: int) -> ir.Value:
    """All the rows slot ``k``'s loop writes, written at once into its initial value."""
    b = plan.batcher
    dim, rows = plan.arrays[k]
    init, y = plan.info.inits[k], plan.info.yields[k]
    d = defining_op(y)
    idx = list(d.operands[2:])
    if d.operands[0] == plan.info.body.arguments[k]:
        # one write per iteration: its updates side by side, at the write's other indices
        # (the whole row would not keep a nest raisable from the inside out)
        upd, starts = b.batched(d.operands[1]), [ix if e == dim else b.get(ix).value for e, ix in enumerate(idx)]
    else:  # several writes: the whole row as they leave it
        upd = b.slab(y)
        starts = [B.full(0, ranked([], element_type_of(ix))) for ix in idx]
    return place_rows(init, upd, dim, rows, starts)


class _Sum:
    """Σ over the iterations of a term of a sum accumulator. Where the term's ops allow, the
    sum goes inside them instead of stacking the term's ``n`` values: ``Σ(a ± b) = Σa ± Σb``,
    ``Σ -a = -Σa``, ``Σ x * a = x * Σa`` (``x`` invariant), ``Σ`` of a broadcast or reshape is
    the broadcast or reshape of ``Σ``, and rows written into zeros at rows that differ in every
    iteration are placed side by side. The rest is a ``reduce`` over the batched term. Exact in
    integer arithmetic; for floats, regroupings of a sum (fast-math, as raising it is)."""

    def __init__(self, b: Batcher):
        self.b = b
        self.memo: dict = {}

    def _invariant(self, v) -> bool:
        try:
            return not self.b.check(v)
        except Reject:  # (not vectorizable on its own: may still be summed inside)
            return False

    def _form(self, v, depth: int) -> tuple:
        """How ``Σ v`` is built: ``(kind, operands to sum)``."""
        d = self.b.local_op(v)
        name = None if d is None or depth > 16 else d.operation.name
        if name in (_ADD, _SUB, "stablehlo.negate", "stablehlo.broadcast_in_dim", "stablehlo.reshape"):
            return "inside", list(d.operands)
        if name == "stablehlo.multiply":
            for k in (0, 1):  # the invariant factor k, the other summed
                if self._invariant(d.operands[k]):
                    return f"scale{k}", [d.operands[1 - k]]
        if name == "stablehlo.dynamic_update_slice" and scalar_value(d.operands[0]) == 0 \
                and self._invariant(d.operands[0]):
            idx = list(d.operands[2:])
            moving = [e for e, ix in enumerate(idx) if not self._invariant(ix)]
            rows = self.b.rows_of(idx[moving[0]]) if len(moving) == 1 else None
            if rows is not None and shape_of(d.operands[1])[moving[0]] == 1 \
                    and 0 <= rows.low and rows.high < shape_of(v)[moving[0]]:  # (else clamped)
                return "place", []
        return "stack", []

    def check(self, v, depth: int = 0) -> None:
        """Raises ``Reject`` unless ``Σ v`` can be built."""
        kind, parts = self._form(v, depth)
        if kind == "place":
            self.b.check(defining_op(v).operands[1])
        elif kind == "stack":
            self.b.check(v)
        for x in parts:
            self.check(x, depth + 1)

    def build(self, v, depth: int = 0) -> ir.Value:
        got = self.memo.get(v)
        if got is not None:
            return got
        b = self.b
        kind, parts = self._form(v, depth)
        d = defining_op(v)
        if kind == "inside":
            attrs = copy_attrs(d) if d.operation.name == "stablehlo.broadcast_in_dim" else None
            r = B.op1(d.operation.name, [self.build(x, depth + 1) for x in parts], v.type, attrs)
        elif kind.startswith("scale"):
            k = int(kind[-1])  # the invariant factor's position
            ops = [b.get(d.operands[k]).value, self.build(parts[0], depth + 1)]
            r = B.op1("stablehlo.multiply", ops if k == 0 else ops[::-1], v.type)
        elif kind == "place":
            idx = list(d.operands[2:])
            e = next(e for e, ix in enumerate(idx) if not self._invariant(ix))
            r = place_rows(b.get(d.operands[0]).value, b.batched(d.operands[1]), e, b.rows_of(idx[e]),
                           [ix if k == e else b.get(ix).value for k, ix in enumerate(idx)])
        else:
            et = element_type_of(v)
            zero = -0.0 if np_dtype(et).kind not in "biu" else 0  # the exact additive identity
            r = B.reduce(b.batched(v), B.full(zero, ranked([], et)), [0], _ADD)
        self.memo[v] = r
        return r


def _accumulate(plan: _Plan, k: int) -> ir.Value:
    """The initial value combined with the reduction of every iteration's terms."""
    b = plan.batcher
    kind, terms = plan.accs[k]
    init = plan.info.inits[k]
    if kind == _ADD:
        total, s = init, _Sum(b)
        for t, sign in terms:
            total = B.op1(_ADD if sign > 0 else _SUB, [total, s.build(t)], init.type)
        return total
    t = terms[0][0]
    et = element_type_of(t)
    total = B.reduce(b.batched(t), B.full(reduce_identity(kind, et), ranked([], et)), [0], kind)
    return B.op1(kind, [init, total], init.type)


def _raise(op, rewriter, fast: bool) -> bool:
    plan = plan_raise(op, fast)
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


@pattern("while_raise", FAMILY, "stablehlo.while", benefit=3)
def while_raise(op, rewriter):
    """A counted loop whose iterations are independent (rows written at distinct rows, reads
    of invariant rows or of the row being written, exact accumulators: integer, maximum,
    minimum) becomes its body vectorized over the iterations: the rows written at once,
    accumulators as ``reduce``. Loops with a float sum or product, a recurrence or an op
    without a batching rule are left alone."""
    return _raise(op, rewriter, fast=False)


@pattern("while_raise_fast", FAMILY, "stablehlo.while", benefit=3, fast_math=True)
def while_raise_fast(op, rewriter):
    """As while_raise, float sums and products accumulated in the loop included: a reduce
    (in any order) and regrouped terms (``Σ x*s(i) -> x * Σ s(i)``) in place of the loop's
    order. Fast-math."""
    return _raise(op, rewriter, fast=True)
