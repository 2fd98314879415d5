"""NumPy indexing on traced arrays: ``x[idx]``, ``x[idx] = v``, ``x.at[idx]``, ``np.take``...

Reading: basic indices (ints, slices with any step, None, Ellipsis) become ``slice`` /
``reverse`` / ``dynamic_slice`` / ``reshape``; integer-array indices (NumPy arrays, lists,
traced arrays; static boolean masks become their ``nonzero()``) become one ``gather``, with
NumPy's rule for where the broadcast index dims go.

Writing: a box (ints and step-1 slices) is a ``dynamic_update_slice``; anything else is a
``scatter`` into the flattened array at positions found by indexing an ``iota`` with the
same index (so every index form that can be read can also be written, with the same rules).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from ..context import active
from ..dtypes import result_type
from ..errors import DTypeError, IndexError_, OptionError, ShapeError, UnsupportedError, describe
from ..traced import TracedRArray, rebind
from . import windows
from ._registry import implements
from .convert import _promoted, array_dtype, as_traced, broadcast_all, broadcast_to, dtype_for_promotion, flat_or_axis, normalize_axis

_MASK_HINT = (
    "the number of True elements is only known at run time; use np.where(mask, x, other) "
    "for a same-shaped result, or x[mask] = v to write"
)


# -- parsing ----------------------------------------------------------------------------------
def _as_index_tuple(index) -> tuple:
    if isinstance(index, tuple):
        return index
    if isinstance(index, list):
        # NumPy treats a list as one integer/boolean array index
        return (np.asarray(index) if not _has_traced(index) else as_traced(index),)
    return (index,)


def _has_traced(seq) -> bool:
    return any(isinstance(v, TracedRArray) or (isinstance(v, list) and _has_traced(v)) for v in seq)


def _is_int_scalar(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


class _Index:
    """A parsed index over an array of ``shape``: Nones expanded into unit dims.

    ``entries[d]`` is, for dim d of the expanded array: a ``slice`` (static), an ``int``
    (static, non-negative, in range), a 0-d TracedRArray (dynamic int), or an index array
    (np.ndarray of ints, in range, or an integer TracedRArray); ``expanded`` is the shape with
    unit dims inserted for None.
    """

    def __init__(self, shape: tuple[int, ...], index):
        items = list(_as_index_tuple(index))
        # static boolean masks -> their nonzero() integer arrays (one per masked dim)
        out: list[Any] = []
        for it in items:
            if isinstance(it, list):
                it = np.asarray(it) if not _has_traced(it) else as_traced(it)
            if isinstance(it, (bool, np.bool_)):
                raise UnsupportedError("indexing with a Python bool is not supported inside a trace")
            if isinstance(it, np.ndarray) and it.dtype == np.bool_:
                out.append(("mask", it))
            elif isinstance(it, TracedRArray) and it.dtype == np.bool_:
                raise IndexError_(
                    f"boolean mask indexing with traced mask {describe(it)} has a data-dependent shape",
                    hint=_MASK_HINT,
                )
            else:
                out.append(it)
        n_ellipsis = sum(1 for it in out if it is Ellipsis)
        if n_ellipsis > 1:
            raise IndexError_("an index can only have a single ellipsis ('...')")
        consumed = sum(
            (it[1].ndim if isinstance(it, tuple) else 1)
            for it in out
            if it is not None and it is not Ellipsis
        )
        if consumed > len(shape):
            raise IndexError_(
                f"too many indices for array: array is {len(shape)}-dimensional, but {consumed} were indexed"
            )
        expanded_items: list[Any] = []
        dim = 0
        for it in out:
            if it is Ellipsis:
                expanded_items += [slice(None)] * (len(shape) - consumed)
                dim += len(shape) - consumed
            elif isinstance(it, tuple):  # static mask over dims dim .. dim + mask.ndim
                mask = it[1]
                want = tuple(shape[dim:dim + mask.ndim])
                if mask.ndim == 0 or tuple(mask.shape) != want:
                    raise IndexError_(
                        f"boolean index of shape {mask.shape} does not match the indexed dims {want}"
                    )
                expanded_items += list(np.nonzero(mask))
                dim += mask.ndim
            else:
                expanded_items.append(it)
                dim += it is not None
        if n_ellipsis == 0:
            expanded_items += [slice(None)] * (len(shape) - consumed)
        self.entries: list[Any] = []
        self.expanded: list[int] = []
        self.none_dims: list[int] = []
        dim = 0
        for it in expanded_items:
            if it is None:
                self.none_dims.append(len(self.entries))
                self.entries.append(slice(None))
                self.expanded.append(1)
                continue
            n = shape[dim]
            self.entries.append(_normalize_entry(it, n, dim))
            self.expanded.append(n)
            dim += 1
        self.has_array = any(_is_array_entry(e) for e in self.entries)


def _is_array_entry(e) -> bool:
    return isinstance(e, np.ndarray) or (isinstance(e, TracedRArray) and e.ndim > 0)


def _normalize_entry(it, n: int, dim: int):
    if isinstance(it, slice):
        return it
    if _is_int_scalar(it):
        i = int(it)
        if not -n <= i < n:
            raise IndexError_(f"index {i} is out of bounds for axis {dim} with size {n}")
        return i % n
    if isinstance(it, np.ndarray):
        if it.dtype.kind not in "iu":
            raise IndexError_(f"arrays used as indices must be of integer (or boolean) type, got {it.dtype}")
        if it.size and (it.min() < -n or it.max() >= n):
            bad = it[(it < -n) | (it >= n)].flat[0]
            raise IndexError_(f"index {bad} is out of bounds for axis {dim} with size {n}")
        return np.where(it < 0, it + n, it).astype(np.int64 if n > 2**31 - 1 else np.int32)
    if isinstance(it, TracedRArray):
        if it.dtype.kind not in "iu":
            raise IndexError_(f"arrays used as indices must be of integer type, got traced {describe(it)}")
        if it.dtype.kind == "i" and it.value not in active().nonneg_values and not _in_bounds(it, n):
            # negative indices count from the end: (i + n) rem n for i in [-n, n), in unsigned
            # arithmetic so the result provably lies in [0, n) (the optimizer can then drop the
            # bounds masks of gathers and scatter adjoints); one fused pass, no select
            ut = np.dtype(f"u{it.dtype.itemsize}")
            nn = ops.full(it.shape, n, ut)
            it = ops.remainder(ops.add(ops.convert(it, ut), nn), nn)  # stays unsigned: no extra pass
        return it
    if hasattr(it, "__index__"):
        return _normalize_entry(int(it.__index__()), n, dim)
    raise IndexError_(
        f"only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
        f"boolean arrays are valid indices, got {type(it).__name__}"
    )


def _in_bounds(it: TracedRArray, n: int) -> bool:
    """Whether a traced integer index provably lies in [0, n) (from the ranges of the loop
    indices it is computed from: ``x[i - 1]`` in ``for i in range(1, n)``): it then needs no
    wrap from the end (the wrap would leave it as it is)."""
    r = active().known_range(it.value)
    return r is not None and r[0] >= 0 and r[1] < n


# -- reading ----------------------------------------------------------------------------------
def getitem(x: TracedRArray, index) -> TracedRArray:
    """``x[index]`` with NumPy semantics (a traced boolean mask alone gives a
    ``MaskedSelection``: its length is only known at run time)."""
    if isinstance(index, TracedRArray) and index.dtype == np.bool_:
        from .masked import select

        return select(x, index)
    if isinstance(index, windows.Window):
        # x[cols[a:b]] with traced a, b (a sparse row): the gather of the window's block, with
        # the window's run-time length (the block's tail is never read as part of the result)
        w = index
        if w.values.ndim != 1 or w.values.dtype.kind not in "iu":
            raise IndexError_(f"indexing with a slice with traced bounds needs 1-d integers, got {w!r}")
        return windows.Window(getitem(x, w.values), (w.lens[0],) + tuple(x.shape[1:]))
    if windows.has_traced_bound(index):
        result = windows.read(x, index)
        if not isinstance(result, TracedRArray):  # a window whose length is known only at run time
            root = x._root if x._root is not None else x
            result.view = (x, _frozen(index), root.value)
            return result
        return _window_view(x, index, result)
    ix = _Index(x.shape, index)
    y = ops.reshape(x, ix.expanded) if ix.none_dims else x
    if ix.has_array:
        return _advanced(y, ix.entries)
    result = _basic(y, ix.entries)
    if result.shape == () and not _has_ellipsis(index):
        return result  # a NumPy scalar: a copy, not a view
    return _basic_view(x, ix, result)


def _frozen(e):
    """An index item with its traced scalars replaced by new handles of their current values
    (a view keeps the offsets it was made with, whatever happens to the names later)."""
    from ..traced import wrap

    if isinstance(e, TracedRArray):
        return wrap(e.value, e.shape, e.dtype)
    if isinstance(e, slice):
        return slice(_frozen(e.start), _frozen(e.stop), _frozen(e.step))
    if isinstance(e, tuple):
        return tuple(_frozen(i) for i in e)
    return e


def _window_view(x: TracedRArray, index, result: TracedRArray) -> TracedRArray:
    """``x[i:i + k]`` (traced bounds, static length; ``windows.read`` refuses steps) as a view
    of ``x``: the kept dims keep ``x``'s strides."""
    from ..views import index_view, strides_of

    index = _frozen(index)
    items = index if isinstance(index, tuple) else (index,)
    xs = strides_of(x)
    kept = [d for d, it in enumerate(list(items) + [slice(None)] * (x.ndim - len(items))) if isinstance(it, slice)]
    strides = [xs[d] for d in kept] if len(kept) == result.ndim else list(strides_of(result))

    def read(p):
        r = windows.read(p, index)
        if not isinstance(r, TracedRArray):  # its bounds' ranges are no longer known here
            raise UnsupportedError("a view x[i:j] with traced bounds, made inside a loop, is used where its "
                                   "length is no longer known", hint="copy it (.copy()) inside the loop")
        return r

    return index_view(x, read, lambda p, v: windows.write(p, index, v), result, strides)


