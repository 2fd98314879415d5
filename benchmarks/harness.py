"""Side-by-side timing harness: runs several implementations of the same workload in one
process, interleaved (A, B, A, B, ...), and reports medians and ratios.

Each implementation is a zero-argument callable that runs the workload once and blocks
until its result is ready, or a ``Fresh(setup, run)`` for one that updates its inputs in
place: every call then gets new inputs from ``setup()``, made outside the timed region.
Interleaving pairs every measurement of one implementation with one of the others taken at
nearly the same time, so machine-load drift cancels in the ratios.
"""

from __future__ import annotations

import gc
import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Result:
    name: str
    times: dict[str, list[float]] = field(default_factory=dict)  # impl -> seconds per call

    def median(self, impl: str) -> float:
        return statistics.median(self.times[impl])

    def ratio(self, impl: str, base: str) -> float:
        """Median of per-round ratios impl/base (< 1: impl is faster)."""
        pairs = [a / b for a, b in zip(self.times[impl], self.times[base]) if b > 0]
        return statistics.median(pairs)


@dataclass
class Fresh:
    """An implementation that updates its inputs in place: each timed call ``run(setup())``
    starts from new inputs, and only ``run`` is timed (it must block until its updates are
    done)."""

    setup: Callable[[], object]
    run: Callable[[object], object]


Impl = Callable[[], object] | Fresh


def call_time(fn: Impl) -> float:
    """Seconds of one call (a ``Fresh``'s setup not included)."""
    if isinstance(fn, Fresh):
        x = fn.setup()
        t0 = time.perf_counter()
        fn.run(x)
    else:
        t0 = time.perf_counter()
        fn()
    return time.perf_counter() - t0


def _timed(fn: Impl, inner: int) -> float:
    """Seconds per call over ``inner`` calls."""
    if not isinstance(fn, Fresh):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        return (time.perf_counter() - t0) / inner
    return sum(call_time(fn) for _ in range(inner)) / inner


def measure(name: str, impls: dict[str, Impl], *, rounds: int = 15, inner: int | None = None,
            warmup: int = 2, target_seconds: float = 0.05) -> Result:
    """Time each implementation ``rounds`` times, interleaved; ``inner`` calls per timing
    (chosen so one timing takes about ``target_seconds`` when None)."""
    for fn in impls.values():
        for _ in range(warmup):
            call_time(fn)
    if inner is None:
        one = max(call_time(next(iter(impls.values()))), 1e-7)
        inner = max(1, min(10_000, int(target_seconds / one)))
    res = Result(name, {k: [] for k in impls})
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            order = list(impls.items()) if r % 2 == 0 else list(reversed(impls.items()))
            for k, fn in order:
                res.times[k].append(_timed(fn, inner))
    finally:
        if gc_was:
            gc.enable()
    return res


def hlo_fingerprint(hlo_text: str) -> str:
    """XLA's optimized HLO with names, metadata and JSON key order normalized: two executables
    with the same fingerprint run the same code, so timing both only measures noise."""
    import json

    out, i = [], 0
    while True:  # backend_config JSON: same content, possibly different key order
        j = hlo_text.find("backend_config={", i)
        if j < 0:
            out.append(hlo_text[i:])
            break
        k, depth = j + len("backend_config="), 0
        for end in range(k, len(hlo_text)):
            depth += {"{": 1, "}": -1}.get(hlo_text[end], 0)
            if depth == 0:
                break
        try:
            cfg = json.dumps(json.loads(hlo_text[k:end + 1]), sort_keys=True)
        except ValueError:
            cfg = hlo_text[k:end + 1]
        out.append(hlo_text[i:k] + cfg)
        i = end + 1
    text = "".join(out)
    text = re.sub(r", metadata=\{[^}]*\}", "", text)
    text = re.sub(r"%[\w.\-]+", "%v", text)
    text = re.sub(r"[\w.\-]+: (?=[a-z]+\d*\[|\()", "", text)  # parameter names in headers
    keep = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("HloModule"):  # the layout only: jax adds sharding-propagation flags
            m = re.search(r"entry_computation_layout=\{.*?\}(?=,|$)", line)
            keep.append(m.group(0) if m else "HloModule")
        elif line.startswith(("%", "ROOT", "ENTRY", "}")):  # not jax's stack-frame tables
            keep.append(line)
    return "\n".join(keep)


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:8.1f} us"
    if s < 1:
        return f"{s * 1e3:8.2f} ms"
    return f"{s:8.2f} s "


def print_table(results: list[Result], base: str, title: str = "") -> None:
    """One row per workload: median time per implementation and the ratio to ``base``."""
    if not results:
        return
    impls = list(dict.fromkeys(k for r in results for k in r.times))  # rows may lack an implementation
    others = [k for k in impls if k != base]
    if title:
        print(f"\n## {title}\n")
    head = ["workload"] + [f"{k}" for k in impls] + [f"{k}/{base}" for k in others]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] * len(head)) + "|")
    for r in results:
        cells = [r.name] + [fmt_time(r.median(k)).strip() if k in r.times else "-" for k in impls]
        cells += [f"{r.ratio(k, base):.3f}" if k in r.times else "-" for k in others]
        print("| " + " | ".join(cells) + " |")


def geomean(values: list[float]) -> float:
    import math

    return math.exp(sum(math.log(v) for v in values) / len(values))
