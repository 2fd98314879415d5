"""User-defined derivatives inside a trace: ``stop_gradient``, calls of ``custom_vjp`` /
``custom_jvp`` functions, and ``checkpoint``ed calls.

Nothing is differentiated here. Each call traces the user's functions into private
``func.func``s and records one marker op that names them (the vocabulary and the lowering are
in ``reactant.ir.custom_derivatives``); the AD pass's rules (``optimize.autodiff.rules_custom``)
use the traced rules instead of differentiating the primal.

Arguments: every traced array leaf of the (differentiable) arguments is an operand of the
marker; every other leaf (Python numbers, NumPy arrays, strings...) is a constant of the traced
functions. Values the functions capture from the enclosing trace are operands too; in a
``custom_vjp``/``custom_jvp`` they have no derivative (the AD pass refuses to differentiate
with respect to them: pass them as arguments). Results are new arrays (as in JAX), also where
the function returns an argument. A function that updates an argument or an outer array in
place is refused: its traced body cannot update the caller's arrays.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from jaxlib.mlir import ir

from ..ir import custom_derivatives as M
from ..ir.context import function_type
from .context import current
from .control_flow import _inside
from .dtypes import is_complex, is_float
from .errors import ArgumentError, DTypeError, OptionError, ShapeError, UnsupportedError, describe
from .escape import kill_escaped
from .functions import outline
from .numpy_api.convert import as_traced
from .pytree import TreeDef, flatten, unflatten
from .traced import TracedRArray, TracedRNumber, wrap

Spec = tuple[tuple[int, ...], np.dtype, bool]  # shape, dtype, weak

# A rule usually calls its own function (``return f(x), x`` in a fwd rule). Rules are traced
# when the function is called (there is no later moment: the AD pass runs after tracing), so
# such a call inside a rule being traced records the function with its rules again, down to
# this depth; deeper, it is a plain call of the function. That keeps derivatives of order one
# and two exact; a third derivative differentiates those innermost calls as plain code.
MAX_RULE_DEPTH = 2
_tls = threading.local()


@contextmanager
def _rules_of(fun) -> Iterator[None]:
    depth = getattr(_tls, "depth", None)
    if depth is None:
        depth = _tls.depth = {}
    depth[fun] = depth.get(fun, 0) + 1
    try:
        yield
    finally:
        depth[fun] -= 1
        if not depth[fun]:
            del depth[fun]


def plain_call(fun) -> bool:
    """Whether a call of custom-derivative function ``fun`` is traced as a plain call (it is
    made inside its own rules, ``MAX_RULE_DEPTH`` deep)."""
    return getattr(_tls, "depth", {}).get(fun, 0) >= MAX_RULE_DEPTH


def _is_leaf(x) -> bool:
    return isinstance(x, (TracedRArray, np.ndarray))


def _differentiable(x: TracedRArray) -> bool:
    return is_float(x.dtype) or is_complex(x.dtype)


def _spec(t: TracedRArray) -> Spec:
    return (tuple(t.shape), t.dtype, bool(isinstance(t, TracedRNumber) and t.weak))


def _wrap(value: ir.Value, spec: Spec) -> TracedRArray:
    t = wrap(value, spec[0], spec[1])
    if spec[2] and isinstance(t, TracedRNumber):
        t.weak = True
    return t


def _fn_name(f) -> str:
    return "".join(c for c in getattr(f, "__name__", "f") if c.isalnum() or c == "_") or "f"


# -- stop_gradient ------------------------------------------------------------------------------
def stop_gradient(x: Any) -> Any:
    """``x`` (a pytree) with a zero derivative: each traced floating-point leaf goes through a
    ``stop_gradient`` marker; other leaves have no derivative anyway and are returned as
    they are."""
    tc = current()
    leaves, tree = flatten(x, is_leaf=_is_leaf)
    out = []
    for leaf in leaves:
        if isinstance(leaf, TracedRArray) and _differentiable(leaf):
            op = ir.Operation.create("stablehlo.custom_call", results=[tc.tensor_type(leaf.shape, leaf.dtype)],
                                     operands=[leaf.value], attributes=M.attributes(M.STOP_GRADIENT),
                                     loc=tc.location(), ip=tc.ip)
            leaf = _wrap(op.result, _spec(leaf))
        out.append(leaf)
    return unflatten(tree, out)


# -- tracing the user's functions ---------------------------------------------------------------
@dataclass
class _Traced:
    sym: str
    op: Any  # func.FuncOp
    captured: list[TracedRArray]
    out_specs: list[Spec]


def _trace(fn: Callable[..., list], specs: Sequence[Spec], name: str, what: str) -> _Traced:
    """Trace ``fn(*args) -> [traced values]`` (args: traced values of ``specs``) into a new
    private function; ``what`` names the user's function in errors."""
    tc = current()
    sym = tc.unique_name(name)
    f = tc.new_function(sym, [tc.tensor_type(s, d) for s, d, _ in specs])
    block = f.entry_block
    mark, hstart = len(tc.mutations), len(tc.handles)
    with tc.insert_into(block):
        args = [_wrap(a, s) for a, s in zip(block.arguments, specs)]
        outs = fn(*args)
        values = [o.value for o in outs]
        out_specs = [_spec(o) for o in outs]
    args_set = set(block.arguments)
    for _t, old in tc.mutations[mark:]:
        if old in args_set or not _inside(old, f.operation):
            raise UnsupportedError(f"{what} updates an argument or an outer array in place: its derivative "
                                   "rule is traced apart and cannot update the caller's arrays",
                                   hint="return the new value instead (y = x.copy(); y[...] = ...)")
    tc.finish_function(f, values)
    # the values made inside belong to the private function: none may be used outside it
    kill_escaped(tc.handles, hstart, None, f"{what} returned (it is traced apart)")
    captured = outline(f)
    return _Traced(sym, f, captured, out_specs)


