"""Sorting, searching and counting: ``sort``/``argsort``, ``partition``/``argpartition``,
``lexsort``, ``searchsorted``, ``count_nonzero``, fixed-size ``unique``/``nonzero``/``argwhere``/
``flatnonzero`` (JAX's ``size=`` / ``fill_value=`` keywords); also ufunc ``outer``/``reduceat``/
``at`` and ``piecewise``.

Results whose length depends on the data need a static ``size=``: values past the real count
are ``fill_value``, and values beyond ``size`` are dropped."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .. import ops
from ..dtypes import is_complex, is_float
from ..errors import ArgumentError, IndexError_, ShapeError, UnsupportedError, describe
from ..traced import TracedRArray
from ._registry import FUNCTIONS, UFUNC_METHODS, implements
from .convert import _promoted, as_traced, flat_or_axis, normalize_axis
from .indexing import getitem, setitem
from . import reductions, ufuncs  # noqa: F401  (outer/reduceat are built from their registrations)


# -- ufunc.outer ------------------------------------------------------------------------------
def _outer(ufunc: np.ufunc) -> Callable:
    def outer(A, B, /, **kwargs):
        """``ufunc(A[..., None, ...], B)``: A's dims first, then B's."""
        # NumPy's outer turns Python scalars into arrays: they promote as int64/float64
        A = A if isinstance(A, TracedRArray) else np.asarray(A)
        B = B if isinstance(B, TracedRArray) else np.asarray(B)
        if np.ndim(A) > 0 and np.ndim(B) > 0:
            A = np.reshape(A, tuple(np.shape(A)) + (1,) * np.ndim(B))
        return ufunc(A, B, **kwargs)

    return outer


def _register_outer() -> None:
    # every binary ufunc with a traced __call__ gets an outer
    for f in list(FUNCTIONS):
        if isinstance(f, np.ufunc) and f.nin == 2 and (f, "outer") not in UFUNC_METHODS:
            implements(f, method="outer")(_outer(f))


_register_outer()


# -- ufunc.reduceat ---------------------------------------------------------------------------
def _static_indices(indices, name: str, n: int) -> list[int]:
    if isinstance(indices, TracedRArray):
        raise UnsupportedError(f"numpy.{name}.reduceat needs static indices, got traced {describe(indices)}")
    idx = np.asarray(indices)
    if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
        raise IndexError_(f"{name}.reduceat indices must be a 1-d sequence of integers, got {idx!r:.60}")
    out = [int(i) for i in idx]
    for i in out:
        if not 0 <= i < n:
            raise IndexError_(f"index {i} out-of-bounds in {name}.reduceat [0, {n})")
    return out


def _reduceat(ufunc: np.ufunc) -> Callable:
    reduce = UFUNC_METHODS[(ufunc, "reduce")]

    def reduceat(array, indices, axis=0, dtype=None, out=None):
        """Reduce ``array[i_k:i_{k+1}]`` for each k; ``array[i_k]`` alone when i_{k+1} <= i_k."""
        x = as_traced(array)
        ax = normalize_axis(axis, x.ndim)
        n = x.shape[ax]
        idx = _static_indices(indices, ufunc.__name__, n)
        ends = idx[1:] + [n]
        parts = []
        for lo, hi in zip(idx, ends):
            hi = hi if hi > lo else lo + 1
            seg = getitem(x, (slice(None),) * ax + (slice(lo, hi),))
            parts.append(reduce(seg, axis=ax, dtype=dtype, keepdims=True))
        if not parts:  # the result dtype of an empty reduction, zero length along axis
            empty = reduce(getitem(x, (slice(None),) * ax + (slice(0, 1),)), axis=ax, dtype=dtype, keepdims=True)
            return getitem(empty, (slice(None),) * ax + (slice(0, 0),))
        return np.concatenate(parts, axis=ax)

    return reduceat


for (_uf, _m) in list(UFUNC_METHODS):
    if _m == "reduce":
        implements(_uf, method="reduceat")(_reduceat(_uf))


# -- ufunc.at for the remaining element-combining ufuncs --------------------------------------
def _register_at() -> None:
    """``ufunc.at`` as a scatter whose combiner is the ufunc (add/multiply/min/max already
    exist in indexing.py); duplicate indices apply the ufunc once per occurrence."""
    from .indexing import _ufunc_at

    for f in (np.subtract, np.true_divide, np.fmax, np.fmin, np.bitwise_and, np.bitwise_or, np.bitwise_xor):
        if (f, "at") not in UFUNC_METHODS:
            implements(f, method="at")(_ufunc_at(f))


_register_at()


# -- partition / argpartition -----------------------------------------------------------------
def _check_kth(kth, n: int) -> None:
    if isinstance(kth, TracedRArray):
        raise UnsupportedError(f"partition needs a static kth, got traced {describe(kth)}")
    for k in np.atleast_1d(np.asarray(kth)).reshape(-1):
        if np.asarray(k).dtype.kind not in "iu":
            raise ArgumentError(f"partition index must be integer, got {k!r}")
        if not -n <= int(k) < n:
            raise ShapeError(f"kth(={int(k)}) out of bounds ({n})")


@implements(np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A full sort satisfies the partition contract for every kth at once."""
    x, ax = flat_or_axis(as_traced(a), axis)
    _check_kth(kth, x.shape[ax])
    return np.sort(x, axis=ax)


