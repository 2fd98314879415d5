"""``shard_map``: a function of per-device blocks, lowered to ``sdy.manual_computation``.

Inside, ``f`` sees each device's block of its arguments and may communicate with the
collectives of :mod:`.collectives`; its results are the blocks of the outputs. Specs follow
JAX: ``in_specs`` has one spec per positional argument (a spec applies to every array of
that argument's pytree), ``out_specs`` one per output (or one spec for a single output); a
spec is a tuple with one entry per dimension (axis name, tuple of axis names, or None), a
bare axis name, or None (replicated). Arrays ``f`` closes over enter replicated. Every mesh
axis is manual inside ``f``.
"""

from __future__ import annotations

import functools
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from jaxlib.mlir import ir

from ..ir import frontend as F
from ..ir.context import functions
from ..ir.manual import create_manual, varying
from ..ir.types import ranked, tensor_type
from .errors import ShardingError
from .mesh import Mesh, NamedSharding, as_mesh
from .shardy import ensure_mesh, tensor_sharding

_tls = threading.local()


@dataclass(frozen=True)
class ManualContext:
    """The ``shard_map`` being traced: its mesh, and the axes that are manual inside."""

    mesh: Mesh
    axes: tuple[str, ...]


def current_manual() -> ManualContext | None:
    stack = getattr(_tls, "stack", None)
    return stack[-1] if stack else None


@contextmanager
def _manual(ctx: ManualContext) -> Iterator[None]:
    stack = getattr(_tls, "stack", None)
    if stack is None:
        stack = _tls.stack = []
    stack.append(ctx)
    try:
        yield
    finally:
        stack.pop()


def use_mesh(fe, mesh: Mesh) -> str:
    """Record that the traced program runs on ``mesh`` (one mesh per program); its symbol."""
    state = fe.state()
    old = state.get("mesh")
    if old is not None and old != mesh:
        raise ShardingError(f"one program runs on one mesh: {mesh!r} differs from {old!r} used before")
    state["mesh"] = mesh
    return ensure_mesh(fe.module(), mesh)


def _is_spec(s: Any) -> bool:
    if s is None or isinstance(s, str) or type(s).__name__ == "PartitionSpec":
        return True
    return isinstance(s, (tuple, list)) and all(
        e is None or isinstance(e, str) or (isinstance(e, (tuple, list)) and all(isinstance(a, str) for a in e))
        for e in s)


def _as_spec(s: Any) -> tuple:
    if s is None:
        return ()
    if isinstance(s, str):
        return (s,)
    return tuple(s)


def _is_spec_tuple(s: Any) -> bool:
    return isinstance(s, (tuple, list)) and type(s).__name__ != "PartitionSpec"


def _per_item(specs: Any, n: int, what: str) -> list:
    """One spec (or pytree of specs) per item, ``n`` items (arguments or outputs): a tuple of
    ``n`` entries gives each its own; otherwise one spec applies to every item."""
    if _is_spec_tuple(specs) and len(specs) == n:
        return list(specs)
    if n == 1 or not _is_spec_tuple(specs):
        if not _is_spec(specs):
            raise ShardingError(f"{what}: {specs!r} is not a sharding spec")
        return [specs] * n
    raise ShardingError(f"{what} gives {len(specs)} specs for {n} {'arguments' if what == 'in_specs' else 'outputs'}")


def _leaf_specs(fe, items: Sequence[Any], specs: Sequence[Any], what: str) -> list[tuple]:
    """Per leaf of ``items``, its spec (a spec given for an item covers all its leaves; a pytree
    of specs matching the item's structure is accepted too)."""
    out = []
    for k, (item, spec) in enumerate(zip(items, specs)):
        leaves, _ = fe.flatten(item)
        if _is_spec(spec):
            out += [_as_spec(spec)] * len(leaves)
            continue
        sleaves = _flat_specs(spec)
        if len(sleaves) != len(leaves):
            raise ShardingError(f"{what}[{k}] gives {len(sleaves)} specs for {len(leaves)} arrays")
        out += [_as_spec(s) for s in sleaves]
    return out


def _flat_specs(tree) -> list:
    if _is_spec(tree):
        return [tree]
    if isinstance(tree, dict):
        return [s for k in sorted(tree) for s in _flat_specs(tree[k])]
    return [s for t in tree for s in _flat_specs(t)]


