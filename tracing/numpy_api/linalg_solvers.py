"""``numpy.linalg`` functions built on matrix decompositions: solve, inv, det, slogdet,
cholesky, qr, svd, svdvals, eigh, eigvalsh, eig, eigvals, lstsq, pinv, matrix_rank, cond,
matrix_power, tensorsolve, tensorinv, multi_dot.

The decompositions are markers (``reactant.ir.decompositions``) that the AD pass
differentiates by matrix-calculus rules and the runtime replaces by the platform's library
calls (LAPACK on CPU). Every function is batched over leading dimensions as in NumPy.
Integer and bool inputs compute in float64 as in NumPy; float16 is refused as NumPy refuses it.
A singular or non-positive-definite input gives NaN/inf where NumPy's result would be
undefined (compiled code cannot raise ``LinAlgError`` from the device; eager calls raise it).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from .. import ops
from ..dtypes import is_complex
from ..errors import DTypeError, OptionError, ShapeError, describe
from ..traced import TracedRArray
from ._registry import implements
from .convert import as_traced, broadcast_shapes, broadcast_to
from .shape import _diag_matrix


class SlogdetResult(NamedTuple):
    sign: TracedRArray
    logabsdet: TracedRArray


class EighResult(NamedTuple):
    eigenvalues: TracedRArray
    eigenvectors: TracedRArray


class EigResult(NamedTuple):
    eigenvalues: TracedRArray
    eigenvectors: TracedRArray


class QRResult(NamedTuple):
    Q: TracedRArray
    R: TracedRArray


class SVDResult(NamedTuple):
    U: TracedRArray
    S: TracedRArray
    Vh: TracedRArray


# -- operand checks ------------------------------------------------------------------------------
def _float(x, name: str) -> TracedRArray:
    """``x`` as a traced float/complex array of at least 2 dims, NumPy's linalg dtype rule."""
    x = as_traced(x)
    if x.ndim < 2:
        raise ShapeError(f"numpy.linalg.{name}: {x.ndim}-dimensional array given; the array must be at least "
                         f"two-dimensional, got {describe(x)}")
    return _computing_dtype(x, name)


def _computing_dtype(x: TracedRArray, name: str) -> TracedRArray:
    if x.dtype.kind in "biu":
        return ops.convert(x, np.float64)
    if x.dtype == np.float16 or x.dtype.kind not in "fc":
        raise DTypeError(f"numpy.linalg.{name}: array type {x.dtype} is unsupported in linalg, got {describe(x)}")
    return x


def _square(x, name: str) -> TracedRArray:
    x = _float(x, name)
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"numpy.linalg.{name}: last 2 dimensions of the array must be square, got {describe(x)}")
    return x


def _common(a: TracedRArray, b: TracedRArray) -> tuple[TracedRArray, TracedRArray]:
    dt = np.result_type(a.dtype, b.dtype)
    return ops.convert(a, dt), ops.convert(b, dt)


def _swap(x: TracedRArray) -> TracedRArray:
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return ops.transpose(x, perm)


def _conj_t(x: TracedRArray) -> TracedRArray:
    t = _swap(x)
    return ops.conj(t) if is_complex(t.dtype) else t


def _eye_like(a: TracedRArray) -> TracedRArray:
    """Identity matrices shaped like ``a``, from iotas (XLA computes them where they are used;
    a stored n x n constant had to be read)."""
    return broadcast_to(_diag_matrix(ops.full((a.shape[-1],), 1, a.dtype), 0), a.shape)


# -- solve, inv, det ---------------------------------------------------------------------------
def _solve(a: TracedRArray, b: TracedRArray) -> TracedRArray:
    """``a^-1 b`` for ``a[..., n, n]``, ``b[..., n, r]`` (batch dims broadcast)."""
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    return ops.decomposition("solve", [a, b])[0]


@implements(np.linalg.solve)
def solve(a, b):
    a = _square(a, "solve")
    b = _computing_dtype(as_traced(b), "solve")
    a, b = _common(a, b)
    n = a.shape[-1]
    if b.ndim == 1:  # NumPy 2: only a 1-D b is a vector
        if b.shape[0] != n:
            raise ShapeError(f"numpy.linalg.solve: {describe(a)} and {describe(b)} do not fit")
        col = broadcast_to(ops.reshape(b, (n, 1)), a.shape[:-2] + (n, 1))
        x = _solve(a, col)
        return ops.reshape(x, x.shape[:-1])
    if b.shape[-2] != n:
        raise ShapeError(f"numpy.linalg.solve: {describe(a)} and {describe(b)} do not fit "
                         "(b is a stack of matrices with as many rows as a)")
    return _solve(a, b)


