"""The ``inline`` pass: every ``func.call`` of a function defined in the module is replaced
by a copy of the callee's body; private functions left without symbol uses are dropped.

(MLIR's own ``inline`` pass is registered in this jaxlib but has no inliner interface for
the func dialect, so it does nothing; this is the same transformation in Python.)
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ..ir.context import functions
from ..ir.regions import callee_name, inline_call
from .builtin_passes import run_mlir
from .passes import PassOptions, register_pass


def _calls(module: ir.Module, funcs: dict) -> list:
    calls = []

    def visit(o):
        if o.name == "func.call" and callee_name(o) in funcs:
            calls.append(o)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return calls


@register_pass("inline")
def inline(module: ir.Module, options: PassOptions) -> None:
    """Inline calls to functions of the module (to a fixpoint), then drop unused private
    functions (functions named by autodiff markers are uses and stay)."""
    funcs = functions(module)
    for _ in range(64):  # nesting depth bound; traces never recurse
        calls = _calls(module, funcs)
        if not calls:
            break
        for call in calls:
            inline_call(call, funcs[callee_name(call)])
    run_mlir(module, "symbol-dce")