def _local_shape(mesh: Mesh, shape: Sequence[int], spec: tuple, what: str) -> tuple[int, ...]:
    dims = NamedSharding(mesh, spec).dims(len(shape))
    sizes = mesh.shape
    out = []
    for d, (n, axes) in enumerate(zip(shape, dims)):
        k = int(np.prod([sizes[a] for a in axes])) if axes else 1
        if n % k:
            raise ShardingError(f"{what}: dimension {d} of size {n} is not divisible by the {k} devices of "
                                f"mesh axes {list(axes)}")
        out.append(n // k)
    return tuple(out)


def shard_map(f: Callable, mesh: Any, in_specs: Any, out_specs: Any, *, check_vma: bool = True) -> Callable:
    """``f`` applied to every device's blocks of its arguments over ``mesh`` (see the module
    docstring for specs). ``check_vma``: refuse an output declared replicated over a mesh axis
    along which its value may differ (e.g. not reduced with ``psum``), as JAX does.

    Works inside ``@reactant.compile`` and on device arrays (compiled on first use)."""
    mesh = as_mesh(mesh)

    @functools.wraps(f)
    def mapped(*args):
        fe = F.frontend()
        if fe is not None:
            return _trace(fe, f, mesh, in_specs, out_specs, check_vma, args)
        rt = F.runtime()
        if rt is None:
            raise ShardingError("shard_map needs reactant (import reactant)")
        compiled = mapped.__dict__.get("_compiled")
        if compiled is None:
            compiled = mapped.__dict__["_compiled"] = rt.compiled(mapped)
        return compiled(*args)

    return mapped


def _trace(fe, f, mesh: Mesh, in_specs, out_specs, check_vma: bool, args: tuple):
    name = getattr(f, "__name__", "f")
    arg_specs = _leaf_specs(fe, args, _per_item(in_specs, len(args), "in_specs"), "in_specs")
    leaves, rebuild_args = fe.flatten(args)
    values = [fe.value(x) for x in leaves]
    types = [tensor_type(v) for v in values]
    local = [ranked(_local_shape(mesh, t.shape, s, f"shard_map({name}) argument {i}"), t.element_type)
             for i, (t, s) in enumerate(zip(types, arg_specs))]
    mesh_name = use_mesh(fe, mesh)
    ctx = ManualContext(mesh, mesh.axis_names)
    with _manual(ctx):
        sym, out_types, rebuild_out, captured, mutated = fe.trace_function(
            f, local, rebuild_args, name=f"shmap_{name}")
    if mutated:
        raise ShardingError(f"shard_map({name}) updates an array in place; inside shard_map return new values "
                            "instead (its arguments are per-device blocks)")
    shape_tree = rebuild_out(list(range(len(out_types))))
    items = list(shape_tree) if isinstance(shape_tree, (tuple, list)) else [shape_tree]
    try:
        specs_items = _per_item(out_specs, len(items), "out_specs") if isinstance(shape_tree, (tuple, list)) \
            else [out_specs]
    except ShardingError as e:
        raise ShardingError(f"shard_map({name}): out_specs disagree with what f returns ({len(items)} outputs): "
                            f"{e.message}") from None
    out_specs_leaves = _leaf_specs(fe, items, specs_items, "out_specs")
    glob = []
    for i, (t, s) in enumerate(zip(out_types, out_specs_leaves)):
        t = ir.RankedTensorType(t)
        try:
            dims = NamedSharding(mesh, s).dims(t.rank)
        except ShardingError as e:
            raise ShardingError(f"shard_map({name}) output {i} of shape {tuple(t.shape)}: out_specs disagree "
                                f"with what f returns: {e.message}") from None
        sizes = mesh.shape
        glob.append(ranked([n * int(np.prod([sizes[a] for a in ax] or [1])) for n, ax in zip(t.shape, dims)],
                           t.element_type))
    all_specs = arg_specs + [()] * len(captured)
    sh_in = [tensor_sharding(NamedSharding(mesh, s), len(t.shape), mesh_name=mesh_name)
             for s, t in zip(all_specs, types + [tensor_type(v) for v in captured])]
    sh_out = [tensor_sharding(NamedSharding(mesh, s), ir.RankedTensorType(t).rank, mesh_name=mesh_name)
              for s, t in zip(out_specs_leaves, glob)]
    with fe.building():
        op, blk = create_manual(values + captured, glob, sh_in, sh_out, ctx.axes, local + [v.type for v in captured])
    with ir.InsertionPoint(blk), op.location:
        call = ir.Operation.create("func.call", results=list(out_types), operands=list(blk.arguments),
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(sym)})
        ir.Operation.create("sdy.return", results=[], operands=list(call.results))
    if check_vma:
        _check_replication(fe, name, op, mesh, all_specs, out_specs_leaves)
    return rebuild_out([fe.wrap(r) for r in op.results])


def _check_replication(fe, name: str, op, mesh: Mesh, in_specs: list, out_specs: list) -> None:
    """An output declared replicated over a manual axis its value varies over is an error."""
    # the body is one call: look through it to the traced function
    body = op.regions[0].blocks[0]
    call = next(iter(body.operations))
    callee = functions(fe.module())[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
    fblk = callee.regions[0].blocks[0]
    in_vary = [frozenset(a for d in NamedSharding(mesh, s).dims(len(ir.RankedTensorType(t).shape)) for a in d)
               for s, t in zip(in_specs, [a.type for a in fblk.arguments])]
    vary = varying(fblk, in_vary, mesh.shape)
    ret = list(fblk.operations)[-1]
    for i, (v, s) in enumerate(zip(ret.operands, out_specs)):
        split = {a for d in NamedSharding(mesh, s).dims(ir.RankedTensorType(v.type).rank) for a in d}
        bad = sorted(vary.get(v, frozenset()) - split)
        if bad:
            raise ShardingError(
                f"shard_map({name}) output {i}: out_specs {s!r} declare it replicated over mesh axes {bad}, but its "
                f"value can differ between the devices along them",
                hint="reduce it with psum/pmax/..., shard it over those axes in out_specs, or pass check_vma=False")
