"""``stablehlo.dot_general`` with its shape rule (batch dims first, then lhs free, rhs free)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from ..errors import ShapeError, describe
from ..traced import TracedRArray
from ._core import emit1


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
    lfree = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    shape = tuple([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lfree] + [rhs.shape[d] for d in rfree])
    dt = np.dtype(result_dtype) if result_dtype is not None else lhs.dtype
    attrs = {
        "dot_dimension_numbers": hlo.DotDimensionNumbers.get(
            lhs_batching_dimensions=list(lb),
            rhs_batching_dimensions=list(rb),
            lhs_contracting_dimensions=list(lc),
            rhs_contracting_dimensions=list(rc),
        )
    }
    if precision is not None:
        from jaxlib.mlir import ir

        p = hlo.PrecisionAttr.get(precision)
        attrs["precision_config"] = ir.ArrayAttr.get([p, p])
    return emit1("stablehlo.dot_general", [lhs, rhs], shape, dt, attrs)
