"""Pass ``reroll``: roll a long run of identical straight-line blocks into one ``stablehlo.while``.

A Python loop unrolled while tracing (``loops="unroll"``, or a loop the tracer could not keep)
becomes thousands of copies of the same ops. XLA compiles each copy (10^5 ops: minutes and
gigabytes), and so does every pass before it. This pass finds, in the top-level body of each
``func.func``, a period ``p`` and a start ``s`` such that the blocks ``[s + k p, s + (k+1) p)``,
``k = 0 .. K-1``, are the same ops up to renaming: same op names, attributes and result types,
and every operand is

- a value of the same block at the same relative position (a local value),
- a value of the previous block (a carried value; block 0 reads it from before the run), or
- one and the same value for every block (an invariant: a function argument or a value
  defined well before the run).

Block 0 may differ from the others in what it reads where they read a carried value: the
initial value, defined before the run (a state that starts as ``np.zeros``, the arguments).
Constants that cannot be one per block (fewer than ``MIN_REPEATS_LARGE`` of a type with values
of their own) are first moved to the top of the body, out of the step that made them.

It replaces blocks ``0 .. R-1`` by a ``stablehlo.while`` (``R = K``, or ``K - 1`` when a value
of the last block that is not carried is used after the run: that block then stays as it is)
whose slots are an i64 counter, the carried values and the invariants (passed through). A value
of every block used after the run by a concatenation (a list appended to in the loop, then
``np.stack``-ed) is collected: the loop writes it into row ``k`` of an output it carries, and
the concatenation reads the rows back.

A run is long enough at ``MIN_REPEATS`` blocks and ``MIN_OPS`` ops, an op that XLA compiles as a
kernel of its own (a dot, a reduction) counting ``ir.opinfo.KERNEL_WEIGHT`` ops: what is saved
is XLA's compile time of the copies.

Blocks may also differ in what a loop can compute from its counter:

- a small constant (``0.1 + 1e-6 * k``): the run's values become one table constant, row
  ``k`` read with a dynamic slice;
- the value read at one place, each defined before the run (``ws[k]``, one argument per
  layer): stacked once before the loop, row ``k`` read;
- a slice's offsets, when affine in the block index (``W[k]``, ``A[i + 1, :]``): a dynamic
  slice at ``start + k * step``.

Detection is linear per candidate period: every op gets a code (name, attributes, result
types, operand count; a small constant's value and a slice's offsets are left out) and every
operand a code (its distance back in ops when that is at most ``2p``, else "far"), op ``i``
matches op ``i + p`` when all codes agree, and a run of matches of length ``L`` is
``L / p + 1`` blocks. What the codes left out is then checked per run: far operands are one
value for all blocks (an invariant) or one each, all defined before the run (stacked), and
constants and offsets as above; the run ends at the first block that breaks this. Candidate
periods are the most frequent distances between consecutive ops with equal codes, with and
without the values left out. Ops with side effects, and ops with regions other than
self-contained ones (a reduction's combiner, a comparator), never match. The block boundary
within the period is the one crossed by the fewest values. With ``REACTANT_LOG=1`` every
roll is printed.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from ..ir import build
from ..ir.regions import clone_op, walk_nested
from ..ir.attrs import read_constant
from ..ir.opinfo import compile_weight, has_effect
from ..ir.types import element_type_of, is_complex_type, num_elements, ranked, shape_of, spec_of
from .passes import PassOptions, log_pass, register_pass

MIN_REPEATS = 8  # blocks in a run ...
MIN_OPS = 512  # ... and ops in it, for a run to be rolled
MIN_REPEATS_LARGE = 3  # fewer repeats of large blocks: from MIN_OPS_LARGE ops in the run
MIN_OPS_LARGE = 4096
MAX_PERIOD = 4096  # ops per block
CANDIDATES = 6  # periods tried per function and round
MAX_ROUNDS = 16  # rolls per function
VARY_CONST_MAX = 256  # elements: a constant up to this size may differ between blocks (table)
STACK_MAX_BYTES = 1 << 28  # values read from a stack built before the loop, per roll
FAR = -(1 << 40)  # operand code of every value defined outside the two blocks before an op

# ops whose regions are a computation of their own (a reduction's combiner, a comparator):
# equal when their regions are; other ops with regions never roll
_SELF_CONTAINED = {"stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.sort", "stablehlo.scatter",
                   "stablehlo.select_and_scatter", "stablehlo.map"}


def _region_code(op) -> tuple | None:
    """The ops of ``op``'s regions as a key (names, attributes, result types, and which block
    argument or earlier result each operand is), or None when they read a value from outside."""
    ids: dict = {}
    key = []
    for region in op.regions:
        for block in region.blocks:
            for a in block.arguments:
                ids[a] = len(ids)
            key.append(tuple(a.type for a in block.arguments))
            for o in block.operations:
                o = o.operation
                if len(o.regions):
                    return None
                refs = []
                for v in o.operands:
                    n = ids.get(v)
                    if n is None:
                        return None
                    refs.append(n)
                attrs = o.attributes
                key.append((o.name, tuple((attrs[k].name, attrs[k].attr) for k in range(len(attrs))),
                            tuple(r.type for r in o.results), tuple(refs)))
                for r in o.results:
                    ids[r] = len(ids)
    return tuple(key)


class _Table:
    """Codes of a function body's top-level ops and of their operands."""

    def __init__(self, block: ir.Block, stack_args: bool = True):
        self.stack_args = stack_args
        ops = [o.operation for o in block.operations]
        if ops and ops[-1].name == "func.return":
            self.term = ops[-1]
            ops = ops[:-1]
        else:
            self.term = None
        self.ops = ops
        n = len(ops)
        self.n = n
        index = {op: i for i, op in enumerate(ops)}
        self.index = index
        if self.term is not None:
            index[self.term] = n
        interned: dict = {}
        base = np.empty(n, np.int64)
        cval = np.full(n, -1, np.int64)  # small constants: the value's identity (base omits it)
        values: dict = {}
        starts: dict = {}  # slice ops: start indices
        wild = []  # (op, full identity) of ops whose code leaves a value out
        owner, dj, res, argn, nested = [], [], [], [], []
        opstart = np.zeros(n + 1, np.int64)
        uniq = -1
        for i, op in enumerate(ops):
            opstart[i] = len(owner)
            name = op.name
            region = _region_code(op) if name in _SELF_CONTAINED else None
            # never rolled: side effects (the op table's; collectives included) or meaning tied
            # to their position (ops of other dialects)
            if (len(op.regions) and region is None) or has_effect(name) \
                    or not (name.startswith("stablehlo.") or name.startswith("chlo.")):
                base[i] = uniq
                uniq -= 1
                if len(op.regions):
                    nested.append(op)
            elif region is not None:
                attrs = op.attributes
                key = (name, tuple((attrs[k].name, attrs[k].attr) for k in range(len(attrs))),
                       tuple(r.type for r in op.results), len(op.operands), region)
                base[i] = interned.setdefault(key, len(interned))
            else:
                if name == "stablehlo.constant" and is_complex_type(element_type_of(op.results[0])):
                    # reading a complex constant's value aborts (ir/attrs.py): compare its text
                    key = (name, op.get_asm(enable_debug_info=False).split(" = ", 1)[-1])
                else:
                    attrs = op.attributes
                    ident = tuple((attrs[k].name, attrs[k].attr) for k in range(len(attrs)))
                    types = tuple(r.type for r in op.results)
                    if name == "stablehlo.slice":
                        # blocks may slice at offsets affine in the block index (W[k]): the
                        # start is left out of the code and checked per run
                        st = np.asarray(attrs["start_indices"], np.int64)
                        lim = np.asarray(attrs["limit_indices"], np.int64)
                        starts[i] = st
                        wild.append((i, ident))
                        key = (name, tuple(lim - st), tuple(attrs["strides"]), types)
                    elif name == "stablehlo.constant" and num_elements(types[0]) <= VARY_CONST_MAX:
                        # blocks may differ in a small constant (0.1 + 0.001 * k): read per block
                        cval[i] = values.setdefault(ident, len(values))
                        wild.append((i, ident))
                        key = (name, types)
                    else:
                        key = (name, ident, types, len(op.operands))
                base[i] = interned.setdefault(key, len(interned))
            for v in op.operands:
                j, r, a = self._ref(v, block)
                owner.append(i)
                dj.append(j)
                res.append(r)
                argn.append(a)
        opstart[n] = len(owner)
        weight = np.array([compile_weight(op.name) for op in ops], np.int64)
        self.wcum = np.concatenate([[0], np.cumsum(weight)])  # op weights toward MIN_OPS, summed
        self.base = base
        self.cval = cval
        # codes with every value in: periods of exactly equal blocks are candidates too (a
        # sweep repeated whole, whose inner steps differ in their offsets)
        exact = base.copy()
        if wild:
            ids: dict = {}
            for i, ident in wild:
                exact[i] = len(interned) + ids.setdefault((int(base[i]), ident), len(ids))
        self.exact = exact
        self.starts = starts
        self.opstart = opstart
        self.owner = np.asarray(owner, np.int64)
        self.dj = np.asarray(dj, np.int64)  # defining top-level op, -1: not one
        self.res = np.asarray(res, np.int64)  # result number
        self.argn = np.asarray(argn, np.int64)  # function argument number, -1: not one
        # uses after the ops: the terminator's operands and values captured by nested regions
        extra = []
        if self.term is not None:
            extra += [(n, v) for v in self.term.operands]
        for op in nested:
            i = index[op]
            seen = []
            walk_nested(op, lambda o, i=i: seen.extend((i, v) for v in o.operands))
            extra += seen
        eo, ej, er = [], [], []
        for i, v in extra:
            j, r, _ = self._ref(v, block)
            if j >= 0:
                eo.append(i)
                ej.append(j)
                er.append(r)
        self.x_owner = np.asarray(eo, np.int64)
        self.x_dj = np.asarray(ej, np.int64)
        self.x_res = np.asarray(er, np.int64)

    def _ref(self, v, block):
        owner = v.owner
        if isinstance(owner, ir.Block):
            if owner == block:
                return -1, 0, ir.BlockArgument(v).arg_number
            return -1, 0, -2  # a nested block's argument (ops with regions only)
        j = self.index.get(owner.operation)
        if j is None:
            return -1, 0, -2
        return j, ir.OpResult(v).result_number, -1

    def operand(self, x: int) -> ir.Value:
        o = int(self.owner[x])
        return self.ops[o].operands[x - int(self.opstart[o])]

    def codes(self, p: int) -> np.ndarray:
        """Operand codes for period ``p``: distance when within 2p, else ``FAR`` (whether blocks
        read one value there or one each is decided per run, ``_check``)."""
        d = self.owner - self.dj
        local = (self.dj >= 0) & (d <= 2 * p)
        r = self.res.max(initial=0) + 1
        return np.where(local, d * r + self.res, np.where((self.dj < 0) & (self.argn < -1), FAR - 1, FAR))

    def matches(self, p: int, codes: np.ndarray) -> np.ndarray:
        """``m[i]``: op i and op i + p have the same codes (i < n - p)."""
        n = self.n
        base = self.base
        m = (base[:-p] == base[p:]) & (base[:-p] >= 0)
        if not len(self.owner):
            return m
        o = self.owner
        ok = o < n - p
        t = np.nonzero(ok)[0]
        o = o[t]
        partner = self.opstart[o + p] + (t - self.opstart[o])
        valid = m[o]  # same base => same operand count
        partner = np.where(valid, partner, t)
        bad = codes[t] != codes[partner]
        m = m.copy()
        m[o[bad]] = False
        return m