def _has_ellipsis(index) -> bool:
    return index is Ellipsis or (isinstance(index, tuple) and any(e is Ellipsis for e in index))


def _basic_view(x: TracedRArray, ix: "_Index", result: TracedRArray) -> TracedRArray:
    """``x[basic index]`` as a view of ``x``: reads and writes go through the parsed index
    (traced scalars in it are fixed at their values now, as NumPy fixes a view's offset)."""
    from ..traced import wrap
    from ..views import index_strides, index_view, strides_of

    entries = [wrap(e.value, e.shape, e.dtype) if isinstance(e, TracedRArray) else e for e in ix.entries]
    expanded, none_dims, shape = tuple(ix.expanded), bool(ix.none_dims), x.shape

    def read(p):
        return _basic(ops.reshape(p, expanded) if none_dims else p, entries)

    def write(p, v):
        q = ops.reshape(p, expanded) if none_dims else p
        q = updated(q, tuple(entries), v)
        return ops.reshape(q, shape) if none_dims else q

    strides = index_strides(x.shape, strides_of(x), ix.entries, set(ix.none_dims))
    return index_view(x, read, write, result, strides)


def _basic(x: TracedRArray, entries) -> TracedRArray:
    """Ints, slices and dynamic ints: slice/reverse/dynamic_slice, then drop int dims."""
    start, limit, strides, flip, keep = [], [], [], [], []
    dyn = {}
    for d, (e, n) in enumerate(zip(entries, x.shape)):
        if isinstance(e, slice):
            a, b, s = e.indices(n)
            if s > 0:
                start.append(a), limit.append(max(a, b)), strides.append(s)
            else:  # reverse the dim, then a forward slice of the mirrored range
                length = len(range(a, b, s))
                flip.append(d)
                ra = n - 1 - a
                start.append(ra), limit.append(ra + (length - 1) * (-s) + 1 if length else ra), strides.append(-s)
            keep.append(True)
        elif isinstance(e, int):
            start.append(e), limit.append(e + 1), strides.append(1)
            keep.append(False)
        else:  # traced scalar
            dyn[d] = e
            start.append(0), limit.append(n), strides.append(1)
            keep.append(False)
    y = ops.reverse(x, flip)
    y = ops.slice(y, start, limit, strides)
    if dyn:
        starts = _common_index_dtype([_index_scalar(dyn[d], x.shape[d]) if d in dyn else 0 for d in range(x.ndim)])
        sizes = [1 if d in dyn else y.shape[d] for d in range(x.ndim)]
        y = ops.dynamic_slice(y, starts, sizes)
    return ops.reshape(y, tuple(n for n, k in zip(y.shape, keep) if k))