@implements(np.linalg.inv)
def inv(a):
    a = _square(a, "inv")
    return _solve(a, _eye_like(a))


def _lu(a: TracedRArray):
    return ops.decomposition("lu", [a])


def _parity(pivots: TracedRArray) -> TracedRArray:
    """+1/-1: the sign of the permutation made of LAPACK's row swaps."""
    n = pivots.shape[-1]
    swaps = np.sum(np.not_equal(pivots, np.arange(n, dtype=np.int32)), axis=-1)
    return 1 - 2 * np.remainder(swaps, 2)


@implements(np.linalg.det)
def det(a):
    a = _square(a, "det")
    _, pivots, _, u_diag = _lu(a)
    return np.prod(u_diag, axis=-1) * ops.convert(_parity(pivots), a.dtype)


@implements(np.linalg.slogdet)
def slogdet(a):
    a = _square(a, "slogdet")
    _, pivots, _, d = _lu(a)
    mag = np.abs(d)
    logabs = np.sum(np.log(mag), axis=-1)
    if is_complex(a.dtype):
        phase = np.where(mag == 0, ops.convert(ops.constant(0), a.dtype), d / np.where(mag == 0, 1, mag))
        sign = np.prod(phase, axis=-1)
    else:
        sign = np.prod(np.sign(d), axis=-1)
    return SlogdetResult(sign * ops.convert(_parity(pivots), a.dtype), logabs)


# -- cholesky, qr ---------------------------------------------------------------------------------
@implements(np.linalg.cholesky)
def cholesky(a, /, *, upper=False):
    a = _square(a, "cholesky")
    lower = ops.cholesky(a, lower=True)  # reads the lower triangle, as NumPy's LAPACK call does
    return _conj_t(lower) if upper else lower


@implements(np.linalg.qr)
def qr(a, mode="reduced"):
    a = _float(a, "qr")
    if mode not in ("reduced", "complete", "r", "raw"):
        raise OptionError(f"numpy.linalg.qr: unrecognized mode {mode!r}")
    if mode == "raw":
        raise OptionError("numpy.linalg.qr(mode='raw') (LAPACK's Householder form) is not supported inside a "
                          "trace", hint="use mode='reduced', 'complete' or 'r'")
    q, r = ops.decomposition("qr", [a], full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


# -- svd, eigen -----------------------------------------------------------------------------------
@implements(np.linalg.svd)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    a = _float(a, "svd")
    if hermitian:
        return _svd_hermitian(a, compute_uv)
    if not compute_uv:
        return ops.decomposition("svd", [a], full_matrices=False, compute_uv=False)[0]
    u, s, vh = ops.decomposition("svd", [a], full_matrices=bool(full_matrices), compute_uv=True)
    return SVDResult(u, s, vh)


def _svd_hermitian(a: TracedRArray, compute_uv: bool):
    """NumPy's hermitian SVD: eigenvalues by decreasing magnitude, signs moved into ``vh``."""
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"numpy.linalg.svd(hermitian=True) needs square matrices, got {describe(a)}")
    if not compute_uv:
        w = eigvalsh(a)
        return np.flip(np.sort(np.abs(w), axis=-1), axis=-1)
    w, v = eigh(a)
    order = np.flip(np.argsort(np.abs(w), axis=-1), axis=-1)
    s = np.take_along_axis(np.abs(w), order, axis=-1)
    sgn = np.take_along_axis(np.sign(w), order, axis=-1)
    u = np.take_along_axis(v, order[..., None, :], axis=-1)
    vh = _conj_t(u * ops.convert(sgn, u.dtype)[..., None, :])
    return SVDResult(u, s, vh)


@implements(np.linalg.svdvals)
def svdvals(x, /):
    return svd(x, compute_uv=False)


def _uplo(UPLO: str, name: str) -> bool:
    if UPLO not in ("L", "U"):
        raise OptionError(f"numpy.linalg.{name}: UPLO argument must be 'L' or 'U', got {UPLO!r}")
    return UPLO == "L"


@implements(np.linalg.eigh)
def eigh(a, UPLO="L"):
    a = _square(a, "eigh")
    v, w = ops.decomposition("eigh", [a], lower=_uplo(UPLO, "eigh"))
    return EighResult(w, v)


