"""Products and contractions: matmul/@, dot, vdot, inner, outer, tensordot, einsum, kron,
trace, diagonal, vecdot, lowered to ``dot_general`` and reductions; ``numpy.linalg.norm``,
``matrix_norm`` and ``vector_norm`` (2-norms of matrices through singular values), and
``numpy.linalg``'s spellings of the products. Decompositions: ``linalg_solvers``."""

from __future__ import annotations

import string
from typing import Sequence

import numpy as np

from .. import ops
from ..dtypes import is_complex, result_type
from ..errors import ShapeError, UnsupportedError, describe
from .. import views
from ..traced import TracedRArray
from ._registry import implements
from .convert import as_traced, axis_sequence, broadcast_shapes, broadcast_to, dtype_for_promotion, normalize_axis


def _promote(*xs) -> list[TracedRArray]:
    dt = result_type(*[dtype_for_promotion(x) for x in xs])
    return [as_traced(x, dt) for x in xs]


def _dot_dtype(dt: np.dtype) -> tuple[np.dtype, bool]:
    """dot_general on bool is not defined: compute in int32 and compare with 0."""
    if dt == np.bool_:
        return np.dtype(np.int32), True
    return dt, False


def _dot(lhs, rhs, contracting, batch=((), ())) -> TracedRArray:
    cdt, was_bool = _dot_dtype(lhs.dtype)
    out = ops.dot_general(ops.convert(lhs, cdt), ops.convert(rhs, cdt), contracting, batch)
    if was_bool:
        out = ops.compare(out, ops.full(out.shape, 0, cdt), "NE")
    return out


@implements(np.matmul)
def matmul(a, b, /, out=None, dtype=None, **kwargs):
    if kwargs.get("axes") or kwargs.get("axis"):  # (out= is written by the dispatcher)
        raise UnsupportedError("numpy.matmul: axes= is not supported inside a trace")
    a, b = _promote(a, b)
    if dtype is not None:
        a, b = ops.convert(a, dtype), ops.convert(b, dtype)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: input operand does not have enough dimensions ({describe(a)} @ {describe(b)})",
                         hint="use * for scalar multiplication")
    a1, b1 = a.ndim == 1, b.ndim == 1
    if a1:
        a = ops.reshape(a, (1,) + a.shape)
    if b1:
        b = ops.reshape(b, b.shape + (1,))
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(
            f"matmul: shapes {_orig(a, a1, True)} and {_orig(b, b1, False)} are not aligned: "
            f"{a.shape[-1]} (last dim of the first) != {b.shape[-2]} (second-to-last dim of the second)"
        )
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    shape = batch + (() if a1 else (a.shape[-2],)) + (() if b1 else (b.shape[-1],))
    nb = len(batch)
    # a matrix on one side is contracted as it is, not broadcast over the other's batch (XLA
    # would materialize the copies: a layer's weights once per batch element)
    if b.ndim == 2 and nb:
        return ops.reshape(_dot(a, b, ((a.ndim - 1,), (0,))), shape)
    if a.ndim == 2 and nb:
        out = _dot(a, b, ((1,), (nb,)))  # (m, batch..., n)
        out = ops.transpose(out, tuple(range(1, nb + 1)) + (0, nb + 1))
        return ops.reshape(out, shape)
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    out = _dot(a, b, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    return ops.reshape(out, shape)


def _orig(x, was1d, first):
    return (x.shape[1:] if first else x.shape[:-1]) if was1d else x.shape


@implements(np.dot)
def dot(a, b, out=None):
    a, b = _promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return np.multiply(a, b)
    if b.ndim == 1:
        if a.shape[-1] != b.shape[0]:
            raise ShapeError(f"dot: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} != {b.shape[0]}")
        return _dot(a, b, ((a.ndim - 1,), (0,)))
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"dot: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                         f"{b.shape[-2]} (dim {b.ndim - 2})")
    return _dot(a, b, ((a.ndim - 1,), (b.ndim - 2,)))


@implements(np.vdot)
def vdot(a, b):
    a, b = _promote(a, b)
    a = ops.reshape(a, (a.size,))
    b = ops.reshape(b, (b.size,))
    if a.size != b.size:
        raise ShapeError(f"vdot: vectors of different sizes {a.size} and {b.size}")
    if is_complex(a.dtype):
        a = ops.conj(a)
    return _dot(a, b, ((0,), (0,)))


@implements(np.inner)
def inner(a, b):
    a, b = _promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return np.multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"inner: shapes {a.shape} and {b.shape} not aligned on their last dims")
    return _dot(a, b, ((a.ndim - 1,), (b.ndim - 1,)))


@implements(np.outer)
def outer(a, b, out=None):
    a, b = _promote(a, b)
    a = ops.reshape(a, (a.size, 1))
    b = ops.reshape(b, (1, b.size))
    return np.multiply(a, b)


