"""Reverse mode through ``stablehlo.while``.

Strategy (one loop ``W`` with carried slots 0..n-1):

1. **Reverse loop first.** A reverse ``while`` counts the forward iteration index ``k``
   down from the trip count to 0; its carry holds the cotangents of the active slots and
   accumulators for the active values the body captures from outside the loop. Its body is
   the adjoint of ``W``'s body. Whenever that adjoint needs a primal value of iteration ``k``
   (:meth:`LoopRevScope.get`) it is
   * taken from outside the loop when it is loop invariant (defined outside ``W``, a
     pass-through slot, or hoisted out by the preparation step),
   * recomputed in the reverse body when it depends only on the induction variable
     (``init + k*step``), constants and invariants (index arithmetic, ``x[i]``...),
   * otherwise **cached**: read with ``dynamic_slice`` at ``k`` from a stacked tensor
     ``tensor<N x ...>`` (a placeholder until step 2).
2. **Augmented forward loop.** ``W`` is re-emitted with an iteration counter and one stack
   per cached value, written with ``dynamic_update_slice`` at ``k`` each iteration. It
   replaces the primal clone of ``W`` (so the primal runs once), and its stacks replace the
   placeholders.

Trip count. The stacks need a static size N. The common counter pattern (an integer slot
compared LT/LE/GT/GE/NE against a constant bound, stepped by a constant, from a constant
init: JAX's ``fori_loop``/``scan``) gives N exactly and the reverse loop runs N times (with a
constant bound, so a second differentiation recognizes it too). For other loops the trip
count is not known at compile time and cannot be obtained from a counting pre-pass with
static shapes; set ``PassOptions.ad_max_trip_count = N`` to allocate stacks of N
entries: the forward loop runs unchanged and counts its iterations, the reverse loop runs
that many, and if the loop ran more than N times every cotangent the loop produces is NaN
(the run-time check; XLA has no exceptions). Without the option such a loop raises
:class:`ADError` naming it.

Checkpointing. ``PassOptions.ad_checkpoint = "sqrt"`` (period ceil(sqrt(N))) or an
int period c stores only the carried state at the start of every c-th iteration (``N/c``
snapshots) in a two-level forward loop; the reverse loop walks the segments backwards,
recomputes each segment from its snapshot with the caching forward loop above (c entries),
and runs the segment's reverse loop. Memory O((N/c + c) x state) instead of O(N x cached),
for one extra forward pass.

Nested loops: the reverse of an inner loop (inside the adjoint of an outer body) recomputes
the inner forward loop from its (cached) inputs, so only the inputs of the inner loop are
cached per outer iteration.
"""

from __future__ import annotations

import math

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.loops import WhileLoopInfo, analyze, slot_of, while_parts
from ...ir.opinfo import info as op_info
from ...ir.regions import block_ops, captured_values, clone_op, terminator, walk_nested
from ...ir.types import element_type_of, i64, num_elements, ranked, shape_of
from ...ir.values import defining_op, is_within
from . import emit as E
from .errors import ADError
from .ir_util import NO_MOVE
from .reverse import Scope, SegmentScope, reverse_block

# ---------------------------------------------------------------------------------------------
# the reverse loop body scope


def _carried_dependent(w, info: WhileLoopInfo) -> set:
    """Body values that depend on carried state other than pass-through and induction slots."""
    _, _, body, _ = while_parts(w)
    dep = {a for j, a in enumerate(body.arguments) if j not in info.passthrough and j not in info.steps}
    for o in block_ops(body):
        o = o.operation
        vals = list(o.operands)
        if len(o.regions):
            vals += captured_values(o)
        if o.name in NO_MOVE or any(v in dep for v in vals):
            dep.update(o.results)
    return dep


def _remat(o) -> bool:
    """Data movement (the op table's ``move``) never smaller than its operand is recomputed from
    its (cached) operand rather than cached itself (a broadcast scalar is cached as the scalar,
    a slice as the slice)."""
    return op_info(o.name).move and num_elements(o.results[0]) >= num_elements(o.operands[0])


