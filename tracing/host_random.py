"""NumPy's own random generators inside a trace: a call would run once, on the host, while
tracing, and its numbers would be frozen into the program. The tracer refuses it instead
(``reactant.random`` keeps its state on the device): in converted user code every call into
``numpy.random`` is checked (``refuse_numpy_random``), and ``numpy.random``'s module-level
functions are guarded for code the tracer does not convert (library code, functions without
source): while this thread traces, they raise; otherwise they run unchanged."""

from __future__ import annotations

import copy
import functools
import threading

import numpy as np

from .errors import UnsupportedError

_TYPES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, np.random.SeedSequence)


def refuse_numpy_random(fn) -> None:
    """Raise ``UnsupportedError`` (naming the user's line) if ``fn`` draws from or builds a
    NumPy generator."""
    owner = getattr(fn, "__self__", None)
    module = getattr(fn, "__module__", None) or ""
    if isinstance(owner, _TYPES) or module.startswith("numpy.random") or (
            isinstance(fn, type) and issubclass(fn, _TYPES)):
        name = getattr(fn, "__qualname__", getattr(fn, "__name__", "numpy.random"))
        raise UnsupportedError(
            f"numpy.random ({name}) inside a compiled function would draw once, while tracing, and "
            "return the same numbers on every call",
            hint="use reactant.random.default_rng(seed) and pass the generator as an argument "
                 "(its state advances in place on every call)")


def _guard(fn, tracing):
    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        if tracing():
            refuse_numpy_random(fn)
        return fn(*args, **kwargs)

    guarded.__reactant_guarded__ = fn
    return guarded


_installed = threading.Lock()


def guard_numpy_random(tracing) -> None:
    """Wrap ``numpy.random``'s module-level functions (the legacy ones, bound to its global
    RandomState, and ``default_rng``) so that they refuse to run while ``tracing()``; classes
    are left alone (isinstance checks keep working). Idempotent."""
    with _installed:
        for name in dir(np.random):
            fn = getattr(np.random, name)
            if name.startswith("_") or isinstance(fn, type) or not callable(fn) or hasattr(fn, "__reactant_guarded__"):
                continue
            if isinstance(getattr(fn, "__self__", None), np.random.RandomState) or name == "default_rng":
                setattr(np.random, name, _guard(fn, tracing))


# -- generators drawn from by code the tracer does not convert -------------------------------------
def _state(g):
    return g.bit_generator.state if isinstance(g, np.random.Generator) else g.get_state(legacy=False)


def _set_state(g, state) -> None:
    if isinstance(g, np.random.Generator):
        g.bit_generator.state = state
    else:
        g.set_state(state)


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and np.array_equal(a, b)
    return a == b


def _reachable_generators(fn, leaves) -> dict:
    """NumPy generators the traced function can reach without conversion: static arguments,
    its closure cells and the globals its code names (one level into functions found there),
    and NumPy's global RandomState (behind the legacy ``np.random.*`` functions)."""
    found: dict[int, object] = {}
    legacy = getattr(np.random, "mtrand", None)
    legacy = getattr(legacy, "_rand", None)
    if isinstance(legacy, np.random.RandomState):
        found[id(legacy)] = legacy

    def visit(obj, depth):
        if isinstance(obj, (np.random.Generator, np.random.RandomState)):
            found[id(obj)] = obj
        elif depth < 2 and callable(obj) and hasattr(obj, "__code__"):
            for cell in getattr(obj, "__closure__", None) or ():
                try:
                    visit(cell.cell_contents, depth + 1)
                except ValueError:  # an empty cell
                    pass
            names = set(obj.__code__.co_names)
            for const in obj.__code__.co_consts:  # nested functions and lambdas
                if hasattr(const, "co_names"):
                    names.update(const.co_names)
            g = getattr(obj, "__globals__", {})
            for name in names:
                if name in g:
                    visit(g[name], depth + 1)

    visit(getattr(fn, "__wrapped__", fn), 0)
    visit(fn, 0)
    for leaf in leaves:
        visit(leaf, 1)
    return found


class GeneratorWatch:
    """Notices a NumPy generator drawn from while tracing (by code the tracer could not check
    call by call): its numbers would be frozen into the program. ``check()`` puts the
    generator's state back and raises ``UnsupportedError``."""

    def __init__(self, fn, leaves):
        self.generators = _reachable_generators(fn, leaves)
        self.states = {k: copy.deepcopy(_state(g)) for k, g in self.generators.items()}

    def restore(self) -> list:
        """Put every watched generator's state back; returns those that had changed."""
        changed = [g for k, g in self.generators.items() if not _same(_state(g), self.states[k])]
        for g in changed:
            _set_state(g, self.states[id(g)])
        return changed

    def check(self) -> None:
        changed = self.restore()
        if changed:
            kind = type(changed[0]).__name__
            raise UnsupportedError(
                f"a NumPy {kind} was drawn from while tracing (in code reactant does not convert, such as "
                "library code): its numbers would be frozen into the compiled program; the generator's "
                "state has been put back",
                hint="use reactant.random.default_rng(seed) and pass the generator as an argument")