def _runs(m: np.ndarray, min_len: int):
    """(start, length) of the runs of True in ``m`` at least ``min_len`` long."""
    if not m.any():
        return []
    x = np.concatenate([[0], m.view(np.int8), [0]])
    dx = np.diff(x)
    starts = np.nonzero(dx == 1)[0]
    ends = np.nonzero(dx == -1)[0]
    return [(int(a), int(b - a)) for a, b in zip(starts, ends) if b - a >= min_len]


def _candidates(t: _Table) -> list[int]:
    top = _periods(t.exact) if t.exact is not t.base else []
    return top + [p for p in _periods(t.base) if p not in top]


def _periods(base: np.ndarray) -> list[int]:
    idx = np.arange(len(base))
    keep = base >= 0
    b, i = base[keep], idx[keep]
    order = np.lexsort((i, b))
    b, i = b[order], i[order]
    same = b[1:] == b[:-1]
    d = (i[1:] - i[:-1])[same]
    g = b[1:][same]
    keep = d <= MAX_PERIOD
    d, g = d[keep], g[keep]
    if not len(d):
        return []
    # (1) the most frequent distances between consecutive ops of equal codes
    counts = np.bincount(d)
    top = [int(p) for p in np.argsort(-counts, kind="stable")[:CANDIDATES]
           if p > 0 and counts[p] >= MIN_REPEATS_LARGE - 1]
    # (2) one vote per op code for its most frequent distance (a code that occurs once per
    # block of a long period votes for it, however often short-range codes repeat)
    key = g * (MAX_PERIOD + 1) + d
    uk, uc = np.unique(key, return_counts=True)
    ug, ud = uk // (MAX_PERIOD + 1), uk % (MAX_PERIOD + 1)
    order = np.lexsort((-uc, ug))
    ug, ud, uc = ug[order], ud[order], uc[order]
    first = np.concatenate([[True], ug[1:] != ug[:-1]])
    modes = ud[first & (uc >= MIN_REPEATS_LARGE - 1)]
    if len(modes):
        votes = np.bincount(modes)
        for p in np.argsort(-votes, kind="stable")[:CANDIDATES]:
            if p > 0 and votes[p] > 0 and int(p) not in top:
                top.append(int(p))
    return top