class LoopRevScope(Scope):
    """The body of a reverse loop: primal values of forward iteration ``k`` (see module doc)."""

    def __init__(self, eng, parent: Scope, w, info: WhileLoopInfo, init_vals, k, head_ip, ip, N: int, rev_op):
        super().__init__(eng, parent, ip)
        self.w = w
        self.info = info
        _, _, self.body, _ = while_parts(w)
        self.init_vals = init_vals
        self.k = k
        self.head_ip = head_ip
        self.N = N
        self.rev_op = rev_op
        self.local: dict = {}
        self.cached: list = []  # (source value, placeholder stack value)
        self.stack_of: dict = {}
        self.pt = {self.body.arguments[j]: init_vals[j] for j in info.passthrough}
        self.ind = {self.body.arguments[j]: (init_vals[j], s) for j, s in info.steps.items()
                    if j not in info.passthrough}
        self.dep = _carried_dependent(w, info)

    def get(self, v):
        r = self.local.get(v)
        if r is not None:
            return r
        if not is_within(v, self.w):
            return self.parent.get(v)
        if v in self.pt:
            r = self.pt[v]
        elif v in self.ind:
            init, step = self.ind[v]
            with self.head_ip:
                kk = B.convert(self.k, element_type_of(init))
                r = B.add(init, B.multiply(kk, B.full(step, init.type)))
        else:
            o = defining_op(v)
            if o is not None and o.parent.operation == self.w and o.name not in NO_MOVE and (
                    v not in self.dep or _remat(o)):
                with self.head_ip, o.location:
                    new = clone_op(o, self.get)
                for a, b in zip(o.results, new.results):
                    self.local[a] = b
                return self.local[v]
            if o is not None and o.parent.operation != self.w:
                raise ADError("internal: a value nested inside the loop body was requested", o)
            r = self._cache(v)
        self.local[v] = r
        return r

    def _stack_for(self, v):
        """The (placeholder) stack caching ``v`` per iteration, created on first use."""
        ph = self.stack_of.get(v)
        if ph is None:
            st = ranked([self.N] + list(shape_of(v)), element_type_of(v))
            with ir.InsertionPoint(self.rev_op), self.rev_op.location:
                ph = E.placeholder(st)
            self.cached.append((v, ph))
            self.stack_of[v] = ph
        return ph

    def _cache(self, v):
        # a carried value at iteration k is what the body returned at iteration k-1 (or the
        # initial value): share that value's stack instead of caching the slot separately
        j = slot_of(v, self.body)
        if j is not None:
            r = terminator(self.body).operands[j]
            o = defining_op(r)
            if o is not None and o.parent.operation == self.w and r in self.dep:
                ph = self._stack_for(r)
                with self.head_ip:
                    prev = B.maximum(B.subtract(self.k, _i64(1)), _i64(0))
                    val = _read(ph, prev, list(shape_of(r)))
                    first = B.compare(self.k, _i64(0), "EQ")
                    return B.select(first, self.init_vals[j], val)
        ph = self._stack_for(v)
        with self.head_ip:
            return _read(ph, self.k, list(shape_of(v)))


# ---------------------------------------------------------------------------------------------
# building blocks


def _clone_region_ops(src_block, env_get, env: dict):
    for o in block_ops(src_block):
        c = clone_op(o, env_get)
        for a, b in zip(o.results, c.results):
            env[a] = b


def _emit_cond(w, env_get, carry, extra_pred=None):
    """Re-emit ``w``'s condition on ``carry`` at the ambient insertion point; returns i1."""
    _, cond, _, _ = while_parts(w)
    env = dict(zip(cond.arguments, carry))
    g = lambda v: env[v] if v in env else env_get(v)  # noqa: E731
    _clone_region_ops(cond, g, env)
    p = g(terminator(cond).operands[0])
    if extra_pred is not None:
        p = B.and_(p, extra_pred)
    return p


