"""``vmap``: a function mapped over an axis of its arguments, traced as one counted loop.

``vmap(f, in_axes, out_axes)(*args)`` has ``jax.vmap``'s semantics. It is traced as a
``stablehlo.while`` over the batch: the body takes example ``i`` of every mapped argument
(a ``dynamic_slice`` at ``i`` along its axis), calls ``f`` on the examples (so ``f`` is traced
once, with the shapes of one example) and writes its results into row ``i`` of the stacked
outputs (``dynamic_update_slice``). The optimizer's loop raising (``while_raise`` over the
batching rules of ``reactant.optimize``) turns such a loop into batched operations; a body
with an op that has no batching rule stays a loop: slower, the same values.

A loop rather than batching while tracing: ``f`` runs on values of one example's shape, so
its Python code (shape arithmetic, ``if`` on traced values, autodiff markers) sees exactly
what it would see unmapped, and one set of batching rules, the optimizer's, does the work.

``f`` is traced twice: once in a scratch region thrown away (the shapes and dtypes of its
results, for the stacked buffers the loop carries), once as the loop body. Like any loop body
it may not change Python state (a clear error), and it may update arrays it closes over in
place (the loop carries them: iterations run in order, as a Python loop would). It may not
write into its mapped arguments: NumPy would write into the caller's array through a view
(``apply_along_axis``), a traced example is a copy, so that is an error rather than a silent
difference.
"""

from __future__ import annotations

import functools
import types
from typing import Any, Callable

import numpy as np
from jaxlib.mlir import ir

from ..ir.regions import captured_values
from . import ops
from .context import current
from .control_flow import while_loop
from .errors import ArgumentError, ShapeError, UnsupportedError, describe
from .loop_rolling import attempt
from .numpy_api.convert import as_traced
from .pytree import TreeDef, flatten, prefix_leaves, unflatten
from .traced import TracedRArray, rebind, root_of


def vmap(f: Callable, in_axes: Any = 0, out_axes: Any = 0) -> Callable:
    """``f`` mapped over axis ``in_axes`` of its positional arguments (an int, None: not
    mapped, or a tuple with one entry per argument, each a pytree prefix of that argument
    with ints/None); keyword arguments are mapped over axis 0. Results are stacked along
    ``out_axes`` (the same forms, for the result; None: an unmapped result returned as it
    is). Negative axes count from the end. To be called inside a trace."""
    check_axes_spec(in_axes, "in_axes")
    check_axes_spec(out_axes, "out_axes")

    @functools.wraps(f)
    def mapped(*args, **kwargs):
        return map_call(f, in_axes, out_axes, args, kwargs)

    return mapped


def check_axes_spec(spec: Any, name: str) -> None:
    """Refuse an axes specification whose leaves are not ints or None."""
    leaves, _ = flatten(spec, is_leaf=lambda a: a is None)
    for a in leaves:
        if a is not None and (isinstance(a, bool) or not isinstance(a, (int, np.integer))):
            raise ArgumentError(f"vmap {name} must be an int, None, or a pytree of them; found {a!r}",
                                hint="e.g. in_axes=(0, None) maps the first argument over axis 0 and passes "
                                "the second as it is")


def _is_leaf(x) -> bool:
    return isinstance(x, (TracedRArray, np.ndarray)) or getattr(x, "__reactant_concrete__", None) is not None


def _is_axis(a) -> bool:
    return a is None or (isinstance(a, (int, np.integer)) and not isinstance(a, bool))


def _aligned(prefix, obj):
    """``prefix`` with each dict's keys in ``obj``'s order (JAX matches dicts by key; our
    pytrees keep insertion order)."""
    if type(prefix) is dict and type(obj) is dict and set(prefix) == set(obj):
        return {k: _aligned(prefix[k], obj[k]) for k in obj}
    if type(prefix) in (tuple, list) and type(obj) is type(prefix) and len(prefix) == len(obj):
        return type(prefix)(_aligned(p, o) for p, o in zip(prefix, obj))
    return prefix


