"""Arrays built from Python data that holds traced values: ``np.array`` / ``np.asarray`` /
``np.fromiter``... of a traced array, or of a (nested) list or tuple of traced arrays, NumPy
arrays and Python scalars, with the shape and dtype NumPy's array construction gives.

NumPy's constructors do not dispatch on their data argument, and no NumPy function looks inside
a list for ``__array_function__``: NumPy would ask each tracer for ``__array__``, which has no
array to give. Converted user code therefore calls NumPy through ``autograph._numpy_call``,
which comes here (``CONSTRUCTORS``) when the data holds traced values; ``as_traced`` builds
lists the same way (``from_data``).

Array construction is not NEP 50 promotion: a Python float in the list counts as float64, an
int as int64 (``np.array([np.float32(1), 1.0])`` is float64).
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np

from .. import ops
from ..context import active
from ..dtypes import canonical
from ..errors import ArgumentError, OptionError, ReactantError, ShapeError, describe
from ..traced import TracedRArray, TracedRNumber, wrap
from ._registry import implements

_WEAK_DEFAULT = {"b": np.dtype(np.bool_), "i": np.dtype(np.int64), "u": np.dtype(np.int64),
                 "f": np.dtype(np.float64), "c": np.dtype(np.complex128)}


# -- what holds traced values -------------------------------------------------------------------
def is_device_array(x: Any) -> bool:
    """A device array (``ConcreteRArray``) read inside a trace: an implicit input of it."""
    return hasattr(type(x), "__reactant_concrete__") and active() is not None


def holds_traced(x: Any) -> bool:
    """Whether ``x`` is, or a (nested) list/tuple holds, a traced array (or a device array
    read inside the trace, which becomes one)."""
    if isinstance(x, TracedRArray) or is_device_array(x):
        return True
    if isinstance(x, (list, tuple)):
        return any(holds_traced(e) for e in x)
    return False


def hides_traced(x: Any) -> bool:
    """Whether ``x`` is a list/tuple holding traced values, which NumPy's dispatch does not see."""
    return isinstance(x, (list, tuple)) and holds_traced(x)


# NumPy functions taking lists that are not one array (sequences of arrays, lists of conditions
# or functions, (lo, hi) pairs): their traced implementations read such lists themselves. Every
# other function gets a list/tuple argument holding traced values as one traced array.
STRUCTURED_LISTS = frozenset(getattr(f, "__reactant_guarded__", f) for f in (
    np.stack, np.concatenate, np.concat, np.vstack, np.hstack, np.dstack, np.column_stack, np.block,
    np.lexsort, np.choose, np.select, np.piecewise, np.pad, np.histogram, np.histogram2d, np.histogramdd,
    np.histogram_bin_edges, np.linalg.multi_dot))


