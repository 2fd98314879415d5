"""Order statistics: median, quantile, percentile and their NaN-ignoring variants.

NumPy's definitions, followed step by step so that values and dtypes agree:

- ``median``/``quantile``/``percentile`` of a slice holding a NaN are NaN (a sort puts NaN
  last, so the slice's last sorted element tells);
- ``nanmedian``/``nanquantile``/``nanpercentile`` use the slice's non-NaN values only (their
  count is traced, so the positions are too); an all-NaN slice gives NaN;
- quantiles interpolate linearly (``method="linear"``) as NumPy's ``_lerp`` does, at the
  virtual index ``(n - 1) * q``; a Python scalar ``q`` keeps the array's float dtype, an array
  ``q`` promotes with it (NumPy's ``weak_q``);
- the median of an even count is the mean of the two middle values.

``q`` must be static (Python or NumPy numbers): the result's shape depends on it.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import is_complex, is_float
from ..errors import DTypeError, IndexError_, OptionError, UnsupportedError, describe
from ..traced import TracedRArray
from ._registry import implements
from .convert import as_traced, normalize_axes


# -- axes ---------------------------------------------------------------------------------------
def _reduced_last(x: TracedRArray, axis) -> tuple[TracedRArray, tuple[int, ...], tuple[int, ...]]:
    """``x`` with the reduced axes merged into one last axis (NumPy's ``_ureduce``), the kept
    shape, and the shape ``keepdims=True`` gives."""
    axes = normalize_axes(axis, x.ndim)
    kept = [d for d in range(x.ndim) if d not in axes]
    keep_shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
    kept_shape = tuple(x.shape[d] for d in kept)
    if kept + list(axes) != list(range(x.ndim)):
        x = ops.transpose(x, kept + list(axes))
    n = int(np.prod([x.shape[d] for d in range(len(kept), x.ndim)], dtype=np.int64))
    return ops.reshape(x, kept_shape + (n,)), kept_shape, keep_shape


def _last(s: TracedRArray, i: int) -> TracedRArray:
    """``s[..., i]`` for a static ``i``."""
    lo = [0] * s.ndim
    hi = list(s.shape)
    lo[-1], hi[-1] = i, i + 1
    return ops.reshape(ops.slice(s, lo, hi), s.shape[:-1])


def _at(s: TracedRArray, idx: TracedRArray) -> TracedRArray:
    """``s[..., idx]`` with one traced index per slice (``idx`` has shape ``s.shape[:-1]``)."""
    return ops.reshape(np.take_along_axis(s, ops.reshape(idx, idx.shape + (1,)), axis=-1), s.shape[:-1])


def _sorted(x: TracedRArray) -> TracedRArray:
    from .ordering import sort  # NaN last, as NumPy sorts

    return sort(x, -1)


def _nan_slices(s: TracedRArray) -> TracedRArray | None:
    """Slices holding a NaN (their last sorted element is NaN); None when none can."""
    if not is_float(s.dtype) or s.shape[-1] == 0:
        return None
    last = _last(s, s.shape[-1] - 1)
    return ops.compare(last, last, "NE")


def _nan_where(mask: TracedRArray | None, r: TracedRArray) -> TracedRArray:
    if mask is None or not is_float(r.dtype):
        return r
    m = ops.broadcast_in_dim(mask, r.shape, range(r.ndim - mask.ndim, r.ndim))
    return ops.select(m, ops.full(r.shape, np.nan, r.dtype), r)


def _checked(a, name: str) -> TracedRArray:
    x = as_traced(a)
    if is_complex(x.dtype):
        raise DTypeError(f"{name}: a must be an array of real numbers, got {describe(x)}")
    return x


def _finish(r: TracedRArray, lead: tuple[int, ...], keep_shape: tuple[int, ...], keepdims: bool) -> TracedRArray:
    """``r`` (shape ``lead`` + kept dims) with the reduced dims back as 1s when ``keepdims``."""
    if keepdims:
        return ops.reshape(r, lead + keep_shape)
    return r


# -- median -------------------------------------------------------------------------------------
def _mean_dtypes(dt: np.dtype) -> tuple[np.dtype, np.dtype]:
    """(accumulation, result) dtypes of NumPy's mean: float64 for integers and bools, float32
    accumulation for float16."""
    if not is_float(dt):
        return np.dtype(np.float64), np.dtype(np.float64)
    return (np.dtype(np.float32) if dt == np.float16 else dt), dt


def _mean2(lo: TracedRArray, hi: TracedRArray, dt: np.dtype) -> TracedRArray:
    """The mean of two values as NumPy's mean computes it: (lo + hi) / 2."""
    acc, res = _mean_dtypes(dt)
    lo, hi = ops.convert(lo, acc), ops.convert(hi, acc)
    return ops.convert(ops.divide(ops.add(lo, hi), ops.full(lo.shape, 2, acc)), res)


@implements(np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The middle value (mean of the two middle ones); NaN for slices holding a NaN."""
    x = _checked(a, "median")
    x, kept_shape, keep_shape = _reduced_last(x, axis)
    n = x.shape[-1]
    res = _mean_dtypes(x.dtype)[1]
    if n == 0:  # NumPy: the mean of nothing, NaN (with a warning)
        r = ops.full(kept_shape, np.nan, res)
    else:
        s = _sorted(x)
        if n % 2:
            r = ops.convert(_last(s, n // 2), res)
        else:
            r = _mean2(_last(s, n // 2 - 1), _last(s, n // 2), x.dtype)
        r = _nan_where(_nan_slices(s), r)
    return _finish(r, (), keep_shape, keepdims)


@implements(np.nanmedian)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of each slice's non-NaN values; NaN for an all-NaN slice."""
    x = _checked(a, "nanmedian")
    if not is_float(x.dtype):
        return median(x, axis, keepdims=keepdims)
    x, kept_shape, keep_shape = _reduced_last(x, axis)
    if x.shape[-1] == 0:
        return _finish(ops.full(kept_shape, np.nan, x.dtype), (), keep_shape, keepdims)
    s = _sorted(x)
    m = _valid_count(s)
    one = ops.full(m.shape, 1, m.dtype)
    two = ops.full(m.shape, 2, m.dtype)
    zero = ops.full(m.shape, 0, m.dtype)
    hi_i = ops.divide(m, two)  # m // 2 (m >= 0)
    lo_i = ops.divide(ops.subtract(m, one), two)
    lo_i = ops.select(ops.compare(lo_i, zero, "LT"), zero, lo_i)
    hi_i = ops.select(ops.compare(hi_i, ops.subtract(m, one), "GT"), lo_i, hi_i)
    lo, hi = _at(s, lo_i), _at(s, hi_i)
    odd = ops.compare(ops.remainder(m, two), one, "EQ")
    r = ops.select(odd, lo, _mean2(lo, hi, x.dtype))
    r = ops.select(ops.compare(m, zero, "EQ"), ops.full(r.shape, np.nan, r.dtype), r)
    return _finish(r, (), keep_shape, keepdims)


def _valid_count(s: TracedRArray) -> TracedRArray:
    """The number of non-NaN values of each slice (int64)."""
    ok = ops.compare(s, s, "EQ")
    return np.sum(ok, axis=-1, dtype=np.int64)


# -- quantile -----------------------------------------------------------------------------------
def _static_q(q, name: str) -> np.ndarray:
    if isinstance(q, TracedRArray) or getattr(q, "__reactant_concrete__", None) is not None:
        raise UnsupportedError(f"numpy.{name} with an array q on the device is not supported inside a trace",
                               hint="pass q as Python or NumPy numbers (the result's shape depends on it)")
    qa = np.asanyarray(q)
    if qa.dtype == object or qa.dtype.kind not in "biuf":
        raise DTypeError(f"{name}: q must be real numbers, got {qa.dtype}")
    return qa


def _check_q(qa: np.ndarray) -> None:
    if qa.ndim > 2:
        raise OptionError("q must be a scalar or 1d")
    if qa.size and not (np.all(qa >= 0) and np.all(qa <= 1)):
        raise OptionError("Quantiles must be in the range [0, 1]")


def _check_method(method: str, weights, name: str) -> None:
    if method != "linear" or weights is not None:
        raise UnsupportedError(f"numpy.{name}(method={method!r}{', weights=...' if weights is not None else ''}) "
                               "is not supported inside a trace", hint="use the default method='linear'")


def _lerp(lo: TracedRArray, hi: TracedRArray, t) -> TracedRArray:
    """NumPy's ``_lerp`` for a static weight ``t`` (a Python float or a NumPy scalar)."""
    d = np.subtract(hi, lo)
    if t >= 0.5:
        return np.subtract(hi, np.multiply(d, 1 - t))
    return np.add(lo, np.multiply(d, t))


def _lerp_traced(lo: TracedRArray, hi: TracedRArray, t: TracedRArray, one_minus_t: TracedRArray,
                 upper: TracedRArray) -> TracedRArray:
    """NumPy's ``_lerp`` with a traced weight ``t`` (``1 - t`` and ``upper = t >= 0.5`` computed
    in q's dtype, where NumPy computes them)."""
    d = np.subtract(hi, lo)
    near_lo = np.add(lo, np.multiply(d, t))
    near_hi = np.subtract(hi, np.multiply(d, one_minus_t))
    return np.where(upper, near_hi, near_lo)


def _quantile(a, qa: np.ndarray, weak_q: bool, axis, keepdims: bool, name: str) -> TracedRArray:
    x = _checked(a, name)
    _check_q(qa)
    x, kept_shape, keep_shape = _reduced_last(x, axis)
    n = x.shape[-1]
    if qa.size == 0:
        return _empty_q(x, qa, kept_shape, keep_shape, keepdims)
    if n == 0:
        raise IndexError_(f"{name} of an empty slice: index -1 is out of bounds for axis 0 with size 0")
    s = _sorted(x)
    vi = (n - 1) * qa  # NumPy's virtual indexes, in q's dtype
    outs = []
    for v in np.ravel(vi):
        if vi.dtype.kind in "biu":  # integer q: positions, no interpolation (a's dtype)
            outs.append(_last(s, int(v)))
            continue
        prev = np.floor(v)
        if v >= n - 1:  # NumPy takes the last value twice, its weight measured from index -1
            lo_i = hi_i = n - 1
            prev = -1
        else:
            lo_i, hi_i = int(prev), int(prev) + 1
        gamma = np.asarray(v - prev, dtype=vi.dtype)[()]
        outs.append(_lerp(_last(s, lo_i), _last(s, hi_i), float(gamma) if weak_q else gamma))
    r = _stack(outs, qa.shape)
    r = _nan_where(_nan_slices(s), r)
    return _finish(r, qa.shape, keep_shape, keepdims)


def _stack(outs: list[TracedRArray], qshape: tuple[int, ...]) -> TracedRArray:
    if not qshape:
        return outs[0]
    r = ops.concatenate([ops.reshape(o, (1,) + o.shape) for o in outs], 0)
    return ops.reshape(r, qshape + outs[0].shape)


def _empty_q(x: TracedRArray, qa: np.ndarray, kept_shape, keep_shape, keepdims: bool) -> TracedRArray:
    """The empty result of an empty ``q``, in the dtype NumPy gives it."""
    dt = x.dtype if qa.dtype.kind in "biu" else np.result_type(x.dtype, qa.dtype)
    return ops.full(qa.shape + (keep_shape if keepdims else kept_shape), 0, dt)


def _nanquantile(a, qa: np.ndarray, weak_q: bool, axis, keepdims: bool, name: str) -> TracedRArray:
    x = _checked(a, name)
    if not is_float(x.dtype):
        return _quantile(x, qa, weak_q, axis, keepdims, name)
    _check_q(qa)
    x, kept_shape, keep_shape = _reduced_last(x, axis)
    if qa.size == 0:
        return _empty_q(x, qa, kept_shape, keep_shape, keepdims)
    if x.shape[-1] == 0:  # NumPy: nanmean of nothing
        return _finish(ops.full(kept_shape, np.nan, x.dtype), (), keep_shape, keepdims)
    s = _sorted(x)
    m = _valid_count(s)
    last = np.subtract(m, 1)  # the last non-NaN position (-1 for an all-NaN slice)
    zero = ops.full(m.shape, 0, m.dtype)
    top = np.maximum(last, zero)
    vdt = qa.dtype
    rdt = x.dtype if weak_q else np.result_type(x.dtype, vdt)  # NumPy's weak_q promotion
    outs = []
    for q in np.ravel(qa):
        if vdt.kind in "biu":  # q is 0 or 1: the first or the last valid value
            outs.append(_at(s, zero if int(q) == 0 else top))
            continue
        lastf = ops.convert(last, vdt)
        v = np.multiply(lastf, np.asarray(q, vdt)[()])  # (m - 1) * q, in q's dtype
        above = np.greater_equal(v, lastf)
        # NumPy's previous index: floor(v), or -1 (the last value) when v is past the end
        prev = ops.select(above, ops.full(v.shape, -1, vdt), np.floor(v))
        lo_i = ops.select(above, top, np.maximum(ops.convert(prev, np.int64), zero))
        hi_i = ops.select(above, top, np.minimum(np.add(lo_i, 1), top))
        gamma = np.subtract(v, prev)
        one_minus = np.subtract(np.asarray(1, vdt)[()], gamma)
        outs.append(_lerp_traced(_at(s, lo_i), _at(s, hi_i), ops.convert(gamma, rdt), ops.convert(one_minus, rdt),
                                 np.greater_equal(gamma, 0.5)))
    r = _stack(outs, qa.shape)
    empty = ops.compare(m, zero, "EQ")
    r = _nan_where(empty, r)
    return _finish(r, qa.shape, keep_shape, keepdims)


@implements(np.quantile)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None, interpolation=None):
    """Linear-interpolation quantiles; NaN for slices holding a NaN."""
    _check_method(interpolation or method, weights, "quantile")
    return _quantile(a, _static_q(q, "quantile"), type(q) in (int, float), axis, keepdims, "quantile")


@implements(np.percentile)
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None, interpolation=None):
    """``quantile(a, q / 100)``, NaN for slices holding a NaN."""
    _check_method(interpolation or method, weights, "percentile")
    qa = np.asanyarray(np.true_divide(_static_q(q, "percentile"), 100))
    return _quantile(a, qa, type(q) in (int, float), axis, keepdims, "percentile")


@implements(np.nanquantile)
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None, interpolation=None):
    """Quantiles of each slice's non-NaN values; NaN for an all-NaN slice."""
    _check_method(interpolation or method, weights, "nanquantile")
    return _nanquantile(a, _static_q(q, "nanquantile"), type(q) in (int, float), axis, keepdims, "nanquantile")


@implements(np.nanpercentile)
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None, interpolation=None):
    """Percentiles of each slice's non-NaN values; NaN for an all-NaN slice."""
    _check_method(interpolation or method, weights, "nanpercentile")
    qa = np.asanyarray(np.true_divide(_static_q(q, "nanpercentile"), 100))
    return _nanquantile(a, qa, type(q) in (int, float), axis, keepdims, "nanpercentile")