def _axes_of(spec, tree_value, what: str) -> list:
    """The axis (or None) ``spec`` gives each leaf of ``tree_value``."""
    try:
        return prefix_leaves(_aligned(spec, tree_value), tree_value, _is_axis, _is_leaf)
    except ValueError:
        _, vt = flatten(tree_value, is_leaf=_is_leaf)
        raise ArgumentError(f"vmap {what}: the axes specification {spec!r} is not a pytree prefix of the "
                            f"structure {'of one array' if vt.kind is None else vt}",
                            hint="give one int/None per leaf, or per subtree") from None


class _Mapped:
    """One mapped argument leaf: the traced array and its (non-negative) axis."""

    __slots__ = ("x", "axis", "label")

    def __init__(self, x: TracedRArray, axis: int, label: str):
        self.x, self.axis, self.label = x, axis, label

    def example(self, i: TracedRArray) -> TracedRArray:
        """Example ``i``: the slice at ``i`` along the axis, without that axis."""
        x, a = self.x, self.axis
        zero = ops.constant(np.asarray(0, i.dtype))
        sizes = x.shape[:a] + (1,) + x.shape[a + 1:]
        s = ops.dynamic_slice(x, [zero] * a + [i] + [zero] * (x.ndim - a - 1), sizes)
        return ops.reshape(s, x.shape[:a] + x.shape[a + 1:])

    def example_shape(self) -> tuple[int, ...]:
        return self.x.shape[:self.axis] + self.x.shape[self.axis + 1:]


def _arg_label(k) -> str:
    return f"argument {k}" if isinstance(k, int) else f"keyword argument {k!r}"


def _prepare(args: tuple, kwargs: dict, in_axes) -> tuple[list, TreeDef, list]:
    """Flattened arguments (mapped leaves as traced arrays) and, per leaf, a ``_Mapped`` or
    None."""
    if type(in_axes) is list:  # (JAX treats a top-level list as the tuple it means)
        in_axes = tuple(in_axes)
    if not (_is_axis(in_axes) or type(in_axes) is tuple):
        raise ArgumentError(f"vmap in_axes must be an int, None, or a tuple with one entry per positional argument, "
                            f"got a {type(in_axes).__name__}", hint="wrap a pytree prefix of one argument in a "
                            "tuple: in_axes=({'w': None, 'b': 0},)")
    if type(in_axes) is tuple and len(in_axes) != len(args):
        raise ArgumentError(f"vmap in_axes has {len(in_axes)} entries but the function is called with "
                            f"{len(args)} positional arguments",
                            hint="give one entry per positional argument (or a single int/None for all)")
    leaves: list = []
    mapped: list = []
    groups = [(k, a, in_axes if _is_axis(in_axes) else in_axes[k]) for k, a in enumerate(args)]
    groups += [(k, v, 0) for k, v in kwargs.items()]  # keyword arguments: axis 0, as in JAX
    for k, value, spec in groups:
        ls, _ = flatten(value, is_leaf=_is_leaf)
        axes = _axes_of(spec, value, _arg_label(k))
        for j, (leaf, axis) in enumerate(zip(ls, axes)):
            label = _arg_label(k) + (f" (leaf {j})" if len(ls) > 1 else "")
            if axis is None:
                leaves.append(leaf)
                mapped.append(None)
                continue
            if not (_is_leaf(leaf) or isinstance(leaf, (bool, int, float, complex, np.generic))):
                raise ArgumentError(f"vmap can map only arrays, but {label} is a {type(leaf).__name__} mapped "
                                    f"over axis {axis}", hint="pass it with in_axes None")
            x = as_traced(leaf)
            nd = x.ndim
            if not -nd <= int(axis) < nd:
                raise ShapeError(f"vmap in_axes {int(axis)} is out of range for {label} of shape {x.shape} "
                                 f"(rank {nd})", hint="an axis must be in -rank .. rank-1; use None for an "
                                 "argument that is not mapped")
            leaves.append(x)
            mapped.append(_Mapped(x, int(axis) % nd, label))
    _, tree = flatten((args, kwargs), is_leaf=_is_leaf)
    return leaves, tree, mapped