def _index_scalar(i: TracedRArray, n: int) -> TracedRArray:
    """A traced scalar start index (already wrapped by ``_normalize_entry``) as int32/int64."""
    if i.shape != ():
        raise IndexError_(f"a traced index must be a scalar here, got {describe(i)}")
    return ops.convert(i, np.dtype(np.int64) if i.dtype.itemsize == 8 else np.dtype(np.int32))


def _advanced(x: TracedRArray, entries) -> TracedRArray:
    """Integer-array indexing (ints count as 0-d arrays, as in NumPy)."""
    # 1. slices on the other dims first (cheap, shrinks the gather)
    pre = [e if isinstance(e, slice) else slice(None) for e in entries]
    x = _basic(x, pre)
    adv, rest, indices, nb = _index_arrays(x, entries)
    y = ops.gather(
        x, indices,
        offset_dims=tuple(range(nb, nb + len(rest))),
        collapsed_slice_dims=tuple(adv),
        start_index_map=tuple(adv),
        index_vector_dim=nb,
        slice_sizes=tuple(1 if d in adv else x.shape[d] for d in range(x.ndim)),
    )
    perm = _numpy_order(adv, len(rest), nb)
    return ops.transpose(y, perm) if perm else y


def _index_arrays(x: TracedRArray, entries):
    """The advanced dims, the others, and their index arrays broadcast together and stacked
    along a last dim (shape ``B + (len(adv),)``); ``nb = len(B)``."""
    adv = [d for d, e in enumerate(entries) if not isinstance(e, slice)]
    rest = [d for d, e in enumerate(entries) if isinstance(e, slice)]
    arrays = [entries[d] for d in adv]
    bshape = tuple(np.broadcast_shapes(*[np.shape(a) if not isinstance(a, TracedRArray) else a.shape
                                         for a in arrays]))
    idt = np.dtype(np.int64) if any(x.shape[d] > 2**31 - 1 for d in adv) else np.dtype(np.int32)
    cols = []
    for a in arrays:
        t = as_traced(np.asarray(a, dtype=idt)) if not isinstance(a, TracedRArray) else ops.convert(a, idt)
        cols.append(ops.reshape(broadcast_to(t, bshape), bshape + (1,)))
    return adv, rest, ops.concatenate(cols, len(bshape)), len(bshape)


