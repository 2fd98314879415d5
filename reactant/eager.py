"""Eager NumPy on device arrays: each operation is compiled once per signature (through the
same compile path and cache as user functions) and run immediately."""

from __future__ import annotations

import operator
import threading
from typing import Any, Callable

import numpy as np

from .compiler import CompiledFunction, Options, _put

_EAGER = Options(optimize="O0")
EAGER_MAX = 1024  # NumPy functions with a compiled eager version (each caches its signatures)
_cache: dict[Any, CompiledFunction] = {}
_lock = threading.Lock()


def _compiled(key, make: Callable[[], Callable]) -> CompiledFunction:
    cf = _cache.get(key)
    if cf is None:
        with _lock:
            cf = _cache.get(key)
            if cf is None:
                cf = CompiledFunction(make(), _EAGER)
                _put(_cache, key, cf, EAGER_MAX)
    return cf


def eager_ufunc(ufunc, method: str, inputs, kwargs):
    call = getattr(ufunc, method)
    return _compiled(("ufunc", ufunc, method), lambda: lambda *a, **k: call(*a, **k))(*inputs, **kwargs)


def eager_function(func, args, kwargs):
    return _compiled(("function", func), lambda: func)(*args, **kwargs)


def _setitem(x, index, value):
    x[index] = value


def _inplace(ufunc, x, other):
    from .tracing.numpy_api import inplace_ufunc

    inplace_ufunc(ufunc, x, other)


def _is_mask(i) -> bool:
    dt = getattr(i, "dtype", None)
    return dt is not None and dt == bool and getattr(i, "ndim", 0) > 0 and not isinstance(i, type)


def concrete_masks(index):
    """Eagerly a boolean mask's values are known: it is replaced by the integer index arrays
    of its true elements (NumPy's definition of ``x[mask]``), so the selection has a static
    length instead of a run-time one that a compiled program cannot return."""
    items = index if isinstance(index, tuple) else (index,)
    if not any(_is_mask(i) for i in items):
        return index
    from .arrays import to_rarray

    out = []
    for i in items:
        out.extend(to_rarray(np.nonzero(np.asarray(i)), device=_device_of(i)) if _is_mask(i) else (i,))
    return tuple(out)


def _device_of(i):
    return getattr(i, "device", None) if not isinstance(i, np.ndarray) else None


def eager_getitem(x, index):
    items = index if isinstance(index, tuple) else (index,)
    if items and _is_scalar_mask(items[0]):
        # x[True] / x[False] (NumPy): a new leading axis of length 1 / 0, as an integer index
        # into that axis
        from .arrays import to_rarray

        x = eager_function(np.expand_dims, (x, 0), {})
        index = (to_rarray(np.arange(1 if bool(items[0]) else 0), device=x.device), *items[1:])
    return _compiled("getitem", lambda: operator.getitem)(x, concrete_masks(index))


def _is_scalar_mask(i) -> bool:
    dt = getattr(i, "dtype", None)
    return (dt is not None and dt == bool and getattr(i, "ndim", 1) == 0 and not isinstance(i, type)) \
        or type(i) is bool


def eager_setitem(x, index, value) -> None:
    _compiled("setitem", lambda: _setitem)(x, index, value)


def eager_inplace(ufunc, x, other) -> None:
    _compiled("inplace", lambda: _inplace)(ufunc, x, other)


def cache_size() -> int:
    """Number of compiled eager executables (all operations together)."""
    return sum(len(cf._cache) for cf in _cache.values())
