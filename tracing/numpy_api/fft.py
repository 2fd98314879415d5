"""``numpy.fft`` for traced arrays: the transforms lowered to ``stablehlo.fft`` with NumPy's
sizes (``n``/``s``), axes, ``norm`` and result dtypes, and ``fftshift``/``ifftshift``.

``stablehlo.fft`` transforms the 1 to 3 trailing dims of its operand, so the transformed axes
are moved to the end and back (transposes), more than three axes are transformed three at a
time, and ``n``/``s`` crop or zero-pad the input first. XLA scales the inverse transforms by
``1/n``; the other norms multiply by a constant. ``hfft``/``ihfft`` are ``irfft``/``rfft`` of
the conjugate with the opposite norm, as NumPy defines them. Repeated axes (``axes=(0, 0)``)
are transformed one after the other, in NumPy's order.

``fftfreq``/``rfftfreq`` need no implementation: they do not dispatch, and NumPy's own code
computes them from ``n`` and ``d`` (a NumPy constant for Python values, traced arithmetic for a
traced ``d``).
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Sequence

import numpy as np

from .. import ops
from ..dtypes import real_dtype
from ..errors import ConcretizationError, DTypeError, OptionError, describe
from ..traced import TracedRArray
from ._registry import implements
from .convert import as_traced, normalize_axis
from .shape import roll

_SWAPPED_NORM = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
_COMPUTE = {np.dtype(np.complex64), np.dtype(np.complex128)}


# -- arguments and dtypes ---------------------------------------------------------------------
def _check_norm(norm) -> None:
    if norm not in _SWAPPED_NORM:
        raise OptionError(f'numpy.fft: invalid norm value {norm!r}; should be "backward", "ortho" or "forward"')


def _size(n, what: str = "n") -> int:
    if isinstance(n, TracedRArray):
        raise ConcretizationError(f"numpy.fft: {what} is a traced value; it sets the result's shape",
                                  hint="pass the transform length as a Python int")
    try:
        n = operator.index(n)
    except TypeError:
        raise OptionError(f"numpy.fft: {what} must be an integer, got {n!r}") from None
    if n < 1:
        raise OptionError(f"numpy.fft: invalid number of FFT data points ({n}) specified")
    return n


def _complex_dtype(dt: np.dtype, func: str) -> np.dtype:
    """NumPy 2's result dtype of a complex transform: float16/float32 -> complex64, other real
    and integer dtypes -> complex128, complex dtypes kept."""
    try:
        out = np.dtype(np.result_type(dt, 1j))
    except TypeError:
        out = None
    if out not in _COMPUTE:
        raise DTypeError(f"numpy.fft.{func} does not accept {dt}", hint="convert to float32/float64 or complex")
    return out


def _real_dtype(dt: np.dtype) -> np.dtype:
    """NumPy 2's result dtype of a complex-to-real transform (float16 stays float16)."""
    return np.dtype(np.result_type(real_dtype(dt), 1.0))


def _as_complex(a, func: str) -> TracedRArray:
    x = as_traced(a)
    return ops.convert(x, _complex_dtype(x.dtype, func))


def _as_real(a, func: str) -> tuple[TracedRArray, np.dtype]:
    """The real input of rfft: converted to the real part of its complex result dtype."""
    x = as_traced(a)
    if x.dtype.kind == "c":
        raise DTypeError(f"numpy.fft.{func} needs a real input, got {describe(x)}",
                         hint="use numpy.fft.fft/fftn for complex input")
    out = _complex_dtype(x.dtype, func)
    return ops.convert(x, real_dtype(out)), out


# -- the transform ----------------------------------------------------------------------------
def _resize(x: TracedRArray, shape: Sequence[int]) -> TracedRArray:
    """Crop or zero-pad each dim at its end (NumPy's ``n``/``s``)."""
    if tuple(shape) == x.shape:
        return x
    high = [int(t) - int(n) for t, n in zip(shape, x.shape)]
    return ops.pad(x, ops.full((), 0, x.dtype), [0] * x.ndim, high)


def _along(x: TracedRArray, kind: str, axes: Sequence[int], lengths: Sequence[int]) -> TracedRArray:
    """One stablehlo.fft over ``axes`` (at most 3), moved to the end for it."""
    perm = [d for d in range(x.ndim) if d not in axes] + list(axes)
    y = ops.fft(ops.transpose(x, perm), kind, lengths)
    return ops.transpose(y, np.argsort(perm))


