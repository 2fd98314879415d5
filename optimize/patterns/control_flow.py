"""Family ``control_flow``: ``stablehlo.while`` / ``if`` / ``case`` and ``func.call``.

Loops: loop-invariant code motion, pass-through and dead iteration arguments, duplicate
induction variables, induction-variable range facts (compares against the counter fold),
loops that run zero times or once, reads of an accumulator before its write (loops whose
iterations are independent become tensor operations in the ``raising`` family,
``loop_raising``). Branches: constant predicates and indices, identical
branches, branches that only pick values (-> select), unused results. Calls to functions
of the module are inlined (XLA inlines them too; inlining lets the other patterns see
through them, e.g. to hoist a norm out of a loop body).

Ops are only moved or duplicated when they have no side effects (``is_pure_op``), and
hoisting out of a loop never changes results (a pure op computes the same value in every
iteration).
"""

from __future__ import annotations

import re

import numpy as np
from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.attrs import compare_attrs, compare_parts, copy_attrs, i64_list, same_constant
from ...ir.context import functions
from ...ir.evaluate import evaluate_value
from ...ir.loops import unchanged_ir, while_parts
from ...ir.opinfo import info, is_pure_op
from ...ir.regions import (attrs_equal, captured_values, clone_block, clone_op, regions_equivalent,
                           replace_uses_within, single_block, terminator)
from ...ir.types import element_type_of, is_ranked_tensor, np_dtype, ranked, shape_of
from ...ir.values import defining_op, is_defined_outside, same_computation
from ._registry import pattern, replace
from ._util import int_range, loop_facts
from .batching import iteration_values

FAMILY = "control_flow"


# -- helpers -------------------------------------------------------------------------------------


def _inputs(op) -> list[ir.Value]:
    """The values an op reads: its operands and what its regions capture."""
    return list(op.operands) + captured_values(op)


def _ranges(w) -> dict:
    """{counter slot: (lo, hi)} of a while loop's counters (``reactant.ir.loops``)."""
    info = loop_facts(w)
    return {} if info is None else info.ranges


def _scalar_int(v: ir.Value, memo=None):
    a = evaluate_value(v, 1, _memo=memo)
    if a is None:
        return None
    return np.asarray(a).reshape(()).item()


def _inline_block(rewriter, op, block: ir.Block, arg_values=()) -> None:
    """Replace ``op`` by the ops of ``block`` (moved before ``op``) with the block arguments
    bound to ``arg_values``; ``op``'s results become the terminator's operands."""
    for a, v in zip(block.arguments, arg_values):
        a.replace_all_uses_with(v)
    ops = list(block.operations)
    term = ops[-1]
    for o in ops[:-1]:
        o.operation.move_before(op.operation)
    rewriter.replace_op(op, list(term.operands))


def _new_op_with_regions(name: str, operands, result_types, attrs, loc, old_regions, order=None):
    """Create ``name`` and move the single blocks of ``old_regions`` (in ``order``) into it."""
    order = list(range(len(old_regions))) if order is None else order
    new = B.create(name, operands, result_types, attrs, loc=loc, regions=len(order))
    for k, i in enumerate(order):
        old_regions[i].blocks[0].append_to(new.regions[k])
    return new


def _set_return(rewriter, block: ir.Block, values) -> None:
    term = terminator(block)
    with ir.InsertionPoint(term), term.location:
        B.create(term.operation.name, list(values), [], loc=term.location)
    rewriter.erase_op(term)


# -- func.call ---------------------------------------------------------------------------------------

def _module_of(op):
    o = op.operation
    while o is not None and o.name != "builtin.module":
        o = o.parent
    return o


def _callees(fn) -> set[str]:
    out = set()

    def visit(o):
        if o.name == "func.call":
            out.add(ir.FlatSymbolRefAttr(o.attributes["callee"]).value)
        return ir.WalkResult.ADVANCE

    fn.operation.walk(visit)
    return out