@implements(np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    x, ax = flat_or_axis(as_traced(a), axis)
    _check_kth(kth, x.shape[ax])
    return np.argsort(x, axis=ax)


# -- lexsort ----------------------------------------------------------------------------------
def _lex_keys(keys) -> list[TracedRArray]:
    if isinstance(keys, (TracedRArray, np.ndarray)):
        t = as_traced(keys)
        if t.ndim == 0 or t.shape[0] == 0:
            raise ArgumentError("need sequence of keys with len > 0 in lexsort")
        return [getitem(t, i) for i in range(t.shape[0])]
    ks = [as_traced(k) for k in keys]
    if not ks:
        raise ArgumentError("need sequence of keys with len > 0 in lexsort")
    shape = ks[0].shape
    for k in ks[1:]:
        if k.shape != shape:
            raise ShapeError(f"all keys need to be the same shape in lexsort, got {describe(ks[0])} and {describe(k)}")
    return ks


def _same(a: TracedRArray, b: TracedRArray) -> TracedRArray:
    """Equal in sort order: NaNs are equal to each other."""
    eq = ops.compare(a, b, "EQ")
    if is_float(a.dtype):
        eq = ops.or_(eq, ops.and_(ops.compare(a, a, "NE"), ops.compare(b, b, "NE")))
    return eq


@implements(np.lexsort)
def lexsort(keys, axis=-1):
    """Indices sorting by the last key, ties broken by the earlier keys (stable)."""
    ks = _lex_keys(keys)
    if any(is_complex(k.dtype) for k in ks):
        raise UnsupportedError("lexsort of complex keys is not supported inside a trace")
    if ks[0].ndim == 0:
        return ops.constant(np.asarray(0, np.int64))
    ax = normalize_axis(axis, ks[0].ndim)
    primary_first = ks[::-1]
    idx = ops.iota(ks[0].shape, np.int64, ax)

    def before(*ab):
        pairs = [(ab[2 * i], ab[2 * i + 1]) for i in range(len(primary_first))]
        result = None
        for a, b in reversed(pairs):  # innermost = least significant key
            lt = _less_nan_last(a, b)
            result = lt if result is None else ops.or_(lt, ops.and_(_same(a, b), result))
        return result

    out = ops.sort(primary_first + [idx], ax, lambda *ab: before(*ab[:-2]))
    return out[-1]


# -- fixed-size data-dependent results ------------------------------------------------------------
def _needs_size(name: str) -> None:
    raise IndexError_(
        f"numpy.{name} returns an array whose shape depends on the data, which a trace cannot hold",
        hint=f"pass size=n (and fill_value=...) for a fixed-size result, as with jax.numpy: "
        f"np.{name}(x, size=n) inside a compiled function; or use np.where / a mask",
    )


def _static_size(size, name: str) -> int:
    if isinstance(size, TracedRArray):
        raise UnsupportedError(f"numpy.{name}(size=...) must be a static integer, got traced {describe(size)}")
    try:
        s = int(size)
    except (TypeError, ValueError):
        raise ArgumentError(f"numpy.{name}(size=...) must be an integer, got {size!r}") from None
    if s < 0:
        raise ArgumentError(f"numpy.{name}(size=...) must be non-negative, got {s}")
    return s


def _compact(values: TracedRArray, keep: TracedRArray, size: int, fill) -> tuple[TracedRArray, TracedRArray]:
    """The kept entries of 1-d ``values`` in order, in ``size`` slots padded with ``fill``;
    also the number kept. One scatter into size+1 slots: the extra slot absorbs the rest."""
    keep_i = ops.convert(keep, np.int64)
    pos = ops.subtract(np.cumsum(keep_i), ops.full(keep.shape, 1, np.int64))
    sink = ops.full(keep.shape, size, np.int64)
    target = ops.select(ops.and_(keep, ops.compare(pos, sink, "LT")), pos, sink)
    out = ops.full((size + 1,), 0, values.dtype)
    setitem(out, target, values)
    out = getitem(out, slice(0, size))
    count = np.sum(keep_i)
    valid = np.less(ops.iota((size,), np.int64, 0), count)
    return np.where(valid, out, as_traced(fill, values.dtype)), count


def _flat_nonzero(x: TracedRArray, size: int, fill) -> TracedRArray:
    flat = ops.reshape(x, (x.size,))
    keep = np.not_equal(flat, 0) if flat.dtype != np.bool_ else flat
    return _compact(ops.iota((x.size,), np.int64, 0), keep, size, fill)[0]


def _unravel(flat: TracedRArray, shape: tuple[int, ...]) -> list[TracedRArray]:
    """Row-major coordinates of flat indices (static shape: plain integer arithmetic)."""
    coords = []
    rest = flat
    for d in range(len(shape) - 1, -1, -1):
        n = max(shape[d], 1)
        coords.append(np.remainder(rest, n))
        rest = np.floor_divide(rest, n)
    return coords[::-1]


def _per_dim_fill(fill_value, ndim: int) -> list:
    if fill_value is None:
        return [0] * ndim
    if isinstance(fill_value, (tuple, list)):
        if len(fill_value) != ndim:
            raise ShapeError(f"fill_value has {len(fill_value)} entries for a {ndim}-d array")
        return list(fill_value)
    return [fill_value] * ndim


@implements(np.nonzero)
def nonzero(a, *, size=None, fill_value=None):
    """JAX semantics: ``size=`` fixes the length; missing entries are ``fill_value`` (0)."""
    if size is None:
        _needs_size("nonzero")
    x = as_traced(a)
    if x.ndim == 0:
        raise ShapeError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead.")
    s = _static_size(size, "nonzero")
    fills = _per_dim_fill(fill_value, x.ndim)
    flat = _flat_nonzero(x, s, 0)
    count = np.count_nonzero(x)
    valid = np.less(ops.iota((s,), np.int64, 0), count)
    return tuple(np.where(valid, c, as_traced(f, np.int64)) for c, f in zip(_unravel(flat, x.shape), fills))


@implements(np.flatnonzero)
def flatnonzero(a, *, size=None, fill_value=None):
    if size is None:
        _needs_size("flatnonzero")
    x = as_traced(a)
    return _flat_nonzero(x, _static_size(size, "flatnonzero"), 0 if fill_value is None else fill_value)


@implements(np.argwhere)
def argwhere(a, *, size=None, fill_value=None):
    """``(size, ndim)`` coordinates of the non-zero entries."""
    if size is None:
        _needs_size("argwhere")
    x = as_traced(a)
    if x.ndim == 0:  # NumPy: rows for a true scalar, no columns
        return getitem(argwhere(ops.reshape(x, (1,)), size=size, fill_value=fill_value), (slice(None), slice(0, 0)))
    return np.stack(nonzero(x, size=size, fill_value=fill_value), axis=1)


@implements(np.unique)
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True, size=None, fill_value=None):
    """Sorted unique values of the flattened array in ``size`` slots (JAX semantics): padded
    with ``fill_value`` (default: the smallest value); indices padded with 0, counts with 0."""
    if size is None:
        _needs_size("unique")
    if axis is not None:
        raise UnsupportedError("numpy.unique(axis=...) is not supported inside a trace")
    x = as_traced(ar)
    s = _static_size(size, "unique")
    flat = ops.reshape(x, (x.size,))
    n = flat.shape[0]
    if n == 0:  # nothing to find: every slot is padding
        return _empty_unique(x, s, fill_value, return_index, return_inverse, return_counts)
    perm = np.argsort(flat, kind="stable")
    vals = getitem(flat, perm)
    prev = getitem(vals, slice(0, n - 1))
    nxt = getitem(vals, slice(1, n))
    differ = ops.not_(_same(nxt, prev)) if equal_nan else ops.compare(nxt, prev, "NE")
    is_new = ops.concatenate([ops.full((1,), True, np.bool_), differ], 0)
    uniq, count = _compact(vals, is_new, s, getitem(vals, 0) if fill_value is None else fill_value)
    out = [uniq]
    if return_index:
        out.append(_compact(perm, is_new, s, 0)[0])
    if return_inverse:
        group = ops.subtract(np.cumsum(ops.convert(is_new, np.int64)), ops.full((n,), 1, np.int64))
        inv = ops.full((n,), 0, np.int64)
        setitem(inv, perm, group)
        out.append(ops.reshape(inv, x.shape))
    if return_counts:
        # group starts in size+1 slots, the missing ones n: each group ends where the next starts
        starts = _compact(ops.iota((n,), np.int64, 0), is_new, s + 1, n)[0]
        lengths = np.subtract(getitem(starts, slice(1, None)), getitem(starts, slice(0, s)))
        out.append(np.where(np.less(ops.iota((s,), np.int64, 0), count), lengths, 0))
    return out[0] if len(out) == 1 else tuple(out)


