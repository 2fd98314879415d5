"""The vocabulary of the automatic-differentiation markers, shared by their producer (the
tracer's ``reactant.autodiff``) and their consumer (the optimizer's ``autodiff`` pass).

A marker op names a private ``func.func`` to differentiate; the pass expands it after the
module has been optimized. The full contract (operand and result layout, validation) is
documented in ``reactant.optimize.autodiff.markers``; this module holds what both sides
need to agree on: op names, activity names and the result types a marker has.
"""

from __future__ import annotations

import enum
from typing import Sequence

from jaxlib.mlir import ir

from .attrs import i64_attr
from .types import ranked, tensor_type

REVERSE = "enzyme.autodiff"
FORWARD = "enzyme.fwddiff"
MARKERS = (REVERSE, FORWARD)


class Activity(str, enum.Enum):
    """Activity of an argument or a result of the differentiated function (EnzymeMLIR's)."""

    ACTIVE = "active"  # reverse: the gradient is returned / the result is differentiated
    CONST = "const"  # no derivative
    DUP = "dup"  # duplicated: primal plus shadow (reverse) or tangent (forward)
    ACTIVE_NONEED = "activenoneed"  # reverse result: differentiated, primal not returned
    CONST_NONEED = "constnoneed"  # result neither returned nor differentiated
    DUP_NONEED = "dupnoneed"  # forward result: tangent only

    def __str__(self) -> str:
        return self.value


A = Activity
ARG_REVERSE = (A.ACTIVE, A.CONST, A.DUP)
RET_REVERSE = (A.ACTIVE, A.ACTIVE_NONEED, A.CONST, A.CONST_NONEED)
ARG_FORWARD = (A.CONST, A.DUP)
RET_FORWARD = (A.DUP, A.DUP_NONEED, A.CONST, A.CONST_NONEED)
SEEDED = (A.ACTIVE, A.ACTIVE_NONEED)  # reverse-mode results that take a seed (cotangent)
WITH_DERIVATIVE = (A.ACTIVE, A.DUP)  # arguments with a derivative (reverse: a derivative result)
WITH_TANGENT = (A.DUP, A.DUP_NONEED)  # forward-mode results whose tangent is returned
RETURNS_PRIMAL = (A.ACTIVE, A.DUP, A.CONST)  # results whose primal value the marker returns


def result_types(mode: str, activity: Sequence[str], ret_activity: Sequence[str], arg_types: Sequence[ir.Type],
                 res_types: Sequence[ir.Type], width: int = 1) -> list[ir.Type]:
    """The result types of a marker: the primal results it returns, then (reverse) one
    derivative per active/dup argument or (forward) one tangent per dup result, with a
    leading ``width`` dimension in vector forward mode."""
    out = [t for a, t in zip(ret_activity, res_types) if a in RETURNS_PRIMAL]
    if mode == "reverse":
        out += [t for a, t in zip(activity, arg_types) if a in WITH_DERIVATIVE]
    else:
        out += [batched_type(t, width) for a, t in zip(ret_activity, res_types) if a in WITH_TANGENT]
    return out


def batched_type(t: ir.Type, width: int) -> ir.Type:
    """``t`` with a leading dimension ``width`` (vector forward mode), ``t`` when width is 1."""
    if width == 1:
        return t
    tt = tensor_type(t)
    return ranked([width] + list(tt.shape), tt.element_type)


def create_marker(mode: str, fn, operands: Sequence[ir.Value], activity: Sequence[str],
                  ret_activity: Sequence[str], *, width: int = 1, loc: ir.Location | None = None,
                  ip: ir.InsertionPoint | None = None) -> ir.Operation:
    """Build a marker op (at ``ip`` or the ambient insertion point).

    ``mode``: ``"reverse"`` or ``"forward"``; ``fn``: the ``func.func`` to differentiate, or
    its symbol name and ``FunctionType`` as ``(name, ftype)``; ``operands`` laid out as the
    contract says (each argument followed by its shadow/tangent if dup, then the reverse-mode
    seeds). The result types follow the contract; the optimizer validates the op when it
    expands it."""
    if mode not in ("reverse", "forward"):
        raise ValueError(f"mode must be 'reverse' or 'forward', got {mode!r}")
    if isinstance(fn, tuple):
        fn_name, ftype = fn
    else:
        fn_name = ir.StringAttr(fn.attributes["sym_name"]).value
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    types = result_types(mode, activity, ret_activity, list(ftype.inputs), list(ftype.results), width)
    attrs = {"fn": ir.FlatSymbolRefAttr.get(fn_name),
             "activity": ir.ArrayAttr.get([ir.StringAttr.get(str(a)) for a in activity]),
             "ret_activity": ir.ArrayAttr.get([ir.StringAttr.get(str(a)) for a in ret_activity])}
    if width != 1:
        attrs["width"] = i64_attr(width)
    return ir.Operation.create(REVERSE if mode == "reverse" else FORWARD, results=types,
                               operands=list(operands), attributes=attrs, loc=loc, ip=ip)
