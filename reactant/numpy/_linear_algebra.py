"""The core linear algebra functions of the standard (``matmul``, ``matrix_transpose``,
``tensordot``, ``vecdot``), shared with the ``linalg`` extension."""

from __future__ import annotations

from typing import Sequence, Union

import numpy as np

from ._base import Array


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product (1-D operands are vectors; leading axes broadcast)."""
    return np.matmul(x1, x2)


def matrix_transpose(x: Array, /) -> Array:
    """``x`` with its last two axes swapped."""
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got {x.ndim}")
    return np.swapaxes(x, -1, -2)


def tensordot(x1: Array, x2: Array, /, *,
              axes: Union[int, tuple[Sequence[int], Sequence[int]]] = 2) -> Array:
    """Sum of products over the last ``axes`` axes of ``x1`` and first of ``x2`` (or the
    given pairs of axes)."""
    if not isinstance(axes, int):
        axes = (tuple(axes[0]), tuple(axes[1]))
    return np.tensordot(x1, x2, axes=axes)


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot product along ``axis`` (``x1`` conjugated), other axes broadcast."""
    ndim = max(x1.ndim, x2.ndim)
    if not -ndim <= axis < ndim:
        raise IndexError(f"axis {axis} is out of bounds for dimension {ndim}")
    if axis >= 0:
        axis -= ndim  # the standard counts axes of the broadcast shape: from the end
    if -axis > min(x1.ndim, x2.ndim):
        raise ValueError(f"vecdot: axis {axis} is missing from an operand of shape "
                         f"{min((x1.shape, x2.shape), key=len)}")
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: axis {axis} has length {x1.shape[axis]} in x1 and {x2.shape[axis]} in x2")
    return np.vecdot(x1, x2, axis=axis)
