"""The one table from NumPy callables to traced implementations, and the dispatchers that
NumPy's protocols (``__array_ufunc__``, ``__array_function__``) call into."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import UnsupportedError

# np function (or ufunc) -> implementation taking the same arguments
FUNCTIONS: dict[Any, Callable] = {}
# (ufunc, method) for ufunc methods other than __call__: reduce, accumulate, outer, at
UFUNC_METHODS: dict[tuple[Any, str], Callable] = {}
# NumPy functions that NumPy does not dispatch (no ``__array_function__``): converted code calls
# their implementation directly, which handles non-traced arguments itself (NumPy's function)
DIRECT: set = set()


def implements(*np_funcs, method: str | None = None):
    """Register the decorated function as the traced implementation of ``np_funcs``."""

    def deco(impl):
        for f in np_funcs:
            f = getattr(f, "__reactant_guarded__", f)  # NumPy's function, not our guard around it
            if method is None:
                FUNCTIONS[f] = impl
            else:
                UFUNC_METHODS[(f, method)] = impl
        return impl

    return deco


def _qualname(f) -> str:
    mod = getattr(f, "__module__", None) or "numpy"
    if mod.startswith("numpy") and not mod.startswith("numpy.linalg") and not mod.startswith("numpy.fft"):
        mod = "numpy"
    return f"{mod}.{getattr(f, '__name__', repr(f))}"


_NAMES: dict = {}


def numpy_name(func, method: str = "__call__") -> str:
    """How the user wrote the call: ``np.cumprod``, ``np.linalg.eig``, ``np.multiply.accumulate``."""
    key = (func, method)
    name = _NAMES.get(key)
    if name is None:
        base = "np." + func.__name__ if isinstance(func, np.ufunc) else _qualname(func)
        if base.startswith("numpy"):
            base = "np" + base[len("numpy"):]
        name = _NAMES[key] = base if method == "__call__" else f"{base}.{method}"
    return name


def _named_call(name: str, impl, args, kwargs):
    """``impl(*args, **kwargs)`` with the ops it makes named after the NumPy call (see
    ``TraceContext.location``)."""
    from ..context import active

    tc = active()
    if tc is None:
        return impl(*args, **kwargs)
    return tc.numpy_calling(name, impl, args, kwargs)


def _deferred(args) -> bool:
    """Whether an operand's type handles mixed calls itself (a ``Window``): traced arrays then
    return NotImplemented so that NumPy asks it."""
    return any(getattr(type(a), "__reactant_defer__", False) for a in args)


def dispatch_function(func, args, kwargs):
    if _deferred(args):
        return NotImplemented
    impl = FUNCTIONS.get(func)
    if impl is None:
        raise UnsupportedError(
            f"{_qualname(func)} has no traced implementation in reactant",
            hint="rewrite it with supported NumPy functions (the README lists them), "
            "or open an issue naming this function",
        )
    from .construction import STRUCTURED_LISTS, lists_as_arrays

    if func not in STRUCTURED_LISTS:  # a list holding traced values is an array (np.sum([t, u]))
        args, kwargs = lists_as_arrays(args, kwargs)
    # out= is handled here, once, for every function: the implementation computes the result
    # and it is written into ``out`` (an implementation never sees out=, so none can ignore it)
    out = kwargs.pop("out", None)
    result = _named_call(numpy_name(func), impl, args, kwargs)
    if out is not None:
        return _write_out(out, result)
    return result


def dispatch_ufunc(ufunc: np.ufunc, method: str, inputs, kwargs):
    if _deferred(inputs):
        return NotImplemented
    if method == "__call__":
        impl = FUNCTIONS.get(ufunc)
    else:
        impl = UFUNC_METHODS.get((ufunc, method))
    if impl is None:
        name = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        raise UnsupportedError(f"{name} has no traced implementation in reactant",
                               hint="rewrite it with supported NumPy functions")
    out = kwargs.pop("out", None)
    result = _named_call(numpy_name(ufunc, method), impl, inputs, kwargs)
    if out is not None:
        return _write_out(out, result)
    return result


def _write_out(out, result):
    """``out=`` on a traced array rebinds it (an in-place update)."""
    from ..traced import TracedRArray
    from .indexing import setitem

    outs = out if isinstance(out, tuple) else (out,)
    results = result if isinstance(result, tuple) else (result,)
    for o, r in zip(outs, results):
        if type(o) is np.ndarray:  # an array of the Python state (``self.total += x``): its handle
            from ..state_writes import state_array_handle

            h = state_array_handle(o)
            if h is not None:
                arr, o = o, h
                out = tuple(h if x is arr else x for x in out) if isinstance(out, tuple) else h
                outs = tuple(h if x is arr else x for x in outs)
        if not isinstance(o, TracedRArray):
            raise UnsupportedError("out= must be a traced array inside a compiled function",
                               hint="create it from a traced array (np.zeros_like(x, ...)), or use the result")
        refuse = getattr(o, "refuse_write", None)  # a read-only view (numpy_api.strides)
        if refuse is not None:
            refuse()
        if tuple(o.shape) != tuple(getattr(r, "shape", ())):
            from ..errors import ShapeError, describe

            raise ShapeError(f"out= {describe(o)} does not have the result's shape {tuple(r.shape)}")
        setitem(o, Ellipsis, r)
    return out if isinstance(out, tuple) and len(out) > 1 else outs[0]
