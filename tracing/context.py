"""The trace context: the MLIR context and module being built, and where ops go.

One ``TraceContext`` per trace (per compile). It is pushed on a thread-local stack while the
user's function runs, so op builders find it with ``current()``; nested traces (an autodiff
primal, a branch) push insertion points on the same context.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from ..ir.context import make_context
from ..ir.loops import int_range
from ..ir.types import element_type, spec_of
from .errors import user_location
from .state_reads import StateReads

_tls = threading.local()


class TraceContext:
    """State of one trace: context, module, insertion point stack, caches of types and locations."""

    def __init__(self, ctx: ir.Context | None = None, *, loops: str = "auto", log=None):
        self.ctx = ctx or make_context()
        # how Python for-range loops over plain ints are traced: "auto", "keep" or "unroll"
        # (see autograph.for_range); ``log`` prints each loop's decision when set
        self.loops = loops
        self.log = log
        # whether the optimizer turns a while op into tensor operations (set by the compiler
        # when its passes will run): a small loop that does is kept rather than unrolled
        self.loop_raises = None
        self.raise_answers: dict = {}  # its answers, per loop of the source (autograph.loops)
        # functions the trace ran without source conversion (no source: typed at the prompt)
        self.unconverted: list[str] = []
        self.unknown_loc = ir.Location.unknown(self.ctx)
        self.module = ir.Module.create(self.unknown_loc)
        self._ips: list[ir.InsertionPoint] = []
        self._types: dict = {}
        self._elem_types: dict = {}
        self._specs: dict = {}
        self._locs: dict = {}
        self.functions: dict[str, func.FuncOp] = {}
        # (tracer, value before) for every in-place rebinding, in order (see traced.rebind)
        self.mutations: list = []
        # user functions traced once per signature (functions.cached_call)
        self.call_cache: dict = {}
        # values known to hold no negative element (integer inputs seen on the host)
        self.nonneg_values: set[ir.Value] = set()
        # (lo, hi) of integer scalars known while tracing (the index of a loop, while its body is traced)
        self.int_ranges: dict = {}
        # small loops kept because they become tensor operations (at trace time or in the passes)
        self.raised_loops: list = []
        # facts other layers record about the program (the sharding layer's mesh)
        self.extensions: dict = {}
        # device arrays the traced code reads without receiving them as arguments: implicit
        # inputs of @main (``capture``), in order
        self.main: func.FuncOp | None = None
        self.captures: list = []
        self._captured: dict = {}
        # id -> the one traced handle of a captured device array: reads see its in-place updates
        # (``self.w *= 0.5`` in the traced code), which the program returns and the caller
        # writes back into the device array
        self.capture_handles: dict = {}
        # (read, NumPy array, handle): places of the Python state holding a state array's handle
        # while the trace runs (``state_writes``)
        self.state_restores: list = []
        # (weak reference, user line) of every traced handle made in this trace
        # (``escape.kill_escaped``); ``where``: the user line of the latest op
        self.handles: list = []
        # traced handles a finished loop body left in Python objects (a list, an attribute):
        # a loop tried as a while is unrolled instead when its body kept some
        self.loop_escapes = 0
        self.pure_depth = 0  # calls being traced for caching (functions.cached_call)
        self.where = None
        # (NumPy function name, user line) of the NumPy call being traced (``numpy_calling``)
        self.numpy_call: tuple[str, tuple] | None = None
        # the Python state (globals, attributes, items...) the traced code reads (state_reads)
        self.reads = StateReads(self.ctx)
        # (traced truth value, message, user line, exception type) of checks made when the
        # program runs (asserts on traced values): the program returns which failed first and
        # the call raises that exception (``trace``, ``check_at_run``)
        self.asserts: list = []

    def release(self) -> None:
        """Drop the Python handles on ops and values of the module once tracing is over: the
        passes erase ops behind Python's back, and a handle outliving its op corrupts the heap
        when it is freed (MLIR's Python wrappers are not told). What the compile still needs —
        the context, ``@main``, the extensions — stays."""
        main = self.functions.get("main")
        self.functions = {"main": main} if main is not None else {}
        self.call_cache.clear()
        self.mutations.clear()
        self.nonneg_values.clear()
        self.int_ranges.clear()
        self.raised_loops.clear()
        self._captured.clear()
        self.capture_handles.clear()
        self._ips.clear()
        self.handles.clear()

    # -- types ------------------------------------------------------------------------------
    def elem_type(self, dtype: np.dtype) -> ir.Type:
        t = self._elem_types.get(dtype)
        if t is None:
            t = self._elem_types[dtype] = element_type(dtype)
        return t

    def tensor_type(self, shape: tuple[int, ...], dtype: np.dtype) -> ir.RankedTensorType:
        key = (shape, dtype)
        t = self._types.get(key)
        if t is None:
            t = self._types[key] = ir.RankedTensorType.get(list(shape), self.elem_type(dtype))
        return t

    def spec(self, t: ir.Type) -> tuple[tuple[int, ...], np.dtype]:
        """(shape, dtype) of a ranked tensor type (cached: every op's result is read back so)."""
        r = self._specs.get(t)
        if r is None:
            r = self._specs[t] = spec_of(t)
        return r

    def known_range(self, v: ir.Value) -> tuple[int, int] | None:
        """(lo, hi) of the integer value ``v`` from constants and the indices of the loops being
        traced (``int_ranges``), else None."""
        return int_range(v, env=self.int_ranges)

    # -- locations --------------------------------------------------------------------------
    def location(self, name: str | None = None) -> ir.Location:
        """Location of the user's current source line (cached per line). Ops that a NumPy call
        made on that line (``numpy_call``), or given a ``name``, get a name location around it,
        ``loc("np.cumprod"("model.py":4:0))``, so that errors found later in the module (the AD
        pass's) can speak of the NumPy call rather than of the op."""
        where = self.where = user_location()
        if where is None:
            return self.unknown_loc
        if name is None:
            call = self.numpy_call
            if call is not None and call[1] == where:  # (not a user callback's line inside it)
                name = call[0]
        key = where if name is None else (where, name)
        loc = self._locs.get(key)
        if loc is None:
            loc = ir.Location.file(where[0], where[1], 0, self.ctx)
            if name is not None:
                loc = ir.Location.name(name, childLoc=loc, context=self.ctx)
            self._locs[key] = loc
        return loc

    def numpy_calling(self, name: str, impl, args, kwargs):
        """``impl(*args, **kwargs)``, the ops it makes on the user's line of the call located with
        ``name`` (the NumPy function the user called; the outermost call on a line names it)."""
        where = user_location()
        outer = self.numpy_call
        if outer is not None and outer[1] == where:
            return impl(*args, **kwargs)
        self.numpy_call = (name, where)
        try:
            return impl(*args, **kwargs)
        finally:
            self.numpy_call = outer

    # -- insertion points -------------------------------------------------------------------
    @property
    def ip(self) -> ir.InsertionPoint:
        return self._ips[-1]

    @contextmanager
    def insert_into(self, block: ir.Block) -> Iterator[None]:
        self._ips.append(ir.InsertionPoint(block))
        try:
            yield
        finally:
            self._ips.pop()

    def new_function(self, name: str, arg_types: list[ir.Type], *, public: bool = False) -> func.FuncOp:
        """A func.func with an entry block (results are set by ``finish_function``)."""
        with ir.InsertionPoint(self.module.body), self.unknown_loc:
            fn = func.FuncOp(name, ir.FunctionType.get(arg_types, []))
            fn.attributes["sym_visibility"] = ir.StringAttr.get("public" if public else "private")
            fn.add_entry_block()
        self.functions[name] = fn
        return fn

    def finish_function(self, fn: func.FuncOp, results: list[ir.Value]) -> None:
        with ir.InsertionPoint(fn.entry_block), self.unknown_loc:
            func.ReturnOp(results)
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in fn.entry_block.arguments], [r.type for r in results])
        )

    def capture(self, obj) -> ir.Value | None:
        """A device array (or a NumPy array of the Python state, see ``state_reads``) read by
        the traced code but not passed to it: a new trailing argument of ``@main`` (once per
        array), so the program reads its current value at every call. None when there is no
        ``@main`` to extend (the array becomes a constant)."""
        if self.main is None:
            return None
        v = self._captured.get(id(obj))
        if v is None:
            t = self.tensor_type(tuple(obj.shape), np.dtype(obj.dtype))
            v = self._captured[id(obj)] = self.main.entry_block.add_argument(t, self.unknown_loc)
            self.captures.append(obj)
        return v

    def check_at_run(self, truth, message: str | None, where: str, exc: type = AssertionError) -> bool:
        """Have the program check the traced bool ``truth`` when it runs: the call raises
        ``exc(message)`` naming ``where`` when it is false. False (nothing registered) inside a
        region (a traced if or loop body, a function traced apart): the caller decides."""
        if self.main is None or self.ip.block != self.main.entry_block:
            return False
        self.asserts.append((truth, message, where, exc))
        return True

    def unique_name(self, base: str) -> str:
        name, i = base, 0
        while name in self.functions:
            i += 1
            name = f"{base}_{i}"
        return name


def current() -> TraceContext:
    stack = getattr(_tls, "stack", None)
    if not stack:
        raise RuntimeError("no active trace: traced values exist only inside @reactant.compile")
    return stack[-1]


def active() -> TraceContext | None:
    stack = getattr(_tls, "stack", None)
    return stack[-1] if stack else None


@contextmanager
def tracing(tc: TraceContext) -> Iterator[TraceContext]:
    stack = getattr(_tls, "stack", None)
    if stack is None:
        stack = _tls.stack = []
    stack.append(tc)
    from . import escape, traced

    outer = getattr(traced._tls, "tc", None)
    traced._tls.tc = tc
    try:
        with tc.ctx, tc.unknown_loc, escape.heap_frozen():
            yield tc
    finally:
        stack.pop()
        traced._tls.tc = outer
