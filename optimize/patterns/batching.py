"""Batching rules: StableHLO ops that compute one loop iteration, rewritten to compute all the
iterations at once over a new leading batch dimension (``jax.vmap``, on StableHLO ops).

A ``Batcher`` vectorizes the values of one loop body over its ``n`` iterations. Every value of
the body becomes a ``BVal``: either *unbatched* (the same in every iteration: the op is copied
once, outside the loop) or *batched* (a tensor with a leading dimension of size ``n``, row ``t``
being the value of iteration ``t``, or of iteration ``n - 1 - t`` in a batcher built with
``reverse``: a loop whose iterations are independent may batch them in either order, and one
that writes its rows backwards reads and writes them in order that way). The loop's counter
``i`` (values ``lo .. lo + n - 1``) becomes ``lo + iota(n)`` (``lo + n - 1 - iota(n)``), and
integer arithmetic on it whose values step evenly an iota too; a ``dynamic_slice`` at row
``i + c`` (or ``c - i``) of an unbatched array becomes the static range of rows
``lo + c .. lo + c + n - 1`` (reversed when the batch runs the other way).

One rule per op name, in one table (``RULES``, filled by ``@batching_rule``). A rule has

- ``check(b, op) -> bool``: whether the op's results are batched (default: any operand is),
  raising ``Reject`` when the op cannot be batched with these operands;
- ``build(b, op) -> list[ir.Value]``: the batched results (called only when ``check`` said
  batched; operand values come from ``b.get``).

Ops with no rule are fine when none of their operands is batched and they have no side effects
(they are copied as they are); a batched operand of such an op rejects the whole loop, so a
caller never produces a wrong answer for an op it does not understand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from ...ir import build as B
from ...ir.attrs import copy_attrs, i64_array, i64_list, int_attr_value, padding_attr
from ...ir.evaluate import attributes_of, evaluate_op, scalar_int_value
from ...ir.opinfo import ELEMENTWISE, is_pure_op
from ...ir.regions import captured_values, clone_op, single_block, terminator
from ...ir.types import element_type_of, np_dtype, num_elements, ranked, shape_of
from ...ir.values import defining_op


class Reject(Exception):
    """The body contains an op that cannot be batched with these operands."""


@dataclass(frozen=True)
class BVal:
    """A vectorized value: ``value`` has a leading batch dimension when ``batched``."""

    value: ir.Value
    batched: bool


@dataclass(frozen=True)
class Rows:
    """Pairwise distinct rows of one dimension, one per iteration: row ``first + step * t`` in
    iteration ``t`` (``step`` 1 or -1), or ``at[t]`` (``step`` 0: any other order)."""

    first: int
    step: int
    n: int
    at: tuple = ()

    @property
    def low(self) -> int:
        return min(self.at) if not self.step else min(self.first, self.first + self.step * (self.n - 1))

    @property
    def high(self) -> int:
        return max(self.at) if not self.step else max(self.first, self.first + self.step * (self.n - 1))


_MAX_LISTED = 1 << 16  # iterations of a loop whose index values are listed one by one


def iteration_values(v: ir.Value, env: dict, n: int, memo: dict | None = None,
                     depth: int = 32) -> np.ndarray | None:
    """The value of the one-element integer (or boolean) ``v`` in each of ``n`` iterations (a
    vector), where ``env`` gives some values' vectors (a loop counter's), computed from them
    and constants by the ops the evaluator knows, with their wrapping; else None."""
    memo = {} if memo is None else memo
    if v in memo:
        return memo[v]
    r = None
    dt = np_dtype(element_type_of(v)) if isinstance(v.type, ir.RankedTensorType) else None
    if dt is not None and dt.kind in "iub" and num_elements(v) == 1:
        if v in env:
            r = env[v]
        elif (c := scalar_int_value(v)) is not None:
            r = np.full(n, c)
        else:
            d = defining_op(v)
            if d is not None and depth and not len(d.operation.regions) and len(d.results) == 1 \
                    and is_pure_op(d):
                args = [iteration_values(x, env, n, memo, depth - 1) for x in d.operands]
                attrs = attributes_of(d)
                if all(a is not None for a in args) and attrs is not None:
                    name = d.operation.name
                    if name in ("stablehlo.reshape", "stablehlo.broadcast_in_dim"):
                        r = args[0]
                    elif name == "stablehlo.convert" or name in ELEMENTWISE:
                        r = evaluate_op(name, args, result_dtype=dt, **attrs)
        r = None if r is None else np.asarray(r).astype(dt, copy=False).reshape(n)
    memo[v] = r
    return r


@dataclass(frozen=True)
class BatchingRule:
    check: Callable | None
    build: Callable


RULES: dict[str, BatchingRule] = {}


def batching_rule(*names: str, check: Callable | None = None):
    """Register the decorated ``build(b, op) -> list[ir.Value]`` as the batching rule of each
    op in ``names`` (with its ``check``; default: batched when an operand is)."""

    def deco(fn):
        for name in names:
            if name in RULES:
                raise ValueError(f"batching rule for {name!r} registered twice")
            RULES[name] = BatchingRule(check, fn)
        return fn

    return deco


class Batcher:
    """Vectorizes the values of ``body`` (a loop body block) over ``n`` iterations.

    ``counter`` is the body's induction variable, taking ``lo .. lo + n - 1``; ``leaves`` maps
    other body arguments to their (unbatched) values outside the loop; ``rows`` maps carried
    arrays to ``(dim, rows, init)``: iteration ``t`` touches them only in its row of ``dim``
    (``Rows``: the row it writes), where they start with ``init``'s values.

    Such an array, the arrays made from it by ``dynamic_update_slice`` inside that row and its
    static slices that keep the whole of ``dim``, are *row slabs*: their row in iteration ``t``
    is all the iteration sees of them, and their batched form (``slab``) is that row for every
    iteration, ``[n, *shape]`` with ``dim`` of size 1. A ``dynamic_slice`` in the
    row reads a slab; any other use of one rejects the body (it would see other iterations'
    rows). Values defined
    outside the loop are unbatched. With ``max_elements``, a batched value larger than that
    rejects the body. New ops go at the ambient insertion point and location.
    """

    def __init__(self, body: ir.Block, counter: ir.Value, lo: int, n: int, leaves: dict, rows: dict,
                 max_elements: int | None = None, reverse: bool = False):
        self.body, self.counter, self.lo, self.n, self.reverse = body, counter, lo, n, reverse
        self.leaves, self.rows = leaves, rows
        self.max_elements = max_elements  # cap on the elements of one batched value
        self._flags: dict = {}
        self._vals: dict = {}
        self._slab_of: dict = {}
        self._slabs: dict = {}
        self._index: dict = {}
        self._moving: dict = {}
        self._offsets: dict = {}
        self._env: dict | None = None

    # -- analysis ----------------------------------------------------------------------------
    def local_op(self, v: ir.Value):
        """The op of the body (top level) defining ``v``, or None."""
        d = defining_op(v)
        return d if d is not None and d.operation.block == self.body else None

    def check(self, v: ir.Value) -> bool:
        """Whether ``v`` is batched; raises ``Reject`` when it cannot be vectorized."""
        got = self._flags.get(v)
        if got is not None:
            return got
        if v == self.counter:
            flag = True
        elif v in self.leaves:
            flag = False
        elif v in self.rows:
            raise Reject("a carried array is used other than by a read of the row it writes")
        else:
            d = defining_op(v)
            if d is None:
                if v.owner == self.body:
                    raise Reject("an unclassified loop argument")
                flag = False  # an argument of an enclosing region: invariant
            elif d.operation.block != self.body:
                flag = False  # defined outside the loop
            else:
                flag = self._check_op(d)
        self._flags[v] = flag
        return flag

    def slab_of(self, v: ir.Value) -> tuple[int, Rows] | None:
        """``(dim, rows)`` when ``v`` is a row slab (see the class), else None; raises
        ``Reject`` for a write into a slab outside its row."""
        if v in self._slab_of:
            return self._slab_of[v]
        r = None
        if v in self.rows:
            r = self.rows[v][:2]
        else:
            d = self.local_op(v)
            name = None if d is None else d.operation.name
            if name == "stablehlo.dynamic_update_slice":
                r = self.slab_of(d.operands[0])
                if r is not None:
                    dim, rows = r
                    idx = list(d.operands[2:])
                    if self.rows_of(idx[dim]) != rows or shape_of(d.operands[1])[dim] != 1:
                        raise Reject("a write outside the row of the iteration")
                    if self.any_batched([ix for e, ix in enumerate(idx) if e != dim]):
                        raise Reject("a write into the row at a moving column")
                    self.check(d.operands[1])
            elif name == "stablehlo.slice":
                r = self.slab_of(d.operands[0])
                if r is not None:
                    dim = r[0]
                    a = d.operation.attributes
                    if (i64_list(a["start_indices"])[dim], i64_list(a["limit_indices"])[dim],
                            i64_list(a["strides"])[dim]) != (0, shape_of(d.operands[0])[dim], 1):
                        raise Reject("a slice of a carried array across rows")
        self._slab_of[v] = r
        return r

    def slab(self, v: ir.Value) -> ir.Value:
        """The batched row of the row slab ``v`` (``slab_of(v)`` must have succeeded)."""
        got = self._slabs.get(v)
        if got is not None:
            return got
        dim, rows = self.slab_of(v)
        if v in self.rows:
            r = take_rows(self.rows[v][2], dim, rows)
        else:
            d = self.local_op(v)
            base = self.slab(d.operands[0])
            if d.operation.name == "stablehlo.dynamic_update_slice":
                idx = list(d.operands[2:])
                zero = B.full(0, ranked([], element_type_of(idx[dim])))
                starts = [zero] + [zero if e == dim else self.get(ix).value for e, ix in enumerate(idx)]
                r = B.dynamic_update_slice(base, self.batched(d.operands[1]), starts)
            else:
                a = d.operation.attributes
                limit = i64_list(a["limit_indices"])
                limit[dim] = 1
                r = B.slice(base, [0, *i64_list(a["start_indices"])], [self.n, *limit], [1, *i64_list(a["strides"])])
        self._slabs[v] = r
        return r

    def any_batched(self, values) -> bool:
        """Whether one of ``values`` is batched. Every value is checked (no short cut after
        the first batched one), so that one that cannot be vectorized always rejects."""
        flags = [self.check(v) for v in values]
        return any(flags)

    def _check_op(self, op) -> bool:
        name = op.operation.name
        if not is_pure_op(op):
            raise Reject(f"{name} has side effects")
        rule = RULES.get(name)
        if rule is not None and rule.check is not None:
            flag = rule.check(self, op)
        else:
            flag = self.any_batched(op.operands)
            if len(op.regions) and self.any_batched(captured_values(op)):
                raise Reject(f"{name}: its regions read a batched value")
        if flag and rule is None:
            raise Reject(f"no batching rule for {name}")
        if flag and len(op.results) != 1 and name not in _SEVERAL_RESULTS:
            raise Reject(f"{name}: several results")
        if flag and self.max_elements is not None \
                and any(self.n * num_elements(r) > self.max_elements for r in op.results):
            # a loop holds one iteration's temporaries at a time, the batched body all of them
            raise Reject(f"{name}: its batched result would be too large")
        return flag

    def offset(self, v: ir.Value, depth: int = 8) -> int | None:
        """``c`` when the integer scalar ``v`` equals ``counter + c`` in every iteration
        (through conversions that hold its range, additions of constants and remainders
        that do not wrap), else None."""
        key = (v, depth)  # (the reads and writes of a body share their index arithmetic)
        if key not in self._offsets:
            self._offsets[key] = self._offset(v, depth)
        return self._offsets[key]

    def _offset(self, v: ir.Value, depth: int) -> int | None:
        if v == self.counter:
            return 0
        d = self.local_op(v)
        if d is None or depth == 0 or shape_of(v) != ():
            return None
        name = d.operation.name
        c = None
        if name == "stablehlo.convert":
            c = self.offset(d.operands[0], depth - 1)
        elif name in ("stablehlo.add", "stablehlo.subtract"):
            a, k = d.operands
            c0, kv = self.offset(a, depth - 1), scalar_int_value(k)
            if c0 is not None and kv is not None:
                c = c0 + kv if name == "stablehlo.add" else c0 - kv
            elif name == "stablehlo.add":
                c0, kv = self.offset(k, depth - 1), scalar_int_value(a)
                if c0 is not None and kv is not None:
                    c = c0 + kv
        elif name == "stablehlo.remainder":  # (i + c) % k is i + c - m k while m k <= i + c < (m + 1) k
            c0, kv = self.offset(d.operands[0], depth - 1), scalar_int_value(d.operands[1])
            if c0 is not None and kv is not None and kv > 0 and self.lo + c0 >= 0 \
                    and (self.lo + c0) // kv == (self.lo + self.n - 1 + c0) // kv:
                c = c0 - (self.lo + c0) // kv * kv
        if c is None:
            return None
        dt = np_dtype(element_type_of(v))
        if dt is None or dt.kind not in "iu":
            return None
        info = np.iinfo(dt)
        lo, hi = self.lo + c, self.lo + self.n - 1 + c
        return c if info.min <= lo and hi <= info.max else None

    def rows_of(self, v: ir.Value) -> Rows | None:
        """The rows the integer scalar ``v`` points at over the iterations, when they are
        pairwise distinct (``counter + c``, ``c - counter``, any permutation), else None."""
        off = self.offset(v)
        if off is not None:
            return Rows(self.lo + self.n - 1 + off, -1, self.n) if self.reverse else Rows(self.lo + off, 1, self.n)
        if not self._moves(v):  # (the same row in every iteration: not listed to find that out)
            return None
        vals = self.index_values(v)
        if vals is None or vals.dtype.kind not in "iu" or len(np.unique(vals)) != self.n:
            return None
        steps = np.diff(vals.astype(np.int64))
        for step in (1, -1):
            if np.all(steps == step):
                return Rows(int(vals[0]), step, self.n)
        return Rows(int(vals[0]), 0, self.n, tuple(int(x) for x in vals))

    def _moves(self, v: ir.Value, depth: int = 32) -> bool:
        """Whether ``v`` is computed in the body from the counter (False: the same in every
        iteration, or a carried value other than the counter, which ``index_values`` cannot
        list either)."""
        got = self._moving.get(v)
        if got is None:
            d = self.local_op(v)
            got = v == self.counter or (d is not None and (depth == 0 or len(d.operation.regions) > 0 or any(
                self._moves(x, depth - 1) for x in d.operands)))
            self._moving[v] = got
        return got

    def index_values(self, v: ir.Value) -> np.ndarray | None:
        """``v``'s value in every iteration, in batch order (``iteration_values``), for loops
        short enough to list them."""
        if not 2 <= self.n <= _MAX_LISTED:
            return None
        if self._env is None:
            self._env = self._iteration_env()
        return iteration_values(v, self._env, self.n, self._index)

    def _iteration_env(self) -> dict:
        """The counter's values in batch order, and the constant leaves'."""
        env = {self.counter: self.lo + np.arange(self.n)[::-1 if self.reverse else 1]}
        for a, init in self.leaves.items():
            c = scalar_int_value(init)
            if c is not None:
                env[a] = np.full(self.n, c)
        return env

    # -- building ----------------------------------------------------------------------------
    def get(self, v: ir.Value) -> BVal:
        """The vectorized ``v`` (``check(v)`` must have succeeded)."""
        got = self._vals.get(v)
        if got is not None:
            return got
        prog = self._progression(v) if v == self.counter or self.local_op(v) is not None else None
        if prog is not None:  # the counter, or index arithmetic on it: first + step * iota
            r = BVal(self._iota(v, *prog), True)
        elif v == self.counter:  # (one iteration, or too many to list)
            t = ranked([self.n], element_type_of(v))
            r = BVal(B.subtract(B.full(self.lo + self.n - 1, t), B.iota(t, 0)) if self.reverse
                     else B.add(B.iota(t, 0), B.full(self.lo, t)), True)
        elif v in self.leaves:
            r = BVal(self.leaves[v], False)
        else:
            d = self.local_op(v)
            if d is None:
                r = BVal(v, False)
            else:
                self._build_op(d)
                r = self._vals[v]
        self._vals[v] = r
        return r

    def _progression(self, v: ir.Value) -> tuple[int, int] | None:
        """``(first, step)`` when ``v``'s values over the batch are ``first + step * t``
        (``step`` not 0, ``step * t`` within the type), else None."""
        vals = self.index_values(v)
        if vals is None or vals.dtype.kind not in "iu":
            return None
        w = [int(x) for x in vals[:2]]
        step = w[1] - w[0]
        if step == 0 or abs(step) * (self.n - 1) > np.iinfo(vals.dtype).max \
                or not np.array_equal(vals.astype(object), w[0] + step * np.arange(self.n, dtype=object)):
            return None
        return w[0], step

    def _iota(self, v: ir.Value, first: int, step: int) -> ir.Value:
        t = ranked([self.n], element_type_of(v))
        r = B.iota(t, 0)
        if abs(step) != 1:
            r = B.multiply(r, B.full(abs(step), t))
        if step < 0:
            r = B.subtract(B.full(first, t), r)
        elif first:
            r = B.add(r, B.full(first, t))
        return r if shape_of(v) == () else B.reshape(r, [self.n, *shape_of(v)])

    def _build_op(self, op) -> None:
        if not self.check(op.results[0]):
            caps = captured_values(op) if len(op.regions) else None
            new = clone_op(op, lambda x: self.get(x).value, caps)
            for old, nv in zip(op.results, new.results):
                self._vals[old] = BVal(nv, False)
            return
        outs = RULES[op.operation.name].build(self, op)
        for old, nv in zip(op.results, outs):
            self._vals[old] = BVal(nv, True)

    def batched(self, v: ir.Value) -> ir.Value:
        """The vectorized ``v`` with its batch dimension (broadcast when unbatched)."""
        bv = self.get(v)
        return bv.value if bv.batched else self.broadcast(bv.value)

    def broadcast(self, x: ir.Value) -> ir.Value:
        """An unbatched value repeated along a new leading batch dimension."""
        s = shape_of(x)
        return B.broadcast_in_dim(x, [self.n, *s], range(1, len(s) + 1))

    def index_zero(self, like: list) -> ir.Value:
        """A zero start index of the element type of the ``like`` indices (i64 without any)."""
        et = element_type_of(like[0]) if like else ir.IntegerType.get_signless(64)
        return B.full(0, ranked([], et))


_MAX_WINDOW = 16  # rows of a sliding window read at the counter (one slice per row)
# ops whose rules batch every result (the others must have one)
_SEVERAL_RESULTS = frozenset({"stablehlo.reduce", "stablehlo.sort", "stablehlo.if", "stablehlo.case",
                              "stablehlo.while"})


def _shift(dims) -> list[int]:
    return [int(d) + 1 for d in dims]


def move_axis(x: ir.Value, src: int, dst: int) -> ir.Value:
    """``x`` with dimension ``src`` moved to position ``dst``."""
    perm = [d for d in range(len(shape_of(x))) if d != src]
    perm.insert(dst, src)
    return B.transpose(x, perm)


def _row_indices(rows: Rows) -> ir.Value:
    """The listed rows as scatter / gather indices, ``[n, 1]``."""
    return B.constant(np.asarray(rows.at, dtype=np.int64).reshape(rows.n, 1))


def take_rows(x: ir.Value, dim: int, rows: Rows) -> ir.Value:
    """Row ``rows`` of ``dim`` of the unbatched ``x`` for every iteration, batched:
    ``[n, *shape]`` with ``dim`` of size 1."""
    shape = list(shape_of(x))
    one = shape[:dim] + [1] + shape[dim + 1:]
    if not rows.step:
        return B.gather(x, _row_indices(rows), offset_dims=range(1, len(shape) + 1), collapsed_slice_dims=[],
                        start_index_map=[dim], index_vector_dim=1, slice_sizes=one)
    start, limit = [0] * len(shape), list(shape)
    start[dim], limit[dim] = rows.low, rows.high + 1
    r = move_axis(B.slice(x, start, limit), dim, 0)
    r = B.reshape(r, [rows.n, *one])
    return r if rows.step > 0 else B.reverse(r, [0])


def place_rows(base: ir.Value, upd: ir.Value, dim: int, rows: Rows, starts: list) -> ir.Value:
    """``base`` with iteration t's update ``upd[t]`` (``upd``: ``[n, *us]``, ``us[dim] == 1``)
    written at its row of ``dim`` and at the unbatched ``starts`` of the other dimensions (those
    of a ``dynamic_update_slice``; ``starts[dim]`` only gives the index type), as a
    ``dynamic_update_slice`` per iteration writes it (the rows are distinct: no write is lost)."""
    us = list(shape_of(upd))[1:]
    if rows.step:  # the updates side by side along ``dim``, in row order
        r = move_axis(B.reshape(upd, [rows.n, *us[:dim], *us[dim + 1:]]), 0, dim)
        r = r if rows.step > 0 else B.reverse(r, [dim])
        starts = list(starts)
        starts[dim] = B.full(rows.low, ranked([], element_type_of(starts[dim])))
        return B.dynamic_update_slice(base, r, starts)
    # one window per iteration: a scatter, the other starts clamped as dynamic_update_slice does
    xs = shape_of(base)
    i64 = ir.IntegerType.get_signless(64)
    cols = []
    for e, s in enumerate(starts):
        if e == dim:
            cols.append(_row_indices(rows))
            continue
        s = B.convert(s, i64) if element_type_of(s) != i64 else s
        s = B.clamp(B.full(0, ranked([], i64)), s, B.full(xs[e] - us[e], ranked([], i64)))
        cols.append(B.broadcast_in_dim(s, [rows.n, 1], []))
    idx = cols[0] if len(cols) == 1 else B.concatenate(cols, 1)
    return B.scatter(base, idx, upd, update_window_dims=range(1, len(xs) + 1), inserted_window_dims=[],
                     scatter_dims_to_operand_dims=range(len(xs)), index_vector_dim=1, combiner=None,
                     unique_indices=True)


# -- elementwise -------------------------------------------------------------------------------
def _elementwise(b: Batcher, op) -> list[ir.Value]:
    res_shape = shape_of(op.results[0])
    full = [b.n, *res_shape]
    operands = []
    for x in op.operands:
        bv = b.get(x)
        if shape_of(x) == res_shape:
            operands.append(bv.value if bv.batched else b.broadcast(bv.value))
        elif shape_of(x) == ():  # rank-0 predicate / bound of select and clamp
            operands.append(B.broadcast_in_dim(bv.value, full, [0]) if bv.batched else bv.value)
        else:  # pragma: no cover (elementwise ops have operands of the result's shape)
            raise Reject(f"{op.operation.name}: operand shape")
    t = ranked(full, element_type_of(op.results[0]))
    return [B.op1(op.operation.name, operands, t, copy_attrs(op))]


batching_rule(*sorted(ELEMENTWISE))(_elementwise)


# -- layout ------------------------------------------------------------------------------------
def _out(b: Batcher, op) -> ir.Type:
    return ranked([b.n, *shape_of(op.results[0])], element_type_of(op.results[0]))


@batching_rule("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(b: Batcher, op) -> list[ir.Value]:
    dims = i64_list(op.attributes["broadcast_dimensions"])
    return [B.op1(op.operation.name, [b.get(op.operands[0]).value], _out(b, op),
                  {"broadcast_dimensions": i64_array([0, *_shift(dims)])})]


@batching_rule("stablehlo.reshape")
def _reshape(b: Batcher, op) -> list[ir.Value]:
    return [B.op1(op.operation.name, [b.get(op.operands[0]).value], _out(b, op))]


@batching_rule("stablehlo.transpose")
def _transpose(b: Batcher, op) -> list[ir.Value]:
    perm = i64_list(op.attributes["permutation"])
    return [B.transpose(b.get(op.operands[0]).value, [0, *_shift(perm)])]


@batching_rule("stablehlo.reverse")
def _reverse(b: Batcher, op) -> list[ir.Value]:
    return [B.reverse(b.get(op.operands[0]).value, _shift(i64_list(op.attributes["dimensions"])))]


@batching_rule("stablehlo.slice")
def _slice(b: Batcher, op) -> list[ir.Value]:
    a = op.attributes
    return [B.slice(b.get(op.operands[0]).value, [0, *i64_list(a["start_indices"])],
                    [b.n, *i64_list(a["limit_indices"])], [1, *i64_list(a["strides"])])]


def _pad_check(b: Batcher, op) -> bool:
    if b.check(op.operands[1]):
        raise Reject("pad: a padding value that changes per iteration")
    return b.check(op.operands[0])


@batching_rule("stablehlo.pad", check=_pad_check)
def _pad(b: Batcher, op) -> list[ir.Value]:
    a = op.attributes
    return [B.pad(b.get(op.operands[0]).value, b.get(op.operands[1]).value,
                  [0, *i64_list(a["edge_padding_low"])], [0, *i64_list(a["edge_padding_high"])],
                  [0, *i64_list(a["interior_padding"])])]


@batching_rule("stablehlo.concatenate")
def _concatenate(b: Batcher, op) -> list[ir.Value]:
    dim = int_attr_value(op.attributes["dimension"])
    return [B.concatenate([b.batched(x) for x in op.operands], dim + 1)]


# -- reductions and contractions ---------------------------------------------------------------
def _reduce_check(b: Batcher, op) -> bool:
    k = len(op.operands) // 2
    if b.any_batched(op.operands[k:]):
        raise Reject("reduce: an init value that changes per iteration")
    if captured_values(op):
        raise Reject("reduce: a body that reads outside values")
    return b.any_batched(op.operands[:k])


@batching_rule("stablehlo.reduce", check=_reduce_check)
def _reduce(b: Batcher, op) -> list[ir.Value]:
    k = len(op.operands) // 2
    inputs = [b.batched(x) for x in op.operands[:k]]
    inits = [b.get(x).value for x in op.operands[k:]]
    types = [ranked([b.n, *shape_of(r)], element_type_of(r)) for r in op.results]
    attrs = copy_attrs(op)
    attrs["dimensions"] = i64_array(_shift(i64_list(op.attributes["dimensions"])))
    return _with_body_of(op, inputs + inits, types, attrs)


def _with_body_of(op, operands: list, types: list, attrs: dict) -> list[ir.Value]:
    """A new op like ``op`` (one region) with these operands, result types and attributes,
    and a copy of ``op``'s region."""
    new = B.create(op.operation.name, operands, types, attrs, regions=1)
    tmp = op.operation.clone()  # a copy of the body to move into the new op
    tmp.regions[0].blocks[0].append_to(new.regions[0])
    tmp.erase()  # its results have no uses
    return list(new.results)