def _recursive(module_op, name: str) -> bool:
    seen, stack = set(), [name]
    while stack:
        n = stack.pop()
        f = functions(module_op).get(n)
        if f is None:
            continue
        for c in _callees(f):
            if c == name:
                return True
            if c not in seen:
                seen.add(c)
                stack.append(c)
    return False


@pattern("inline_call", FAMILY, "func.call", benefit=2)
def inline_call(op, rewriter):
    """func.call @f(args) -> the body of @f (single block, not recursive)."""
    module_op = _module_of(op)
    if module_op is None:
        return False
    name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    fn = functions(module_op).get(name)
    if fn is None or len(fn.regions[0].blocks) != 1 or _recursive(module_op, name):
        return False
    block = fn.regions[0].blocks[0]
    if len(block.arguments) != len(op.operands):
        return False
    if list(block.operations)[-1].operation.name != "func.return":
        return False
    return replace(rewriter, op, clone_block(fn.regions[0].blocks[0], list(op.operands), rewriter.ip))


# -- stablehlo.while -------------------------------------------------------------------------------


@pattern("while_passthrough_arg", FAMILY, "stablehlo.while", benefit=2)
def while_passthrough_arg(op, rewriter):
    """An iteration argument the body returns unchanged (or replaces by its own init value)
    is that init value everywhere: in the condition, the body and the result."""
    parts = while_parts(op)
    if parts is None:
        return False
    inits, cond, body, yields = parts
    changed = False
    for i, init in enumerate(inits):
        y = yields[i]
        same = y == body.arguments[i] or y == init
        if not same:
            same = same_constant(y, init)
        if not same:
            continue
        ba, ca, res = body.arguments[i], cond.arguments[i], op.results[i]
        uses_ba = [u for u in ba.uses if not (u.owner.operation.name == "stablehlo.return"
                                              and u.owner.operation.parent == op.operation
                                              and u.operand_number == i)]
        if not uses_ba and not list(ca.uses) and not list(res.uses):
            continue
        ba.replace_all_uses_with(init)
        ca.replace_all_uses_with(init)
        res.replace_all_uses_with(init)
        changed = True
    return changed


def _while_live_args(op, cond, body, yields) -> set[int]:
    n = len(yields)
    args = {a: i for i, a in enumerate(body.arguments)}
    live = {i for i in range(n) if list(op.results[i].uses) or list(cond.arguments[i].uses)}
    if len(live) == n:  # (every slot observed: nothing to trace through the body)
        return live
    body_ops = list(body.operations)[:-1]
    defined_by = {}
    for o in body_ops:
        for r in o.results:
            defined_by[r] = o
    needed_ops = set()
    work = [yields[i] for i in live]
    for o in body_ops:  # side effects keep their inputs alive
        if not is_pure_op(o):
            needed_ops.add(o.operation)
            work.extend(_inputs(o))
    seen = set()
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in args:
            i = args[v]
            if i not in live:
                live.add(i)
                work.append(yields[i])
            continue
        o = defined_by.get(v)
        if o is not None and o.operation not in needed_ops:
            needed_ops.add(o.operation)
            work.extend(_inputs(o))
        elif o is not None:
            work.extend(_inputs(o))
    return live


@pattern("while_dead_arg", FAMILY, "stablehlo.while", benefit=2)
def while_dead_arg(op, rewriter):
    """Remove iteration arguments whose values nobody observes: result unused, not read by
    the condition, and in the body only feeding their own (or other dead) next values."""
    parts = while_parts(op)
    if parts is None:
        return False
    inits, cond, body, yields = parts
    live = _while_live_args(op, cond, body, yields)
    dead = [i for i in range(len(inits)) if i not in live]
    if not dead or not live:
        return False
    for i in dead:
        body.arguments[i].replace_all_uses_with(inits[i])
    _set_return(rewriter, body, [yields[i] for i in sorted(live)])
    for i in sorted(dead, reverse=True):
        if list(body.arguments[i].uses) or list(cond.arguments[i].uses):
            raise AssertionError("while_dead_arg: dead argument still used")  # pragma: no cover
        body.erase_argument(i)
        cond.erase_argument(i)
    keep = sorted(live)
    with rewriter.ip:
        new = _new_op_with_regions("stablehlo.while", [inits[i] for i in keep],
                                   [op.results[i].type for i in keep], copy_attrs(op), op.location,
                                   [op.regions[0], op.regions[1]])
    pos = {i: k for k, i in enumerate(keep)}
    return replace(rewriter, op, [new.results[pos[i]] if i in pos else inits[i] for i in range(len(inits))])


