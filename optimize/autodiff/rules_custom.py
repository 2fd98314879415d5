"""Derivative rules of the user-defined-derivative markers (``reactant.ir.custom_derivatives``).

- ``stop_gradient``: no derivative (activity analysis stops at it, see ``stops_derivative``).
- ``custom_vjp``: reverse mode calls ``@fwd`` on the primal arguments for the residuals, then
  ``@bwd`` on the residuals and the results' cotangents. Forward mode is an error, as in JAX.
- ``custom_jvp``: forward mode calls ``@jvp`` with the arguments' tangents. Reverse mode
  transposes the rule: the cotangents of the arguments are the reverse-mode derivative of
  ``@jvp``'s tangent results with respect to its tangent arguments (the rule is linear in
  them), taken by a new ``enzyme.autodiff`` marker that the pass expands next.
- ``checkpoint``: reverse mode differentiates ``@primal`` (or ``@recompute`` with the saved
  values) by a new ``enzyme.autodiff`` marker placed in the adjoint sweep: its expansion
  recomputes the forward pass there, from the inputs only. The inputs and the cotangents go
  through one ``optimization_barrier`` first, so that neither our CSE nor XLA's merges the
  recomputation with the original forward pass (which would store the intermediates
  again), and so that it cannot run before the cotangents exist. Forward mode differentiates
  ``@primal`` by an ``enzyme.fwddiff`` marker.
- ``saved_value(saved, recomputed)``: the derivative of ``recomputed`` (whose primal the
  reverse sweep takes from ``saved``: ``reverse.forward_sweep``).

Values a custom_vjp / custom_jvp function captures (operands after its arguments) have no
derivative; differentiating with respect to one is an error naming the call.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir import custom_derivatives as M
from ...ir.context import function_type
from ...ir.markers import Activity as A
from ...ir.markers import create_marker
from ...ir.types import is_inexact_tensor
from .errors import ADError
from .rules import register_custom_call


def _module_op(op):
    o = getattr(op, "operation", op)
    while o.parent is not None:
        o = o.parent
        o = getattr(o, "operation", o)
    return o


def _ftype(op, name: str) -> ir.FunctionType:
    fn = ir.SymbolTable(_module_op(op))[name]
    return function_type(fn)


def _call(op, name: str, operands: list) -> list:
    types = list(_ftype(op, name).results)
    return list(B.create("func.call", operands, types, {"callee": ir.FlatSymbolRefAttr.get(name)}).results)


def _refuse_captured(op, m: M.Marker, differentiated) -> None:
    """``differentiated[i]``: operand ``i`` carries a derivative."""
    k = m.count("args")
    if any(differentiated[k:]):
        kind = m.target[len(M.PREFIX):]
        raise ADError(f"the {kind} function reads a value that is being differentiated without receiving it "
                      "as an argument: its custom rule cannot give that derivative", op,
                      hint="pass the value as an argument of the function (or in nondiff_argnums to hold it "
                           "constant)")


# -- stop_gradient, saved_value -------------------------------------------------------------------
def _stop_fwd(cx, op, ts):
    return [None]


def _stop_rev(cx, op, cts, want):
    return [None]


def _saved_fwd(cx, op, ts):
    return [ts[1]]


def _saved_rev(cx, op, cts, want):
    return [None, cts[0] if want[1] else None]


# -- custom_vjp ---------------------------------------------------------------------------------------
def _vjp_fwd(cx, op, ts):
    raise ADError("forward-mode differentiation of a custom_vjp function is not defined (as in JAX): it "
                  "has a reverse-mode rule only", op,
                  hint="use reverse mode (reactant.gradient, vjp), or define the function with "
                       "reactant.custom_jvp")


def _vjp_rev(cx, op, cts, want):
    m = M.read(op)
    _refuse_captured(op, m, want)
    k, pc, fc = m.count("args"), m.count("pcaps"), m.count("fcaps")
    vals = [cx.get(v) for v in op.operands]
    n = len(op.results)
    res = _call(op, m.functions[1], vals[:k] + vals[k + pc:k + pc + fc])[n:]
    g = [c if c is not None else B.zeros(r.type) for c, r in zip(cts, op.results)]
    grads = _call(op, m.functions[2], res + g + vals[k + pc + fc:])
    return [grads[i] if i < k and want[i] else None for i in range(len(vals))]


# -- custom_jvp ---------------------------------------------------------------------------------------
def _jvp_fwd(cx, op, ts):
    m = M.read(op)
    _refuse_captured(op, m, [t is not None for t in ts])
    k, pc = m.count("args"), m.count("pcaps")
    vals = [cx.get(v) for v in op.operands]
    tans = [t if t is not None else B.zeros(op.operands[i].type) for i, t in enumerate(ts[:k])]
    out = _call(op, m.functions[1], vals[:k] + tans + vals[k + pc:])
    return out[len(op.results):]


def _jvp_rev(cx, op, cts, want):
    m = M.read(op)
    _refuse_captured(op, m, want)
    k, pc = m.count("args"), m.count("pcaps")
    vals = [cx.get(v) for v in op.operands]
    n = len(op.results)
    rule = m.functions[1]
    ftype = _ftype(op, rule)
    jcaps = vals[k + pc:]
    activity = [A.CONST] * k + [A.ACTIVE if want[i] else A.CONST for i in range(k)] + [A.CONST] * len(jcaps)
    # the rule is linear in the tangents: its transpose does not depend on the point (zeros)
    tangents = [B.zeros(t) for t in list(ftype.inputs)[k:2 * k]]
    ret_activity = [A.CONST_NONEED] * n + [A.ACTIVE_NONEED if c is not None else A.CONST_NONEED for c in cts]
    seeds = [c for c in cts if c is not None]
    marker = create_marker("reverse", (rule, ftype), vals[:k] + tangents + jcaps + seeds, activity, ret_activity)
    grads = iter(marker.results)
    return [next(grads) if i < k and want[i] else None for i in range(len(vals))]


# -- checkpoint ---------------------------------------------------------------------------------------
def _ckpt_rev(cx, op, cts, want):
    m = M.read(op)
    n, s = m.count("outs"), m.count("saved")
    vals = [cx.get(v) for v in op.operands]
    seeds = [c for c in cts[:n] if c is not None]
    if not seeds or not any(want):
        return [None] * len(vals)
    fence = B.create("stablehlo.optimization_barrier", vals + seeds, [v.type for v in vals + seeds])
    inputs, seeds = list(fence.results)[:len(vals)], list(fence.results)[len(vals):]
    activity = [A.ACTIVE if w else A.CONST for w in want]
    if s:  # recompute from the inputs and the values the policy saved
        fn = m.functions[1]
        inputs += [cx.get(r) for r in list(op.results)[n:]]
        activity += [A.CONST] * s
    else:
        fn = m.functions[0]
    ftype = _ftype(op, fn)
    ret_activity = [A.ACTIVE_NONEED if c is not None else A.CONST_NONEED for c in cts[:n]]
    ret_activity += [A.CONST_NONEED] * (len(ftype.results) - n)
    marker = create_marker("reverse", (fn, ftype), inputs + seeds, activity, ret_activity)
    grads = iter(marker.results)
    return [next(grads) if w else None for w in want]


def _ckpt_fwd(cx, op, ts):
    m = M.read(op)
    n = m.count("outs")
    fn = m.functions[0]
    ftype = _ftype(op, fn)
    operands, activity = [], []
    for v, t in zip(op.operands, ts):
        operands.append(cx.get(v))
        activity.append(A.CONST if t is None else A.DUP)
        if t is not None:
            operands.append(t)
    diff = [j < n and is_inexact_tensor(r.type) for j, r in enumerate(op.results)]
    ret_activity = [A.DUP_NONEED if d else A.CONST_NONEED for d in diff]
    marker = create_marker("forward", (fn, ftype), operands, activity, ret_activity)
    tans = iter(marker.results)
    return [next(tans) if d else None for d in diff]


register_custom_call(M.STOP_GRADIENT, _stop_fwd, _stop_rev)
register_custom_call(M.SAVED_VALUE, _saved_fwd, _saved_rev)
register_custom_call(M.CUSTOM_VJP, _vjp_fwd, _vjp_rev)
register_custom_call(M.CUSTOM_JVP, _jvp_fwd, _jvp_rev)
register_custom_call(M.CHECKPOINT, _ckpt_fwd, _ckpt_rev)
