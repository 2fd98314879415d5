"""Creation functions. Eagerly they build the values on the host with NumPy and move them to
a device (one transfer, no compilation); inside a trace they give traced constants (or, for
the ``*_like`` functions of a traced array, traced values)."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from ..arrays import ConcreteRArray
from ..tracing import TracedRArray
from ._base import Array, check_device, is_array, to_array, tracing
from ._dtypes import as_dtype

Shape = Union[int, Sequence[int]]


def _dt(dtype) -> Optional[np.dtype]:
    return None if dtype is None else as_dtype(dtype)


def _new(host: np.ndarray, device) -> Array:
    return to_array(host, device=check_device(device))


def _filled(shape: tuple[int, ...], value, dtype: np.dtype, device) -> Array:
    """``shape`` filled with ``value``: inside a trace one splat constant (not a dense
    constant of the whole array in the program), eagerly a device array."""
    if tracing():
        from ..tracing import ops

        return ops.full(shape, np.asarray(value, dtype).item(), dtype)
    return _new(np.full(shape, value, dtype=dtype), device)


def copy_array(x: Array) -> Array:
    """A new array (a separate handle: updating one in place leaves the other) with ``x``'s
    values."""
    if isinstance(x, ConcreteRArray):
        return type(x)(x)
    return np.copy(x)


def asarray(obj: Any, /, *, dtype=None, device=None, copy: Optional[bool] = None) -> Array:
    """``obj`` (one of our arrays, a NumPy array, a nested sequence of numbers, a Python
    scalar, an object with ``__array__``/DLPack/buffer protocol) as an array of this
    namespace. ``copy=None`` reuses one of our arrays when it already has the dtype and
    device; ``copy=False`` refuses anything that needs a copy (host data always does: it
    moves to a device)."""
    dtype = _dt(dtype)
    if is_array(obj):
        same = (dtype is None or obj.dtype == dtype) and (
            device is None or tracing() or obj.device == device)
        if same and not copy:
            return obj
        if copy is False:
            raise ValueError("asarray(copy=False) would need a copy (another dtype or device)")
        out = obj if dtype is None or obj.dtype == dtype else np.astype(obj, dtype)
        if device is not None and not tracing():
            out = out.to_device(device)
        return copy_array(out) if out is obj else out
    if copy is False:
        raise ValueError("asarray(copy=False): host data has to be copied to a device")
    if tracing() and isinstance(obj, (list, tuple)):
        from ..tracing.numpy_api import as_traced

        return as_traced(obj, dtype)  # may hold traced values
    if isinstance(obj, (type(True), int, float, complex)) and dtype is None:
        dtype = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}[type(obj)]
    host = np.asarray(obj, dtype=dtype)
    if dtype is None:
        as_dtype(host.dtype)  # a TypeError for host data no device array can hold (str, object...)
    return _new(host, device)


def _shape(shape: Shape) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def empty(shape: Shape, *, dtype=None, device=None) -> Array:
    """An array of ``shape`` (filled with zeros: uninitialised memory is not exposed)."""
    return zeros(shape, dtype=dtype, device=device)


def zeros(shape: Shape, *, dtype=None, device=None) -> Array:
    """Zeros of ``shape``, default float64."""
    return _filled(_shape(shape), 0, _dt(dtype) or np.dtype(np.float64), device)


def ones(shape: Shape, *, dtype=None, device=None) -> Array:
    """Ones of ``shape``, default float64."""
    return _filled(_shape(shape), 1, _dt(dtype) or np.dtype(np.float64), device)


def full(shape: Shape, fill_value: Union[bool, int, float, complex], *, dtype=None, device=None) -> Array:
    """``shape`` filled with ``fill_value``; the default dtype follows the value's Python type
    (bool, int64, float64, complex128)."""
    shape = _shape(shape)
    if isinstance(fill_value, TracedRArray):  # a traced fill value inside a trace
        v = fill_value if dtype is None else np.astype(fill_value, as_dtype(dtype))
        return np.broadcast_to(v, shape)
    if dtype is None:
        dtype = _scalar_dtype(fill_value)
    return _filled(shape, fill_value, as_dtype(dtype), device)


def _scalar_dtype(value) -> np.dtype:
    if is_array(value) or isinstance(value, (np.ndarray, np.generic)):
        return as_dtype(value.dtype)
    return np.dtype({bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}[type(value)])


def _like_device(x: Array, device):
    return device if device is not None else (None if tracing() else x.device)


def empty_like(x: Array, /, *, dtype=None, device=None) -> Array:
    """An array shaped like ``x`` (zeros)."""
    return zeros_like(x, dtype=dtype, device=device)


def zeros_like(x: Array, /, *, dtype=None, device=None) -> Array:
    """Zeros shaped like ``x``, of ``x``'s dtype unless ``dtype`` is given."""
    return _filled(x.shape, 0, _dt(dtype) or x.dtype, _like_device(x, device))


