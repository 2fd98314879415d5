"""Statistics and numerics on traced arrays: cov, corrcoef, correlate, histogram, histogram2d, bincount,
digitize, interp, trapezoid, polyval, gradient.

Result shapes must be static, so the functions whose NumPy output length depends on the data
need that length from static arguments: ``bincount`` needs ``minlength=``, ``histogram`` needs
static bins (an integer count with a static ``range=``, or an array of edges)."""

from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from .. import ops
from ..control_flow import fori_loop
from ..dtypes import canonical, is_complex, is_float, result_type
from ..errors import ArgumentError, DTypeError, IndexError_, ShapeError, UnsupportedError, describe
from ..traced import TracedRArray
from ._registry import implements
from .convert import as_traced, broadcast_to, contains_traced, dtype_for_promotion, normalize_axis
from .indexing import getitem


def _traced(*xs) -> bool:
    return any(isinstance(x, TracedRArray) for x in xs)


def _take(x: TracedRArray, start: int, stop: int, axis: int) -> TracedRArray:
    """``x[start:stop]`` along ``axis`` (static bounds, negative ones count from the end)."""
    n = x.shape[axis]
    start, stop, _ = slice(start, stop).indices(n)
    lo = [0] * x.ndim
    hi = list(x.shape)
    lo[axis], hi[axis] = start, max(stop, start)
    return ops.slice(x, lo, hi)


# -- cov / corrcoef ---------------------------------------------------------------------------
def _observations(m, rowvar: bool, dt: np.dtype) -> TracedRArray:
    """``m`` as a 2-d (variables, observations) array of dtype ``dt``."""
    x = as_traced(m, dt)
    if x.ndim > 2:
        raise ShapeError(f"cov: m has more than 2 dimensions: {describe(x)}")
    if x.ndim < 2:  # a 1-d array is one variable whatever rowvar says
        return ops.reshape(x, (1, x.size))
    if not rowvar:
        x = ops.transpose(x, [1, 0])
    return x


def _cov_weights(fweights, aweights, n: int):
    """The combined observation weights (or None) and the aweights alone, checked for shape."""
    w = None
    for name, v in (("fweights", fweights), ("aweights", aweights)):
        if v is None:
            continue
        t = as_traced(v)
        if name == "fweights" and t.dtype.kind not in "biu":
            raise DTypeError(f"cov: fweights must be integer, got {describe(t)}")
        if t.ndim != 1 or t.shape[0] != n:
            raise ShapeError(f"cov: {name} must be 1-d with one weight per observation ({n}), got {describe(t)}")
        w = t if w is None else np.multiply(w, t)
    return w


