"""Python state bound to traced values: the places the caller writes the program's results to.

``self.total = 0.9 * self.total + x``, ``self.h.append(h)``, ``self.cache = (a, b)``,
``HIST[-1] = y`` (a global list): NumPy leaves the new arrays in the object. A traced value
cannot outlive its trace, so when the trace ends the places of the Python state that hold one
are found (walking from the objects the trace read its state through: the bound ``self``, static
argument objects, the containers and objects reached from them, the globals and closure cells
it read), each such value becomes an output of the program, and every call of the program puts
its result there (a device array). Tuples holding traced values are rebuilt per call; lists,
dicts and objects holding them are updated in place.

A later call reads the device array the earlier one left (a captured input). Its guard is by
identity, so the call after a rebinding traces again, unless the rebinding is *simple*: the
place was read by the trace as that device array, through that place only, and the program
writes it back there. Then each call updates the guard and the captured input to the array it
wrote (``Rebind.follows``): a state updated at every call runs from the cache.
"""

from __future__ import annotations

import types

import numpy as np

from .state_reads import put_at

WALK_BUDGET = 50_000  # objects and items visited per trace at most

_SKIP = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
         np.ndarray, np.generic, np.dtype, str, bytes, int, float, complex, bool, type(None))


class Place:
    """Where a value is put back: ``kind`` "attr" (``setattr(holder, key)``), "item"
    (``holder[key]``) or "cell"."""

    __slots__ = ("kind", "holder", "key", "label")

    def __init__(self, kind: str, holder, key, label: str):
        self.kind, self.holder, self.key, self.label = kind, holder, key, label

    def put(self, value) -> None:
        put_at(self.kind, self.holder, self.key, value)


class Rebind:
    """One place and what goes there: ``template`` is ``("out", k)`` (the k-th traced value
    found) or ``("tuple", type, [templates or ("value", v)])``. ``follows``: (read index,
    captured index) when the place was read as captured device array that it alone held (see
    the module's docstring), else None."""

    __slots__ = ("place", "template", "follows")

    def __init__(self, place: Place, template, follows=None):
        self.place, self.template, self.follows = place, template, follows


