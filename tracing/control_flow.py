"""Structured control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``.

Inside a trace they emit ``stablehlo.if`` / ``case`` / ``while`` whose regions are traced
from the Python callables; on concrete values (a Python bool, a device array outside a
trace) they simply run the Python code.

Regions capture values of the enclosing trace directly. In-place updates of outer traced
arrays made inside a branch or a loop body (``x[i] = v``) are detected through the trace's
mutation log and become extra results (branches) or extra loop-carried values (loops), so
they are visible after the construct exactly as in Python.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

import numpy as np
from jaxlib.mlir import ir

from . import ops
from .aliases import changed_numpy, numpy_contents, refuse_carried_alias, restore_numpy, user_frames
from .context import active, current
from .dtypes import result_type
from .errors import ConcretizationError, DTypeError, NonUniformLoopError, ShapeError, describe
from .numpy_api.convert import PY_SCALARS, as_traced, broadcast_to, dtype_for_promotion
from .pytree import flatten, unflatten
from .escape import kill_escaped
from .traced import TracedRArray, TracedRNumber, rebind, root_of, wrap

_BOOL = np.dtype(np.bool_)


# -- helpers ------------------------------------------------------------------------------------
def _leaves(x):
    return flatten(x, is_leaf=lambda v: isinstance(v, (TracedRArray, np.ndarray)))


class _NoResult:
    """The result of a function on a path that has not returned yet (a ``return`` inside a
    loop, ``autograph._lift_loop_returns``). Where an if merges it with a path that has
    returned, it takes that path's structure and zeros: the program never reads them, a flag
    says which paths returned."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no result yet>"


NO_RESULT = _NoResult()


def _fill_no_result(init, new):
    """``init`` with each ``NO_RESULT`` that ``new`` holds a value for replaced by zeros of
    that value's structure and types (a loop carrying a function's result from before any
    iteration returned); None when there is none."""
    if init is NO_RESULT:
        if new is NO_RESULT or new is None:
            return None
        leaves, tree = _leaves(new)
        return unflatten(tree, [np.zeros(v.shape, v.dtype) if isinstance(v, TracedRArray) else v for v in leaves])
    if type(init) in (tuple, list) and type(new) is type(init) and len(new) == len(init):
        parts = [_fill_no_result(a, b) for a, b in zip(init, new)]
        if all(p is None for p in parts):
            return None
        return type(init)(a if p is None else p for a, p in zip(init, parts))
    return None


def _expand_no_result(traced: list) -> None:
    """Branch results (tuples of variables) holding ``NO_RESULT`` where another branch holds
    a value take that value's structure, with ``NO_RESULT`` leaves (``_branches``)."""
    ress = [unflatten(t[2], t[1]) for t in traced]
    if not all(type(r) is tuple and len(r) == len(ress[0]) for r in ress):
        return
    ress = [list(r) for r in ress]
    for i in range(len(ress[0])):
        real = [r[i] for r in ress if r[i] is not NO_RESULT]
        if not real or len(real) == len(ress):
            continue
        leaves, tree = _leaves(real[0])
        for r in ress:
            if r[i] is NO_RESULT:
                r[i] = unflatten(tree, [NO_RESULT] * len(leaves))
    for k, r in enumerate(ress):
        leaves, tree = _leaves(tuple(r))
        traced[k] = (traced[k][0], leaves, tree, *traced[k][3:])


def _any_traced(*trees) -> bool:
    for t in trees:
        leaves, _ = _leaves(t)
        if any(isinstance(v, TracedRArray) for v in leaves):
            return True
    return False


def _where_defined(fn) -> str:
    where = getattr(fn, "__reactant_where__", None)
    if where is not None:
        return where
    code = getattr(fn, "__code__", None)
    if code is None:
        return repr(fn)
    return f"{os.path.abspath(code.co_filename)}:{code.co_firstlineno}"


def _fn_name(fn) -> str:
    return getattr(fn, "__reactant_name__", None) or getattr(fn, "__name__", "fn")