def _batch_size(mapped: list) -> int:
    ms = [m for m in mapped if m is not None]
    if not ms:
        raise ArgumentError("vmap needs at least one mapped argument, but in_axes maps none (all None)",
                            hint="map at least one argument over an axis")
    sizes = {m.x.shape[m.axis] for m in ms}
    if len(sizes) > 1:
        parts = "; ".join(f"{m.label} of shape {m.x.shape} has size {m.x.shape[m.axis]} along axis {m.axis}"
                          for m in ms)
        raise ShapeError(f"vmap got inconsistent sizes for the mapped axes: {parts}",
                         hint="every mapped argument needs the same length along its mapped axis")
    return sizes.pop()


def _call(f: Callable, tree: TreeDef, leaves: list, mapped: list, i: TracedRArray | None) -> tuple[Any, list]:
    """``f`` on example ``i`` (zeros when ``i`` is None: a batch of size 0); returns its
    result and the examples."""
    examples = []
    call_leaves = list(leaves)
    for k, m in enumerate(mapped):
        if m is None:
            continue
        ex = m.example(i) if i is not None else ops.full(m.example_shape(), 0, m.x.dtype)
        examples.append(ex)
        call_leaves[k] = ex
    args, kwargs = unflatten(tree, call_leaves)
    return convert_user(f)(*args, **kwargs), examples


def convert_user(f: Callable) -> Callable:
    """``f`` as the tracer converts user functions (Python control flow on traced values, reads
    of Python state recorded); an object called like a function: its ``__call__`` method."""
    from .autograph import convert

    if not isinstance(f, (types.FunctionType, types.MethodType, functools.partial, type)):
        f = getattr(f, "__call__", f)
    return convert(f)


def _out_leaves(out) -> tuple[list, TreeDef]:
    return flatten(out, is_leaf=_is_leaf)


def _as_output(v, k: int) -> TracedRArray:
    if isinstance(v, TracedRArray):
        return v
    if _is_leaf(v) or isinstance(v, (bool, int, float, complex, np.generic)):
        return as_traced(v)
    raise ArgumentError(f"vmap: the function returned a {type(v).__name__} (result leaf {k}); mapped functions "
                        "return arrays or numbers (in tuples, lists, dicts...)")


class _Result:
    """A placeholder for one result leaf (to match ``out_axes`` against the structure)."""

    __slots__ = ()


def _probe(f, tree, leaves, mapped, n) -> tuple[TreeDef, list]:
    """The structure and (shape, dtype) of each result leaf of ``f`` on one example, traced
    in a scratch region that is thrown away."""
    tc = current()
    with attempt(tc):
        i = ops.constant(np.asarray(0, np.int64)) if n > 0 else None
        out, _ = _call(f, tree, leaves, mapped, i)
        outs, out_tree = _out_leaves(out)
        specs = [(t.shape, t.dtype) for t in (_as_output(v, k) for k, v in enumerate(outs))]
    return out_tree, specs


def _varies(value: ir.Value, body: ir.Block, loop: ir.Operation) -> bool:
    """Whether ``value`` (of the loop body) depends on an argument of ``body`` (the counter,
    or an array the body updates in place): whether it changes from one iteration to the
    next."""
    seen = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        owner = v.owner
        if isinstance(owner, ir.Block):
            if owner == body:
                return True
            continue
        op = owner.operation
        if not _inside(op, loop):
            continue
        stack.extend(op.operands)
        if len(op.regions):
            stack.extend(captured_values(op))
    return False


def _inside(op: ir.Operation, loop: ir.Operation) -> bool:
    o = op
    while o is not None:
        if o == loop:
            return True
        o = o.parent
    return False


def _out_axis(axis, shape: tuple, k: int) -> int | None:
    if axis is None:
        return None
    nd = len(shape) + 1
    if not -nd <= int(axis) < nd:
        raise ShapeError(f"vmap out_axes {int(axis)} is out of range for result leaf {k} of shape {shape} "
                         f"(stacked: rank {nd})", hint="an out axis must be in -rank .. rank-1 of the stacked result")
    return int(axis) % nd


