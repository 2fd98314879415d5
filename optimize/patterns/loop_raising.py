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

import io

import numpy as np
from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.attrs import copy_attrs, i64_list, scalar_value
from ...ir.opinfo import OPS, is_pure_op, reduce_identity
from ...ir.regions import block_ops, captured_values, clone_op, regions_equivalent, terminator
from ...ir.types import element_type_of, np_dtype, num_elements, ranked, shape_of
from ...ir.values import defining_op, has_one_use
from ._registry import apply_patterns, enabled, pattern, replace
from ._util import loop_facts
from .batching import Batcher, Reject, place_rows
from .control_flow import _new_op_with_regions

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
    if _in_order(d.operation.name, et, fast):
        return None
    if kind == _ADD:
        terms = _sum_terms(y, arg, info.body)
        return None if terms is None else (kind, terms)
    a, t = d.operands
    if a != arg:
        a, t = t, a
    return (kind, [(t, 1)]) if a == arg and t != arg else None


def _in_order(name: str, et, fast: bool) -> bool:
    """Whether accumulating with the op ``name`` (an ``_ACCUMULATE`` key) over elements of type
    ``et`` must keep the loop's order: a float sum or product (its rounding depends on it),
    unless ``fast``."""
    dt = np_dtype(et)
    return not fast and _ACCUMULATE[name] not in _ORDER_FREE and (dt is None or dt.kind not in "biu")


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


def _counted(w):
    """``analyze(w)`` when ``w`` counts ``lo, lo + 1, ...`` a static number of times (at least
    once), else None."""
    info = loop_facts(w)
    if info is None or info.counter is None or info.steps.get(info.counter) != 1:
        return None
    rng = info.ranges.get(info.counter)
    if rng is None or info.trip_count is None or info.trip_count != rng[1] - rng[0] + 1 or info.trip_count < 1:
        return None
    return info


def plan_raise(w, fast: bool = False) -> _Plan | None:
    """How loop ``w`` raises into tensor operations (with ``fast``, float sums and products
    too: see the module), or None when it does not."""
    info = _counted(w)
    if info is None:
        return None
    lo, n = info.ranges[info.counter][0], info.trip_count
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


# -- blocks of rows -> rows of a reshaped array ---------------------------------------------------
def _block_of(probe: Batcher, op, n: int, shape: list, sizes: list) -> tuple | None:
    """``(dim, s, c)`` when the ``dynamic_slice``/``dynamic_update_slice`` ``op`` (extent
    ``sizes``) touches rows ``c + s t .. c + s t + s - 1`` of ``dim`` in iteration ``t``
    (``s > 1``, aligned: ``c`` and the dimension multiples of ``s``, in bounds) at the same
    other indices in every iteration, else None."""
    if max(sizes, default=0) < 2:
        return None  # (single rows: no block, whichever index moves)
    first = 1 if op.operation.name == "stablehlo.dynamic_slice" else 2
    idx = list(op.operands[first:])
    vals = [probe.index_values(ix) for ix in idx]
    if any(v is None for v in vals):
        return None
    moving = [e for e, v in enumerate(vals) if np.any(v != v[0])]
    if len(moving) != 1:
        return None
    d = moving[0]
    s, c = sizes[d], int(vals[d][0])
    if s < 2 or shape[d] % s or c % s or c < 0 or c + s * n > shape[d]:
        return None
    if not np.array_equal(vals[d].astype(np.int64), c + s * np.arange(n)):
        return None
    return d, s, c


def _block_chain(info, k: int, probe: Batcher) -> tuple | None:
    """``((dim, s), ops)`` when slot ``k`` is touched only by a chain of block writes and
    reads of the block being written, all of one ``(dim, s)`` and rows (``_block_of``)."""
    body, arg = info.body, info.body.arguments[k]
    if list(info.cond.arguments[k].uses):
        return None
    shape, ops, key, v = list(shape_of(arg)), [], None, arg
    while True:
        nxt = None
        for u in v.uses:
            o = u.owner
            name = o.operation.name
            if o.operation == terminator(body).operation:
                if u.operand_number != k:
                    return None
                continue
            if o.operation.block != body or u.operand_number != 0 or \
                    name not in ("stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice"):
                return None
            if name == "stablehlo.dynamic_update_slice":
                if nxt is not None:
                    return None  # (two writes into one value: not a chain)
                nxt = o
                sizes = list(shape_of(o.operands[1]))
            else:
                sizes = i64_list(o.attributes["slice_sizes"])
            try:
                b = _block_of(probe, o, info.trip_count, shape, sizes)
            except Reject:
                return None
            if b is None or (key is not None and b != key):
                return None
            key = b
            ops.append(o)
        if nxt is None:
            break
        v = nxt.results[0]
    if key is None or v != info.yields[k]:
        return None
    return key[:2], ops