def _structurally_same_step(yi, yj, ai, aj) -> bool:
    """yi (next value of arg ai) and yj (of aj) are the same function of ai and aj."""
    if yi == yj:
        return True
    oi, oj = defining_op(yi), defining_op(yj)
    if oi is None or oj is None or oi.operation.name != oj.operation.name:
        return False
    if len(oi.results) != 1 or len(oj.results) != 1 or len(oi.regions) or len(oj.regions):
        return False
    if oi.results[0].type != oj.results[0].type or len(oi.operands) != len(oj.operands):
        return False
    if not attrs_equal(oi, oj) or not is_pure_op(oi):
        return False
    uses_self = False
    for p, q in zip(oi.operands, oj.operands):
        if p == ai and q == aj:
            uses_self = True
        elif p != q or p == aj or q == ai:
            return False
    return uses_self


@pattern("while_duplicate_iv", FAMILY, "stablehlo.while", benefit=2)
def while_duplicate_iv(op, rewriter):
    """Two iteration arguments with the same init and the same step function (e.g. two
    counters 0, 1, 2, ...) are always equal: the second is replaced by the first."""
    parts = while_parts(op)
    if parts is None:
        return False
    inits, cond, body, yields = parts
    n = len(inits)
    for i in range(n):
        for j in range(i + 1, n):
            if inits[i].type != inits[j].type:
                continue
            same_init = inits[i] == inits[j]
            if not same_init:
                same_init = same_constant(inits[i], inits[j])
            if not same_init:
                continue
            ai, aj = body.arguments[i], body.arguments[j]
            if not _structurally_same_step(yields[i], yields[j], ai, aj):
                continue
            bj, cj, rj = body.arguments[j], cond.arguments[j], op.results[j]
            if not (list(bj.uses) or list(cj.uses) or list(rj.uses)):
                continue
            bj.replace_all_uses_with(ai)
            cj.replace_all_uses_with(cond.arguments[i])
            rj.replace_all_uses_with(op.results[i])
            return True
    return False


@pattern("while_iv_compare_fold", FAMILY, "stablehlo.while", benefit=1)
def while_iv_compare_fold(op, rewriter):
    """Inside a counted loop (counter from c0 by a positive step while < limit), compares
    whose answer the counter's range [c0, limit) decides become constants (e.g. the
    negative-index wrap-around ``i < 0`` of ``x[i]``)."""
    parts = while_parts(op)
    if parts is None:
        return False
    inits, cond, body, yields = parts
    ivs = _ranges(op)
    if not ivs:
        return False
    env = {body.arguments[k]: r for k, r in ivs.items()}
    from .select import _range_decides

    todo = []

    def visit(o):
        if o.name == "stablehlo.compare" and list(o.results[0].uses):
            a, b = o.operands
            dt = np_dtype(element_type_of(a))
            if dt is None or dt.kind not in "iu":
                return ir.WalkResult.ADVANCE
            direction, ct = compare_parts(o.opview)
            if ct == "UNSIGNED" and dt.kind == "i":
                return ir.WalkResult.ADVANCE
            ra, rb = int_range(a, env=env), int_range(b, env=env)
            if ra is None or rb is None:
                return ir.WalkResult.ADVANCE
            if not any(v in env for v in (a, b)) and not _depends_on(o, env):
                return ir.WalkResult.ADVANCE
            val = _range_decides(direction, ra, rb)
            if val is not None:
                todo.append((o, val))
        return ir.WalkResult.ADVANCE

    with unchanged_ir():  # (the compares share their operands' ranges; nothing is rewritten yet)
        for o in list(body.operations):
            o.operation.walk(visit)
    if not todo:
        return False
    for o, val in todo:
        with ir.InsertionPoint(o), o.location:
            c = B.full(val, ir.RankedTensorType(o.results[0].type), loc=o.location)
        o.results[0].replace_all_uses_with(c)
    return True


