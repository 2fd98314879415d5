"""Kernels that update their arguments in place, run as NumPy and through reactant, compared by
what the caller sees afterwards: the return value AND the final state of every argument.

``numpy_state(f, args)`` / ``reactant_state(cf, args)`` run on copies of ``args`` (which are never
changed) and return ``(returned, [argument after the call, ...])`` as NumPy values;
``differences(want, got)`` lists where they disagree (empty: equal); ``numpy_timer`` and
``reactant_timer`` are ``harness.Fresh`` implementations that start every timed call from fresh
copies of the inputs (the reactant one donates them: the call writes into their buffers);
``jax_timer`` times jax's functional kernel on fresh inputs the same way;
``loop_decisions`` summarizes the loop decisions of a ``verbose`` compile log.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from harness import Fresh


def _copy(a):
    return a.copy() if isinstance(a, np.ndarray) else a


def _host(x):
    if x is None:
        return None
    if isinstance(x, (tuple, list)):
        return [_host(v) for v in x]
    return np.asarray(x)


def numpy_state(f: Callable, args: tuple) -> tuple[Any, list]:
    """NumPy's answer: ``f`` on copies of ``args``; (returned value, arguments afterwards)."""
    copies = [_copy(a) for a in args]
    return _host(f(*copies)), copies


def to_device(args: tuple) -> list:
    """Fresh device copies of ``args`` (arrays only), transferred before returning."""
    import reactant

    out = [reactant.to_rarray(_copy(a)) if isinstance(a, np.ndarray) else a for a in args]
    _block(out)
    return out


def _block(values) -> None:
    for v in values:
        if hasattr(v, "block_until_ready"):
            v.block_until_ready()


def reactant_state(cf: Callable, args: tuple) -> tuple[Any, list]:
    """The compiled kernel's answer on fresh device copies of ``args``: (returned value,
    arguments afterwards), both as NumPy values."""
    rargs = to_device(args)
    ret = cf(*rargs)
    return _host(ret), [np.asarray(r) if isinstance(a, np.ndarray) else r for a, r in zip(args, rargs)]


def differences(want: tuple[Any, list], got: tuple[Any, list], rtol: float = 1e-7, atol: float = 1e-9) -> list[str]:
    """Where ``got`` (returned value, argument states) differs from ``want``: [] when equal."""
    out = []
    (wr, wargs), (gr, gargs) = want, got
    if (wr is None) != (gr is None):
        out.append(f"returns {'None' if gr is None else type(gr).__name__}, NumPy returns "
                   f"{'None' if wr is None else type(wr).__name__}")
    elif wr is not None:
        out += [f"return value: {d}" for d in _array_diff(wr, gr, rtol, atol)]
    for k, (w, g) in enumerate(zip(wargs, gargs)):
        if isinstance(w, np.ndarray):
            out += [f"argument {k}: {d}" for d in _array_diff(w, g, rtol, atol)]
    return out


def _array_diff(w, g, rtol, atol) -> list[str]:
    if isinstance(w, list):
        if not isinstance(g, list) or len(g) != len(w):
            return ["structure differs"]
        return [d for a, b in zip(w, g) for d in _array_diff(a, b, rtol, atol)]
    w, g = np.asarray(w), np.asarray(g)
    if w.shape != g.shape:
        return [f"shape {g.shape}, NumPy's {w.shape}"]
    if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
        bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        return [f"{int(bad.sum())} of {w.size} elements differ (max abs error {np.nanmax(np.abs(g - w)):.3g})"]
    return []


def numpy_timer(f: Callable, args: tuple) -> Fresh:
    """NumPy running ``f`` in place, each call on fresh copies (copied outside the timing)."""
    return Fresh(lambda: [_copy(a) for a in args], lambda x: f(*x))


def reactant_timer(cf: Callable, args: tuple) -> Fresh:
    """The compiled kernel, each call on fresh copies of the inputs made on the device outside
    the timing (from one ``to_device`` copy: a buffer fresh from ``to_rarray`` costs ~10 us more
    per call than one the device made, which is the transfer path, not the kernel); the timing
    ends when every argument's update is done."""
    pristine = to_device(args)

    def setup():
        out = [p.copy() if hasattr(p, "block_until_ready") else p for p in pristine]
        _block(out)
        return out

    def run(rargs):
        _block([cf(*rargs)])
        _block(rargs)
    return Fresh(setup, run)


def jax_timer(jf: Callable, args: tuple) -> Fresh:
    """``jax.jit``'s functional kernel timed like ``reactant_timer``: each call on fresh copies
    of its inputs made on the device outside the timing (a new buffer is slower to work on than
    the one the previous call read: both sides pay that)."""
    import jax
    import jax.numpy as jnp

    pristine = [jax.device_put(a) for a in args]

    def setup():
        out = [jnp.copy(p) for p in pristine]
        _block(out)
        return out
    return Fresh(setup, lambda x: jf(*x).block_until_ready())


_DECISION = re.compile(r": loop at .*?:(\d+) \(range\([^)]*\): \d+ iterations\): (.*)$")
_SHORT = (("kept as stablehlo.while", "kept"), ("changes a Python object", "unrolled:effects"),
          ("needs the index as a Python int", "unrolled:int-index"), ("unrolled ops", "unrolled:small"),
          ("carried variable", "unrolled:host-carry"), ("refers to changes", "unrolled:aliasing"),
          ("cannot be traced once", "unrolled:error"))


def loop_decisions(log: str) -> str:
    """The loop decisions of a ``verbose`` compile log, per source line of the loop:
    ``"12:kept 15:unrolled:small x127"`` (x: how many times the loop was met, e.g. inside an
    unrolled outer loop); "-" when no loop over plain ints was decided."""
    seen: dict[tuple[int, str], int] = {}
    for line in log.splitlines():
        m = _DECISION.search(line)
        if m is None:
            continue
        kind = next((short for key, short in _SHORT if key in m.group(2)), "unrolled")
        key = (int(m.group(1)), kind)
        seen[key] = seen.get(key, 0) + 1
    return " ".join(f"{ln}:{kind}" + (f" x{c}" if c > 1 else "") for (ln, kind), c in sorted(seen.items())) or "-"