def ones_like(x: Array, /, *, dtype=None, device=None) -> Array:
    """Ones shaped like ``x``, of ``x``'s dtype unless ``dtype`` is given."""
    return _filled(x.shape, 1, _dt(dtype) or x.dtype, _like_device(x, device))


def full_like(x: Array, /, fill_value: Union[bool, int, float, complex], *, dtype=None, device=None) -> Array:
    """``fill_value`` shaped like ``x``, of ``x``'s dtype unless ``dtype`` is given."""
    return full(x.shape, fill_value, dtype=_dt(dtype) or x.dtype, device=_like_device(x, device))


def arange(start: Union[int, float], /, stop: Union[int, float, None] = None, step: Union[int, float] = 1, *,
           dtype=None, device=None) -> Array:
    """Evenly spaced values in ``[start, stop)``; int64 for integer arguments, else float64."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = np.float64 if any(isinstance(v, float) for v in (start, stop, step)) else np.int64
    dtype = as_dtype(dtype)
    n = max(int(np.ceil((stop - start) / step)), 0)
    # start + i*step computed in float64/int64 and then cast: the standard's definition of
    # the values (np.arange in a narrow dtype accumulates its own rounding)
    wide = np.float64 if dtype.kind == "f" else np.int64 if dtype.kind in "iu" else dtype
    host = (np.asarray(start, wide) + np.arange(n, dtype=wide) * np.asarray(step, wide)).astype(dtype)
    return _new(host, device)


def eye(n_rows: int, n_cols: Optional[int] = None, /, *, k: int = 0, dtype=None, device=None) -> Array:
    """Ones on the ``k``-th diagonal, zeros elsewhere; default float64."""
    return _new(np.eye(n_rows, n_cols, k=k, dtype=_dt(dtype) or np.float64), device)


def linspace(start: Union[int, float, complex], stop: Union[int, float, complex], /, num: int, *,
             dtype=None, device=None, endpoint: bool = True) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop``; default float64 (complex128 for
    complex bounds)."""
    if dtype is None:
        dtype = np.complex128 if any(isinstance(v, complex) for v in (start, stop)) else np.float64
    dtype = as_dtype(dtype)
    return _new(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype), device)


def meshgrid(*arrays: Array, indexing: str = "xy") -> list[Array]:
    """Coordinate grids of 1-D arrays (``indexing="xy"``: the first two axes swapped)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    if not arrays:
        return []
    n = len(arrays)
    shape = [a.size for a in arrays]
    if indexing == "xy" and n > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and n > 1 else i
        view = [1] * n
        view[axis] = a.size
        out.append(to_array(np.broadcast_to(np.reshape(a, tuple(view)), tuple(shape))))
    return out


def tril(x: Array, /, *, k: int = 0) -> Array:
    """The lower triangle of the last two axes (elements above the ``k``-th diagonal zeroed)."""
    return np.tril(x, k=k)


def triu(x: Array, /, *, k: int = 0) -> Array:
    """The upper triangle of the last two axes (elements below the ``k``-th diagonal zeroed)."""
    return np.triu(x, k=k)


def from_dlpack(x: Any, /, *, device=None, copy: Optional[bool] = None) -> Array:
    """An array of this namespace from any DLPack exporter. Our own arrays are returned (or
    copied with ``copy=True``); other data moves to a device, which ``copy=False`` refuses."""
    if is_array(x):
        out = x if device is None else x.to_device(device)
        return copy_array(out) if copy and out is x else out
    if copy is False:
        raise ValueError("from_dlpack(copy=False): the data has to be copied to a device")
    return _new(np.from_dlpack(x), device)
