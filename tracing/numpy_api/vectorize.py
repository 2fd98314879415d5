"""``np.vectorize`` and ``np.apply_along_axis`` on traced arrays, through ``vmap``.

NumPy calls the Python function once per element (``vectorize``), per core-dimension block
(``vectorize(..., signature="(n),(n)->()")``) or per 1-D slice (``apply_along_axis``). On
traced arrays the function is traced once, on one example, inside vmap's counted loop,
which the optimizer turns into batched operations where it can (``reactant.tracing.vmap``).
Shapes, output counts and dtypes follow NumPy's rules (the first call's result types, or
``otypes``), and so do its errors for size-0 inputs and mismatched core dimensions.

``apply_along_axis`` is dispatched by NumPy (``__array_function__``). ``vectorize`` is a class
whose ``__call__`` NumPy does not dispatch: it would ask each traced argument for
``__array__``. While this thread traces, ``np.vectorize.__call__`` is wrapped so that a call
with a traced (or device) argument comes here; any other call is NumPy's own.

The function may not write into its arguments: NumPy hands ``apply_along_axis``'s function
a view of the input (a write changes the input), a traced example is a copy; vmap refuses
such a write with a clear error.
"""

from __future__ import annotations

import math
import re
import threading
from typing import Any, Callable

import numpy as np

from .. import ops
from ..context import active
from ..errors import ArgumentError, DTypeError, ShapeError, describe
from ..traced import TracedRArray
from ._registry import implements
from .convert import as_traced, broadcast_shapes, broadcast_to, normalize_axis

_VECTORIZE_CALL = np.vectorize.__call__  # NumPy's own (the guard below replaces the attribute)
_VECTORIZE_CALL = getattr(_VECTORIZE_CALL, "__reactant_guarded__", _VECTORIZE_CALL)


