"""The AD pass's preparation of a working copy of the function to differentiate (calls
inlined, loop-invariant code hoisted out of while loops, sorts given a permutation), and the
ops it never moves. Walking, cloning and inlining come from ``reactant.ir.regions``."""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.attrs import copy_attrs, i64_list
from ...ir.loops import analyze
from ...ir.opinfo import CONTROL_FLOW, OPS
from ...ir.regions import block_ops, callee_name, captured_values, clone_op, inline_call, walk_nested
from ...ir.types import element_type_of, i64, is_integer_type, rank_of, ranked, shape_of
from ...ir.values import defining_op, is_within
from .errors import ADError

# ops never moved or rematerialized: side effects (the op table's impure ops), control flow,
# calls and terminators
NO_MOVE = frozenset(n for n, i in OPS.items() if not i.pure) | CONTROL_FLOW | {
    "func.call", "func.return", "stablehlo.return"}


# ---------------------------------------------------------------------------------------------
# working copy preparation


def inline_calls(fn, funcs: dict) -> None:
    """Inline every ``func.call`` (at any depth) inside ``fn``'s body."""
    for depth in range(200):
        calls = []

        def visit(o):
            if o.operation.name == "func.call":
                calls.append(o.operation)

        walk_nested(fn, visit)
        if not calls:
            return
        for call in calls:
            name = callee_name(call)
            callee = funcs.get(name)
            if callee is None or not len(callee.regions[0].blocks):
                raise ADError(f"cannot differentiate through a call to @{name}: no body in the module", call)
            inline_call(call, callee)
    raise ADError("call nesting deeper than 200 (recursive functions cannot be differentiated)", fn)


def hoist_loop_invariants(fn) -> None:
    """Move ops of while bodies that depend only on values from outside the loop (or on
    pass-through iteration arguments) in front of the loop. Inner loops first."""
    whiles = []

    def visit(o):
        if o.operation.name == "stablehlo.while":
            whiles.append(o.operation)

    walk_nested(fn, visit)
    for w in reversed(whiles):  # pre-order list reversed: inner loops before their parents
        _hoist_one(w)


def _hoist_one(w) -> None:
    info = analyze(w)
    body = info.body
    pt_args = {body.arguments[j]: w.operands[j] for j in info.passthrough}
    hoisted = set()

    def invariant(v) -> bool:
        return v in pt_args or v in hoisted or not is_within(v, w)

    for o in block_ops(body):
        o = o.operation
        if o.name in NO_MOVE or o.name.startswith("enzyme."):
            continue
        vals = list(o.operands) + captured_values(o)
        if not all(invariant(v) for v in vals):
            continue
        for i, v in enumerate(o.operands):
            if v in pt_args:
                o.operands[i] = pt_args[v]
        if len(o.regions):
            def fix(x):
                x = x.operation
                for i, v in enumerate(x.operands):
                    if v in pt_args:
                        x.operands[i] = pt_args[v]
            walk_nested(o, fix)
        o.move_before(w)
        hoisted.update(o.results)


def iota_dimension(v) -> int | None:
    """If ``v`` is an integer iota (possibly broadcast), the dimension it counts along."""
    op = defining_op(v)
    if op is None:
        return None
    if op.name == "stablehlo.iota":
        return int(ir.IntegerAttr(op.attributes["iota_dimension"]).value)
    if op.name == "stablehlo.broadcast_in_dim":
        inner = iota_dimension(op.operands[0])
        if inner is None:
            return None
        dims = i64_list(op.attributes["broadcast_dimensions"])
        src_shape = list(shape_of(op.operands[0]))
        if src_shape[inner] != list(shape_of(v))[dims[inner]]:
            return None
        return dims[inner]
    return None


def sort_permutation_operand(sort_op) -> int | None:
    """Index of an operand of ``sort_op`` that is an iota along the sort dimension."""
    dim = int(ir.IntegerAttr(sort_op.attributes["dimension"]).value)
    r = rank_of(sort_op.operands[0])
    if dim < 0:
        dim += r
    for i, v in enumerate(sort_op.operands):
        if is_integer_type(element_type_of(v)) and iota_dimension(v) == dim:
            return i
    return None


def add_sort_permutation(sort_op) -> ir.Operation:
    """Replace ``sort_op`` by a sort with an extra iota operand (the permutation); returns it."""
    sort_op = sort_op.operation
    dim = int(ir.IntegerAttr(sort_op.attributes["dimension"]).value)
    x0 = sort_op.operands[0]
    if dim < 0:
        dim += rank_of(x0)
    it = ranked(list(shape_of(x0)), i64())
    n = len(sort_op.operands)
    with ir.InsertionPoint(sort_op), sort_op.location:
        io = B.iota(it, dim)
        new = ir.Operation.create("stablehlo.sort", results=[r.type for r in sort_op.results] + [it],
                                  operands=list(sort_op.operands) + [io], attributes=copy_attrs(sort_op),
                                  regions=1)
        old_blk = sort_op.regions[0].blocks[0]
        st = ranked([], i64())
        blk = ir.Block.create_at_start(new.regions[0], [a.type for a in old_blk.arguments] + [st, st])
        env = dict(zip(old_blk.arguments, list(blk.arguments)[:2 * n]))
        with ir.InsertionPoint(blk):
            for o in old_blk.operations:
                c = clone_op(o, lambda v: env.get(v, v))
                env.update(zip(o.results, c.results))
    for a, b in zip(sort_op.results, list(new.results)[:n]):
        a.replace_all_uses_with(b)
    sort_op.erase()
    return new


def unique_symbol(funcs: dict, base: str) -> str:
    i = 0
    while True:
        name = f"{base}_{i}"
        if name not in funcs:
            return name
        i += 1


def make_working_copy(fn, funcs: dict, module_body: ir.Block):
    """A private clone of ``fn`` placed in the module, with calls inlined and loop invariants
    hoisted. The caller erases it when done."""
    name = unique_symbol(funcs, "__enzyme_ad_work")
    with ir.InsertionPoint(module_body):
        work = fn.operation.clone()
    work.attributes["sym_name"] = ir.StringAttr.get(name)
    work.attributes["sym_visibility"] = ir.StringAttr.get("private")
    inline_calls(work, funcs)
    hoist_loop_invariants(work)
    return work
