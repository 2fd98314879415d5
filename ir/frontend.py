"""The program being traced and the runtime, as the layers beside the tracer reach them.

``sharding`` records ops into the traced program (sharding constraints, ``shard_map``'s manual
computations, collectives) but may not import ``tracing``; and it reshards or runs device
arrays outside a trace but may not import ``reactant``. The tracer registers a
:class:`Frontend` and the top layer a :class:`Runtime` here, at import; the sharding layer
asks for them.
"""

from __future__ import annotations

from typing import Any, Callable, ContextManager, Protocol, Sequence

from jaxlib.mlir import ir


class Frontend(Protocol):
    """The active trace (``active()`` says whether there is one)."""

    def active(self) -> bool: ...

    def value(self, x: Any) -> ir.Value:
        """``x`` as a value of the trace (NumPy/Python values become constants)."""

    def wrap(self, value: ir.Value) -> Any:
        """The traced array of ``value`` (shape and dtype read from its type)."""

    def emit(self, name: str, operands: Sequence[ir.Value], result_types: Sequence[ir.Type],
             attributes: dict | None = None, regions: int = 0) -> ir.Operation:
        """Create op ``name`` at the trace's insertion point, located at the user's line."""

    def building(self) -> ContextManager[None]:
        """Ambient insertion point and location (the user's line) for ``reactant.ir.build``."""

    def module(self) -> ir.Module: ...

    def call_traced(self, fn: Callable, args: Sequence[Any]) -> tuple[list[ir.Value], Callable[[list], Any], bool]:
        """Run ``fn(*args)`` in the trace with Python control flow converted as for the whole
        function; returns its flattened output values, a function rebuilding the output
        structure from one leaf per value, and whether ``fn`` updated an array in place."""

    def trace_function(self, fn: Callable, arg_types: Sequence[ir.Type], make_args: Callable[[list], tuple],
                       name: str) -> tuple[str, list[ir.Type], Callable[[list], Any], list[ir.Value], bool]:
        """Trace ``fn(*make_args(args))`` into a new private function of the module whose
        arguments have ``arg_types`` (``args``: traced arrays of them); returns its symbol,
        result types, the output-structure rebuilder (as ``call_traced``), the outer values
        it captures (appended as trailing arguments) and whether it updated in place."""

    def flatten(self, tree: Any) -> tuple[list, Callable[[list], Any]]:
        """Leaves of a pytree (the tracer's pytree rules) and a function rebuilding it."""

    def state(self) -> dict:
        """A dict living as long as the trace, for facts other layers record (the mesh)."""


class Runtime(Protocol):
    """Device arrays outside a trace."""

    def reshard(self, x: Any, sharding: Any) -> Any: ...

    def compiled(self, fn: Callable) -> Callable:
        """``fn`` compiled like ``reactant.compile(fn)``."""


_frontend: Frontend | None = None
_runtime: Runtime | None = None


def register_frontend(f: Frontend) -> None:
    global _frontend
    _frontend = f


def register_runtime(r: Runtime) -> None:
    global _runtime
    _runtime = r


def frontend() -> Frontend | None:
    """The tracer, when one is registered and a trace is active."""
    f = _frontend
    return f if f is not None and f.active() else None


def runtime() -> Runtime | None:
    return _runtime
