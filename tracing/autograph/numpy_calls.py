"""NumPy functions called while tracing: from converted code through ``_numpy_call`` (lists
holding traced values, ``size=``, functions NumPy does not dispatch), from library code
through the guards installed when this module is imported."""

from __future__ import annotations

import numpy as np

from ..context import active as _active
from ..host_random import guard_numpy_random
from ..library_calls import guard_as_strided, guard_lexsort
from ..traced import TracedRArray

_SIZED = frozenset({np.unique, np.nonzero, np.argwhere, np.flatnonzero})
_DISPATCHED = type(np.concatenate)  # NumPy functions with __array_function__ dispatch
# ufunc method -> positions of its array operands (``at``'s indices: see _ufunc_method_call)
_UFUNC_METHOD_ARRAYS = {"reduce": (0,), "accumulate": (0,), "reduceat": (0, 1), "outer": (0, 1), "at": (0, 2)}


def _numpy_call(fn):
    """A NumPy function or ufunc called from traced code, where NumPy alone would go wrong:
    data holding traced values inside a list/tuple, which NumPy's dispatch does not see (it
    would ask each tracer for ``__array__``). Constructors (``np.array``, ``np.asarray``...)
    of such data, or of a traced array, build the traced array; other functions and ufuncs
    get such list arguments as traced arrays, except functions whose lists are sequences of
    arrays (``np.stack``...): those go straight to their traced implementation, which reads
    them. ``size=`` (which NumPy's signature refuses) goes to the traced implementation too,
    and so do functions NumPy does not dispatch (``DIRECT``: ``as_strided``). None for anything
    else."""
    from ..numpy_api import DIRECT, FUNCTIONS, UFUNC_METHODS, dispatch_function
    from ..numpy_api.construction import CONSTRUCTORS, STRUCTURED_LISTS, hides_traced, lists_as_arrays

    fn = getattr(fn, "__reactant_guarded__", fn)  # NumPy's own function behind our guard
    try:
        build = CONSTRUCTORS.get(fn)
        impl = FUNCTIONS.get(fn)
    except TypeError:  # unhashable callable
        return None
    if build is not None:
        return build
    if isinstance(fn, np.ufunc):
        return _ufunc_call(fn)
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, np.ufunc) and (owner, getattr(fn, "__name__", None)) in UFUNC_METHODS:
        return _ufunc_method_call(fn, _UFUNC_METHOD_ARRAYS.get(fn.__name__, (0,)))
    if impl is None and type(fn) is not _DISPATCHED:
        return None
    if fn in DIRECT:  # NumPy would not dispatch it (as_strided): the implementation decides
        return impl
    structured = fn in STRUCTURED_LISTS

    def call(*args, **kwargs):
        if fn in _SIZED and "size" in kwargs:
            return impl(*args, **kwargs)
        if not structured:  # then NumPy sees the traced arrays and dispatches
            args, kwargs = lists_as_arrays(args, kwargs)
        elif (any(hides_traced(a) for a in args) or any(hides_traced(v) for v in kwargs.values())) \
                and not _defers((args, tuple(kwargs.values()))):
            out = dispatch_function(fn, args, dict(kwargs))  # (UnsupportedError without an impl)
            if out is not NotImplemented:
                return out
        return fn(*args, **kwargs)

    return call


def _defers(x) -> bool:
    """Whether a (nested) list/tuple holds a value whose type handles mixed NumPy calls itself
    (a ``Window``): NumPy's own dispatch, which sees the items of a sequence, then decides."""
    if isinstance(x, (list, tuple)):
        return any(_defers(e) for e in x)
    return getattr(type(x), "__reactant_defer__", False)


def _as_array(x):
    """A list/tuple holding traced values as one traced array; anything else as it is."""
    from ..numpy_api.construction import from_data, hides_traced

    return from_data(x) if hides_traced(x) else x


def _ufunc_call(uf: np.ufunc):
    def call(*args, **kwargs):
        args = tuple(_as_array(a) if k < uf.nin else a for k, a in enumerate(args))  # (then outputs)
        if "where" in kwargs:
            kwargs["where"] = _as_array(kwargs["where"])
        return uf(*args, **kwargs)

    return call


def _ufunc_method_call(method, arrays: tuple[int, ...]):
    def call(*args, **kwargs):
        args = [_as_array(a) if k in arrays else a for k, a in enumerate(args)]
        if method.__name__ == "at" and len(args) > 1:  # indices: a tuple is one index per axis
            idx = args[1]
            args[1] = tuple(_as_array(i) for i in idx) if isinstance(idx, tuple) else _as_array(idx)
        if "where" in kwargs:
            kwargs["where"] = _as_array(kwargs["where"])
        return method(*args, **kwargs)

    return call


# library code (not converted) calling NumPy while this thread traces: numpy.random refused,
# np.lexsort and as_strided of traced values sent to their traced implementations
guard_numpy_random(lambda: _active() is not None)
guard_lexsort(lambda: _active() is not None, lambda x: isinstance(x, TracedRArray))
guard_as_strided(lambda: _active() is not None)
