"""reactant.sharding: device meshes, named shardings, sharding constraints and ``shard_map``.

``Mesh`` / ``make_mesh`` build a mesh of devices; ``NamedSharding(mesh, spec)`` (or
``Replicated(mesh)``) places an array on it: pass it to ``reactant.to_rarray(x, sharding=...)``
and compiled functions run as one SPMD program over the mesh (Shardy propagates the argument
shardings, XLA partitions). ``constrain`` fixes a value's sharding inside traced code.
``shard_map(f, mesh, in_specs, out_specs)`` runs ``f`` on every device's blocks, with the
collectives ``psum``, ``pmax``, ``pmin``, ``pmean``, ``all_gather``, ``psum_scatter``,
``ppermute``, ``all_to_all``, ``axis_index``, ``axis_size``. ``jax.sharding`` meshes and
shardings are accepted too. ``to_rarray(x, mesh=mesh)`` puts an array on a mesh without a
spec (``AutoPlaced``): compiled functions choose its sharding by a ``CostModel``
(``reactant.compile(f, shard="auto", mesh=mesh)`` also for NumPy and single-device arguments).
"""

from .auto import AutoPlaced, CostModel  # noqa: F401
from .collectives import (  # noqa: F401
    all_gather, all_to_all, axis_index, axis_size, pmax, pmean, pmin, ppermute, psum, psum_scatter,
)
from .constraint import constrain  # noqa: F401
from .errors import ShardingError  # noqa: F401
from .manual import shard_map  # noqa: F401
from .mesh import Mesh, NamedSharding, PartitionSpec, Replicated, as_mesh, as_sharding, make_mesh  # noqa: F401

__all__ = ["AutoPlaced", "CostModel", "Mesh", "NamedSharding", "PartitionSpec", "Replicated", "ShardingError", "all_gather", "all_to_all",
           "axis_index", "axis_size", "constrain", "make_mesh", "pmax", "pmean", "pmin", "ppermute", "psum",
           "psum_scatter", "shard_map"]
