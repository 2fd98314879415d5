"""Shape rules of StableHLO ops, on plain tuples of ints (StableHLO spec, static shapes).

One rule per op, read by the op's builder (``reactant.ir.build``), which every layer builds
ops with; the tracer's Ops layer also reads a few to validate user input before building.
"""

from __future__ import annotations

from typing import Sequence

Shape = tuple[int, ...]


def transpose(shape: Sequence[int], perm: Sequence[int]) -> Shape:
    """Result dim i is operand dim ``perm[i]``."""
    return tuple(shape[p] for p in perm)


def slice(shape: Sequence[int], start: Sequence[int], limit: Sequence[int],  # noqa: A001
          strides: Sequence[int]) -> Shape:
    """``ceil((limit - start) / stride)`` per dim (0 for empty ranges)."""
    return tuple(max(0, -(-(int(e) - int(s)) // int(t))) for s, e, t in zip(start, limit, strides))


def pad(shape: Sequence[int], low: Sequence[int], high: Sequence[int], interior: Sequence[int]) -> Shape:
    """Edge padding (negative crops) plus interior padding between elements."""
    return tuple(int(lo) + int(hi) + n + max(0, n - 1) * int(it)
                 for n, lo, hi, it in zip(shape, low, high, interior))


def concatenate(shapes: Sequence[Sequence[int]], dim: int) -> Shape:
    out = list(shapes[0])
    out[dim] = sum(s[dim] for s in shapes)
    return tuple(out)


def fft(shape: Sequence[int], fft_type: str, lengths: Sequence[int]) -> Shape:
    """FFT/IFFT keep the shape; RFFT turns the last dim ``n`` into ``n // 2 + 1`` (the
    non-negative frequencies), IRFFT turns it back into ``lengths[-1]``."""
    out = list(shape)
    if fft_type == "RFFT":
        out[-1] = int(lengths[-1]) // 2 + 1
    elif fft_type == "IRFFT":
        out[-1] = int(lengths[-1])
    return tuple(out)


def reduce(shape: Sequence[int], dims: Sequence[int]) -> Shape:
    """The dims not reduced, in order."""
    drop = set(int(d) for d in dims)
    return tuple(n for i, n in enumerate(shape) if i not in drop)


def dot_general(lhs: Sequence[int], rhs: Sequence[int], lb: Sequence[int], rb: Sequence[int],
                lc: Sequence[int], rc: Sequence[int]) -> Shape:
    """Batch dims, then the lhs's free dims, then the rhs's free dims."""
    lf = [d for d in range(len(lhs)) if d not in lb and d not in lc]
    rf = [d for d in range(len(rhs)) if d not in rb and d not in rc]
    return tuple([lhs[d] for d in lb] + [lhs[d] for d in lf] + [rhs[d] for d in rf])


def gather(operand: Sequence[int], indices: Sequence[int], offset_dims: Sequence[int],
           collapsed_slice_dims: Sequence[int], operand_batching_dims: Sequence[int],
           index_vector_dim: int, slice_sizes: Sequence[int]) -> Shape:
    """Batch dims of the indices interleaved with the kept slice dims at ``offset_dims``."""
    dropped = set(collapsed_slice_dims) | set(operand_batching_dims)
    offsets = [s for d, s in enumerate(slice_sizes) if d not in dropped]
    batch = iter([n for d, n in enumerate(indices) if d != index_vector_dim])
    offs = iter(offsets)
    rank = len(offsets) + len(indices) - (1 if index_vector_dim < len(indices) else 0)
    return tuple(next(offs) if d in offset_dims else next(batch) for d in range(rank))


def unit_dims_map(src: Sequence[int], dst: Sequence[int]) -> list[int | None] | None:
    """When reshaping ``src`` to ``dst`` only inserts or removes size-1 dimensions: for each
    src dim, its dst dim (None for a removed size-1 dim); else None."""
    m: list[int | None] = [None] * len(src)
    j = 0
    for i, s in enumerate(src):
        if s == 1:
            if j < len(dst) and dst[j] == 1:
                m[i] = j
                j += 1
            continue
        while j < len(dst) and dst[j] == 1:
            j += 1
        if j >= len(dst) or dst[j] != s:
            return None
        m[i] = j
        j += 1
    if any(d != 1 for d in dst[j:]):
        return None
    return m


def reduce_window(shape: Sequence[int], window: Sequence[int], strides: Sequence[int],
                  padding: Sequence[tuple[int, int]], base_dilations: Sequence[int],
                  window_dilations: Sequence[int]) -> Shape:
    """Windows per dim of the dilated, padded operand (0 where a window does not fit)."""
    out = []
    for n, w, s, (lo, hi), bd, wd in zip(shape, window, strides, padding, base_dilations, window_dilations):
        padded = lo + ((n - 1) * bd + 1 if n > 0 else 0) + hi
        extent = (w - 1) * wd + 1
        out.append(0 if padded == 0 or extent > padded else (padded - extent) // s + 1)
    return tuple(out)


# -- collectives ----------------------------------------------------------------------------------
def all_gather(shape: Sequence[int], dim: int, count: int) -> tuple[int, ...]:
    """Each of ``count`` devices' blocks concatenated along ``dim``."""
    return tuple(s * count if i == dim else s for i, s in enumerate(shape))


def reduce_scatter(shape: Sequence[int], dim: int, count: int) -> tuple[int, ...]:
    """One of ``count`` blocks along ``dim`` (its size divisible by ``count``)."""
    if shape[dim] % count:
        raise ValueError(f"dimension {dim} of size {shape[dim]} is not divisible by {count}")
    return tuple(s // count if i == dim else s for i, s in enumerate(shape))


def all_to_all(shape: Sequence[int], split_dim: int, concat_dim: int, count: int) -> tuple[int, ...]:
    """``split_dim`` cut in ``count`` blocks sent to the devices, received blocks concatenated
    along ``concat_dim``."""
    out = list(reduce_scatter(shape, split_dim, count))
    out[concat_dim] *= count
    return tuple(out)
