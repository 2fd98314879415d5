"""``autodiff`` inside a trace: activity annotations, modes, and the marker ops.

The tracer does not differentiate. It traces the primal function into a private
``func.func`` and records an ``enzyme.autodiff`` (reverse) or ``enzyme.fwddiff`` (forward)
marker naming it; the ``autodiff`` pass of ``reactant.optimize`` expands markers into
derivative code after the module has been optimized (the contract is documented in
``optimize/autodiff/markers.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from jaxlib.mlir import ir

from ..ir.markers import Activity as A
from ..ir.markers import WITH_DERIVATIVE, create_marker
from . import ops
from .context import current
from .dtypes import is_complex, is_float
from .errors import DTypeError, ShapeError, describe
from .functions import trace_function
from .numpy_api.convert import as_traced
from .pytree import TreeDef, flatten, register_pytree_node, unflatten
from .traced import TracedRArray, rebind, wrap


# -- modes --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mode:
    name: str
    reverse: bool
    with_primal: bool

    def __repr__(self) -> str:
        return f"reactant.{self.name}"


Reverse = Mode("Reverse", True, False)
ReverseWithPrimal = Mode("ReverseWithPrimal", True, True)
Forward = Mode("Forward", False, False)
ForwardWithPrimal = Mode("ForwardWithPrimal", False, True)


# -- activities (pytree nodes, so compiled calls flatten through them) -------------------------
@dataclass(frozen=True)
class Active:
    """Reverse mode: the gradient with respect to ``value`` is returned."""

    value: Any


@dataclass(frozen=True)
class Const:
    """No derivative with respect to ``value``."""

    value: Any


@dataclass(frozen=True)
class Duplicated:
    """Reverse mode: the gradient is accumulated into ``shadow`` (updated in place).
    Forward mode: ``shadow`` is the tangent of ``value``."""

    value: Any
    shadow: Any


@dataclass(frozen=True)
class BatchDuplicated:
    """Vector forward mode: one tangent per entry of ``shadows``. With ``stacked=True``,
    ``shadows`` is ``(tangents,)`` where ``tangents`` has a leading dimension of the width."""

    value: Any
    shadows: tuple
    stacked: bool = False


register_pytree_node(Active, lambda a: ((a.value,), None), lambda aux, ch: Active(ch[0]))
register_pytree_node(Const, lambda a: ((a.value,), None), lambda aux, ch: Const(ch[0]))
register_pytree_node(Duplicated, lambda a: ((a.value, a.shadow), None), lambda aux, ch: Duplicated(*ch))
register_pytree_node(BatchDuplicated, lambda a: ((a.value, *a.shadows), (len(a.shadows), a.stacked)),
                     lambda aux, ch: BatchDuplicated(ch[0], tuple(ch[1:]), aux[1]))

_DIFFERENTIABLE = "only floating-point (or complex) values can be differentiated"


def _leaves(value) -> tuple[list, TreeDef]:
    return flatten(value, is_leaf=lambda x: isinstance(x, (TracedRArray, np.ndarray)))


def _differentiable(x: TracedRArray) -> bool:
    return is_float(x.dtype) or is_complex(x.dtype)


def autodiff(mode: Mode, f: Callable, *args, seed=None) -> Any:
    """Differentiate ``f`` at ``args`` (each Active/Const/Duplicated/BatchDuplicated, or a
    plain value meaning Const) inside the current trace. See ``reactant.autodiff``."""
    if not isinstance(mode, Mode):
        raise TypeError(f"first argument must be a mode (reactant.Reverse, ...), got {mode!r}")
    # 1. flatten the annotated arguments: one entry per traced leaf with its activity
    kinds, trees, leaves, entries = [], [], [], []
    for a in args:
        annotated = isinstance(a, (Active, Const, Duplicated, BatchDuplicated))
        kind, value = (type(a), a.value) if annotated else (Const, a)
        stacked = False
        ls, tree = _leaves(value)
        shadows = []  # one flattened shadow per tangent
        if kind is Duplicated:
            shadows = [_leaves(a.shadow)[0]]
        elif kind is BatchDuplicated:
            shadows = [_leaves(s)[0] for s in a.shadows]
            stacked = a.stacked
        if any(len(s) != len(ls) for s in shadows):
            raise ShapeError(f"{kind.__name__}: the shadow's structure does not match the value's")
        start = len(leaves)
        for k, leaf in enumerate(ls):
            if kind is not Const and isinstance(leaf, (np.ndarray, np.generic, int, float, complex)):
                leaf = as_traced(leaf)  # a derivative with respect to a constant value
            leaves.append(leaf)
            if isinstance(leaf, TracedRArray):
                entries.append(_entry(kind, len(leaves) - 1, leaf, [s[k] for s in shadows], stacked))
        kinds.append(kind)
        trees.append((tree, start, len(ls)))
    if mode.reverse and BatchDuplicated in kinds:
        raise TypeError("BatchDuplicated is a forward-mode activity")
    if not mode.reverse and Active in kinds:
        raise TypeError("Active is a reverse-mode activity: use Duplicated(x, dx) in forward mode")

    # 2. trace the primal into a private function f(*values)
    arg_tree = TreeDef(tuple, None, tuple(t for t, _, _ in trees))
    full_tree = TreeDef(tuple, None, (arg_tree, TreeDef(dict, (), ())))
    fname = "__ad_" + "".join(c for c in getattr(f, "__name__", "f") if c.isalnum() or c == "_")
    tf = trace_function(f, leaves, full_tree, [e.pos for e in entries], name=fname)
    if mode.reverse:
        return _reverse(mode, tf, leaves, entries, kinds, trees, seed)
    return _forward(mode, tf, leaves, entries, kinds, trees)


@dataclass
class _Entry:
    pos: int  # index among the flattened argument leaves
    act: A  # ACTIVE, CONST or DUP
    tangent: TracedRArray | None  # the shadow operand (stacked to (width, ...) in vector mode)
    width: int
    raw_shadows: list  # as the user gave them (updated in place for reverse-mode dup)
    stacked: bool = False  # vector-mode tangents given (and returned) stacked


def _entry(kind, pos: int, leaf: TracedRArray, raw_shadows: list, stacked: bool) -> _Entry:
    act = {Active: A.ACTIVE, Const: A.CONST, Duplicated: A.DUP, BatchDuplicated: A.DUP}[kind]
    if act != A.CONST and not _differentiable(leaf):
        raise DTypeError(f"{kind.__name__} argument {describe(leaf)}: {_DIFFERENTIABLE}",
                         hint="mark integer arguments reactant.Const")
    if act != A.DUP:
        return _Entry(pos, act, None, 1, raw_shadows)
    shadows = [as_traced(raw, leaf.dtype) if not isinstance(raw, TracedRArray) else raw for raw in raw_shadows]
    want = leaf.shape
    for sh in shadows:
        got = sh.shape[1:] if stacked else sh.shape
        if got != want or sh.dtype != leaf.dtype:
            raise ShapeError(f"{kind.__name__}: shadow {describe(sh)} does not match value {describe(leaf)}",
                             hint="a shadow/tangent has the shape and dtype of its value")
    if stacked:
        return _Entry(pos, act, shadows[0], shadows[0].shape[0], raw_shadows, True)
    if kind is BatchDuplicated:
        return _Entry(pos, act, _stack(shadows), len(shadows), raw_shadows)
    return _Entry(pos, act, shadows[0], 1, raw_shadows)


def _reverse(mode, tf, leaves, entries, kinds, trees, seed):
    res = tf.results
    # which results are differentiated, and their seeds
    if seed is None:
        diff = [_differentiable(r) for r in res]
        dres = [r for r, d in zip(res, diff) if d]
        if len(dres) != 1 or dres[0].shape != ():
            raise ShapeError(
                "reverse mode needs a function with one scalar floating-point result, got "
                + (", ".join(describe(r) for r in res) or "no traced result"),
                hint="use reactant.vjp(f, *args, cotangent=...) to seed a non-scalar result, or Forward mode",
            )
        seeds = [ops.full((), 1, dres[0].dtype)]
    else:
        seed_leaves, _ = _leaves(seed)
        diff = [_differentiable(r) for r in res]
        if len(seed_leaves) != sum(diff):
            raise ShapeError(f"the cotangent has {len(seed_leaves)} leaves; the result has {sum(diff)} "
                             "differentiable leaves")
        seeds = []
        for r, s in zip([r for r, d in zip(res, diff) if d], seed_leaves):
            t = as_traced(s, r.dtype)
            if t.shape != r.shape:
                raise ShapeError(f"cotangent {describe(t)} does not match result {describe(r)}")
            seeds.append(t)
    keep = mode.with_primal
    ret_act = [(A.ACTIVE if keep else A.ACTIVE_NONEED) if d else (A.CONST if keep else A.CONST_NONEED) for d in diff]
    activity, operands = _marker_operands(tf, leaves, entries)
    operands += seeds
    result_specs = [(r.shape, r.dtype) for r in res] if keep else []
    grad_specs = [(leaves[e.pos].shape, leaves[e.pos].dtype) for e in entries if e.act in WITH_DERIVATIVE]
    op = _marker("reverse", tf, operands, activity, ret_act)
    outs = [wrap(v, s, d) for v, (s, d) in zip(op.results, result_specs + grad_specs)]
    primal_vals, grads = outs[:len(result_specs)], outs[len(result_specs):]
    # 3. map gradients back to the arguments' structures; shadows updated in place
    gi = iter(grads)
    per_leaf = {}
    for e in entries:
        if e.act == A.ACTIVE:
            per_leaf[e.pos] = next(gi)
        elif e.act == A.DUP:
            new = next(gi)
            if isinstance(e.raw_shadows[0], TracedRArray):  # accumulate into the caller's shadow
                rebind(e.raw_shadows[0], new)
    out = []
    for kind, (tree, start, n) in zip(kinds, trees):
        if kind is Active:
            out.append(unflatten(tree, [per_leaf.get(p) for p in range(start, start + n)]))
        else:
            out.append(None)
    grads_tuple = tuple(out)
    if keep:
        return grads_tuple, unflatten(tf.out_tree, primal_vals)
    return grads_tuple


def _forward(mode, tf, leaves, entries, kinds, trees):
    res = tf.results
    widths = {e.width for e in entries if e.act == A.DUP}
    if len(widths) > 1:
        raise ShapeError("all duplicated arguments of one forward-mode call need the same number of tangents")
    width = widths.pop() if widths else 1
    diff = [_differentiable(r) for r in res]
    keep = mode.with_primal
    ret_act = [(A.DUP if keep else A.DUP_NONEED) if d else (A.CONST if keep else A.CONST_NONEED) for d in diff]
    activity, operands = _marker_operands(tf, leaves, entries)
    primal_specs = [(r.shape, r.dtype) for r in res] if keep else []
    tan_specs = [(((width,) if width > 1 else ()) + r.shape, r.dtype) for r, d in zip(res, diff) if d]
    op = _marker("forward", tf, operands, activity, ret_act, width=width)
    outs = [wrap(v, s, d) for v, (s, d) in zip(op.results, primal_specs + tan_specs)]
    primals, tans = outs[:len(primal_specs)], outs[len(primal_specs):]
    ti = iter(tans)
    tangent_leaves = [next(ti) if d else None for d in diff]
    if width > 1 and any(e.stacked for e in entries):
        tangent = unflatten(tf.out_tree, tangent_leaves)  # stacked in, stacked out
    elif width > 1:
        tangent = tuple(unflatten(tf.out_tree, [_row(t, k) if t is not None else None for t in tangent_leaves])
                        for k in range(width))
    else:
        tangent = unflatten(tf.out_tree, tangent_leaves)
    if keep:
        return tangent, unflatten(tf.out_tree, primals)
    return tangent


def _stack(ts):
    return ops.concatenate([ops.reshape(t, (1,) + t.shape) for t in ts], 0)


def _row(t: TracedRArray, k: int) -> TracedRArray:
    shape = t.shape[1:]
    return ops.reshape(ops.slice(t, (k,) + (0,) * len(shape), (k + 1,) + shape), shape)


def _marker_operands(tf, leaves, entries) -> tuple[list, list]:
    """Activities and operands of a marker: each argument (with its shadow if dup), then the
    values the traced function captured, as constants."""
    activity, operands = [], []
    for e in entries:
        activity.append(e.act)
        operands.append(leaves[e.pos])
        if e.act == A.DUP:
            operands.append(e.tangent)
    for c in tf.captured:
        activity.append(A.CONST)
        operands.append(c)
    return activity, operands


def _marker(mode: str, tf, operands, activity, ret_activity, width: int = 1) -> ir.Operation:
    tc = current()
    return create_marker(mode, tf.op, [o.value for o in operands], activity, ret_activity,
                         width=width, loc=tc.location(), ip=tc.ip)
