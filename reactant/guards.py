"""Guards: when a cached program is still the one a new trace would make.

A trace reads Python state that is not an argument of the compiled function: globals, closure
variables, attributes of ``self``, items of lists and dicts, NumPy arrays they hold. The trace
records each read with a snapshot of the value as it was read (``tracing/state_reads.py``);
here those reads become one generated function that a call runs before reusing the program:
for each place it reads the value found there now and compares it with the snapshot (type and
value for scalars, identity for objects, contents for containers and small arrays, identity,
shape and dtype for large arrays, which the program reads as inputs). A failed check means:
trace again (``compiler``). This follows TorchDynamo's guards.

What a trace writes to Python state is not replayed by a cached call (as in JAX). But the
snapshots are taken as the state was *read*, before the trace wrote it: a function that reads
and updates state (``self.count += 1``) fails its guard on the next call and is traced again,
so each call sees the state NumPy would.

A known limit: a large NumPy array (an input, so not guarded by contents) whose contents the
trace also used on the host through a NumPy function or an operator without traced operands
(``np.sum(W)``, ``W * 2``) keeps that host result; reads through its own methods or scalar
items (``W.sum()``, ``W[0, 0]``) are seen and guard it by a hash of its contents instead.
"""

from __future__ import annotations

import keyword
import types
from typing import Callable

import numpy as np

from .tracing.state_reads import Id, Read, StateReads, array_snapshot, digest, short_repr, snapshot

MAX_PER_SIGNATURE = 8  # programs kept per call signature that differ only by the state they read


class Guards:
    """The guards of one cached program: ``check()`` is True while every value the trace read
    is still the same; ``explain()`` says what changed."""

    __slots__ = ("reads", "arrays", "check")

    def __init__(self, reads: list[Read], arrays: list[tuple[np.ndarray, str, bytes]]):
        self.reads = reads
        self.arrays = arrays  # large arrays used on the host: (array, label, digest as read)
        self.check: Callable[[], bool] = _compile(reads, arrays)

    def explain(self) -> str:
        """The first value that changed: its place, old and new value."""
        for r in self.reads:
            try:
                now = r.current()
            except Exception as e:  # noqa: BLE001 - any failure to find it again is a change
                return f"{r.label} is gone ({type(e).__name__}: {e})"
            if snapshot(now) != r.snap:
                if type(now) is np.ndarray and r.snap[0] is Id:
                    return f"{r.label} is another array ({short_repr(now)})"
                return f"{r.label} changed: {r.shown} -> {short_repr(now)}"
        for a, label, dig in self.arrays:
            if digest(a) != dig:
                return f"the contents of {label} changed"
        return "nothing changed"

    def follow(self, i: int, obj) -> None:
        """Read ``i`` (of an object, by identity) now expects ``obj``: the program itself put
        it there (``tracing/state_rebinds.py``)."""
        r = self.reads[i]
        r.snap = (Id, Id(obj))
        r.shown = short_repr(obj)
        self.check.__globals__[f"x{i}"] = obj

    def __len__(self) -> int:
        return len(self.reads) + len(self.arrays)


def build(reads: StateReads | None) -> Guards | None:
    """The guards of a trace's reads; None when it read no Python state."""
    if reads is None:
        return None
    arrays = reads.uncovered_arrays()
    if not reads.reads and not arrays:
        return None
    return Guards(list(reads.reads), arrays)


def _compile(reads: list[Read], arrays: list) -> Callable[[], bool]:
    """One Python function checking every guard (generated: a loop over checker objects costs
    several times more per guard)."""
    env: dict = {"_snapshot": snapshot, "_array_snapshot": array_snapshot, "_digest": digest}
    conds = []
    for i, r in enumerate(reads):
        env[f"h{i}"] = r.holder
        if r.kind == "global" or r.kind == "item":
            env[f"k{i}"] = r.key
            get = f"h{i}[k{i}]"
        elif r.kind == "cell":
            get = f"h{i}.cell_contents"
        else:
            plain = r.key.isidentifier() and not keyword.iskeyword(r.key)
            get = f"h{i}.{r.key}" if plain else f"getattr(h{i}, {r.key!r})"
        s = r.snap
        t = s[0]
        if t in (bool, int, str, bytes) or (t is float and type(s[1]) is float):
            env[f"t{i}"], env[f"x{i}"] = t, s[1]
            conds.append(f"(type(v := {get}) is t{i} and v == x{i})")
        elif t is type(None):
            conds.append(f"{get} is None")
        elif t is Id and len(s) == 2:  # an object: the same one
            env[f"x{i}"] = s[1].obj
            conds.append(f"{get} is x{i}")
        elif t is types.MethodType:  # a bound method: the same function of the same object
            env[f"x{i}"], env[f"o{i}"] = s[1].obj, s[2].obj
            conds.append(f"((v := {get}).__func__ is x{i} and v.__self__ is o{i})")
        elif t is Id:  # a large NumPy array: the same one, not reshaped
            env[f"x{i}"], env[f"s{i}"], env[f"d{i}"] = s[1].obj, s[2], s[3]
            conds.append(f"((v := {get}) is x{i} and v.shape == s{i} and v.dtype.str == d{i})")
        else:
            env[f"x{i}"] = s
            conds.append(f"_snapshot({get}) == x{i}")
    for j, (a, _, dig) in enumerate(arrays):
        env[f"a{j}"], env[f"g{j}"] = a, dig
        conds.append(f"_digest(a{j}) == g{j}")
    src = ("def check():\n    try:\n        return (" + "\n                and ".join(conds)
           + ")\n    except Exception:\n        return False\n")
    exec(compile(src, "<reactant guards>", "exec"), env)
    return env["check"]
