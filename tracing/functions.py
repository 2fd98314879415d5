"""Tracing a Python callable into a private ``func.func`` of the current module.

Used by autodiff markers (the marker names the traced primal function). A ``func.func`` is
isolated from above, so values of the enclosing trace that the body captures (closures over
traced arrays) are turned into extra trailing arguments (``outline``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from jaxlib.mlir import ir

from .context import current
from .dtypes import from_tensor_type
from .numpy_api.convert import as_traced
from .pytree import TreeDef, flatten, unflatten
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


def trace_function(
    fn: Callable,
    arg_leaves: Sequence[Any],
    arg_tree: TreeDef,
    traced_positions: Sequence[int],
    *,
    name: str,
) -> TracedFunction:
    """Trace ``fn(*args, **kwargs)`` with ``unflatten(arg_tree, leaves) == (args, kwargs)`` into a
    new private function whose arguments are the leaves at ``traced_positions`` (traced
    arrays of the caller; they become block arguments of the same shapes/dtypes)."""
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
            leaves[pos] = t
        args, kwargs = unflatten(arg_tree, leaves)
        from .autograph import convert

        out = convert(fn)(*args, **kwargs)  # Python control flow on traced values works here too
        out_leaves, out_tree = flatten(out, is_leaf=lambda x: isinstance(x, (TracedRArray, np.ndarray)))
        results = [as_traced(leaf) for leaf in out_leaves]
    tc.finish_function(f, [r.value for r in results])
    captured = outline(f)
    return TracedFunction(fname, f, specs, captured, results, out_tree)


def outline(f) -> list[TracedRArray]:
    """Replace uses of values defined outside ``f`` by new trailing arguments of ``f``;
    returns the outer values (as traced arrays) in argument order."""
    block = f.entry_block
    inside: set = set()
    uses: list[tuple[Any, int, ir.Value]] = []

    def visit(op):
        for r in op.results:
            inside.add(r)
        for region in op.regions:
            for b in region.blocks:
                for a in b.arguments:
                    inside.add(a)
        for i, v in enumerate(op.operands):
            uses.append((op, i, v))
        return ir.WalkResult.ADVANCE

    for a in block.arguments:
        inside.add(a)
    f.operation.walk(visit)
    new_args: dict = {}
    captured: list[TracedRArray] = []
    for op, i, v in uses:
        if v in inside:
            continue
        na = new_args.get(v)
        if na is None:
            na = new_args[v] = block.add_argument(v.type, ir.Location.unknown())
            shape, dtype = from_tensor_type(v.type)
            captured.append(wrap(v, shape, dtype))
        op.operands[i] = na
    if captured:
        results = list(f.type.results)
        f.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], results))
    return captured
