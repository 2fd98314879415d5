"""Eager NumPy on device arrays: each operation is compiled once per signature (through the
same compile path and cache as user functions) and run immediately."""

from __future__ import annotations

import operator
import threading
from typing import Any, Callable

import numpy as np

from .compiler import CompiledFunction, Options, _put

_EAGER = Options(optimize="O0", warn_scalars=False)
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
    if ufunc is np.power and method == "__call__" and len(inputs) == 2:
        _refuse_negative_int_power(*inputs, kwargs.get("dtype"))
    host = _host_out(kwargs, masked=method == "__call__")
    if host is not None:
        return _write_host_out(eager_ufunc(ufunc, method, inputs, host[0]), *host[1:])
    call = getattr(ufunc, method)
    return _compiled(("ufunc", ufunc, method), lambda: lambda *a, **k: call(*a, **k))(*inputs, **kwargs)


def _host_out(kwargs: dict, masked: bool = False):
    """``out=`` naming NumPy arrays (``buf[i] *= x`` with a NumPy ``buf`` and a device ``x``):
    (the other keyword arguments, the outs, the ``where=`` mask) to compute on the device and
    write into the NumPy arrays afterwards, as NumPy would; None otherwise."""
    out = kwargs.get("out")
    outs = out if isinstance(out, tuple) else (out,)
    if out is None or not any(type(o) is np.ndarray for o in outs):
        return None
    rest = {k: v for k, v in kwargs.items() if k != "out" and not (masked and k == "where")}
    where = kwargs.get("where", True) if masked else True
    return rest, out, where


def _write_host_out(result, out, where):
    """Write ``result`` into NumPy/device ``out`` as NumPy's ``out=`` does (its casting rule
    ``same_kind``, its ``where=``); returns ``out``."""
    outs = out if isinstance(out, tuple) else (out,)
    results = result if isinstance(result, tuple) else (result,)
    mask = where if where is True else np.asarray(where)
    for o, r in zip(outs, results):
        if type(o) is np.ndarray:
            np.copyto(o, np.asarray(r), casting="same_kind", where=mask)
        else:
            o[...] = np.where(mask, np.asarray(r), np.asarray(o)) if mask is not True else r
    return out if isinstance(out, tuple) and len(out) > 1 else outs[0]


# NumPy functions that may return views of their argument (the traced program says which
# results are; those come back as ConcreteViews that follow and write through to the base)
_VIEW_FUNCS = frozenset({
    np.transpose, np.permute_dims, np.matrix_transpose, np.swapaxes, np.moveaxis, np.rollaxis, np.reshape,
    np.ravel, np.expand_dims, np.squeeze, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.flip, np.fliplr,
    np.flipud, np.rot90, np.split, np.array_split, np.hsplit, np.vsplit, np.diagonal, np.broadcast_to,
    np.broadcast_arrays})


def _viewing_call(key, call, args, kwargs):
    """``call(*args, **kwargs)`` compiled; results that are NumPy views of an argument become
    ConcreteViews of it."""
    from .arrays import make_view

    cf = _compiled(key, lambda: call)
    copies = _reshape_copies(args[0], call, args, kwargs) if call in (np.reshape, np.ravel) else False
    if copies:
        return cf(*args, **kwargs)
    if copies is None:
        from .tracing.errors import UnsupportedError

        raise UnsupportedError(
            f"numpy.{call.__name__} of a view of a view, outside a compiled function: whether NumPy copies or "
            "returns a view depends on a memory layout that is not tracked here",
            hint="copy it first (.copy()), or do this inside a @reactant.compile function")

    def view(leaf, base_strides, pos):
        base, strides = base_strides
        def read():
            out = cf(*args, **kwargs)
            from .tracing.pytree import flatten
            from .arrays import _is_concrete

            return flatten(out, is_leaf=_is_concrete)[0][pos]

        writer = _compiled(("view-write", key, pos), lambda: _leaf_writer(call, pos))
        return make_view(leaf, base, strides, read, lambda v: writer(v, *args, **kwargs))

    return cf._state.call_viewing(args, kwargs, view)


