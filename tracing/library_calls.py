"""NumPy calls made by code the tracer does not convert (library code, functions without
source) where NumPy alone would fail on traced values.

``np.lexsort`` dispatches on its ``keys`` argument as one object: a *list* of traced arrays
hides them from NumPy's ``__array_function__`` protocol, and NumPy would ask each tracer for
``__array__`` (which raises). In converted user code the call is rewritten
(``autograph._numpy_call``); for other code ``np.lexsort`` is wrapped: while this thread traces, a
list of keys that holds a traced value is passed as a tuple, which NumPy dispatches to the traced
implementation. Outside traces the wrapper calls NumPy's function unchanged.

``np.lib.stride_tricks.as_strided`` is not dispatched at all: NumPy would build its view over
whatever ``np.array(x)`` gives for a traced ``x`` (at best an error, at worst a view of foreign
memory). While this thread traces, the wrapper sends a traced (or device) ``x`` to the traced
implementation (``numpy_api.strides``); converted user code gets there through
``autograph._numpy_call`` whether or not the wrapper is installed.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

_installed = threading.Lock()


def _traced_list(keys, is_traced) -> bool:
    return isinstance(keys, list) and any(is_traced(k) for k in keys)


def guard_lexsort(tracing, is_traced) -> None:
    """Wrap ``np.lexsort`` as described above (``tracing()``: whether this thread traces;
    ``is_traced(x)``: whether ``x`` is a traced value). Idempotent."""
    with _installed:
        original = np.lexsort
        if hasattr(original, "__reactant_guarded__"):
            return

        @functools.wraps(original)
        def lexsort(keys, axis=-1):
            if tracing() and _traced_list(keys, is_traced):
                keys = tuple(keys)
            return original(keys, axis=axis)

        lexsort.__reactant_guarded__ = original
        np.lexsort = lexsort


def guard_as_strided(tracing) -> None:
    """Wrap ``np.lib.stride_tricks.as_strided`` as described above. Idempotent."""
    with _installed:
        module = np.lib.stride_tricks
        original = module.as_strided
        if hasattr(original, "__reactant_guarded__"):
            return

        @functools.wraps(original)
        def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
            if tracing():
                from .numpy_api.strides import as_strided as traced

                return traced(x, shape, strides, subok, writeable)  # NumPy's own for a host x
            return original(x, shape, strides, subok, writeable)

        as_strided.__reactant_guarded__ = original
        module.as_strided = as_strided
