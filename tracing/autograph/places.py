"""Reads and writes of items and attributes in converted code: a NumPy array that receives a
traced value (or is indexed by one) becomes a traced array where it can be rebound (a local
name, ``holder[key]``, ``holder.key``), else a clear error; reads of Python state are recorded
for the compiled function's guards (state_reads)."""

from __future__ import annotations

import operator

import numpy as np

from ..aliases import rebind as _rebind
from ..aliases import refuse_aliased as _refuse_aliased
from ..context import active as _active
from ..control_flow import staged
from ..errors import ConcretizationError
from ..numpy_api.convert import as_traced, contains_traced
from ..state_writes import state_array_handle
from ..traced import TracedRArray


def getitem(obj, index):
    """``obj[index]``; a NumPy array indexed by a traced index is traced first; a ``range``
    index is the integer array it holds (as NumPy reads it); ``np.r_[...]`` / ``np.c_[...]``
    of traced arrays concatenate them."""
    if type(index) is range or (type(index) is tuple and any(type(i) is range for i in index)):
        index = tuple(np.arange(i.start, i.stop, i.step) if type(i) is range else i for i in index) \
            if type(index) is tuple else np.arange(index.start, index.stop, index.step)
    if (obj is np.r_ or obj is np.c_) and _has_traced(index):
        return _concat_items(obj is np.c_, index if type(index) is tuple else (index,))
    if type(obj) is np.ndarray and _has_traced(index):
        return as_traced(obj)[index]
    return _read_item(obj, index, obj[index])


def attr(obj, name: str, owner: bool = False):
    """``obj.name`` (``owner``: return ``obj``, for ``obj.name op= v``, which reads it)."""
    value = getattr(obj, name)
    tc = _active()
    if tc is not None:
        tc.reads.attr(obj, name, value)
    return obj if owner else value


def setitem(obj, index, value):
    """``obj[index] = value``, returning what the name should hold: a NumPy array that
    receives a traced value (or a traced index) becomes a traced array."""
    if type(obj) is np.ndarray and (_has_traced(value) or _has_traced(index) or _staged_write(obj)):
        t = traced_in_place_of(obj)
        t[index] = value
        return t
    obj[index] = value
    return obj


def store(obj, index, value) -> None:
    """``obj[index] = value`` where ``obj`` is not a plain name (``d["a"][0] = v``): a NumPy
    array there cannot be rebound, so a traced value is a clear error."""
    if type(obj) is np.ndarray and (_has_traced(value) or _has_traced(index) or _staged_write(obj)):
        h = state_array_handle(obj)
        if h is not None:  # an array of the Python state: updated through its handle
            h[index] = value
            return
        raise ConcretizationError(
            "a NumPy array reached through an expression (an item of a list or dict, an attribute) "
            "receives a traced value: it cannot become a traced array there",
            hint="create it from a traced array (np.zeros_like(x, shape=...)), or bind it to a name first")
    obj[index] = value


def store_in(holder, key, index, value, is_attr: bool, op: str | None = None) -> None:
    """``holder[key][index] = value`` (``holder.key[...]`` when ``is_attr``; ``op=`` for
    ``op=``): a NumPy array there receiving a traced value is updated as a traced array
    (``_traced_for``) that then stands in its place."""
    cur = _place_value(holder, key, is_attr)
    if type(cur) is np.ndarray and not isinstance(holder, np.ndarray) and (
            _has_traced(value) or _has_traced(index) or _staged_write(cur)):
        t = _traced_for(holder, key, cur, is_attr)
        t[index] = value if op is None else getattr(operator, op)(t[index], value)
        _set_place(holder, key, is_attr, t)
    elif op is None:
        store(cur, index, value)
    else:
        aug_store(cur, index, op, value)


def aug_store(obj, index, op: str, value) -> None:
    """``obj[index] op= value`` where ``obj`` is not a plain name (``self.count[0] += v``)."""
    if type(obj) is np.ndarray and (_has_traced(value) or _has_traced(index) or _staged_write(obj)):
        h = state_array_handle(obj)
        if h is None:
            raise ConcretizationError(
                "a NumPy array reached through an expression (an item of a list or dict, an attribute) "
                "receives a traced value: it cannot become a traced array there",
                hint="create it from a traced array (np.zeros_like(x, shape=...)), or bind it to a name first")
        h[index] = getattr(operator, op)(h[index], value)
        return
    obj[index] = _combine_item(obj, index, obj[index], op, value)


def aug_setitem(obj, index, op: str, value):
    """``obj[index] op= value`` (``op``: the operator's name, e.g. ``iadd``)."""
    if type(obj) is np.ndarray and (_has_traced(value) or _has_traced(index) or _staged_write(obj)):
        t = traced_in_place_of(obj)
        t[index] = getattr(operator, op)(t[index], value)
        return t
    obj[index] = _combine_item(obj, index, obj[index], op, value)
    return obj