def _depends_on(o, env) -> bool:
    seen, work = set(), list(o.operands)
    while work and len(seen) < 64:
        v = work.pop()
        if v in env:
            return True
        if v in seen:
            continue
        seen.add(v)
        d = defining_op(v)
        if d is not None:
            work.extend(d.operands)
    return False


@pattern("while_licm", FAMILY, "stablehlo.while", benefit=1)
def while_licm(op, rewriter):
    """Loop-invariant code motion: pure ops of the body (or condition) whose inputs are all
    defined outside the loop are computed once, before it. Cheap ops (constants,
    broadcasts, reshapes, converts, iotas) only move along with an expensive op using them;
    when they have other users in the loop they are copied instead of moved."""
    hoisted_any = False
    for region in (op.regions[1], op.regions[0]):
        block = single_block(region)
        if block is None:
            continue
        ops = list(block.operations)[:-1]
        invariant = set()
        cand = []
        for o in ops:
            ins = _inputs(o)
            ok = o.operation.name != "stablehlo.return" and is_pure_op(o) and all(
                v in invariant or is_defined_outside(v, op) for v in ins)
            if ok:
                cand.append(o)
                for r in o.results:
                    invariant.add(r)
        if not cand:
            continue
        producer = {}
        for o in cand:
            for r in o.results:
                producer[r] = o
        # the expensive candidates, plus every candidate they (transitively) need. A list
        # compared with ``==`` (the op's identity): an Operation's hash changes when its
        # operands are rewired (the clones below), so a set of Operations would lose hoisted
        # ops and leave their users reading into the loop from outside (invalid IR)
        hoist = []
        # cheap ops (fused by XLA into their consumers) move out only with an expensive op
        work = [o for o in cand if not info(o.operation.name).cheap]
        while work:
            o = work.pop()
            if _among(o.operation, hoist):
                continue
            hoist.append(o.operation)
            for v in _inputs(o):
                p = producer.get(v)
                if p is not None:
                    work.append(p)
        if not hoist:
            continue
        for o in cand:
            if not _among(o.operation, hoist):
                continue
            cheap_shared = info(o.operation.name).cheap and any(
                not _among(_owner_top(u.owner, block), hoist) for r in o.results for u in r.uses)
            if cheap_shared:
                clone = o.operation.clone(ir.InsertionPoint(op))
                for r, cr in zip(o.results, clone.results):
                    for u in list(r.uses):
                        top = _owner_top(u.owner, block)
                        if _among(top, hoist) and top != o.operation:
                            replace_uses_within(top.opview, r, cr)
            else:
                o.operation.move_before(op.operation)
            hoisted_any = True
    return hoisted_any


def _among(op, ops: list) -> bool:
    return any(op == o for o in ops)


def _owner_top(owner, block: ir.Block):
    """The op at the top level of ``block`` that contains ``owner`` (an op)."""
    o = owner.operation
    while o is not None and o.parent is not None and not (o.block == block):
        o = o.parent
    return o


def _runs_twice(w) -> bool:
    """Whether loop ``w`` is a counter stepping up below a constant bound at least twice (its
    facts, shared by the loop's patterns: no need to evaluate its first iterations)."""
    info = loop_facts(w)
    return info is not None and info.counter in info.ranges and (info.trip_count or 0) >= 2