def map_call(f: Callable, in_axes: Any, out_axes: Any, args: tuple, kwargs: dict) -> Any:
    """``vmap(f, in_axes, out_axes)(*args, **kwargs)`` inside the current trace."""
    check_axes_spec(in_axes, "in_axes")
    check_axes_spec(out_axes, "out_axes")
    leaves, tree, mapped = _prepare(args, dict(kwargs), in_axes)
    n = _batch_size(mapped)
    out_tree, specs = _probe(f, tree, leaves, mapped, n)
    out_axes_leaves = _axes_of(out_axes, unflatten(out_tree, [_Result() for _ in specs]), "out_axes")
    axes = [_out_axis(a, s, k) for k, (a, (s, _)) in enumerate(zip(out_axes_leaves, specs))]
    if n == 0 and any(a is None for a in axes):
        raise ShapeError("vmap over a batch of size 0 with out_axes None: there is no example to compute the "
                         "unmapped result from", hint="map that result (an int out axis)")
    # one buffer per result leaf: stacked along its out axis (along 0 for an unmapped one, of
    # which row 0 is taken after the loop)
    bufs = []
    for (s, d), a in zip(specs, axes):
        a = 0 if a is None else a
        bufs.append(ops.full(s[:a] + (n,) + s[a:], 0, d))
    if n == 0:  # no iteration: the empty stacked results
        return unflatten(out_tree, bufs)
    where = defined_at(f)

    def cond(state):
        i, _ = state
        return ops.compare(i, ops.full((), n, i.dtype), "LT")

    def body(state):
        i, bufs = state
        tc = current()
        mark = len(tc.mutations)
        out, examples = _call(f, tree, leaves, mapped, i)
        written = [t for t, _ in tc.mutations[mark:] if any(root_of(t) is e for e in examples)]
        if written:
            raise UnsupportedError(
                f"the function mapped by vmap ({where}) writes into its mapped argument {describe(written[0])} in "
                "place: NumPy would write into the caller's array through a view, here each example is a copy",
                hint="compute a new array instead (y = x.copy(); y[...] = ...), and return it")
        outs, t = _out_leaves(out)
        if t != out_tree:
            raise ShapeError(f"vmap: the function returned {t} where it returned {out_tree} before")
        for k, (v, buf, (s, d), a) in enumerate(zip(outs, bufs, specs, axes)):
            v = _as_output(v, k)
            if v.shape != s or v.dtype != d:
                raise ShapeError(f"vmap: result leaf {k} is {describe(v)} here and {d}{list(s)} before")
            if a is None and _varies(v.value, i.value.owner, i.value.owner.owner):
                raise ShapeError(f"vmap: result leaf {k} ({describe(v)}) depends on the mapped arguments but its "
                                 "out_axes is None", hint="give it an int out axis (it is stacked there)")
            a = 0 if a is None else a
            zero = ops.constant(np.asarray(0, i.dtype))
            row = ops.reshape(v, s[:a] + (1,) + s[a:])
            # in place: the loop carries the buffers as themselves (no second trace of the body)
            rebind(buf, ops.dynamic_update_slice(buf, row, [zero] * a + [i] + [zero] * (len(s) - a)))
        return ops.add(i, ops.full((), 1, i.dtype)), bufs

    body.__reactant_where__ = where
    body.__reactant_name__ = getattr(f, "__name__", "f")
    # (a Python int counter is carried as a value from the start; with no results to carry, a
    # loop of Python values would run in Python: then a traced one)
    i0 = 0 if bufs else ops.constant(np.asarray(0, np.int64))
    _, stacked = while_loop(cond, body, (i0, bufs))
    results = []
    for y, (s, d), a in zip(stacked, specs, axes):
        if a is None:  # unmapped: every row holds it
            y = ops.reshape(ops.slice(y, (0,) * (len(s) + 1), (1,) + s), s)
        results.append(y)
    return unflatten(out_tree, results)


def defined_at(f) -> str:
    """Where ``f`` is defined (for error messages)."""
    from .control_flow import _where_defined

    f = getattr(f, "func", f)  # (a functools.partial)
    if not isinstance(f, (types.FunctionType, types.MethodType, type)):
        f = getattr(f, "__call__", f)
    return _where_defined(f)
