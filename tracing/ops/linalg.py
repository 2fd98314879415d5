"""Linear-algebra ops: ``stablehlo.dot_general`` with its shape rule (batch dims first, then
lhs free, rhs free), ``cholesky``, and the decomposition markers (LU, QR, SVD, eigen)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from ...ir import build as B
from ...ir import decompositions as D
from ...ir import shapes
from ..errors import ShapeError, describe
from ..traced import TracedRArray
from ._core import emit, emit1, results_of


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
    shape = shapes.dot_general(lhs.shape, rhs.shape, lb, rb, lc, rc)
    dt = np.dtype(result_dtype) if result_dtype is not None else lhs.dtype
    attrs = {"dot_dimension_numbers": B.dot_dimension_numbers(lb, rb, lc, rc)}
    if precision is not None:
        p = hlo.PrecisionAttr.get(precision)
        attrs["precision_config"] = ir.ArrayAttr.get([p, p])
    return emit1("stablehlo.dot_general", [lhs, rhs], shape, dt, attrs)


def cholesky(a: TracedRArray, *, lower: bool = True) -> TracedRArray:
    """``stablehlo.cholesky`` of a (batch of) symmetric positive definite matrices: NaN where
    the factorization fails."""
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2] or a.dtype.kind not in "fc":
        raise ShapeError(f"cholesky needs square float matrices, got {describe(a)}")
    return emit1("stablehlo.cholesky", [a], a.shape, a.dtype, {"lower": ir.BoolAttr.get(lower)})


def decomposition(kind: str, operands: Sequence[TracedRArray], **options) -> list[TracedRArray]:
    """A decomposition marker (``reactant.ir.decompositions``: lu, solve, qr, svd, eigh, eig)
    on (batches of) matrices; the caller has checked shapes and dtypes."""
    specs = D.result_specs(kind, [(x.shape, x.dtype) for x in operands], options)
    op = emit("stablehlo.custom_call", operands, specs, D.attributes(kind, options))
    return results_of(op, specs)
