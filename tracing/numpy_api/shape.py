"""Shape manipulation: reshape, transpose, axes moves, joins and splits, pad, flip, roll,
tile/repeat, triangles and diagonals."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import result_type
from ..errors import ShapeError, UnsupportedError, describe
from ..traced import TracedRArray
from .. import views
from ._registry import implements
from .convert import (array_dtype, as_traced, axis_sequence, broadcast_shapes, broadcast_to, flat_or_axis,
                      normalize_axes, normalize_axis)


def _resolve_shape(shape, size: int) -> tuple[int, ...]:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ShapeError("can only specify one unknown dimension (-1)")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ShapeError(f"cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise ShapeError(f"cannot reshape array of size {size} into shape {shape}")
    return shape


@implements(np.reshape)
def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    x = as_traced(a)
    shape = newshape if shape is None else shape
    if order not in ("C", "A"):
        raise UnsupportedError(f"numpy.reshape(order={order!r}) is not supported inside a trace")
    new_shape = _resolve_shape(shape, x.size)
    if copy:
        return ops.reshape(x, new_shape) if new_shape != x.shape else views.copy_of(x)
    if copy is False and views.nocopy_reshape_strides(x.shape, views.strides_of(x), new_shape) is None:
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    return views.reshape_view(x, new_shape)


@implements(np.ravel)
def ravel(a, order="C"):
    x = as_traced(a)
    if order == "F":
        x = ops.transpose(x, list(range(x.ndim))[::-1])
        return ops.reshape(x, (x.size,))
    return views.ravel_view(x)


@implements(np.transpose, np.permute_dims)
def transpose(a, axes=None):
    x = as_traced(a)
    if axes is None:
        perm = list(range(x.ndim))[::-1]
    else:
        perm = [normalize_axis(d, x.ndim) for d in axes]
        if sorted(perm) != list(range(x.ndim)):
            raise ShapeError(f"axes {tuple(axes)} don't match array of dimension {x.ndim}")
    return views.transpose_view(x, perm)


@implements(np.matrix_transpose)
def matrix_transpose(x, /):
    return swapaxes(x, -1, -2)


@implements(np.swapaxes)
def swapaxes(a, axis1, axis2):
    x = as_traced(a)
    i, j = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    perm = list(range(x.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return views.transpose_view(x, perm)


@implements(np.moveaxis)
def moveaxis(a, source, destination):
    x = as_traced(a)
    src, dst = axis_sequence(source, x.ndim), axis_sequence(destination, x.ndim)
    if len(src) != len(dst):
        raise ShapeError("moveaxis: `source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return views.transpose_view(x, order)


@implements(np.rollaxis)
def rollaxis(a, axis, start=0):
    x = as_traced(a)
    axis = normalize_axis(axis, x.ndim)
    start = start + x.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start)


@implements(np.expand_dims)
def expand_dims(a, axis):
    x = as_traced(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = x.ndim + len(axes)
    axes = normalize_axes(axes, nd)
    it = iter(x.shape)
    return views.reshape_view(x, tuple(1 if d in axes else next(it) for d in range(nd)), what="expand_dims")


@implements(np.squeeze)
def squeeze(a, axis=None):
    x = as_traced(a)
    if axis is None:
        axes = [d for d, n in enumerate(x.shape) if n == 1]
    else:
        axes = normalize_axes(axis, x.ndim)
        for d in axes:
            if x.shape[d] != 1:
                raise ShapeError(f"cannot select an axis to squeeze out which has size not equal to one (axis {d} of {describe(x)})")
    return views.reshape_view(x, tuple(n for d, n in enumerate(x.shape) if d not in axes), what="squeeze")


@implements(np.broadcast_to)
def broadcast_to_(array, shape, subok=False):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return _broadcast_view(as_traced(array), shape)


@implements(np.broadcast_arrays)
def broadcast_arrays(*args, subok=False):
    xs = [as_traced(a) for a in args]
    shape = broadcast_shapes(*[x.shape for x in xs])
    return tuple(_broadcast_view(x, shape) for x in xs)


def _broadcast_view(x: TracedRArray, shape) -> TracedRArray:
    """NumPy's broadcast results are read-only views of their input."""
    shape = tuple(int(n) for n in shape)
    lead = len(shape) - x.ndim
    xs = views.strides_of(x)
    strides = [0] * lead + [0 if n == 1 and m != 1 else s for n, m, s in zip(x.shape, shape[lead:], xs)]
    return views.readonly_view(x, lambda p: broadcast_to(p, shape), "broadcasting", strides)


