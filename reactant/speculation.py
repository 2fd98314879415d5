"""Speculative XLA compile: XLA compiles the program while equality saturation still runs.

On most small programs the last equality-saturation pass proves no cheaper form and leaves
the module as it is. A compile therefore forks the module just before that pass, finishes the
copy without it and starts XLA on the copy in a background thread (XLA's compile runs outside
the GIL; the threads are kept between compiles);
when the saturated program comes out byte-identical, that executable is the result, and the
saturation's time was hidden behind XLA's. Otherwise the speculative executable is dropped.
Programs above ``MAX_OPS`` ops are not forked: a wasted compile of a large program would
compete with the real one for cores and memory.
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
from typing import Any, Callable

MAX_OPS = 2000
stats = {"hits": 0, "misses": 0}  # speculative executables used / dropped (for diagnostics)
_stats_lock = threading.Lock()


class _Worker:
    """A daemon thread that runs background compiles one at a time. Workers are kept idle
    between compiles: starting a thread costs 0.1-2 ms on a loaded machine, as much as a small
    program's whole saturation pass."""

    def __init__(self):
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="reactant-speculative-compile", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self.jobs.get()
            job.picked.set()
            try:
                job.run()
            except BaseException:  # noqa: BLE001 - (the worker outlives any failure of a job)
                job._failed = True
            _release(self)  # (idle again before the waiting caller may ask for a worker)
            job.done.set()


_pool_lock = threading.Lock()
_idle: list[_Worker] = []
_busy: set = set()  # the jobs still running (an exit waits for them: XLA aborts the process
# when the interpreter shuts down under a compile)


def _acquire() -> _Worker:
    with _pool_lock:
        return _idle.pop() if _idle else _Worker()


def _release(worker: _Worker) -> None:
    with _pool_lock:
        _idle.append(worker)


def _forget_workers() -> None:  # (a forked child has none of the parent's threads)
    _idle.clear()
    _busy.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


_release(_Worker())  # (one idle from the start: the first compile need not start a thread)


@atexit.register
def _wait_for_compiles() -> None:
    for job in list(_busy):
        job.done.wait()


class Speculation:
    """One background compile of ``bytecode`` with ``compile_fn``."""

    def __init__(self, bytecode: bytes, compile_fn: Callable[[bytes], Any]):
        self.bytecode = bytecode
        self._compile_fn = compile_fn
        self._result: Any = None
        self._failed = False
        self.picked, self.done = threading.Event(), threading.Event()
        with _pool_lock:
            _busy.add(self)
        _acquire().jobs.put(self)
        # (as Thread.start does: wait until the worker holds the job, so the compile starts now
        # rather than when the interpreter next switches threads)
        self.picked.wait()

    def run(self) -> None:
        try:
            self._result = self._compile_fn(self.bytecode)
        except Exception:  # noqa: BLE001 - the caller compiles the program itself and reports its error
            self._failed = True
        finally:
            with _pool_lock:
                _busy.discard(self)

    def take(self, bytecode: bytes) -> Any | None:
        """The executable when ``bytecode`` is the program compiled here; None when it differs
        or the compile failed (the caller then compiles ``bytecode`` itself)."""
        if bytecode != self.bytecode:
            result = None
        else:
            self.done.wait()
            result = None if self._failed else self._result
        with _stats_lock:
            stats["hits" if result is not None else "misses"] += 1
        return result