def _numpy_order(adv, n_rest: int, nb: int):
    """Gather results have the index dims first; NumPy keeps adjacent advanced indices in
    place (separated ones go first): the permutation to NumPy's order, or None."""
    if adv == list(range(adv[0], adv[0] + len(adv))) and adv[0] > 0:
        k = adv[0]  # number of rest dims before the advanced block
        return list(range(nb, nb + k)) + list(range(nb)) + list(range(nb + k, nb + n_rest))
    return None


# -- writing ----------------------------------------------------------------------------------
def setitem(x: TracedRArray, index, value) -> None:
    """``x[index] = value``: rebinds the traced handle ``x`` to the updated array."""
    new = updated(x, index, value, combine=None)
    rebind(x, new)


def updated(x: TracedRArray, index, value, combine=None) -> TracedRArray:
    """The array ``x`` with ``x[index]`` replaced (``combine=None``) or combined with
    ``value`` by ``combine(old, new)`` (scatter semantics: duplicates accumulate)."""
    if index is Ellipsis or (isinstance(index, tuple) and len(index) == 1 and index[0] is Ellipsis) or (
        isinstance(index, slice) and index.start is None and index.stop is None and index.step is None
    ):
        v = broadcast_to(as_traced(value, x.dtype), x.shape)
        return v if combine is None else combine(x, v)
    if isinstance(index, TracedRArray) and index.dtype == np.bool_:
        return _masked_update(x, index, value, combine)
    if windows.has_traced_bound(index):
        if combine is not None:
            raise UnsupportedError("an accumulating update (e.g. np.add.at) through a slice with a traced bound",
                                   hint="write x[a:b] = x[a:b] + v instead")
        return windows.write(x, index, value)
    ix = _Index(x.shape, index)
    target_shape = _result_shape(x, index)
    v = as_traced(value, x.dtype)
    try:
        v = broadcast_to(v, target_shape)
    except ShapeError:
        raise ShapeError(
            f"could not broadcast input array from shape {v.shape} into shape {target_shape}"
        ) from None
    if combine is None and not ix.has_array and _is_box(ix.entries):
        return _box_update(x, ix, v)
    if ix.has_array and not ix.none_dims and all(
            e.indices(n) == (0, n, 1) for e, n in zip(ix.entries, x.shape) if isinstance(e, slice)):
        return _advanced_update(x, ix.entries, v, combine)
    # general case: scatter into the flat array at the positions of an iota read with `index`
    idt = np.dtype(np.int64) if x.size > 2**31 - 1 else np.dtype(np.int32)
    positions = getitem(ops.iota(x.shape, idt, 0) if x.ndim == 1 else
                        ops.reshape(ops.iota((x.size,), idt, 0), x.shape), index)
    flat = ops.reshape(x, (x.size,))
    m = positions.size
    out = ops.scatter(
        flat, ops.reshape(positions, (m, 1)), ops.reshape(v, (m,)), combine,
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
        index_vector_dim=1, in_bounds=True,
    )
    return ops.reshape(out, x.shape)


