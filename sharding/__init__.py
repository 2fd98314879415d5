"""reactant.sharding: device meshes, named shardings and their Shardy annotations.

``Mesh`` / ``make_mesh`` build a mesh of devices; ``NamedSharding(mesh, spec)`` (or
``Replicated(mesh)``) places an array on it: pass it to ``reactant.to_rarray(x, sharding=...)``
and compiled functions run as one SPMD program over the mesh (Shardy propagates the argument
shardings, XLA partitions). ``jax.sharding`` meshes and shardings are accepted too.
"""

from .errors import ShardingError  # noqa: F401
from .mesh import Mesh, NamedSharding, Replicated, as_mesh, as_sharding, make_mesh  # noqa: F401

PartitionSpec = tuple  # a spec is a plain tuple (jax's PartitionSpec, a tuple too, is accepted)

__all__ = ["Mesh", "NamedSharding", "PartitionSpec", "Replicated", "ShardingError", "make_mesh"]