def _make_atleast(n):
    def atleast(*arys):
        out = []
        for a in arys:
            x = as_traced(a)
            if x.ndim < n:
                if n == 3 and x.ndim == 2:
                    x = views.reshape_view(x, x.shape + (1,))
                elif n == 3 and x.ndim == 1:
                    x = views.reshape_view(x, (1,) + x.shape + (1,))
                else:
                    x = views.reshape_view(x, (1,) * (n - x.ndim) + x.shape)
            out.append(x)
        return out[0] if len(out) == 1 else tuple(out)

    return atleast


implements(np.atleast_1d)(_make_atleast(1))
implements(np.atleast_2d)(_make_atleast(2))
implements(np.atleast_3d)(_make_atleast(3))


# -- joining ----------------------------------------------------------------------------------
def _common(arrays, dtype=None) -> list[TracedRArray]:
    arrays = list(arrays)
    if not arrays:
        raise ShapeError("need at least one array to concatenate")
    # each item becomes an array first, as NumPy's asanyarray does: a Python float is float64 here
    dt = np.dtype(dtype) if dtype is not None else result_type(*[array_dtype(a) for a in arrays])
    return [as_traced(a, dt) for a in arrays]


@implements(np.concatenate, np.concat)
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    xs = _common(arrays, dtype)
    if axis is None:
        xs = [ops.reshape(x, (x.size,)) for x in xs]
        axis = 0
    if any(x.ndim == 0 for x in xs):
        raise ShapeError("zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(axis, xs[0].ndim)
    for x in xs:
        if x.ndim != xs[0].ndim:
            raise ShapeError(
                "all the input arrays must have same number of dimensions: " + ", ".join(describe(y) for y in xs)
            )
    xs = [x for x in xs if x.shape[ax] != 0] or xs[:1]
    return ops.concatenate(xs, ax)


@implements(np.stack)
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    xs = _common(arrays, dtype)
    shape = xs[0].shape
    for x in xs:
        if x.shape != shape:
            raise ShapeError("all input arrays must have the same shape: " + ", ".join(describe(y) for y in xs))
    ax = normalize_axis(axis, len(shape) + 1)
    parts = [ops.reshape(x, shape[:ax] + (1,) + shape[ax:]) for x in xs]
    return ops.concatenate(parts, ax)


@implements(np.vstack)
def vstack(tup, *, dtype=None, casting="same_kind"):
    return concatenate([_make_atleast(2)(a) for a in tup], 0, dtype=dtype)


@implements(np.hstack)
def hstack(tup, *, dtype=None, casting="same_kind"):
    xs = [_make_atleast(1)(a) for a in tup]
    return concatenate(xs, 0 if xs[0].ndim == 1 else 1, dtype=dtype)


@implements(np.dstack)
def dstack(tup):
    return concatenate([_make_atleast(3)(a) for a in tup], 2)


@implements(np.column_stack)
def column_stack(tup):
    xs = []
    for a in tup:
        x = as_traced(a)
        xs.append(ops.reshape(x, (x.size, 1)) if x.ndim < 2 else x)
    return concatenate(xs, 1)


@implements(np.append)
def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


@implements(np.insert)
def insert(arr, obj, values, axis=None):
    """NumPy's ``insert`` with static positions: NumPy itself inserts index codes (the array's
    flat positions, and negative codes for the values) into an index array of the same shapes,
    so its broadcasting, casting and errors apply; the result gathers from the array and the
    values by those codes."""
    if isinstance(obj, TracedRArray) or (isinstance(obj, (list, tuple)) and any(isinstance(o, TracedRArray)
                                                                                 for o in obj)):
        raise UnsupportedError("np.insert at traced positions: the result's layout must be static",
                               hint="pass the positions as Python ints or a NumPy array")
    x = as_traced(arr)
    v = as_traced(values, x.dtype)  # (NumPy casts the values to the array's dtype)
    codes = np.insert(np.arange(x.size).reshape(x.shape), obj, -1 - np.arange(v.size).reshape(v.shape), axis=axis)
    flat = np.where(codes >= 0, codes, x.size - 1 - codes).reshape(-1)
    src = concatenate([ravel(x), ravel(v)], 0)
    return ops.reshape(src[flat], codes.shape)


# -- splitting --------------------------------------------------------------------------------
def _split(x: TracedRArray, indices_or_sections, axis: int, strict: bool):
    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ShapeError("number sections must be larger than 0")
        if strict and n % k:
            raise ShapeError(f"array split does not result in an equal division: {n} into {k}")
        q, r = divmod(n, k)
        bounds = np.cumsum([0] + [q + 1] * r + [q] * (k - r)).tolist()
    else:
        bounds = [0] + [min(max(int(i) if i >= 0 else int(i) + n, 0), n) for i in indices_or_sections] + [n]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):  # views of x, as NumPy's are
        out.append(x[(slice(None),) * ax + (slice(a, max(a, b)),)])
    return out