def _advanced_update(x: TracedRArray, entries, v: TracedRArray, combine) -> TracedRArray:
    """Integer-array indices with whole slices elsewhere: one scatter, the mirror of the
    gather that reads the same index."""
    adv, rest, indices, nb = _index_arrays(x, entries)
    perm = _numpy_order(adv, len(rest), nb)
    if perm:  # back to the gather order: index dims first
        v = ops.transpose(v, list(np.argsort(perm)))
    return ops.scatter(
        x, indices, v, combine,
        update_window_dims=tuple(range(nb, nb + len(rest))),
        inserted_window_dims=tuple(adv),
        scatter_dims_to_operand_dims=tuple(adv),
        index_vector_dim=nb, in_bounds=True,  # NumPy indices are in range (normalized above)
    )


def _result_shape(x: TracedRArray, index) -> tuple[int, ...]:
    """Shape of ``x[index]`` without emitting anything that stays (computed by NumPy on a
    zero-strided stand-in of the same shape, with traced indices replaced by zeros)."""
    dummy = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape=x.shape, strides=(0,) * x.ndim)
    return np.shape(dummy[_static_stand_in(index)])


def _static_stand_in(index):
    if isinstance(index, tuple):
        return tuple(_static_stand_in(i) for i in index)
    if isinstance(index, TracedRArray):
        return np.zeros(index.shape, dtype=np.bool_ if index.dtype == np.bool_ else np.int64)
    if isinstance(index, list) and _has_traced(index):
        return _static_stand_in(as_traced(index))
    return index


def _is_box(entries) -> bool:
    return all(
        (isinstance(e, slice) and e.indices(1 << 62)[2] == 1) or isinstance(e, int)
        or (isinstance(e, TracedRArray) and e.shape == ())
        for e in entries
    )


def _box_update(x: TracedRArray, ix: _Index, v: TracedRArray) -> TracedRArray:
    starts, sizes = [], []
    for e, n in zip(ix.entries, ix.expanded):
        if isinstance(e, slice):
            a, b, _ = e.indices(n)
            starts.append(a), sizes.append(max(0, b - a))
        elif isinstance(e, int):
            starts.append(e), sizes.append(1)
        else:
            starts.append(e), sizes.append(1)
    # drop the None unit dims again: they are not dims of x
    keep = [d for d in range(len(ix.entries)) if d not in ix.none_dims]
    starts = [starts[d] for d in keep]
    sizes = [sizes[d] for d in keep]
    if any(s == 0 for s in sizes):
        return x
    upd = ops.reshape(v, sizes)
    dims = range(len(keep))
    st = [_index_scalar(s, x.shape[d]) if isinstance(s, TracedRArray) else None for d, s in zip(dims, starts)]
    if all(s is None for s in st) and tuple(sizes) == x.shape:
        return upd
    st = _common_index_dtype([s if s is not None else starts[d] for d, s in enumerate(st)])
    return ops.dynamic_update_slice(x, upd, st)


def _common_index_dtype(starts) -> list[TracedRArray]:
    """Start indices of dynamic_slice / dynamic_update_slice must share one integer type;
    plain ints become constants of it."""
    wide = any(isinstance(s, TracedRArray) and s.dtype.itemsize == 8 for s in starts)
    idt = np.dtype(np.int64 if wide else np.int32)
    return [ops.convert(s, idt) if isinstance(s, TracedRArray) else ops.constant(np.asarray(s, idt))
            for s in starts]


