"""NumPy's own random generators inside a trace: a call would run once, on the host, while
tracing, and its numbers would be frozen into the program. The tracer refuses it instead
(``reactant.random`` keeps its state on the device)."""

from __future__ import annotations

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
