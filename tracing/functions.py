"""Tracing a Python callable into a private ``func.func`` of the current module.

Used by autodiff markers (the marker names the traced primal function) and for calls of user
functions (``cached_call``: traced once per signature, then ``func.call``ed). A
``func.func`` is isolated from above, so values of the enclosing trace that the body captures
(closures over traced arrays) are turned into extra trailing arguments (``outline``).
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from jaxlib.mlir import ir

from ..ir.regions import defined_inside
from ..ir.types import spec_of
from .context import current
from .numpy_api.convert import as_traced
from .pytree import TreeDef, flatten, unflatten
from .state_reads import _global_names
from .traced import TracedRArray, TracedRNumber, wrap


@dataclass
class TracedFunction:
    """A traced private function: its symbol, arguments and results."""

    name: str
    op: Any  # func.FuncOp
    arg_specs: list[tuple[tuple[int, ...], np.dtype]]  # declared args (before captures)
    captured: list[TracedRArray]  # outer values appended as trailing arguments
    results: list[TracedRArray]  # result values (inside the function), flattened
    out_tree: TreeDef
    # per result leaf: k (k-th function result) or ("static", value) when static_outputs
    out_leaves: list | None = None
    # a result leaf is an argument or a view (of an argument or an outer array)
    aliased: bool = False


def trace_function(
    fn: Callable,
    arg_leaves: Sequence[Any],
    arg_tree: TreeDef,
    traced_positions: Sequence[int],
    *,
    name: str,
    static_outputs: bool = False,
) -> TracedFunction:
    """Trace ``fn(*args, **kwargs)`` with ``unflatten(arg_tree, leaves) == (args, kwargs)`` into a
    new private function whose arguments are the leaves at ``traced_positions`` (traced
    arrays of the caller; they become block arguments of the same shapes/dtypes). Result
    leaves that are not traced become constants, or with ``static_outputs`` stay Python
    values (``out_leaves``)."""
    tc = current()
    specs = [(arg_leaves[i].shape, arg_leaves[i].dtype) for i in traced_positions]
    fname = tc.unique_name(name)
    f = tc.new_function(fname, [tc.tensor_type(s, d) for s, d in specs])
    block = f.entry_block
    with tc.insert_into(block):
        leaves = list(arg_leaves)
        for pos, a in zip(traced_positions, block.arguments):
            outer = arg_leaves[pos]
            t = wrap(a, outer.shape, outer.dtype)
            if isinstance(outer, TracedRNumber) and isinstance(t, TracedRNumber):
                t.weak = outer.weak
            if outer.value in tc.nonneg_values:  # the fact holds for the argument too
                tc.nonneg_values.add(a)
            leaves[pos] = t
        args, kwargs = unflatten(arg_tree, leaves)
        from .autograph import convert

        out = convert(fn)(*args, **kwargs)  # Python control flow works here too
        out_leaves, out_tree = flatten(out, is_leaf=lambda x: isinstance(x, (TracedRArray, np.ndarray)))
        # a result that is an argument, or a view of one (or of an outer array), is that same
        # memory for the caller: a function call (which returns new values) cannot say so
        block_args = set(block.arguments)
        aliased = any(isinstance(leaf, TracedRArray) and (
            leaf._root is not None or leaf.value in block_args) for leaf in out_leaves)
        desc = None
        if static_outputs:
            desc, results = [], []
            for leaf in out_leaves:
                if isinstance(leaf, TracedRArray):
                    desc.append(len(results))
                    results.append(as_traced(leaf))
                else:
                    desc.append(("static", leaf))
        else:
            results = [as_traced(leaf) for leaf in out_leaves]
        result_values = [r.value for r in results]  # (a view computes its value here)
    tc.finish_function(f, result_values)
    captured = outline(f)
    return TracedFunction(fname, f, specs, captured, results, out_tree, desc, aliased)


def outline(f) -> list[TracedRArray]:
    """Replace uses of values defined outside ``f`` by new trailing arguments of ``f``;
    returns the outer values (as traced arrays) in argument order."""
    block = f.entry_block
    inside = defined_inside(f)
    uses: list[tuple[Any, int, ir.Value]] = []

    def visit(op):
        uses.extend((op, i, v) for i, v in enumerate(op.operands))
        return ir.WalkResult.ADVANCE

    f.operation.walk(visit)
    new_args: dict = {}
    captured: list[TracedRArray] = []
    for op, i, v in uses:
        if v in inside:
            continue
        na = new_args.get(v)
        if na is None:
            na = new_args[v] = block.add_argument(v.type, ir.Location.unknown())
            shape, dtype = spec_of(v.type)
            captured.append(wrap(v, shape, dtype))
        op.operands[i] = na
    if captured:
        results = list(f.type.results)
        f.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], results))
    return captured


# -- cached calls of user functions ---------------------------------------------------------------
_NO_CACHE = object()


def _spec(leaf):
    if isinstance(leaf, TracedRArray):
        return ("T", leaf.shape, leaf.dtype, isinstance(leaf, TracedRNumber) and leaf.weak,
                leaf.value in current().nonneg_values)
    if isinstance(leaf, np.ndarray):
        return ("A", leaf.shape, leaf.dtype.str, leaf.tobytes()) if leaf.size <= 4096 else None
    try:
        hash(leaf)
    except TypeError:
        return None
    return (type(leaf), leaf)


def cached_call(fn: Callable, *args, **kwargs) -> Any:
    """Call user function ``fn`` inside a trace: traced once per signature (shapes, dtypes,
    static values) into a private function, then a ``func.call`` for every call, so a helper
    called many times is traced and emitted once (the optimizer inlines it again).

    Only a *pure* call is cached (``_impurity``): one whose result depends on nothing but its
    arguments and which changes no Python object. Anything else (a method, which reads its
    object's state; a function reading a global list or array; one that appends to a list) is
    traced inline at every call: replaying the first trace would freeze the state it read or
    skip its effects."""
    from .context import active

    tc = active()
    leaves, tree = flatten((args, kwargs), is_leaf=lambda x: isinstance(x, (TracedRArray, np.ndarray)))
    positions = [i for i, v in enumerate(leaves) if isinstance(v, TracedRArray)]
    if tc is None or not positions:
        return fn(*args, **kwargs)
    specs = [_spec(v) for v in leaves]
    why = "an unhashable argument" if any(s is None for s in specs) else _impurity(fn, args, kwargs, leaves)
    if why is not None:
        if tc.pure_depth:  # inside the trace of a call being cached: that call is not pure either
            raise _Impure(why)
        return fn(*args, **kwargs)
    key = (fn, tree, tuple(specs))
    tf = tc.call_cache.get(key)
    if tf is _NO_CACHE:
        return fn(*args, **kwargs)
    if tf is None:
        from .escape import Checkpoint

        checkpoint = Checkpoint(tc)
        name = "".join(c for c in getattr(fn, "__name__", "fn") if c.isalnum() or c == "_") or "fn"
        tc.pure_depth += 1
        try:
            tf = trace_function(fn, leaves, tree, positions, name=name, static_outputs=True)
        except _Impure:
            if tc.pure_depth > 1:
                raise
            tf = None
        finally:
            tc.pure_depth -= 1
        if tf is None or tf.aliased or _updates_in_place(tc, checkpoint.mark, tf):
            # Python-visible effects: undo the trace (nothing of it may stay reachable) and trace inline
            checkpoint.undo(f"the trace of {name} was undone (it was kept in a list or attribute)")
            tc.call_cache[key] = _NO_CACHE
            return fn(*args, **kwargs)
        tc.call_cache[key] = tf
    operands = [leaves[i] for i in positions] + tf.captured
    op = ir.Operation.create(
        "func.call",
        results=[tc.tensor_type(r.shape, r.dtype) for r in tf.results],
        operands=[o.value for o in operands],
        attributes={"callee": ir.FlatSymbolRefAttr.get(tf.name)},
        loc=tc.location(),
        ip=tc.ip,
    )
    outs = [wrap(v, r.shape, r.dtype) for v, r in zip(op.results, tf.results)]
    for o, r in zip(outs, tf.results):
        if isinstance(o, TracedRNumber) and isinstance(r, TracedRNumber):
            o.weak = r.weak
    return unflatten(tf.out_tree, [outs[d] if type(d) is int else d[1] for d in tf.out_leaves])


class _Impure(Exception):
    """Raised inside the trace of a call being cached when it reaches an impure call."""


# values a pure function may read as globals or closure cells: they cannot change in place
_IMMUTABLE = (int, float, complex, bool, str, bytes, type(None), np.generic, np.dtype, type,
              types.ModuleType, types.FunctionType, types.BuiltinFunctionType, np.ufunc)
_code_facts: dict = {}  # code object -> (the global names it reads, why its source is impure or None)


def _impurity(fn, args, kwargs, leaves) -> str | None:
    """Why a call of ``fn`` cannot be traced once and replayed (None when it can): it is a
    method or partial (state), takes a container or object (which it may change or whose
    attributes may change), names a global or closure value that can change in place, or its
    source changes a Python object (``lst.append``, attribute or item stores, ``global``)."""
    if not isinstance(fn, types.FunctionType):
        return "a method or partial"
    if "__reactant_rt__" in fn.__code__.co_freevars:  # converted by autograph: the user's own
        fn = fn.__wrapped__
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, (list, dict, set)):
            return "a list, dict or set argument"
    for v in leaves:
        if not isinstance(v, (TracedRArray, np.ndarray, _IMMUTABLE, tuple, slice, type(Ellipsis))):
            return f"an argument of type {type(v).__name__}"
    for n, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            if not isinstance(cell.cell_contents, _IMMUTABLE):
                return f"the closure variable {n}"
        except ValueError:
            return f"the closure variable {n}"
    code = fn.__code__
    facts = _code_facts.get(code)
    if facts is None:
        facts = _code_facts[code] = (tuple(set(_global_names(code))), _source_impurity(fn))
    g = fn.__globals__
    for n in facts[0]:
        if n in g and not isinstance(g[n], _IMMUTABLE):
            return f"the global {n}"
    return facts[1]


def _source_impurity(fn) -> str | None:
    import ast
    import textwrap

    from .autograph.user_code import function_source
    from .loop_rolling import python_effects

    try:
        fdef = ast.parse(textwrap.dedent(function_source(fn))).body[0]
    except (OSError, TypeError, SyntaxError, IndentationError, IndexError):
        return "no source"
    if not isinstance(fdef, ast.FunctionDef):
        return "not a def"
    for node in ast.walk(fdef):
        if isinstance(node, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom)):
            return "a global, nonlocal or yield statement"
        if isinstance(node, ast.Assert):  # a traced assert is checked by the whole program
            return "an assert statement"
    return python_effects(fdef.body)


def _updates_in_place(tc, mark: int, tf: TracedFunction) -> bool:
    """Whether tracing ``tf`` rebound one of its arguments or an outer value."""
    from .control_flow import _inside

    entry = tf.op.entry_block
    args = set(entry.arguments)
    for t, old in tc.mutations[mark:]:
        if old in args or not _inside(old, tf.op.operation):
            return True
    return False