@implements(np.split)
def split(ary, indices_or_sections, axis=0):
    return _split(as_traced(ary), indices_or_sections, axis, True)


@implements(np.array_split)
def array_split(ary, indices_or_sections, axis=0):
    return _split(as_traced(ary), indices_or_sections, axis, False)


@implements(np.hsplit)
def hsplit(ary, indices_or_sections):
    x = as_traced(ary)
    return _split(x, indices_or_sections, 1 if x.ndim > 1 else 0, True)


@implements(np.vsplit)
def vsplit(ary, indices_or_sections):
    return _split(as_traced(ary), indices_or_sections, 0, True)


# -- pad / flip / roll ------------------------------------------------------------------------
def _pad_widths(pad_width, ndim: int) -> list[tuple[int, int]]:
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    if (pw < 0).any():
        raise ShapeError("index can't contain negative values (pad_width)")
    return [(int(a), int(b)) for a, b in pw]


@implements(np.pad)
def pad(array, pad_width, mode="constant", **kwargs):
    x = as_traced(array)
    pw = _pad_widths(pad_width, x.ndim)
    if mode == "constant":
        cv = kwargs.get("constant_values", 0)
        cvs = np.broadcast_to(np.asarray(cv), (x.ndim, 2)) if np.ndim(cv) else None
        if cvs is None or (cvs == cvs.flat[0]).all():
            v = ops.constant(np.asarray(cv if cvs is None else cvs.flat[0]).astype(x.dtype))
            return ops.pad(x, v, [a for a, _ in pw], [b for _, b in pw])
        # per-side values: one axis at a time
        for d, (a, b) in enumerate(pw):
            for side, w in ((0, a), (1, b)):
                if w:
                    shape = list(x.shape)
                    shape[d] = w
                    block = ops.full(tuple(shape), cvs[d][side], x.dtype)
                    x = ops.concatenate([block, x] if side == 0 else [x, block], d)
        return x
    if mode in ("edge", "reflect", "symmetric", "wrap"):
        for d, (a, b) in enumerate(pw):
            x = _pad_axis(x, d, a, b, mode)
        return x
    raise UnsupportedError(f"numpy.pad(mode={mode!r}) is not supported inside a trace")


def _take_range(x, d, idx: np.ndarray):
    """x along dim d at static positions idx, as slices where contiguous, else a gather."""
    from .indexing import getitem

    return getitem(x, (slice(None),) * d + (idx,))


def _pad_axis(x, d, a, b, mode):
    n = x.shape[d]
    if a == 0 and b == 0:
        return x
    pos = np.arange(-a, n + b)
    if mode == "edge":
        idx = np.clip(pos, 0, n - 1)
    elif mode == "wrap":
        idx = np.mod(pos, n)
    else:
        period = 2 * n - 2 if mode == "reflect" else 2 * n
        if period == 0:
            idx = np.zeros_like(pos)
        else:
            m = np.mod(pos, period)
            if mode == "reflect":
                idx = np.where(m < n, m, period - m)
            else:
                idx = np.where(m < n, m, period - 1 - m)
    return _take_range(x, d, idx)


@implements(np.flip)
def flip(m, axis=None):
    x = as_traced(m)
    return views.flip_view(x, normalize_axes(axis, x.ndim))


@implements(np.fliplr)
def fliplr(m):
    return views.flip_view(as_traced(m), [1])


@implements(np.flipud)
def flipud(m):
    return views.flip_view(as_traced(m), [0])


@implements(np.roll)
def roll(a, shift, axis=None):
    x = as_traced(a)
    if axis is None:
        return ops.reshape(roll(ops.reshape(x, (x.size,)), shift, 0), x.shape)
    shifts = np.broadcast_to(np.asarray(shift), np.broadcast_shapes(np.shape(shift), np.shape(axis)))
    axes = np.broadcast_to(np.asarray(axis), shifts.shape)
    total: dict[int, int] = {}
    for s, ax in zip(shifts.reshape(-1), axes.reshape(-1)):
        d = normalize_axis(int(ax), x.ndim)
        total[d] = total.get(d, 0) + int(s)
    for d, s in total.items():
        n = x.shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            lo, hi = [0] * x.ndim, list(x.shape)
            hi[d] = n - s
            head = ops.slice(x, lo, hi)
            lo[d], hi[d] = n - s, n
            tail = ops.slice(x, lo, hi)
            x = ops.concatenate([tail, head], d)
    return x