def lists_as_arrays(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``args``/``kwargs`` with each list/tuple argument that holds traced values as one traced
    array (``out=`` is left as it is: a tuple of outputs)."""
    if not (any(hides_traced(a) for a in args) or any(hides_traced(v) for k, v in kwargs.items() if k != "out")):
        return args, kwargs
    args = tuple(from_data(a) if hides_traced(a) else a for a in args)
    kwargs = {k: (from_data(v) if k != "out" and hides_traced(v) else v) for k, v in kwargs.items()}
    return args, kwargs


# -- building -----------------------------------------------------------------------------------
def _normalized(x: Any):
    """``x`` with every leaf a traced array or a NumPy array (lists stay lists)."""
    if isinstance(x, TracedRArray):
        return x
    if isinstance(x, (list, tuple)):
        return [_normalized(e) for e in x]
    if is_device_array(x):
        from .convert import as_traced

        return as_traced(x)  # captured: read at every call
    try:
        arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    except ReactantError:
        raise
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"cannot put {type(x).__name__} {x!r:.60} in an array with traced values: {e}") from e
    if arr.dtype.kind in "OUSVMm":
        raise ArgumentError(f"cannot put {type(x).__name__} {x!r:.60} ({arr.dtype}) in an array with traced values",
                            hint="only numbers and arrays of numbers mix with traced values")
    return arr


def _shape(node) -> tuple[int, ...]:
    if not isinstance(node, list):
        return tuple(node.shape)
    shapes = [_shape(e) for e in node]
    if any(s != shapes[0] for s in shapes):
        distinct = list(dict.fromkeys(shapes))
        raise ShapeError(
            "cannot build an array from a list whose items have different shapes: "
            + ", ".join(str(s) for s in distinct[:6]) + (", ..." if len(distinct) > 6 else ""),
            hint="NumPy refuses such ragged lists too (ValueError: inhomogeneous shape); give every item "
            "the same shape, or join them with np.concatenate")
    return (len(node),) + (shapes[0] if shapes else ())


def _leaves(node):
    if isinstance(node, list):
        for e in node:
            yield from _leaves(e)
    else:
        yield node


def _leaf_dtype(x) -> np.dtype:
    if isinstance(x, TracedRNumber) and x.weak:  # a traced Python scalar: NumPy's default dtype
        return _WEAK_DEFAULT[x.dtype.kind]
    return np.dtype(x.dtype)


def _dtype_of(node) -> np.dtype:
    dts = {_leaf_dtype(x) for x in _leaves(node)}
    if not dts:
        return np.dtype(np.float64)  # NumPy's dtype of an empty list
    return functools.reduce(np.promote_types, sorted(dts, key=str))


def array_dtype(x: Any) -> np.dtype:
    """The dtype ``np.array(x)`` has (``x`` may hold traced values)."""
    if isinstance(x, TracedRArray):
        return _leaf_dtype(x)
    if isinstance(x, (np.ndarray, np.generic)) or is_device_array(x):
        return np.dtype(x.dtype)
    return _dtype_of(_normalized(x))


def _build(node, dt: np.dtype):
    """A traced array (or a NumPy array, where ``node`` holds no traced value) of ``dt``."""
    if not isinstance(node, list):
        return ops.convert(node, dt) if isinstance(node, TracedRArray) else node.astype(dt, copy=False)
    if not any(isinstance(x, TracedRArray) for x in _leaves(node)):
        return np.array(node, dtype=dt)
    parts: list[TracedRArray] = []
    run: list[np.ndarray] = []  # consecutive NumPy items: one constant

    def flush():
        if run:
            parts.append(ops.constant(np.stack(run)))
            run.clear()

    for item in node:
        b = _build(item, dt)
        if isinstance(b, TracedRArray):
            flush()
            parts.append(ops.reshape(b, (1,) + b.shape))
        else:
            run.append(b)
    flush()
    return ops.concatenate(parts, 0)


def from_data(data: Any, dtype=None) -> TracedRArray:
    """``np.array(data, dtype)`` as a traced array: ``data`` a traced array, or a (nested)
    list/tuple of traced arrays, NumPy arrays, device arrays and Python scalars."""
    if isinstance(data, TracedRArray):
        return ops.convert(data, canonical(dtype)) if dtype is not None else data
    node = _normalized(data)
    _shape(node)  # ragged lists are refused before anything is built
    dt = canonical(dtype if dtype is not None else _dtype_of(node))
    out = _build(node, dt)
    return out if isinstance(out, TracedRArray) else ops.constant(out)


def _with_ndmin(x: TracedRArray, ndmin: int) -> TracedRArray:
    return ops.reshape(x, (1,) * (ndmin - x.ndim) + x.shape) if x.ndim < ndmin else x


def _new_handle(x: TracedRArray) -> TracedRArray:
    # SSA values are immutable: a new handle is a copy (updating one rebinds only it)
    return wrap(x.value, x.shape, x.dtype)


def _refuse_copy(data) -> None:
    raise OptionError(
        f"copy=False, but making an array of {type(data).__name__} needs a copy (as NumPy says: "
        "Unable to avoid copy while creating an array as requested)",
        hint="use np.asarray(...) (copy=None) to allow a copy when needed")


# -- the constructors ---------------------------------------------------------------------------
@implements(np.array)
def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):  # noqa: A002
    """``np.array``: a new traced array (``copy=True``), the traced argument itself where
    ``copy`` allows it and nothing changes."""
    if is_device_array(object):
        from .convert import as_traced

        object = as_traced(object)  # noqa: A001  (read as an input of the trace)
    if not isinstance(object, TracedRArray):
        if copy is False:
            _refuse_copy(object)
        return _with_ndmin(from_data(object, dtype), int(ndmin))
    weak = isinstance(object, TracedRNumber) and object.weak  # stands for a Python scalar
    out = ops.convert(object, canonical(dtype) if dtype is not None else _leaf_dtype(object))
    if copy is False and (out is not object or weak):
        _refuse_copy(object)
    if out is object and (copy or weak):
        out = _new_handle(out)  # (a traced Python scalar becomes an ordinary, non-weak array)
    return _with_ndmin(out, int(ndmin))


@implements(np.asarray, np.asanyarray)
def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """``np.asarray``: a traced argument itself (NumPy returns its input), else a new array."""
    return array(a, dtype, copy=copy)


@implements(np.ascontiguousarray, np.asfortranarray)
def ascontiguousarray(a, dtype=None, *, like=None):
    """Layouts do not exist for traced arrays: ``asarray`` with at least one dimension."""
    return array(a, dtype, copy=None, ndmin=1)


@implements(np.fromiter)
def fromiter(iter, dtype, count=-1, *, like=None):  # noqa: A002
    """``np.fromiter`` over items that are traced scalars (see ``fromiter_call``)."""
    items = list(iter) if count < 0 else list(itertools.islice(iter, count))
    if count >= 0 and len(items) < count:
        raise OptionError(f"iterator too short: Expected {count} but iterator had only {len(items)} items.")
    out = from_data(items, np.dtype(dtype))
    if out.ndim != 1 and items:
        raise ShapeError(f"np.fromiter: the items must be scalars, got {describe(out)} from {len(items)} items")
    return out


def fromiter_call(iter, dtype, count=-1, *, like=None):  # noqa: A002
    """``np.fromiter`` from converted code: NumPy's, unless an item is traced (the iterator is
    read once, here, to know)."""
    items = list(iter) if count < 0 else list(itertools.islice(iter, count))
    if holds_traced(items):
        return fromiter(items, dtype, count)
    kw = {} if like is None else {"like": like}
    return np.fromiter(items, dtype, count, **kw)


def _data_arg(args, kwargs, name: str):
    return args[0] if args else kwargs.get(name)


def _only_with_traced(np_func, impl, name: str):
    def call(*args, **kwargs):
        if holds_traced(_data_arg(args, kwargs, name)):
            return impl(*args, **kwargs)
        return np_func(*args, **kwargs)

    return call


# np function -> what a converted function calls instead
CONSTRUCTORS = {
    np.array: _only_with_traced(np.array, array, "object"),
    np.asarray: _only_with_traced(np.asarray, asarray, "a"),
    np.asanyarray: _only_with_traced(np.asanyarray, asarray, "a"),
    np.ascontiguousarray: _only_with_traced(np.ascontiguousarray, ascontiguousarray, "a"),
    np.asfortranarray: _only_with_traced(np.asfortranarray, ascontiguousarray, "a"),
    np.fromiter: fromiter_call,
}


# -- np.block -------------------------------------------------------------------------------------
def _block_depth(arrays, path=()) -> int:
    """The list depth of ``np.block``'s argument (checked equal everywhere, as NumPy does)."""
    if isinstance(arrays, tuple):
        raise ArgumentError(f"np.block: arrays{''.join(f'[{i}]' for i in path)} is a tuple; only lists may "
                            "be used to arrange blocks")
    if not isinstance(arrays, list):
        return 0
    if not arrays:
        raise OptionError(f"np.block: arrays{''.join(f'[{i}]' for i in path)} cannot be empty")
    depths = [_block_depth(a, path + (i,)) for i, a in enumerate(arrays)]
    if any(d != depths[0] for d in depths):
        raise OptionError("np.block: list depths are mismatched")
    return depths[0] + 1