def _eval_cond(cond: ir.Block, values) -> bool | None:
    memo = {}
    for a, v in zip(cond.arguments, values):
        if v is not None:
            memo[a] = v
    term = terminator(cond)
    r = evaluate_value(term.operands[0], 1, _memo=memo)
    if r is None:
        return None
    return bool(np.asarray(r).reshape(()))


@pattern("while_zero_trip", FAMILY, "stablehlo.while", benefit=3)
def while_zero_trip(op, rewriter):
    """A loop whose condition is false on the initial values never runs: its results are the
    initial values."""
    if _runs_twice(op):
        return False
    parts = while_parts(op)
    if parts is None:
        return False
    inits, cond, body, yields = parts
    vals = [evaluate_value(v, 1 << 12) for v in inits]
    if _eval_cond(cond, vals) is not False:
        return False
    return replace(rewriter, op, inits)


@pattern("while_single_trip", FAMILY, "stablehlo.while", benefit=2)
def while_single_trip(op, rewriter):
    """A loop that provably runs exactly once (condition true on the initial values, false on
    the values after one iteration) is replaced by its body."""
    if _runs_twice(op):
        return False
    parts = while_parts(op)
    if parts is None:
        return False
    inits, cond, body, yields = parts
    vals = [evaluate_value(v, 1 << 12) for v in inits]
    if _eval_cond(cond, vals) is not True:
        return False
    memo = {a: v for a, v in zip(body.arguments, vals) if v is not None}
    nxt = [evaluate_value(y, 1 << 12, _memo=memo) for y in yields]
    if _eval_cond(cond, nxt) is not False:
        return False
    if not all(is_pure_op(o) for o in list(body.operations)[:-1]):
        return False
    _inline_block(rewriter, op, body, inits)
    return True


# -- stablehlo.if / stablehlo.case -------------------------------------------------------------------

def _branch_blocks(op):
    blocks = [single_block(r) for r in op.regions]
    return None if any(b is None for b in blocks) else blocks


@pattern("if_const_pred", FAMILY, "stablehlo.if", benefit=3)
def if_const_pred(op, rewriter):
    """if(constant p) -> the taken branch, inlined."""
    p = _scalar_int(op.operands[0])
    if p is None:
        return False
    blocks = _branch_blocks(op)
    if blocks is None:
        return False
    _inline_block(rewriter, op, blocks[0] if p else blocks[1])
    return True


@pattern("case_const_index", FAMILY, "stablehlo.case", benefit=3)
def case_const_index(op, rewriter):
    """case(constant i) -> branch i inlined (the last branch when i is out of range)."""
    i = _scalar_int(op.operands[0])
    if i is None:
        return False
    blocks = _branch_blocks(op)
    if blocks is None:
        return False
    n = len(blocks)
    _inline_block(rewriter, op, blocks[i if 0 <= i < n else n - 1])
    return True


@pattern("case_single_branch", FAMILY, "stablehlo.case", benefit=3)
def case_single_branch(op, rewriter):
    """case with one branch -> that branch inlined."""
    blocks = _branch_blocks(op)
    if blocks is None or len(blocks) != 1:
        return False
    _inline_block(rewriter, op, blocks[0])
    return True


@pattern("branches_identical", FAMILY, ("stablehlo.if", "stablehlo.case"), benefit=2)
def branches_identical(op, rewriter):
    """if/case whose branches all compute the same thing -> one branch inlined."""
    blocks = _branch_blocks(op)
    if blocks is None or len(blocks) < 2:
        return False
    for r in op.regions[1:]:
        if not regions_equivalent(op.regions[0], r):
            return False
    _inline_block(rewriter, op, blocks[0])
    return True