def _sort_check(b: Batcher, op) -> bool:
    if captured_values(op):
        raise Reject("sort: a comparator that reads outside values")
    return b.any_batched(op.operands)


@batching_rule("stablehlo.sort", check=_sort_check)
def _sort(b: Batcher, op) -> list[ir.Value]:
    attrs = copy_attrs(op)
    attrs["dimension"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                            int_attr_value(op.attributes["dimension"]) + 1)
    return _with_body_of(op, [b.batched(x) for x in op.operands],
                         [ranked([b.n, *shape_of(r)], element_type_of(r)) for r in op.results], attrs)


@batching_rule("stablehlo.fft")
def _fft(b: Batcher, op) -> list[ir.Value]:  # it transforms the trailing dimensions only
    return [B.op1(op.operation.name, [b.get(op.operands[0]).value], _out(b, op), copy_attrs(op))]


@batching_rule("stablehlo.dot_general")
def _dot_general(b: Batcher, op) -> list[ir.Value]:
    lb, rb, lc, rc = B.dot_dims(op)
    lhs, rhs = (b.get(x) for x in op.operands)
    et = element_type_of(op.results[0])
    if lhs.batched and rhs.batched:  # the iterations become a new (first) batch dimension
        return [B.dot_general(lhs.value, rhs.value, [0, *_shift(lb)], [0, *_shift(rb)], _shift(lc), _shift(rc),
                              elem=et, like=op)]
    nb = len(lb)
    if lhs.batched:  # a free lhs dimension: after the batch dimensions of the result
        r = B.dot_general(lhs.value, rhs.value, _shift(lb), rb, _shift(lc), rc, elem=et, like=op)
        return [move_axis(r, nb, 0)]
    # a free rhs dimension: after the batch and free lhs dimensions
    lhs_free = len(shape_of(op.operands[0])) - nb - len(lc)
    r = B.dot_general(lhs.value, rhs.value, lb, _shift(rb), lc, _shift(rc), elem=et, like=op)
    return [move_axis(r, nb + lhs_free, 0)]