def _masked_update(x, mask, value, combine):
    from .masked import MaskedSelection, select

    sel = select(x, mask)  # checks the mask's shape; broadcasts it over trailing dimensions
    mask = sel.mask
    if isinstance(value, MaskedSelection):  # y[mask] = f(x[mask]): the selected values, in place
        value = sel._operand(value)
    v = as_traced(value, x.dtype)
    if v.shape not in ((), x.shape):
        raise ShapeError(
            f"x[mask] = v with a traced mask needs a scalar v (or one of x's shape), got {describe(v)}",
            hint=_MASK_HINT,
        )
    v = broadcast_to(v, x.shape)
    new = v if combine is None else combine(x, v)
    return ops.select(mask, new, x)


class AtIndexer:
    """``x.at[idx].set(v) / .add(v) / .multiply(v) / .min(v) / .max(v) / .get()`` (functional)."""

    def __init__(self, x: TracedRArray):
        self._x = x

    def __getitem__(self, index):
        return _AtRef(self._x, index)


class _AtRef:
    def __init__(self, x, index):
        self.x, self.index = x, index

    def get(self):
        return getitem(self.x, self.index)

    def set(self, v):
        return updated(self.x, self.index, v)

    def add(self, v):
        return updated(self.x, self.index, v, _combine(np.add, self.x.dtype))

    def subtract(self, v):
        return self.add(np.negative(as_traced(v, self.x.dtype)))

    def multiply(self, v):
        return updated(self.x, self.index, v, _combine(np.multiply, self.x.dtype))

    def min(self, v):
        return updated(self.x, self.index, v, _combine(np.minimum, self.x.dtype))

    def max(self, v):
        return updated(self.x, self.index, v, _combine(np.maximum, self.x.dtype))


def _combine(ufunc, dtype):
    from .ufuncs import ELEMENTWISE

    body = ELEMENTWISE[ufunc]
    return lambda old, new: body(old, new)


# -- NumPy functions built on indexing --------------------------------------------------------
def _ufunc_at(ufunc):
    def at(a, indices, b=None):
        if not isinstance(a, TracedRArray):
            raise UnsupportedError(f"numpy.{ufunc.__name__}.at needs a traced target array")
        new = updated(a, indices, b, _combine(ufunc, a.dtype))
        rebind(a, new)

    return at


for _uf in (np.add, np.multiply, np.minimum, np.maximum):
    implements(_uf, method="at")(_ufunc_at(_uf))


@implements(np.take)
def take(a, indices, axis=None, out=None, mode=None):
    a, axis = flat_or_axis(as_traced(a), axis)
    if not isinstance(indices, TracedRArray) and not _is_int_scalar(indices):
        indices = np.asarray(indices)
    if mode in ("wrap", "clip"):  # numpy (or traced numpy) arithmetic on the index
        n = a.shape[axis]
        indices = np.mod(indices, n) if mode == "wrap" else np.clip(indices, 0, n - 1)
    return getitem(a, (slice(None),) * axis + (indices,))


@implements(np.take_along_axis)
def take_along_axis(arr, indices, axis=-1):
    arr, axis = flat_or_axis(as_traced(arr), axis)
    ishape = indices.shape if hasattr(indices, "shape") else np.shape(indices)
    if len(ishape) != arr.ndim:
        raise ShapeError(f"take_along_axis: indices {tuple(ishape)} and arr {describe(arr)} differ in ndim")
    return getitem(arr, _along_axis_index(arr, indices, axis))


def _along_axis_index(arr, indices, axis: int) -> tuple:
    """The NumPy index that picks ``indices`` along ``axis`` and every position elsewhere
    (``take_along_axis`` / ``put_along_axis``): open-mesh aranges in the other dims."""
    full = []
    for d in range(arr.ndim):
        if d == axis:
            full.append(indices if isinstance(indices, TracedRArray) else np.asarray(indices))
        else:
            shp = [1] * arr.ndim
            shp[d] = arr.shape[d]
            full.append(np.arange(arr.shape[d]).reshape(shp))
    return tuple(full)


@implements(np.put_along_axis)
def put_along_axis(arr, indices, values, axis):
    if not isinstance(arr, TracedRArray):
        raise UnsupportedError("numpy.put_along_axis needs a traced target array")
    axis = normalize_axis(axis, arr.ndim)
    setitem(arr, _along_axis_index(arr, indices, axis), values)


def _data_dependent(name):
    def impl(*args, **kwargs):
        raise IndexError_(
            f"numpy.{name} returns an array whose shape depends on the data, which a trace cannot hold",
            hint="use np.where(cond, a, b), a mask multiply, or a fixed-size formulation",
        )

    return impl


