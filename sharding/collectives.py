"""Collectives inside ``shard_map``: each names mesh axes (one name or a tuple of names) and
acts among the devices that differ only along them. They work on arrays and on pytrees of
arrays (``psum`` of a dict of gradients); Python numbers are constants (``psum(1, "x")`` is
the axis size). ``all_gather`` and ``psum_scatter`` default to ``tiled=True``: blocks are
concatenated along / split from an existing dimension.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from jaxlib.mlir import ir

from ..ir import build as B
from ..ir import frontend as F
from ..ir.manual import axis_groups
from ..ir.types import tensor_type
from .errors import ShardingError
from .manual import ManualContext, current_manual


def _context(what: str) -> tuple[Any, ManualContext]:
    ctx = current_manual()
    fe = F.frontend()
    if ctx is None or fe is None:
        raise ShardingError(f"{what} is a collective: call it inside a function given to reactant.sharding.shard_map")
    return fe, ctx


def _axes(ctx: ManualContext, axis_name: str | Sequence[str], what: str) -> tuple[str, ...]:
    axes = (axis_name,) if isinstance(axis_name, str) else tuple(axis_name)
    for a in axes:
        if a not in ctx.axes:
            raise ShardingError(f"{what}: axis {a!r} is not a manual axis of the shard_map "
                                f"(mesh axes {list(ctx.mesh.axis_names)})")
    if len(set(axes)) != len(axes):
        raise ShardingError(f"{what}: an axis is named twice in {axes}")
    return axes


def _channel(fe) -> int:
    state = fe.state()
    n = state["channels"] = state.get("channels", 0) + 1
    return n


def _map(fe, x, fn):
    leaves, rebuild = fe.flatten(x)
    with fe.building():
        outs = [fn(fe.value(leaf)) for leaf in leaves]
    return rebuild([fe.wrap(v) for v in outs])


def _over(axis_name, what: str) -> tuple[Any, tuple[str, ...], list[list[int]]]:
    """(frontend, axes, device groups) of a collective over ``axis_name`` in the current
    shard_map."""
    fe, ctx = _context(what)
    axes = _axes(ctx, axis_name, what)
    return fe, axes, axis_groups(ctx.mesh.shape, axes).tolist()


def _reduce(x, axis_name, kind: str, what: str):
    fe, _, groups = _over(axis_name, what)
    return _map(fe, x, lambda v: B.all_reduce(v, groups, kind, channel=_channel(fe)))


def psum(x: Any, axis_name: str | Sequence[str]) -> Any:
    """The sum of ``x`` over the devices along ``axis_name`` (the same on each)."""
    return _reduce(x, axis_name, "stablehlo.add", "psum")


def pmax(x: Any, axis_name: str | Sequence[str]) -> Any:
    """The elementwise maximum of ``x`` over the devices along ``axis_name``."""
    return _reduce(x, axis_name, "stablehlo.maximum", "pmax")


def pmin(x: Any, axis_name: str | Sequence[str]) -> Any:
    """The elementwise minimum of ``x`` over the devices along ``axis_name``."""
    return _reduce(x, axis_name, "stablehlo.minimum", "pmin")


def pmean(x: Any, axis_name: str | Sequence[str]) -> Any:
    """The mean of ``x`` over the devices along ``axis_name``."""
    fe, _ = _context("pmean")
    n = axis_size(axis_name)
    leaves, rebuild = fe.flatten(psum(x, axis_name))
    return rebuild([leaf / n for leaf in leaves])


def axis_size(axis_name: str | Sequence[str]) -> int:
    """The number of devices along ``axis_name``."""
    _, ctx = _context("axis_size")
    sizes = ctx.mesh.shape
    return int(np.prod([sizes[a] for a in _axes(ctx, axis_name, "axis_size")]))


def all_gather(x: Any, axis_name: str | Sequence[str], *, axis: int = 0, tiled: bool = True) -> Any:
    """The blocks of the devices along ``axis_name`` (in order) concatenated along dimension
    ``axis`` (``tiled=False``: stacked along a new dimension ``axis``)."""
    fe, _, groups = _over(axis_name, "all_gather")

    def gather(v):
        shape = list(tensor_type(v).shape)
        d = _dim(axis, len(shape) + (0 if tiled else 1), "all_gather")
        if not tiled:
            v = B.reshape(v, shape[:d] + [1] + shape[d:])
        return B.all_gather(v, d, groups, channel=_channel(fe))

    return _map(fe, x, gather)


def psum_scatter(x: Any, axis_name: str | Sequence[str], *, scatter_dimension: int = 0, tiled: bool = True) -> Any:
    """The sum over the devices along ``axis_name``, device k keeping block k of dimension
    ``scatter_dimension`` (``tiled=False``: that dimension's size is the axis size, and it is
    removed)."""
    fe, axes, groups = _over(axis_name, "psum_scatter")
    n = len(groups[0])

    def scatter(v):
        shape, d = _split_dim(v, scatter_dimension, n, tiled, axes, "psum_scatter")
        r = B.reduce_scatter(v, d, groups, channel=_channel(fe))
        return r if tiled else B.reshape(r, shape[:d] + shape[d + 1:])

    return _map(fe, x, scatter)


def ppermute(x: Any, axis_name: str | Sequence[str], perm: Sequence[tuple[int, int]]) -> Any:
    """Device ``dst`` along ``axis_name`` receives ``x`` of device ``src`` for each
    ``(src, dst)`` in ``perm`` (positions along the axis); devices no pair targets get zeros."""
    fe, axes, groups = _over(axis_name, "ppermute")
    n = len(groups[0])
    perm = [(int(s), int(d)) for s, d in perm]
    if any(not (0 <= s < n and 0 <= d < n) for s, d in perm) or len({s for s, _ in perm}) != len(perm) or len(
            {d for _, d in perm}) != len(perm):
        raise ShardingError(f"ppermute: {perm} is not a partial permutation of the {n} positions along {list(axes)}")
    pairs = [(g[s], g[d]) for g in groups for s, d in perm]
    return _map(fe, x, lambda v: B.collective_permute(v, pairs, channel=_channel(fe)))


def all_to_all(x: Any, axis_name: str | Sequence[str], split_axis: int, concat_axis: int, *,
               tiled: bool = False) -> Any:
    """Dimension ``split_axis`` cut into one block per device along ``axis_name``; device k
    receives every device's block k, concatenated along ``concat_axis`` (``tiled=True``). With
    ``tiled=False`` (JAX's default) ``split_axis`` has the axis size and is removed, and the
    received blocks are stacked along a new dimension ``concat_axis``."""
    fe, axes, groups = _over(axis_name, "all_to_all")
    n = len(groups[0])

    def exchange(v):
        shape, s = _split_dim(v, split_axis, n, tiled, axes, "all_to_all")
        if tiled:
            return B.all_to_all(v, s, _dim(concat_axis, len(shape), "all_to_all"), groups, channel=_channel(fe))
        r = B.all_to_all(v, s, s, groups, channel=_channel(fe))  # position j now holds device j's block
        c = _dim(concat_axis, len(shape), "all_to_all")
        perm = [i for i in range(len(shape)) if i != s]
        perm.insert(c, s)
        return B.transpose(r, perm)

    return _map(fe, x, exchange)


def axis_index(axis_name: str | Sequence[str]) -> Any:
    """This device's position along ``axis_name`` (an int32 scalar; row-major over a tuple)."""
    fe, ctx = _context("axis_index")
    axes = _axes(ctx, axis_name, "axis_index")
    sizes = ctx.mesh.shape
    names = list(sizes)
    i32 = ir.IntegerType.get_signless(32)
    with fe.building():
        pid = B.convert(B.partition_id(), i32)
        idx = None
        for a in axes:
            stride = int(np.prod([sizes[b] for b in names[names.index(a) + 1:]] or [1]))
            c = B.remainder(B.divide(pid, B.constant(np.int32(stride))), B.constant(np.int32(sizes[a])))
            idx = c if idx is None else B.add(B.multiply(idx, B.constant(np.int32(sizes[a]))), c)
    return fe.wrap(idx)


def _split_dim(v, dim: int, n: int, tiled: bool, axes, what: str) -> tuple[list[int], int]:
    """``v``'s shape and the dimension ``dim`` that is cut into ``n`` blocks (its size ``n``
    when not ``tiled``)."""
    shape = list(tensor_type(v).shape)
    d = _dim(dim, len(shape), what)
    if shape[d] % n or (not tiled and shape[d] != n):
        raise ShardingError(f"{what}: dimension {d} of size {shape[d]} does not split over the {n} devices "
                            f"of axes {list(axes)}")
    return shape, d


def _dim(d: int, rank: int, what: str) -> int:
    if not -rank <= d < rank:
        raise ShardingError(f"{what}: dimension {d} is out of range for rank {rank}")
    return d % rank
