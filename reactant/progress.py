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

SLOW_SECONDS = 5.0


TOPICS = frozenset({"recompile"})  # REACTANT_LOG=recompile: why a function is traced again


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


class CompileProgress:
    """One compilation of ``name``: stages are entered in order; ``close`` ends it."""

    def __init__(self, name: str, verbose: bool):
        self.name = name
        self.verbose = verbose or log_enabled()
        self.stage = "tracing"
        self.t0 = self.t_stage = time.perf_counter()
        self._timer = threading.Timer(SLOW_SECONDS, self._slow)
        self._timer.daemon = True
        self._timer.start()

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
        self.stage = stage
        self.t_stage = time.perf_counter()

    def done(self, what: str, detail: str = "") -> None:
        """Report the stage just finished (``detail``: e.g. ``"1200 -> 950 ops"``)."""
        if self.verbose:
            dt = time.perf_counter() - self.t_stage
            self._print(f"{self.name}: {what} {1e3 * dt:.1f} ms" + (f", {detail}" if detail else ""))

    def on_pass(self, name: str, seconds: float, before: int, after: int) -> None:
        if self.verbose:
            self._print(f"{self.name}: pass {name} {1e3 * seconds:.1f} ms, {before} -> {after} ops")

    def close(self) -> None:
        self._timer.cancel()
        if self.verbose:
            self._print(f"{self.name}: compiled in {time.perf_counter() - self.t0:.3f} s")
