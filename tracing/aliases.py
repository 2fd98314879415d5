"""What the traced code's variables reach: who else sees a NumPy array that is about to become
traced (``refuse_aliased``), and the Python state an abandoned attempt puts back
(``PythonState``).

A NumPy array made in the traced code that receives a traced value (``w -= x``,
``p["w"] -= x``, ``w[0] = x[1]``) cannot hold it: it is replaced by a traced array in the one
place being written (a name, or an item or attribute of a local container). NumPy would have
updated the array itself, so every other place that still holds it (another name, a list, a
tuple, a dict, an object, a view) would see the old values: that is refused with a clear
error, never a silent difference.

The other places are searched from the variables of the traced code's frames and their
modules' globals, through lists, tuples, sets, dicts and objects' attributes, a few levels
deep. (``gc.get_referrers`` cannot do it alone: CPython stops tracking a dict whose values are
all atomic, a dict of NumPy arrays or an object's attributes among them; and it also finds
reactant's own bookkeeping.) A search cut short by its budget falls back to refusing any
container the garbage collector knows.
"""

from __future__ import annotations

import functools
import gc
import os
import sys
import types

import numpy as np

from ..ir.errors import package_complete, package_dirs
from .errors import ConcretizationError

_DEPTH = 4  # container levels searched below a variable
_BUDGET = 20_000  # objects visited per search (beyond: the tracked-container check alone)
_CONTAINERS = (list, tuple, dict, set, frozenset)
_CODE = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.BuiltinMethodType,
         types.ModuleType, functools.partial)
_HINT = "create it from a traced array (np.zeros_like(x, shape=...)) or keep a single name for it"


@functools.cache
def _trace_entry():
    """The code of the frame that runs the traced function (frames above it are the caller's)."""
    from .trace import _trace

    return _trace.__code__


def is_reactant(path: str) -> bool:
    """Whether a source file belongs to reactant itself (not to the user's code)."""
    return path.startswith(package_dirs())


_STDLIB = os.path.dirname(os.path.abspath(os.__file__)) + os.sep
_user_code: dict = {}  # code object -> whether its frames are the traced code's own (bounded)


def _is_user_code(code) -> bool:
    r = _user_code.get(code)
    if r is None:
        path = os.path.abspath(code.co_filename)
        r = not is_reactant(path) and not path.startswith(_STDLIB)
        if package_complete():  # (final once the package's folders are)
            if len(_user_code) >= 4096:  # (converted functions make code objects at run time)
                _user_code.clear()
            _user_code[code] = r
    return r


def user_frames() -> list[tuple[str, dict, dict]]:
    """(function name, locals, globals) of the traced code's own frames, innermost first (not
    reactant's, nor the standard library's, between them)."""
    frames, f = [], sys._getframe(1)
    entry = _trace_entry()
    while f is not None and f.f_code is not entry:
        if _is_user_code(f.f_code):
            frames.append((f.f_code.co_name, f.f_locals, f.f_globals))
        f = f.f_back
    return frames


def _generated(name: str) -> bool:
    """Variables the source converter introduces (loop carries, flags): not the user's."""
    return name.startswith("__rt") or name.startswith("__reactant")


def _searchable(v) -> bool:
    t = type(v)
    if t in _CONTAINERS or isinstance(v, _CONTAINERS):
        return True
    # an instance of a user class: its attributes (not modules, classes, functions, arrays,
    # nor reactant's own objects, whose attribute access may raise: an undefined variable)
    mod = getattr(t, "__module__", None) or ""
    if mod == "builtins" or mod.startswith(("numpy", "jax", "reactant")) or issubclass(t, type) \
            or isinstance(v, _CODE):  # (an instance with a __call__, a layer, is searched)
        return False
    try:
        return type(object.__getattribute__(v, "__dict__")) is dict
    except Exception:  # noqa: BLE001 - no instance dict (slots) or an odd descriptor
        return False