def _inside(value: ir.Value, op: ir.Operation) -> bool:
    """Whether ``value`` is defined inside one of ``op``'s regions."""
    owner = value.owner
    o = owner.owner if isinstance(owner, ir.Block) else owner.operation
    while o is not None:
        if o == op:
            return True
        o = o.parent
    return False


def _outer_mutations(tc, mark: int, op: ir.Operation) -> dict:
    """Tracers created outside ``op`` that were rebound since ``mark``: {id: (tracer, value
    before)}; afterwards the tracers are restored and the log truncated to ``mark``."""
    found: dict[int, tuple[TracedRArray, ir.Value]] = {}
    for t, old in tc.mutations[mark:]:
        if id(t) not in found:
            found[id(t)] = (t, old)
    outer = {k: v for k, v in found.items() if not _inside(v[1], op)}
    return outer


def _restore(tc, mark: int) -> None:
    """Undo rebindings logged since ``mark`` (latest first) and drop them from the log."""
    for t, old in reversed(tc.mutations[mark:]):
        t.value = old
    del tc.mutations[mark:]


def staged() -> bool:
    """Whether code is being traced into a loop body or a branch: what it does there the
    program runs many times, or only on one side of a condition, so a NumPy array changed there
    must become a traced array (the change then follows the program), not change once now."""
    tc = active()
    if tc is None or not tc._ips:
        return False
    op = tc.ip.block.owner.operation
    while op is not None:
        name = op.name
        if name in ("stablehlo.while", "stablehlo.if", "stablehlo.case") or \
                (name == "reactant.scratch" and len(op.regions) >= 2):  # (branches traced before their op)
            return True
        if name == "func.func":
            return False
        op = op.parent.operation if op.parent is not None else None
    return False


def _holder(n_regions: int) -> ir.Operation:
    """A scratch op whose regions receive traced blocks until the real op can be created."""
    tc = current()
    return ir.Operation.create("reactant.scratch", results=[], operands=[], regions=n_regions,
                               loc=tc.location(), ip=tc.ip)


def _return(values: Sequence[TracedRArray]) -> None:
    tc = current()
    ir.Operation.create("stablehlo.return", operands=[v.value for v in values], loc=tc.location(), ip=tc.ip)


def _scalar_pred(pred, what: str) -> TracedRArray:
    p = as_traced(pred)
    if p.shape != ():
        raise ShapeError(f"{what} needs a scalar predicate, got {describe(p)}",
                         hint="reduce it first, e.g. with np.any / np.all")
    if p.dtype != _BOOL:
        p = ops.compare(p, ops.full((), 0, p.dtype), "NE")
    return p


# -- cond / switch --------------------------------------------------------------------------------
def cond(pred, true_fn: Callable, false_fn: Callable, *operands) -> Any:
    """``true_fn(*operands) if pred else false_fn(*operands)``; a ``stablehlo.if`` when
    ``pred`` is traced."""
    if not isinstance(pred, TracedRArray):
        return true_fn(*operands) if bool(pred) else false_fn(*operands)
    p = _scalar_pred(pred, "cond")
    return _branches("stablehlo.if", p, [true_fn, false_fn], operands)


def switch(index, branches: Sequence[Callable], *operands) -> Any:
    """``branches[index](*operands)`` with ``index`` clamped into range (as XLA does); a
    ``stablehlo.case`` when ``index`` is traced."""
    branches = list(branches)
    if not branches:
        raise ValueError("switch needs at least one branch")
    if not isinstance(index, TracedRArray):
        i = int(np.clip(int(np.asarray(index)), 0, len(branches) - 1))
        return branches[i](*operands)
    idx = as_traced(index)
    if idx.shape != () or idx.dtype.kind not in "iu":
        raise DTypeError(f"switch needs a scalar integer index, got {describe(idx)}")
    idx = ops.convert(idx, np.int32)
    n = len(branches)
    idx = ops.clamp(ops.constant(np.int32(0)), idx, ops.constant(np.int32(n - 1)))
    if n == 1:
        return branches[0](*operands)
    return _branches("stablehlo.case", idx, branches, operands)


