"""``stablehlo.fft``: the Ops layer's checks over ``reactant.ir.build.fft`` (its shape rule:
``reactant.ir.shapes.fft``)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...ir import build as B
from ..errors import DTypeError, ShapeError, describe
from ..traced import TracedRArray
from ._core import build

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def fft(x: TracedRArray, fft_type: str, lengths: Sequence[int]) -> TracedRArray:
    """``stablehlo.fft`` over the last ``len(lengths)`` (1 to 3) dims of ``x``: ``FFT``/``IFFT``
    (complex64/complex128 to the same), ``RFFT`` (float32/float64 to complex, the last dim
    ``n -> n // 2 + 1``), ``IRFFT`` (complex to real, the last dim ``n // 2 + 1 -> n``). IFFT and
    IRFFT are scaled by ``1 / prod(lengths)``."""
    lengths = tuple(int(n) for n in lengths)
    k = len(lengths)
    if not 1 <= k <= 3 or k > x.ndim or any(n < 1 for n in lengths):
        raise ShapeError(f"stablehlo.fft {fft_type} of {describe(x)} with fft_length {list(lengths)}: "
                         "1 to 3 positive lengths over trailing dims are needed")
    if fft_type in ("FFT", "IFFT", "IRFFT"):
        if x.dtype not in _REAL_OF:
            raise DTypeError(f"stablehlo.fft {fft_type} needs complex64/complex128, got {describe(x)}")
    elif fft_type == "RFFT":
        if x.dtype not in _COMPLEX_OF:
            raise DTypeError(f"stablehlo.fft RFFT needs float32/float64, got {describe(x)}")
    else:
        raise ValueError(f"unknown fft_type {fft_type!r}")
    expect = lengths[:-1] + ((lengths[-1] // 2 + 1,) if fft_type == "IRFFT" else (lengths[-1],))
    if x.shape[x.ndim - k:] != expect:
        raise ShapeError(f"stablehlo.fft {fft_type} with fft_length {list(lengths)} needs trailing dims "
                         f"{expect}, got {describe(x)}")
    return build(B.fft, x.value, fft_type, lengths)
