"""The ``autodiff`` pass: expand every ``enzyme.autodiff`` / ``enzyme.fwddiff`` marker.

Markers are expanded innermost first: a marker is taken only when its function (and every
function that function calls or differentiates) contains no marker any more, so the
gradient of a gradient works. For each marker a private working copy of the function is
made (calls inlined, loop invariants hoisted out of while loops, sorts given a permutation
operand), activity analysis runs on it, the derivative code is emitted in place of the
marker (``forward.py`` / ``reverse.py``), and the working copy is erased. The differentiated
functions themselves are left alone (dead-code elimination may remove them later).
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir.context import functions
from ...ir.custom_derivatives import lower_markers
from ...ir.markers import MARKERS, SEEDED, WITH_DERIVATIVE, WITH_TANGENT, Activity as A
from ...ir.regions import callee_name, terminator, walk_nested
from ..passes import PassOptions
from .activity import Activity
from .errors import ADError
from .forward import expand_forward
from .ir_util import add_sort_permutation, make_working_copy, sort_permutation_operand
from .markers import fn_symbol, parse_marker
from .reverse import expand_reverse


def _collect_markers(module: ir.Module) -> list:
    out = []

    def visit(op):
        if op.name in MARKERS:
            out.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return out


def _function_refs(fn) -> tuple[bool, set]:
    """(contains a marker, names of functions it calls or differentiates)."""
    has = [False]
    refs = set()

    def visit(o):
        o = o.operation
        if o.name in MARKERS:
            has[0] = True
            refs.add(fn_symbol(o))
        elif o.name == "func.call":
            refs.add(callee_name(o))

    walk_nested(fn, visit)
    return has[0], refs


def _ready(name: str, funcs: dict, info: dict, visiting: set) -> bool:
    """Whether ``name`` and everything it reaches is marker-free."""
    if name in info:
        r = info[name]
        return bool(r) if r is not None else False
    fn = funcs.get(name)
    if fn is None:
        info[name] = True
        return True
    if name in visiting:
        return False
    visiting.add(name)
    has, refs = _function_refs(fn)
    ok = not has and all(_ready(r, funcs, info, visiting) for r in refs)
    visiting.discard(name)
    info[name] = ok
    return ok


def expand_all(module: ir.Module, options: PassOptions | None = None) -> int:
    """Expand every marker in ``module`` (in place), then lower the user-defined-derivative
    markers (``reactant.ir.custom_derivatives``). Returns the number of AD markers expanded."""
    options = options or PassOptions()
    count = 0
    with module.context, ir.Location.unknown():
        while True:
            markers = _collect_markers(module)
            if not markers:
                # no derivative is taken any more: the user-defined-derivative markers become
                # plain StableHLO (the optimizer after this pass sees through them)
                lower_markers(module)
                return count
            funcs = functions(module)
            info: dict = {}
            pick = None
            for m in markers:
                if _ready(fn_symbol(m), funcs, info, set()):
                    pick = m
                    break
            if pick is None:
                raise ADError("AD markers reference each other in a cycle (a function differentiates itself)",
                              markers[0])
            expand_marker(module, pick, funcs, options)
            count += 1


def _detached(work) -> str | None:
    """The name of an op of the working copy whose value is used outside it, else None
    (erasing the copy while such a use exists would crash the process)."""
    bad = []

    def visit(o):
        if bad:
            return
        for r in o.results:
            for u in r.uses:
                owner = u.owner
                owner = owner.operation if hasattr(owner, "operation") else owner
                if not _inside(owner, work):
                    bad.append(o.operation.name)
                    return

    walk_nested(work, visit)
    return bad[0] if bad else None


def _inside(op, anc) -> bool:
    cur = op
    while cur is not None:
        if cur == anc:
            return True
        cur = cur.parent
        cur = cur.operation if cur is not None and hasattr(cur, "operation") else cur
    return False


def expand_marker(module: ir.Module, marker, funcs: dict, options: PassOptions | None = None) -> None:
    options = options or PassOptions()
    marker = getattr(marker, "operation", marker)
    spec = parse_marker(marker, funcs)
    work = make_working_copy(spec.fn, funcs, module.body)
    done = False
    try:
        body = work.regions[0].blocks[0]
        act = _analyze(spec, body)
        if _add_permutations(work, act):
            act = _analyze(spec, body)
        if spec.mode == "reverse":
            outs = expand_reverse(spec, work, act, options)
        else:
            outs = expand_forward(spec, work, act, options)
        for r, v in zip(marker.results, outs):
            r.replace_all_uses_with(v)
        marker.erase()
        done = True
    finally:
        leaked = _detached(work)
        if leaked is None:
            work.erase()
        elif done:
            raise ADError(f"internal: emitted code still uses values of the source function ({leaked})", work)


def _analyze(spec, body) -> Activity:
    args = list(body.arguments)
    if spec.mode == "reverse":
        varied = [a for a, act in zip(args, spec.activity) if act in WITH_DERIVATIVE]
        ret = terminator(body)
        useful = [ret.operands[j] for j, a in enumerate(spec.ret_activity) if a in SEEDED]
        return Activity(body, varied, useful)
    varied = [a for a, act in zip(args, spec.activity) if act == A.DUP]
    ret = terminator(body)
    useful = [ret.operands[j] for j, a in enumerate(spec.ret_activity) if a in WITH_TANGENT]
    return Activity(body, varied, useful)


def _add_permutations(work, act: Activity) -> bool:
    sorts = []

    def visit(o):
        o = o.operation
        if o.name == "stablehlo.sort" and any(act.is_varied(v) for v in o.operands):
            if sort_permutation_operand(o) is None:
                sorts.append(o)

    walk_nested(work, visit)
    for s in sorts:
        add_sort_permutation(s)
    return bool(sorts)


__all__ = ["expand_all", "expand_marker"]
