"""Runtime traces: ``with reactant.profile(dir):`` records what the devices and the host did
(jax's profiler, which sees our PJRT executions: each compiled function runs as the XLA module
``reactant_<name>``), viewable in TensorBoard's profile plugin or Perfetto; compilations inside
the block appear as ``reactant compile <name>: <stage>`` spans."""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

from . import _jax_adapter as jx

_active = 0  # profile blocks open (compile stages are annotated only inside one)


@contextlib.contextmanager
def profile(log_dir: str | os.PathLike, *, perfetto: bool = True) -> Iterator[str]:
    """Record a trace of everything run inside the block into ``log_dir``
    (``plugins/profile/<run>/*.xplane.pb`` for TensorBoard; with ``perfetto`` also
    ``*.trace.json.gz``, which https://ui.perfetto.dev opens). Yields the directory."""
    global _active
    log_dir = os.fspath(log_dir)
    with jx.profiler_trace(log_dir, perfetto):
        _active += 1
        try:
            yield log_dir
        finally:
            _active -= 1


def active() -> bool:
    """Whether a ``profile`` block is open."""
    return _active > 0


def annotate(name: str):
    """A named span in the trace (a context manager), e.g. around one training step."""
    return jx.trace_annotation(name)