# -- helpers -----------------------------------------------------------------------------------
def _shape(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _is_traced(x) -> bool:
    return isinstance(x, TracedRArray) or getattr(x, "__reactant_concrete__", None) is not None


def _converted(fn: Callable) -> Callable:
    from ..vmap import convert_user  # (Python control flow on traced values works in fn)

    return convert_user(fn)


def _named_like(wrapper: Callable, fn: Callable) -> Callable:
    """``wrapper`` reported (loop errors) at ``fn``'s definition."""
    from ..vmap import defined_at

    wrapper.__reactant_where__ = defined_at(fn)
    wrapper.__reactant_name__ = getattr(fn, "__name__", "pyfunc")
    return wrapper


def _vmap(fn: Callable, in_axes: tuple, args: tuple):
    from ..vmap import map_call

    return map_call(fn, in_axes, 0, args, {})


def _as_array(v, what: str) -> TracedRArray:
    """A result NumPy turns into an array (``asanyarray``): traced, a number, a NumPy array,
    or a list/tuple of them."""
    if isinstance(v, TracedRArray):
        return v
    if isinstance(v, (list, tuple)):
        from .construction import from_data

        return from_data(v)
    if isinstance(v, (bool, int, float, complex, np.ndarray, np.generic)) or _is_traced(v):
        return as_traced(v)
    raise ArgumentError(f"{what} returned a {type(v).__name__}, which is not an array or a number")


def _otype(c) -> np.dtype:
    dt = np.dtype(c)
    if dt.kind in "OSUV":
        raise DTypeError(f"np.vectorize otypes {dt} (not a numeric dtype) has no traced implementation")
    return dt


# -- np.vectorize ----------------------------------------------------------------------------
def vectorize_call(vec: np.vectorize, args: tuple, kwargs: dict) -> Any:
    """``vec(*args, **kwargs)`` with traced arguments (NumPy's semantics; see the module)."""
    pyfunc = vec.pyfunc
    conv = _converted(pyfunc)
    excluded = vec.excluded
    inds = [i for i in range(len(args)) if i not in excluded]
    names = [n for n in kwargs if n not in excluded]
    vargs = [args[i] for i in inds] + [kwargs[n] for n in names]

    def call(*vals):  # pyfunc with the vectorized arguments put back in their places
        a, kw = list(args), dict(kwargs)
        for k, i in enumerate(inds):
            a[i] = vals[k]
        kw.update(zip(names, vals[len(inds):]))
        return conv(*a, **kw)

    _named_like(call, pyfunc)
    otypes = None if vec.otypes is None else [_otype(c) for c in vec.otypes]
    if vec.signature is not None:
        return _with_signature(call, vargs, vec.signature, otypes)
    if not vargs:
        return call()
    return _elementwise(call, vargs, otypes)


def _results(res, nout: int | None, what: str) -> list:
    """pyfunc's result as a list of outputs (a tuple is several), checked against ``nout``."""
    outs = list(res) if isinstance(res, tuple) else [res]
    if nout is not None and len(outs) != nout:
        raise ShapeError(f"{what}: wrong number of outputs from pyfunc: expected {nout}, got {len(outs)}")
    return outs


def _elementwise(call: Callable, vargs: list, otypes: list | None):
    what = "np.vectorize"
    shape = broadcast_shapes(*[_shape(v) for v in vargs])
    n = math.prod(shape)
    if n == 0:
        if otypes is None:
            raise ShapeError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        outs = [ops.full(shape, 0, dt) for dt in otypes]
        return outs[0] if len(outs) == 1 else tuple(outs)
    nout = None if otypes is None else len(otypes)

    def scalar_call(*vals):
        outs = [_as_array(o, what) for o in _results(call(*vals), nout, what)]
        for o in outs:
            if o.shape != ():
                raise ShapeError(f"{what}: pyfunc returned {describe(o)} where a scalar is expected (setting an "
                                 "array element with a sequence)", hint="give np.vectorize a signature= for "
                                 "functions of arrays, e.g. signature='(n)->()'")
        return tuple(outs)

    _named_like(scalar_call, call)
    # arguments of one element are the same in every call: passed as they are (Python scalars
    # stay Python scalars); the others are flattened and mapped
    mapped = [_shape(v) != () for v in vargs]
    if not any(mapped):
        outs = list(scalar_call(*vargs))
    else:
        flat = tuple(ops.reshape(broadcast_to(as_traced(v), shape), (n,)) if m else v for v, m in zip(vargs, mapped))
        outs = [ops.reshape(o, shape) for o in _vmap(scalar_call, tuple(0 if m else None for m in mapped), flat)]
    if otypes is not None:
        outs = [ops.convert(o, dt) if o.dtype != dt else o for o, dt in zip(outs, otypes)]
    return outs[0] if len(outs) == 1 else tuple(outs)


_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_CORES = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = rf"^{_CORES}->{_CORES}$"


def parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The input and output core dimensions of a gufunc signature (``"(m,n),(n)->(m)"``)."""
    s = re.sub(r"\s+", "", signature)
    if not re.match(_SIGNATURE, s):
        raise ValueError(f"not a valid gufunc signature: {s}")
    return tuple([tuple(re.findall(_DIM, arg)) for arg in re.findall(_CORE, part)] for part in s.split("->"))


def _core_shape(x_shape: tuple, core: tuple, sizes: dict, what: str) -> tuple:
    """The core shape of an array with these core dimensions, checked against (and added to)
    ``sizes``."""
    if len(x_shape) < len(core):
        raise ShapeError(f"{what}: {len(x_shape)}-dimensional argument does not have enough dimensions for all "
                         f"core dimensions {core!r}")
    got = x_shape[len(x_shape) - len(core):]
    for d, size in zip(core, got):
        if sizes.setdefault(d, size) != size:
            raise ShapeError(f"{what}: inconsistent size for core dimension {d!r}: {size!r} vs {sizes[d]!r}")
    return got


def _with_signature(call: Callable, vargs: list, signature: str, otypes: list | None):
    what = f"np.vectorize(signature={signature!r})"
    ins, outs_core = parse_signature(signature)
    if len(vargs) != len(ins):
        raise ArgumentError(f"{what}: wrong number of positional arguments: expected {len(ins)}, got {len(vargs)}")
    sizes: dict = {}
    loops = []
    for v, core in zip(vargs, ins):
        s = _shape(v)
        _core_shape(s, core, sizes, what)
        loops.append(s[:len(s) - len(core)])
    loop = broadcast_shapes(*loops)
    nout = len(outs_core)
    n = math.prod(loop)
    if n == 0:
        if otypes is None:
            raise ShapeError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        if any(d not in sizes for core in outs_core for d in core):
            raise ShapeError("cannot call `vectorize` with a signature including new output dimensions on size 0 "
                             "inputs")
        res = [ops.full(loop + tuple(sizes[d] for d in core), 0, dt) for core, dt in zip(outs_core, otypes)]
        return res[0] if nout == 1 else tuple(res)

    def block_call(*vals):
        known = dict(sizes)  # (a copy: the call keeps no state between traces)
        res = []
        for o, core in zip(_results(call(*vals), nout, what), outs_core):
            o = _as_array(o, what)
            got = _core_shape(o.shape, core, known, what)
            if o.shape != got:  # NumPy assigns it into an array of the core shape
                if any(s != 1 for s in o.shape[:o.ndim - len(core)]):
                    raise ShapeError(f"{what}: could not broadcast pyfunc's output {describe(o)} into the core "
                                     f"shape {got}")
                o = ops.reshape(o, got)
            res.append(o)
        return tuple(res)

    _named_like(block_call, call)
    # an argument with no loop dimensions is the same in every call: passed as it is
    mapped = [lp != () for lp in loops]
    if not any(mapped):
        res = list(block_call(*vargs))
    else:
        flat = []
        for v, lp, core, m in zip(vargs, loops, ins, mapped):
            if not m:
                flat.append(v)
                continue
            t = as_traced(v)
            cs = t.shape[t.ndim - len(core):] if core else ()
            flat.append(ops.reshape(broadcast_to(t, loop + cs), (n,) + cs))
        res = _vmap(block_call, tuple(0 if m else None for m in mapped), tuple(flat))
        res = [ops.reshape(r, loop + r.shape[1:]) for r in res]
    if otypes is not None:
        res = [ops.convert(r, dt) if r.dtype != dt else r for r, dt in zip(res, otypes)]
    return res[0] if nout == 1 else tuple(res)


def _guarded_vectorize_call(self, *args, **kwargs):
    if self.pyfunc is not np._NoValue and active() is not None and (
            any(_is_traced(a) for a in args) or any(_is_traced(v) for v in kwargs.values())):
        return vectorize_call(self, args, kwargs)
    return _VECTORIZE_CALL(self, *args, **kwargs)


_guarded_vectorize_call.__reactant_guarded__ = _VECTORIZE_CALL
_install = threading.Lock()


def guard_vectorize() -> None:
    """Route ``np.vectorize`` calls with traced arguments here while this thread traces (see
    the module). Idempotent."""
    with _install:
        if not hasattr(np.vectorize.__call__, "__reactant_guarded__"):
            np.vectorize.__call__ = _guarded_vectorize_call


guard_vectorize()


# -- np.apply_along_axis ---------------------------------------------------------------------
@implements(np.apply_along_axis)
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d(a, *args, **kwargs)`` on every 1-D slice ``a`` of ``arr`` along ``axis``; its
    result's dimensions take the place of ``axis`` (NumPy's)."""
    x = as_traced(arr)
    axis = normalize_axis(axis, x.ndim)
    outer = x.shape[:axis] + x.shape[axis + 1:]
    if any(d == 0 for d in outer):
        raise ShapeError("Cannot apply_along_axis when any iteration dimensions are 0")
    conv = _converted(func1d)

    def row_call(row):
        return _as_array(conv(row, *args, **kwargs), "np.apply_along_axis: func1d")

    _named_like(row_call, func1d)
    perm = [d for d in range(x.ndim) if d != axis] + [axis]
    rows = ops.reshape(ops.transpose(x, perm), (math.prod(outer), x.shape[axis]))
    res = _vmap(row_call, (0,), (rows,))
    r = res.shape[1:]
    res = ops.reshape(res, outer + r)
    # the result's dimensions where ``axis`` was
    k = len(outer)
    return ops.transpose(res, list(range(axis)) + list(range(k, k + len(r))) + list(range(axis, k)))