@implements(np.tensordot)
def tensordot(a, b, axes=2):
    a, b = _promote(a, b)
    if isinstance(axes, int):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot: axes={axes} does not fit {describe(a)} and {describe(b)}")
        ax_a = list(range(a.ndim - axes, a.ndim))
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = axis_sequence(axes[0], a.ndim), axis_sequence(axes[1], b.ndim)
        if len(ax_a) != len(ax_b):
            raise ShapeError("tensordot: shape-mismatch for sum (axes lists differ in length)")
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ShapeError(f"tensordot: shape-mismatch for sum: dim {i} of {describe(a)} != dim {j} of {describe(b)}")
    return _dot(a, b, (tuple(ax_a), tuple(ax_b)))


@implements(np.kron)
def kron(a, b):
    a, b = _promote(a, b)
    nd = max(a.ndim, b.ndim)
    a = ops.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = ops.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    # interleave: a[i, 1, j, 1] * b[1, k, 1, l] -> (i*k, j*l)
    ash = sum(((n, 1) for n in a.shape), ())
    bsh = sum(((1, n) for n in b.shape), ())
    prod = np.multiply(ops.reshape(a, ash), ops.reshape(b, bsh))
    return ops.reshape(prod, tuple(m * n for m, n in zip(a.shape, b.shape)))


# -- diagonal / trace -------------------------------------------------------------------------
def _take_diagonal(x: TracedRArray, ax1: int, ax2: int, offset: int = 0) -> TracedRArray:
    """Diagonal over (ax1, ax2) moved to the last dim: transpose, flatten the pair, strided slice."""
    rest = [d for d in range(x.ndim) if d not in (ax1, ax2)]
    y = ops.transpose(x, rest + [ax1, ax2])
    n, m = x.shape[ax1], x.shape[ax2]
    if offset >= 0:
        length = max(0, min(n, m - offset))
        start = offset
    else:
        length = max(0, min(n + offset, m))
        start = -offset * m
    lead = tuple(x.shape[d] for d in rest)
    if length == 0:
        return ops.full(lead + (0,), 0, x.dtype)
    flat = ops.reshape(y, lead + (n * m,))
    nl = len(lead)
    stop = start + (length - 1) * (m + 1) + 1
    return ops.slice(flat, [0] * nl + [start], list(lead) + [stop], [1] * nl + [m + 1])


