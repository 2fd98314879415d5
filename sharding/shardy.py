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

from ..ir.context import function_type, main_func
from ..ir.manual import has_sub_axes, sharding_axes
from .mesh import Mesh, NamedSharding

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
    """``sdy.sharding`` on ``@main``'s arguments (and results, when given; None: open)."""
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


def propagate(module: ir.Module | ir.Operation) -> None:
    """Shardy's propagation: every op and ``@main``'s open results get shardings."""
    op = module.operation
    PassManager.parse("builtin.module(sdy-propagation-pipeline)", context=op.context).run(op)


def propagated_result_shardings(module: ir.Module, mesh: Mesh) -> list[NamedSharding]:
    """The shardings propagation gives ``@main``'s results, read from a propagated copy (the
    module itself stays as traced: XLA propagates again, and refuses the reshards that
    propagation makes of sharding constraints)."""
    probe = module.operation.clone()
    try:
        propagate(probe)
        return result_shardings(probe, mesh)
    finally:
        probe.erase()


def result_shardings(module: ir.Module | ir.Operation, mesh: Mesh) -> list[NamedSharding]:
    """The shardings of ``@main``'s results as annotated (after propagation): replicated where
    a result has none, or one a named sharding cannot express (a sub-axis)."""
    fn = main_func(module)
    n = len(function_type(fn).results)
    attrs = list(ir.ArrayAttr(fn.attributes["res_attrs"])) if "res_attrs" in fn.attributes else [None] * n
    out = []
    for a in attrs:
        d = None if a is None else ir.DictAttr(a)
        text = str(d["sdy.sharding"]) if d is not None and "sdy.sharding" in d else ""
        if has_sub_axes(text):  # a named spec cannot say it: replicated
            out.append(NamedSharding(mesh, ()))
            continue
        spec = [None if not ax else ax[0] if len(ax) == 1 else ax for ax in sharding_axes(text)]
        out.append(NamedSharding(mesh, tuple(spec)))
    return out
