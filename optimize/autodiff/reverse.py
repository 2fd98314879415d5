"""Reverse mode (adjoints / VJP).

At the marker the primal ops of the prepared function are cloned in order (the forward
sweep, whose values the adjoint sweep reuses), then the adjoint sweep walks the ops in
reverse and each active op's reverse rule turns the cotangents of its results into
cotangents of its operands, accumulated with ``add`` (a value with no cotangent has none:
zeros are materialized only where a result needs one).

Scopes say where primal values come from and where code goes:

* :class:`TopScope`: the marker's block; primal values are the forward sweep's clones.
* :class:`TapeBranchScope`: one branch of the adjoint of an ``if``/``case`` whose primal ran
  in the enclosing forward sweep. The adjoint ``if``/``case`` branches on the same
  predicate; each branch runs its adjoint and returns the cotangents of the active values it
  captures (zeros from the other branches). The primal values a branch's adjoint needs are
  taken from the primal op, rebuilt to return them as extra results (a tape; zeros from the
  branches that do not compute them); constants and index arithmetic are recomputed.
* :class:`BranchScope`: the same inside a reverse loop body, where no primal of the branch
  exists: the branch's primal is recomputed at the start of the adjoint branch.
* :class:`~.loops.LoopRevScope`: the body of a reverse loop (``loops.py``).
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.attrs import copy_attrs, i64_list
from ...ir.manual import (MANUAL, axis_groups, create_manual, manual_axes, mesh_axes, per_value_shardings,
                          sharding_axes, varying)
from ...ir.custom_derivatives import SAVED_VALUE, target_of
from ...ir.markers import Activity as A, RETURNS_PRIMAL, SEEDED
from ...ir.opinfo import info
from ...ir.regions import block_ops, captured_values, clone_op, terminator
from ...ir.types import element_type_of, is_integer_type, ranked, shape_of
from ...ir.values import defining_op, is_within
from . import emit as E
from .activity import Activity
from .errors import ADError
from .ir_util import NO_MOVE
from .rules import NONDIFF, RULES


class Engine:
    def __init__(self, act: Activity, options):
        self.act = act
        self.options = options


class Scope:
    """Where the adjoint code of a block is emitted, and how primal values are found."""

    def __init__(self, eng: Engine, parent: "Scope | None", ip: ir.InsertionPoint):
        self.eng = eng
        self.parent = parent
        self.ip = ip
        self.ct: dict = {}
        self.plain: dict = {}  # source while op -> its plain clone in this scope
        self.P: dict = {}
        # inside a manual computation: (value -> varying axes, mesh axis sizes)
        self.manual = parent.manual if parent is not None else None

    def get(self, v):  # pragma: no cover - overridden
        raise NotImplementedError

    def add_ct(self, v, g) -> None:
        if g is None or not self.eng.act.is_active(v):
            return
        cur = self.ct.get(v)
        if cur is None:
            self.ct[v] = g
        else:
            with self.ip:
                self.ct[v] = E.accumulate(cur, g)


class TopScope(Scope):
    def __init__(self, eng, P: dict, ip):
        super().__init__(eng, None, ip)
        self.P = P

    def get(self, v):
        r = self.P.get(v)
        if r is None:
            raise ADError("internal: primal value not available in the forward sweep")
        return r


class BranchScope(Scope):
    def get(self, v):
        r = self.P.get(v)
        if r is not None:
            return r
        return self.parent.get(v)


class TapeBranchScope(Scope):
    """One branch of the adjoint of an ``if``/``case`` whose primal ran in the forward sweep:
    the values the adjoint needs come from the primal branch as extra results (a *tape*;
    placeholders until the primal op is rebuilt), cheap index values are recomputed."""

    def __init__(self, eng, parent, ip, head_ip, src_op, index: int, rev_op, tape: list):
        super().__init__(eng, parent, ip)
        self.head_ip = head_ip
        self.src_op = src_op
        self.index = index
        self.rev_op = rev_op
        self.tape = tape  # shared by the branches: (branch index, source value, placeholder)

    def get(self, v):
        r = self.P.get(v)
        if r is not None:
            return r
        if not is_within(v, self.src_op):
            return self.parent.get(v)
        o = defining_op(v)
        if o is not None and o.parent.operation == self.src_op and _cheap(o, self.src_op):
            with self.head_ip, o.location:
                new = clone_op(o, self.get)
            for a, b in zip(o.results, new.results):
                self.P[a] = b
            return self.P[v]
        with ir.InsertionPoint(self.rev_op), self.rev_op.location:
            ph = E.placeholder(v.type)
        self.tape.append((self.index, v, ph))
        self.P[v] = ph
        return ph


def _cheap(o, src_op) -> bool:
    """Recompute rather than tape: constants, iotas, and integer index arithmetic or plain data
    movement (broadcast, reshape, convert, slice, transpose) of such values or of values from
    outside the branch."""
    if o.name in ("stablehlo.constant", "stablehlo.iota"):
        return True
    if len(o.regions) or o.name in NO_MOVE:
        return False
    if not info(o.name).move and not all(is_integer_type(element_type_of(r)) for r in o.results):
        return False
    for v in o.operands:
        if is_within(v, src_op):
            d = defining_op(v)
            if d is None or not _cheap(d, src_op):
                return False
    return True


class ManualScope(Scope):
    """The body of a manual computation's adjoint (isolated from above: every primal value
    is recomputed in it)."""

    def get(self, v):
        r = self.P.get(v)
        if r is None:
            raise ADError("internal: primal value not available in the manual computation's adjoint")
        return r


class SegmentScope(Scope):
    """A block with no source values of its own (the body of a checkpoint segment loop)."""

    def get(self, v):
        return self.parent.get(v)


def forward_sweep(scope: Scope, ops) -> None:
    """Clone ``ops`` with ``scope.get``; remember plain clones of loops."""
    for op in ops:
        op = op.operation
        with op.location:
            new = clone_op(op, scope.get)
        for a, b in zip(op.results, new.results):
            scope.P[a] = b
        if op.name in ("stablehlo.while", "stablehlo.if", "stablehlo.case", MANUAL):
            scope.plain[op] = new
        elif target_of(op) == SAVED_VALUE:
            _take_saved(scope, op)


def _take_saved(scope: Scope, op) -> None:
    """``saved_value(saved, recomputed)`` (a checkpoint's saved value): from here on the primal
    of ``recomputed`` is ``saved``, and so is that of what ``recomputed`` is a reshape or
    transpose of (where the optimizer moved those after the saved op): the rules read these
    primals, so the recomputation is left unused (dead code)."""
    s = scope.get(op.operands[0])
    r = op.operands[1]
    scope.P[r] = s
    d = defining_op(r)
    while d is not None and d.operation.name in ("stablehlo.reshape", "stablehlo.transpose"):
        src = d.operands[0]
        if d.operation.name == "stablehlo.reshape":
            s = B.reshape(s, list(shape_of(src)))
        else:
            s = B.transpose(s, B.inverse_permutation(i64_list(d.attributes["permutation"])))
        scope.P[src] = s
        d = defining_op(src)


def reverse_block(scope: Scope, ops) -> None:
    """The adjoint sweep over ``ops`` (a block's ops in forward order) in ``scope``."""
    from .loops import reverse_while

    act = scope.eng.act
    for op in reversed(list(ops)):
        op = op.operation
        cts = [scope.ct.get(r) for r in op.results]
        if all(c is None for c in cts):
            continue
        name = op.name
        if name == "stablehlo.while":
            reverse_while(scope, op, cts)
            continue
        if name in ("stablehlo.if", "stablehlo.case"):
            reverse_branch(scope, op, cts)
            continue
        if name == MANUAL:
            reverse_manual(scope, op, cts)
            continue
        if name in NONDIFF:
            continue
        want = [act.is_active(v) for v in op.operands]
        caps = captured_values(op) if len(op.regions) else []
        if any(act.is_active(c) for c in caps):
            raise ADError(f"no derivative rule for {name} with a differentiated value captured by its region", op)
        if not any(want):
            continue
        rule = RULES.get(name)
        if rule is None or rule.rev is None:
            raise ADError(f"no derivative rule for {name}", op)
        with scope.ip, op.location:
            outs = list(rule.rev(scope, op, cts, want))
            if scope.manual is not None:
                outs = [_sum_over_devices(scope, op, v, g) if w and g is not None else g
                        for v, w, g in zip(op.operands, want, outs)]
        for v, w, g in zip(op.operands, want, outs):
            if w and g is not None:
                scope.add_ct(v, g)


def _sum_over_devices(scope: Scope, op, v, g):
    """Where a value invariant over some mesh axes feeds an op whose results vary over them
    (an implicit broadcast to the devices), its cotangent is the sum over those devices."""
    vary, sizes = scope.manual
    out = frozenset().union(*(vary.get(r, frozenset()) for r in op.results))
    extra = [a for a in sizes if a in out and a not in vary.get(v, frozenset())]
    return B.all_reduce(g, axis_groups(sizes, extra).tolist()) if extra else g


def reverse_manual(scope: Scope, op, cts) -> None:
    """The adjoint of a manual computation is a manual computation: it takes the primal
    operands, the results' cotangents (sharded as the results) and the primal values its body
    needs, and returns the active operands' cotangents (sharded as the operands).

    Where the primal ran in this scope's forward sweep, the values the adjoint needs are
    extra results of the primal (a tape: each device's value, stacked along a new leading
    dimension split over every manual axis); otherwise (inside a reverse loop) the body's
    forward pass is recomputed in the adjoint. A result declared replicated over axes its
    value varies over reaches each of those devices as an equal share of its cotangent."""
    act = scope.eng.act
    body = op.regions[0].blocks[0]
    ret = terminator(body)
    I = [i for i, v in enumerate(op.operands) if act.is_active(v)]
    J = [j for j, g in enumerate(cts) if g is not None]
    if not I or not J:
        return
    ins, outs = per_value_shardings(op, "in_shardings"), per_value_shardings(op, "out_shardings")
    axes = manual_axes(op)
    sizes = mesh_axes(_module_op(op))
    vary = varying(body, [frozenset(a for d in sharding_axes(t) for a in d) for t in ins], sizes)
    plain = scope.plain.get(op)
    operands = [scope.get(v) for v in op.operands] + [cts[j] for j in J]
    block_types = [a.type for a in body.arguments] + [ret.operands[j].type for j in J]
    with scope.ip, op.location:
        adj, blk = create_manual(operands, [op.operands[i].type for i in I], ins + [outs[j] for j in J],
                                 [ins[i] for i in I], axes, block_types)
    if plain is None:
        ms = ManualScope(scope.eng, None, ir.InsertionPoint(blk))
        ms.P = dict(zip(body.arguments, blk.arguments))
        with ms.ip, op.location:
            forward_sweep(ms, block_ops(body))
    else:
        with ir.InsertionPoint(blk), op.location:
            sentinel = B.create("enzyme.sentinel", [], [])
        ms = TapeManualScope(scope.eng, ir.InsertionPoint(blk), ir.InsertionPoint(sentinel), op)
        ms.P = dict(zip(body.arguments, blk.arguments))
    ms.manual = (vary, sizes)
    with ms.ip, op.location:
        nb = len(body.arguments)
        for k, j in enumerate(J):
            g = blk.arguments[nb + k]
            r = ret.operands[j]
            split = {a for d in sharding_axes(outs[j]) for a in d}
            claimed = [a for a in sizes if a in vary.get(r, frozenset()) and a not in split]
            if claimed:
                g = B.divide(g, B.full_like(g, int(np.prod([sizes[a] for a in claimed]))))
            ms.add_ct(r, g)
    reverse_block(ms, block_ops(body))
    with ms.ip, op.location:
        B.create("sdy.return", [ms.ct.get(body.arguments[i]) if ms.ct.get(body.arguments[i]) is not None
                                else B.zeros(body.arguments[i].type) for i in I], [])
    if plain is not None:
        sentinel.erase()
        if ms.tape:
            adj = _with_tape(scope, op, plain, adj, ms.tape, axes, sizes)
    for i, r in zip(I, adj.results):
        scope.add_ct(op.operands[i], r)


class TapeManualScope(Scope):
    """The body of a manual computation's adjoint whose primal ran in the forward sweep: the
    primal values it needs are taped (placeholders until the primal is rebuilt to return
    them); constants and cheap index arithmetic are recomputed."""

    def __init__(self, eng, ip, head_ip, src_op):
        super().__init__(eng, None, ip)
        self.head_ip = head_ip
        self.src_op = src_op
        self.tape: list = []  # (source value, placeholder)

    def get(self, v):
        r = self.P.get(v)
        if r is not None:
            return r
        o = defining_op(v)
        if o is None or o.parent.operation != self.src_op:
            raise ADError("internal: a value from outside an isolated manual computation")
        if _recompute(o):
            with self.head_ip, o.location:
                new = clone_op(o, self.get)  # operands taped or recomputed in turn
            for a, b in zip(o.results, new.results):
                self.P[a] = b
            return self.P[v]
        with self.head_ip, o.location:
            ph = E.placeholder(v.type)
        self.tape.append((v, ph))
        self.P[v] = ph
        return ph


def _recompute(o) -> bool:
    """Recompute rather than tape: constants, iotas, plain data movement and integer index
    arithmetic (of whatever their operands are)."""
    if o.name in ("stablehlo.constant", "stablehlo.iota"):
        return True
    if len(o.regions) or o.name in NO_MOVE:
        return False
    return info(o.name).move or all(is_integer_type(element_type_of(r)) for r in o.results)


def _stacked(sharding_text: str, axes, rank: int) -> str:
    """``<@mesh, [{axes...}, {}, ...]>``: a new leading dimension split over ``axes``."""
    mesh = sharding_text[1:sharding_text.index(",")]
    dims = ["{" + ", ".join(f'"{a}"' for a in axes) + "}"] + ["{}"] * rank
    return f"<{mesh}, [{', '.join(dims)}]>"


def _move_body(src: ir.Block, dst: ir.Block, after) -> None:
    """Move every op of ``src`` to the end of ``dst`` (after op ``after``), its block arguments'
    uses going to ``dst``'s first arguments."""
    for a, b in zip(src.arguments, dst.arguments):
        a.replace_all_uses_with(b)
    for o in list(src.operations):
        o.operation.move_after(after)
        after = o.operation


def _with_tape(scope: Scope, op, plain, adj, tape: list, axes, sizes):
    """Rebuild the primal manual computation ``plain`` to also return the taped values and
    the adjoint ``adj`` to take them; returns the new adjoint."""
    n_dev = int(np.prod([sizes[a] for a in axes]))
    first = per_value_shardings(op, "in_shardings")[0] if len(op.operands) else per_value_shardings(
        op, "out_shardings")[0]
    shapes = [shape_of(v.type) for v, _ in tape]
    local = [ranked([1, *s], element_type_of(v)) for (v, _), s in zip(tape, shapes)]
    glob = [ranked([n_dev, *s], element_type_of(v)) for (v, _), s in zip(tape, shapes)]
    stack = [_stacked(first, axes, len(s)) for s in shapes]
    # the primal, returning each device's taped values
    body = op.regions[0].blocks[0]
    pbody = plain.regions[0].blocks[0]
    clone_of = {}
    for a, b in zip(block_ops(body), block_ops(pbody)):
        clone_of.update(zip(a.results, b.results))
    clone_of.update(zip(body.arguments, pbody.arguments))
    ins, outs = per_value_shardings(op, "in_shardings"), per_value_shardings(op, "out_shardings")
    with ir.InsertionPoint(plain), op.location:
        prim, pblk = create_manual(list(plain.operands), [r.type for r in plain.results] + glob, ins, outs + stack,
                                   axes, [a.type for a in pbody.arguments])
        anchor = B.create("enzyme.sentinel", [], [], ip=ir.InsertionPoint(pblk))
    old_ret = terminator(pbody)
    _move_body(pbody, pblk, anchor)
    with ir.InsertionPoint(old_ret), op.location:
        extra = [B.reshape(clone_of[v], [1, *s]) for (v, _), s in zip(tape, shapes)]
        B.create("sdy.return", list(old_ret.operands) + extra, [])
    old_ret.erase()
    anchor.erase()
    n = len(plain.results)
    for a, b in zip(plain.results, prim.results):
        a.replace_all_uses_with(b)
    for src_r, b in zip(op.results, list(prim.results)[:n]):
        if src_r in scope.P:
            scope.P[src_r] = b
    plain.erase()
    scope.plain[op] = prim
    # the adjoint, taking them
    ablk = adj.regions[0].blocks[0]
    a_ins = ins + [per_value_shardings(adj, "in_shardings")[k] for k in range(len(ins), len(adj.operands))]
    with ir.InsertionPoint(adj), op.location:
        new, nblk = create_manual(list(adj.operands) + list(prim.results)[n:], [r.type for r in adj.results],
                                  a_ins + stack, per_value_shardings(adj, "out_shardings"), axes,
                                  [a.type for a in ablk.arguments] + local)
    k0 = len(ablk.arguments)
    with ir.InsertionPoint(nblk), op.location:
        anchor = B.create("enzyme.sentinel", [], [])
        for (_, ph), s, arg in zip(tape, shapes, list(nblk.arguments)[k0:]):
            ph.replace_all_uses_with(B.reshape(arg, list(s)))
            ph.owner.operation.erase()
    _move_body(ablk, nblk, list(nblk.operations)[-1].operation)
    anchor.erase()
    adj.erase()
    return new


def _module_op(op):
    o = op
    while o.parent is not None:
        o = o.parent
    return o


def reverse_branch(scope: Scope, op, cts) -> None:
    act = scope.eng.act
    O = [v for v in captured_values(op) if act.is_active(v)]
    if not O:
        return
    plain = scope.plain.get(op)
    with scope.ip, op.location:
        new = B.create(op.name, [scope.get(op.operands[0])], [v.type for v in O], copy_attrs(op) or None,
                       regions=len(op.regions))
    tape: list = []
    for i, region in enumerate(op.regions):
        src = region.blocks[0]
        blk = ir.Block.create_at_start(new.regions[i], [])
        if plain is None:
            # no primal of this op in scope (inside a reverse loop): recompute the branch
            bs = BranchScope(scope.eng, scope, ir.InsertionPoint(blk))
            with bs.ip, op.location:
                forward_sweep(bs, block_ops(src))
            sentinel = None
        else:
            with ir.InsertionPoint(blk), op.location:
                sentinel = B.create("enzyme.sentinel", [], [])
            bs = TapeBranchScope(scope.eng, scope, ir.InsertionPoint(blk), ir.InsertionPoint(sentinel), op, i, new,
                                tape)
        ret = terminator(src)
        for j, g in enumerate(cts):
            if g is not None:
                bs.add_ct(ret.operands[j], g)
        reverse_block(bs, block_ops(src))
        with bs.ip, op.location:
            outs = [bs.ct.get(v) if bs.ct.get(v) is not None else B.zeros(v.type) for v in O]
            B.create("stablehlo.return", outs, [])
        if sentinel is not None:
            sentinel.erase()
    if plain is not None:
        _rebuild_with_tape(scope, op, plain, tape)
    for v, r in zip(O, new.results):
        scope.add_ct(v, r)


def _rebuild_with_tape(scope: Scope, op, plain, tape: list) -> None:
    """Replace the primal ``if``/``case`` by one that also returns the taped values (zeros from
    the branches that do not define them)."""
    n = len(op.results)
    if not tape:
        return
    types = [r.type for r in op.results] + [v.type for _, v, _ in tape]
    with ir.InsertionPoint(plain), op.location:
        aug = B.create(op.name, [plain.operands[0]], types, copy_attrs(op) or None, regions=len(op.regions))
    for i, region in enumerate(op.regions):
        src = region.blocks[0]
        blk = ir.Block.create_at_start(aug.regions[i], [])
        env: dict = {}
        g = lambda v: env[v] if v in env else scope.get(v)  # noqa: E731
        with ir.InsertionPoint(blk), op.location:
            for o in block_ops(src):
                c = clone_op(o, g)
                env.update(zip(o.results, c.results))
            outs = [g(v) for v in terminator(src).operands]
            outs += [g(v) if bi == i else B.zeros(v.type) for bi, v, _ in tape]
            B.create("stablehlo.return", outs, [])
    res = list(aug.results)
    for a, b in zip(plain.results, res[:n]):
        a.replace_all_uses_with(b)
    for src_r, b in zip(op.results, res[:n]):
        if src_r in scope.P:
            scope.P[src_r] = b
    plain.erase()
    scope.plain.pop(op, None)
    for (_, _, ph), val in zip(tape, res[n:]):
        ph.replace_all_uses_with(val)
        ph.owner.operation.erase()


def expand_reverse(spec, work, act: Activity, options) -> list:
    """Emit the reverse-mode expansion of marker ``spec`` before it; returns its results."""
    eng = Engine(act, options)
    body = work.regions[0].blocks[0]
    P = dict(zip(body.arguments, spec.args))
    top = TopScope(eng, P, ir.InsertionPoint(spec.op))
    with top.ip, spec.op.location:
        forward_sweep(top, block_ops(body))
    ret = terminator(body)
    for j, a in enumerate(spec.ret_activity):
        if a in SEEDED:
            top.add_ct(ret.operands[j], spec.seeds[j])
    reverse_block(top, block_ops(body))
    with top.ip, spec.op.location:
        outs = [top.get(ret.operands[j]) for j, a in enumerate(spec.ret_activity) if a in RETURNS_PRIMAL]
        for i, a in enumerate(spec.activity):
            arg = body.arguments[i]
            g = top.ct.get(arg)
            if a == A.ACTIVE:
                outs.append(g if g is not None else B.zeros(arg.type))
            elif a == A.DUP:
                sh = spec.shadows[i]
                outs.append(E.accumulate(sh, g))
    return outs
