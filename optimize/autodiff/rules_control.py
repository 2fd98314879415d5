"""Table entries for control flow and calls (expanded by the AD engines, not by a local rule),
and for the custom calls that are only annotations (sharding markers)."""

from __future__ import annotations

from jaxlib.mlir import ir

from .errors import ADError
from .rules import CUSTOM_CALLS, register
from .rules_elementwise import _same_fwd, _same_rev

# stablehlo.while: forward mode carries tangents as extra iteration arguments (forward.py);
# reverse mode caches per-iteration values in stacked tensors, optionally with periodic
# checkpointing (loops.py). stablehlo.if / case: both modes (forward.py, reverse.py).
# func.call: inlined into the working copy before differentiation (ir_util.inline_calls).
for _name in ("stablehlo.while", "stablehlo.if", "stablehlo.case", "func.call"):
    register(_name, None, None, kind="control")

_IDENTITY_TARGETS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost", "MoveToDevice")


def _target(op) -> str:
    a = op.attributes
    if "call_target_name" not in a:
        return "?"
    return ir.StringAttr(a["call_target_name"]).value


def _cc_fwd(cx, op, ts):
    rule = CUSTOM_CALLS.get(_target(op))
    if rule is not None:
        return rule.fwd(cx, op, ts)
    if _target(op) in _IDENTITY_TARGETS and len(op.operands) == 1 and len(op.results) == 1:
        return _same_fwd(cx, op, ts)
    raise ADError(f"no derivative rule for stablehlo.custom_call @{_target(op)}", op)


def _cc_rev(cx, op, cts, want):
    t = _target(op)
    rule = CUSTOM_CALLS.get(t)
    if rule is not None:
        return rule.rev(cx, op, cts, want)
    if t in _IDENTITY_TARGETS and len(op.operands) == 1 and len(op.results) == 1:
        if t in ("SPMDFullToShardShape", "SPMDShardToFullShape"):
            raise ADError(f"reverse-mode derivative of stablehlo.custom_call @{t} is not supported", op)
        return _same_rev(cx, op, cts, want)
    raise ADError(f"no derivative rule for stablehlo.custom_call @{t}", op)


register("stablehlo.custom_call", _cc_fwd, _cc_rev)