@pattern("if_to_select", FAMILY, "stablehlo.if", benefit=2)
def if_to_select(op, rewriter):
    """if(p) {return a} else {return b}, with a and b defined outside -> select(p, a, b)."""
    blocks = _branch_blocks(op)
    if blocks is None:
        return False
    t, f = blocks
    if len(list(t.operations)) != 1 or len(list(f.operations)) != 1:
        return False
    tv, fv = list(terminator(t).operands), list(terminator(f).operands)
    if not all(is_ranked_tensor(v.type) for v in tv):
        return False
    p = op.operands[0]
    with rewriter.ip:
        vals = [a if a == b else B.op1("stablehlo.select", [p, a, b], a.type, loc=op.location)
                for a, b in zip(tv, fv)]
    return replace(rewriter, op, vals)


def _branch_update(v: ir.Value, block: ir.Block, op):
    """The dynamic_update_slice of an array defined outside ``op`` that branch ``block``
    returns as ``v``, or None."""
    d = defining_op(v)
    if d is None or d.operation.name != "stablehlo.dynamic_update_slice" or d.operation.block != block:
        return None
    return d if is_defined_outside(d.operands[0], op) else None


def _hoistable(v: ir.Value, op, memo: dict) -> bool:
    """``v`` is defined outside ``op`` or computed from such values by pure region-free ops."""
    if v in memo:
        return memo[v]
    if is_defined_outside(v, op):
        memo[v] = True
        return True
    d = defining_op(v)
    ok = (d is not None and not len(d.operation.regions) and is_pure_op(d) and len(d.results) == 1
          and all(_hoistable(x, op, memo) for x in d.operands))
    memo[v] = ok
    return ok


def _hoist(v: ir.Value, op, memo: dict) -> ir.Value:
    """A copy, before ``op``, of the computation of ``v`` (see ``_hoistable``)."""
    if is_defined_outside(v, op):
        return v
    got = memo.get(v)
    if got is None:
        d = defining_op(v)
        new = clone_op(d, lambda x: _hoist(x, op, memo))
        got = memo[v] = new.results[0]
    return got


@pattern("if_sink_update_slice", FAMILY, "stablehlo.if", benefit=2)
def if_sink_update_slice(op, rewriter):
    """if(p) {... dus(X, a, idx)} else {... dus(X, b, idx)} with X from outside -> dus(X,
    if(p) {a} else {b}, idx): the branches return the small updates and X is updated after the
    if. A branch returning X itself returns X's window at idx. XLA copies an array that a
    conditional's branch updates in place (a full copy per execution: in a loop, per
    iteration); after the rewrite the update stays in place."""
    blocks = _branch_blocks(op)
    if blocks is None or len(blocks) != 2:
        return False
    t, f = blocks
    yt, yf = list(terminator(t).operands), list(terminator(f).operands)
    plans = {}
    memo: dict = {}
    for k in range(len(op.results)):
        dt, df = _branch_update(yt[k], t, op), _branch_update(yf[k], f, op)
        if dt is None and df is None:
            continue
        ref = dt if dt is not None else df
        base = ref.operands[0]
        if (dt is None and yt[k] != base) or (df is None and yf[k] != base):
            continue
        if dt is not None and df is not None:
            if dt.operands[0] != df.operands[0] or dt.operands[1].type != df.operands[1].type:
                continue
            if not all(same_computation(a, b, depth=8) for a, b in zip(dt.operands[2:], df.operands[2:])):
                continue
        if not all(_hoistable(x, op, memo) for x in ref.operands[2:]):
            continue
        plans[k] = (dt, df, ref, base)
    if not plans:
        return False
    hoisted: dict = {}
    with rewriter.ip:
        idx = {k: [_hoist(x, op, hoisted) for x in ref.operands[2:]] for k, (_, _, ref, _) in plans.items()}
    for block, yields, which in ((t, yt, 0), (f, yf, 1)):
        vals = list(yields)
        term = terminator(block)
        with ir.InsertionPoint(term), term.location:
            for k, plan in plans.items():
                d = plan[which]
                if d is not None:
                    vals[k] = d.operands[1]
                else:  # this branch keeps X: its window at idx
                    vals[k] = B.dynamic_slice(plan[3], idx[k], shape_of(plan[2].operands[1]), loc=op.location)
        _set_return(rewriter, block, vals)
    types = [plans[k][2].operands[1].type if k in plans else r.type for k, r in enumerate(op.results)]
    with rewriter.ip:
        new = _new_op_with_regions("stablehlo.if", list(op.operands), types, copy_attrs(op), op.location,
                                   list(op.regions))
        out = []
        for k, r in enumerate(new.results):
            if k in plans:
                out.append(B.dynamic_update_slice(plans[k][3], r, idx[k], loc=op.location))
            else:
                out.append(r)
    return replace(rewriter, op, out)


