"""Shardy (``sdy``) annotations on StableHLO modules: the mesh symbol, argument and result
shardings of ``@main``, propagation, and reading propagated shardings back.

XLA partitions a module annotated this way when compiled with ``use_shardy_partitioner``; the
mesh's devices are the program's logical devices 0..n-1 in mesh (row-major) order.
"""

from __future__ import annotations

from typing import Sequence

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy
from jaxlib.mlir.passmanager import PassManager

from ..ir.attrs import top_level_groups
from ..ir.context import function_type, main_func
from ..ir.manual import has_sub_axes, sharding_axes
from .mesh import Mesh, NamedSharding
from .uneven import is_uneven, pad_interface

MESH_NAME = "mesh"


def mesh_attr(mesh: Mesh) -> ir.Attribute:
    return sdy.MeshAttr.get([sdy.MeshAxisAttr.get(n, s) for n, s in mesh.shape.items()])


def ensure_mesh(module: ir.Module, mesh: Mesh) -> str:
    """The symbol of ``mesh`` in ``module`` (``sdy.mesh @mesh`` added at the top if absent);
    a module holds one mesh."""
    for op in module.body.operations:
        if op.operation.name == "sdy.mesh":
            if str(op.attributes["mesh"]) != str(mesh_attr(mesh)):
                from .errors import ShardingError

                raise ShardingError(f"one program uses one mesh: {mesh} differs from the mesh already in use")
            return ir.StringAttr(op.attributes["sym_name"]).value
    with ir.InsertionPoint.at_block_begin(module.body):
        sdy.MeshOp(MESH_NAME, mesh_attr(mesh))
    return MESH_NAME


def tensor_sharding(sharding: NamedSharding, rank: int, *, closed: bool = True,
                    mesh_name: str = MESH_NAME) -> ir.Attribute:
    """The ``#sdy.sharding`` of an array of ``rank`` placed by ``sharding`` (closed dimensions:
    propagation may not shard them further)."""
    dims = [sdy.DimensionShardingAttr.get([sdy.AxisRefAttr.get(a) for a in axes], is_closed=closed)
            for axes in sharding.dims(rank)]
    return sdy.TensorShardingAttr.get(mesh_name, dims)


def _set_attrs(fn, key: str, count: int, values: Sequence[tuple[str, ir.Attribute] | None]) -> None:
    """Merge ``name -> attribute`` pairs into a function's per-argument or per-result dicts."""
    old = list(ir.ArrayAttr(fn.attributes[key])) if key in fn.attributes else [ir.DictAttr.get({})] * count
    new = []
    for d, v in zip(old, values):
        d = ir.DictAttr(d)
        entries = {d[i].name: d[i].attr for i in range(len(d))}
        if v is not None:
            entries[v[0]] = v[1]
        new.append(ir.DictAttr.get(entries))
    fn.attributes[key] = ir.ArrayAttr.get(new)


def annotate_main(module: ir.Module, mesh: Mesh, args: Sequence[NamedSharding | None],
                  results: Sequence[NamedSharding | None] | None = None) -> None:
    """``sdy.sharding`` on ``@main``'s arguments (and results, when given; None: open).
    Given results (the program's final interface), dimensions a sharding does not divide are
    padded in ``@main``'s types (``uneven.pad_interface``: XLA would otherwise place such
    arguments and results over fewer devices)."""
    with module.context, ir.Location.unknown(module.context):
        name = ensure_mesh(module, mesh)
        fn = main_func(module)
        ft = function_type(fn)
        ins = [ir.RankedTensorType(t).rank for t in ft.inputs]
        _set_attrs(fn, "arg_attrs", len(ins),
                   [None if s is None else ("sdy.sharding", tensor_sharding(s, r, mesh_name=name))
                    for s, r in zip(args, ins)])
        if results is not None:
            outs = [ir.RankedTensorType(t).rank for t in ft.results]
            _set_attrs(fn, "res_attrs", len(outs),
                       [None if s is None else ("sdy.sharding", tensor_sharding(s, r, mesh_name=name))
                        for s, r in zip(results, outs)])
            pad_interface(module)


def propagate(module: ir.Module | ir.Operation) -> None:
    """Shardy's propagation: every op and ``@main``'s open results get shardings."""
    op = module.operation
    PassManager.parse("builtin.module(sdy-propagation-pipeline)", context=op.context).run(op)


