"""Python state a trace reads without receiving it as an argument, recorded while tracing.

A compiled program freezes whatever Python values the traced code read: a global scalar, an
attribute of ``self``, an item of a list, a NumPy array held by an object. Each such read is
recorded here (with a *snapshot* of the value as it was read, before the traced code may
change it) so the compiler can guard the cached program (``reactant/guards.py``): a later call
compares the snapshots with the current values and traces again when one differs.

Reads are recorded only through *known* objects: roots (the bound ``self`` of a compiled
method, ``functools.partial`` arguments, static argument objects, the globals and closure
cells of user functions run by the trace) and values reached from them. Objects the trace
creates are never known, so reading them records nothing. Modules are not followed.

Containers are snapshot whole and shallowly (lists, tuples, dicts, sets: their items' snapshots,
so iterating one is covered); objects by identity (their attributes are read, and recorded,
one by one); small NumPy arrays by content; large NumPy arrays (over ``LARGE_ARRAY_BYTES``) by
identity, shape and dtype: the trace turns them into runtime inputs (``is_state_array``) so the
program reads their current contents at every call.
"""

from __future__ import annotations

import functools
import hashlib
import os
import reprlib
import sys
import types
from typing import Any, Callable

import numpy as np

from .errors import ConcretizationError

LARGE_ARRAY_BYTES = 64 * 1024

_EXACT = frozenset((bool, int, str, bytes, type(None), type(Ellipsis), range, slice))


class _ShortRepr(reprlib.Repr):
    """Values for messages: scalars and containers shortened; other objects by type only (a
    device array's repr would copy it to the host)."""

    def repr_instance(self, x, level):
        if type(x) in _EXACT or isinstance(x, (float, complex, np.generic)):
            return super().repr_instance(x, level)
        if type(x) is np.ndarray:
            return f"array(shape={x.shape}, dtype={x.dtype})" if x.size > 6 else repr(x.tolist())
        return f"<{type(x).__name__} at {id(x):#x}>"


_repr = _ShortRepr()
_repr.maxstring = _repr.maxother = 40


class Id:
    """A snapshot part equal only to a snapshot of the same object (keeps it alive, so its
    id cannot be reused)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return type(other) is Id and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)

    def __repr__(self):
        return f"<{type(self.obj).__name__} at {id(self.obj):#x}>"


class Read:
    """One read of Python state: ``kind`` ("global", "cell", "attr", "item"), where the value
    is found again (``holder``: the globals dict, the cell, the object; ``key``: the name or
    index), the value's snapshot as first read, and a label naming it for messages."""

    __slots__ = ("kind", "holder", "key", "snap", "label", "shown", "first")

    def __init__(self, kind: str, holder, key, snap, label: str, value):
        self.kind, self.holder, self.key, self.snap, self.label = kind, holder, key, snap, label
        self.shown = short_repr(value)
        # (what ``put_back`` rebinds the place to; in a tuple: ``state_writes`` asks
        # ``gc.get_referrers`` who else holds a state array, and skips tuples)
        self.first = (value,)

    def current(self):
        """The value found at this place now (raises when it is gone)."""
        k = self.kind
        if k == "global":
            return self.holder[self.key]
        if k == "cell":
            return self.holder.cell_contents
        if k == "attr":
            return getattr(self.holder, self.key)
        return self.holder[self.key]


def put_at(kind: str, holder, key, value) -> None:
    """Bind ``value`` at a place of the Python state: ``kind`` "attr", "cell", or "global" /
    "item" (``holder[key]``)."""
    if kind == "attr":
        setattr(holder, key, value)
    elif kind == "cell":
        holder.cell_contents = value
    else:
        holder[key] = value


def short_repr(value) -> str:
    return _repr.repr(value)