def collect(tc, skip_ids: set[int]) -> tuple[list, list[Rebind]]:
    """The traced values of ``tc`` held by the Python state when the trace ends (each once)
    and where each is put back. ``skip_ids``: handles the caller writes back itself (state
    arrays updated in place)."""
    from .escape import EscapedTracer
    from .traced import TracedRArray

    alive = {id(h) for h in (r() for r, _ in tc.handles) if h is not None} | \
        {id(h) for h in tc.capture_handles.values()}
    found: list = []
    index: dict[int, int] = {}
    rebinds: list[Rebind] = []
    seen: set[int] = set()
    budget = [WALK_BUDGET]
    held: set[int] = set()  # device arrays some place of the state still holds

    def traced(v) -> bool:
        return isinstance(v, TracedRArray) and type(v) is not EscapedTracer and id(v) in alive \
            and id(v) not in skip_ids

    def template(v, label: str, depth: int):
        """The template of a value to put back, or None when it holds no traced value (lists,
        dicts and objects are walked: their own items are places)."""
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if traced(v):
            k = index.get(id(v))
            if k is None:
                k = index[id(v)] = len(found)
                found.append(v)
            return ("out", k)
        if hasattr(type(v), "__reactant_concrete__"):
            held.add(id(v))
            return None
        if isinstance(v, (TracedRArray, *_SKIP)):
            return None
        if type(v) is tuple or (isinstance(v, tuple) and hasattr(v, "_fields")):
            if depth > 8:
                return None
            parts = [template(x, f"{label}[{i}]", depth + 1) for i, x in enumerate(v)]
            if all(p is None for p in parts):
                return None
            return ("tuple", type(v), [p if p is not None else ("value", x) for p, x in zip(parts, v)])
        walk(v, label, depth)
        return None

    def walk(obj, label: str, depth: int) -> None:
        if id(obj) in seen or depth > 8:
            return
        seen.add(id(obj))
        if isinstance(obj, list):
            for i, x in enumerate(obj):
                put(Place("item", obj, i, f"{label}[{i}]"), x, depth)
        elif isinstance(obj, dict):
            for k, x in list(obj.items()):
                put(Place("item", obj, k, f"{label}[{k!r}]"), x, depth)
        elif isinstance(obj, (set, frozenset, tuple)):
            return
        else:
            d = getattr(obj, "__dict__", None)
            if isinstance(d, dict):
                for k, x in list(d.items()):
                    put(Place("attr", obj, k, f"{label}.{k}"), x, depth)
            for cls in type(obj).__mro__:
                slots = cls.__dict__.get("__slots__", ())
                for s in (slots,) if isinstance(slots, str) else slots:
                    if s not in ("__dict__", "__weakref__") and hasattr(obj, s):
                        put(Place("attr", obj, s, f"{label}.{s}"), getattr(obj, s), depth)

    def put(place: Place, v, depth: int) -> None:
        t = template(v, place.label, depth + 1)
        if t is not None:
            rebinds.append(Rebind(place, t))

    reads = tc.reads
    for obj, label in list(reads._known.values()):
        if not isinstance(obj, _SKIP) and not isinstance(obj, TracedRArray):
            walk(obj, label, 0)
    for r in reads.reads:
        if r.kind == "global":
            try:
                v = r.holder[r.key]
            except KeyError:
                continue
            put(Place("item", r.holder, r.key, r.label), v, 0)
        elif r.kind == "cell":
            try:
                v = r.holder.cell_contents
            except ValueError:
                continue
            put(Place("cell", r.holder, None, r.label), v, 0)
    # globals the code rebound without reading them first (``global G; G = y``)
    for g in {id(r.holder): r.holder for r in reads.reads if r.kind == "global"}.values():
        for k, v in list(g.items()):
            if traced(v) and not any(rb.place.holder is g and rb.place.key == k for rb in rebinds):
                put(Place("item", g, k, k), v, 0)
            elif hasattr(type(v), "__reactant_concrete__"):
                held.add(id(v))
    _dedupe(rebinds)
    if budget[0] >= 0:
        _follow(tc, rebinds, held)
    return found, rebinds


def _dedupe(rebinds: list[Rebind]) -> None:
    """One rebind per place (a place met along two paths)."""
    keep, seen = [], set()
    for rb in rebinds:  # (keys are attribute names, list indices and dict keys: hashable)
        key = (id(rb.place.holder), rb.place.kind, rb.place.key)
        if key not in seen:
            seen.add(key)
            keep.append(rb)
    rebinds[:] = keep


def _follow(tc, rebinds: list[Rebind], held: set[int]) -> None:
    """Mark the simple rebindings (see the module's docstring). ``held``: device arrays
    that places of the state hold when the trace ends (the code stored the old value
    somewhere: a cached call would not store the next one there, so such a state retraces)."""
    from .state_reads import Id

    captured = {id(c): k for k, c in enumerate(tc.captures) if type(c) is not np.ndarray}
    if not captured:
        return
    times: dict[int, int] = {}  # how many read snapshots name each captured array
    for r in tc.reads.reads:
        _count(r.snap, captured, times, Id)
    outs = [rb.template[1] for rb in rebinds if rb.template[0] == "out"]
    for rb in rebinds:
        if rb.template[0] != "out" or outs.count(rb.template[1]) != 1 or rb.place.kind == "cell":
            continue
        for i, r in enumerate(tc.reads.reads):
            if r.kind != rb.place.kind or r.holder is not rb.place.holder or r.key != rb.place.key:
                continue
            s = r.snap
            if type(s) is tuple and len(s) == 2 and s[0] is Id:
                obj = s[1].obj
                if id(obj) in captured and times.get(id(obj)) == 1 and id(obj) not in held:
                    rb.follows = (i, captured[id(obj)])
            break


def _count(snap, captured: dict, times: dict, Id) -> None:
    if type(snap) is Id:
        if id(snap.obj) in captured:
            times[id(snap.obj)] = times.get(id(snap.obj), 0) + 1
    elif type(snap) in (tuple, frozenset):
        for x in snap:
            _count(x, captured, times, Id)
