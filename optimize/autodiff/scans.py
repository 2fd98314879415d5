"""Prefix scans for derivative rules, built from slices, pads and selects in log depth (the
associative scan of Blelloch/JAX), and the cumulative product's derivatives made of them.

Cumulative products (``np.cumprod``, ``np.multiply.accumulate``: a ``reduce_window`` of
``multiply`` whose window spans the axis) are differentiated without dividing by ``x``, so
zeros in ``x`` are exact: with ``L_j = c * prod_{k<j} x_k`` (the exclusive product, ``c``
the init value) and ``y_i = L_i x_i``,

- forward: ``dy_i = x_i dy_{i-1} + L_i dx_i``;
- reverse: ``xbar_j = L_j s_j`` with ``s_j = ybar_j + x_{j+1} s_{j+1}``.

Both are linear recurrences ``h_i = a_i h_{i-1} + b_i``, an associative scan over the pairs
``(a, b)`` (composition of affine maps).
"""

from __future__ import annotations

from typing import Callable

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.types import element_type_of, i64, ranked, shape_of


def _interleave(even: ir.Value, odd: ir.Value, axis: int) -> ir.Value:
    """``r[2k] = even[k]``, ``r[2k+1] = odd[k]`` along ``axis`` (``even`` has as many or one
    more entries). Padded apart and selected by parity (exact: no addition of zeros)."""
    ne, no = shape_of(even)[axis], shape_of(odd)[axis]
    r = len(shape_of(even))
    zero = B.scalar(0, element_type_of(even))

    def pad(x, lo, hi):
        low, high, interior = [0] * r, [0] * r, [0] * r
        low[axis], high[axis], interior[axis] = lo, hi, 1
        return B.pad(x, zero, low, high, interior)

    pe = pad(even, 0, 1 if ne == no else 0)
    po = pad(odd, 1, 0 if ne == no else 1)
    it = ranked(list(shape_of(pe)), i64())
    parity = B.and_(B.iota(it, axis), B.full(1, it))
    return B.select(B.compare(parity, B.full(0, it), "EQ"), pe, po)


def associative_scan(combine: Callable[[list, list], list], elems: list, axis: int) -> list:
    """Inclusive prefix scan of the tuple of arrays ``elems`` along ``axis``:
    ``out_i = e_0 . e_1 . ... . e_i`` with ``combine(earlier, later)`` an associative operation
    on tuples of arrays (``log2(n)`` levels of strided slices)."""
    n = shape_of(elems[0])[axis]
    if n < 2:
        return list(elems)
    m = n // 2
    reduced = combine([B.slice_in_dim(e, 0, n - 1, axis, 2) for e in elems],
                      [B.slice_in_dim(e, 1, n, axis, 2) for e in elems])
    odd = associative_scan(combine, reduced, axis)  # prefixes at 1, 3, 5...
    first = [B.slice_in_dim(e, 0, 1, axis) for e in elems]
    if n > 2:  # prefixes at 2, 4...: the prefix before, combined with the element
        prev = odd if n % 2 else [B.slice_in_dim(o, 0, m - 1, axis) for o in odd]
        rest = combine(prev, [B.slice_in_dim(e, 2, n, axis, 2) for e in elems])
        even = [B.concatenate([f, v], axis) for f, v in zip(first, rest)]
    else:
        even = first
    return [_interleave(a, b, axis) for a, b in zip(even, odd)]


def _affine(earlier: list, later: list) -> list:
    (a1, b1), (a2, b2) = earlier, later
    return [B.multiply(a2, a1), B.add(B.multiply(a2, b1), b2)]


def linear_recurrence(a: ir.Value, b: ir.Value, axis: int, *, reverse: bool = False) -> ir.Value:
    """``h_i = a_i h_{i-1} + b_i`` along ``axis`` from ``h_{-1} = 0`` (``reverse``:
    ``h_i = a_i h_{i+1} + b_i`` from the end)."""
    if reverse:
        a, b = B.reverse(a, [axis]), B.reverse(b, [axis])
    h = associative_scan(_affine, [a, b], axis)[1]
    return B.reverse(h, [axis]) if reverse else h


def _shift(x: ir.Value, fill: ir.Value, axis: int, *, up: bool) -> ir.Value:
    """``x`` moved one place along ``axis`` (``up``: ``r_i = x_{i-1}``, else ``r_i = x_{i+1}``),
    the vacated place holding the scalar ``fill``."""
    n = shape_of(x)[axis]
    r = len(shape_of(x))
    low, high = [0] * r, [0] * r
    if up:
        part, low[axis] = B.slice_in_dim(x, 0, n - 1, axis), 1
    else:
        part, high[axis] = B.slice_in_dim(x, 1, n, axis), 1
    return B.pad(part, fill, low, high)


def cumprod_jvp(x: ir.Value, y: ir.Value, init: ir.Value, dx: ir.Value, axis: int) -> ir.Value:
    """The tangent of the inclusive product ``y`` of ``x`` along ``axis`` (init ``init``)."""
    lead = _shift(y, init, axis, up=True)
    return linear_recurrence(x, B.multiply(lead, dx), axis)


def cumprod_vjp(x: ir.Value, y: ir.Value, init: ir.Value, g: ir.Value, axis: int) -> ir.Value:
    """The cotangent of ``x`` for the cotangent ``g`` of the inclusive product ``y``."""
    lead = _shift(y, init, axis, up=True)
    nxt = _shift(x, B.scalar(0, element_type_of(x)), axis, up=False)
    return B.multiply(lead, linear_recurrence(nxt, g, axis, reverse=True))
