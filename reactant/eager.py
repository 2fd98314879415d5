"""Eager NumPy on device arrays: each operation is compiled once per signature (through the
same compile path and cache as user functions) and run immediately."""

from __future__ import annotations

import operator
import threading
from typing import Any, Callable

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


def eager_getitem(x, index):
    return _compiled("getitem", lambda: operator.getitem)(x, index)


def eager_setitem(x, index, value) -> None:
    _compiled("setitem", lambda: _setitem)(x, index, value)


def eager_inplace(ufunc, x, other) -> None:
    _compiled("inplace", lambda: _inplace)(ufunc, x, other)


def cache_size() -> int:
    """Number of compiled eager executables (all operations together)."""
    return sum(len(cf._cache) for cf in _cache.values())
