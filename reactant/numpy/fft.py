"""``reactant.numpy.fft``: the Array API ``fft`` extension over ``numpy.fft`` (which runs
eagerly on device arrays and lowers to ``stablehlo.fft`` inside a trace)."""

from __future__ import annotations

from typing import Literal, Optional, Sequence

import numpy as np

from ._base import Array, check_device, to_array
from ._dtypes import as_dtype

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

Norm = Literal["backward", "ortho", "forward"]


def _one_axis(name: str, numpy_fn):
    def f(x: Array, /, *, n: Optional[int] = None, axis: int = -1, norm: Norm = "backward") -> Array:
        return numpy_fn(x, n=n, axis=axis, norm=norm)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``numpy.fft.{name}`` along ``axis`` (``n``: crop or zero-pad that axis first)."
    return f


def _many_axes(name: str, numpy_fn):
    def f(x: Array, /, *, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None,
          norm: Norm = "backward") -> Array:
        if s is not None and axes is None:
            axes = tuple(range(-len(s), 0))  # the standard: s alone names the last len(s) axes
        return numpy_fn(x, s=None if s is None else tuple(s), axes=None if axes is None else tuple(axes), norm=norm)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``numpy.fft.{name}`` over ``axes`` (all by default; ``s``: their sizes)."
    return f


fft = _one_axis("fft", np.fft.fft)
ifft = _one_axis("ifft", np.fft.ifft)
rfft = _one_axis("rfft", np.fft.rfft)
irfft = _one_axis("irfft", np.fft.irfft)
hfft = _one_axis("hfft", np.fft.hfft)
ihfft = _one_axis("ihfft", np.fft.ihfft)
fftn = _many_axes("fftn", np.fft.fftn)
ifftn = _many_axes("ifftn", np.fft.ifftn)
rfftn = _many_axes("rfftn", np.fft.rfftn)
irfftn = _many_axes("irfftn", np.fft.irfftn)


def fftfreq(n: int, /, *, d: float = 1.0, dtype=None, device=None) -> Array:
    """Sample frequencies of an ``n``-point FFT with spacing ``d`` (default float64)."""
    dtype = np.float64 if dtype is None else as_dtype(dtype)
    return to_array(np.fft.fftfreq(n, d).astype(dtype), device=check_device(device))


def rfftfreq(n: int, /, *, d: float = 1.0, dtype=None, device=None) -> Array:
    """Non-negative sample frequencies of an ``n``-point real FFT (default float64)."""
    dtype = np.float64 if dtype is None else as_dtype(dtype)
    return to_array(np.fft.rfftfreq(n, d).astype(dtype), device=check_device(device))


def fftshift(x: Array, /, *, axes: Optional[Sequence[int]] = None) -> Array:
    """``x`` with the zero frequency moved to the centre of ``axes`` (all by default)."""
    return np.fft.fftshift(x, axes=axes if axes is None or isinstance(axes, int) else tuple(axes))


def ifftshift(x: Array, /, *, axes: Optional[Sequence[int]] = None) -> Array:
    """The inverse of ``fftshift``."""
    return np.fft.ifftshift(x, axes=axes if axes is None or isinstance(axes, int) else tuple(axes))