def aug_attr(obj, name: str, op: str, value) -> None:
    """``obj.name op= value``: a NumPy array there combined with a traced value."""
    cur = getattr(obj, name)
    tc = _active()
    if tc is not None:
        tc.reads.attr(obj, name, cur)
    setattr(obj, name, _combine_item(obj, name, cur, op, value, attr=True))


def aug_assign(obj, op: str, value):
    """``obj op= value``: a NumPy array combined in place with a traced value becomes the
    traced result."""
    if type(obj) is np.ndarray and (_has_traced(value) or _staged_write(obj)):
        shared = _refuse_aliased(obj)
        # (the in-place operator: NumPy's casting, w's dtype kept or a clear error)
        t = getattr(operator, op)(as_traced(obj), value)
        _rebind(shared, t)
        return t
    return getattr(operator, op)(obj, value)


def unpack(value, n: int) -> tuple:
    """``value`` as ``n`` items, as a tuple assignment would unpack it."""
    items = tuple(value)
    if len(items) != n:
        raise ValueError(f"{'too many' if len(items) > n else 'not enough'} values to unpack "
                         f"(expected {n}, got {len(items)})")
    return items


def _concat_items(columns: bool, items: tuple):
    """``np.r_[a, b, ...]`` (``columns``: ``np.c_``) with traced items: arrays and numbers
    concatenated along the first axis (``np.c_``: 1-D items as columns, along the last axis).
    Slices and directive strings stay NumPy's (refused for traced items)."""
    if any(isinstance(i, (slice, str)) for i in items):
        raise ConcretizationError(
            f"np.{'c_' if columns else 'r_'}[...] with slices or directives and traced values",
            hint="build it with np.concatenate / np.column_stack / np.arange")
    arrs = [as_traced(i) if not isinstance(i, TracedRArray) else i for i in items]
    if not columns:
        return np.concatenate([a.reshape(1) if a.ndim == 0 else a for a in arrs], axis=0)
    arrs = [a.reshape(1, 1) if a.ndim == 0 else a.reshape(-1, 1) if a.ndim == 1 else a for a in arrs]
    return np.concatenate(arrs, axis=-1)


def _read_item(obj, index, value):
    tc = _active()
    if tc is not None:
        tc.reads.item(obj, index, value)
    return value


def _has_traced(x) -> bool:
    if isinstance(x, tuple) and any(isinstance(e, slice) for e in x):  # an index: look into slices
        x = tuple((e.start, e.stop, e.step) if isinstance(e, slice) else e for e in x)
    elif isinstance(x, slice):
        x = (x.start, x.stop, x.step)
    return contains_traced((x,))


def _place_value(holder, key, is_attr: bool):
    """``holder.key`` (a read recorded for the guards) or ``holder[key]``."""
    if is_attr:
        return attr(holder, key)
    return getitem(holder, key)


def traced_in_place_of(arr: np.ndarray, slot: tuple | None = None):
    """The traced array that takes over NumPy array ``arr`` receiving a traced write: also put
    in the other items and attributes holding ``arr`` (refused when a name or a tuple does);
    later writes update it in place, so every holder sees them."""
    shared = _refuse_aliased(arr, slot=slot)
    t = as_traced(arr)
    _rebind(shared, t)
    return t


def _staged_write(arr: np.ndarray) -> bool:
    """A write of host values into a NumPy array made while tracing a loop body or a branch: it
    must follow the program (a traced array), not happen once, now."""
    return arr.dtype.kind in "biufc" and staged()


def _set_place(holder, key, is_attr: bool, value) -> None:
    if is_attr:
        setattr(holder, key, value)
    else:
        holder[key] = value


def _traced_for(holder, key, cur: np.ndarray, is_attr: bool):
    """The traced array that receives the traced values written into NumPy array ``cur``, held
    at ``holder[key]`` (``holder.key`` when ``is_attr``): a state array's handle (updated in
    place, state_writes), else a traced copy for that place, when nothing else holds the
    array (anything else would keep the old values: refused)."""
    h = state_array_handle(cur, item=None if is_attr else (holder, key))
    if h is not None:
        return h
    return traced_in_place_of(cur, slot=(holder, key))  # (the place written gets it from the caller)


def _combine_item(obj, key, cur, op: str, value, attr: bool = False):
    """What ``obj[key] op= value`` (``obj.key`` when ``attr``) leaves in that place, ``cur``
    being its value: for a NumPy array meeting a traced value, the in-place operator applied
    to its traced stand-in (NumPy's casting rules: its dtype is kept)."""
    if type(cur) is np.ndarray and (_has_traced(value) or _staged_write(cur)) and not isinstance(obj, np.ndarray):
        return getattr(operator, op)(_traced_for(obj, key, cur, attr), value)
    return getattr(operator, op)(cur, value)