# -- indexing ----------------------------------------------------------------------------------
def _dynamic_slice_check(b: Batcher, op) -> bool:
    x, idx = op.operands[0], list(op.operands[1:])
    sizes = i64_list(op.attributes["slice_sizes"])
    slab = b.slab_of(x)
    if slab is not None:  # a read of the row this iteration writes
        dim, rows = slab
        if b.rows_of(idx[dim]) != rows or sizes[dim] != 1:
            raise Reject("a carried array read at another row than the one written")
        if b.any_batched([ix for e, ix in enumerate(idx) if e != dim]):
            raise Reject("a carried array read at a window that moves in another dimension")
        return True
    xb, ib = b.check(x), [b.check(ix) for ix in idx]
    if not any(ib):
        return xb
    return True  # rows at the counter (_row_read), or else a gather (_gathered_slice, at the end)


def _row_read(b: Batcher, x: ir.Value, idx: list, sizes: list) -> tuple[int, Rows] | None:
    """The dimension and rows of an unbatched ``x`` read at rows ``counter + c`` or
    ``c - counter`` (one moving index, a window of at most ``_MAX_WINDOW`` rows, in bounds),
    else None."""
    if b.check(x):
        return None
    moving = [e for e, ix in enumerate(idx) if b.check(ix)]
    if len(moving) != 1:
        return None
    e = moving[0]
    rows = b.rows_of(idx[e])
    if rows is None or not rows.step or not 1 <= sizes[e] <= _MAX_WINDOW:
        return None
    if rows.low < 0 or rows.high + sizes[e] > shape_of(x)[e]:
        return None  # (rows out of bounds: clamped, which the gather does too)
    return e, rows