@pattern("while_block_rows", FAMILY, "stablehlo.while", benefit=4)
def while_block_rows(op, rewriter):
    """A counted loop that writes (and reads) block ``t`` of ``s`` rows of an array in
    iteration ``t`` (``out[s*i:s*(i+1)] = f(x[s*i:s*(i+1)])``) carries the array reshaped to
    ``[.., N/s, s, ..]`` instead (a free reshape), so that each iteration writes one row of
    the new dimension: what while_raise raises. Exact (the same elements are read and
    written)."""
    info = _counted(op)
    if info is None or info.trip_count < 2:
        return False
    counter_arg = info.body.arguments[info.counter]
    leaves = {info.body.arguments[k]: info.inits[k] for k in info.passthrough}
    probe = Batcher(info.body, counter_arg, info.ranges[info.counter][0], info.trip_count, leaves, {})
    blocks = {}
    for k in range(info.n):
        if k != info.counter and k not in info.passthrough:
            got = _block_chain(info, k, probe)
            if got is not None:
                blocks[k] = got
    reads = []  # blocks read from arrays defined before the loop: rows of the reshaped array
    for o in info.body.operations:
        if o.operation.name == "stablehlo.dynamic_slice" and probe.local_op(o.operands[0]) is None \
                and o.operands[0].owner != info.body:
            try:
                b = _block_of(probe, o, info.trip_count, list(shape_of(o.operands[0])),
                              i64_list(o.attributes["slice_sizes"]))
            except Reject:
                b = None
            if b is not None:
                reads.append((o, b[:2]))
    if not blocks and not reads:
        return False

    def split(shape, d, s, outer):
        return list(shape[:d]) + [outer, s] + list(shape[d + 1:])

    inits = list(info.inits)
    with rewriter.ip, op.location:
        for k, ((d, s), _) in blocks.items():
            inits[k] = B.reshape(inits[k], split(shape_of(inits[k]), d, s, shape_of(inits[k])[d] // s))
    work = [(o, d, s, True) for o, (d, s) in reads]
    for k, ((d, s), chain) in blocks.items():
        info.body.arguments[k].set_type(inits[k].type)
        info.cond.arguments[k].set_type(inits[k].type)
        work += [(o, d, s, False) for o in chain]  # in chain order: each write's operand is already reshaped
    hoisted: dict = {}
    for o, d, s, invariant in work:
        name, loc, x = o.operation.name, o.location, o.operands[0]
        if invariant:  # an array from before the loop: reshaped there, once
            if (x, d, s) not in hoisted:
                with rewriter.ip, op.location:
                    hoisted[(x, d, s)] = B.reshape(x, split(shape_of(x), d, s, shape_of(x)[d] // s))
            x = hoisted[(x, d, s)]
        first = 1 if name == "stablehlo.dynamic_slice" else 2
        idx = list(o.operands[first:])
        with ir.InsertionPoint(o), loc:
            t = ranked([], element_type_of(idx[d]))
            starts = idx[:d] + [B.divide(idx[d], B.full(s, t)), B.full(0, t)] + idx[d + 1:]
            if name == "stablehlo.dynamic_update_slice":
                upd = o.operands[1]
                new = B.dynamic_update_slice(x, B.reshape(upd, split(shape_of(upd), d, s, 1)), starts)
            else:
                sizes = i64_list(o.attributes["slice_sizes"])
                new = B.reshape(B.dynamic_slice(x, starts, split(sizes, d, s, 1)), sizes)
        o.results[0].replace_all_uses_with(new)
        rewriter.erase_op(o)
    with rewriter.ip:
        w = _new_op_with_regions("stablehlo.while", inits, [v.type for v in inits], copy_attrs(op), op.location,
                                 [op.regions[0], op.regions[1]])
        with op.location:
            outs = [B.reshape(w.results[k], shape_of(op.results[k])) if k in blocks else w.results[k]
                    for k in range(info.n)]
    return replace(rewriter, op, outs)


# -- a concatenate of the same computation on consecutive rows -> that computation batched -------
_MAX_TREE = 256  # ops per operand


class _Iso:
    """The operands of a ``concatenate`` as one computation ``f(k)`` of the operand's index:
    every operand's ops mirror the first's (names, attributes, result types), and where they
    differ they are slices of one array at start indices affine in ``k`` (``ops``: the first
    tree's ops in an order that defines before use; ``slices``: slice op -> per-dimension
    (start, step); ``leaves``: values all operands share)."""

    def __init__(self, roots: list):
        self.n = len(roots)
        self.ops: list = []
        self.slices: dict = {}
        self.seen: dict = {}  # first tree's value -> True (op of the tree) / False (shared leaf)
        self.ok = self._match(roots)

    def _match(self, vs: list) -> bool:
        v0 = vs[0]
        if v0 in self.seen:
            return True
        if all(v == v0 for v in vs):
            self.seen[v0] = False
            return True
        ds = [defining_op(v) for v in vs]
        if any(d is None for d in ds) or len(self.ops) >= _MAX_TREE:
            return False
        d0 = ds[0].operation
        name = d0.name
        if len(d0.results) != 1 or not is_pure_op(d0) or any(
                d.operation.name != name or d.operation.results[0].type != d0.results[0].type
                or len(d.operation.operands) != len(d0.operands) for d in ds):
            return False
        if len(d0.regions) and not all(regions_equivalent(d0.regions[r], d.operation.regions[r])
                                       for d in ds[1:] for r in range(len(d0.regions))):
            return False
        if name == "stablehlo.slice":
            if any(d.operands[0] != d0.operands[0] for d in ds):
                return False
            a = d0.attributes
            if any(i64_list(d.attributes["strides"]) != i64_list(a["strides"]) for d in ds) or \
                    set(i64_list(a["strides"])) != {1}:
                return False
            starts = np.array([i64_list(d.attributes["start_indices"]) for d in ds])
            step = starts[1] - starts[0]
            if not np.array_equal(starts, starts[0] + np.outer(np.arange(self.n), step)) or not step.any():
                return False
            self.slices[d0] = [(int(a0), int(b)) for a0, b in zip(starts[0], step)]
            self.seen[v0] = True
            self.ops.append(d0)
            return True
        if any(copy_attrs(d.operation) != copy_attrs(d0) for d in ds[1:]):
            return False
        for j in range(len(d0.operands)):
            if not self._match([d.operation.operands[j] for d in ds]):
                return False
        self.seen[v0] = True
        self.ops.append(d0)
        return True


@pattern("concat_of_rows_raise", FAMILY, "stablehlo.concatenate", benefit=3)
def concat_of_rows_raise(op, rewriter):
    """``concatenate(f(x[0]), f(x[1]), ..., dim)`` (an unrolled list comprehension turned into
    an array: ``np.array([np.sum(x[i]) / np.max(x[i]) for i in range(n)])``), every operand one
    row of the result and the same computation on slices at offsets affine in the operand's
    index, becomes ``f`` batched over the rows: written as a counted loop over ``k`` and raised
    (``while_raise``); left alone when that loop does not raise. Exact (row by row the same
    ops)."""
    d = int(ir.IntegerAttr(op.attributes["dimension"]).value)
    vs = list(op.operands)
    n = len(vs)
    if n < 4 or any(shape_of(v)[d] != 1 for v in vs) or len(set(v.type for v in vs)) != 1:
        return False
    iso = _Iso(vs)
    if not iso.ok or not iso.slices:
        return False
    out_t = op.results[0].type
    i32 = ir.IntegerType.get_signless(32)
    scalar = ranked([], i32)
    with rewriter.ip, op.location:
        zero = B.full(0, scalar)
        init = B.zeros(out_t)
        w = B.create("stablehlo.while", [zero, init], [scalar, out_t], {}, regions=2)
        cond = w.regions[0].blocks.append(scalar, out_t)
        body = w.regions[1].blocks.append(scalar, out_t)
        with ir.InsertionPoint(cond):
            B.create("stablehlo.return", [B.compare(cond.arguments[0], B.full(n, scalar), "LT")], [])
        with ir.InsertionPoint(body):
            k, acc = body.arguments
            new: dict = {}
            for o in iso.ops:  # (defined before use)
                if o in iso.slices:
                    x = o.operands[0]
                    sizes = [hi - lo for lo, hi in zip(i64_list(o.attributes["start_indices"]),
                                                        i64_list(o.attributes["limit_indices"]))]
                    starts = [B.add(B.full(a, scalar), B.multiply(k, B.full(b, scalar))) if b else B.full(a, scalar)
                              for a, b in iso.slices[o]]
                    r = B.dynamic_slice(x, starts, sizes)
                else:
                    r = clone_op(o, lambda v: new.get(v, v)).results[0]
                new[o.results[0]] = r
            row = new[vs[0]]
            idx = [k if e == d else B.full(0, scalar) for e in range(len(shape_of(row)))]
            B.create("stablehlo.return", [B.add(k, B.full(1, scalar)), B.dynamic_update_slice(acc, row, idx)], [])
    plan = plan_raise(w)
    if plan is None:
        rewriter.erase_op(w)
        return False
    with ir.InsertionPoint(w), op.location:
        result = _write_rows(plan, 1)
    rewriter.erase_op(w)
    return replace(rewriter, op, result)


# -- whether a loop the tracer could unroll would raise if kept ---------------------------------
_SLOT_OPS = frozenset({"stablehlo.dynamic_update_slice", "stablehlo.while", *_ACCUMULATE})


def _slots_may_raise(w, fast: bool = False) -> bool:
    """A cheap necessary condition of raising: every slot the body changes is returned by a
    row write, an accumulating op (the counter's ``+ 1`` is one) or an inner loop (which may
    raise into row writes first), and without ``fast`` no float slot sums or multiplies onto
    itself (``s += x[n] * c``: the loop's order is part of its result, see ``_accumulator``)."""
    body = w.regions[1].blocks[0]
    yields = body.operations[-1].operands
    for arg, y in zip(body.arguments, yields):
        if y == arg:
            continue
        d = defining_op(y)
        if d is None or d.operation.block != body or d.operation.name not in _SLOT_OPS:
            return False
        if d.operation.name in _ACCUMULATE and arg in list(d.operands) \
                and _in_order(d.operation.name, element_type_of(arg), fast):
            return False
    return True


def kept_loop_raises(w, options=None):
    """Whether the loop-raising rewrite patterns (at ``options``) turn the counted loop ``w``
    into tensor operations: tried on a copy of it in a scratch module (the loop itself is
    left as it is). The tracer asks this of a loop it would unroll for being small: kept, such
    a loop becomes one batched op (a 16 x 16 nest of row products: one ``dot_general``) where
    unrolled it is a chain of per-row ops XLA compiles one by one. Returns False, or a function
    ``place(ip) -> values`` that copies the raised ops to the insertion point ``ip`` (after
    ``w``: they read what ``w`` reads) and returns the values of ``w``'s results: the tracer
    continues from those, and the passes need not raise the loop again."""
    from jaxlib.mlir.dialects import func

    from ..passes import PassOptions

    w = w.operation
    if not _slots_may_raise(w, options is not None and options.fast_math):
        return False
    outside = list(dict.fromkeys(list(w.operands) + captured_values(w)))
    # values computed from constants alone (the trip count's bound) are copied along, so that
    # the copy's trip count and offsets stay known; every other value comes in as an argument
    folded: dict = {}
    for v in outside:
        _constant_expr(v, folded)
    params = [v for v in outside if folded.get(v) is None]
    with w.context, ir.Location.unknown(w.context):
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            f = func.FuncOp("probe", ir.FunctionType.get([v.type for v in params], [r.type for r in w.results]))
            entry = f.add_entry_block()
        args = dict(zip(params, entry.arguments))

        def get(v):
            got = args.get(v)
            if got is None:  # a constant expression: its ops, copied once
                got = args[v] = clone_op(folded[v], get).results[list(folded[v].results).index(v)]
            return got

        with ir.InsertionPoint(entry):
            copy = clone_op(w, get)
            func.ReturnOp(list(copy.results))
        # (the raising patterns alone, on the loop as the tracer made it: the passes fold and
        # simplify the raised ops later. Folding first, or every pattern when a loop is left,
        # changed no answer on the kernels and tests, and cost 8-11 ms per loop that stays one)
        apply_patterns(m, enabled(options if options is not None else PassOptions(), only=_RAISING))
        if _has_loop(m):
            return False
        # (a copy: the driver's rewrites leave stale handles on ops made at erased ops' places)
        buf = io.BytesIO()
        m.operation.write_bytecode(buf)
        fresh = ir.Module.parse(buf.getvalue())

    def place(ip) -> list:  # (``fresh`` lives as long as this function)
        block = fresh.body.operations[0].regions[0].blocks[0]
        new: dict = dict(zip(block.arguments, params))

        def get(v):
            got = new.get(v)
            return got if got is not None else v

        body = list(block.operations)
        with ip, w.location:
            for o in body[:-1]:
                copy = clone_op(o, get)
                new.update(zip(o.results, copy.results))
        return [get(v) for v in body[-1].operands]

    return place


_RAISING = {"while_raise", "while_raise_fast", "while_block_rows"}


def _has_loop(m) -> bool:
    found = [False]

    def visit(o):
        if o.name == "stablehlo.while":
            found[0] = True
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    m.operation.walk(visit)
    return found[0]


def _constant_expr(v, memo: dict, depth: int = 0):
    """The op defining ``v`` when ``v`` is computed from constants alone (a few ops, no
    regions), else None."""
    if v in memo:
        return memo[v]
    d = defining_op(v)
    ok = d is not None and depth < 8 and not len(d.operation.regions) and is_pure_op(d.operation) \
        and all(_constant_expr(x, memo, depth + 1) is not None for x in d.operation.operands)
    memo[v] = d.operation if ok else None
    return memo[v]
