"""NumPy's own random generators inside a trace: a call would run once, on the host, while
tracing, and its numbers would be frozen into the program. The tracer refuses it instead
(``reactant.random`` keeps its state on the device): in converted user code every call into
``numpy.random`` is checked (``refuse_numpy_random``), and ``numpy.random``'s module-level
functions are guarded for code the tracer does not convert (library code, functions without
source): while this thread traces, they raise; otherwise they run unchanged."""

from __future__ import annotations

import functools
import threading

import numpy as np

from .errors import UnsupportedError

_TYPES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, np.random.SeedSequence)


def refuse_numpy_random(fn) -> None:
    """Raise ``UnsupportedError`` (naming the user's line) if ``fn`` draws from or builds a
    NumPy generator."""
    owner = getattr(fn, "__self__", None)
    module = getattr(fn, "__module__", None) or ""
    if isinstance(owner, _TYPES) or module.startswith("numpy.random") or (
            isinstance(fn, type) and issubclass(fn, _TYPES)):
        name = getattr(fn, "__qualname__", getattr(fn, "__name__", "numpy.random"))
        raise UnsupportedError(
            f"numpy.random ({name}) inside a compiled function would draw once, while tracing, and "
            "return the same numbers on every call",
            hint="use reactant.random.default_rng(seed) and pass the generator as an argument "
                 "(its state advances in place on every call)")


def _guard(fn, tracing):
    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        if tracing():
            refuse_numpy_random(fn)
        return fn(*args, **kwargs)

    guarded.__reactant_guarded__ = fn
    return guarded


_installed = threading.Lock()


def guard_numpy_random(tracing) -> None:
    """Wrap ``numpy.random``'s module-level functions (the legacy ones, bound to its global
    RandomState, and ``default_rng``) so that they refuse to run while ``tracing()``; classes
    are left alone (isinstance checks keep working). Idempotent."""
    with _installed:
        for name in dir(np.random):
            fn = getattr(np.random, name)
            if name.startswith("_") or isinstance(fn, type) or not callable(fn) or hasattr(fn, "__reactant_guarded__"):
                continue
            if isinstance(getattr(fn, "__self__", None), np.random.RandomState) or name == "default_rng":
                setattr(np.random, name, _guard(fn, tracing))