def _enough(t: _Table, k: int, p: int, a: int) -> bool:
    """Is a run of ``k`` blocks of ``p`` ops, a block starting at op ``a``, worth a loop?"""
    w = int(t.wcum[a + p] - t.wcum[a])  # every block of a run weighs the same
    return (k >= MIN_REPEATS and k * w >= MIN_OPS) or (k >= MIN_REPEATS_LARGE and k * p >= MIN_OPS_LARGE)


class _Plan:
    def __init__(self, s, p, k, rolled, carries, invariants, stacked, tables, slices, collected=(), inits=None):
        self.s, self.p, self.k, self.rolled = s, p, k, rolled
        self.inits = inits  # {carry: the value block 0 reads for it}; None: block -1's (the same place)
        self.collected = list(collected)  # [(relative position, result number)]: a row per block
        self.carries = carries  # [(relative position, result number)]
        self.invariants = invariants  # [slot index of block 1 holding the value]
        self.stacked = stacked  # {slot index of block 1: [the value each block reads there]}
        self.tables = tables  # {op index in block 1: [each block's constant, NumPy]}
        self.slices = slices  # {op index in block 1: (block 0's start indices, step per block)}


def _crossings(t: _Table, lo: int, hi: int) -> np.ndarray:
    """``cross[b - lo]``: the values defined in [lo, b) used in [b, hi), for b in [lo, hi)."""
    sel = (t.owner >= lo) & (t.owner < hi) & (t.dj >= lo)
    j, u = t.dj[sel], t.owner[sel]
    last = np.full(hi - lo, -1, np.int64)
    np.maximum.at(last, j - lo, u - lo)
    has = last >= 0
    jj = np.nonzero(has)[0]
    diff = np.zeros(hi - lo + 2, np.int64)
    np.add.at(diff, jj + 1, 1)
    np.add.at(diff, last[has] + 1, -1)
    return np.cumsum(diff)[: hi - lo]


