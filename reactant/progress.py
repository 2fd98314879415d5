"""What a first call is doing. With ``REACTANT_LOG=1`` (or ``reactant.compile(...,
verbose=True)``) every stage of a compilation prints its time and op count to stderr; without
it, a compilation still running after ``SLOW_SECONDS`` prints one line saying which stage it
is in, so a long first call is never silent. ``REACTANT_LOG=recompile`` prints only why a
function is traced again (which value of the Python state it read changed)."""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass

from . import profiler

SLOW_SECONDS = 5.0


# REACTANT_LOG=recompile: why a function is traced again; REACTANT_LOG=cache: the persistent
# compile cache's hits, misses, writes, evictions and ignored entries (reactant/cache.py)
TOPICS = frozenset({"recompile", "cache"})


def log_enabled(topic: str | None = None) -> bool:
    """Whether REACTANT_LOG asks for logging (of ``topic``): "1" (or any value other than "0"
    and a comma list of ``TOPICS``) logs everything, a list of topics only those."""
    value = os.environ.get("REACTANT_LOG", "")
    if value in ("", "0"):
        return False
    topics = {t.strip() for t in value.split(",")}
    if topics <= TOPICS:
        return topic in topics
    return True


@dataclass(frozen=True)
class CompileStats:
    """Where one compilation's time went (``CompiledFunction.compile_stats``): seconds per
    stage in order (``"trace"``, ``"pass <name>"`` per optimizer pass, the XLA compile), and
    the totals of the three phases. ``reused``: the XLA stage reused an executable (an earlier
    trace's identical program, or one compiled during equality saturation)."""

    function: str
    stages: tuple[tuple[str, float], ...]
    total_seconds: float
    reused: str = ""

    def seconds(self, phase: str) -> float:
        """Total seconds of ``"trace"``, ``"optimize"`` (every pass) or ``"xla"``."""
        key = {"trace": lambda n: n == "trace", "optimize": lambda n: n.startswith("pass "),
               "xla": lambda n: n.startswith("XLA")}[phase]
        return sum(t for n, t in self.stages if key(n))

    def __str__(self) -> str:
        rows = [f"{self.function}: compiled in {self.total_seconds:.3f} s "
                f"(trace {self.seconds('trace'):.3f}, optimize {self.seconds('optimize'):.3f}, "
                f"XLA {self.seconds('xla'):.3f})"]
        rows += [f"  {n:<40} {1e3 * t:9.1f} ms" for n, t in self.stages]
        return "\n".join(rows)


class _Watch:
    """One daemon thread that prints the notice of every compilation still running after its
    deadline (a timer thread per compilation cost 1-2 ms to start, on every compile)."""

    def __init__(self):
        self._cv = threading.Condition()
        self._due: dict[int, tuple[float, "CompileProgress"]] = {}
        self._thread: threading.Thread | None = None

    def add(self, p: "CompileProgress", deadline: float) -> None:
        with self._cv:
            self._due[id(p)] = (deadline, p)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="reactant-compile-watch", daemon=True)
                self._thread.start()
            self._cv.notify()

    def remove(self, p: "CompileProgress") -> None:
        with self._cv:
            self._due.pop(id(p), None)

    def _run(self) -> None:
        while True:
            with self._cv:
                now = time.perf_counter()
                late = [p for d, p in self._due.values() if d <= now]
                for p in late:
                    del self._due[id(p)]
                if not late:
                    nxt = min((d for d, _ in self._due.values()), default=None)
                    self._cv.wait(None if nxt is None else nxt - now)
                    continue
            for p in late:
                p._slow()


_WATCH = _Watch()
if hasattr(os, "register_at_fork"):  # a forked child has no watch thread (nor a usable lock): a new one
    os.register_at_fork(after_in_child=_WATCH.__init__)


class CompileProgress:
    """One compilation of ``name``: stages are entered in order; ``close`` ends it."""

    def __init__(self, name: str, verbose: bool):
        self.name = name
        self.verbose = verbose or log_enabled()
        self.stage = "tracing"
        self.t0 = self.t_stage = time.perf_counter()
        self.stages: list[tuple[str, float]] = []  # (stage, seconds), finished ones
        self._open = True  # the current stage is not in ``stages`` yet
        self.reused = ""
        self._span = None
        self._span_start()
        _WATCH.add(self, self.t0 + SLOW_SECONDS)

    def _print(self, text: str) -> None:
        print(f"reactant: {text}", file=sys.stderr, flush=True)

    def log(self, text: str) -> None:
        """A line about this compilation (e.g. a loop decision), printed when verbose."""
        if self.verbose:
            self._print(f"{self.name}: {text}")

    def _slow(self) -> None:
        self._print(f"compiling {self.name} has taken {SLOW_SECONDS:.0f} s so far; now: {self.stage} "
                    "(REACTANT_LOG=1 prints every stage)")

    def enter(self, stage: str) -> None:
        now = time.perf_counter()
        if self._open:
            self.stages.append((self.stage, now - self.t_stage))
            self._span_end()
        self.stage, self.t_stage, self._open = stage, now, True
        self._span_start()

    def _span_start(self) -> None:
        if profiler.active():  # a span per stage in ``reactant.profile``'s trace
            self._span = profiler.annotate(f"reactant compile {self.name}: {self.stage}")
            self._span.__enter__()

    def _span_end(self) -> None:
        if self._span is not None:
            self._span.__exit__(None, None, None)
            self._span = None

    def done(self, what: str, detail: str = "") -> None:
        """Report the stage just finished (``detail``: e.g. ``"1200 -> 950 ops"``)."""
        dt = time.perf_counter() - self.t_stage
        self.stages.append((what, dt))
        self._open = False
        self._span_end()
        if self.verbose:
            self._print(f"{self.name}: {what} {1e3 * dt:.1f} ms" + (f", {detail}" if detail else ""))

    def stats(self) -> CompileStats:
        """The finished compilation's stages as data."""
        return CompileStats(self.name, tuple(self.stages), time.perf_counter() - self.t0, self.reused)

    def on_pass(self, name: str, seconds: float, before: int, after: int) -> None:
        if self.verbose:
            self._print(f"{self.name}: pass {name} {1e3 * seconds:.1f} ms, {before} -> {after} ops")

    def close(self) -> None:
        _WATCH.remove(self)
        self._span_end()
        if self.verbose:
            self._print(f"{self.name}: compiled in {time.perf_counter() - self.t0:.3f} s")