def snapshot(v, found: Callable[[Any, str], None] | None = None, label: str = "", _seen: set | None = None):
    """A comparable summary of ``v``: equal snapshots mean a trace reading ``v`` again would
    read the same thing. ``found(obj, label)`` is told of every object, function, class and
    NumPy array met (to make them known; ``label`` names where). None for modules (not guarded)."""
    t = type(v)
    if t in _EXACT:
        return (t, v)
    if t is float:
        return (t, repr(v)) if v != v or v == 0.0 else (t, v)  # NaN; 0.0 vs -0.0
    if t is complex:
        return (t, repr(v))
    if t is np.ndarray:
        if found is not None:
            found(v, label)
        return array_snapshot(v)
    if isinstance(v, np.generic):
        return (t, v.dtype.str, v.tobytes())
    if t is np.dtype:
        return (t, v.str, v)
    if t is types.ModuleType:
        return None
    if t is types.MethodType:  # a fresh object at every access: its function and object
        return (t, Id(v.__func__), Id(v.__self__))
    if isinstance(v, (list, tuple, dict, set, frozenset)):
        seen = _seen if _seen is not None else set()
        if id(v) in seen:
            return (t, "cycle")
        seen.add(id(v))
        try:
            if isinstance(v, (set, frozenset)):
                return (t, frozenset(snapshot(x, None, "", seen) for x in v))
            if found is None:  # (checking: no labels to make)
                if isinstance(v, dict):
                    return (t, tuple((snapshot(k), snapshot(x, None, "", seen)) for k, x in v.items()))
                return (t, tuple(snapshot(x, None, "", seen) for x in v))
            if isinstance(v, dict):
                return (t, tuple((snapshot(k), snapshot(x, found, f"{label}[{k!r}]", seen)) for k, x in v.items()))
            return (t, tuple(snapshot(x, found, f"{label}[{i}]", seen) for i, x in enumerate(v)))
        finally:
            seen.discard(id(v))
    if found is not None:
        found(v, label)
    return (Id, Id(v))


def array_snapshot(a: np.ndarray):
    """Small arrays by content; large ones by identity, shape and dtype."""
    if a.dtype == object:
        return (np.ndarray, a.shape, tuple(snapshot(x) for x in a.reshape(-1)))
    if a.nbytes <= LARGE_ARRAY_BYTES:
        return (np.ndarray, a.shape, a.dtype.str, a.tobytes())
    return (Id, Id(a), a.shape, a.dtype.str)


def digest(a: np.ndarray) -> bytes:
    """A hash of an array's contents (for large arrays whose contents the trace used on the
    host: read, but not turned into an input)."""
    c = np.ascontiguousarray(a)
    return hashlib.blake2b(memoryview(c).cast("B") if c.size else b"", digest_size=16).digest()


