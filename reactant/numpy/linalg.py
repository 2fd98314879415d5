"""``reactant.numpy.linalg``: the Array API ``linalg`` extension. Decompositions and solvers
call ``numpy.linalg`` (NumPy's dispatch runs them eagerly on device arrays and records them
inside a trace), adapting the standard's signatures."""

from __future__ import annotations

from typing import Literal, NamedTuple, Optional, Union

import numpy as np

from ._base import Array
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
    return np.linalg.svdvals(x)


def trace(x: Array, /, *, offset: int = 0, dtype=None) -> Array:
    """Sums of the ``offset``-th diagonals of the matrices in the last two axes; integers
    accumulate in (u)int64."""
    return np.trace(x, offset, -2, -1, dtype=dtype)


def vector_norm(x: Array, /, *, axis=None, keepdims: bool = False,
                ord: Union[int, float] = 2) -> Array:
    """The ``ord``-norm of the vectors along ``axis`` (all axes by default, or a tuple);
    real-valued (of the magnitudes for complex input)."""
    return np.linalg.vector_norm(x, axis=tuple(axis) if isinstance(axis, list) else axis,
                                 keepdims=keepdims, ord=ord)


def matrix_norm(x: Array, /, *, keepdims: bool = False,
                ord: Union[int, float, Literal["fro", "nuc"]] = "fro") -> Array:
    """Norms of the matrices in the last two axes: ``"fro"``, ``"nuc"`` (sum of singular
    values), ``1``/``-1``/``inf``/``-inf`` (max/min column or row sum), ``2``/``-2``
    (largest/smallest singular value)."""
    return np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)