@implements(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """Covariance matrix; a single variable gives a 0-d result, as in NumPy."""
    if ddof is not None and ddof != int(ddof):
        raise DTypeError("cov: ddof must be an integer")
    if dtype is None:
        parts = [m] if y is None else [m, y]
        dtype = result_type(*[dtype_for_promotion(p) for p in parts], np.float64)
    dt = canonical(dtype)
    x = _observations(m, rowvar, dt)
    if y is not None:
        yy = _observations(y, rowvar, dt)
        if yy.shape[1] != x.shape[1]:
            raise ShapeError(f"cov: m {describe(x)} and y {describe(yy)} have different numbers of observations")
        x = ops.concatenate([x, yy], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    nvar, nobs = x.shape
    if nvar == 0:
        return ops.full((0, 0), 0, dt)
    w = _cov_weights(fweights, aweights, nobs)
    if w is None:
        avg = np.mean(x, axis=1)
        fact = ops.full((), max(nobs - ddof, 0), dt)
    else:
        wf = as_traced(w, dt)
        w_sum = np.sum(wf)
        avg = np.divide(np.sum(np.multiply(x, wf), axis=1), w_sum)
        fact = _weighted_fact(w_sum, wf, aweights, ddof, dt)
    xc = np.subtract(x, ops.reshape(avg, (nvar, 1)))
    xw = xc if w is None else np.multiply(xc, as_traced(w, dt))
    xt = ops.transpose(xw, [1, 0])
    c = np.matmul(xc, np.conj(xt) if is_complex(dt) else xt)
    c = np.multiply(c, np.divide(ops.full((), 1, dt), fact))
    return ops.reshape(c, ()) if nvar == 1 else c


def _weighted_fact(w_sum, w, aweights, ddof: int, dt) -> TracedRArray:
    """The normalisation of weighted covariance, clamped at 0 like NumPy (which warns)."""
    if ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = np.subtract(w_sum, ddof)
    else:
        a = as_traced(aweights, dt)
        fact = np.subtract(w_sum, np.divide(np.multiply(ddof, np.sum(np.multiply(w, a))), w_sum))
    return np.maximum(fact, ops.full((), 0, dt))


@implements(np.corrcoef)
def corrcoef(x, y=None, rowvar=True, bias=np._NoValue, ddof=np._NoValue, *, dtype=None):
    """Correlation coefficients: cov normalised by the standard deviations, clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:  # one variable: NumPy returns c / c (1, or NaN for zero variance)
        return np.divide(c, c)
    d = np.diagonal(c)
    sd = np.sqrt(np.real(d))
    n = sd.shape[0]
    c = np.divide(c, ops.reshape(sd, (n, 1)))
    c = np.divide(c, ops.reshape(sd, (1, n)))
    if is_complex(c.dtype):
        return ops.complex_(np.clip(np.real(c), -1, 1), np.clip(np.imag(c), -1, 1))
    return np.clip(c, -1, 1)


# -- histograms -------------------------------------------------------------------------------
def _static_edges(a: TracedRArray, bins, range_, name: str):
    """Bin edges for ``a``: a NumPy constant when they are static, else the traced edges."""
    if isinstance(bins, str):
        raise UnsupportedError(f"{name}: bins={bins!r} chooses the bin count from the data; inside a trace the "
                               "result shape must be static", hint="pass an integer bins= with range=, or an array of edges")
    if _traced(bins):
        e = as_traced(bins)
        if e.ndim != 1 or e.shape[0] < 1:
            raise ShapeError(f"{name}: bins must be a 1-d array of edges, got {describe(e)}")
        return e
    if np.ndim(bins) == 0:
        if range_ is None:
            raise UnsupportedError(
                f"{name}: integer bins without range= puts the edges at the data's min and max, which are "
                "not known while tracing", hint=f"pass a static range=(lo, hi), or an array of bin edges")
        if _traced(range_) or (isinstance(range_, (list, tuple)) and contains_traced(range_)):
            raise UnsupportedError(f"{name}: range= must be static (Python or NumPy numbers) inside a trace")
    elif np.ndim(bins) != 1 or np.any(np.diff(np.asarray(bins)) < 0):
        raise ShapeError(f"{name}: bins must be a count or a 1-d array of edges increasing monotonically")
    # NumPy itself computes static edges: an empty sample of a's dtype with the same arguments
    return np.histogram_bin_edges(np.empty(0, a.dtype), bins, range_)


def _data_edges(a: TracedRArray, bins) -> Any:
    """``bins`` equal bins from the data's min to its max, as NumPy makes them (traced edges:
    ``linspace(min, max, bins + 1)`` in the data's float type, widened by 0.5 each side when
    min == max). NumPy refuses data whose min or max is not finite: the program checks it when
    it runs (``TraceContext.check_at_run``)."""
    from ..context import current
    from ..errors import user_location

    n = operator.index(bins)
    if n < 1:
        raise ValueError("`bins` must be positive, when an integer")
    bt = np.dtype(result_type(a.dtype, np.float64)) if a.dtype.kind in "iub" else a.dtype
    if a.size == 0:
        return np.linspace(0.0, 1.0, n + 1, dtype=bt)
    lo, hi = as_traced(np.min(a), bt), as_traced(np.max(a), bt)
    finite = np.logical_and(np.isfinite(lo), np.isfinite(hi))
    loc = user_location()
    where = f"{loc[0]}:{loc[1]}" if loc else "np.histogram"
    if not current().check_at_run(finite, "autodetected range of the data is not finite", where, ValueError):
        raise UnsupportedError(
            "histogram: integer bins without range= inside a traced if or loop body: the edges come from the "
            "data's min and max, which NumPy requires to be finite (checked when the program runs only in the "
            "compiled function's own body)", hint="pass a static range=(lo, hi), or an array of bin edges")
    same = np.equal(lo, hi)
    lo = np.where(same, np.subtract(lo, as_traced(0.5, bt)), lo)
    hi = np.where(same, np.add(hi, as_traced(0.5, bt)), hi)
    return np.linspace(lo, hi, n + 1, dtype=bt)


def _bin_masks(a: TracedRArray, edges) -> TracedRArray:
    """(n, nbins) booleans: sample k is in bin i, i.e. edges[i] <= a[k] < edges[i+1], the last
    bin closed on the right; samples outside the edges (and NaNs) are in no bin."""
    e = as_traced(edges)
    dt = result_type(a.dtype, e.dtype)
    av = ops.reshape(as_traced(a, dt), (a.size, 1))
    e = as_traced(e, dt)
    nb = e.shape[0] - 1
    lo = ops.reshape(_take(e, 0, nb, 0), (1, nb))
    hi = ops.reshape(_take(e, 1, nb + 1, 0), (1, nb))
    below = np.less(av, hi)
    if nb > 0:  # the last bin includes its right edge
        last = ops.reshape(ops.iota((nb,), np.int32, 0), (1, nb))
        below = np.logical_or(below, np.logical_and(np.equal(last, nb - 1), np.equal(av, hi)))
    return np.logical_and(np.greater_equal(av, lo), below)


def _check_weights(w, a: TracedRArray, name: str) -> TracedRArray:
    t = as_traced(w)
    if t.shape != a.shape:
        raise ShapeError(f"{name}: weights {describe(t)} should have the same shape as a {describe(a)}")
    return t


@implements(np.histogram)
def histogram(a, bins=10, range=None, density=None, weights=None):
    """Counts (int64, or the weights' dtype) over static bins; edges are a NumPy constant when
    bins/range are static. Bin i holds edges[i] <= a < edges[i+1]; the last bin is closed."""
    x = as_traced(a)
    if is_complex(x.dtype):
        raise DTypeError(f"histogram of a complex array {describe(x)} is not supported")
    if range is None and not _traced(bins) and not isinstance(bins, str) and np.ndim(bins) == 0:
        edges = _data_edges(x, bins)
    else:
        edges = _static_edges(x, bins, range, "histogram")
    masks = _bin_masks(x, edges)
    if weights is None:
        hist = np.sum(masks, axis=0, dtype=np.int64)
    else:
        w = _check_weights(weights, x, "histogram")
        wv = ops.reshape(w, (w.size, 1))
        hist = np.sum(np.where(masks, wv, ops.full((), 0, w.dtype)), axis=0, dtype=w.dtype)
    if density:
        widths = np.diff(as_traced(edges, np.float64) if _traced(edges) else np.asarray(edges, np.float64))
        hist = np.divide(np.divide(hist, widths), np.sum(hist))
    return hist, edges


def _hist2d_bins(bins) -> tuple[Any, Any]:
    """histogram2d's bins split per dimension, NumPy's way: a length-2 sequence is one entry per
    dimension, anything else (a count, or one array of edges) serves both."""
    if _traced(bins):
        if bins.ndim == 1 and bins.shape[0] == 2:  # NumPy reads these as two bin counts
            raise UnsupportedError("histogram2d: traced bins of length 2 would be bin counts, which must be static")
        return bins, bins
    if isinstance(bins, (list, tuple, np.ndarray)) and len(bins) == 2:
        return bins[0], bins[1]
    return bins, bins


@implements(np.histogram2d)
def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """2-d histogram (float64 like NumPy) over static bins, with the edges of each dimension."""
    tx, ty = as_traced(x), as_traced(y)
    if tx.ndim != 1 or tx.shape != ty.shape:
        raise ShapeError(f"histogram2d: x {describe(tx)} and y {describe(ty)} must be 1-d of the same length")
    bx, by = _hist2d_bins(bins)
    rx, ry = (None, None) if range is None else (range[0], range[1])
    ex = _dd_edges(tx, bx, rx, "histogram2d")
    ey = _dd_edges(ty, by, ry, "histogram2d")
    mx = as_traced(_bin_masks(tx, ex), np.float64)
    my = as_traced(_bin_masks(ty, ey), np.float64)
    if weights is not None:
        w = _check_weights(weights, tx, "histogram2d")
        wdt = result_type(w.dtype, np.float64)
        mx, my = as_traced(mx, wdt), as_traced(my, wdt)
        my = np.multiply(my, ops.reshape(as_traced(w, wdt), (w.size, 1)))
    # H[i, j] = sum_k mx[k, i] * my[k, j]: one matrix product instead of a scatter
    h = np.matmul(ops.transpose(mx, [1, 0]), my)
    if density:
        wx = np.diff(ex if not _traced(ex) else as_traced(ex, np.float64))
        wy = np.diff(ey if not _traced(ey) else as_traced(ey, np.float64))
        area = np.multiply(ops.reshape(as_traced(wx, np.float64), (wx.shape[0], 1)),
                           ops.reshape(as_traced(wy, np.float64), (1, wy.shape[0])))
        h = np.divide(np.divide(h, np.sum(h)), area)
    return h, ex, ey


def _dd_edges(a: TracedRArray, bins, range_, name: str):
    """Edges as histogramdd makes them: float64 ``linspace(lo, hi, bins + 1)`` for a count."""
    if not _traced(bins) and np.ndim(bins) == 0:
        if range_ is None:
            raise UnsupportedError(f"{name}: integer bins without range= puts the edges at the data's min "
                                   "and max, which are not known while tracing",
                                   hint="pass a static range=[[xmin, xmax], [ymin, ymax]], or arrays of edges")
        lo, hi = float(range_[0]), float(range_[1])
        if lo > hi:
            raise ShapeError(f"{name}: max must be larger than min in range parameter")
        if lo == hi:  # NumPy widens an empty range the same way
            lo, hi = lo - 0.5, hi + 0.5
        return np.linspace(lo, hi, int(bins) + 1)
    if _traced(bins):
        return as_traced(bins)
    e = np.asarray(bins)
    if e.ndim != 1 or np.any(np.diff(e) < 0):
        raise ShapeError(f"{name}: bin edges must be a 1-d monotonically increasing array")
    return e


# -- bincount / digitize ----------------------------------------------------------------------
@implements(np.bincount)
def bincount(x, weights=None, minlength=0):
    """Counts of each value in ``[0, minlength)``. The output length must be static, so a traced
    ``x`` needs ``minlength`` as the number of bins; values outside ``[0, minlength)`` (NumPy
    would grow the output, or raise for negatives) are out of range and undefined, like
    out-of-range traced indices."""
    if not _traced(x):  # static values: NumPy's own length
        minlength = max(int(minlength), int(np.max(x)) + 1 if np.size(x) else 0)
    t = as_traced(x)
    if t.dtype.kind not in "biu":
        raise DTypeError(f"bincount: cannot count non-integer values {describe(t)}")
    if t.ndim != 1:
        raise ShapeError(f"bincount: x must be 1-d, got {describe(t)}")
    if _traced(minlength):
        raise UnsupportedError("bincount: minlength= must be a static integer inside a trace")
    n = int(minlength)
    if n < 0:
        raise ShapeError("bincount: minlength must be non-negative")
    if n == 0 and t.shape[0] > 0:
        raise IndexError_(
            f"bincount of traced values {describe(t)} without minlength=: the output length max(x)+1 "
            "depends on the data, but inside a trace it must be static",
            hint="pass minlength=N with every value in [0, N); larger values are out of range and undefined")
    if t.shape[0] == 0:  # nothing to count: NumPy answers int64 zeros, weights or not
        return ops.full((n,), 0, np.int64)
    if weights is None:
        upd, dt = ops.full(t.shape, 1, np.int64), np.dtype(np.int64)
    else:
        w = as_traced(weights)
        if w.shape != t.shape:
            raise ShapeError(f"bincount: weights {describe(w)} and x {describe(t)} have different lengths")
        if is_complex(w.dtype):
            raise DTypeError("bincount: complex weights are not supported")
        dt = np.dtype(np.float64)
        upd = as_traced(w, dt)
    return _scatter_add(as_traced(t, np.int64), upd, n, dt)


def _scatter_add(idx: TracedRArray, upd: TracedRArray, n: int, dt) -> TracedRArray:
    """``out[idx[k]] += upd[k]`` into zeros(n); out-of-range indices land nowhere."""
    m = idx.shape[0]
    return ops.scatter(ops.full((n,), 0, dt), ops.reshape(idx, (m, 1)), upd, ops.add,
                       update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                       index_vector_dim=1)


def _before(a: TracedRArray, b: TracedRArray) -> TracedRArray:
    """``a`` sorts strictly before ``b`` in NumPy's order (NaN after every number)."""
    lt = np.less(a, b)
    if is_float(a.dtype):
        lt = np.logical_or(lt, np.logical_and(np.isnan(b), np.logical_not(np.isnan(a))))
    return lt


def _count_sorted(sorted_: TracedRArray, v: TracedRArray, side: str) -> TracedRArray:
    """searchsorted of ``v`` (any shape) in the 1-d ascending ``sorted_``, NaN-aware."""
    dt = result_type(sorted_.dtype, v.dtype)
    s, vv = as_traced(sorted_, dt), as_traced(v, dt)
    vv = ops.reshape(vv, vv.shape + (1,))
    hit = _before(s, vv) if side == "left" else np.logical_not(_before(vv, s))
    return np.sum(hit, axis=-1, dtype=np.int64)


@implements(np.digitize)
def digitize(x, bins, right=False):
    """Index of the bin each value falls in (int64), for increasing or decreasing bins."""
    tx, tb = as_traced(x), as_traced(bins)
    if is_complex(tx.dtype) or is_complex(tb.dtype):
        raise DTypeError("digitize: x and bins may not be complex")
    if tb.ndim != 1:
        raise ShapeError(f"digitize: bins must be 1-d, got {describe(tb)}")
    n = tb.shape[0]
    up = _count_sorted(tb, tx, "left" if right else "right")
    down = np.subtract(n, _count_sorted(ops.reverse(tb, [0]), tx, "left" if right else "right"))
    if not _traced(bins):
        d = np.diff(np.asarray(bins))
        if not (np.all(d >= 0) or np.all(d <= 0)):
            raise ShapeError("digitize: bins must be monotonically increasing or decreasing")
        return up if n < 2 or bins[0] <= bins[-1] else down
    if n < 2:
        return up
    increasing = np.less_equal(tb[0], tb[n - 1])  # monotonic bins: the ends give the direction
    return np.where(increasing, up, down)


# -- interp / trapezoid / polyval -------------------------------------------------------------
@implements(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation (float64, or complex128 for complex fp)."""
    txp, tfp = as_traced(xp), as_traced(fp)
    if txp.ndim != 1 or tfp.ndim != 1 or txp.shape != tfp.shape:
        raise ShapeError(f"interp: xp {describe(txp)} and fp {describe(tfp)} must be 1-d of the same length")
    n = txp.shape[0]
    if n == 0:
        raise ShapeError("interp: array of sample points is empty")
    fdt = np.dtype(np.complex128) if is_complex(tfp.dtype) else np.dtype(np.float64)
    tx, txp, tfp = as_traced(x, np.float64), as_traced(txp, np.float64), as_traced(tfp, fdt)
    if period is not None:
        tx, txp, tfp = _periodic(tx, txp, tfp, period)
        left = right = None
        n = txp.shape[0]
    lo_v = tfp[0] if left is None else as_traced(left, fdt)
    hi_v = tfp[n - 1] if right is None else as_traced(right, fdt)
    if n == 1:
        mid = broadcast_to(tfp[0], tx.shape)
    else:
        j = np.clip(np.subtract(_count_sorted(txp, tx, "right"), 1), 0, n - 2)
        x0, x1 = np.take(txp, j), np.take(txp, np.add(j, 1))
        f0, f1 = np.take(tfp, j), np.take(tfp, np.add(j, 1))
        slope = np.divide(np.subtract(f1, f0), np.subtract(x1, x0))
        mid = np.add(np.multiply(slope, np.subtract(tx, x0)), f0)
        # exactly on a sample point: its value (no 0 * inf from a vertical step)
        mid = np.where(np.equal(tx, x0), f0, mid)
    out = np.where(np.equal(tx, txp[n - 1]), tfp[n - 1], mid)
    out = np.where(np.greater(tx, txp[n - 1]), hi_v, out)
    return np.where(np.less(tx, txp[0]), lo_v, out)


def _periodic(x: TracedRArray, xp: TracedRArray, fp: TracedRArray, period):
    """Everything reduced modulo the period, the samples sorted and wrapped by one on each side
    so every x lies between two of them."""
    if not _traced(period) and period == 0:
        raise ShapeError("interp: period must be a non-zero value")
    per = np.abs(as_traced(period, np.float64))
    x, xp = np.mod(x, per), np.mod(xp, per)
    order = np.argsort(xp)
    xp, fp = np.take(xp, order), np.take(fp, order)
    n = xp.shape[0]
    xp = ops.concatenate([ops.reshape(np.subtract(xp[n - 1], per), (1,)), xp,
                          ops.reshape(np.add(xp[0], per), (1,))], 0)
    fp = ops.concatenate([ops.reshape(fp[n - 1], (1,)), fp, ops.reshape(fp[0], (1,))], 0)
    return x, xp, fp


@implements(np.trapezoid)
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral along ``axis`` by the trapezoidal rule, spacing from ``x`` or ``dx``."""
    ty = as_traced(y)
    ax = normalize_axis(axis, ty.ndim)
    if x is None:
        d = dx
    else:
        tx = as_traced(x)
        if tx.ndim == 1:
            d = np.diff(tx)
            shape = [1] * ty.ndim
            shape[ax] = d.shape[0]
            d = ops.reshape(d, tuple(shape))
        else:
            d = np.diff(tx, axis=ax)
    n = ty.shape[ax]
    avg2 = np.add(_take(ty, 1, n, ax), _take(ty, 0, n - 1, ax))
    return np.sum(np.divide(np.multiply(d, avg2), 2.0), axis=ax)


@implements(np.polyval)
def polyval(p, x):
    """Horner's scheme; the dtype is that of ``x`` combined with ``p``'s coefficients."""
    tx = as_traced(x) if _traced(x) else np.asarray(x)
    coeffs = as_traced(p) if _traced(p) else np.asarray(p)
    if np.ndim(coeffs) != 1:
        raise ShapeError(f"polyval: p must be 1-d coefficients, got shape {np.shape(coeffs)}")
    y = np.zeros_like(tx)
    for i in range(np.shape(coeffs)[0]):
        y = np.add(np.multiply(y, tx), coeffs[i])
    return as_traced(y)


# -- gradient ---------------------------------------------------------------------------------
def _spacings(varargs: Sequence, f: TracedRArray, axes: list[int]) -> list:
    """Per axis: a scalar step, or the 1-d differences of the coordinates along it."""
    if len(varargs) == 0:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise ShapeError(f"gradient: {len(varargs)} spacings for {len(axes)} axes; give one, or one per axis")
    out = []
    for h, ax in zip(varargs, axes):
        if np.ndim(h) == 0:
            out.append(h)
            continue
        if np.ndim(h) != 1:
            raise ShapeError("gradient: distances must be either scalars or 1d")
        if np.shape(h)[0] != f.shape[ax]:
            raise ShapeError(f"gradient: coordinates of length {np.shape(h)[0]} do not match axis {ax} "
                             f"of {describe(f)}")
        out.append(_coord_diffs(h))
    return out


def _coord_diffs(h):
    """Coordinate differences (float64 for integer coordinates); uniform static ones become one
    scalar step, so the uniform formulas are used as in NumPy."""
    if _traced(h):
        t = as_traced(h)
        return np.diff(t if t.dtype.kind not in "biu" else as_traced(t, np.float64))
    c = np.asarray(h)
    if c.dtype.kind in "biu":
        c = c.astype(np.float64)
    d = np.diff(c)
    return d[0] if np.all(d == d[0]) else d


def _along(v: TracedRArray, ax: int, ndim: int) -> TracedRArray:
    """A 1-d array reshaped to broadcast along axis ``ax`` of an ``ndim``-d array."""
    shape = [1] * ndim
    shape[ax] = v.shape[0]
    return ops.reshape(v, tuple(shape))


def _grad_axis(f: TracedRArray, h, ax: int, edge_order: int) -> TracedRArray:
    """Central differences inside, one-sided differences of ``edge_order`` at both ends."""
    n = f.shape[ax]
    s = lambda a, b: _take(f, a, b, ax)  # noqa: E731
    if np.ndim(h) == 0:
        interior = np.divide(np.subtract(s(2, n), s(0, n - 2)), np.multiply(2.0, h))
        if edge_order == 1:
            first = np.divide(np.subtract(s(1, 2), s(0, 1)), h)
            last = np.divide(np.subtract(s(n - 1, n), s(n - 2, n - 1)), h)
        else:
            first = _comb3(s(0, 1), s(1, 2), s(2, 3), np.divide(-1.5, h), np.divide(2.0, h), np.divide(-0.5, h))
            last = _comb3(s(n - 3, n - 2), s(n - 2, n - 1), s(n - 1, n),
                          np.divide(0.5, h), np.divide(-2.0, h), np.divide(1.5, h))
        return ops.concatenate(_same_dtype([first, interior, last]), ax)
    d = as_traced(h)
    d1, d2 = d[:-1], d[1:]
    a = np.negative(np.divide(d2, np.multiply(d1, np.add(d1, d2))))
    b = np.divide(np.subtract(d2, d1), np.multiply(d1, d2))
    c = np.divide(d1, np.multiply(d2, np.add(d1, d2)))
    nd = f.ndim
    interior = _comb3(s(0, n - 2), s(1, n - 1), s(2, n), _along(a, ax, nd), _along(b, ax, nd), _along(c, ax, nd))
    if edge_order == 1:
        first = np.divide(np.subtract(s(1, 2), s(0, 1)), d[0])
        last = np.divide(np.subtract(s(n - 1, n), s(n - 2, n - 1)), d[n - 2])
    else:
        first = _comb3(s(0, 1), s(1, 2), s(2, 3), *_edge2_start(d[0], d[1]))
        last = _comb3(s(n - 3, n - 2), s(n - 2, n - 1), s(n - 1, n), *_edge2_end(d[n - 3], d[n - 2]))
    return ops.concatenate(_same_dtype([first, interior, last]), ax)


def _edge2_start(d1, d2):
    """Second-order one-sided weights at the first point, steps d1 then d2."""
    return (np.negative(np.divide(np.add(np.multiply(2.0, d1), d2), np.multiply(d1, np.add(d1, d2)))),
            np.divide(np.add(d1, d2), np.multiply(d1, d2)),
            np.negative(np.divide(d1, np.multiply(d2, np.add(d1, d2)))))


def _edge2_end(d1, d2):
    """Second-order one-sided weights at the last point, steps d1 then d2 before it."""
    return (np.divide(d2, np.multiply(d1, np.add(d1, d2))),
            np.negative(np.divide(np.add(d2, d1), np.multiply(d1, d2))),
            np.divide(np.add(np.multiply(2.0, d2), d1), np.multiply(d2, np.add(d1, d2))))


def _comb3(f0, f1, f2, a, b, c):
    return np.add(np.add(np.multiply(a, f0), np.multiply(b, f1)), np.multiply(c, f2))


def _same_dtype(parts: list) -> list[TracedRArray]:
    dt = result_type(*[p.dtype for p in parts])
    return [as_traced(p, dt) for p in parts]


@implements(np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    """Second-order accurate central differences; a tuple of arrays for several axes."""
    t = as_traced(f)
    if edge_order not in (1, 2):
        raise ShapeError("gradient: edge_order greater than 2 not supported")
    if t.dtype.kind in "biu":
        t = as_traced(t, np.float64)
    if axis is None:
        axes = list(range(t.ndim))
    else:
        axes = [normalize_axis(a, t.ndim) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    if len(set(axes)) != len(axes):
        raise ShapeError("gradient: repeated axis")
    outs = []
    for h, ax in zip(_spacings(varargs, t, axes), axes):
        if t.shape[ax] < edge_order + 1:
            raise ShapeError(f"gradient: axis {ax} of {describe(t)} is too small to calculate a numerical "
                             f"gradient; at least edge_order + 1 = {edge_order + 1} elements are required")
        outs.append(as_traced(_grad_axis(t, h, ax, edge_order), t.dtype))
    return outs[0] if len(outs) == 1 else tuple(outs)


# -- correlate ------------------------------------------------------------------------------
def _vectors(a, v, name: str) -> tuple[TracedRArray, TracedRArray]:
    dt = result_type(dtype_for_promotion(a), dtype_for_promotion(v))
    x, w = as_traced(a, dt), as_traced(v, dt)
    x = ops.reshape(x, (1,)) if x.ndim == 0 else x
    w = ops.reshape(w, (1,)) if w.ndim == 0 else w
    if x.ndim != 1 or w.ndim != 1:
        raise ShapeError(f"{name} needs 1-d arrays, got {describe(x)} and {describe(w)}")
    if x.shape[0] == 0:
        raise ShapeError(f"{name}: a cannot be empty")
    if w.shape[0] == 0:
        raise ShapeError(f"{name}: v cannot be empty")
    return x, w



_SLICED_TAPS = 32  # kernels up to this long: the sum unrolled; longer: a loop over the taps


def _mode_window(n: int, m: int, mode: str, name: str) -> tuple[int, int]:
    """(first, length) of NumPy's 'full' / 'same' / 'valid' outputs within the full correlation
    of lengths n and m (n + m - 1 outputs)."""
    if mode == "full":
        return 0, n + m - 1
    if mode == "same":
        # NumPy correlates the longer against the shorter; for n < m it reverses a swapped
        # result, which moves the centring offset to the other end
        return ((m - 1) // 2 if n >= m else (n - 1) - (n - 1) // 2), max(n, m)
    if mode == "valid":
        return min(n, m) - 1, max(n, m) - min(n, m) + 1
    raise ArgumentError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")


def _correlation(x: TracedRArray, w: TracedRArray, mode: str, name: str) -> TracedRArray:
    """c[k] = sum_j x[j + k - (m-1)] * w[j] (x zero-padded), for the k that ``mode`` keeps.

    A sum of m shifted slices scaled by the taps, in NumPy's order (j ascending), each slice
    covering only the kept outputs: for a short kernel one fused pass that XLA runs at NumPy's
    speed or better (2^20 float64 samples, 5 taps: 0.65 ms, NumPy 0.85 ms), where the same
    windows as a matrix-vector product took 11.5 ms (31 taps: 5.4 against 61 ms); for a longer
    one a loop over the taps (unrolled, XLA's compile time grows with them)."""
    n, m = x.shape[0], w.shape[0]
    first, length = _mode_window(n, m, mode, name)
    padded = ops.pad(x, ops.constant(np.asarray(0, x.dtype)), [m - 1], [m - 1], [0])
    boolean = x.dtype == np.bool_

    def term(window, tap):
        # (NumPy's boolean dot: any(window & w))
        return np.logical_and(window, tap) if boolean else window * tap

    def add(acc, t):
        return np.logical_or(acc, t) if boolean else acc + t

    acc = term(getitem(padded, slice(first, first + length)), getitem(w, 0))
    if m <= _SLICED_TAPS:
        for j in range(1, m):
            acc = add(acc, term(getitem(padded, slice(first + j, first + j + length)), getitem(w, j)))
        return acc

    def step(j, acc):  # (a loop over the taps: its size does not grow with them)
        window = ops.dynamic_slice(padded, [ops.add(j, ops.full((), first, j.dtype))], [length])
        return add(acc, term(window, ops.reshape(ops.dynamic_slice(w, [j], [1]), ())))

    return fori_loop(1, m, step, acc)



@implements(np.correlate)
def correlate(a, v, mode="valid"):
    """NumPy's c_k = sum_n a[n+k] * conj(v[n])."""
    x, w = _vectors(a, v, "correlate")
    if is_complex(w.dtype):
        w = ops.conj(w)
    return _correlation(x, w, mode, "correlate")