def _branches(opname: str, selector: TracedRArray, fns: list[Callable], operands) -> Any:
    tc = current()
    holder = _holder(len(fns))
    traced = []  # per branch: (block, leaves, tree, mutated {id: (tracer, value_in_branch)})
    mutated_order: list[TracedRArray] = []
    before: dict[int, ir.Value] = {}
    for k, fn in enumerate(fns):
        block = holder.regions[k].blocks.append()
        mark = len(tc.mutations)
        with tc.insert_into(block):
            res = fn(*operands)
            leaves, tree = _leaves(res)
            # the branch's results as they are now: undoing the outer rebindings below must not
            # turn a returned tracer that was updated in place back into its value before the
            # branch (and a view computes its value here, inside the branch)
            leaves = [_snapshot(x) if isinstance(x, TracedRArray) else x for x in leaves]
        outer = _outer_mutations(tc, mark, holder)
        inside_vals = {}
        for key, (t, old) in outer.items():
            inside_vals[key] = t.value
            if key not in before:
                before[key] = old
                mutated_order.append(t)
        _restore(tc, mark)
        traced.append((block, leaves, tree, inside_vals, fn))
    # unify result structures and types
    if any(t[2] != traced[0][2] for t in traced[1:]):
        _expand_no_result(traced)
    tree0 = traced[0][2]
    for block, leaves, tree, _, fn in traced[1:]:
        if tree != tree0:
            raise ShapeError(
                f"branches return different structures: {tree0} ({_where_defined(traced[0][4])}) vs "
                f"{tree} ({_where_defined(fn)})")
    n_leaves = len(traced[0][1])
    out_kinds: list[Any] = []  # per leaf: ("static", value) or (shape, dtype)
    for p in range(n_leaves):
        col = [t[1][p] for t in traced]
        out_kinds.append(_unify(col, [t[4] for t in traced], p))
    result_specs = [k for k in out_kinds if k[0] != "static"]
    result_specs += [(t.shape, t.dtype) for t in mutated_order]
    for block, leaves, tree, inside_vals, fn in traced:
        with tc.insert_into(block):
            vals = []
            for leaf, kind in zip(leaves, out_kinds):
                if kind[0] == "static":
                    continue
                if leaf is NO_RESULT:  # (never read: a path that has not returned)
                    leaf = np.zeros(kind[0], kind[1])
                v = as_traced(leaf, kind[1]) if not isinstance(leaf, TracedRArray) else leaf
                vals.append(broadcast_to(v, kind[0]) if v.shape != kind[0] else v)
            for t in mutated_order:
                v = inside_vals.get(id(t), before[id(t)])
                vals.append(wrap(v, t.shape, t.dtype))
            _return(vals)
    op = ir.Operation.create(opname, results=[tc.tensor_type(s, d) for s, d in result_specs],
                             operands=[selector.value], regions=len(fns), loc=tc.location(), ip=tc.ip)
    for k, (block, *_rest) in enumerate(traced):
        block.append_to(op.regions[k])
    holder.erase()
    outs = [wrap(r, s, d) for r, (s, d) in zip(op.results, result_specs)]
    it = iter(outs[:len(outs) - len(mutated_order)])
    leaves = [k[1] if k[0] == "static" else next(it) for k in out_kinds]
    for t, new in zip(mutated_order, outs[len(outs) - len(mutated_order):]):
        rebind(t, new)
    return unflatten(tree0, leaves)


def _snapshot(x: TracedRArray) -> TracedRArray:
    t = wrap(x.value, x.shape, x.dtype)
    if isinstance(x, TracedRNumber) and isinstance(t, TracedRNumber):
        t.weak = x.weak
    return t


