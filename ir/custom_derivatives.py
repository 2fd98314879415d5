"""The marker ops of user-defined derivatives (``reactant.stop_gradient``, ``custom_vjp``,
``custom_jvp``, ``checkpoint``), shared by their producer (the tracer) and their consumers
(the AD pass's rules, the lowering before XLA).

Each is a ``stablehlo.custom_call @reactant.ad.<kind>`` that the optimizer treats as one
opaque op (it folds, moves and differentiates nothing inside it) until the AD pass has run;
then :func:`lower_markers` turns it into plain StableHLO. The functions a marker names are
private ``func.func``s listed in ``called_computations`` (so they are symbol uses that
dead-code elimination keeps); counts are ``name=int`` items in ``backend_config``.

- ``stop_gradient(x) -> x``: zero derivative. Lowered to its operand.
- ``custom_vjp(args..., caps...) -> outs`` with ``[@primal, @fwd, @bwd]`` and
  ``args, pcaps, fcaps, bcaps, res``: ``@primal(args, pcaps) -> outs``,
  ``@fwd(args, fcaps) -> (outs, residuals[res])``, ``@bwd(residuals, cts[one per out],
  bcaps) -> one cotangent per arg``. ``caps`` are the values the three functions capture
  (``pcaps`` + ``fcaps`` + ``bcaps`` operands, in that order): never differentiated.
- ``custom_jvp(args..., caps...) -> outs`` with ``[@primal, @jvp]`` and ``args, pcaps,
  jcaps``: ``@jvp(args, tangents[one per arg], jcaps) -> (outs, tangent outs)``.
- ``checkpoint(args...) -> (outs, saved...)`` with ``[@primal]`` or ``[@primal, @recompute]``
  and ``outs, saved``: reverse mode recomputes ``@primal`` from ``args`` instead of storing
  its intermediates; with a saving policy ``@primal`` also returns the ``saved`` values and
  ``@recompute(args, saved) -> outs`` reuses them (through ``saved_value`` markers).
- ``saved_value(saved, recomputed) -> saved``: the value of its first operand, the derivative
  of its second (only inside ``@recompute``, right after the op that recomputes it). The AD
  pass's forward sweep also takes ``saved`` as the primal of ``recomputed`` (the recomputing
  op's rule reads it), so the recomputation is left unused. Lowered to its first operand.

Lowering: ``stop_gradient`` and ``saved_value`` become their operand, the others a
``func.call`` of ``@primal`` (which the ``inline`` pass inlines).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from jaxlib.mlir import ir

PREFIX = "reactant.ad."
STOP_GRADIENT = PREFIX + "stop_gradient"
CUSTOM_VJP = PREFIX + "custom_vjp"
CUSTOM_JVP = PREFIX + "custom_jvp"
CHECKPOINT = PREFIX + "checkpoint"
SAVED_VALUE = PREFIX + "saved_value"
KINDS = (STOP_GRADIENT, CUSTOM_VJP, CUSTOM_JVP, CHECKPOINT, SAVED_VALUE)
IDENTITIES = (STOP_GRADIENT, SAVED_VALUE)  # lowered to their first operand


@dataclass(frozen=True)
class Marker:
    """A parsed marker: its target, the functions it names and its counts."""

    target: str
    functions: tuple[str, ...]
    config: dict

    def count(self, name: str) -> int:
        return int(self.config.get(name, 0))


def attributes(target: str, functions: Sequence[str] = (), **config: int) -> dict[str, ir.Attribute]:
    """The attributes of a marker op (in the ambient context)."""
    attrs = {"call_target_name": ir.StringAttr.get(target),
             "backend_config": ir.StringAttr.get(",".join(f"{k}={int(v)}" for k, v in config.items()))}
    if functions:
        attrs["called_computations"] = ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(f) for f in functions])
    return attrs


def target_of(op) -> str | None:
    """The call target of a ``stablehlo.custom_call`` (None for any other op)."""
    op = getattr(op, "operation", op)
    if op.name != "stablehlo.custom_call" or "call_target_name" not in op.attributes:
        return None
    return ir.StringAttr(op.attributes["call_target_name"]).value


def is_marker(op) -> bool:
    t = target_of(op)
    return t is not None and t.startswith(PREFIX)


def read(op) -> Marker | None:
    """The marker ``op`` is, or None for any other op."""
    t = target_of(op)
    if t is None or not t.startswith(PREFIX):
        return None
    op = getattr(op, "operation", op)
    a = op.attributes
    fns = ()
    if "called_computations" in a:
        fns = tuple(ir.FlatSymbolRefAttr(x).value for x in ir.ArrayAttr(a["called_computations"]))
    config = {}
    text = ir.StringAttr(a["backend_config"]).value if "backend_config" in a else ""
    for item in filter(None, text.split(",")):
        k, v = item.split("=")
        config[k] = int(v)
    return Marker(t, fns, config)


def primal_operands(op, m: Marker) -> list[ir.Value]:
    """The operands of the call of ``@primal`` that a marker stands for."""
    operands = list(getattr(op, "operation", op).operands)
    if m.target == CHECKPOINT:
        return operands
    n = m.count("args")
    return operands[:n] + operands[n:n + m.count("pcaps")]


def lower_markers(module: ir.Module) -> int:
    """Replace every marker of ``module`` by plain StableHLO (see the module docstring);
    returns how many were replaced. Run once no derivative is taken any more."""
    found = []

    def visit(op):
        if is_marker(op.operation):
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    with module.context:
        for op in found:
            m = read(op)
            if m.target in IDENTITIES:
                op.results[0].replace_all_uses_with(op.operands[0])
            else:
                call = ir.Operation.create("func.call", results=[r.type for r in op.results],
                                           operands=primal_operands(op, m),
                                           attributes={"callee": ir.FlatSymbolRefAttr.get(m.functions[0])},
                                           loc=op.location, ip=ir.InsertionPoint(op))
                for old, new in zip(op.results, call.results):
                    old.replace_all_uses_with(new)
            op.erase()
    return len(found)