def _row_range(b: Batcher, x: ir.Value, idx: list, sizes: list, dim: int, rows: Rows) -> ir.Value:
    """The windows of ``sizes[dim]`` rows from row ``rows`` (contiguous) of ``dim`` of the
    unbatched ``x`` (the other indices unbatched), as a batched value: one range of ``n`` rows
    per position in the window, side by side."""
    starts = [None if e == dim else b.get(ix).value for e, ix in enumerate(idx)]
    et = element_type_of(idx[dim])
    sz = list(sizes)
    sz[dim] = b.n
    one = list(sizes)
    one[dim] = 1
    parts = []
    for j in range(sizes[dim]):
        starts[dim] = B.full(rows.low + j, ranked([], et))
        r = move_axis(B.dynamic_slice(x, starts, sz), dim, 0)
        parts.append(B.reshape(r, [b.n, *one]))
    r = B.concatenate(parts, dim + 1)
    return r if rows.step > 0 else B.reverse(r, [0])


@batching_rule("stablehlo.dynamic_slice", check=_dynamic_slice_check)
def _dynamic_slice(b: Batcher, op) -> list[ir.Value]:
    x, idx = op.operands[0], list(op.operands[1:])
    sizes = i64_list(op.attributes["slice_sizes"])
    if x in b.rows and b.rows[x][1].step:  # the carried array itself: the rows of its initial value
        dim, rows, init = b.rows[x]  # (no whole slab)
        return [_row_range(b, init, idx, sizes, dim, rows)]
    slab = b.slab_of(x)
    if slab is not None:
        dim = slab[0]
        zero = B.full(0, ranked([], element_type_of(idx[dim])))
        starts = [zero] + [zero if e == dim else b.get(ix).value for e, ix in enumerate(idx)]
        return [B.dynamic_slice(b.slab(x), starts, [b.n, *sizes])]
    xv = b.get(x)
    if not b.any_batched(idx):
        starts = [b.index_zero(idx)] + [b.get(ix).value for ix in idx]
        return [B.dynamic_slice(xv.value, starts, [b.n, *sizes])]
    read = _row_read(b, x, idx, sizes)
    if read is None:
        return [_gathered_slice(b, op)]
    return [_row_range(b, xv.value, idx, sizes, *read)]