def _as_outputs(out: Any, what: str) -> tuple[list[TracedRArray], TreeDef]:
    leaves, tree = flatten(out, is_leaf=_is_leaf)
    try:
        return [as_traced(leaf) for leaf in leaves], tree
    except ArgumentError as e:
        raise ArgumentError(f"{what} returns a value that is not an array: {e.message}") from None


def _check_like(got: Sequence[TracedRArray], got_tree: TreeDef, want: Sequence[Spec], want_tree: TreeDef,
                what: str, of: str) -> list[TracedRArray]:
    """``got`` must have the structure, shapes and dtypes of ``want`` (``of``: what it should match)."""
    if got_tree != want_tree:
        raise ShapeError(f"{what} returns the structure {got_tree}; {of} has the structure {want_tree}")
    out = []
    for g, (s, d, _) in zip(got, want):
        if tuple(g.shape) != tuple(s) or g.dtype != d:
            raise ShapeError(f"{what} returns {describe(g)} where {of} has {d}{list(s)}")
        out.append(g)
    return out


def _cotangent(ct: Any, like: Spec, what: str) -> TracedRArray | None:
    """A cotangent or tangent leaf given by a user rule, as the value of ``like``'s type (None:
    zero)."""
    if ct is None:
        return None
    t = as_traced(ct)
    if tuple(t.shape) != tuple(like[0]):
        raise ShapeError(f"{what} gives {describe(t)} for a value of shape {list(like[0])}",
                         hint="a derivative has the shape of its value")
    if t.dtype != like[1]:
        if not (is_float(like[1]) or is_complex(like[1])):
            return None  # integer values have no derivative: whatever is given is not used
        if is_complex(t.dtype) and not is_complex(like[1]):
            raise DTypeError(f"{what} gives a complex {describe(t)} for a real value of dtype {like[1]}")
        from . import ops

        t = ops.convert(t, like[1])
    return t


def _zeros(spec: Spec) -> TracedRArray:
    from . import ops

    return ops.full(tuple(spec[0]), 0, spec[1])