class StateReads:
    """The reads of Python state of one trace, in order, first read of each place only."""

    def __init__(self, ctx=None):
        self.ctx = ctx  # the trace's MLIR context (a traced value of another one has escaped)
        self.reads: list[Read] = []
        self._places: set = set()
        # id -> (object, label) of objects reads are recorded through
        self._known: dict[int, tuple[Any, str]] = {}
        # id -> [array, label, root array, host-used]: NumPy arrays of the state that the
        # trace turns into inputs when they meet traced values (large ones, and views of them)
        self.arrays: dict[int, list] = {}
        self.captured: set[int] = set()  # ids of the root arrays some input covers
        self._functions: dict[int, bool] = {}  # id -> whether its closure cells were read

    # -- roots --------------------------------------------------------------------------------
    def start(self, fn, leaves, inputs) -> None:
        """The roots of a trace of ``fn`` over ``leaves`` (``inputs``: the positions that are
        runtime inputs; the others are static objects)."""
        for i, leaf in enumerate(leaves):
            if i not in inputs and _is_object(leaf):
                self._found(leaf, f"argument {i}")
        self.function(fn, root=True)

    def function(self, fn, root: bool = False) -> None:
        """A user function about to run in the trace: the globals its code names are read and,
        for a root or a function of the state, its closure cells, its bound object and its
        ``functools.partial`` arguments."""
        root = root or id(fn) in self._known
        while True:
            if isinstance(fn, types.MethodType):
                if root:
                    self._found(fn.__self__, "self")
                root = root or id(fn.__self__) in self._known
                fn = fn.__func__
            elif isinstance(fn, functools.partial):
                wrapped = getattr(fn, "__wrapped__", None)  # a compiled function: what it compiles
                if wrapped is not None:
                    fn = wrapped
                    continue
                if root:
                    for k, a in enumerate(fn.args):
                        self._read("item", fn.args, k, a, f"partial argument {k}")
                    for k, a in fn.keywords.items():
                        self._read("item", fn.keywords, k, a, f"partial argument {k}")
                fn = fn.func
            else:
                break
        if not isinstance(fn, types.FunctionType):
            return
        if "__reactant_rt__" in fn.__code__.co_freevars:  # converted by autograph: the user's own
            fn = fn.__wrapped__
        root = root or id(fn) in self._known
        done = self._functions.get(id(fn))
        if done is not None and (done or not root) or _library(fn):
            return
        self._functions[id(fn)] = root
        name = fn.__qualname__
        if done is None:
            g = fn.__globals__
            for n in _global_names(fn.__code__):
                if n in g:
                    self._read("global", g, n, g[n], n)
        if root and fn.__closure__:
            for n, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    value = cell.cell_contents
                except ValueError:
                    continue
                self._read("cell", cell, n, value, f"{n} (a variable {name} closes over)")

    # -- reads through known objects -----------------------------------------------------------
    def attr(self, obj, name: str, value) -> None:
        """``obj.name`` read ``value``."""
        if type(obj) is np.ndarray:  # covered by the array's own snapshot
            self._derived(obj, value, f".{name}", callable(value))
            return
        known = self._known.get(id(obj))
        if known is None or isinstance(value, types.BuiltinMethodType):
            return
        self._read("attr", obj, name, value, f"{known[1]}.{name}")

    def item(self, obj, index, value) -> None:
        """``obj[index]`` read ``value``."""
        if type(obj) is np.ndarray:
            self._derived(obj, value, "[...]", True)
            return
        known = self._known.get(id(obj))
        if known is None or isinstance(obj, (list, tuple, dict)):
            return  # (containers: covered by their snapshots)
        if type(index) in _EXACT or type(index) is float:
            self._read("item", obj, index, value, f"{known[1]}[{index!r}]")

    # -- Python state changed while a traced branch was traced ------------------------------------
    def mark(self):
        """The state the trace has read, as it is now (for ``changed_since``, ``put_back``)."""
        values = [(r, _value(r)) for r in self.reads]
        return [(r, _now(r, v), v) for r, v in values], len(self.reads)

    def put_back(self, mark) -> None:
        """Rebind the places read that now hold another value than at ``mark`` (or, first
        read since, than when read) to that value: a region that failed leaves the state as
        it was (a global counter it incremented)."""
        pre, n = mark
        for r, before, value in pre + [(r, r.snap, r.first[0]) for r in self.reads[n:]]:
            if value is not _GONE and _now(r) != before:
                try:
                    put_at(r.kind, r.holder, r.key, value)
                except Exception:  # noqa: BLE001 - a place that cannot be bound again: left as it is
                    pass

    def changed_since(self, mark, carried=()) -> list[str]:
        """Labels of the places read that hold another value than at ``mark`` (or, first read
        since, than when read), traced handles apart (traced updates are carried as values)
        and the attributes in ``carried`` ((object, name): merged by the caller)."""
        pre, n = mark
        skip = {(id(o), a) for o, a in carried}
        out = []
        for r, before, _ in pre + [(r, r.snap, None) for r in self.reads[n:]]:
            if r.kind == "attr" and (id(r.holder), r.key) in skip:
                continue
            now = _now(r)
            if now != before and not (type(now) is tuple and now[:1] == ("traced",)):
                out.append(r.label)
        return out

    # -- NumPy arrays of the state --------------------------------------------------------------
    def is_state_array(self, a: np.ndarray) -> bool:
        """Whether ``a`` should be a runtime input (a large NumPy array of the state or a view
        of one) rather than a constant."""
        info = self.arrays.get(id(a))
        return info is not None and info[0] is a

    def made_input(self, a: np.ndarray) -> None:
        """``a`` (``is_state_array``) became an input: its contents need no guard."""
        self.captured.add(id(self.arrays[id(a)][2]))

    def uncovered_arrays(self) -> list[tuple[np.ndarray, str, bytes]]:
        """Large state arrays whose contents the trace may have used without an input
        carrying them: (array, label, digest as read); they are guarded by content."""
        out = []
        for key, (a, label, root, host, dig) in list(self.arrays.items()):
            if root is a and (host or key not in self.captured):
                out.append((a, label, dig))
        return out

    def _derived(self, arr: np.ndarray, value, suffix: str, host: bool) -> None:
        """``value`` read from a state array: a view of it is one too (an input when traced,
        whatever its size); anything else means its contents were used on the host."""
        info = self.arrays.get(id(arr))
        if info is None or info[0] is not arr:
            return
        if type(value) is np.ndarray and value.dtype != object and np.may_share_memory(value, arr):
            if id(value) not in self.arrays:
                self.arrays[id(value)] = [value, info[1] + suffix, info[2], False, None]
        elif host:  # a scalar, a copy or a method: the contents are used on the host
            self.arrays[id(info[2])][3] = True

    # -- recording ------------------------------------------------------------------------------
    def _read(self, kind: str, holder, key, value, label: str) -> None:
        place = (kind, id(holder), key)
        if place in self._places:
            return
        self._places.add(place)
        snap = snapshot(value, self._found, label)
        if snap is None:
            return
        self.reads.append(Read(kind, holder, key, snap, label, value))

    def _found(self, obj, label: str) -> None:
        if type(obj) is np.ndarray:
            if obj.dtype != object and obj.nbytes > LARGE_ARRAY_BYTES and id(obj) not in self.arrays:
                self.arrays[id(obj)] = [obj, label, obj, False, digest(obj)]
            return
        if _is_traced(obj):
            from .escape import EscapedTracer

            if type(obj) is EscapedTracer:
                obj._fail()  # kept from a trace that ended: says where it was made
            if self.ctx is not None and obj.value.context is not self.ctx:
                raise ConcretizationError(
                    f"{label or 'a value read'} holds a traced value of an earlier trace: a traced value stored "
                    "into Python state escapes the trace that made it (it has no value afterwards)",
                    hint="return it from the compiled function and store what the call returns, or pass the "
                    "state as an argument")
            return
        if hasattr(type(obj), "__reactant_concrete__") or id(obj) in self._known:
            return
        self._known[id(obj)] = (obj, label)


