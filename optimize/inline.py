"""The ``inline`` pass: every ``func.call`` of a function defined in the module is replaced
by a copy of the callee's body; private functions left without symbol uses are dropped.

(MLIR's own ``inline`` pass is registered in this jaxlib but has no inliner interface for
the func dialect, so it does nothing; this is the same transformation in Python.)
"""

from __future__ import annotations

from jaxlib.mlir import ir

from .builtin_passes import run_mlir
from .passes import PassOptions, register_pass


def _functions(module: ir.Module) -> dict:
    return {ir.StringAttr(op.attributes["sym_name"]).value: op
            for op in module.body.operations if op.operation.name == "func.func"}


def _calls(module: ir.Module, funcs: dict) -> list:
    calls = []

    def visit(o):
        if o.name == "func.call" and ir.FlatSymbolRefAttr(o.attributes["callee"]).value in funcs:
            calls.append(o)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return calls


def clone_body(callee, operands, ip: ir.InsertionPoint) -> list:
    """Copy ``callee``'s single-block body at ``ip`` with its arguments bound to
    ``operands``; returns the values it returns."""
    block = callee.regions[0].blocks[0]
    mapping = dict(zip(block.arguments, operands))

    def remap(o):
        for i, v in enumerate(o.operands):
            new = mapping.get(v)
            if new is not None:
                o.operands[i] = new
        return ir.WalkResult.ADVANCE

    results = None
    for op in block.operations:
        if op.operation.name == "func.return":
            results = [mapping.get(v, v) for v in op.operands]
            break
        new = op.operation.clone(ip=ip)
        new.walk(remap)  # operands from the callee (nested regions included) -> the caller's
        for old, nw in zip(op.results, new.results):
            mapping[old] = nw
    return results


def inline_call(call, callee) -> None:
    """Replace ``call`` by a copy of ``callee``'s body."""
    results = clone_body(callee, list(call.operands), ir.InsertionPoint(call))
    for old, nw in zip(call.results, results):
        old.replace_all_uses_with(nw)
    call.erase()


@register_pass("inline")
def inline(module: ir.Module, options: PassOptions) -> None:
    """Inline calls to functions of the module (to a fixpoint), then drop unused private
    functions (functions named by autodiff markers are uses and stay)."""
    funcs = _functions(module)
    for _ in range(64):  # nesting depth bound; traces never recurse
        calls = _calls(module, funcs)
        if not calls:
            break
        for call in calls:
            inline_call(call, funcs[ir.FlatSymbolRefAttr(call.attributes["callee"]).value])
    run_mlir(module, "symbol-dce")