def _dynamic_update_slice_check(b: Batcher, op) -> bool:
    return b.any_batched(op.operands)  # (at batched indices: a scatter, _scattered_update at the end)


@batching_rule("stablehlo.dynamic_update_slice", check=_dynamic_update_slice_check)
def _dynamic_update_slice(b: Batcher, op) -> list[ir.Value]:
    idx = list(op.operands[2:])
    if b.any_batched(idx):
        return [_scattered_update(b, op)]
    starts = [b.index_zero(idx)] + [b.get(ix).value for ix in idx]
    return [B.dynamic_update_slice(b.batched(op.operands[0]), b.batched(op.operands[1]), starts)]


# -- indexing at batched indices, windows, factorizations (for vmap's loops) -------------------
def _stacked_starts(b: Batcher, starts: list) -> ir.Value:
    """The batched scalar start indices ``starts`` side by side, ``[n, len(starts)]`` (of one
    integer type: i64 when they differ)."""
    types = {str(element_type_of(s)) for s in starts}
    et = element_type_of(starts[0]) if len(types) == 1 else ir.IntegerType.get_signless(64)
    cols = [B.reshape(s if element_type_of(s) == et else B.convert(s, et), [b.n, 1]) for s in starts]
    return cols[0] if len(cols) == 1 else B.concatenate(cols, 1)