@implements(np.rot90)
def rot90(m, k=1, axes=(0, 1)):
    x = as_traced(m)
    a0, a1 = normalize_axis(axes[0], x.ndim), normalize_axis(axes[1], x.ndim)
    k %= 4
    if k == 0:
        return views.flip_view(x, [])
    if k == 2:
        return views.flip_view(x, [a0, a1])
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return views.transpose_view(views.flip_view(x, [a1]), perm)
    return views.flip_view(views.transpose_view(x, perm), [a1])


@implements(np.repeat)
def repeat(a, repeats, axis=None):
    x, d = flat_or_axis(as_traced(a), axis)
    if isinstance(repeats, TracedRArray):
        raise ShapeError("numpy.repeat with traced repeats has a data-dependent shape")
    reps = np.broadcast_to(np.asarray(repeats, dtype=np.int64), (x.shape[d],))
    if (reps == reps[0]).all() if reps.size else True:
        r = int(reps[0]) if reps.size else 0
        shape = x.shape[:d + 1] + (r,) + x.shape[d + 1:]
        y = ops.broadcast_in_dim(x, shape, [k if k <= d else k + 1 for k in range(x.ndim)])
        return ops.reshape(y, x.shape[:d] + (x.shape[d] * r,) + x.shape[d + 1:])
    return _take_range(x, d, np.repeat(np.arange(x.shape[d]), reps))


@implements(np.tile)
def tile(A, reps):
    x = as_traced(A)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    nd = max(x.ndim, len(reps))
    x = ops.reshape(x, (1,) * (nd - x.ndim) + x.shape)
    reps = (1,) * (nd - len(reps)) + reps
    shape = sum(((r, n) for r, n in zip(reps, x.shape)), ())
    y = ops.broadcast_in_dim(x, shape, [2 * k + 1 for k in range(nd)])
    return ops.reshape(y, tuple(r * n for r, n in zip(reps, x.shape)))


# -- triangles and diagonals ------------------------------------------------------------------
def _tri_mask(n, m, k, lower: bool):
    r = ops.iota((n, m), np.int64, 0)
    c = ops.iota((n, m), np.int64, 1)
    diff = ops.subtract(c, r)  # c - r <= k  is lower
    kk = ops.full((n, m), k, np.int64)
    return ops.compare(diff, kk, "LE" if lower else "GE")


def _tri(m, k, lower):
    x = as_traced(m)
    if x.ndim < 2:
        raise ShapeError(f"{'tril' if lower else 'triu'} needs at least 2 dims, got {describe(x)}")
    n, mm = x.shape[-2:]
    mask = _tri_mask(n, mm, k, lower)
    mask = ops.broadcast_in_dim(mask, x.shape, [x.ndim - 2, x.ndim - 1])
    return ops.select(mask, x, ops.full(x.shape, 0, x.dtype))


@implements(np.tril)
def tril(m, k=0):
    return _tri(m, int(k), True)


@implements(np.triu)
def triu(m, k=0):
    return _tri(m, int(k), False)


@implements(np.diag)
def diag(v, k=0):
    x = as_traced(v)
    if x.ndim == 2:
        return np.diagonal(x, k)
    if x.ndim != 1:
        raise ShapeError(f"diag: input must be 1-d or 2-d, got {describe(x)}")
    return _diag_matrix(x, int(k))


def _diag_matrix(x: TracedRArray, k: int) -> TracedRArray:
    """The (n+|k|)^2 matrix with x on diagonal k: iota compare + select (no scatter)."""
    n = x.shape[0] + abs(k)
    r = ops.iota((n, n), np.int64, 0)
    c = ops.iota((n, n), np.int64, 1)
    on = ops.compare(ops.subtract(c, r), ops.full((n, n), k, np.int64), "EQ")
    padded = ops.pad(x, ops.constant(np.zeros((), x.dtype)), [0], [abs(k)])
    # k >= 0: row r holds x[r] (at column r + k); k < 0: column c holds x[c]
    src = ops.broadcast_in_dim(padded, (n, n), [0 if k >= 0 else 1])
    return ops.select(on, src, ops.full((n, n), 0, x.dtype))


@implements(np.diagflat)
def diagflat(v, k=0):
    x = as_traced(v)
    return diag(ops.reshape(x, (x.size,)), k)


# -- basic operations: shape / ndim / size ------------------------------------------------------
@implements(np.shape)
def shape(a):
    return as_traced(a).shape



@implements(np.ndim)
def ndim(a):
    return as_traced(a).ndim



@implements(np.size)
def size(a, axis=None):
    x = as_traced(a)
    return x.size if axis is None else x.shape[normalize_axis(axis, x.ndim)]
