"""Speculative XLA compile: XLA compiles the program while equality saturation still runs.

On most small programs the last equality-saturation pass proves no cheaper form and leaves
the module as it is. A compile therefore forks the module just before that pass, finishes the
copy without it and starts XLA on the copy in a thread (XLA's compile runs outside the GIL);
when the saturated program comes out byte-identical, that executable is the result, and the
saturation's time was hidden behind XLA's. Otherwise the speculative executable is dropped.
Programs above ``MAX_OPS`` ops are not forked: a wasted compile of a large program would
compete with the real one for cores and memory.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from typing import Any, Callable

MAX_OPS = 2000
stats = {"hits": 0, "misses": 0}  # speculative executables used / dropped (for diagnostics)
_stats_lock = threading.Lock()
# compiles still running: a dropped speculation's thread (the program came out different, or
# an earlier trace's executable was reused) may outlive its caller, and XLA aborts the process
# when the interpreter shuts down under a compile, so exit waits for them
_running: "weakref.WeakSet[threading.Thread]" = weakref.WeakSet()


@atexit.register
def _wait_for_compiles() -> None:
    for t in list(_running):
        t.join()


class Speculation:
    """One background compile of ``bytecode`` with ``compile_fn``."""

    def __init__(self, bytecode: bytes, compile_fn: Callable[[bytes], Any]):
        self.bytecode = bytecode
        self._result: Any = None
        self._failed = False
        self._thread = threading.Thread(target=self._run, args=(compile_fn,), name="reactant-speculative-compile",
                                        daemon=True)
        _running.add(self._thread)
        self._thread.start()

    def _run(self, compile_fn: Callable[[bytes], Any]) -> None:
        try:
            self._result = compile_fn(self.bytecode)
        except Exception:  # noqa: BLE001 - the caller compiles the program itself and reports its error
            self._failed = True

    def take(self, bytecode: bytes) -> Any | None:
        """The executable when ``bytecode`` is the program compiled here; None when it differs
        or the compile failed (the caller then compiles ``bytecode`` itself)."""
        if bytecode != self.bytecode:
            result = None
        else:
            self._thread.join()
            result = None if self._failed else self._result
        with _stats_lock:
            stats["hits" if result is not None else "misses"] += 1
        return result