def _emit_body(w, env_get, carry):
    """Re-emit ``w``'s body on ``carry``; returns (env dict, new carry)."""
    _, _, body, _ = while_parts(w)
    env = dict(zip(body.arguments, carry))
    g = lambda v: env[v] if v in env else env_get(v)  # noqa: E731
    _clone_region_ops(body, g, env)
    return env, [g(v) for v in terminator(body).operands]


def _new_while(operands, loc):
    types = [v.type for v in operands]
    with loc:
        op = B.create("stablehlo.while", operands, types, regions=2)
        cb = ir.Block.create_at_start(op.regions[0], types)
        bb = ir.Block.create_at_start(op.regions[1], types)
    return op, cb, bb


def _i64(v):
    return B.scalar(v, i64())


def _stack_zero(v, N):
    return B.zeros(ranked([N] + list(shape_of(v)), element_type_of(v)))


def _push(stack, val, k):
    shp = list(shape_of(val))
    z = _i64(0)
    return B.dynamic_update_slice(stack, B.reshape(val, [1] + shp), [k] + [z] * len(shp))


def _read(stack, k, shp):
    z = _i64(0)
    return B.reshape(B.dynamic_slice(stack, [k] + [z] * len(shp), [1] + list(shp)), shp)


def _loop_io(scope: Scope, w):
    """(A: active slots, O: active values from outside the loop that its body uses)."""
    act = scope.eng.act
    _, _, body, _ = while_parts(w)
    n = len(w.operands)
    A = [j for j in range(n) if act.is_active(w.results[j]) or act.is_active(body.arguments[j])]
    seen = {}

    def visit(o):
        for v in o.operands:
            if v not in seen and act.is_active(v) and not is_within(v, w):
                seen[v] = None

    for o in body.operations:
        visit(o)
        if len(o.regions):
            walk_nested(o, visit)
    return A, list(seen)


# ---------------------------------------------------------------------------------------------
# the reverse of one loop


def reverse_while(scope: Scope, w, cts) -> None:
    eng = scope.eng
    A, O = _loop_io(scope, w)
    if not A and not O:
        return
    info = analyze(w)
    if info is None:
        raise ADError("reverse mode through a stablehlo.while with multi-block regions is not supported", w)
    init_vals = [scope.get(v) for v in w.operands]
    plain = scope.plain.get(w)
    with scope.ip, w.location:
        ct_init = [cts[j] if cts[j] is not None else B.zeros(w.results[j].type) for j in A]
        acc_init = [B.zeros(v.type) for v in O]
    T = info.trip_count
    N = T if T is not None else info.trip_bound  # a bound from the ranges of enclosing counters
    if N is None:
        N = eng.options.ad_max_trip_count
        if N is None:
            raise ADError("reverse-mode AD through a stablehlo.while whose trip count is not known at compile "
                          "time (no constant counter pattern): set PassOptions.ad_max_trip_count (reactant.compile("
                          "ad_max_trip_count=...)) to an upper bound", w)
    ck = eng.options.ad_checkpoint
    period = None
    if ck is not None:
        period = max(1, math.ceil(math.sqrt(max(N, 1)))) if ck == "sqrt" else ck
    if period is not None and period < N:
        ct_out, acc_out = _reverse_checkpointed(scope, w, info, init_vals, ct_init, acc_init, A, O, N, period,
                                                T, plain)
    else:
        ct_out, acc_out, _ = _reverse_core(scope, w, info, init_vals, ct_init, acc_init, A, O, N, None, T, plain)
    for j, g in zip(A, ct_out):
        scope.add_ct(w.operands[j], g)
    for v, g in zip(O, acc_out):
        scope.add_ct(v, g)


def _replace_plain(scope: Scope, w, plain, results) -> None:
    for a, b in zip(plain.results, results):
        a.replace_all_uses_with(b)
    for src, b in zip(w.results, results):
        if src in scope.P:
            scope.P[src] = b
    plain.erase()
    scope.plain.pop(w, None)