def _items(v):
    if isinstance(v, dict):
        return ((k, x, f"[{k!r}]") for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ((i, x, f"[{i}]") for i, x in enumerate(v))
    if isinstance(v, (set, frozenset)):
        return ((None, x, " (an item)") for x in v)
    return ((k, x, f".{k}") for k, x in vars(v).items())


def reachable(frames) -> list:
    """The lists, dicts, sets and user objects the traced code's variables (and its modules'
    globals) reach, a few levels deep, within the search budget."""
    out, seen, budget = [], set(), [_BUDGET]

    def visit(v, depth: int) -> None:
        seen.add(id(v))
        out.append(v)
        if depth >= _DEPTH:
            return
        for _, x, _ in _items(v):
            budget[0] -= 1
            if budget[0] <= 0:
                return
            if _searchable(x) and id(x) not in seen:
                visit(x, depth + 1)

    for i, (_, local, glob) in enumerate(frames):
        for name, v in list(local.items()) + [(n, x) for n, x in glob.items() if not n.startswith("__")]:
            if not _generated(name) and _searchable(v) and id(v) not in seen and budget[0] > 0:
                visit(v, 1)
    return out


def places(arr: np.ndarray, frames) -> tuple[list[tuple], bool]:
    """Where the traced code reaches ``arr``: ``(holder, key, text)`` per place (``holder``
    a frame's locals for a name) and whether the search was complete."""
    out, seen, budget = [], set(), [_BUDGET]

    def search(v, text: str, depth: int) -> None:
        for key, x, step in _items(v):
            budget[0] -= 1
            if budget[0] <= 0:
                return
            if x is arr:
                out.append((v, key, text + step))
            elif depth < _DEPTH and _searchable(x) and id(x) not in seen:
                seen.add(id(x))
                search(x, text + step, depth + 1)

    for fname, local, _ in frames:
        for name, v in local.items():
            if _generated(name):
                continue
            if v is arr:
                out.append((local, name, f"{name} (in {fname})"))
            elif _searchable(v) and id(v) not in seen:
                seen.add(id(v))
                search(v, name, 1)
    for _, _, glob in frames:  # containers in the modules' globals (a cache, a registry)
        if id(glob) in seen:
            continue
        seen.add(id(glob))
        for name, v in glob.items():
            if v is arr:
                out.append((glob, name, f"the global {name}"))
            elif _searchable(v) and not name.startswith("__") and id(v) not in seen:
                seen.add(id(v))
                search(v, name, 1)
    return out, budget[0] > 0


def _rebindable(holder, own: set) -> bool:
    """A place that can be made to hold the traced array instead: an item of a list or dict, an
    attribute of an object (not a frame's variables, a module's globals, a tuple or a set)."""
    if id(holder) in own or isinstance(holder, (tuple, set, frozenset)):
        return False
    return isinstance(holder, (list, dict)) or not isinstance(holder, _CONTAINERS)


def rebind(places_: list, traced) -> None:
    """Put ``traced`` in each ``(holder, key)`` of ``places_`` (``refuse_aliased``'s answer)."""
    for holder, key in places_:
        if isinstance(holder, (list, dict)):
            holder[key] = traced
        else:  # (the instance dict the array was found in: no property setter runs)
            vars(holder)[key] = traced


_COPY_MAX = 1 << 20  # elements of an array kept whole by a snapshot (larger: its digest only)


def numpy_contents(frames) -> list[tuple]:
    """``(array, label, digest, copy)`` of the NumPy arrays the traced code reaches (its
    variables, and items and attributes of the containers and objects they reach): what a loop
    traced once must not change in place (``changed_numpy``); ``copy`` (arrays up to
    ``_COPY_MAX`` elements) puts them back (``restore_numpy``)."""
    from .state_reads import digest

    out, seen = [], set()

    def add(v, label: str) -> None:
        if type(v) is np.ndarray and v.dtype != object and id(v) not in seen:
            seen.add(id(v))
            out.append((v, label, digest(v), v.copy() if v.size <= _COPY_MAX else None))

    for fname, local, _ in frames:
        for name, v in local.items():
            if not _generated(name):
                add(v, repr(name))
    for c in reachable(frames):
        for _, x, step in _items(c):
            add(x, f"at {step}" if step.startswith("[") else f"at {step.strip()}")
    return out


def changed_numpy(snapshot: list[tuple]) -> list[str]:
    """The labels of the arrays of ``snapshot`` whose contents changed since it was taken."""
    from .state_reads import digest

    return [label for arr, label, d, _ in snapshot if digest(arr) != d]


def restore_numpy(snapshot: list[tuple]) -> None:
    """Put back the contents ``snapshot`` kept of the arrays that changed since."""
    from .state_reads import digest

    for arr, _, d, copy in snapshot:
        if copy is not None and digest(arr) != d:
            arr[...] = copy


def refuse_carried_alias(arr: np.ndarray, what: str, carry, names) -> None:
    """A NumPy array a traced loop carries (``what``: where) may be updated in place by the
    body, and the loop's result reaches only the loop's own variables (``names``) and the
    containers of its carry (``carry``): any other place holding the array (another name, a
    dict item or attribute it was also stored in, a global) would keep the old values. Refused
    with a clear error when there is one."""
    frames = user_frames()
    mine: set = set()

    def walk(v) -> None:
        if isinstance(v, (list, tuple, dict)) and id(v) not in mine:
            mine.add(id(v))
            for x in (v.values() if isinstance(v, dict) else v):
                walk(x)

    walk(carry)
    local_ids = {id(d) for _, d, _ in frames}
    found, complete = places(arr, frames)
    others = [t for h, k, t in found if id(h) not in mine and not (id(h) in local_ids and k in names)]
    if arr.base is not None:
        others.append("the array it is a view of")
    if not complete:
        others.append("(the search was cut short: it may be held elsewhere)")
    if others:
        raise ConcretizationError(
            f"the NumPy array updated by {what} is also reachable as "
            + ", ".join(repr(t) for t in others[:4])
            + ": NumPy would update it there too, which a traced loop's result cannot",
            hint="unroll the loop (reactant.unroll(n) or loops='unroll'), or keep a single name for the array")


def refuse_aliased(arr: np.ndarray, slot: tuple | None = None) -> list:
    """Refuse to replace ``arr`` by a traced array when a place the traced array cannot take
    over still holds it: another name (of this function or another), a global, a tuple, a set,
    a view. The place written is a name of the innermost user function (``slot`` None; seen
    also from the converted loop or branch bodies it runs in, one name per frame) or the item
    or attribute ``slot = (container, key)``. Returns the other items and attributes holding
    ``arr`` (a list, a dict, an object): the caller puts the traced array there too
    (``rebind``), so that they see every update, as NumPy's one array would."""
    frames = user_frames()
    if arr.base is not None:
        raise ConcretizationError(
            "a NumPy array that is a view of another receives a traced value: the other would not see the update",
            hint=_HINT)
    # the frames of the function written in: its converted bodies (innermost) and itself
    group = 0
    while group < len(frames) - 1 and _generated(frames[group][0]):
        group += 1
    own = {id(d) for _, d, _ in frames}
    namespaces = own | {id(g) for _, _, g in frames}  # (names: not places a value can be put in)
    holder_ids = set() if slot is None else {id(slot[0]), id(getattr(slot[0], "__dict__", None))}
    found, complete = places(arr, frames)
    shared = [f for f in found if _rebindable(f[0], namespaces) and not (id(f[0]) in holder_ids and f[1] == slot[1])]
    found = [f for f in found if not any(f is x for x in shared)]
    others = []
    for i, (fname, local, _) in enumerate(frames):
        names = [k for h, k, t in found if h is local]
        if slot is None and i <= group and len(names) > 1:  # ``b = a``: only the one written is rebound
            raise ConcretizationError(
                f"the NumPy array named {' and '.join(repr(n) for n in names)} in {fname} receives a traced "
                "value through one of these names: the other would keep the old values", hint=_HINT)
        if slot is not None or i > group:
            others += [t for h, k, t in found if h is local]
    others += [t for h, k, t in found if id(h) not in own and not (id(h) in holder_ids and k == slot[1])]
    if others:
        what = "a NumPy array"
        if slot is not None:
            at = f"[{slot[1]!r}]" if isinstance(slot[0], (dict, list)) else f".{slot[1]}"
            what = f"the NumPy array at {at}"
        mine = [t.split(" (in ")[0] for h, k, t in found if frames and h is frames[0][1]]
        if slot is None and len(mine) == 1:
            what = f"the NumPy array {mine[0]!r}"
        raise ConcretizationError(
            f"{what} receives a traced value, but it is also reachable as "
            + ", ".join(repr(t) for t in others[:4])
            + ": NumPy would update it there too, which a traced array cannot",
            hint=_HINT)
    if complete:
        return [(h, k) for h, k, _ in shared]
    # a search cut short by its budget: any tracked container but the traced code's own
    # locals, cells and tuples (the carries of converted loops) counts
    taken = {id(x) for h, _, _ in shared for x in (h, getattr(h, "__dict__", None))}
    holders = [r for r in gc.get_referrers(arr)
               if type(r).__name__ not in ("frame", "cell", "tuple") and id(r) not in own and id(r) not in holder_ids
               and id(r) not in taken]
    if holders:
        raise ConcretizationError(
            "a NumPy array that is also referenced elsewhere (a view of it, or a list, dict or object holding "
            "it) receives a traced value: those references would not see the update",
            hint=_HINT)
    return []


_GONE = object()


def _traced(v) -> bool:
    from .traced import TracedRArray  # (traced imports this module)

    return isinstance(v, TracedRArray)


class PythonState:
    """The contents of the lists, dicts, sets and objects the traced code reaches, to put back
    after an attempt that is thrown away (a loop traced once as a ``while``, then unrolled):
    what its body stored there (``self.value = ...`` in a method it called, an appended item)
    would otherwise stay, holding values of the discarded attempt."""

    def __init__(self, frames=None):
        self.saved = []
        self.owners = []  # (for ``changed``) the object each saved container belongs to
        # (the copies are tuples: a copy must not look like another place holding an array to
        # ``gc.get_referrers``, which ``state_writes`` asks)
        for v in reachable(user_frames() if frames is None else frames):
            if isinstance(v, (list, set)):
                self.saved.append((v, tuple(v)))
            elif isinstance(v, dict):
                self.saved.append((v, tuple(v.items())))
            elif not isinstance(v, (tuple, frozenset)):
                self.saved.append((vars(v), tuple(vars(v).items())))
            else:
                continue
            self.owners.append(v)

    def _changes(self):
        """Every change since the snapshot: (owner, where, key, new value, text), ``where``
        "attr" (an attribute rebound, added or removed: ``key`` its name), "item" (a dict's
        item), "list" or "set"; a value that is gone is ``_GONE``."""
        for (obj, old), owner in zip(self.saved, self.owners):
            kind = type(owner).__name__
            if isinstance(obj, list):
                for a, b in zip(obj, old):
                    if a is not b:
                        yield owner, "list", None, a, f"an item of a {kind} was replaced"
                for a in (obj[len(old):] if len(obj) >= len(old) else [_GONE]):
                    yield owner, "list", None, a, f"a {kind} grew or shrank"
            elif isinstance(obj, set):
                if obj != set(old):
                    yield owner, "set", None, _GONE, f"a {kind} changed"
            else:
                where, old = ("attr" if obj is not owner else "item"), dict(old)
                for k in obj.keys() | old.keys():
                    new, was = obj.get(k, _GONE), old.get(k, _GONE)
                    if new is not was:
                        what = f"attribute {k!r} of a {kind}" if where == "attr" else f"item {k!r} of a {kind}"
                        how = "removed" if new is _GONE else "added" if was is _GONE else "rebound"
                        yield owner, where, k if was is not _GONE else None, new, f"{what} was {how}"

    def changed(self, places=frozenset()) -> str | None:
        """The first change to plain Python values made since the snapshot (an attribute or
        item rebound to a number, a string, a container..., an item added, removed or
        replaced), described; None when there is none. Traced values are not counted here
        (a body's handles kept in Python state are escaped tracers: ``escape``), nor the
        attributes ``places`` ((object id, name): carried by the caller)."""
        for owner, where, key, new, text in self._changes():
            if not _traced(new) and not (where == "attr" and (id(owner), key) in places):
                return text
        return None

    def rebound_attributes(self) -> tuple[list | None, list]:
        """(owner, name, new value) of every attribute of an object rebound since the snapshot
        and the subset rebound to plain Python values; (None, []) when anything else changed
        (a list, a dict's item, a set, an attribute added or removed)."""
        out = []
        for owner, where, key, new, _ in self._changes():
            if where != "attr" or key is None or new is _GONE:
                return None, []
            out.append((owner, key, new))
        return out, [c for c in out if not _traced(c[2])]

    def before(self, owner, name):
        """Attribute ``name`` of ``owner`` when the snapshot was taken (None if not in it)."""
        for (obj, old), o in zip(self.saved, self.owners):
            if o is owner and obj is not owner:
                return dict(old).get(name)
        return None

    @classmethod
    def of_functions(cls, fns) -> "PythonState":
        """The state reachable from the variables functions close over and the globals their
        code names (not from the frames' locals: reading a frame's locals makes a dict that
        keeps the values of its variables alive until it is read again)."""
        frames = []
        for fn in fns:
            code = getattr(fn, "__code__", None)
            if code is None:
                continue
            cells = {}
            for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
                try:
                    cells[name] = cell.cell_contents
                except ValueError:  # (an empty cell: a variable not assigned yet)
                    pass
            glob = getattr(fn, "__globals__", {})
            frames.append((code.co_name, cells, {n: glob[n] for n in code.co_names if n in glob}))
        return cls(frames)

    def refuse_changes(self, what: str, why: str, places=frozenset(),
                       fix: str = "make the condition a Python value") -> None:
        """Raise a ``ConcretizationError`` (the objects put back as they were) when tracing a
        region changed plain Python values (``changed``): ``what`` the region is (traced
        once), ``why`` that is not what the program does. An enclosing loop tried as a while
        is unrolled instead (the error's ``unroll_reason``)."""
        moved = self.changed(places)
        if moved is None:
            return
        self.restore()
        e = ConcretizationError(f"{what} and changes Python state ({moved}, in it or in a function it calls): "
                                f"it is traced once, {why}",
                                hint=f"keep such state in variables or arrays, or {fix}")
        e.unroll_reason = f"the body changes Python state ({moved})"
        raise e

    def restore(self) -> None:
        for obj, old in self.saved:
            if isinstance(obj, list):
                if len(obj) != len(old) or any(a is not b for a, b in zip(obj, old)):
                    obj[:] = old
            elif isinstance(obj, set):
                if obj != set(old):
                    obj.clear()
                    obj.update(old)
            elif len(obj) != len(old) or any(k not in obj or obj[k] is not v for k, v in old):
                obj.clear()
                obj.update(old)