@implements(np.block)
def block(arrays):
    """``np.block``: the innermost lists joined along the last axis, the next along the one
    before, and so on; every block first gets the result's number of dimensions."""
    from .convert import as_traced

    depth = _block_depth(arrays)
    leaves: list = []

    def collect(a, d):
        if d == depth:
            leaves.append(a if isinstance(a, TracedRArray) else _normalized(a))
        else:
            for e in a:
                collect(e, d + 1)

    collect(arrays, 0)
    dt = canonical(_dtype_of(leaves))
    blocks = [as_traced(x, dt) for x in leaves]
    ndim = max([depth] + [b.ndim for b in blocks])
    it = iter(blocks)

    def join(a, d):
        if d == depth:
            return _with_ndmin(next(it), ndim)
        parts = [join(e, d + 1) for e in a]
        axis = ndim - (depth - d)
        for p in parts[1:]:
            if any(x != y for k, (x, y) in enumerate(zip(p.shape, parts[0].shape)) if k != axis):
                raise ShapeError(f"np.block: blocks {', '.join(describe(q) for q in parts)} do not fit "
                                 f"together along axis {axis - ndim}")
        return ops.concatenate(parts, axis)

    out = join(arrays, 0)
    return _new_handle(out) if any(out is b for b in leaves) else out