for _f in (np.extract, np.compress):  # nonzero/argwhere/flatnonzero/unique: ordering.py (size=)
    implements(_f)(_data_dependent(_f.__name__))


@implements(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, TracedRArray):
        raise UnsupportedError(
            "cannot copy a traced value into a NumPy array (e.g. np.full(shape, traced))",
            hint="create traced arrays with np.full_like / np.zeros_like, or reactant.numpy.full",
        )
    if where is True:
        setitem(dst, Ellipsis, src)
    else:
        w = as_traced(where, np.bool_)
        v = broadcast_to(as_traced(src, dst.dtype), dst.shape)
        rebind(dst, ops.select(broadcast_to(w, dst.shape), v, dst))


def _cyclic(values, n: int, dtype) -> TracedRArray:
    """``values`` flattened and repeated to ``n`` elements (NumPy's rule for put/putmask/place)."""
    v = np.ravel(as_traced(values, dtype))
    if v.shape[0] == 0:
        raise ShapeError("cannot place values from an empty array")
    if v.shape[0] == n:
        return v
    return np.take(v, np.arange(n) % v.shape[0])


def _target(a, what: str) -> TracedRArray:
    if not isinstance(a, TracedRArray):
        raise UnsupportedError(f"numpy.{what} inside a trace updates a traced array in place, got {type(a).__name__}",
                               hint="create the array from a traced one (np.zeros_like(x), ...)")
    return a


@implements(np.putmask)
def putmask(a, mask, values):
    """Where ``mask`` holds, ``a`` takes ``values`` at the same flat position (repeated)."""
    a = _target(a, "putmask")
    v = np.reshape(_cyclic(values, int(np.prod(a.shape)), a.dtype), a.shape)
    rebind(a, ops.select(broadcast_to(as_traced(mask, np.bool_), a.shape), v, a))


@implements(np.place)
def place(arr, mask, vals):
    """The k-th position where ``mask`` holds takes ``vals[k]`` (repeated)."""
    arr = _target(arr, "place")
    m = np.ravel(broadcast_to(as_traced(mask, np.bool_), arr.shape))
    k = np.cumsum(m.astype(np.int64)) - 1  # rank of each selected position
    v = np.ravel(as_traced(vals, arr.dtype))
    if v.shape[0] == 0:
        raise ShapeError("numpy.place needs at least one value")
    picked = np.take(v, np.maximum(k, 0) % v.shape[0])
    rebind(arr, np.reshape(ops.select(m, picked, np.ravel(arr)), arr.shape))


@implements(np.put)
def put(a, ind, v, mode="raise"):
    """``a.flat[ind] = v`` (values repeated to the indices; ``mode`` 'wrap'/'clip' as NumPy,
    'raise': out-of-range traced indices are undefined, as for x[idx])."""
    a = _target(a, "put")
    n = int(np.prod(a.shape))
    idx = np.ravel(as_traced(ind, np.int64))
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    flat = np.ravel(a)
    flat[idx] = _cyclic(v, idx.shape[0], a.dtype)
    rebind(a, np.reshape(flat, a.shape))


# -- where / select ---------------------------------------------------------------------------
@implements(np.where)
def where(condition, x=None, y=None, /):
    if x is None and y is None:
        raise IndexError_("numpy.where(condition) with one argument returns a data-dependent shape",
                          hint="use np.where(condition, x, y)")
    if x is None or y is None:
        raise ShapeError("either both or neither of x and y should be given")
    (tx, ty), _ = _promoted(x, y)
    c = as_traced(condition)
    if c.dtype != np.bool_:
        c = np.not_equal(c, 0)
    c, tx, ty = broadcast_all(c, tx, ty)
    return ops.select(c, tx, ty)



@implements(np.select)
def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ShapeError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise OptionError("select with an empty condition list is not possible")
    for i, c in enumerate(condlist):
        if array_dtype(c) != np.bool_:
            raise DTypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    # one dtype for all choices and the default, as NumPy's (Python scalars promote weakly)
    dt = result_type(*[dtype_for_promotion(v) for v in list(choicelist) + [default]])
    out = as_traced(default, dt)
    for c, v in reversed(list(zip(condlist, choicelist))):
        out = where(c, as_traced(v, dt), out)
    return out