class _Args:
    """The arguments of one call: the differentiable ones flattened to leaves (the traced leaves
    become the marker's operands), the others (``nondiff_argnums``) kept as they are."""

    def __init__(self, args: tuple, nondiff: Sequence[int], what: str):
        n = len(args)
        nd = set()
        for i in nondiff:
            if not -n <= i < n:
                raise ArgumentError(f"{what}: nondiff_argnums {tuple(nondiff)} names argument {i}, but it was "
                                    f"called with {n} argument(s)")
            nd.add(i % n)
        self.args = args
        self.diff_pos = [i for i in range(n) if i not in nd]
        self.nondiff = [args[i] for i in sorted(nd)]
        self.trees, self.leaves = [], []
        for i in self.diff_pos:
            ls, t = flatten(args[i], is_leaf=_is_leaf)
            self.trees.append((t, len(self.leaves), len(ls)))
            self.leaves.extend(ls)
        self.traced_pos = [k for k, leaf in enumerate(self.leaves) if isinstance(leaf, TracedRArray)]
        self.specs = [_spec(self.leaves[k]) for k in self.traced_pos]

    def operands(self) -> list[TracedRArray]:
        return [self.leaves[k] for k in self.traced_pos]

    def diff_values(self, traced: Sequence[Any], fill: Callable[[Any], Any] | None = None) -> list:
        """The differentiable arguments with the traced leaves replaced by ``traced`` (and the
        other leaves by ``fill(leaf)`` when given)."""
        ls = list(self.leaves) if fill is None else [fill(x) for x in self.leaves]
        for k, t in zip(self.traced_pos, traced):
            ls[k] = t
        return [unflatten(t, ls[s:s + n]) for t, s, n in self.trees]

    def full(self, traced: Sequence[Any]) -> list:
        """All the arguments, in order, with the traced leaves replaced by ``traced``."""
        out = list(self.args)
        for i, v in zip(self.diff_pos, self.diff_values(traced)):
            out[i] = v
        return out

    def per_traced_leaf(self, per_arg: Sequence[Any], what: str) -> list:
        """One entry per traced leaf from ``per_arg`` (one pytree per differentiable argument,
        or None for all of its leaves)."""
        out: list = [None] * len(self.leaves)
        for a, (tree, s, n) in enumerate(self.trees):
            entry = per_arg[a]
            if entry is None:
                continue
            ls, t = flatten(entry, is_leaf=lambda x: x is None or _is_leaf(x))
            if len(ls) != n:
                raise ShapeError(f"{what} for argument {self.diff_pos[a]} has {len(ls)} leaves; the argument "
                                 f"has {n} ({tree})")
            out[s:s + n] = ls
        return [out[k] for k in self.traced_pos]


def _emit_marker(target: str, functions: Sequence[str], operands: Sequence[TracedRArray],
                 result_specs: Sequence[Spec], label: str, **config: int) -> list[TracedRArray]:
    tc = current()
    op = ir.Operation.create("stablehlo.custom_call", results=[tc.tensor_type(s, d) for s, d, _ in result_specs],
                             operands=[o.value for o in operands], attributes=M.attributes(target, functions, **config),
                             loc=tc.location(name=label), ip=tc.ip)
    return [_wrap(r, s) for r, s in zip(op.results, result_specs)]


def _primal(fun: Callable, args: tuple, nondiff_argnums: Sequence[int], kind: str) -> tuple:
    """``fun`` traced into its own function: (name, description, arguments, the traced function,
    the output tree)."""
    from .autograph import convert

    name = _fn_name(fun)
    what = f"{kind} function {name}"
    A = _Args(args, nondiff_argnums, what)
    box: dict = {}

    def primal(*ts):
        outs, box["out_tree"] = _as_outputs(convert(fun)(*A.full(ts)), what)
        return outs

    pf = _trace(primal, A.specs, f"__{kind}_{name}", what)
    return name, what, A, pf, box["out_tree"]