def _reverse_core(scope: Scope, w, info: WhileLoopInfo, init_vals, ct_init, acc_init, A, O, N: int, limit,
                  static_T, plain):
    """Augmented forward loop + reverse loop. Returns (slot cotangents, accumulators, primal results)."""
    eng = scope.eng
    n = len(w.operands)
    _, _, body, _ = while_parts(w)
    loc = w.location
    # 1. the reverse loop (stacks and the trip count are placeholders until step 2)
    with scope.ip, loc:
        if static_T is not None:
            kstart = _i64(static_T)
        else:
            kstart = E.placeholder(ranked([], i64()))
        rev, rcond, rbody = _new_while(list(ct_init) + list(acc_init) + [kstart], loc)
    with ir.InsertionPoint(rcond), loc:
        k = list(rcond.arguments)[-1]
        B.create("stablehlo.return", [B.compare(k, _i64(0), "GT")], [])
    rargs = list(rbody.arguments)
    with ir.InsertionPoint(rbody), loc:
        km1 = B.subtract(rargs[-1], _i64(1))
        sentinel = B.create("enzyme.sentinel", [], [])
    L = LoopRevScope(eng, scope, w, info, init_vals, km1, ir.InsertionPoint(sentinel), ir.InsertionPoint(rbody), N,
                     rev)
    ret = terminator(body)
    for idx, j in enumerate(A):
        L.add_ct(ret.operands[j], rargs[idx])
    reverse_block(L, block_ops(body))
    with L.ip, loc:
        outs = []
        for j in A:
            g = L.ct.get(body.arguments[j])
            outs.append(g if g is not None else B.zeros(body.arguments[j].type))
        for i, v in enumerate(O):
            acc = rargs[len(A) + i]
            g = L.ct.get(v)
            outs.append(E.accumulate(acc, g))
        B.create("stablehlo.return", outs + [km1], [])
    sentinel.erase()

    # 2. the augmented forward loop
    pos = ir.InsertionPoint(plain) if plain is not None else ir.InsertionPoint(rev)
    cached = L.cached
    with pos, loc:
        ops0 = list(init_vals) + [_i64(0)] + [_stack_zero(v, N) for v, _ in cached]
        aug, acond, abody = _new_while(ops0, loc)
    with ir.InsertionPoint(acond), loc:
        cargs = list(acond.arguments)
        extra = B.compare(cargs[n], _i64(limit), "LT") if limit is not None else None
        p = _emit_cond(w, scope.get, cargs[:n], extra)
        B.create("stablehlo.return", [p], [])
    with ir.InsertionPoint(abody), loc:
        bargs = list(abody.arguments)
        kk = bargs[n]
        env, new_carry = _emit_body(w, scope.get, bargs[:n])
        stacks = [_push(bargs[n + 1 + i], env[v] if v in env else scope.get(v), kk) for i, (v, _) in enumerate(cached)]
        B.create("stablehlo.return", new_carry + [B.add(kk, _i64(1))] + stacks, [])
    ares = list(aug.results)
    prim, kfinal, stack_vals = ares[:n], ares[n], ares[n + 1:]
    if plain is not None:
        _replace_plain(scope, w, plain, prim)
    for (_, ph), s in zip(cached, stack_vals):
        ph.replace_all_uses_with(s)
        ph.owner.operation.erase()
    poison = None
    if static_T is None:
        with ir.InsertionPoint(rev), loc:
            if limit is not None:
                kval = kfinal
            else:
                kval = B.minimum(kfinal, _i64(N))
                poison = B.compare(kfinal, _i64(N), "GT")
        kstart.replace_all_uses_with(kval)
        kstart.owner.operation.erase()
    ct_out, acc_out = _loop_outputs(scope, rev, A, O, poison, loc)
    return ct_out, acc_out, prim


