"""``reactant.numpy.linalg``: the Array API ``linalg`` extension. Decompositions and solvers
call ``numpy.linalg`` (NumPy's dispatch runs them eagerly on device arrays and records them
inside a trace); norms are written out so any axes and orders work."""

from __future__ import annotations

from typing import Literal, NamedTuple, Optional, Union

import numpy as np

from ._base import Array, fused
from ._linear_algebra import matmul, matrix_transpose, tensordot, vecdot  # noqa: F401  (part of the extension)

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """Cholesky factor of Hermitian positive-definite matrices (lower; ``upper=True``: its
    conjugate transpose)."""
    return np.linalg.cholesky(x, upper=upper)


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Cross product of 3-vectors along ``axis``."""
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("cross needs vectors of length 3 along axis")
    return np.cross(x1, x2, axis=axis)


def det(x: Array, /) -> Array:
    """Determinants of the matrices in the last two axes."""
    return np.linalg.det(x)


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The ``offset``-th diagonal of the matrices in the last two axes."""
    return np.diagonal(x, offset, -2, -1)


def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices."""
    w, v = np.linalg.eigh(x)
    return EighResult(w, v)


def eigvalsh(x: Array, /) -> Array:
    """Eigenvalues (ascending) of Hermitian matrices."""
    return np.linalg.eigvalsh(x)


def inv(x: Array, /) -> Array:
    """Inverses of square matrices."""
    return np.linalg.inv(x)


def matrix_power(x: Array, n: int, /) -> Array:
    """``x`` multiplied with itself ``n`` times (``n < 0``: of its inverse; 0: identity)."""
    return np.linalg.matrix_power(x, n)


def matrix_rank(x: Array, /, *, rtol: Optional[Union[float, Array]] = None) -> Array:
    """Numbers of singular values above ``rtol`` times the largest."""
    return np.linalg.matrix_rank(x, rtol=rtol)


def outer(x1: Array, x2: Array, /) -> Array:
    """Outer product of two vectors."""
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("outer needs two 1-D arrays")
    return np.outer(x1, x2)


def pinv(x: Array, /, *, rtol: Optional[Union[float, Array]] = None) -> Array:
    """Moore-Penrose pseudo-inverses (singular values below ``rtol`` times the largest
    dropped)."""
    return np.linalg.pinv(x, rtol=rtol)


def qr(x: Array, /, *, mode: Literal["reduced", "complete"] = "reduced") -> QRResult:
    """QR factorisation of the matrices in the last two axes."""
    q, r = np.linalg.qr(x, mode=mode)
    return QRResult(q, r)


def slogdet(x: Array, /) -> SlogdetResult:
    """Sign and natural log of the absolute value of the determinants."""
    sign, logabsdet = np.linalg.slogdet(x)
    return SlogdetResult(sign, logabsdet)


def solve(x1: Array, x2: Array, /) -> Array:
    """Solution of ``x1 @ out = x2`` (``x2`` 1-D: a vector right-hand side)."""
    return np.linalg.solve(x1, x2)


def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """Singular value decomposition ``x = U @ diag(S) @ Vh``."""
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return SVDResult(u, s, vh)


def svdvals(x: Array, /) -> Array:
    """Singular values, descending."""
    return np.linalg.svd(x, compute_uv=False)


def trace(x: Array, /, *, offset: int = 0, dtype=None) -> Array:
    """Sums of the ``offset``-th diagonals of the matrices in the last two axes; integers
    accumulate in (u)int64."""
    return np.trace(x, offset, -2, -1, dtype=dtype)


@fused
def _vector_norm(x, axis, keepdims: bool, ord):
    a = np.abs(x)
    if ord == np.inf:
        out = np.max(a, axis=axis, keepdims=keepdims)
    elif ord == -np.inf:
        out = np.min(a, axis=axis, keepdims=keepdims)
    elif ord == 0:
        out = np.sum(np.astype(a != 0, a.dtype), axis=axis, keepdims=keepdims)
    elif ord == 1:
        out = np.sum(a, axis=axis, keepdims=keepdims)
    elif ord == 2:
        out = np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))
    else:
        out = np.power(np.sum(np.power(a, ord), axis=axis, keepdims=keepdims), 1.0 / ord)
    return out


def vector_norm(x: Array, /, *, axis=None, keepdims: bool = False,
                ord: Union[int, float] = 2) -> Array:
    """The ``ord``-norm of the vectors along ``axis`` (all axes by default, or a tuple);
    real-valued (of the magnitudes for complex input)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    if x.size == 0 and ord in (np.inf, -np.inf) and axis is None:
        raise ValueError("the max/min norm of an empty array is not defined")
    if x.dtype.kind in "biu":
        x = np.astype(x, np.float64)
    return _vector_norm(x, axis, bool(keepdims), float(ord))


def matrix_norm(x: Array, /, *, keepdims: bool = False,
                ord: Union[int, float, Literal["fro", "nuc"]] = "fro") -> Array:
    """Norms of the matrices in the last two axes: ``"fro"``, ``"nuc"`` (sum of singular
    values), ``1``/``-1``/``inf``/``-inf`` (max/min column or row sum), ``2``/``-2``
    (largest/smallest singular value)."""
    if x.ndim < 2:
        raise ValueError(f"matrix_norm needs at least 2 dimensions, got {x.ndim}")
    if x.dtype.kind in "biu":
        x = np.astype(x, np.float64)
    if ord == "fro":
        out = _vector_norm(x, (-2, -1), True, 2.0)
    elif ord in (1, -1, np.inf, -np.inf):
        out = _matrix_sum_norm(x, float(ord))
    elif ord in ("nuc", 2, -2):
        s = svdvals(x)
        out = np.sum(s, axis=-1) if ord == "nuc" else (np.max if ord == 2 else np.min)(s, axis=-1)
        out = np.reshape(out, out.shape + (1, 1))
    else:
        raise ValueError(f"invalid matrix norm order {ord!r}")
    return out if keepdims else np.reshape(out, x.shape[:-2])


@fused
def _matrix_sum_norm(x, ord: float):
    sum_axis, pick_axis = (-2, -1) if abs(ord) == 1 else (-1, -2)
    sums = np.sum(np.abs(x), axis=sum_axis, keepdims=True)
    return (np.max if ord > 0 else np.min)(sums, axis=pick_axis, keepdims=True)
