"""Traced values that outlive their trace (or the region they were made in).

A traced array is a name for an MLIR value of one program being built. Kept after its trace
ended (stored on an object, a global, a list), it would name a value of a finished (maybe
freed) module: using it used to crash the process. When a trace ends, every handle of it
that is still alive becomes an ``EscapedTracer``, which raises ``EscapedTracerError`` on any
use, naming where it was made and where it is used (as JAX's ``UnexpectedTracerError``).
The same happens to handles made inside a loop body or branch that outlive it.
"""

from __future__ import annotations

import gc
import os
import threading
from contextlib import contextmanager
from typing import Iterator

from .errors import EscapedTracerError
from .traced import TracedRArray

_ALLOWED = frozenset(("__class__", "shape", "dtype", "ndim", "__repr__", "__str__", "_fail"))


class EscapedTracer(TracedRArray):
    """What a traced handle becomes when it outlives its trace: every use raises. (The
    ``value`` slot holds the explanation; the MLIR value is gone.)"""

    __slots__ = ()

    def _fail(self, *args, **kwargs):
        raise EscapedTracerError(
            object.__getattribute__(self, "_nowrite"),
            hint="return traced values from the compiled function (you get device arrays), or "
                 "pass them in as arguments; inside a function, carry values out of loops and "
                 "ifs in variables, not in lists or attributes")

    def __getattribute__(self, name):
        if name in _ALLOWED:
            return object.__getattribute__(self, name)
        object.__getattribute__(self, "_fail")()

    def __repr__(self) -> str:
        return f"<escaped tracer {self.dtype}{list(self.shape)}>"

    __str__ = __repr__
    __array_ufunc__ = __array_function__ = __array__ = __getitem__ = __setitem__ = _fail
    __bool__ = __float__ = __int__ = __index__ = __len__ = __iter__ = __complex__ = _fail


_FREEZE = {"depth": 0, "ours": False}
_FREEZE_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    """A child forked while a trace ran has no trace (nor its lock holder): its heap thaws."""
    global _FREEZE_LOCK
    _FREEZE_LOCK = threading.Lock()
    if _FREEZE["depth"] and _FREEZE["ours"]:
        gc.unfreeze()
    _FREEZE.update(depth=0, ours=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@contextmanager
def heap_frozen() -> Iterator[None]:
    """While traces run, the objects that existed before are left out of garbage collection
    (``gc.freeze``): the full collection of ``kill_escaped`` then scans what the traces made,
    not the whole heap (~40 ms once jax is loaded, for a loop whose body keeps an array in an
    attribute). They go back to the oldest generation when the last trace ends; a heap the
    program froze itself is left as it is (and collections stay full)."""
    with _FREEZE_LOCK:
        if _FREEZE["depth"] == 0:
            _FREEZE["ours"] = gc.get_freeze_count() == 0
            if _FREEZE["ours"]:
                gc.freeze()
        _FREEZE["depth"] += 1
    try:
        yield
    finally:
        with _FREEZE_LOCK:
            _FREEZE["depth"] -= 1
            if _FREEZE["depth"] == 0 and _FREEZE["ours"]:
                gc.unfreeze()


def kill(x: TracedRArray, made, why: str) -> None:
    """Turn ``x`` into an ``EscapedTracer`` (``made``: (file, line) where it was made, or None).
    Touches no MLIR object: the value may belong to an erased op."""
    where = f" made at {made[0]}:{made[1]}" if made else ""
    msg = f"a traced value {x.dtype}{list(x.shape)}{where} is used after {why}: traced values exist only " \
        "while their trace runs"
    x.__class__ = EscapedTracer
    x.value = None
    x._root = None
    x._chain = None
    x._vcache = None
    x._nowrite = msg


def kill_escaped(handles: list, start: int, stop: int | None, why: str, keep=(), collect: bool = False) -> int:
    """Disable the handles registered in ``handles[start:stop]`` that are still alive (other
    than those in ``keep``); returns how many. ``collect``: before counting, let the garbage
    collector free handles only unreachable cycles hold (the count then means kept)."""
    keep_ids = {id(k) for k in keep}
    end = len(handles) if stop is None else stop

    def alive():
        out = []
        for r, made in handles[start:end]:
            h = r()
            if h is not None and id(h) not in keep_ids and type(h) is not EscapedTracer:
                out.append((h, made))
        return out

    found = alive()
    # the young generations first: the cycles that hold a body's handles are young (frames,
    # closures of the attempt), and a full collection costs ~45 ms once jax is loaded
    for generation in ((1, 2) if collect else ()):
        if not found:
            break
        found = None
        gc.collect(generation)
        found = alive()
    for h, made in found:
        kill(h, made, why)
    return len(found)


class Checkpoint:
    """What a trace has built so far, to undo what an attempt adds (a loop tried as a
    ``while``, a call traced for caching): in-place rebindings, private functions, cached
    calls, facts recorded about values (MLIR may reuse an erased value's storage for a new
    value, which would inherit them), and the handles made since, which become escaped
    tracers (the user's code may have kept one; its op is gone)."""

    def __init__(self, tc):
        self.tc = tc
        self.mark, self.hstart = len(tc.mutations), len(tc.handles)
        self.functions = set(tc.functions)
        self.calls = set(tc.call_cache)
        self.nonneg = set(tc.nonneg_values)

    def undo(self, why: str, erase=None) -> None:
        """Undo what was added since; ``erase``: an op holding the attempt's IR, erased after
        the rebindings are undone and before the handles are killed."""
        tc = self.tc
        for t, old in reversed(tc.mutations[self.mark:]):
            t.value = old
        del tc.mutations[self.mark:]
        for key in [k for k in tc.call_cache if k not in self.calls]:
            del tc.call_cache[key]
        tc.nonneg_values &= self.nonneg
        for name in [n for n in tc.functions if n not in self.functions]:
            tc.functions.pop(name).operation.erase()
        if erase is not None:
            erase.erase()
        kill_escaped(tc.handles, self.hstart, None, why)
