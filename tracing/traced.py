"""``TracedRArray`` and ``TracedRNumber``: the values user code sees while it is traced.

A traced array holds an MLIR ``Value`` plus its shape and dtype (kept in Python so shape rules
never query MLIR). Operators, methods and NumPy's protocols (``__array_ufunc__``,
``__array_function__``) all go to ``numpy_api``, which records StableHLO ops.

Traced arrays are mutable handles: ``x[i] = v`` and ``x += v`` rebind ``x`` to a new value,
which is how in-place updates of a compiled function's arguments are detected.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir import ir

import threading
from weakref import ref as _ref

from .array_methods import NumpyArrayMethods
from .errors import ConcretizationError, describe

# the trace running on this thread (``context.tracing`` sets it): handles register with it
_tls = threading.local()

_CONCRETE_HINT = (
    "the value is only known when the compiled program runs; use reactant.cond / "
    "reactant.while_loop for data-dependent control flow, np.where for a data-dependent "
    "choice, or pass the Python value as a static argument (or to_rarray(..., "
    "track_numbers=True) to make it a runtime input)"
)


class TracedRArray(NumpyArrayMethods):
    """A symbolic array inside a trace: an MLIR value with a static shape and dtype.

    A base holds its current ``value``; a view (``TracedView``) reads and writes through its
    root base (``tracing.views``). Every handle is registered with its trace, which disables
    the survivors when it ends (``kill_escaped``)."""

    __slots__ = ("value", "shape", "dtype", "weak", "_root", "_chain", "_strides", "_vcache", "_nowrite",
                 "__weakref__")
    __array_priority__ = 1000  # win over ndarray in mixed binary operators

    def __init__(self, value: ir.Value, shape: tuple[int, ...], dtype: np.dtype, weak: bool = False):
        self.value = value
        self.shape = shape
        self.dtype = dtype
        self.weak = weak
        self._root = None
        self._nowrite = None
        tc = getattr(_tls, "tc", None)
        if tc is not None:  # (where: the user's line of the latest op, for error messages)
            tc.handles.append((_ref(self), tc.where))

    def __repr__(self) -> str:
        return f"{type(self).__name__}<{describe(self)}>"

    @property
    def device(self):
        """The placeholder device of traced values (placement is decided at run time)."""
        from .namespace import TRACED_DEVICE

        return TRACED_DEVICE

    def to_device(self, device, /, *, stream=None):
        """Inside a trace, moving between devices is not expressible: only the traced
        placeholder device (or None) is accepted, and the value is returned."""
        from .namespace import TRACED_DEVICE

        if device is not None and device is not TRACED_DEVICE:
            from .errors import UnsupportedError

            raise UnsupportedError("to_device() inside a compiled function: placement is decided when it runs",
                                   hint="move arrays with reactant.to_rarray(..., device=) outside the function")
        return self

    # -- NumPy protocols --------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from .numpy_api import dispatch_ufunc

        out = kwargs.get("out")
        if out is not None and any(type(o) is np.ndarray for o in out):
            # ``self.total += x``: a NumPy array of the state is updated; it is an operand too,
            # read through its handle (not as a constant of its value before the trace)
            from .state_writes import state_array_handle

            for o in out:
                h = state_array_handle(o) if type(o) is np.ndarray else None
                if h is not None:
                    inputs = tuple(h if i is o else i for i in inputs)
                    kwargs["out"] = tuple(h if x is o else x for x in kwargs["out"])
        return dispatch_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from .numpy_api import dispatch_function

        return dispatch_function(func, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        # NumPy asks for this where it cannot dispatch to us: a traced value inside a list given
        # to NumPy by code reactant does not convert (converted code builds such lists itself:
        # numpy_api.construction), or a NumPy array's operator with such a list. There is no
        # NumPy array to give.
        raise ConcretizationError(
            f"cannot convert traced {describe(self)} to a NumPy array: its value is only known when "
            "the compiled program runs",
            hint="use traced values in NumPy functions directly inside the compiled function, and build "
            "arrays from lists of them there with np.asarray / np.stack (NumPy itself, e.g. in library "
            "code or a NumPy array's operator with a list, needs real arrays)",
        )

    # -- concretization errors --------------------------------------------------------------
    def _concrete(self, what: str):
        raise ConcretizationError(
            f"{what} needs a concrete value, but this is traced {describe(self)}",
            hint=_CONCRETE_HINT,
        )

    def __bool__(self):
        self._concrete("a Python `if`/`while`/`and`/`or`/`not`/bool() on a traced value")

    def __float__(self):
        self._concrete("float()")

    def __int__(self):
        self._concrete("int()")

    def __complex__(self):
        self._concrete("complex()")

    def __index__(self):
        self._concrete("using a traced value as a Python index or size")

    def item(self, *args):
        self._concrete(".item()")

    def tolist(self):
        self._concrete(".tolist()")

    __hash__ = None  # mutable handle; like ndarray, not hashable

    # -- indexing ---------------------------------------------------------------------------
    def __getitem__(self, index):
        from .numpy_api.indexing import getitem

        return getitem(self, index)

    def __setitem__(self, index, value):
        from .numpy_api.indexing import setitem

        setitem(self, index, value)

    def _inplace(self, ufunc, other):
        from .numpy_api import inplace_ufunc

        return inplace_ufunc(ufunc, self, other)

    def _fill(self, value):
        from .numpy_api.indexing import setitem

        setitem(self, Ellipsis, value)

    @property
    def at(self):
        """JAX-style functional updates: ``x.at[idx].set(v)`` / ``.add(v)`` / ``.get()``."""
        from .numpy_api.indexing import AtIndexer

        return AtIndexer(self)


class TracedRNumber(TracedRArray):
    """A traced 0-d value (a scalar inside the trace). ``weak`` marks a traced Python scalar,
    which promotes like a Python number (NEP 50) rather than like an array."""

    __slots__ = ()


class TracedView(TracedRArray):
    """A view of a root base through a chain of steps (``tracing.views``): its value is read
    from the root's current value, and writes go back into the root."""

    __slots__ = ()

    @property
    def value(self) -> ir.Value:
        return _view_value(self)

    @property
    def base(self) -> TracedRArray:
        return self._root