@pattern("branches_unused_results", FAMILY, ("stablehlo.if", "stablehlo.case"), benefit=2)
def branches_unused_results(op, rewriter):
    """Drop results of an if/case that nobody uses (the branches stop computing them)."""
    blocks = _branch_blocks(op)
    if blocks is None:
        return False
    keep = [i for i, r in enumerate(op.results) if list(r.uses)]
    if len(keep) == len(op.results):
        return False
    if not all(is_ranked_tensor(r.type)
               and np_dtype(ir.RankedTensorType(r.type).element_type) is not None
               for r in op.results):
        return False
    for b in blocks:
        vals = list(terminator(b).operands)
        _set_return(rewriter, b, [vals[i] for i in keep])
    with rewriter.ip:
        new = _new_op_with_regions(op.operation.name, list(op.operands),
                                   [op.results[i].type for i in keep], copy_attrs(op), op.location,
                                   list(op.regions))
    pos = {i: k for k, i in enumerate(keep)}
    repl = []
    with rewriter.ip:
        for i, r in enumerate(op.results):
            if i in pos:
                repl.append(new.results[pos[i]])
            else:  # unused: any value of the right type
                repl.append(_any_value(r.type, op.location))
    return replace(rewriter, op, repl)


def _any_value(t, loc):
    rt = ir.RankedTensorType(t)
    return B.full(0, rt, loc=loc)


@pattern("if_not_pred", FAMILY, "stablehlo.if", benefit=1)
def if_not_pred(op, rewriter):
    """if(not p) {A} else {B} -> if(p) {B} else {A}."""
    n = defining_op(op.operands[0])
    if n is None or n.operation.name != "stablehlo.not" or _branch_blocks(op) is None:
        return False
    with rewriter.ip:
        new = _new_op_with_regions("stablehlo.if", [n.operands[0]], [r.type for r in op.results],
                                   copy_attrs(op), op.location, list(op.regions), order=[1, 0])
    return replace(rewriter, op, list(new.results))


@pattern("case_two_branches_to_if", FAMILY, "stablehlo.case", benefit=1)
def case_two_branches_to_if(op, rewriter):
    """case(i) {A, B} -> if(i == 0) {A} else {B} (an out-of-range index takes the last branch)."""
    if len(op.regions) != 2 or _branch_blocks(op) is None:
        return False
    idx = op.operands[0]
    with rewriter.ip:
        zero = B.full(0, ir.RankedTensorType(idx.type), loc=op.location)
        p = B.op1("stablehlo.compare", [idx, zero], ranked([], ir.IntegerType.get_signless(1)),
                  compare_attrs("EQ", "SIGNED"), loc=op.location)
        new = _new_op_with_regions("stablehlo.if", [p], [r.type for r in op.results], {},
                                   op.location, list(op.regions))
    return replace(rewriter, op, list(new.results))


def _symbol_used(module_op, name: str) -> bool:
    """Some attribute of some op (a call's callee, an autodiff marker's ``fn``...) names @name."""
    rx = re.compile(re.escape("@" + name) + r"(?![A-Za-z0-9_$.\-])")
    found = [False]
    skip = (ir.StringAttr, ir.DenseElementsAttr, ir.DenseI64ArrayAttr, ir.IntegerAttr, ir.FloatAttr,
            ir.BoolAttr, ir.TypeAttr, ir.UnitAttr)

    def visit(o):
        attrs = o.attributes
        for a in attrs:
            attr = attrs[a]
            if isinstance(attr, ir.FlatSymbolRefAttr):
                if attr.value == name:
                    found[0] = True
                    return ir.WalkResult.INTERRUPT
                continue
            if isinstance(attr, skip):
                continue
            if rx.search(str(attr)):
                found[0] = True
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    return found[0]