def _loop_outputs(scope: Scope, rev, A, O, poison, loc) -> tuple[list, list]:
    """The cotangents of the active slots and the accumulated ones of the captured values a
    reverse loop returns; NaN when ``poison`` says the loop ran more than its stacks hold."""
    res = list(rev.results)
    ct_out, acc_out = res[:len(A)], res[len(A):len(A) + len(O)]
    if poison is not None:
        with scope.ip, loc:
            ct_out = [_poison(poison, g) for g in ct_out]
            acc_out = [_poison(poison, g) for g in acc_out]
    return ct_out, acc_out


def _poison(flag, g):
    nan = B.full(float("nan"), g.type)
    return B.select(flag, nan, g)


def _reverse_checkpointed(scope: Scope, w, info: WhileLoopInfo, init_vals, ct_init, acc_init, A, O, N: int, c: int,
                          static_T, plain):
    """Periodic checkpointing: snapshots of the carried state every ``c`` iterations."""
    n = len(w.operands)
    loc = w.location
    nseg = -(-N // c)
    S = [j for j in range(n) if j not in info.passthrough]
    # forward: segments of c iterations, a snapshot before each
    pos = ir.InsertionPoint(plain) if plain is not None else scope.ip
    with pos, loc:
        ops0 = list(init_vals) + [_i64(0)] + [_stack_zero(init_vals[j], nseg) for j in S]
        outer, ocond, obody = _new_while(ops0, loc)
    with ir.InsertionPoint(ocond), loc:
        a = list(ocond.arguments)
        extra = B.compare(a[n], _i64(nseg), "LT") if static_T is not None else None
        B.create("stablehlo.return", [_emit_cond(w, scope.get, a[:n], extra)], [])
    with ir.InsertionPoint(obody), loc:
        a = list(obody.arguments)
        s = a[n]
        snaps = [_push(a[n + 1 + i], a[j], s) for i, j in enumerate(S)]
        inner, icond, ibody = _new_while(a[:n] + [_i64(0)], loc)
        with ir.InsertionPoint(icond):
            ia = list(icond.arguments)
            B.create("stablehlo.return", [_emit_cond(w, scope.get, ia[:n], B.compare(ia[n], _i64(c), "LT"))], [])
        with ir.InsertionPoint(ibody):
            ia = list(ibody.arguments)
            _, new_carry = _emit_body(w, scope.get, ia[:n])
            B.create("stablehlo.return", new_carry + [B.add(ia[n], _i64(1))], [])
        B.create("stablehlo.return", list(inner.results)[:n] + [B.add(s, _i64(1))] + snaps, [])
    ores = list(outer.results)
    prim, sfinal, snap_vals = ores[:n], ores[n], ores[n + 1:]
    if plain is not None:
        _replace_plain(scope, w, plain, prim)
    # reverse: segments backwards, each recomputed from its snapshot
    with scope.ip, loc:
        if static_T is not None:
            sstart = _i64(nseg)
            poison = None
        else:
            sstart = B.minimum(sfinal, _i64(nseg))
            poison = B.compare(sfinal, _i64(nseg), "GT")
        rev, rcond, rbody = _new_while(list(ct_init) + list(acc_init) + [sstart], loc)
    with ir.InsertionPoint(rcond), loc:
        B.create("stablehlo.return", [B.compare(list(rcond.arguments)[-1], _i64(0), "GT")], [])
    ra = list(rbody.arguments)
    with ir.InsertionPoint(rbody), loc:
        sm1 = B.subtract(ra[-1], _i64(1))
        restored = list(init_vals)
        for i, j in enumerate(S):
            restored[j] = _read(snap_vals[i], sm1, list(shape_of(init_vals[j])))
    seg = SegmentScope(scope.eng, scope, ir.InsertionPoint(rbody))
    ct_o, acc_o, _ = _reverse_core(seg, w, info, restored, ra[:len(A)], ra[len(A):len(A) + len(O)], A, O, c, c,
                                   None, None)
    with ir.InsertionPoint(rbody), loc:
        B.create("stablehlo.return", list(ct_o) + list(acc_o) + [sm1], [])
    return _loop_outputs(scope, rev, A, O, poison, loc)


__all__ = ["reverse_while", "LoopRevScope"]