def _gathered_slice(b: Batcher, op) -> ir.Value:
    """A ``dynamic_slice`` at batched start indices as one gather (which clamps its starts
    into bounds exactly as ``dynamic_slice`` does)."""
    x, idx = op.operands[0], list(op.operands[1:])
    sizes = i64_list(op.attributes["slice_sizes"])
    starts = _stacked_starts(b, [b.batched(ix) for ix in idx])
    dims = list(range(1, len(idx) + 1))
    xv = b.get(x)
    if xv.batched:  # iteration t slices row t of the batched operand
        return B.gather(xv.value, starts, offset_dims=dims, collapsed_slice_dims=[], start_index_map=dims,
                        index_vector_dim=1, slice_sizes=[1, *sizes], operand_batching_dims=[0],
                        start_indices_batching_dims=[0])
    return B.gather(xv.value, starts, offset_dims=dims, collapsed_slice_dims=[], start_index_map=list(range(len(idx))),
                    index_vector_dim=1, slice_sizes=sizes)


def _scattered_update(b: Batcher, op) -> ir.Value:
    """A ``dynamic_update_slice`` at batched start indices as one scatter into the batched
    operand (row t written at iteration t's indices). ``dynamic_update_slice`` clamps its
    starts so that the update fits, a scatter would skip it: the starts are clamped first."""
    x, upd, idx = op.operands[0], op.operands[1], list(op.operands[2:])
    xs, us = shape_of(x), shape_of(upd)
    clamped = []
    for d, ix in enumerate(idx):
        t = ranked([], element_type_of(ix))
        clamped.append(B.clamp(B.full(0, t), b.batched(ix), B.full(xs[d] - us[d], t)))
    dims = list(range(1, len(idx) + 1))
    return B.scatter(b.batched(x), _stacked_starts(b, clamped), b.batched(upd), update_window_dims=dims,
                     inserted_window_dims=[], scatter_dims_to_operand_dims=dims, index_vector_dim=1,
                     input_batching_dims=[0], scatter_indices_batching_dims=[0], combiner=None)


