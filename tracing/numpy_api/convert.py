"""Turning operands into traced arrays, NumPy broadcasting, and axis normalisation."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import ops
from ..dtypes import canonical, result_type
from ..errors import ArgumentError, IndexError_, ShapeError, describe
from ..context import active
from ..traced import TracedRArray, TracedRNumber, wrap
from .construction import array_dtype, from_data, holds_traced

PY_SCALARS = (bool, int, float, complex)


def is_weak(x: Any) -> bool:
    """Python scalars (and traced Python scalars) promote weakly under NEP 50."""
    return (type(x) in PY_SCALARS) or (isinstance(x, TracedRNumber) and x.weak)


def dtype_for_promotion(x: Any):
    """What ``resolve_dtypes``/``result_type`` should see for operand ``x``."""
    if isinstance(x, TracedRArray):
        if isinstance(x, TracedRNumber) and x.weak:
            return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[x.dtype.kind]
        return x.dtype
    if type(x) in PY_SCALARS:
        return type(x)
    if isinstance(x, (list, tuple)) and holds_traced(x):
        return array_dtype(x)  # a list is an array (not weak), built as np.array would
    return np.asarray(x).dtype


def as_traced(x: Any, dtype=None) -> TracedRArray:
    """``x`` as a traced array (constants for NumPy/Python values), converted to ``dtype``."""
    if isinstance(x, TracedRArray):
        return ops.convert(x, dtype) if dtype is not None else x
    concrete = getattr(x, "__reactant_concrete__", None)
    if concrete is not None:  # a device array the traced function reads: an implicit input
        tc = active()
        v = tc.capture(x) if tc is not None else None
        if v is not None:
            t = tc.capture_handles.get(id(x))
            if t is None:
                t = tc.capture_handles[id(x)] = wrap(v, tuple(x.shape), np.dtype(x.dtype))
                if tc.handles and tc.handles[-1][0]() is t:
                    tc.handles.pop()  # (lives as long as the trace, wherever it was first read)
            return ops.convert(t, dtype) if dtype is not None else t
        x = concrete()
    if type(x) is np.ndarray:  # a large NumPy array of the Python state: an implicit input too
        tc = active()
        h = tc.capture_handles.get(id(x)) if tc is not None else None
        if h is not None and tc._captured.get(id(x)) is not None:  # updated in place (state_writes)
            return ops.convert(h, dtype) if dtype is not None else h
        if tc is not None and tc.reads.is_state_array(x):
            canonical(x.dtype)  # (refuses what XLA cannot hold, as for a constant)
            v = tc.capture(x)
            if v is not None:
                tc.reads.made_input(x)
                t = wrap(v, tuple(x.shape), np.dtype(x.dtype))
                return ops.convert(t, dtype) if dtype is not None else t
    if isinstance(x, (list, tuple)) and holds_traced(x):
        return from_data(x, dtype)
    try:
        arr = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"cannot use {type(x).__name__} {x!r:.80} as an array: {e}") from e
    if arr.dtype == object:
        raise ArgumentError(f"cannot use {type(x).__name__} {x!r:.80} as an array (object dtype)")
    canonical(arr.dtype)
    return ops.constant(arr)


def contains_traced(seq) -> bool:
    """Whether a (nested) list/tuple holds a traced array."""
    for v in seq:
        if isinstance(v, TracedRArray):
            return True
        if isinstance(v, (list, tuple)) and contains_traced(v):
            return True
    return False


# -- broadcasting -----------------------------------------------------------------------------
def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeError(
            "operands could not be broadcast together with shapes "
            + " ".join(str(tuple(s)) for s in shapes)
        ) from None


def broadcast_to(x: TracedRArray, shape: Sequence[int]) -> TracedRArray:
    """NumPy broadcasting of ``x`` to ``shape`` (trailing dims aligned)."""
    shape = tuple(int(s) for s in shape)
    if x.shape == shape:
        return x
    lead = len(shape) - x.ndim
    if lead < 0 or any(a not in (1, b) for a, b in zip(x.shape, shape[lead:])):
        raise ShapeError(f"cannot broadcast {describe(x)} to shape {shape}")
    return ops.broadcast_in_dim(x, shape, range(lead, len(shape)))


def broadcast_all(*xs: TracedRArray) -> list[TracedRArray]:
    shape = broadcast_shapes(*[x.shape for x in xs])
    return [broadcast_to(x, shape) for x in xs]


# -- axes -------------------------------------------------------------------------------------
def flat_or_axis(x: TracedRArray, axis) -> tuple[TracedRArray, int]:
    """NumPy's ``axis=None`` convention: ``x`` flattened and axis 0 for None, else ``x`` and
    the normalized axis."""
    if axis is None:
        return ops.reshape(x, (x.size,)), 0
    return x, normalize_axis(axis, x.ndim)


def normalize_axis(axis: int, ndim: int) -> int:
    try:
        a = int(axis)
    except TypeError:
        raise IndexError_(f"axis must be an integer, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise IndexError_(f"axis {a} is out of bounds for array of dimension {ndim}")
    return a % ndim if ndim else 0


def axis_sequence(axes, ndim: int) -> list[int]:
    """An int or a sequence of axes as a list of non-negative axes, in the given order."""
    return [normalize_axis(a, ndim) for a in ([axes] if isinstance(axes, int) else axes)]


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """``None`` -> all axes; int or tuple -> sorted non-negative tuple (duplicates rejected)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        out = tuple(normalize_axis(a, ndim) for a in axis)
        if len(set(out)) != len(out):
            raise IndexError_(f"repeated axis in {tuple(axis)}")
        return tuple(sorted(out))
    return (normalize_axis(axis, ndim),)


# -- one promoted dtype for several operands (where, isclose, searchsorted, linspace, cross) ---------
def _promoted(*xs):
    dt = result_type(*[dtype_for_promotion(x) for x in xs])
    return [as_traced(x, dt) for x in xs], dt
