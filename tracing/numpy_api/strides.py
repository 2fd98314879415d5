"""``np.lib.stride_tricks.as_strided`` and ``sliding_window_view`` on traced arrays.

A traced array is a dense C-contiguous buffer (its ``strides`` say so), so a strided view of it
is a selection of its flattened elements with static positions: element ``(i0, i1, ...)`` of
``as_strided(x, shape, strides)`` is ``x.ravel()[i0*s0 + i1*s1 + ...]`` with the strides ``s``
counted in elements. That is recorded as slices and reshapes where the view is contiguous, as a
reshape, slice and transpose where its dims nest without overlap (pooling blocks, every other
row), and otherwise (overlapping windows) as one gather of contiguous blocks whose starts are
computed on the device (no constant the size of the result). Strides that are not whole elements, or a view that reaches
outside the buffer (NumPy would read foreign memory), are refused with a clear error.

Views are read-only: NumPy's ``as_strided`` result (``writeable=True``) shares x's memory, so a
write through it would change ``x`` (and the other elements that alias it); a traced result is a
new array, so writing into it (``v[i] = ...``, ``v += ...``, ``out=v``) raises instead of
silently leaving ``x`` unchanged. ``sliding_window_view`` is read-only in NumPy too.

``as_strided`` is a plain Python function (NumPy does not dispatch it through
``__array_function__``): converted user code reaches the traced implementation through
``autograph._numpy_call`` (``DIRECT``), other code through the guard ``library_calls`` installs.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..errors import ShapeError, UnsupportedError, describe
from ..traced import TracedRArray
from ._registry import DIRECT, implements
from .convert import as_traced, normalize_axis

AS_STRIDED = np.lib.stride_tricks.as_strided  # NumPy's own (library_calls may wrap the attribute)
AS_STRIDED = getattr(AS_STRIDED, "__reactant_guarded__", AS_STRIDED)


class ReadOnlyView(TracedRArray):
    """A traced strided view: reading is as for any traced array, writing is refused (NumPy
    would write through the view into the array it was made from)."""

    __slots__ = ()

    def refuse_write(self, *_args, **_kwargs):
        """Raise the error a write into this view gets."""
        raise UnsupportedError(
            "writing into the result of as_strided/sliding_window_view: in NumPy it is a view, and the write "
            "would change the array it views; inside a compiled function the view is a read-only copy",
            hint="write into a copy (v = np.copy(view)), or compute the updated array with np.where / x.at[...]")

    __setitem__ = refuse_write
    _inplace = refuse_write
    _fill = refuse_write


def _is_traced(x) -> bool:
    return isinstance(x, TracedRArray) or getattr(x, "__reactant_concrete__", None) is not None


@implements(AS_STRIDED)
def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """NumPy's ``as_strided`` for a traced ``x`` (NumPy's own function for anything else)."""
    if not _is_traced(x):
        return AS_STRIDED(x, shape, strides, subok, writeable)
    t = as_traced(x)
    shape = t.shape if shape is None else tuple(int(n) for n in np.atleast_1d(shape))
    strides = t.strides if strides is None else tuple(
        int(s) for s in np.atleast_1d(strides))
    return strided_view(t, shape, strides, "as_strided")


DIRECT.add(AS_STRIDED)


def strided_view(x: TracedRArray, shape: tuple[int, ...], strides: tuple[int, ...], name: str) -> TracedRArray:
    """The read-only view ``shape``/``strides`` (bytes) of x's C-contiguous buffer."""
    if len(shape) != len(strides):
        raise ShapeError(f"{name}: mismatch in length of strides {list(strides)} and shape {list(shape)}")
    if any(n < 0 for n in shape):
        raise ShapeError(f"{name}: negative dimensions are not allowed: shape {list(shape)}")
    size = x.dtype.itemsize
    bad = [s for s in strides if s % size]
    if bad:
        raise UnsupportedError(
            f"{name}: stride {bad[0]} of {describe(x)} is not a multiple of its itemsize {size}: the view would "
            "read parts of elements, which a traced array (a buffer of whole elements) cannot",
            hint="give strides in multiples of x.itemsize (x.strides are C-contiguous inside a trace)")
    if 0 in shape:
        return _read_only(ops.full(shape, 0, x.dtype))
    steps = [s // size for s in strides]
    lo = sum(min(0, e * (n - 1)) for e, n in zip(steps, shape))
    hi = sum(max(0, e * (n - 1)) for e, n in zip(steps, shape))
    if lo < 0 or hi >= x.size:
        where = lo if lo < 0 else hi
        raise ShapeError(
            f"{name}: shape {list(shape)} with strides {list(strides)} addresses element {where} of {describe(x)}, "
            f"outside its {x.size} elements (NumPy would read memory that is not the array's)",
            hint="choose shape and strides that stay inside the array (e.g. "
                 "np.lib.stride_tricks.sliding_window_view for windows)")
    return _read_only(_gather_view(ops.reshape(x, (x.size,)), shape, steps))


def _read_only(t: TracedRArray) -> TracedRArray:
    if t.shape == ():
        return t  # a 0-d result is a number: nothing to write through
    return ReadOnlyView(t.value, t.shape, t.dtype)


def _gather_view(flat: TracedRArray, shape: tuple[int, ...], steps: list[int]) -> TracedRArray:
    """Elements ``flat[sum(i_d * steps[d])]`` for every index of ``shape`` (all in bounds)."""
    # dims of length 1 and dims of step 0 only repeat what the others select: broadcast at the end
    core = [d for d, (n, e) in enumerate(zip(shape, steps)) if n > 1 and e != 0]
    sizes = [shape[d] for d in core]
    es = [steps[d] for d in core]
    # the longest C-contiguous run of trailing dims: one block of `block` consecutive elements
    k, block = len(core), 1
    while k > 0 and es[k - 1] == block:
        block *= sizes[k - 1]
        k -= 1
    if k == 0:  # the whole view is one contiguous run from element 0
        v = ops.slice(flat, [0], [block]) if block != flat.shape[0] else flat
    else:
        v = _nested_view(flat, sizes, es)
        if v is None:
            v = _gather_blocks(flat, sizes[:k], es[:k], block)
    v = ops.reshape(v, tuple(sizes))
    return ops.broadcast_in_dim(v, shape, core)


def _nested_view(flat: TracedRArray, sizes: list[int], es: list[int]) -> TracedRArray | None:
    """The view as data movement when its dims nest without overlap (the blocks of a pooling
    layer, every other row): ordered by step, each step a whole multiple of the previous one and
    at least its count times it. Then ``flat``, trimmed or padded to the outermost step times
    its count, reshaped to [that count, each ratio of consecutive steps, the innermost step],
    sliced to the counts and transposed to the view's order is the view; no gather. None when
    the dims do not nest (overlapping windows: a gather)."""
    order = sorted(range(len(es)), key=lambda d: es[d])  # innermost first
    for a, b in zip(order, order[1:]):
        if es[a] <= 0 or es[b] % es[a] or es[b] < es[a] * sizes[a]:
            return None
    if es[order[0]] <= 0:
        return None
    outer = order[-1]
    length = es[outer] * sizes[outer]
    if length > flat.shape[0]:  # (the padding is never selected: every offset is in the array)
        flat = ops.pad(flat, ops.full((), 0, flat.dtype), [0], [length - flat.shape[0]])
    elif length < flat.shape[0]:
        flat = ops.slice(flat, [0], [length])
    # outermost first: the outer count, the step ratios (each holds one view dim), the innermost step
    dims = [sizes[outer]] + [es[b] // es[a] for a, b in zip(order[-2::-1], order[:0:-1])] + [es[order[0]]]
    v = ops.reshape(flat, tuple(dims))
    desc = order[::-1]
    v = ops.slice(v, [0] * len(dims), [sizes[d] for d in desc] + [1])
    v = ops.reshape(v, tuple(sizes[d] for d in desc))
    perm = [desc.index(d) for d in range(len(sizes))]
    return v if perm == list(range(len(sizes))) else ops.transpose(v, perm)


def _gather_blocks(flat: TracedRArray, lead: list[int], es: list[int], block: int) -> TracedRArray:
    """``block`` consecutive elements starting at ``sum(i_d * es[d])`` for each index of ``lead``:
    the starts are computed on the device (iota), never stored as a constant."""
    idt = np.int64 if flat.shape[0] >= 2**31 - 1 else np.int32
    starts = None
    for d, e in enumerate(es):
        term = ops.multiply(ops.iota(lead, idt, d), ops.full(tuple(lead), e, idt))
        starts = term if starts is None else ops.add(starts, term)
    starts = ops.reshape(starts, tuple(lead) + (1,))
    return ops.gather(flat, starts, offset_dims=(len(lead),), collapsed_slice_dims=(), start_index_map=(0,),
                      index_vector_dim=len(lead), slice_sizes=(block,))


@implements(np.lib.stride_tricks.sliding_window_view)
def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """Every window of ``window_shape`` over ``x`` (along ``axis``), as NumPy: shape
    ``x.shape`` trimmed by ``window - 1`` on each windowed axis, followed by the window dims."""
    t = as_traced(x)
    window = tuple(int(w) for w in np.atleast_1d(window_shape))
    if any(w < 0 for w in window):
        raise ShapeError("`window_shape` cannot contain negative values")
    if axis is None:
        if len(window) != t.ndim:
            raise ShapeError(f"Since axis is `None`, must provide window_shape for all dimensions of `x`; "
                             f"got {len(window)} window_shape elements and `x.ndim` is {t.ndim}.")
        axes = tuple(range(t.ndim))
    else:
        axes = tuple(normalize_axis(a, t.ndim) for a in np.atleast_1d(axis))
        if len(window) != len(axes):
            raise ShapeError(f"Must provide matching length window_shape and axis; got {len(window)} "
                             f"window_shape elements and {len(axes)} axes elements.")
    base = t.strides
    trimmed = list(t.shape)
    for ax, w in zip(axes, window):
        if trimmed[ax] < w:
            raise ShapeError("window shape cannot be larger than input array shape")
        trimmed[ax] -= w - 1
    return strided_view(t, tuple(trimmed) + window, base + tuple(base[a] for a in axes), "sliding_window_view")