def _gather_dims(op):
    d = hlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    return (list(d.offset_dims), list(d.collapsed_slice_dims), list(d.operand_batching_dims),
            list(d.start_indices_batching_dims), list(d.start_index_map), int(d.index_vector_dim))


@batching_rule("stablehlo.gather")
def _gather(b: Batcher, op) -> list[ir.Value]:
    offset, collapsed, obd, sibd, sim, ivd = _gather_dims(op)
    sizes = i64_list(op.attributes["slice_sizes"])
    x = b.get(op.operands[0])
    if not x.batched:  # batched indices only: a new leading index dimension, the result's first
        return [B.gather(x.value, b.get(op.operands[1]).value, offset_dims=_shift(offset),
                         collapsed_slice_dims=collapsed, start_index_map=sim, index_vector_dim=ivd + 1,
                         slice_sizes=sizes, operand_batching_dims=obd, start_indices_batching_dims=_shift(sibd))]
    # a batched operand: iteration t gathers from row t (a batching dimension of both)
    return [B.gather(x.value, b.batched(op.operands[1]), offset_dims=_shift(offset),
                     collapsed_slice_dims=_shift(collapsed), start_index_map=_shift(sim), index_vector_dim=ivd + 1,
                     slice_sizes=[1, *sizes], operand_batching_dims=[0, *_shift(obd)],
                     start_indices_batching_dims=[0, *_shift(sibd)])]


def _scatter_check(b: Batcher, op) -> bool:
    if captured_values(op):
        raise Reject("scatter: an update computation that reads outside values")
    return b.any_batched(op.operands)


@batching_rule("stablehlo.scatter", check=_scatter_check)
def _scatter(b: Batcher, op) -> list[ir.Value]:
    # every operand batched: iteration t scatters its updates into row t
    d = hlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    dn = B.scatter_dimension_numbers(
        update_window_dims=_shift(d.update_window_dims), inserted_window_dims=_shift(d.inserted_window_dims),
        scatter_dims_to_operand_dims=_shift(d.scattered_dims_to_operand_dims), index_vector_dim=d.index_vector_dim + 1,
        input_batching_dims=[0, *_shift(d.input_batching_dims)],
        scatter_indices_batching_dims=[0, *_shift(d.scatter_indices_batching_dims)])
    attrs = copy_attrs(op)
    attrs["scatter_dimension_numbers"] = dn
    attrs["indices_are_sorted"] = ir.BoolAttr.get(False)  # (not across the new dimension)
    types = [ranked([b.n, *shape_of(r)], element_type_of(r)) for r in op.results]
    return _with_body_of(op, [b.batched(x) for x in op.operands], types, attrs)


def _reduce_window_check(b: Batcher, op) -> bool:
    k = len(op.operands) // 2
    if b.any_batched(op.operands[k:]):
        raise Reject("reduce_window: an init value that changes per iteration")
    if captured_values(op):
        raise Reject("reduce_window: a body that reads outside values")
    return b.any_batched(op.operands[:k])


@batching_rule("stablehlo.reduce_window", check=_reduce_window_check)
def _reduce_window(b: Batcher, op) -> list[ir.Value]:
    # a window of one along the new dimension
    k = len(op.operands) // 2
    a = op.attributes
    attrs = copy_attrs(op)
    for name in ("window_dimensions", "window_strides", "base_dilations", "window_dilations"):
        if name in a:
            attrs[name] = i64_array([1, *i64_list(a[name])])
    if "padding" in a:
        pad = i64_list(a["padding"])
        attrs["padding"] = padding_attr([(0, 0), *zip(pad[0::2], pad[1::2])])
    types = [ranked([b.n, *shape_of(r)], element_type_of(r)) for r in op.results]
    return _with_body_of(op, [b.batched(x) for x in op.operands[:k]] + [b.get(x).value for x in op.operands[k:]],
                         types, attrs)


@batching_rule("stablehlo.cholesky")
def _cholesky(b: Batcher, op) -> list[ir.Value]:  # it factors the trailing two dimensions
    return [B.op1(op.operation.name, [b.get(op.operands[0]).value], _out(b, op), copy_attrs(op))]


@batching_rule("stablehlo.triangular_solve")
def _triangular_solve(b: Batcher, op) -> list[ir.Value]:  # leading dimensions are batch dimensions
    return [B.op1(op.operation.name, [b.batched(x) for x in op.operands], _out(b, op), copy_attrs(op))]