def _unify(col: list, fns: list, p: int):
    """The common result type of one output leaf across branches (weak Python numbers adopt
    the traced branches' dtype); a static value when every branch returns the same one."""
    real = [(c, f) for c, f in zip(col, fns) if c is not NO_RESULT]
    if len(real) < len(col):  # paths that have not returned take the type of those that have
        return ("static", NO_RESULT) if not real else _unify([c for c, _ in real], [f for _, f in real], p)
    undefined = [c for c in col if _unbound(c)]
    if undefined:  # a variable some branch does not define: the caller reports it
        return ("static", undefined[0])
    traced = [(x, f) for x, f in zip(col, fns) if isinstance(x, TracedRArray)]
    if not traced:
        if all(_same_static(col[0], c) for c in col[1:]):
            return ("static", col[0])
        if all(type(c) in PY_SCALARS or isinstance(c, (np.ndarray, np.generic)) for c in col):
            dt = result_type(*[dtype_for_promotion(c) for c in col])
            shape = np.broadcast_shapes(*[np.shape(c) for c in col])
            return (tuple(shape), dt)
        raise ShapeError(f"branch output {p} differs between branches and is not an array: {col!r}")
    x0, f0 = traced[0]
    for x, f in traced[1:]:
        if x.shape != x0.shape or x.dtype != x0.dtype:
            raise ShapeError(
                f"branches return different types for output {p}: {describe(x0)} "
                f"({_fn_name(f0)} at {_where_defined(f0)}) vs {describe(x)} ({_fn_name(f)} at {_where_defined(f)})",
                hint="make both branches return the same shapes and dtypes (e.g. with .astype)",
            )
    for c, f in zip(col, fns):
        if not isinstance(c, TracedRArray):
            if type(c) not in PY_SCALARS and not isinstance(c, (np.ndarray, np.generic)):
                raise ShapeError(f"branch {_fn_name(f)} returns {type(c).__name__} where another returns an array")
            if np.shape(c) not in ((), x0.shape) and np.broadcast_shapes(np.shape(c), x0.shape) != x0.shape:
                raise ShapeError(f"branch {_fn_name(f)} returns shape {np.shape(c)} where another returns "
                                 f"{describe(x0)}")
    return (x0.shape, x0.dtype)