def propagated_result_shardings(module: ir.Module, mesh: Mesh) -> list[NamedSharding]:
    """The shardings propagation gives ``@main``'s results, read from a propagated copy (the
    module itself stays as traced: XLA propagates again, and refuses the reshards that
    propagation makes of sharding constraints). A result the mesh does not divide keeps the
    sharding of the value returned (Shardy's export would move it to fewer devices); the
    copy's uneven arguments are padded first for the same reason."""
    probe = module.operation.clone()
    try:
        pad_interface(probe)
        propagate(probe)
        return result_shardings(probe, mesh, uneven_from_values=True)
    finally:
        probe.erase()


def result_shardings(module: ir.Module | ir.Operation, mesh: Mesh, *,
                     uneven_from_values: bool = False) -> list[NamedSharding]:
    """The shardings of ``@main``'s results as annotated (after propagation): replicated where
    a result has none, or one a named sharding cannot express (a sub-axis).
    ``uneven_from_values``: where the value returned has a sharding that does not divide it,
    that one (propagation's export replaces it on the result by one over fewer devices)."""
    fn = main_func(module)
    types = function_type(fn).results
    n = len(types)
    attrs = list(ir.ArrayAttr(fn.attributes["res_attrs"])) if "res_attrs" in fn.attributes else [None] * n
    returned = _returned_shardings(fn) if uneven_from_values else [""] * n
    sizes = mesh.shape
    out = []
    for a, t, v in zip(attrs, types, returned):
        d = None if a is None else ir.DictAttr(a)
        text = str(d["sdy.sharding"]) if d is not None and "sdy.sharding" in d else ""
        if v and not has_sub_axes(v) and is_uneven(ir.RankedTensorType(t).shape, v, sizes):
            text = v
        # (a sub-axis: a named spec cannot say it, replicated)
        out.append(NamedSharding(mesh, ()) if has_sub_axes(text) else _named(mesh, text))
    return out


def argument_shardings(module: ir.Module | ir.Operation, mesh: Mesh) -> list[NamedSharding | None]:
    """The shardings annotated on ``@main``'s arguments (None: not annotated, or a sub-axis)."""
    fn = main_func(module)
    n = len(function_type(fn).inputs)
    attrs = list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else [None] * n
    out: list[NamedSharding | None] = []
    for a in attrs:
        d = None if a is None else ir.DictAttr(a)
        text = str(d["sdy.sharding"]) if d is not None and "sdy.sharding" in d else ""
        out.append(None if not text or has_sub_axes(text) else _named(mesh, text))
    return out


def _named(mesh: Mesh, text: str) -> NamedSharding:
    """The NamedSharding of a ``#sdy.sharding`` (text) without sub-axes."""
    spec = [None if not ax else ax[0] if len(ax) == 1 else ax for ax in sharding_axes(text)]
    return NamedSharding(mesh, tuple(spec))


def _per_value(text: str) -> list[str]:
    """The shardings of a ``#sdy.sharding_per_value<[<@mesh, ...>, ...]>`` (text), one per
    result: its top-level ``<@...>`` parts."""
    return top_level_groups(text[text.index("[") + 1:], "<", ">") if "[" in text else []


def _returned_shardings(fn) -> list[str]:
    """Per value ``@main`` returns, the text of its propagated sharding ("" when it has none)."""
    block = fn.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    arg_attrs = list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else []
    out = []
    for v in ret.operands:
        text = ""
        if isinstance(v, ir.OpResult):
            owner = v.owner
            if owner.operation.name in ("sdy.sharding_constraint", "sdy.reshard"):
                text = str(owner.attributes["sharding"])  # (one result, its own attribute)
            elif "sdy.sharding" in owner.attributes:
                parts = _per_value(str(owner.attributes["sdy.sharding"]))
                if v.result_number < len(parts):
                    text = parts[v.result_number]
        elif isinstance(v, ir.BlockArgument) and v.arg_number < len(arg_attrs):
            d = ir.DictAttr(arg_attrs[v.arg_number])
            text = str(d["sdy.sharding"]) if "sdy.sharding" in d else ""
        out.append(text)
    return out