def _empty_unique(x: TracedRArray, s: int, fill_value, *flags: bool):
    vals = ops.full((s,), 0 if fill_value is None else fill_value, x.dtype)
    extra = [ops.full((s,), 0, np.int64), ops.full(x.shape, 0, np.int64), ops.full((s,), 0, np.int64)]
    out = [vals] + [e for e, f in zip(extra, flags) if f]
    return out[0] if len(out) == 1 else tuple(out)


# -- piecewise --------------------------------------------------------------------------------
def _conditions(condlist, x: TracedRArray) -> list:
    if isinstance(condlist, (list, tuple)):
        return list(condlist)
    # NumPy: an array of 2 or more dims is a stack of conditions, one per row
    if np.ndim(condlist) > 1 and x.ndim != 0:
        return [condlist[i] for i in range(np.shape(condlist)[0])]
    return [condlist]


@implements(np.piecewise)
def piecewise(x, condlist, funclist, *args, **kw):
    """Later conditions win; an extra function applies where no condition holds. Every
    function is evaluated on the whole array and selected (a trace has no data-dependent
    subsets), then cast to x's dtype as NumPy's assignment does."""
    xt = as_traced(x)
    conds = _conditions(condlist, xt)
    n = len(conds)
    funcs = list(funclist)
    if len(funcs) not in (n, n + 1):
        raise ShapeError(f"with {n} condition(s), either {n} or {n + 1} functions are expected, got {len(funcs)}")
    from .convert import broadcast_to

    masks = [broadcast_to(as_traced(c, np.bool_), xt.shape) for c in conds]
    if len(funcs) == n + 1:
        none = ops.full(xt.shape, True, np.bool_)
        for m in masks:
            none = ops.and_(none, ops.not_(m))
        masks.append(none)
    y = ops.full(xt.shape, 0, xt.dtype)
    for m, f in zip(masks, funcs):
        v = f(xt, *args, **kw) if callable(f) else f
        v = broadcast_to(ops.convert(as_traced(v), xt.dtype), xt.shape)
        y = ops.select(m, v, y)
    return y