def _same_static(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # no (or an ambiguous) truth value: only the same object is equal
        return a is b


# -- loops ----------------------------------------------------------------------------------------
def while_loop(cond_fn: Callable, body_fn: Callable, init: Any, *, names: Sequence[str] | None = None,
               counter: bool = False, runs_once: bool = False) -> Any:
    """``while cond_fn(x): x = body_fn(x)``; a ``stablehlo.while`` when anything is traced.
    ``init`` is a pytree (the loop-carried values); Python numbers in it are carried as
    weakly typed scalars. ``counter``: the first leaf is a traced counter the body replaces
    by a new array each iteration (saves an attempt at tracing the body). ``runs_once``: the
    loop is known to run at least one iteration, and a leaf that is an unbound variable
    (``autograph.undefined``) the body binds on every path is carried from then on (its value
    before the first iteration, zeros, is never read: the body that read it would have failed)."""
    if not _any_traced(init):
        x = init
        while True:
            c = cond_fn(x)
            if isinstance(c, TracedRArray):  # the condition became traced: stage from here
                return _while(cond_fn, body_fn, x, names, counter, runs_once)
            if not bool(c):
                return x
            x = body_fn(x)
    return _while(cond_fn, body_fn, init, names, counter, runs_once)


def _unbound(v) -> bool:
    """``v`` is an unbound variable's placeholder (``autograph.undefined.Undefined``: any other
    use of it raises)."""
    return getattr(type(v), "__reactant_undefined__", False) is True


def _while(cond_fn, body_fn, init, names, counter: bool = False, runs_once: bool = False):
    """``counter``: the first leaf is a loop counter the body always rebinds (carried as a value
    from the first attempt: no retry to learn it)."""
    tc = current()
    leaves, tree = _leaves(init)
    # carried: traced leaves and numbers; anything else is static and must stay unchanged
    carried = [i for i, v in enumerate(leaves) if isinstance(v, TracedRArray)
               or type(v) in PY_SCALARS or isinstance(v, (np.ndarray, np.generic))]
    specs = {}
    for i in carried:
        v = leaves[i]
        t = v if isinstance(v, TracedRArray) else as_traced(v)
        weak = (type(v) in PY_SCALARS) or (isinstance(v, TracedRNumber) and v.weak)
        specs[i] = (t.shape, t.dtype, weak)
    extra: list[TracedRArray] = []  # outer roots updated in the body: carried too
    fresh: set[int] = {0} if counter else set()  # traced leaves the body rebinds: carried as values
    mark = tc.reads.mark()
    arrays = numpy_contents(user_frames())  # (NumPy arrays the body may change in place)
    bound: set[int] = set()  # unbound leaves the body binds (``runs_once``): carried from zeros
    for _attempt in range(8 + len(carried) + len(leaves)):
        start = len(tc.handles)
        result = _try_while(tc, cond_fn, body_fn, leaves, tree, carried, specs, extra, fresh, names,
                            bound if runs_once else None)
        changed = tc.reads.changed_since(mark) + [f"the NumPy array {a}" for a in changed_numpy(arrays)]
        if changed:  # Python state changed while tracing the body: the loop would run it many times
            restore_numpy(arrays)  # (arrays changed in place by the traced body: as they were)
            tc.reads.put_back(mark)  # (and the places it rebound)
            raise _no_unroll(ConcretizationError(
                f"the loop body at {_where_defined(body_fn)} runs as a traced loop and changes Python state "
                f"({', '.join(changed[:3])}): tracing runs the body once, the program runs it at every iteration",
                hint="keep the state in arrays updated in place, or unroll the loop (reactant.unroll(n) or "
                "loops='unroll')"))
        if result[0] == "done":
            for i in carried:  # NumPy arrays the loop updated: nothing else may hold them
                if type(leaves[i]) is np.ndarray:
                    refuse_carried_alias(leaves[i], f"the loop at {_where_defined(body_fn)}", init, set(names or ()))
            # arrays made in the body and kept by the user's code (a list, an attribute) name
            # values of the body: using them after the loop is an error, not invalid IR
            tc.loop_escapes += kill_escaped(
                tc.handles, start, result[2], f"the loop body at {_where_defined(body_fn)} ended "
                "(it was kept in a list or attribute; carry values out of loops in variables)", collect=True)
            return result[1]
        kind, payload = result
        if kind == "extra":
            extra += payload
        elif kind == "promote":
            specs.update(payload)
        elif kind == "fresh":
            fresh.update(payload)
        elif kind == "bind":
            specs.update(payload)
            bound.update(payload)
            carried = sorted(set(carried) | set(payload))
        elif kind == "result":  # (the carry's structure changes: start over)
            return _while(cond_fn, body_fn, payload, names, counter)
    raise RuntimeError("internal error: loop carry types did not settle")


def _name(names, tree, i) -> str:
    if names and i < len(names):
        return repr(names[i])
    return f"carry leaf {i}"


def _try_while(tc, cond_fn, body_fn, leaves, tree, carried, specs, extra, fresh, names, bound=None):
    """One attempt at tracing the loop. A traced leaf is carried as itself (the same Python
    object, its root's value carried: in-place updates of it, and of views of it, reach the
    caller's array) unless the body rebinds it (``fresh``: then a new array per iteration).
    ``bound`` (None: the loop may run no iteration): the unbound leaves carried from zeros.
    Returns ("done", result, end of the body's handles) or what to change for the next
    attempt."""
    # the leaves carried as themselves, and the roots whose values the loop carries for them
    ident = [i for i in carried if isinstance(leaves[i], TracedRArray) and i not in fresh]
    vslots = [i for i in carried if i not in ident]
    cells: list[TracedRArray] = []
    for r in [root_of(leaves[i]) for i in ident] + list(extra):
        if all(r is not c for c in cells):
            cells.append(r)
    init_vals = []
    for i in vslots:
        shape, dt, weak = specs[i]
        v = leaves[i]
        if bound is not None and i in bound:
            t = ops.full(shape, 0, dt)
        else:
            t = ops.convert(as_traced(v), dt) if not (isinstance(v, TracedRArray) and v.dtype == dt) else v
        init_vals.append(t)
    init_vals += [wrap(c.value, c.shape, c.dtype) for c in cells]
    types = [(t.shape, t.dtype) for t in init_vals]
    op = ir.Operation.create("stablehlo.while", results=[tc.tensor_type(s, d) for s, d in types],
                             operands=[t.value for t in init_vals], regions=2, loc=tc.location(), ip=tc.ip)
    mark, hstart = len(tc.mutations), len(tc.handles)
    saved = [c.value for c in cells]
    fresh_in: dict[int, TracedRArray] = {}  # the value-slot handles each region starts with

    def region_args(block):
        args = list(block.arguments)
        vals = list(leaves)
        for k, i in enumerate(vslots):
            shape, dt, weak = specs[i]
            t = wrap(args[k], shape, dt)
            if isinstance(t, TracedRNumber):
                t.weak = weak
            vals[i] = t
            fresh_in[i] = t
        for c, a in zip(cells, args[len(vslots):]):
            c.value = a  # the carried arrays (and their views) read the region's argument
        return unflatten(tree, vals)

    def reset():
        _restore(tc, mark)  # (first: it would set the cells back to their region arguments)
        for c, v in zip(cells, saved):
            c.value = v

    where = f" (loop body at {_where_defined(body_fn)})"
    try:
        # condition
        cblock = op.regions[0].blocks.append(*[tc.tensor_type(s, d) for s, d in types])
        with tc.insert_into(cblock):
            c = cond_fn(region_args(cblock))
            if not isinstance(c, TracedRArray) and not isinstance(c, (bool, np.bool_)):
                c = bool(c)
            pred = _scalar_pred(c, "while")
            _return([pred])
        # body
        bblock = op.regions[1].blocks.append(*[tc.tensor_type(s, d) for s, d in types])
        with tc.insert_into(bblock):
            new = body_fn(region_args(bblock))
            filled = _fill_no_result(unflatten(tree, leaves), new)
            if filled is not None:  # a return reached in the body: carry its type from the start
                raise _Retry("result", filled)
            new_leaves, new_tree = _leaves(new)
            if new_tree != tree:
                raise ShapeError(f"the loop body returns a different structure: {new_tree} instead of {tree}",
                                 hint=f"loop body defined at {_where_defined(body_fn)}")
            rebound = [i for i in ident if new_leaves[i] is not leaves[i]]
            if rebound:  # the body binds these names to other arrays: carry them as values
                raise _Retry("fresh", rebound)
            outer = _outer_mutations(tc, mark, op)
            new_extra = [t for key, (t, old) in outer.items() if all(t is not c for c in cells)]
            written = {id(t) for t, _old in tc.mutations[mark:]}
            # a leaf first carried as itself, now as a value: its array must not be written in the
            # body (in the first iteration the write would reach it, in later ones a new array)
            for i in vslots:
                if isinstance(leaves[i], TracedRArray) and (
                        any(root_of(leaves[i]) is t for t in new_extra) or id(fresh_in[i]) in written):
                    raise NonUniformLoopError(
                        f"loop variable {_name(names, tree, i)} is both updated in place and reassigned in the "
                        f"loop body{where}: the first iteration would update the array it held before the loop, "
                        "later ones a new array", hint="update it in place only (x[...] = ...), or reassign only "
                        "(x = ...), or make a copy before the loop (x = x.copy())")
            if new_extra:
                raise _Retry("extra", new_extra)
            promote, bind = {}, {}
            vals = []
            seen_roots: dict[int, int] = {}
            for i, (old, nv) in enumerate(zip(leaves, new_leaves)):
                if i not in specs:
                    if bound is not None and _unbound(old):
                        if not old.read and (isinstance(nv, TracedRArray) or type(nv) in PY_SCALARS \
                                or isinstance(nv, (np.ndarray, np.generic))):
                            t = nv if isinstance(nv, TracedRArray) else as_traced(nv)
                            bind[i] = (t.shape, t.dtype, type(nv) in PY_SCALARS
                                       or (isinstance(nv, TracedRNumber) and nv.weak))
                        # (else: read before it was bound (an error the body caught), not bound
                        # on every path, or not to an array or number: unbound after the loop)
                        continue
                    if not _same_static(old, nv):
                        raise ShapeError(f"loop carry {_name(names, tree, i)} is not an array and changes in the "
                                         f"body ({old!r} -> {nv!r})")
                    continue
                if i in ident:
                    continue
                shape, dt, weak = specs[i]
                if isinstance(nv, TracedRArray):
                    problem = _alias_problem(nv, cells, fresh_in, seen_roots, i, op)
                    if problem:
                        raise NonUniformLoopError(
                            f"loop variable {_name(names, tree, i)} refers to {problem} at the end of the loop body"
                            f"{where}: what it refers to would differ between iterations",
                            hint="assign it a new array (y = x.copy()), or update arrays in place")
                t = nv if isinstance(nv, TracedRArray) else None
                if t is None:
                    t = as_traced(nv, dt) if type(nv) in PY_SCALARS else as_traced(nv)
                if t.shape != shape or t.dtype != dt:
                    if weak and t.shape == shape and _weak_promotes_to(dt, t.dtype):
                        promote[i] = (shape, t.dtype, False)
                        continue
                    if t.shape == shape and np.can_cast(t.dtype, dt, casting="same_kind") and (
                            isinstance(nv, TracedRNumber) and nv.weak or type(nv) in PY_SCALARS):
                        t = ops.convert(t, dt)
                    else:
                        raise DTypeError(
                            f"loop carry {_name(names, tree, i)} changes from {dt}{list(shape)} to "
                            f"{t.dtype}{list(t.shape)} in the loop body",
                            hint=f"give it its final dtype/shape before the loop (body at {_where_defined(body_fn)})",
                        )
                vals.append(t)
            if bind:
                raise _Retry("bind", bind)
            if promote:
                raise _Retry("promote", promote)
            vals += [wrap(c.value, c.shape, c.dtype) for c in cells]
            _return(vals)
    except BaseException as e:  # the attempt is undone: a retry, or an error reported as it is
        reset()
        op.erase()
        # values of the erased op kept by the user's code (a list, an attribute): an error on use
        kill_escaped(tc.handles, hstart, None, f"the loop body at {_where_defined(body_fn)} ended "
                     "(it was kept in a list or attribute; carry values out of loops in variables)")
        if isinstance(e, _Retry):
            return (e.kind, e.payload)
        raise
    # the loop's results: value slots become new arrays, carried arrays written in the body
    # take their final values (in place: enclosing constructs carry them in turn)
    reset()
    end = len(tc.handles)
    results = [wrap(r, s, d) for r, (s, d) in zip(op.results, types)]
    out = list(leaves)
    for k, i in enumerate(vslots):
        r = results[k]
        if isinstance(r, TracedRNumber):
            r.weak = specs[i][2]
        out[i] = r
    for c, r in zip(cells, results[len(vslots):]):
        if id(c) in written:
            rebind(c, r)
    return ("done", unflatten(tree, out), end)



def _no_unroll(e: Exception) -> Exception:
    """Mark ``e`` as one that unrolling the enclosing loop must not answer: the failed attempt
    already changed Python state, which an unrolled run would change again."""
    e.no_unroll = True
    return e


class _Retry(Exception):
    """What the next attempt at a loop must carry differently (``kind``: "fresh", "extra",
    "promote", "bind" or "result")."""

    def __init__(self, kind: str, payload):
        self.kind = kind
        self.payload = payload


def _alias_problem(nv: TracedRArray, cells, fresh_in: dict, seen_roots: dict, i: int, op) -> str | None:
    """Why the value slot ``i`` ending the body as ``nv`` cannot be carried as a plain value:
    it is (a view of) an array carried as itself, of another slot's array, or an array from
    before the loop that would stop being the same object. None when it can."""
    r = root_of(nv)
    if any(r is c for c in cells):
        return "an array the loop updates in place (or a view of it)"
    other = seen_roots.get(id(r))
    if other is not None:
        return f"the same array as another loop variable (carry leaf {other})"
    seen_roots[id(r)] = i
    if all(r is not t for t in fresh_in.values()) and not _inside(r.value, op):
        return ("a view of " if nv._root is not None else "") + "an array from before the loop"
    return None


def _weak_promotes_to(weak_dtype: np.dtype, dtype: np.dtype) -> bool:
    """Whether a Python number carried as ``weak_dtype`` takes ``dtype`` under NEP 50."""
    py = {"b": bool, "i": int, "u": int, "f": float, "c": complex}[weak_dtype.kind]
    return result_type(py, dtype) == dtype


def fori_loop(lower, upper, body_fn: Callable, init: Any) -> Any:
    """``for i in range(lower, upper): x = body_fn(i, x)``; a ``stablehlo.while`` inside a
    trace (bounds may be traced); a Python loop outside."""
    if not _any_traced(init) and not isinstance(lower, TracedRArray) and not isinstance(upper, TracedRArray) \
            and active() is None:
        x = init
        for i in range(int(lower), int(upper)):
            x = body_fn(i, x)
        return x
    dt = np.dtype(np.int64) if any(isinstance(b, TracedRArray) and b.dtype.itemsize == 8
                                   for b in (lower, upper)) else np.dtype(np.int32)
    lo = ops.convert(as_traced(lower), dt) if isinstance(lower, TracedRArray) else ops.constant(np.asarray(lower, dt))
    hi = ops.convert(as_traced(upper), dt) if isinstance(upper, TracedRArray) else ops.constant(np.asarray(upper, dt))

    def c(state):
        i, _, h = state
        return ops.compare(i, h, "LT")

    def b(state):
        i, x, h = state
        return (ops.add(i, ops.full((), 1, dt)), body_fn(i, x), h)

    _, x, _ = _while(c, b, (lo, init, hi), None, counter=True)
    return x


def scan(f: Callable, init: Any, xs: Any, length: int | None = None) -> tuple[Any, Any]:
    """``carry, y = f(carry, x)`` over the leading axis of ``xs`` (a pytree, or None with
    ``length``); returns ``(carry, ys)`` with the ``y``s stacked. One ``stablehlo.while``."""
    x_leaves, x_tree = _leaves(xs)
    xt = [as_traced(x) for x in x_leaves]
    n = length if length is not None else (xt[0].shape[0] if xt else None)
    if n is None:
        raise ValueError("scan needs xs or length")
    for x in xt:
        if x.shape[:1] != (n,):
            raise ShapeError(f"scan: every xs leaf needs leading dimension {n}, got {describe(x)}")

    def x_at(i):
        if not xt:
            return None
        parts = []
        for x in xt:
            zero = ops.constant(np.asarray(0, i.dtype))
            s = ops.dynamic_slice(x, [i] + [zero] * (x.ndim - 1), (1,) + x.shape[1:])
            parts.append(ops.reshape(s, x.shape[1:]))
        return unflatten(x_tree, parts)

    # the ys' types: trace f once in a scratch region and throw it away
    tc = current()
    holder = _holder(1)
    mark, hstart = len(tc.mutations), len(tc.handles)
    c_leaves, c_tree = _leaves(init)
    blk = holder.regions[0].blocks.append(tc.tensor_type((), np.dtype(np.int32)))
    with tc.insert_into(blk):
        _, y = f(init, x_at(wrap(blk.arguments[0], (), np.dtype(np.int32))))
        y_leaves, y_tree = _leaves(y)
        y_specs = [(as_traced(v).shape, as_traced(v).dtype) for v in y_leaves]
    _restore(tc, mark)
    holder.erase()
    kill_escaped(tc.handles, hstart, None, f"the scan body {_where_defined(f)} was traced to find its outputs "
                 "(it was kept in a list or attribute)")
    ys0 = [ops.full((n,) + s, 0, d) for s, d in y_specs]

    def body(i, state):
        carry, ys = state
        carry, y = f(carry, x_at(i))
        yl, yt = _leaves(y)
        if yt != y_tree:
            raise ShapeError("scan: f returns differently structured y's across iterations")
        out = []
        for acc, v in zip(ys, yl):
            v = as_traced(v, acc.dtype)
            zero = ops.constant(np.asarray(0, i.dtype))
            out.append(ops.dynamic_update_slice(acc, ops.reshape(v, (1,) + v.shape), [i] + [zero] * v.ndim))
        return carry, out

    carry, ys = fori_loop(0, n, body, (init, ys0))
    return carry, unflatten(y_tree, ys)