@implements(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    x = as_traced(a)
    ax1, ax2 = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    if ax1 == ax2:
        raise ShapeError("diagonal: axis1 and axis2 cannot be the same")
    k = int(offset)
    # NumPy's diagonal is a read-only view: it follows later writes to ``a``
    xs = views.strides_of(x)
    strides = [s for d, s in enumerate(xs) if d not in (ax1, ax2)] + [xs[ax1] + xs[ax2]]
    return views.readonly_view(x, lambda p: _take_diagonal(p, ax1, ax2, k), "np.diagonal", strides)


@implements(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return np.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# -- einsum -----------------------------------------------------------------------------------
def _parse_einsum(subscripts: str, shapes: Sequence[tuple[int, ...]]):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    terms = ins.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(f"einsum: {len(terms)} operand subscripts for {len(shapes)} operands")
    used = set(c for c in subscripts if c.isalpha())
    free = [c for c in string.ascii_letters if c not in used]
    # ellipsis -> fresh letters (right-aligned broadcasting dims)
    ell_n = 0
    for t, s in zip(terms, shapes):
        if "..." in t:
            ell_n = max(ell_n, len(s) - (len(t) - 3))
    ell = "".join(free[:ell_n])
    new_terms = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            t = t.replace("...", ell[ell_n - k:] if k else "")
        if len(t) != len(s):
            raise ShapeError(f"einsum: subscripts '{t}' do not match operand of shape {s}")
        new_terms.append(t)
    if out is None:
        counts = {}
        for t in new_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return new_terms, out


def _einsum_unary(x: TracedRArray, term: str, keep: set[str]) -> tuple[TracedRArray, str]:
    """Take diagonals of repeated letters and sum letters not in ``keep``."""
    while True:
        dup = next((c for c in term if term.count(c) > 1), None)
        if dup is None:
            break
        i = term.index(dup)
        j = term.index(dup, i + 1)
        if x.shape[i] != x.shape[j]:
            raise ShapeError(f"einsum: repeated subscript '{dup}' over dims of sizes {x.shape[i]} and {x.shape[j]}")
        x = _take_diagonal(x, i, j)
        term = "".join(c for k, c in enumerate(term) if k not in (i, j)) + dup
    drop = [k for k, c in enumerate(term) if c not in keep]
    if drop:
        x = np.sum(x, axis=tuple(drop))
        term = "".join(c for k, c in enumerate(term) if k not in drop)
    return x, term


@implements(np.einsum)
def einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    if not isinstance(subscripts, str):
        raise UnsupportedError("einsum: only the subscripts-string form is supported inside a trace")
    xs = _promote(*operands)
    if dtype is not None:
        xs = [ops.convert(x, dtype) for x in xs]
    terms, out_term = _parse_einsum(subscripts, [x.shape for x in xs])
    sizes: dict[str, int] = {}
    for t, x in zip(terms, xs):
        for c, n in zip(t, x.shape):
            if sizes.setdefault(c, n) != n:
                if n == 1 or sizes[c] == 1:
                    sizes[c] = max(n, sizes[c])
                else:
                    raise ShapeError(f"einsum: size of label '{c}' differs between operands ({sizes[c]} vs {n})")
    # contraction order: numpy's optimal path when there are 3+ operands
    order_pairs = _einsum_path(subscripts, xs) if len(xs) > 2 else None
    items = list(zip(xs, terms))

    def needed_elsewhere(skip: set[int]) -> set[str]:
        s = set(out_term)
        for k, (_, t) in enumerate(items):
            if k not in skip:
                s |= set(t)
        return s

    items = [_einsum_unary(x, t, needed_elsewhere({k})) for k, (x, t) in enumerate(items)]
    pairs = order_pairs or [(0, 1)] * (len(items) - 1)
    for i, j in pairs:
        (a, ta), (b, tb) = items[i], items[j]
        rest = [it for k, it in enumerate(items) if k not in (i, j)]
        keep = set(out_term)
        for _, t in rest:
            keep |= set(t)
        a, b, ta, tb = _unify_broadcast(a, ta, b, tb, sizes)
        batch = [c for c in ta if c in tb and c in keep]
        contract = [c for c in ta if c in tb and c not in keep]
        res = _dot(a, b, (tuple(ta.index(c) for c in contract), tuple(tb.index(c) for c in contract)),
                   (tuple(ta.index(c) for c in batch), tuple(tb.index(c) for c in batch)))
        tr = "".join(batch) + "".join(c for c in ta if c not in tb) + "".join(c for c in tb if c not in ta)
        res, tr = _einsum_unary(res, tr, keep)
        items = rest + [(res, tr)]
    (res, tr), = items
    res, tr = _einsum_unary(res, tr, set(out_term))
    # letters of size-1 broadcast that vanished: broadcast back
    perm = [tr.index(c) for c in out_term if c in tr]
    res = ops.transpose(res, perm)
    if len(perm) != len(out_term):
        res = broadcast_to(ops.reshape(res, tuple(sizes[c] if c in tr else 1 for c in out_term)),
                           tuple(sizes[c] for c in out_term))
    return res


def _unify_broadcast(a, ta, b, tb, sizes):
    """Broadcast size-1 dims of a shared label to its full size (einsum broadcasting)."""
    for x_is_a in (True, False):
        x, t = (a, ta) if x_is_a else (b, tb)
        shape = tuple(sizes[c] for c in t)
        if shape != x.shape:
            x = broadcast_to(x, shape)
        if x_is_a:
            a = x
        else:
            b = x
    return a, b, ta, tb


def _einsum_path(subscripts, xs):
    """Pairwise contraction order from NumPy's greedy path (indices into the shrinking list)."""
    dummies = [np.empty(x.shape, dtype=np.float32) if x.size < 1 << 20 else
               np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), x.shape, (0,) * x.ndim) for x in xs]
    path, _ = np.einsum_path(subscripts, *dummies, optimize="greedy")
    pairs = []
    for step in path[1:]:
        if len(step) == 2:
            i, j = sorted(step)
            pairs.append((i, j))
        else:
            return None
    return pairs