@pattern("dead_private_function", FAMILY, "func.func", benefit=1)
def dead_private_function(op, rewriter):
    """A private function nothing refers to any more (e.g. after inlining) is erased."""
    if "sym_visibility" not in op.attributes:
        return False
    if ir.StringAttr(op.attributes["sym_visibility"]).value != "private":
        return False
    module_op = _module_of(op)
    if module_op is None or op.operation.parent != module_op:
        return False
    name = ir.StringAttr(op.attributes["sym_name"]).value
    if _symbol_used(module_op, name):
        return False
    rewriter.erase_op(op)
    return True


# -- reads of an accumulator before its write ------------------------------------------------------


def _counter_values(op, cond, body, yields, k):
    """All values the counter k takes inside the body (NumPy array), or None."""
    r = _ranges(op).get(k)
    info = loop_facts(op)
    step = None if info is None else info.steps.get(k)
    if r is None or step is None or step <= 0:
        return None
    lo, hi = r
    if (hi - lo) // step > (1 << 20):
        return None
    return np.arange(lo, hi + 1, step)


@pattern("while_read_before_write", FAMILY, "stablehlo.while", benefit=2)
def while_read_before_write(op, rewriter):
    """An accumulator that iteration i reads (dynamic_slice) and then overwrites
    (dynamic_update_slice) at the same window, with windows that differ in every iteration
    (indices driven by a counter), always reads the initial value: the reads take it from the
    loop's init instead (the accumulator usually dies)."""
    parts = while_parts(op)
    if parts is None:
        return False
    inits, cond, body, yields = parts
    counters = {k: _counter_values(op, cond, body, yields, k)
                for k in _ranges(op)}
    counters = {k: v for k, v in counters.items() if v is not None and len(v)}
    if not counters:
        return False
    changed = False
    for k in range(len(inits)):
        acc = body.arguments[k]
        d = defining_op(yields[k])
        if d is None or d.operation.name != "stablehlo.dynamic_update_slice" or d.operands[0] != acc:
            continue
        if list(cond.arguments[k].uses) or d.operation.block != body:
            continue
        idx = list(d.operands[2:])
        ushape = shape_of(d.operands[1])
        reads = []
        ok = True
        for u in acc.uses:
            o = u.owner
            if o.operation == d.operation:
                if u.operand_number != 0:
                    ok = False
                continue
            if (o.operation.name != "stablehlo.dynamic_slice" or o.operation.block != body
                    or list(o.operands[1:]) != idx or tuple(i64_list(o.attributes["slice_sizes"])) != ushape):
                ok = False
                break
            reads.append(o)
        if not ok or not reads:
            continue
        # the written windows must be pairwise disjoint over the iterations
        distinct = False
        xs = shape_of(acc)
        for j, vals in counters.items():
            env = {body.arguments[j]: vals}
            starts = [iteration_values(ix, env, len(vals)) for ix in idx]
            if any(a is None for a in starts):
                continue
            cl = [np.clip(np.broadcast_to(a, vals.shape), 0, n - m) for a, n, m in zip(starts, xs, ushape)]
            for e in range(len(idx)):
                if ushape[e] == 0:
                    continue
                others_const = all(np.all(c == c[0]) for f, c in enumerate(cl) if f != e)
                order = np.sort(cl[e])
                if others_const and (len(order) < 2 or int(np.min(np.diff(order))) >= ushape[e]):
                    distinct = True
            if distinct:
                break
        if not distinct:
            continue
        for r in reads:
            r.operation.operands[0] = inits[k]
        changed = True
    return changed