def _scale(x: TracedRArray, norm, inverse: bool, total: int) -> TracedRArray:
    """NumPy's normalisation, given that XLA's inverse transforms already divide by ``total``."""
    norm = norm or "backward"
    if norm == "ortho":
        f = 1 / math.sqrt(total) if not inverse else math.sqrt(total)
    elif norm == "forward":
        f = 1.0 / total if not inverse else float(total)
    else:
        f = 1.0
    if f == 1.0:
        return x
    return ops.multiply(x, ops.full(x.shape, f, x.dtype))


def _transform(x: TracedRArray, kind: str, axes: Sequence[int], lengths: Sequence[int], norm) -> TracedRArray:
    """The ``kind`` transform (FFT, IFFT, RFFT or IRFFT; the real ones along the last of
    ``axes``) over distinct ``axes`` with transform ``lengths``, normalised as NumPy's ``norm``."""
    inverse = kind in ("IFFT", "IRFFT")
    target = list(x.shape)
    for ax, n in zip(axes, lengths):
        target[ax] = n
    if kind == "IRFFT":
        target[axes[-1]] = lengths[-1] // 2 + 1
    x = _resize(x, target)
    # groups of up to 3 axes, the one holding the last axis first: a real-to-complex transform
    # runs before the complex ones, a complex-to-real one after them
    groups = [range(max(0, i - 3), i) for i in range(len(axes), 0, -3)]
    if kind == "IRFFT":
        groups = groups[::-1]
    for g in groups:
        gkind = kind if g.stop == len(axes) else ("IFFT" if inverse else "FFT")
        x = _along(x, gkind, [axes[i] for i in g], [lengths[i] for i in g])
    return _scale(x, norm, inverse, math.prod(lengths))


# -- 1-D transforms ---------------------------------------------------------------------------
def _one(x: TracedRArray, kind: str, n, axis, norm, default_n) -> TracedRArray:
    _check_norm(norm)
    ax = normalize_axis(axis, x.ndim)
    n = default_n(x.shape[ax]) if n is None else _size(n)
    return _transform(x, kind, [ax], [n], norm)


def _same(m: int) -> int:
    return _size(m, "the length of the transformed axis")


def _half(m: int) -> int:
    return _size(2 * (m - 1), f"the default output length 2*({m}-1)")


@implements(np.fft.fft)
def fft(a, n=None, axis=-1, norm=None):
    return _one(_as_complex(a, "fft"), "FFT", n, axis, norm, _same)


@implements(np.fft.ifft)
def ifft(a, n=None, axis=-1, norm=None):
    return _one(_as_complex(a, "ifft"), "IFFT", n, axis, norm, _same)


@implements(np.fft.rfft)
def rfft(a, n=None, axis=-1, norm=None):
    x, _ = _as_real(a, "rfft")
    return _one(x, "RFFT", n, axis, norm, _same)


def _irfft(a, n, axis, norm, func: str, conj: bool = False) -> TracedRArray:
    x = as_traced(a)
    out = _real_dtype(x.dtype)
    x = ops.convert(x, _complex_dtype(x.dtype, func))
    if conj:
        x = ops.conj(x)
    return ops.convert(_one(x, "IRFFT", n, axis, norm, _half), out)


@implements(np.fft.irfft)
def irfft(a, n=None, axis=-1, norm=None):
    return _irfft(a, n, axis, norm, "irfft")


@implements(np.fft.hfft)
def hfft(a, n=None, axis=-1, norm=None):
    _check_norm(norm)
    return _irfft(a, n, axis, _SWAPPED_NORM[norm], "hfft", conj=True)


@implements(np.fft.ihfft)
def ihfft(a, n=None, axis=-1, norm=None):
    _check_norm(norm)
    x, _ = _as_real(a, "ihfft")
    return ops.conj(_one(x, "RFFT", n, axis, _SWAPPED_NORM[norm], _same))