def _phase(t: _Table, a: int, end: int, p: int) -> int:
    """The block start in [a, a + p) that the fewest values cross."""
    window = _crossings(t, a, end)[p: 2 * p]
    return a + int(np.argmin(window))


def _first_block_start(t: _Table, a: int, end: int, p: int) -> int | None:
    """For a run matched from op ``a`` on: the start, in [a - p, a), of a block of the same ops
    as the next one (a step that differs from the run in what it reads, not in its ops) that
    the fewest values cross, or None."""
    lo = max(a - p, 0)
    if lo >= a:
        return None
    same = (t.base[lo:a + p] == t.base[lo + p:a + 2 * p]) & (t.base[lo:a + p] >= 0)
    bad = np.concatenate([[0], np.cumsum(~same)])
    starts = np.arange(a - lo)
    ok = starts[bad[starts + p] == bad[starts]]
    if not len(ok):
        return None
    cross = _crossings(t, lo, end)
    return lo + int(ok[np.argmin(cross[ok])])


def _plan(t: _Table, p: int) -> _Plan | None:
    best = None
    codes = t.codes(p)
    for a, L in _runs(t.matches(p, codes), (MIN_REPEATS_LARGE - 1) * p):
        end = a + L + p  # ops [a, end) are periodic
        if L < 2 * p or not _enough(t, (L + p) // p - 1, p, a):
            continue
        s = _phase(t, a, end, p)
        k = (end - s) // p
        plan = _check(t, s, p, k, codes)
        # the step before the run may differ from it only in what it reads for the carried
        # values (the first step of a state that starts as a constant): the loop's block 0
        b = _first_block_start(t, a, end, p)
        if b is not None:
            wider = _check(t, b, p, (end - b) // p, codes, first_block=True)
            if wider is not None and (plan is None or wider.rolled > plan.rolled):
                plan = wider
        if plan is not None and (best is None or plan.rolled > best.rolled):
            best = plan
    return best


def _first_block_inits(t: _Table, s: int, p: int, codes: np.ndarray) -> dict | None:
    """Block 0 = ops [s, s + p), the same ops as block 1 (``_first_block_start``; the run found
    from block 1 on), checked slot by slot: every operand read as block 1 reads it (``codes``),
    except where block 1 reads a value of block 0 (a carry): there block 0 reads a value defined
    before it, the carry's initial value (one per carry). Returns {carry: initial value}, or
    None when block 0 is not such a block."""
    # (same ops, so op i + p's operand slots are op i's shifted by one constant)
    slots = np.arange(int(t.opstart[s]), int(t.opstart[s + p]))
    partner = slots + (int(t.opstart[s + p]) - int(t.opstart[s]))
    j1 = t.dj[partner]
    reads_carry = (j1 >= s) & (j1 < s + p)
    if np.any((codes[slots] != codes[partner]) & ~reads_carry):
        return None
    inits: dict = {}
    for a, b in zip(slots[reads_carry].tolist(), partner[reads_carry].tolist()):
        c = (int(t.dj[b]) - s, int(t.res[b]))
        if not (int(t.dj[a]) < s and (t.dj[a] >= 0 or t.argn[a] >= 0)):
            return None
        v = t.operand(a)
        if inits.setdefault(c, v) != v:
            return None
    return inits


def _nbytes(ty: ir.Type) -> int:
    try:
        return num_elements(ty) * spec_of(ty)[1].itemsize
    except TypeError:
        return num_elements(ty) * 8


def _same_place(p: int, k: int, ops1: np.ndarray) -> np.ndarray:
    """The ops of blocks 0..k-1 at the places of block 1's ops ``ops1``: shape (k, len(ops1))."""
    return ops1[None, :] + np.arange(-1, k - 1, dtype=np.int64)[:, None] * p


def _per_block(t: _Table, p: int, k: int, x: np.ndarray) -> np.ndarray:
    """Operand slots of blocks 0..k-1 that correspond to block 1's slots ``x``: shape (k, len(x))."""
    o = t.owner[x]
    return t.opstart[_same_place(p, k, o)] + (x - t.opstart[o])[None, :]


def _check(t: _Table, s: int, p: int, k: int, codes: np.ndarray, first_block: bool = False) -> _Plan | None:
    """The plan for blocks [s + b p, s + (b+1) p), b < k, that the matching found alike from
    block 0 on (``first_block``: from block 1 on, block 0 checked here), or None."""
    if k < 2 or not _enough(t, k - 1, p, s):
        return None
    o, j = t.owner, t.dj
    # block 1 (the template): operands local, from block 0, or defined before the run
    b1 = (o >= s + p) & (o < s + 2 * p)
    near = b1 & (j >= 0) & (o - j <= 2 * p)
    if np.any(near & (j < s)):
        return None
    slots1 = np.nonzero(b1)[0]
    carries = sorted({(int(j[x] - s), int(t.res[x])) for x in slots1 if s <= j[x] < s + p})
    inits = None
    if first_block:
        inits = _first_block_inits(t, s, p, codes)
        if inits is None:
            return None
    far1 = slots1[~near[slots1]]
    if np.any((j[far1] < 0) & (t.argn[far1] < 0)):
        return None
    # slices at offsets affine in the block index: a dynamic slice at start0 + counter * delta
    slices: dict = {}
    for i in range(s + p, s + 2 * p):
        st1 = t.starts.get(i)
        if st1 is None:
            continue
        rows = np.stack([t.starts[int(b)] for b in _same_place(p, k, np.array([i]))[:, 0]])
        delta = rows[1] - rows[0]
        bad = np.nonzero((rows != rows[0] + np.arange(k)[:, None] * delta).any(axis=1))[0]
        if len(bad):
            k = int(bad[0])
            if k < 2 or not _enough(t, k - 1, p, s):
                return None
        if delta.any():
            slices[i] = (rows[0], delta)
    # far operands: one value for every block (invariant) or one each (stacked before the loop);
    # a block reading a far value defined inside the run ends the run there
    stacked: dict = {}
    if len(far1):
        xs = _per_block(t, p, k, far1)
        r = int(t.res.max(initial=0)) + 1
        ident = np.where(j[xs] >= 0, j[xs] * r + t.res[xs], -1 - t.argn[xs])  # the value read
        inside = j[xs] >= s
        if inside.any():
            k = int(np.nonzero(inside.any(axis=1))[0][0])
            if k < 2 or not _enough(t, k - 1, p, s):
                return None
            xs, ident = xs[:k], ident[:k]
        vary = np.nonzero((ident != ident[1:2]).any(axis=0))[0]
        if not t.stack_args and len(vary) and (j[xs[:, vary]] < 0).any():
            return None
        nbytes = 0
        for c in vary:
            vals = [t.operand(int(x)) for x in xs[:, c]]
            ty = vals[0].type
            if any(v.type != ty for v in vals):
                return None
            nbytes += k * _nbytes(ty)
            stacked[int(far1[c])] = vals
        if nbytes > STACK_MAX_BYTES:
            return None
    inv = {}
    for x in far1:
        if int(x) not in stacked:
            inv.setdefault((int(j[x]), int(t.res[x]), int(t.argn[x])), int(x))
    # small constants that differ between blocks: a table indexed by the loop counter
    tables: dict = {}
    c1 = np.arange(s + p, s + 2 * p)
    c1 = c1[t.cval[c1] >= 0]
    if len(c1):
        blocks = _same_place(p, k, c1)
        cv = t.cval[blocks]
        for c in np.nonzero((cv != cv[1:2]).any(axis=0))[0]:
            arrs = [read_constant(t.ops[int(i)].results[0], VARY_CONST_MAX) for i in blocks[:, c]]
            if any(a is None for a in arrs):
                return None
            tables[int(c1[c])] = arrs
    e = s + k * p
    # uses after the run: of the last block only
    after = (o >= e) & (j >= s) & (j < e)
    xa = (t.x_owner >= e) & (t.x_dj >= s) & (t.x_dj < e)
    xa_before = (t.x_owner < e) & (t.x_dj >= s) & (t.x_dj < e)  # region ops inside the run: none
    if np.any(xa_before):
        return None
    dj_after = np.concatenate([j[after], t.x_dj[xa]])
    res_after = np.concatenate([t.res[after], t.x_res[xa]])
    last = s + (k - 1) * p
    # values of earlier blocks used after the run (a list appended to, then stacked): the loop
    # writes each into row k of an output it carries, read back after the loop
    collected = sorted({(int((a - s) % p), int(r)) for a, r in zip(dj_after, res_after) if a < last})
    if collected:
        # ... only into a concatenation (np.stack / np.concatenate of the list), which then reads
        # the output whole; each row used on its own would cost XLA a copy kernel per row (150
        # per-layer gradients returned: first call 0.4 -> 2.1 s)
        if np.any(t.x_dj[xa] < last) or not all(_stacks(t.ops[int(u)]) for u in o[after][j[after] < last]):
            return None
        nbytes = sum(k * _nbytes(t.ops[s + q].results[r].type) for q, r in collected)
        if nbytes > STACK_MAX_BYTES:
            return None
    escapes = {(int(a - last), int(r)) for a, r in zip(dj_after, res_after) if a >= last}
    rolled = k if escapes <= set(carries) | set(collected) else k - 1
    if not _enough(t, rolled, p, s):
        return None
    return _Plan(s, p, k, rolled, carries, list(inv.values()), stacked, tables, slices, collected, inits)


def _stacks(op) -> bool:
    """``op`` puts its operand into a concatenation: it is one, or a reshape only they read."""
    if op.name == "stablehlo.concatenate":
        return True
    return op.name == "stablehlo.reshape" and all(u.owner.operation.name == "stablehlo.concatenate"
                                                  for u in op.results[0].uses)


def _roll(t: _Table, plan: _Plan, fn_name: str) -> None:
    s, p, R = plan.s, plan.p, plan.rolled
    ops = t.ops
    first = ops[s]
    loc = first.location
    i64 = ir.IntegerType.get_signless(64)
    ctr_t = ranked([], i64)

    def value(i, r):
        return ops[i].results[r]

    inits = [value(s - p + q, r) if plan.inits is None else plan.inits[(q, r)] for q, r in plan.carries]
    invs = [t.operand(x) for x in plan.invariants]
    ip = ir.InsertionPoint(first)
    with loc:
        # values that differ per block: stacked once before the loop (equal columns shared)
        stacks: dict = {}
        stack_of: dict = {}
        for x, vals in plan.stacked.items():
            key = tuple(vals[:R])
            if key not in stacks:
                shp = list(shape_of(vals[0]))
                rows = [build.reshape(v, [1] + shp, ip=ip) for v in key]
                stacks[key] = build.concatenate(rows, 0, ip=ip)
            stack_of[x] = stacks[key]
        stack_vals = list(stacks.values())
        zero = build.full(0, ctr_t, ip=ip)
        outs = []  # the collected values' rows, zeros to start
        for q, r in plan.collected:
            ty = value(s + q, r).type
            outs.append(build.full(0, ranked([R] + list(shape_of(ty)), element_type_of(ty)), ip=ip))
        operands = [zero] + inits + invs + stack_vals + outs
        types = [v.type for v in operands]
        w = build.create("stablehlo.while", operands, types, regions=2, ip=ip)
        cond = w.regions[0].blocks.append(*types)
        with ir.InsertionPoint(cond):
            bound = build.full(R, ctr_t)
            build.create("stablehlo.return", [build.compare(cond.arguments[0], bound, "LT")], [])
        body = w.regions[1].blocks.append(*types)
        args = list(body.arguments)
        ctr = args[0]
        carry_arg = {c: args[1 + n] for n, c in enumerate(plan.carries)}
        inv_arg = {v: args[1 + len(inits) + n] for n, v in enumerate(invs)}
        nfix = 1 + len(inits) + len(invs)
        stack_arg = {id(v): args[nfix + n] for n, v in enumerate(stack_vals)}
        out_args = args[nfix + len(stack_vals):]
        b1 = s + p
        mapping: dict = {}

        def get(v):
            owner = v.owner
            if not isinstance(owner, ir.Block):
                jj = t.index.get(owner.operation)
                if jj is not None and jj >= b1:
                    return mapping[v]
                if jj is not None and s <= jj < b1:
                    return carry_arg[(jj - s, ir.OpResult(v).result_number)]
            return inv_arg[v]

        with ir.InsertionPoint(body):
            zidx = build.full(0, ctr_t) if (plan.stacked or plan.tables or plan.collected) else None

            def row(table: ir.Value, shp: list) -> ir.Value:
                part = build.dynamic_slice(table, [ctr] + [zidx] * len(shp), [1] + shp)
                return build.reshape(part, shp)

            for i in range(b1, b1 + p):
                op = ops[i]
                if i in plan.tables:
                    arrs = plan.tables[i][:R]
                    rt = op.results[0].type
                    shp = list(shape_of(rt))
                    table = build.constant(np.stack([np.asarray(a) for a in arrs]),
                                           ranked([R] + shp, element_type_of(rt)))
                    mapping[op.results[0]] = row(table, shp)
                    continue
                if i in plan.slices:
                    start0, delta = plan.slices[i]
                    attrs = op.attributes
                    size = [int(v) for v in np.asarray(attrs["limit_indices"], np.int64)
                            - np.asarray(attrs["start_indices"], np.int64)]
                    src = op.operands[0]
                    st = stack_of.get(int(t.opstart[i]))
                    src = row(stack_arg[id(st)], list(shape_of(src))) if st is not None else get(src)
                    idx = [build.full(int(a), ctr_t) if not d else
                           build.add(build.multiply(ctr, build.full(int(d), ctr_t)), build.full(int(a), ctr_t))
                           for a, d in zip(start0, delta)]
                    part = build.dynamic_slice(src, idx, size)
                    strides = [int(v) for v in attrs["strides"]]
                    if any(v != 1 for v in strides):
                        part = build.slice(part, [0] * len(strides), size, strides)
                    mapping[op.results[0]] = part
                    continue
                x0 = int(t.opstart[i])
                new_operands = []
                for n, v in enumerate(op.operands):
                    st = stack_of.get(x0 + n)
                    new_operands.append(row(stack_arg[id(st)], list(shape_of(v))) if st is not None else get(v))
                it = iter(new_operands)
                new = clone_op(op, lambda _v: next(it))
                for a, b in zip(op.results, new.results):
                    mapping[a] = b
            one = build.full(1, ctr_t)
            rows = []
            for (q, r), acc in zip(plan.collected, out_args):
                v = mapping[value(b1 + q, r)]
                shp = list(shape_of(v.type))
                rows.append(build.dynamic_update_slice(acc, build.reshape(v, [1] + shp), [ctr] + [zidx] * len(shp)))
            yields = [build.add(ctr, one)] + [mapping[value(b1 + q, r)] for q, r in plan.carries] \
                + args[1 + len(inits): nfix + len(stack_vals)] + rows
            build.create("stablehlo.return", yields, [])
    # the while's results replace the last rolled block's carried values
    lastb = s + (R - 1) * p
    for n, (q, r) in enumerate(plan.carries):
        value(lastb + q, r).replace_all_uses_with(w.results[1 + n])
    # collected values: block b's value is row b of its output (for the uses the carries left)
    first_out = len(w.results) - len(plan.collected)
    after = ir.InsertionPoint(ops[s + R * p]) if s + R * p < len(ops) else ir.InsertionPoint(t.term)
    doomed = ops[s: s + R * p]
    doomed_set = set(doomed)
    for n, (q, r) in enumerate(plan.collected):
        acc = w.results[first_out + n]
        shp = list(shape_of(value(s + q, r).type))
        for b in range(R):
            v = value(s + b * p + q, r)
            outside = [(u.owner, u.operand_number) for u in v.uses if u.owner.operation not in doomed_set]
            if not outside:
                continue
            with loc:
                part = build.reshape(build.slice(acc, [b] + [0] * len(shp), [b + 1] + shp, ip=after), shp, ip=after)
            for owner, num in outside:
                owner.operands[num] = part
    for op in reversed(doomed):
        for res in op.results:
            for u in res.uses:
                if u.owner.operation not in doomed_set:
                    raise RuntimeError("reroll: internal error: a rolled value is still used")
        op.erase()
    log_pass("reroll", f"@{fn_name}: {R} blocks of {p} ops at op {s} -> one stablehlo.while "
         f"({len(plan.carries)} carried, {len(invs)} invariant, {len(stack_vals)} stacked, "
         f"{len(plan.tables)} constant tables, {len(plan.slices)} moving slices, {len(plan.collected)} collected)")


def _hoist_lone_constants(t: _Table) -> bool:
    """Move to the top of the body the constants that cannot be one per block of a run. A
    run of ``MIN_REPEATS_LARGE`` or more blocks has its constant in each block: repeated (one
    value each time) or varying (one value per block, ``MIN_REPEATS_LARGE`` or more values of a
    type). What is neither, fewer than that many constants of a type with values of their own,
    sits in the one block that uses it first (a state's initial ``np.zeros``, a value the
    tracer made once for every step) and is an op the other blocks lack: that block would
    break the run and stay unrolled before the loop. At the top it is read from before the run
    like an argument (block 0's value of a carried state, or an invariant). Returns whether
    any moved."""
    by_value: dict = {}
    for i, op in enumerate(t.ops):
        if op.name == "stablehlo.constant":  # (the table's code of the op: type and value)
            by_value.setdefault((op.results[0].type, int(t.exact[i])), []).append(op)
    lone: dict = {}
    for (ty, _), ops in by_value.items():
        if len(ops) < MIN_REPEATS_LARGE:
            lone.setdefault(ty, []).extend(ops)
    moving = sorted((op for ops in lone.values() if len(ops) < MIN_REPEATS_LARGE for op in ops),
                    key=t.index.__getitem__)
    first = t.ops[0]
    moved = False
    for op in moving:
        if op is not first:
            op.move_before(first)
            moved = True
        else:
            first = op  # (already on top: the next ones go after it)
    return moved


def reroll_function(fn, stack_args: bool = True) -> int:
    """Roll the runs of ``fn``'s body; returns the number of rolls. ``stack_args=False``: blocks
    reading one function argument each are left unrolled."""
    region = fn.regions[0]
    blocks = list(region.blocks)
    if len(blocks) != 1:
        return 0
    block = blocks[0]
    name = fn.attributes["sym_name"].value if "sym_name" in fn.attributes else "?"
    done = 0
    for r in range(MAX_ROUNDS):
        if sum(compile_weight(op.operation.name) for op in block.operations) < MIN_OPS:
            break  # (no run can be long enough: the table's codes are not worth computing)
        t = _Table(block, stack_args)
        if r == 0 and _hoist_lone_constants(t):
            t = _Table(block, stack_args)
        best = None
        for p in _candidates(t):
            if p * MIN_REPEATS_LARGE > t.n:
                continue
            plan = _plan(t, p)
            if plan is not None and (best is None or plan.rolled * plan.p > best.rolled * best.p):
                best = plan
        if best is None:
            break
        _roll(t, best, name)
        done += 1
    return done


@register_pass("reroll", idempotent=True)
def reroll(module: ir.Module, options: PassOptions) -> bool:
    """Roll long runs of identical consecutive blocks into ``stablehlo.while`` loops."""
    if "reroll" in options.disabled:
        return False
    # reverse mode returns a gradient per argument: for a function it differentiates, stacking
    # its arguments would make AD slice each gradient out of the stack's, one XLA kernel per
    # argument (a 10^3-op MLP gradient over per-layer weights: 2.0 s -> 6.8 s first call)
    reversed_fns = set()

    def visit(op):
        if op.name == "enzyme.autodiff" and "fn" in op.attributes:
            reversed_fns.add(ir.FlatSymbolRefAttr(op.attributes["fn"]).value)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    n = 0
    for op in module.body.operations:
        if op.operation.name == "func.func":
            name = op.attributes["sym_name"].value if "sym_name" in op.attributes else ""
            n += reroll_function(op.operation, stack_args=name not in reversed_fns)
    return n > 0