# -- custom_vjp -----------------------------------------------------------------------------------
def custom_vjp_call(fun: Callable, fwd: Callable, bwd: Callable, args: tuple,
                    nondiff_argnums: Sequence[int] = ()) -> Any:
    """``fun(*args)`` whose reverse-mode derivative is ``bwd(*nondiff, residuals, cotangent)``
    with the residuals of ``fwd(*args) -> (output, residuals)`` (JAX's ``custom_vjp``)."""
    from .autograph import convert

    name, what, A, pf, out_tree = _primal(fun, args, nondiff_argnums, "custom_vjp")
    out_specs = pf.out_specs
    box: dict = {}

    def forward(*ts):
        r = convert(fwd)(*A.full(ts))
        if not (isinstance(r, (tuple, list)) and len(r) == 2):
            raise ArgumentError(f"the fwd rule of {what} must return a pair (output, residuals), got "
                                f"{type(r).__name__}")
        outs, tree = _as_outputs(r[0], f"the fwd rule of {what}")
        outs = _check_like(outs, tree, out_specs, out_tree, f"the fwd rule of {what}", name)
        res, res_tree = flatten(r[1], is_leaf=_is_leaf)
        box["res"] = (res_tree, [None if isinstance(x, TracedRArray) else x for x in res])
        return outs + [x for x in res if isinstance(x, TracedRArray)]

    with _rules_of(fun):
        ff = _trace(forward, A.specs, f"__custom_vjp_fwd_{name}", f"the fwd rule of {what}")
    res_tree, res_static = box["res"]
    res_specs = ff.out_specs[len(out_specs):]

    def backward(*ts):
        it = iter(ts[:len(res_specs)])
        res = unflatten(res_tree, [next(it) if x is None else x for x in res_static])
        g = unflatten(out_tree, list(ts[len(res_specs):]))
        r = convert(bwd)(*A.nondiff, res, g)
        n = len(A.diff_pos)
        if not isinstance(r, (tuple, list)) or len(r) != n:
            raise ArgumentError(f"the bwd rule of {what} must return a tuple with one cotangent per "
                                f"differentiable argument ({n}), got "
                                + (f"{len(r)} entries" if isinstance(r, (tuple, list)) else type(r).__name__),
                                hint="return (ct,) for a function of one argument; None for a zero cotangent")
        cts = A.per_traced_leaf(list(r), f"the bwd rule of {what}")
        out = []
        for ct, spec in zip(cts, A.specs):
            t = _cotangent(ct, spec, f"the bwd rule of {what}")
            out.append(t if t is not None else _zeros(spec))
        return out

    with _rules_of(fun):
        bf = _trace(backward, list(res_specs) + [(s, d, False) for s, d, _ in out_specs],
                    f"__custom_vjp_bwd_{name}", f"the bwd rule of {what}")
    operands = A.operands() + pf.captured + ff.captured + bf.captured
    outs = _emit_marker(M.CUSTOM_VJP, [pf.sym, ff.sym, bf.sym], operands, out_specs, what,
                        args=len(A.specs), pcaps=len(pf.captured), fcaps=len(ff.captured),
                        bcaps=len(bf.captured), res=len(res_specs))
    return unflatten(out_tree, outs)


# -- custom_jvp -----------------------------------------------------------------------------------
def custom_jvp_call(fun: Callable, jvp: Callable, args: tuple, nondiff_argnums: Sequence[int] = ()) -> Any:
    """``fun(*args)`` whose derivative is given by ``jvp(*nondiff, primals, tangents) ->
    (output, tangent)`` (JAX's ``custom_jvp``); reverse mode transposes it."""
    from .autograph import convert

    name, what, A, pf, out_tree = _primal(fun, args, nondiff_argnums, "custom_jvp")
    out_specs = pf.out_specs
    K = len(A.specs)

    def static_tangent(x):
        try:
            return np.zeros_like(np.asarray(x))
        except (TypeError, ValueError):
            return None

    def rule(*ts):
        primals = tuple(A.diff_values(ts[:K]))
        tangents = tuple(A.diff_values(ts[K:], fill=static_tangent))
        r = convert(jvp)(*A.nondiff, primals, tangents)
        if not (isinstance(r, (tuple, list)) and len(r) == 2):
            raise ArgumentError(f"the jvp rule of {what} must return a pair (output, tangent), got "
                                f"{type(r).__name__}")
        outs, tree = _as_outputs(r[0], f"the jvp rule of {what}")
        outs = _check_like(outs, tree, out_specs, out_tree, f"the jvp rule of {what}", name)
        tl, ttree = flatten(r[1], is_leaf=lambda x: x is None or _is_leaf(x))
        if len(tl) != len(out_specs):
            raise ShapeError(f"the jvp rule of {what} returns a tangent of structure {ttree}; the output has "
                             f"the structure {out_tree}")
        tans = []
        for t, spec in zip(tl, out_specs):
            v = _cotangent(t, spec, f"the jvp rule of {what}")
            tans.append(v if v is not None else _zeros(spec))
        return outs + tans

    with _rules_of(fun):
        jf = _trace(rule, list(A.specs) + [(s, d, False) for s, d, _ in A.specs], f"__custom_jvp_rule_{name}",
                    f"the jvp rule of {what}")
    operands = A.operands() + pf.captured + jf.captured
    outs = _emit_marker(M.CUSTOM_JVP, [pf.sym, jf.sym], operands, out_specs, what,
                        args=K, pcaps=len(pf.captured), jcaps=len(jf.captured))
    return unflatten(out_tree, outs)


# -- checkpoint -----------------------------------------------------------------------------------
DOT_OPS = frozenset({"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"})
POLICIES = ("nothing_saveable", "dots_saveable")  # (and None, and a callable)