# -- n-D transforms ---------------------------------------------------------------------------
def _cook(x: TracedRArray, s, axes, invreal: bool) -> tuple[list[int], list[int]]:
    """NumPy's defaults for ``s`` and ``axes`` (normalised axes, sizes as ints)."""
    if s is not None and axes is None:
        warnings.warn("`axes` should not be `None` if `s` is not `None` (deprecated in NumPy 2.0); "
                      "pass axes explicitly", DeprecationWarning, stacklevel=4)
    if isinstance(s, TracedRArray):
        raise ConcretizationError("numpy.fft: s is a traced value; it sets the result's shape",
                                  hint="pass the sizes as Python ints")
    if axes is None:
        axes = list(range(-len(s), 0)) if s is not None else list(range(x.ndim))
    axes = [normalize_axis(a, x.ndim) for a in ([axes] if isinstance(axes, (int, np.integer)) else axes)]
    if s is None:
        s = [x.shape[a] for a in axes]
        if invreal and axes:
            s[-1] = 2 * (x.shape[axes[-1]] - 1)
    else:
        s = list(s)
        if len(s) != len(axes):
            raise OptionError(f"numpy.fft: shape {tuple(s)} and axes {tuple(axes)} have different lengths")
        if None in s:
            warnings.warn("passing None in `s` is deprecated in NumPy 2.0", DeprecationWarning, stacklevel=4)
        last = len(s) - 1
        s = [x.shape[a] if v == -1 else
             (2 * (x.shape[a] - 1) if invreal and i == last else x.shape[a]) if v is None else v
             for i, (v, a) in enumerate(zip(s, axes))]
    what = [f"s[{i}]" for i in range(len(s))]
    return [_size(v, w) for v, w in zip(s, what)], axes


def _nd(a, s, axes, norm, kind: str, func: str) -> TracedRArray:
    _check_norm(norm)
    x = as_traced(a)
    invreal = kind == "IRFFT"
    s, axes = _cook(x, s, axes, invreal)
    if not axes:
        if kind in ("RFFT", "IRFFT"):
            raise OptionError(f"numpy.fft.{func} needs at least one axis")
        return x  # NumPy returns the input unchanged (no transform, no conversion)
    if kind == "RFFT":
        x, _ = _as_real(x, func)
    else:
        out = _real_dtype(x.dtype)
        x = ops.convert(x, _complex_dtype(x.dtype, func))
    if len(set(axes)) == len(axes):
        y = _transform(x, kind, axes, s, norm)
    else:  # a repeated axis: one 1-D transform at a time, in NumPy's order
        y = x
        if kind == "RFFT":
            y = _transform(y, "RFFT", [axes[-1]], [s[-1]], norm)
            for i in range(len(axes) - 2, -1, -1):
                y = _transform(y, "FFT", [axes[i]], [s[i]], norm)
        elif kind == "IRFFT":
            for i in range(len(axes) - 1):
                y = _transform(y, "IFFT", [axes[i]], [s[i]], norm)
            y = _transform(y, "IRFFT", [axes[-1]], [s[-1]], norm)
        else:
            for i in range(len(axes) - 1, -1, -1):
                y = _transform(y, kind, [axes[i]], [s[i]], norm)
    return ops.convert(y, out) if kind == "IRFFT" else y


@implements(np.fft.fftn)
def fftn(a, s=None, axes=None, norm=None):
    return _nd(a, s, axes, norm, "FFT", "fftn")


@implements(np.fft.ifftn)
def ifftn(a, s=None, axes=None, norm=None):
    return _nd(a, s, axes, norm, "IFFT", "ifftn")


@implements(np.fft.rfftn)
def rfftn(a, s=None, axes=None, norm=None):
    return _nd(a, s, axes, norm, "RFFT", "rfftn")


@implements(np.fft.irfftn)
def irfftn(a, s=None, axes=None, norm=None):
    return _nd(a, s, axes, norm, "IRFFT", "irfftn")


@implements(np.fft.fft2)
def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _nd(a, s, axes, norm, "FFT", "fft2")


@implements(np.fft.ifft2)
def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _nd(a, s, axes, norm, "IFFT", "ifft2")


@implements(np.fft.rfft2)
def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return _nd(a, s, axes, norm, "RFFT", "rfft2")


@implements(np.fft.irfft2)
def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return _nd(a, s, axes, norm, "IRFFT", "irfft2")


# -- shifts -----------------------------------------------------------------------------------
def _shift(x, axes, sign: int) -> TracedRArray:
    x = as_traced(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    shifts = [sign * (x.shape[normalize_axis(a, x.ndim)] // 2) for a in axes]
    return roll(x, shifts, tuple(axes))


@implements(np.fft.fftshift)
def fftshift(x, axes=None):
    return _shift(x, axes, 1)


@implements(np.fft.ifftshift)
def ifftshift(x, axes=None):
    return _shift(x, axes, -1)