def _reshape_copies(x, call, args, kwargs) -> bool | None:
    """For ``np.reshape``/``np.ravel`` of the eager view ``x``: whether NumPy copies (True),
    returns a view (False), or None when ``x``'s layout is not known (a view of a view)."""
    from .arrays import ConcreteView
    from .tracing.views import is_c_contiguous, nocopy_reshape_strides

    if type(x) is not ConcreteView:
        return False
    strides = x._strides
    if strides is None:
        return None
    if call is np.ravel:
        order = args[1] if len(args) > 1 else kwargs.get("order", "C")
        return order != "C" or not is_c_contiguous(x.shape, strides)
    shape = args[1] if len(args) > 1 else kwargs.get("shape", kwargs.get("newshape"))
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if -1 in shape:
        known = int(np.prod([n for n in shape if n != -1]))
        shape = tuple(x.size // max(known, 1) if n == -1 else n for n in shape)
    return nocopy_reshape_strides(x.shape, strides, shape) is None


def _leaf_writer(call, pos):
    """A function writing ``value`` into leaf ``pos`` of ``call(*args)``: traced, that leaf is
    a view of an argument, so the write updates the argument in place."""
    def write(value, *args, **kwargs):
        from .tracing.pytree import flatten
        from .tracing import TracedRArray

        out = call(*args, **kwargs)
        leaf = flatten(out, is_leaf=lambda x: isinstance(x, TracedRArray))[0][pos]
        leaf[...] = value

    return write


def eager_function(func, args, kwargs):
    host = _host_out(kwargs)
    if host is not None:
        return _write_host_out(eager_function(func, args, host[0]), *host[1:])
    if func in _VIEW_FUNCS:
        return _viewing_call(("function", func), func, args, kwargs)
    result = _compiled(("function", func), lambda: func)(*args, **kwargs)
    failure = _LINALG_FAILURES.get(func)
    if failure is not None:
        _raise_linalg_failure(failure, args, kwargs, result)
    return result


# Compiled linear algebra returns NaN/inf where a factorization fails (a device cannot raise);
# an eager call raises NumPy's LinAlgError instead: a non-finite result from finite inputs.
_LINALG_FAILURES = {
    np.linalg.solve: "Singular matrix", np.linalg.inv: "Singular matrix",
    np.linalg.tensorsolve: "Singular matrix", np.linalg.tensorinv: "Singular matrix",
    np.linalg.matrix_power: "Singular matrix",
    np.linalg.cholesky: "Matrix is not positive definite",
    np.linalg.eigh: "Eigenvalues did not converge", np.linalg.eigvalsh: "Eigenvalues did not converge",
    np.linalg.eig: "Eigenvalues did not converge", np.linalg.eigvals: "Eigenvalues did not converge",
    np.linalg.svd: "SVD did not converge", np.linalg.svdvals: "SVD did not converge",
    np.linalg.pinv: "SVD did not converge", np.linalg.lstsq: "SVD did not converge in Linear Least Squares",
}


def _refuse_negative_int_power(base, exponent, dtype) -> None:
    """NumPy's ValueError for integers to a negative integer power. A compiled program cannot
    raise from the device (it gives a documented value, see the traced ``power``); eagerly the
    exponent's values are at hand (a static exponent is refused while tracing)."""
    if not hasattr(exponent, "__reactant_concrete__") or _kind(exponent) != "i" or _kind(base) not in "biu":
        return
    if dtype is not None and np.dtype(dtype).kind not in "iu":
        return
    if np.any(np.asarray(exponent) < 0):
        raise ValueError("Integers to negative integer powers are not allowed.")


def _kind(v) -> str:
    """The dtype kind ``v`` takes part in promotion with (Python scalars by their type)."""
    for t, k in ((bool, "b"), (int, "i"), (float, "f"), (complex, "c")):
        if type(v) is t:
            return k
    dt = getattr(v, "dtype", None)
    return np.dtype(dt).kind if dt is not None else "O"


def _finite(tree) -> bool:
    leaves = tree if isinstance(tree, (tuple, list)) else [tree]
    for leaf in leaves:
        if isinstance(leaf, (tuple, list)):
            if not _finite(leaf):
                return False
        elif hasattr(leaf, "dtype") and np.dtype(leaf.dtype).kind in "fc":
            if not np.all(np.isfinite(np.asarray(leaf))):
                return False
    return True


def _raise_linalg_failure(message: str, args, kwargs, result) -> None:
    if not _finite(result) and _finite(list(args) + list(kwargs.values())):
        raise np.linalg.LinAlgError(message)


def _setitem(x, index, value):
    x[index] = value


def _inplace(ufunc, x, other):
    from .tracing.numpy_api import inplace_ufunc

    inplace_ufunc(ufunc, x, other)


def _is_mask(i) -> bool:
    dt = getattr(i, "dtype", None)
    return dt is not None and dt == bool and getattr(i, "ndim", 0) > 0 and not isinstance(i, type)


def concrete_index(index):
    """Eagerly an index's values are known, so what would have a run-time length in a
    compiled program gets a static one: a boolean mask becomes the integer index arrays of
    its true elements (NumPy's definition of ``x[mask]``), and device numbers used as slice
    bounds become Python ints."""
    items = index if isinstance(index, tuple) else (index,)
    if not any(_is_mask(i) or (isinstance(i, slice) and _array_bounds(i)) for i in items):
        return index
    from .arrays import to_rarray

    out = []
    for i in items:
        if _is_mask(i):
            out.extend(to_rarray(np.nonzero(np.asarray(i)), device=_device_of(i)))
        elif isinstance(i, slice) and _array_bounds(i):
            out.append(slice(*(None if b is None else operator.index(b) for b in (i.start, i.stop, i.step))))
        else:
            out.append(i)
    return tuple(out)


def _array_bounds(s: slice) -> bool:
    return any(hasattr(b, "__array_function__") for b in (s.start, s.stop, s.step))


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
    return _viewing_call("getitem", operator.getitem, (x, concrete_index(index)), {})


def _is_scalar_mask(i) -> bool:
    dt = getattr(i, "dtype", None)
    return (dt is not None and dt == bool and getattr(i, "ndim", 1) == 0 and not isinstance(i, type)) \
        or type(i) is bool


def eager_setitem(x, index, value) -> None:
    items = index if isinstance(index, tuple) else (index,)
    if any(_is_mask(i) and not isinstance(i, np.ndarray) for i in items) and _size(value) != 1:
        # x[mask] = v with one value per true element: the mask's count is known here (NumPy's
        # definition: the integer indices of its true elements); a scalar keeps the masked form
        index = concrete_index(index)
    _compiled("setitem", lambda: _setitem)(x, index, value)


def _size(v) -> int:
    shape = getattr(v, "shape", None)
    return int(np.prod(shape)) if shape is not None else int(np.size(v))


def eager_inplace(ufunc, x, other) -> None:
    if ufunc is np.power:
        _refuse_negative_int_power(x, other, None)
    _compiled("inplace", lambda: _inplace)(ufunc, x, other)


def cache_size() -> int:
    """Number of compiled eager executables (all operations together)."""
    return sum(len(cf._cache) for cf in _cache.values())