# -- numpy.linalg -----------------------------------------------------------------------------
@implements(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    x = as_traced(x)
    if not np.issubdtype(x.dtype, np.inexact):
        x = ops.convert(x, np.float64)
    ax = x if not is_complex(x.dtype) else ops.abs(x)
    if axis is None and ord is None:
        s = np.sum(np.multiply(ax, ax), keepdims=keepdims)
        return np.sqrt(s)
    if axis is None:
        axis = tuple(range(x.ndim)) if x.ndim <= 2 else None
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        a = np.abs(ax)
        if ord is None or ord == 2:
            return np.sqrt(np.sum(np.multiply(a, a), axis=axes, keepdims=keepdims))
        if ord == np.inf:
            return np.max(a, axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return np.min(a, axis=axes, keepdims=keepdims)
        if ord == 0:
            return np.sum(np.not_equal(a, 0), axis=axes, keepdims=keepdims, dtype=a.dtype)
        if ord == 1:
            return np.sum(a, axis=axes, keepdims=keepdims)
        return np.power(np.sum(np.power(a, ord), axis=axes, keepdims=keepdims), 1.0 / ord)
    if len(axes) == 2:
        a = np.abs(ax)
        r0, r1 = axes
        if ord in (None, "fro"):
            return np.sqrt(np.sum(np.multiply(a, a), axis=axes, keepdims=keepdims))
        if ord == 1:
            return np.max(np.sum(a, axis=r0, keepdims=True), axis=axes, keepdims=keepdims)
        if ord == np.inf:
            return np.max(np.sum(a, axis=r1, keepdims=True), axis=axes, keepdims=keepdims)
        if ord == -1:
            return np.min(np.sum(a, axis=r0, keepdims=True), axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return np.min(np.sum(a, axis=r1, keepdims=True), axis=axes, keepdims=keepdims)
        if ord in (2, -2, "nuc"):  # functions of the singular values
            r0, r1 = (normalize_axis(d, x.ndim) for d in axes)
            rest = [d for d in range(x.ndim) if d not in (r0, r1)]
            s = np.linalg.svd(ops.transpose(x, rest + [r0, r1]), compute_uv=False)
            out = {2: np.max, -2: np.min, "nuc": np.sum}[ord](s, axis=-1)
            if keepdims:
                shape = list(x.shape)
                shape[r0] = shape[r1] = 1
                out = ops.reshape(out, tuple(shape))
            return out
    raise UnsupportedError(f"numpy.linalg.norm(ord={ord!r}, axis={axis!r}) is not supported inside a trace")


@implements(np.vecdot)
def vecdot(x1, x2, /, *, axis=-1, **kw):
    a, b = _promote(x1, x2)
    if is_complex(a.dtype):
        a = ops.conj(a)
    return np.sum(np.multiply(a, b), axis=axis, dtype=a.dtype)  # NumPy keeps the operands' dtype


@implements(np.linalg.matrix_norm)
def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    x = as_traced(x)
    if x.ndim < 2:
        raise ShapeError(f"numpy.linalg.matrix_norm needs at least 2 dimensions, got {describe(x)}")
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


@implements(np.linalg.vector_norm)
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    x = as_traced(x)
    if axis is None:
        out = norm(ops.reshape(x, (x.size,)), ord=ord, axis=0)
        return ops.reshape(out, (1,) * x.ndim) if keepdims else out
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        return norm(x, ord=ord, axis=axes, keepdims=keepdims)
    # several axes: one vector per remaining index (moved last and flattened)
    axes = tuple(normalize_axis(a, x.ndim) for a in axes)
    rest = [d for d in range(x.ndim) if d not in axes]
    kept = tuple(x.shape[d] for d in rest)
    flat = ops.reshape(ops.transpose(x, rest + list(axes)), kept + (int(np.prod([x.shape[d] for d in axes])),))
    out = norm(flat, ord=ord, axis=-1)
    if keepdims:
        out = ops.reshape(out, tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)))
    return out


# numpy.linalg's array-API spellings of functions NumPy also has at top level
@implements(np.linalg.matmul)
def linalg_matmul(x1, x2, /):
    return np.matmul(x1, x2)


@implements(np.linalg.outer)
def linalg_outer(x1, x2, /):
    a, b = as_traced(x1), as_traced(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"numpy.linalg.outer takes 1-dimensional vectors, got {describe(a)} and {describe(b)}")
    return np.outer(a, b)


@implements(np.linalg.cross)
def linalg_cross(x1, x2, /, *, axis=-1):
    a, b = as_traced(x1), as_traced(x2)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ShapeError(f"numpy.linalg.cross needs 3-element vectors along axis {axis}, got {describe(a)} and "
                         f"{describe(b)}")
    return np.cross(a, b, axis=axis)


@implements(np.linalg.trace)
def linalg_trace(x, /, *, offset=0, dtype=None):
    return np.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


@implements(np.linalg.diagonal)
def linalg_diagonal(x, /, *, offset=0):
    return np.diagonal(x, offset=offset, axis1=-2, axis2=-1)


@implements(np.linalg.matrix_transpose)
def linalg_matrix_transpose(x, /):
    x = as_traced(x)
    if x.ndim < 2:
        raise ShapeError(f"numpy.linalg.matrix_transpose needs at least 2 dimensions, got {describe(x)}")
    return ops.transpose(x, list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2])


@implements(np.linalg.tensordot)
def linalg_tensordot(x1, x2, /, *, axes=2):
    return np.tensordot(x1, x2, axes=axes)


@implements(np.linalg.vecdot)
def linalg_vecdot(x1, x2, /, *, axis=-1):
    return vecdot(x1, x2, axis=axis)
