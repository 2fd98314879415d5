"""Device meshes and named shardings.

A ``Mesh`` is an n-d array of devices with one name per axis; a ``NamedSharding`` places an
array on a mesh by naming, for each array dimension, the mesh axes it is split over (``None``:
not split). ``jax.sharding.Mesh`` / ``NamedSharding`` / ``PartitionSpec`` objects are accepted
wherever ours are (they are read by their attributes; nothing of jax is imported here).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .errors import ShardingError

AxisSpec = str | tuple[str, ...] | None


class PartitionSpec(tuple):
    """How an array's dimensions are split over mesh axes, one entry per dimension (as
    ``jax.sharding.PartitionSpec``): a mesh axis name, a tuple of names (split over their
    product) or None (not split); dimensions past the last entry are not split.
    ``PartitionSpec("data")`` splits dimension 0 over axis ``data``. A tuple of entries is
    accepted wherever a spec is."""

    def __new__(cls, *parts: AxisSpec) -> "PartitionSpec":
        for p in parts:
            ok = p is None or isinstance(p, str) or (
                isinstance(p, (tuple, list)) and all(isinstance(a, str) for a in p))
            if not ok:
                raise TypeError(f"PartitionSpec entries are mesh axis names, tuples of them or None, got {p!r}")
        return super().__new__(cls, tuple(tuple(p) if isinstance(p, list) else p for p in parts))

    def __repr__(self) -> str:
        return f"PartitionSpec{tuple.__repr__(self) if len(self) != 1 else '(' + repr(self[0]) + ')'}"


class Mesh:
    """``devices``: an ndarray of devices whose shape is the mesh's; ``axis_names``: one name
    per mesh dimension."""

    __slots__ = ("devices", "axis_names", "_key")

    def __init__(self, devices: Any, axis_names: Sequence[str]):
        devs = np.asarray(devices, dtype=object)
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if devs.ndim != len(names):
            raise ShardingError(f"a mesh of shape {devs.shape} needs {devs.ndim} axis names, got {list(names)}")
        if len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
            raise ShardingError(f"mesh axis names must be distinct non-empty strings, got {list(names)}")
        ids = [d.id for d in devs.flat]
        if len(set(ids)) != len(ids):
            raise ShardingError("a device appears twice in the mesh")
        platforms = {d.platform for d in devs.flat}
        if len(platforms) > 1:
            raise ShardingError(f"a mesh holds devices of one platform, got {sorted(platforms)}")
        self.devices = devs
        self.axis_names = names
        self._key = (tuple(ids), devs.shape, names)

    @property
    def shape(self) -> dict[str, int]:
        """Axis name -> size, in mesh order."""
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def device_ids(self) -> list[int]:
        """Device ids in mesh (row-major) order: logical device i of an SPMD program."""
        return list(self._key[0])

    def __eq__(self, other) -> bool:
        return isinstance(other, Mesh) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Mesh({', '.join(f'{n}={s}' for n, s in self.shape.items())})"


def as_mesh(mesh: Any) -> Mesh:
    """Ours, or a ``jax.sharding.Mesh`` (anything with ``devices`` and ``axis_names``)."""
    if isinstance(mesh, Mesh):
        return mesh
    if hasattr(mesh, "devices") and hasattr(mesh, "axis_names"):
        return Mesh(np.asarray(mesh.devices), tuple(mesh.axis_names))
    raise ShardingError(f"expected a mesh, got {type(mesh).__name__}")


def make_mesh(shape: Sequence[int], axis_names: Sequence[str], devices: Sequence[Any] | None = None) -> Mesh:
    """A mesh of ``shape`` over ``devices`` (default: every device of the default client, or
    of all processes after ``reactant.distributed.initialize``) in order."""
    shape = tuple(int(s) for s in shape)
    if devices is None:
        from ._devices import all_devices

        devices = all_devices()
    devices = list(devices)
    n = int(np.prod(shape))
    if n > len(devices):
        raise ShardingError(f"a mesh of shape {shape} needs {n} devices, {len(devices)} available")
    return Mesh(np.array(devices[:n], dtype=object).reshape(shape), axis_names)


class NamedSharding:
    """``spec``: one entry per array dimension, an axis name, a tuple of axis names (split over
    their product, major first) or ``None``; trailing dimensions may be left out."""

    __slots__ = ("mesh", "spec")

    def __init__(self, mesh: Any, spec: Sequence[AxisSpec] = ()):
        self.mesh = as_mesh(mesh)
        entries = tuple(spec)
        for e in entries:
            for a in _axes(e):
                if a not in self.mesh.axis_names:
                    raise ShardingError(f"axis {a!r} is not in the mesh {self.mesh} (axes {list(self.mesh.axis_names)})")
        used = [a for e in entries for a in _axes(e)]
        if len(set(used)) != len(used):
            raise ShardingError(f"an axis is used twice in the sharding spec {entries}")
        while entries and entries[-1] is None:
            entries = entries[:-1]
        self.spec = tuple(e if e is None or isinstance(e, str) else tuple(e) for e in entries)

    def dims(self, rank: int) -> list[tuple[str, ...]]:
        """The axes each of ``rank`` dimensions is split over."""
        if len(self.spec) > rank:
            raise ShardingError(f"the sharding spec {self.spec} has {len(self.spec)} entries, more than the "
                                f"array's rank {rank}")
        return [_axes(e) for e in self.spec] + [()] * (rank - len(self.spec))

    def check_shape(self, shape: Sequence[int]) -> None:
        """The spec fits an array of ``shape`` (no more entries than its rank). A dimension
        the mesh axes do not divide is fine: it is stored padded (``padded_shape``)."""
        self.dims(len(shape))

    def parts(self, rank: int) -> list[int]:
        """Per dimension of an array of ``rank``, the number of blocks it is split into."""
        sizes = self.mesh.shape
        return [int(np.prod([sizes[a] for a in axes])) if axes else 1 for axes in self.dims(rank)]

    def padded_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of the device buffer holding an array of ``shape`` placed by this
        sharding: each split dimension rounded up to a multiple of its number of blocks
        (``shape`` itself when the mesh divides it). The padding is never read."""
        return tuple(-(-int(n) // k) * k for n, k in zip(shape, self.parts(len(shape))))

    def __eq__(self, other) -> bool:
        return isinstance(other, NamedSharding) and self.mesh == other.mesh and self.spec == other.spec

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec))

    def __repr__(self) -> str:
        return f"NamedSharding({self.mesh!r}, {self.spec!r})"


def Replicated(mesh: Any) -> NamedSharding:  # noqa: N802  (reads as a type)
    """Every device of ``mesh`` holds the whole array."""
    return NamedSharding(mesh, ())


def as_sharding(s: Any) -> NamedSharding:
    """Ours, or a ``jax.sharding.NamedSharding`` (``mesh`` and ``spec`` attributes)."""
    if isinstance(s, NamedSharding):
        return s
    if hasattr(s, "mesh") and hasattr(s, "spec"):
        return NamedSharding(as_mesh(s.mesh), tuple(s.spec))
    raise ShardingError(f"expected a NamedSharding, got {type(s).__name__}")


def _axes(entry: AxisSpec) -> tuple[str, ...]:
    if entry is None:
        return ()
    if isinstance(entry, str):
        return (entry,)
    if isinstance(entry, (tuple, list)) and all(isinstance(a, str) for a in entry):
        return tuple(entry)
    raise ShardingError(f"a sharding spec entry is an axis name, a tuple of axis names or None, got {entry!r}")
