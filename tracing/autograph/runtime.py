"""The object converted code calls, as ``__reactant_rt__`` (the argument of the factory that
makes each converted function: ``converter``): one attribute for each construct the
transformer emits, implemented in the module of its concern."""

from __future__ import annotations

import functools
import types
from typing import Any, Callable

import numpy as np

from .. import control_flow as cf
from ..control_flow import staged
from ..errors import ConcretizationError
from .places import _staged_write, traced_in_place_of
from ..functions import cached_call
from ..host_random import refuse_numpy_random
from . import branches, expressions, loops, places
from .expressions import _minmax
from .numpy_calls import _numpy_call
from .places import _has_traced
from .undefined import _undefined
from .user_code import _convertible


class _Runtime:
    """The runtime of converted code (one for every converted function: the loop mode comes
    from the active trace). ``convert`` converts the user functions that converted code calls
    (the converter makes the runtime, so this module does not import it)."""

    NO_RESULT = cf.NO_RESULT  # the result of a path that has not returned yet (early returns)

    def __init__(self, convert: Callable[..., Any]):
        self._convert = convert

    # variable access -------------------------------------------------------------------------
    @staticmethod
    def ld(getter: Callable[[], Any], name: str) -> Any:
        try:
            return getter()
        except NameError:  # UnboundLocalError too
            return _undefined(name, "it is not assigned before this point")

    # statements ------------------------------------------------------------------------------
    if_stmt = staticmethod(branches.if_stmt)
    while_stmt = staticmethod(loops.while_stmt)
    for_range = staticmethod(loops.for_range)
    for_iter = staticmethod(loops.for_iter)
    # guards for statements left as they are
    assert_ = staticmethod(expressions.assert_)
    concrete_test = staticmethod(expressions.concrete_test)

    # expressions -----------------------------------------------------------------------------
    ifexp = staticmethod(expressions.ifexp)
    and_ = staticmethod(expressions.and_)
    or_ = staticmethod(expressions.or_)
    not_ = staticmethod(expressions.not_)

    # items and attributes: NumPy arrays made in the traced code meeting traced values, reads
    # of Python state (recorded for the compiled function's guards: state_reads) ----------------
    slice = staticmethod(slice)  # the builtin, whatever the user's code calls "slice"
    getitem = staticmethod(places.getitem)
    attr = staticmethod(places.attr)
    setitem = staticmethod(places.setitem)
    store = staticmethod(places.store)
    store_in = staticmethod(places.store_in)
    aug_store = staticmethod(places.aug_store)
    aug_setitem = staticmethod(places.aug_setitem)
    aug_attr = staticmethod(places.aug_attr)
    aug_assign = staticmethod(places.aug_assign)
    unpack = staticmethod(places.unpack)

    def call_with_out(self, fn, out, *args, **kwargs):
        """``fn(*args, out=out, **kwargs)`` as a statement, returning what the name ``out``
        should hold: a NumPy ``out`` written with traced inputs becomes a traced array."""
        if type(out) is np.ndarray and (_has_traced(args) or _has_traced(list(kwargs.values())) or _staged_write(out)):
            out = traced_in_place_of(out)
        self.call(fn)(*args, out=out, **kwargs)
        return out

    def ufunc_at(self, method, target, *args, **kwargs):
        """The statement ``np.add.at(target, ...)`` (any ufunc's ``at``), returning what the
        name ``target`` should hold: a NumPy array updated with traced values becomes traced."""
        if type(target) is np.ndarray and (_has_traced(args) or _has_traced(list(kwargs.values())) or _staged_write(target)):
            target = traced_in_place_of(target)
        self.call(method)(target, *args, **kwargs)
        return target

    # calls ---------------------------------------------------------------------------------------
    def call(self, fn):
        refuse_numpy_random(fn)
        target = _inplace_target(fn)
        if target is not None:
            return functools.partial(_host_inplace, fn, target)
        numpy_call = _numpy_call(fn)
        if numpy_call is not None:
            return numpy_call
        if fn is max or fn is min:
            return functools.partial(_minmax, fn)
        if not isinstance(fn, (types.FunctionType, types.MethodType, functools.partial, type)) and \
                _convertible(getattr(type(fn), "__call__", None)):
            fn = fn.__call__  # an object called like a function (an optimizer's update): its method
        conv = self._convert(fn, strict=False)
        if not _convertible(getattr(fn, "__func__", fn)):
            return conv  # library code: called as it is
        return functools.partial(cached_call, conv)


# NumPy functions and array methods that change an array in place (their first argument, or the
# array a method is bound to)
_INPLACE_FUNCS = (np.copyto, np.put, np.putmask, np.place, np.fill_diagonal)
_INPLACE_METHODS = frozenset({"fill", "sort", "put", "itemset", "partition", "resize", "setflags"})


def _inplace_target(fn):
    """``"self"`` for an in-place method of a NumPy array, ``"first"`` for an in-place NumPy
    function, else None."""
    owner = getattr(fn, "__self__", None)
    if type(owner) is np.ndarray and getattr(fn, "__name__", "") in _INPLACE_METHODS:
        return "self"
    if any(fn is f for f in _INPLACE_FUNCS):
        return "first"
    return None


def _host_inplace(fn, target: str, *args, **kwargs):
    """``fn(*args)`` changing a NumPy array in place: while a branch or a loop body is traced it
    would happen once, now, whichever way the program goes: the clear error."""
    arr = fn.__self__ if target == "self" else (args[0] if args else None)
    if type(arr) is np.ndarray and staged():
        name = getattr(fn, "__name__", "?")
        raise ConcretizationError(
            f"{'ndarray.' + name if target == 'self' else 'numpy.' + name} changes a NumPy array in place inside a "
            "traced branch or loop body: tracing would do it once, now, not as the program runs",
            hint="write through an index instead (w[...] = value, w[i] += v): the array then follows the program")
    call = _numpy_call(fn) if target == "first" else None
    return (call or fn)(*args, **kwargs)

