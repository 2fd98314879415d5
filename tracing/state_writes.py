"""NumPy arrays of the Python state updated in place by the traced code.

``self.total[i] = x[j]`` or ``self.total += x`` with ``self.total`` a NumPy array: NumPy changes
that array object. The trace cannot write into host memory, so the array becomes an implicit
input of the program (``TraceContext.capture``) with one traced handle; the places that hold
it (the attribute, the list or dict item, the global the trace read it from) hold that handle
for the rest of the trace, so every later read sees the update; when the trace ends they hold
the NumPy array again, the program returns the handle's final value and every call copies it
into the array (``np.copyto``), as NumPy's in-place update would have left it. Its guard
stays by contents (what the trace read of it on the host before the update is baked in), so a
function updating its state traces again when the state changed (an identical program reuses
its executable).

Aliases in a module's globals hold the handle until the trace ends too; another object or dict
holding the array is refused (a list holding it and read after the update is a known limit: it
keeps the values before the update). Refused with a clear error, because the trace could not redirect a reference that would
then keep reading the old values: an array that is a view of another one, or one a local
variable of the traced code also names.
"""

from __future__ import annotations

import gc
import os

import numpy as np

from .errors import ConcretizationError
from .state_reads import put_at

_OWN_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def state_array_handle(arr: np.ndarray, item=None):
    """The traced handle standing for state array ``arr`` (made on first use); None when
    ``arr`` is not an array of the Python state the trace read. ``item``: (container, key),
    the list or dict item of the state it was reached through (``self.grads["W"] += dW``;
    container items are not recorded as reads: their container's snapshot covers them)."""
    from .context import active
    from .traced import wrap

    tc = active()
    if tc is None or tc.main is None:
        return None
    h = tc.capture_handles.get(id(arr))
    if h is not None:
        return h
    places = [r for r in tc.reads.reads if r.kind in ("attr", "item", "global", "cell") and _holds(r, arr)]
    if item is not None and _reached_from_state(tc, item[0]):
        places.append(_Place(*item, label=f"an item [{item[1]!r}]"))
    if not places:
        return None
    labels = ", ".join(r.label for r in places)
    if arr.base is not None:
        raise ConcretizationError(
            f"{labels} is a view of another NumPy array and receives a traced value: the other array would "
            "not see the update", hint="store the base array itself in the state, or a traced array")
    v = tc.capture(arr)
    h = wrap(v, tuple(arr.shape), np.dtype(arr.dtype))
    if tc.handles and tc.handles[-1][0]() is h:
        tc.handles.pop()  # (lives as long as the trace)
    mark = len(tc.state_restores)
    for r in places:
        _put(r, h)
        tc.state_restores.append((r, arr, h))
    try:
        _redirect_other_references(tc, arr, h, places, labels)
    except BaseException:
        for r, a, _h in reversed(tc.state_restores[mark:]):
            _put(r, a)
        del tc.state_restores[mark:]
        raise
    # (the places keep their guards by contents: the trace may have read the array on the host
    # before this write, and baked what it read; a call with other contents traces again)
    tc.capture_handles[id(arr)] = h
    return h


def restore(tc) -> None:
    """At the end of a trace: the places that held a state array hold it again (unless the
    traced code bound them to something else meanwhile)."""
    for r, arr, h in reversed(tc.state_restores):
        try:
            if r.current() is h:
                _put(r, arr)
        except Exception:  # noqa: BLE001 - the place is gone: nothing to restore
            pass
    tc.state_restores.clear()


def _holds(r, arr) -> bool:
    try:
        return r.current() is arr
    except Exception:  # noqa: BLE001
        return False


def _put(r, value) -> None:
    put_at(r.kind, r.holder, r.key, value)


def _redirect_other_references(tc, arr: np.ndarray, h, places: list, labels: str) -> None:
    """Other places holding ``arr`` that the rest of the trace could read (an alias in a
    module's globals, another object's attribute, a list or dict item) hold ``h`` until the
    trace ends too. A local variable of the traced code cannot be redirected: refused."""
    import sys

    f = sys._getframe(1)  # the traced code's frames (above the trace's entry on this stack)
    while f is not None and not (f.f_code.co_name == "_trace" and f.f_code.co_filename.startswith(_OWN_DIR)):
        if not f.f_code.co_filename.startswith(_OWN_DIR):
            names = [n for n, v in f.f_locals.items() if v is arr]
            if names:
                raise ConcretizationError(
                    f"{labels} receives a traced value while the variable {names[0]!r} of {f.f_code.co_name} "
                    "also refers to that NumPy array: it would keep the old values",
                    hint="update it through one name, or make the state a traced array")
        f = f.f_back
    held = {id(r.holder) for r in places}
    for r in places:
        d = getattr(r.holder, "__dict__", None) if r.kind == "attr" else None
        if d is not None:
            held.add(id(d))
    internal = {id(tc.captures), id(tc._captured)} | {id(v) for v in tc.reads.arrays.values()}
    for ref in gc.get_referrers(arr):
        kind = type(ref).__name__
        if kind == "frame":
            continue
        if id(ref) in held or id(ref) in internal or kind in ("tuple", "cell", "list"):
            # (argument tuples and closure cells of the calls being made; lists: the captured
            # arrays of compiled programs. A user's list holding the array and read after the
            # update is not redirected: a known limit)
            continue
        if isinstance(ref, dict) and "__builtins__" in ref and "__name__" in ref:  # a module's globals
            for k in [k for k, v in ref.items() if v is arr]:
                ref[k] = h
                tc.state_restores.append((_Place(ref, k), arr, h))
            continue
        raise ConcretizationError(
            f"{labels} receives a traced value while another {kind} also refers to that NumPy array: it would "
            "keep the old values", hint="keep the array in one place, or make the state a traced array")


def _reached_from_state(tc, container) -> bool:
    """Whether the trace read ``container`` from its Python state (some read's value holds
    it, directly or in a container)."""
    for r in tc.reads.reads:
        try:
            v = r.current()
        except Exception:  # noqa: BLE001 - gone
            continue
        if v is container or (isinstance(v, (list, tuple, dict)) and _holds_in(v, container, 3)):
            return True
    return False


def _holds_in(c, target, depth: int) -> bool:
    items = c.values() if isinstance(c, dict) else c
    for x in items:
        if x is target or (depth > 0 and isinstance(x, (list, tuple, dict)) and _holds_in(x, target, depth - 1)):
            return True
    return False


class _Place:
    """An item of a dict or list holding a state array (restored like a read's place)."""

    kind = "item"

    def __init__(self, holder, key, label: str = ""):
        self.holder, self.key, self.label = holder, key, label

    def current(self):
        return self.holder[self.key]