@implements(np.linalg.eigvalsh)
def eigvalsh(a, UPLO="L"):
    a = _square(a, "eigvalsh")
    return ops.decomposition("eigh", [a], lower=_uplo(UPLO, "eigvalsh"))[1]


@implements(np.linalg.eig)
def eig(a):
    a = _square(a, "eig")
    w, v = ops.decomposition("eig", [a], vectors=True)
    return EigResult(w, v)


@implements(np.linalg.eigvals)
def eigvals(a):
    a = _square(a, "eigvals")
    return ops.decomposition("eig", [a], vectors=False)[0]


# -- least squares, pseudo-inverse, rank, condition ------------------------------------------------
@implements(np.linalg.lstsq)
def lstsq(a, b, rcond=None):
    a = _float(a, "lstsq")
    b = _computing_dtype(as_traced(b), "lstsq")
    a, b = _common(a, b)
    vector = b.ndim == 1
    if vector:
        b = ops.reshape(b, (b.shape[0], 1))
    if a.ndim != 2 or b.ndim != 2:
        raise ShapeError(f"numpy.linalg.lstsq: {describe(a)} and {describe(b)}: arrays must be 2-dimensional")
    m, n = a.shape
    if b.shape[0] != m:
        raise ShapeError(f"numpy.linalg.lstsq: incompatible dimensions {describe(a)} and {describe(b)}")
    real = np.finfo(a.dtype).dtype
    if rcond is None:
        rcond = np.finfo(a.dtype).eps * max(m, n)
    u, s, vh = ops.decomposition("svd", [a], full_matrices=False, compute_uv=True)
    large = s > rcond * np.max(s, axis=-1, keepdims=True, initial=0)
    s_inv = np.where(large, 1 / np.where(large, s, 1), 0)
    x = _conj_t(vh) @ (ops.convert(s_inv, a.dtype)[:, None] * (_conj_t(u) @ b))
    rank = np.sum(large, axis=-1)
    if m > n:  # NumPy also returns an empty array when the rank is below n (a run-time fact)
        r = b - a @ x
        resid = np.sum(np.real(r * np.conj(r)) if is_complex(r.dtype) else r * r, axis=0)
    else:
        resid = ops.constant(np.zeros((0,), real))
    if vector:
        x = ops.reshape(x, (n,))
    return x, resid, rank, s


def _rtol(a: TracedRArray, rcond, rtol, default):
    if rcond is not None and rtol is not _UNSET:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    if rcond is not None:
        return rcond
    if rtol is _UNSET:
        return default
    return max(a.shape[-2:]) * np.finfo(a.dtype).eps if rtol is None else rtol


class _Unset:
    def __repr__(self) -> str:
        return "<no value>"


_UNSET = _Unset()


@implements(np.linalg.pinv)
def pinv(a, rcond=None, hermitian=False, *, rtol=_UNSET):
    a = _float(a, "pinv")
    tol = _rtol(a, rcond, rtol, 1e-15)
    if hermitian:
        u, s, vh = _svd_hermitian(a, True)
    else:
        u, s, vh = ops.decomposition("svd", [a], full_matrices=False, compute_uv=True)
    tol = as_traced(tol)
    cutoff = (tol[..., None] if tol.ndim else tol) * np.max(s, axis=-1, keepdims=True, initial=0)
    large = s > cutoff
    s_inv = ops.convert(np.where(large, 1 / np.where(large, s, 1), 0), a.dtype)
    return _conj_t(vh) @ (s_inv[..., :, None] * _conj_t(u))


@implements(np.linalg.matrix_rank)
def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    A = as_traced(A)
    if A.ndim < 2:
        return ops.convert(np.any(np.not_equal(A, 0)), np.int64)
    s = svd(A, compute_uv=False, hermitian=hermitian)
    if tol is None:
        r = max(A.shape[-2:]) * np.finfo(s.dtype).eps if rtol is None else as_traced(rtol)
        if isinstance(r, TracedRArray) and r.ndim:
            r = r[..., None]
        tol = np.max(s, axis=-1, keepdims=True, initial=0) * r
    else:
        tol = as_traced(tol)
        tol = tol[..., None] if tol.ndim else tol
    return np.count_nonzero(s > tol, axis=-1)


