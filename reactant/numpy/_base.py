"""What every function of the namespace shares: knowing whether a trace is active, turning
host values into the namespace's arrays (device arrays eagerly, traced values inside a
trace), and checking ``device=`` arguments."""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..arrays import ConcreteRArray, to_rarray
from ..tracing import TracedRArray, active
from ..tracing.array_methods import TRACED_DEVICE
from ..tracing.numpy_api import as_traced

Array = Any  # ConcreteRArray eagerly, TracedRArray inside a compiled function


def tracing() -> bool:
    """Whether the calling thread is tracing a compiled function."""
    return active() is not None


def is_array(x: Any) -> bool:
    """Arrays of this namespace (device arrays and traced arrays)."""
    return isinstance(x, (ConcreteRArray, TracedRArray))


def to_array(value: Any, device=None) -> Array:
    """``value`` (a NumPy array or scalar, or one of our arrays) as an array of this
    namespace: a traced value inside a trace (a constant for host data), else a device array
    on ``device`` (the default device when None)."""
    if isinstance(value, TracedRArray):
        return value
    if tracing():
        return as_traced(value)
    if isinstance(value, ConcreteRArray):
        if device is not None and device != value.device:
            return ConcreteRArray(value, device=device)
        return value
    arr = np.asarray(value)
    return to_rarray(arr, device=check_device(device))


def host(x: Any) -> np.ndarray:
    """The value of an eager array (or host value) as a NumPy array; for computations whose
    result shape depends on the values, which only run eagerly."""
    return np.asarray(x)


def check_device(device) -> Any:
    """``device=`` of a creation function: None (the default device), one of
    ``reactant.devices()``, or (inside a trace) the traced placeholder device."""
    if device is None or device is TRACED_DEVICE:
        return None
    from ..runtime import devices

    if device not in devices():
        raise ValueError(f"device {device!r} is not one of reactant.devices()")
    return device


def data_dependent(name: str, hint: str) -> None:
    """Raise the error of a function whose result shape depends on the values, called while
    tracing."""
    if tracing():
        from ..tracing.errors import UnsupportedError

        raise UnsupportedError(
            f"{name} has a result shape that depends on the values, which a compiled function "
            "cannot have", hint=hint)


def fused(fn: Callable) -> Callable:
    """Run ``fn`` (a composite of several NumPy operations) as one compiled program when
    called eagerly (compiled once per signature, like every eager NumPy operation), and
    inline into the trace when called inside one. Keeps the namespace's multi-step functions
    from compiling and dispatching each step separately."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if tracing():
            return fn(*args, **kwargs)
        from ..eager import eager_function

        return eager_function(fn, args, kwargs)

    return run