_GONE = object()


def _value(r: Read):
    try:
        return r.current()
    except Exception:  # noqa: BLE001 - gone
        return _GONE


def _now(r: Read, v=None):
    """What ``changed_since`` compares of the value at ``r`` (``v``: that value, when read)."""
    v = _value(r) if v is None else v
    if v is _GONE:
        return ("gone",)
    if _is_traced(v):
        return ("traced",)
    return snapshot(v)


def _is_object(v) -> bool:
    t = type(v)
    return not (t in _EXACT or t in (float, complex, np.ndarray, np.dtype, types.ModuleType)
                or isinstance(v, np.generic))


def _is_traced(v) -> bool:
    from .traced import TracedRArray  # (traced imports the context, which imports this)

    return isinstance(v, TracedRArray)


def _global_names(code: types.CodeType, depth: int = 0) -> list[str]:
    """Names a function's code (and the code of functions nested in it) may read as globals."""
    names = list(code.co_names)
    if depth < 8:
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                names += _global_names(c, depth + 1)
    return names


_LIB_DIRS = tuple({os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (np, os)}
                  | {sys.prefix + os.sep + "lib" + os.sep, os.path.dirname(os.path.abspath(__file__)) + os.sep})


@functools.lru_cache(maxsize=4096)
def _library_file(path: str) -> bool:
    path = os.path.abspath(path)
    if "site-packages" in path or path.startswith(_LIB_DIRS):
        return True
    for name in ("reactant", "reactant.optimize", "reactant.sharding", "reactant.ir"):
        m = sys.modules.get(name)
        if m is not None and path.startswith(os.path.dirname(os.path.abspath(m.__file__)) + os.sep):
            return True
    return False


def _library(fn: types.FunctionType) -> bool:
    """Library code (NumPy, the standard library, site-packages, reactant itself): its module
    state is not the user's."""
    return _library_file(fn.__code__.co_filename)