@implements(np.linalg.cond)
def cond(x, p=None):
    x = _float(x, "cond")
    if p is None or p in (2, -2):
        s = svd(x, compute_uv=False)
        return s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    x = _square(x, "cond")
    r = np.linalg.norm(x, p, axis=(-2, -1)) * np.linalg.norm(inv(x), p, axis=(-2, -1))
    # NumPy: a failed inversion (NaN) of a NaN-free matrix means an infinite condition number
    finite_input = np.logical_not(np.any(np.isnan(x), axis=(-2, -1)))
    return np.where(np.logical_and(np.isnan(r), finite_input), np.inf, r)


# -- powers, tensor equations, chains ---------------------------------------------------------------
@implements(np.linalg.matrix_power)
def matrix_power(a, n):
    a = as_traced(a)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise OptionError(f"numpy.linalg.matrix_power: exponent must be a Python integer, got {n!r}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"numpy.linalg.matrix_power: last 2 dimensions of the array must be square, "
                         f"got {describe(a)}")
    n = int(n)
    if n == 0:
        return _eye_like(a)
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:  # binary powering: the same products NumPy's loop makes
        if n & 1:
            result = base if result is None else np.matmul(result, base)
        n >>= 1
        if n:
            base = np.matmul(base, base)
    return result


@implements(np.linalg.tensorsolve)
def tensorsolve(a, b, axes=None):
    a, b = as_traced(a), as_traced(b)
    if axes is not None:
        order = [d for d in range(a.ndim) if d not in [ax % a.ndim for ax in axes]]
        order += [ax % a.ndim for ax in axes]
        a = ops.transpose(a, order)
    rows = int(np.prod(b.shape, dtype=np.int64))
    sol_shape = a.shape[b.ndim:]
    cols = int(np.prod(sol_shape, dtype=np.int64))
    if rows != cols or a.shape[:b.ndim] != b.shape:
        raise ShapeError(f"numpy.linalg.tensorsolve: {describe(a)} and {describe(b)}: the leading dims of a must "
                         "be b's shape, and their product the product of the remaining dims")
    x = solve(ops.reshape(_computing_dtype(a, "tensorsolve"), (rows, cols)),
              ops.reshape(_computing_dtype(b, "tensorsolve"), (rows,)))
    return ops.reshape(x, sol_shape)


@implements(np.linalg.tensorinv)
def tensorinv(a, ind=2):
    a = as_traced(a)
    if not isinstance(ind, (int, np.integer)) or ind <= 0:
        raise OptionError(f"numpy.linalg.tensorinv: ind must be a positive integer, got {ind!r}")
    front, back = a.shape[:ind], a.shape[ind:]
    rows = int(np.prod(front, dtype=np.int64))
    if rows != int(np.prod(back, dtype=np.int64)):
        raise ShapeError(f"numpy.linalg.tensorinv: {describe(a)}: the product of the first {ind} dims must equal "
                         "the product of the others")
    x = inv(ops.reshape(_computing_dtype(a, "tensorinv"), (rows, rows)))
    return ops.reshape(x, back + front)


@implements(np.linalg.multi_dot)
def multi_dot(arrays: Sequence, *, out=None):
    xs = [as_traced(x) for x in arrays]
    if len(xs) < 2:
        raise ValueError("numpy.linalg.multi_dot: expecting at least two arrays")
    first_vec, last_vec = xs[0].ndim == 1, xs[-1].ndim == 1
    if first_vec:
        xs[0] = ops.reshape(xs[0], (1,) + xs[0].shape)
    if last_vec:
        xs[-1] = ops.reshape(xs[-1], xs[-1].shape + (1,))
    if any(x.ndim != 2 for x in xs):
        raise ShapeError("numpy.linalg.multi_dot: arrays must be 2-dimensional (the first and last may be 1-D), got "
                         + ", ".join(describe(x) for x in xs))
    result = _chain(xs, _chain_order([x.shape[0] for x in xs] + [xs[-1].shape[1]]), 0, len(xs) - 1)
    if first_vec and last_vec:
        return ops.reshape(result, ())
    if first_vec:
        return ops.reshape(result, result.shape[1:])
    if last_vec:
        return ops.reshape(result, result.shape[:1])
    return result


def _chain_order(dims: list[int]) -> list[list[int]]:
    """The split points of the cheapest parenthesization (the textbook dynamic program)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(xs, split, i: int, j: int) -> TracedRArray:
    if i == j:
        return xs[i]
    k = split[i][j]
    return np.matmul(_chain(xs, split, i, k), _chain(xs, split, k + 1, j))