def save_predicate(policy) -> Callable[[str], bool] | None:
    """The op-name predicate of a checkpoint policy (None: save nothing but the inputs)."""
    if policy is None or policy == "nothing_saveable":
        return None
    if policy in ("dots_saveable", "dots"):
        return DOT_OPS.__contains__
    if callable(policy):
        return policy
    raise OptionError(f"checkpoint policy {policy!r} is not supported; use None (or 'nothing_saveable': "
                      "recompute everything), 'dots_saveable' (or 'dots': keep the results of matrix "
                      "products and convolutions) or a callable taking a StableHLO op name")


def checkpoint_call(fun: Callable, args: tuple, kwargs: dict, policy=None) -> Any:
    """``fun(*args, **kwargs)``, recomputed in reverse mode instead of storing its intermediates
    (except the results of the top-level ops that ``policy`` saves)."""
    from .autograph import convert

    save = save_predicate(policy)
    name = _fn_name(fun)
    what = f"checkpointed function {name}"
    A = _Args((args, kwargs), (), what)
    box: dict = {}

    def primal(*ts):
        a, kw = A.full(ts)
        outs, box["out_tree"] = _as_outputs(convert(fun)(*a, **kw), what)
        return outs

    pf = _trace(primal, A.specs, f"__checkpoint_{name}", what)
    out_tree, out_specs = box["out_tree"], list(pf.out_specs)
    functions = [pf.sym]
    saved_specs: list[Spec] = []
    if save is not None:
        saved = _select(pf.op, save)
        if saved:
            saved_specs = [(tuple(ir.RankedTensorType(v.type).shape), _np_dtype(v), False) for v in saved]
            functions.append(_split(pf, saved))
    outs = _emit_marker(M.CHECKPOINT, functions, A.operands() + pf.captured, out_specs + saved_specs, what,
                        outs=len(out_specs), saved=len(saved_specs))
    return unflatten(out_tree, outs[:len(out_specs)])


def _np_dtype(v: ir.Value) -> np.dtype:
    from ..ir.types import np_dtype

    return np_dtype(ir.RankedTensorType(v.type).element_type)


def _select(fn, save: Callable[[str], bool]) -> list[ir.Value]:
    """The floating-point results of ``fn``'s top-level ops that the policy saves."""
    from ..ir.regions import block_ops
    from ..ir.types import is_inexact_tensor

    out = []
    for o in block_ops(fn.entry_block):
        o = o.operation
        ok = save(o.name)
        if not isinstance(ok, (bool, np.bool_)):
            raise OptionError(f"a checkpoint policy must return True or False, got {ok!r} for {o.name}")
        if ok:
            out.extend(r for r in o.results if is_inexact_tensor(r.type))
    return out


def _split(pf: _Traced, saved: list[ir.Value]) -> str:
    """Make ``pf``'s function also return the ``saved`` values, and add the function that
    recomputes its results from its arguments and the saved values: each saved value ``v`` is
    replaced by ``saved_value(v_saved, v)`` (the saved value, with ``v``'s derivative).
    Returns the recomputing function's name."""
    tc = current()
    fn = pf.op
    block = fn.entry_block
    ops = list(block.operations)
    ret = ops[-1]
    index = {r: (i, j) for i, o in enumerate(ops) for j, r in enumerate(o.results)}
    sym = tc.unique_name(pf.sym + "_recompute")
    with ir.InsertionPoint(tc.module.body), tc.unknown_loc:
        rec = fn.operation.clone()
    rec.attributes["sym_name"] = ir.StringAttr.get(sym)
    tc.functions[sym] = rec.opview if hasattr(rec, "opview") else rec
    rblock = rec.regions[0].blocks[0]
    rops = list(rblock.operations)
    ftype = function_type(fn)
    with tc.unknown_loc:
        extra = [rblock.add_argument(v.type, tc.unknown_loc) for v in saved]
        for v, arg in zip(saved, extra):
            i, j = index[v]
            src = rops[i].results[j]
            uses = [(u.owner, u.operand_number) for u in src.uses]
            m = ir.Operation.create("stablehlo.custom_call", results=[v.type], operands=[arg, src],
                                    attributes=M.attributes(M.SAVED_VALUE), loc=rops[i].location,
                                    ip=ir.InsertionPoint(rops[i + 1]))
            for owner, k in uses:
                getattr(owner, "operation", owner).operands[k] = m.result
        rec.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(ftype.inputs) + [v.type for v in saved], list(ftype.results)))
        # the primal returns the saved values too
        with ir.InsertionPoint(ret), ret.location:
            ir.Operation.create("func.return", operands=list(ret.operands) + list(saved))
        ret.erase()
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(ftype.inputs), list(ftype.results) + [v.type for v in saved]))
    return sym
