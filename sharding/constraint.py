"""``constrain``: a sharding constraint inside traced code (``sdy.sharding_constraint``, like
``jax.lax.with_sharding_constraint``); outside a trace, a reshard of device arrays."""

from __future__ import annotations

from typing import Any


from ..ir import frontend as F
from ..ir.types import tensor_type
from .errors import ShardingError
from .manual import current_manual, use_mesh
from .mesh import as_sharding
from .shardy import tensor_sharding


def constrain(x: Any, sharding: Any) -> Any:
    """``x`` (an array or a pytree of arrays) placed by ``sharding`` (a ``NamedSharding``, or
    a pytree of them matching ``x``). Inside ``@reactant.compile`` Shardy propagates from the
    constraint and XLA reshards there; on device arrays it reshards now; NumPy arrays are
    placed."""
    fe = F.frontend()
    if fe is None:
        rt = F.runtime()
        if rt is None:
            raise ShardingError("constrain needs reactant (import reactant)")
        leaves, rebuild = _pairs(x, sharding, _flatten_plain)
        return rebuild([rt.reshard(leaf, s) for leaf, s in leaves])
    if current_manual() is not None:
        raise ShardingError("constrain inside shard_map: the values there are per-device blocks",
                            hint="constrain the shard_map's inputs or outputs instead")
    pairs, rebuild = _pairs(x, sharding, fe.flatten)
    outs = []
    for leaf, s in pairs:
        v = fe.value(leaf)
        t = tensor_type(v)
        s.check_shape(tuple(t.shape))
        name = use_mesh(fe, s.mesh)
        op = fe.emit("sdy.sharding_constraint", [v], [v.type],
                     {"sharding": tensor_sharding(s, t.rank, mesh_name=name)})
        outs.append(fe.wrap(op.result))
    return rebuild(outs)


def _pairs(x, sharding, flatten):
    leaves, rebuild = flatten(x)
    if _is_sharding(sharding):
        s = as_sharding(sharding)
        return [(leaf, s) for leaf in leaves], rebuild
    shardings, _ = _flatten_plain(sharding, leaf=_is_sharding)
    if len(shardings) != len(leaves):
        raise ShardingError(f"constrain: {len(shardings)} shardings for {len(leaves)} arrays")
    return [(leaf, as_sharding(s)) for leaf, s in zip(leaves, shardings)], rebuild


def _is_sharding(s) -> bool:
    return hasattr(s, "mesh") and hasattr(s, "spec")


def _flatten_plain(tree, leaf=lambda x: False):
    """Leaves of nested lists/tuples/dicts (outside a trace), and the rebuilder."""
    if not leaf(tree):
        if isinstance(tree, (list, tuple)):
            parts = [_flatten_plain(t, leaf) for t in tree]
            counts = [len(p[0]) for p in parts]

            def rebuild(new, parts=parts, counts=counts, kind=type(tree)):
                out, i = [], 0
                for (_, rb), c in zip(parts, counts):
                    out.append(rb(new[i:i + c]))
                    i += c
                return kind(out)

            return [x for p in parts for x in p[0]], rebuild
        if isinstance(tree, dict):
            keys = sorted(tree)
            leaves, rb = _flatten_plain([tree[k] for k in keys], leaf)
            return leaves, lambda new: dict(zip(keys, rb(new)))
    return [tree], lambda new: new[0]


