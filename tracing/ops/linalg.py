"""Linear-algebra ops: ``stablehlo.dot_general`` (result dims: batch, then lhs free, then rhs
free), ``cholesky``, and the decomposition markers (LU, QR, SVD, eigen): the Ops layer's
checks over ``reactant.ir.build``'s builders."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...ir import build as B
from ..context import current
from ..errors import ShapeError, describe
from ..traced import TracedRArray
from ._core import build, build_n


def dot_general(
    lhs: TracedRArray,
    rhs: TracedRArray,
    contracting: tuple[Sequence[int], Sequence[int]],
    batch: tuple[Sequence[int], Sequence[int]] = ((), ()),
    *,
    result_dtype=None,
    precision: str | None = None,
) -> TracedRArray:
    """``stablehlo.dot_general``. Result dims: batch, lhs free dims, rhs free dims."""
    lc, rc = (tuple(int(d) for d in c) for c in contracting)
    lb, rb = (tuple(int(d) for d in b) for b in batch)
    bad = len(lc) != len(rc) or len(lb) != len(rb)
    bad = bad or any(lhs.shape[a] != rhs.shape[b] for a, b in zip(lc, rc))
    bad = bad or any(lhs.shape[a] != rhs.shape[b] for a, b in zip(lb, rb))
    if bad:
        raise ShapeError(
            f"dot_general: {describe(lhs)} and {describe(rhs)} do not fit: contracting "
            f"{list(lc)} x {list(rc)}, batch {list(lb)} x {list(rb)}"
        )
    elem = None if result_dtype is None else current().elem_type(np.dtype(result_dtype))
    return build(B.dot_general, lhs.value, rhs.value, lb, rb, lc, rc, elem=elem, precision=precision)


def cholesky(a: TracedRArray, *, lower: bool = True) -> TracedRArray:
    """``stablehlo.cholesky`` of a (batch of) symmetric positive definite matrices: NaN where
    the factorization fails."""
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2] or a.dtype.kind not in "fc":
        raise ShapeError(f"cholesky needs square float matrices, got {describe(a)}")
    return build(B.cholesky, a.value, lower=lower)


def decomposition(kind: str, operands: Sequence[TracedRArray], **options) -> list[TracedRArray]:
    """A decomposition marker (``reactant.ir.decompositions``: lu, solve, qr, svd, eigh, eig)
    on (batches of) matrices; the caller has checked shapes and dtypes."""
    return build_n(B.decomposition, kind, [x.value for x in operands], options)