# -- branches (a traced if in a mapped function): both computed, the results selected --------
class _RegionBatcher(Batcher):
    """Vectorizes the ops of a block nested in the loop body (a branch of an ``if``/``case``,
    the condition or body of an inner loop): ``args`` gives its block arguments' vectorized
    values, every value from outside the block is the enclosing batcher's."""

    def __init__(self, parent: Batcher, block: ir.Block, args: dict | None = None):
        super().__init__(block, parent.counter, parent.lo, parent.n, {}, {}, parent.max_elements, parent.reverse)
        self.parent = parent
        self.args = args or {}

    def _outside(self, v: ir.Value) -> bool:
        d = defining_op(v)
        return d is None or d.operation.block != self.body

    def check(self, v: ir.Value) -> bool:
        if v in self.args:
            return self.args[v].batched
        return self.parent.check(v) if self._outside(v) else super().check(v)

    def get(self, v: ir.Value) -> BVal:
        if v in self.args:
            return self.args[v]
        return self.parent.get(v) if self._outside(v) else super().get(v)

    def slab_of(self, v: ir.Value):
        return self.parent.slab_of(v) if self._outside(v) else super().slab_of(v)

    def slab(self, v: ir.Value) -> ir.Value:
        return self.parent.slab(v) if self._outside(v) else super().slab(v)

    def offset(self, v: ir.Value, depth: int = 8) -> int | None:
        return self.parent.offset(v, depth) if self._outside(v) else super().offset(v, depth)

    def _iteration_env(self) -> dict:
        return self.parent._iteration_env()


def _branch_parts(b: Batcher, op) -> tuple[list, list]:
    """The batchers of the branches of ``op`` and the values each returns."""
    blocks = [single_block(r) for r in op.regions]
    if any(blk is None for blk in blocks):
        raise Reject(f"{op.operation.name}: a branch with several blocks")
    return [_RegionBatcher(b, blk) for blk in blocks], [list(terminator(blk).operands) for blk in blocks]


def _branches_check(b: Batcher, op) -> bool:
    subs, rets = _branch_parts(b, op)
    flags = [b.check(op.operands[0])] + [sb.check(v) for sb, ret in zip(subs, rets) for v in ret]
    return any(flags)


@batching_rule("stablehlo.if", "stablehlo.case", check=_branches_check)
def _branches(b: Batcher, op) -> list[ir.Value]:
    # every branch computed for every iteration (their ops are pure), the taken one selected:
    # case takes its last branch for an index out of range
    subs, rets = _branch_parts(b, op)
    sel = b.get(op.operands[0])
    outs = []
    for k, r in enumerate(op.results):
        full = [b.n, *shape_of(r)]
        vals = [sb.batched(ret[k]) for sb, ret in zip(subs, rets)]

        def pick(p: ir.Value) -> ir.Value:  # a predicate for select: per iteration, or one for all
            return B.broadcast_in_dim(p, full, [0]) if sel.batched else p

        if op.operation.name == "stablehlo.if":
            outs.append(B.select(pick(sel.value), vals[0], vals[1]))
            continue
        acc = vals[-1]
        for j in reversed(range(len(vals) - 1)):
            eq = B.compare(sel.value, B.full(j, sel.value.type), "EQ")
            acc = B.select(pick(eq), vals[j], acc)
        outs.append(acc)
    return outs


# -- an inner loop (a loop in a mapped function): one loop over batched carried values ---------
def _inner_loop_slots(b: Batcher, op) -> list[bool]:
    """Which carried slots of the inner loop ``op`` are batched: those whose initial value is,
    and those the body makes so (to a fixed point). Its condition must be the same for every
    iteration of the outer loop (the trip count stays one number)."""
    cond, body = single_block(op.regions[0]), single_block(op.regions[1])
    if cond is None or body is None:
        raise Reject("while: a region with several blocks")
    if any(b.slab_of(v) is not None for v in captured_values(op)):
        raise Reject("while: reads a carried array of the outer loop")
    flags = [b.check(v) for v in op.operands]
    while True:
        sb = _RegionBatcher(b, body, {a: BVal(a, f) for a, f in zip(body.arguments, flags)})
        new = [f or sb.check(y) for f, y in zip(flags, terminator(body).operands)]
        if new == flags:
            break
        flags = new
    sc = _RegionBatcher(b, cond, {a: BVal(a, f) for a, f in zip(cond.arguments, flags)})
    if sc.check(terminator(cond).operands[0]):
        raise Reject("while: a trip count that differs between iterations of the outer loop")
    return flags


def _inner_loop_check(b: Batcher, op) -> bool:
    return any(_inner_loop_slots(b, op))


@batching_rule("stablehlo.while", check=_inner_loop_check)
def _inner_loop(b: Batcher, op) -> list[ir.Value]:
    flags = _inner_loop_slots(b, op)
    for v in captured_values(op):  # built here, before the loop (not inside its regions)
        b.get(v)
    inits = [b.batched(v) if f else b.get(v).value for v, f in zip(op.operands, flags)]
    types = [v.type for v in inits]
    new = B.create("stablehlo.while", inits, types, copy_attrs(op), regions=2)
    for k in range(2):
        old = single_block(op.regions[k])
        blk = ir.Block.create_at_start(new.regions[k], types)
        rb = _RegionBatcher(b, old, {a: BVal(na, f) for a, na, f in zip(old.arguments, blk.arguments, flags)})
        with ir.InsertionPoint(blk):
            ys = list(terminator(old).operands)
            outs = [rb.get(ys[0]).value] if k == 0 else [
                rb.batched(y) if f else rb.get(y).value for y, f in zip(ys, flags)]
            B.create("stablehlo.return", outs, [])
    return list(new.results)