class TracedViewNumber(TracedView, TracedRNumber):
    __slots__ = ()


def _view_value(v: TracedView) -> ir.Value:
    """The view's value now: cached while the root holds the same value and the place where
    it was computed still dominates the insertion point (its block is still being built)."""
    root = v._root
    rv = root.value
    c = v._vcache
    tc = getattr(_tls, "tc", None)
    if c is not None and c[0] is rv and tc is not None and any(ip is c[1] for ip in tc._ips):
        return c[2]
    p = TracedRArray(rv, root.shape, root.dtype)
    for step in v._chain:
        p = step.read(p)
    v._vcache = (rv, tc._ips[-1] if tc is not None and tc._ips else None, p.value)
    return p.value


def make_view(parent: TracedRArray, step, result: TracedRArray, strides) -> TracedRArray:
    """``result`` (just computed as ``step.read(parent)``) as a view of ``parent``'s root."""
    if parent._root is None:
        root, chain = parent, (step,)
    else:
        root, chain = parent._root, parent._chain + (step,)
    v = object.__new__(TracedViewNumber if result.shape == () else TracedView)
    v.shape = result.shape
    v.dtype = result.dtype
    v.weak = False
    v._root = root
    v._chain = chain
    v._strides = tuple(strides)
    v._nowrite = None
    tc = getattr(_tls, "tc", None)
    v._vcache = (root.value, tc._ips[-1] if tc is not None and tc._ips else None, result.value)
    if tc is not None:
        tc.handles.append((_ref(v), tc.where))
    return v


def root_of(x: TracedRArray) -> TracedRArray:
    """The base whose value holds ``x``'s elements (``x`` itself for a base)."""
    r = x._root
    return x if r is None else r


def rebind(x: TracedRArray, new: TracedRArray) -> None:
    """Make the handle ``x`` hold ``new``'s value: the one way an in-place update happens
    (``x[i] = v``, ``x += v``, ``out=``, ``np.add.at``...). A view writes through its chain
    into its root. Logged (root, value before) in the trace context so that control flow can
    carry updates made inside branches and loop bodies."""
    if new.shape != x.shape or new.dtype != x.dtype:
        raise AssertionError(f"in-place update changes {describe(x)} into {describe(new)}")
    root = x._root
    if root is None:
        root = x
        value = new.value
    else:
        from .errors import ReadOnlyError

        chain = x._chain
        for step in chain:
            if step.write is None:
                raise ReadOnlyError(f"assignment destination is read-only (a view made by {step.what})",
                                    hint="write into a copy (.copy()) or into the original array")
        parents = [TracedRArray(root.value, root.shape, root.dtype)]
        for step in chain[:-1]:
            parents.append(step.read(parents[-1]))
        cur = new
        for step, p in zip(reversed(chain), reversed(parents)):
            cur = step.write(p, cur)
        value = cur.value
    if root._nowrite is not None:
        why, others = root._nowrite
        if any(r() is not None for r in others):
            from .errors import AliasError

            raise AliasError(why, hint="copy it first (y = y.copy()) if the other arrays must not change, "
                                       "or update each array by its own name")
        root._nowrite = None  # the other arrays are gone: nobody else can see the write
    tc = getattr(_tls, "tc", None)
    if tc is not None:
        tc.mutations.append((root, root.value))
    root.value = value


def wrap(value: ir.Value, shape: tuple[int, ...], dtype: np.dtype) -> TracedRArray:
    """A traced value of this shape: TracedRNumber for 0-d, TracedRArray otherwise."""
    if shape == ():
        return TracedRNumber(value, shape, dtype)
    return TracedRArray(value, shape, dtype)


def is_traced(x: Any) -> bool:
    return isinstance(x, TracedRArray)