# -- sort / argsort / searchsorted / count_nonzero --------------------------------------------
@implements(np.count_nonzero)
def count_nonzero(a, axis=None, *, keepdims=False):
    return np.sum(np.not_equal(as_traced(a), 0), axis=axis, keepdims=keepdims, dtype=np.int64)



def _less_nan_last(a, b):
    """NumPy's sort order: NaNs go last."""
    lt = ops.compare(a, b, "LT")
    if is_float(a.dtype):
        a_nan = ops.compare(a, a, "NE")
        b_nan = ops.compare(b, b, "NE")
        lt = ops.or_(lt, ops.and_(b_nan, ops.not_(a_nan)))
    return lt



@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    x, d = flat_or_axis(as_traced(a), axis)
    if is_complex(x.dtype):
        raise UnsupportedError("sorting complex arrays is not supported inside a trace")
    (out,) = ops.sort([x], d, lambda a, b: _less_nan_last(a, b))
    return out



@implements(np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    x, d = flat_or_axis(as_traced(a), axis)
    idx = ops.iota(x.shape, np.int64, d)
    _, out = ops.sort([x, idx], d, lambda a, b, ia, ib: _less_nan_last(a, b))
    return out



@implements(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    if sorter is not None:
        a = np.take(a, sorter)
    x = as_traced(a)
    if x.ndim != 1:
        raise ShapeError(f"searchsorted needs a 1-d array, got {describe(x)}")
    (xs, vs), _ = _promoted(x, v)
    cmp = np.less if side == "left" else np.less_equal
    vv = ops.reshape(vs, vs.shape + (1,))
    return np.sum(cmp(xs, vv), axis=-1, dtype=np.int64)
