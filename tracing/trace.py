"""Tracing a Python function into a ``func.func @main`` of a fresh StableHLO module."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from jaxlib.mlir import ir

from .autograph.converter import unconverted
from .autograph.undefined import _is_undef
from .context import TraceContext, tracing
from . import state_rebinds, state_writes
from .escape import kill_escaped
from .errors import ConcretizationError
from .host_random import GeneratorWatch
from .numpy_api.masked import MaskedSelection
from .pytree import TreeDef, flatten, unflatten
from .traced import TracedRArray, TracedRNumber

# shape, dtype, weak (a traced Python scalar), nonneg (an integer array with no negative value)
InputSpec = tuple[tuple[int, ...], np.dtype, bool, bool]


@dataclass
class TracedProgram:
    """The result of tracing: the module and how its inputs/outputs map to Python values."""

    tc: TraceContext
    module: ir.Module
    input_specs: list[InputSpec]
    output_specs: list[tuple[tuple[int, ...], np.dtype]]
    out_tree: TreeDef
    # per leaf of the result: int k -> k-th module output; ("input", i) -> the caller's
    # i-th input object itself (returned as is, as NumPy would); ("static", value) otherwise
    out_leaves: list[Any]
    # (input index, output index): input i was updated in place; output j is its new value
    aliases: list[tuple[int, int]] = field(default_factory=list)
    # device arrays read without being arguments: the trailing inputs after ``input_specs``
    # of the caller's leaves (their current value is passed at every call)
    captured: list = field(default_factory=list)
    # (captured index, output index): that captured device array was updated in place
    capture_aliases: list[tuple[int, int]] = field(default_factory=list)
    # per module output: (input, strides) when it is a view of that input (NumPy would return
    # that memory; strides in elements of the input), or None
    out_views: list = field(default_factory=list)
    # the Python state the trace read (state_reads.StateReads), for the caller's guards
    reads: Any = None
    # places of the Python state left holding traced values (state_rebinds.Rebind): every call
    # puts the outputs ``state_outputs[k]`` there (templates name k)
    state_writes: list = field(default_factory=list)
    state_outputs: list[int] = field(default_factory=list)
    # checks made when the program runs (asserts on traced values): the output holding 1 + the
    # index of the first that failed (0: none), and each one's (message, user line, exception)
    assert_output: int | None = None
    asserts: list = field(default_factory=list)

    def text(self) -> str:
        return str(self.module)


_UNCONVERTED = (
    "note: reactant ran {} as written, without converting it: its source is not available (a "
    "function typed at the interactive prompt or given to `python -c`). Python control flow on "
    "traced values and writes of traced values into NumPy arrays need the source; define the "
    "function in a file or a notebook cell.")


def trace(
    fn: Callable,
    leaves: Sequence[Any],
    tree: TreeDef,
    inputs: dict[int, InputSpec],
    *,
    name: str = "main",
    loops: str = "auto",
    log: Callable[[str], None] | None = None,
    loop_raises: Callable[[Any], bool] | None = None,
) -> TracedProgram:
    """Trace ``fn(*args, **kwargs)`` where ``unflatten(tree, leaves) == (args, kwargs)``;
    ``inputs`` maps the positions of runtime-input leaves to their specs. Every other leaf is
    passed to ``fn`` as it is (a static value). ``loops``: how for-range loops over plain
    ints are traced ("auto", "keep" or "unroll"); ``log`` receives each loop's decision;
    ``loop_raises(while_op)``: whether the optimizer will turn a loop into tensor operations
    (in "auto" mode such a loop stays a loop even when it is small)."""
    tc = TraceContext(loops=loops, log=log)
    tc.loop_raises = loop_raises
    try:
        return _trace(tc, fn, leaves, tree, inputs, name)
    finally:
        state_writes.restore(tc)  # the state holds its NumPy arrays again, not their handles
        # handles still alive now were kept by the user's code (attributes, globals, lists):
        # they name values of this program only, so any later use is an error, not a crash
        kill_escaped(tc.handles, 0, None, f"the trace of {getattr(fn, '__qualname__', name)!s} ended")
        tc.release()


def _trace(tc: TraceContext, fn, leaves, tree, inputs, name) -> TracedProgram:
    order = sorted(inputs)
    specs = [inputs[i] for i in order]
    with tracing(tc):
        f = tc.new_function(name, [tc.tensor_type(s, d) for s, d, _, _ in specs], public=True)
        tc.main = f
        block_args = list(f.entry_block.arguments)
        with tc.insert_into(f.entry_block):
            tracers = []
            for (shape, dt, weak, nonneg), a in zip(specs, block_args):
                if nonneg:
                    tc.nonneg_values.add(a)
                t = TracedRNumber(a, shape, dt, weak) if shape == () else TracedRArray(a, shape, dt)
                tracers.append(t)
            new_leaves = list(leaves)
            first: dict[int, int] = {}
            for k, pos in enumerate(order):
                # the same array passed twice is one handle: a write through one name is seen
                # through the other, as in NumPy (the second block argument stays unused)
                new_leaves[pos] = tracers[first.setdefault(id(leaves[pos]), k)]
            args, kwargs = unflatten(tree, new_leaves)
            tc.reads.start(fn, leaves, inputs)
            watch = GeneratorWatch(fn, leaves)
            try:
                result = fn(*args, **kwargs)
            except BaseException as e:
                watch.restore()
                names = ([getattr(fn, "__qualname__", "?")] if unconverted(fn) else []) + tc.unconverted
                if names and isinstance(e, (TypeError, ValueError)):
                    e.add_note(_UNCONVERTED.format(", ".join(dict.fromkeys(names))))
                raise
            watch.check()
            outputs, out_leaves, out_tree = _collect_outputs(result, tracers)
            aliases = []
            for k, (t, a) in enumerate(zip(tracers, block_args)):
                if t.value != a:  # rebound by x[...] = v / x += v: an in-place update
                    aliases.append((k, len(outputs)))
                    outputs.append(t)
            out_values = [o.value for o in outputs]  # (a view computes its value here)
            inputs_by_id = {id(t): k for k, t in enumerate(tracers)}
            out_views = [(inputs_by_id[id(o._root)], o._strides) if o._root is not None and id(o._root) in
                         inputs_by_id else None for o in outputs]
            # device arrays the code read without receiving them and updated in place
            # (``self.w *= 0.5``): their new values are outputs the caller writes back
            capture_aliases = []
            for k, c in enumerate(tc.captures):
                h = tc.capture_handles.get(id(c))
                if h is not None and h.value != tc._captured[id(c)]:
                    capture_aliases.append((k, len(out_values)))
                    outputs.append(h)
                    out_values.append(h.value)
                    out_views.append(None)
            # traced values the code left in its Python state (``self.total = ...``): outputs
            # each call puts there (handles standing for state arrays are written back above)
            found, state_writes_ = state_rebinds.collect(tc, {id(h) for h in tc.capture_handles.values()})
            state_outputs = []
            for h in found:
                state_outputs.append(len(out_values))
                outputs.append(h)
                out_values.append(h.value)
                out_views.append(None)
            assert_output, asserts = None, []
            if tc.asserts:
                code = _first_failed(tc.asserts)
                assert_output = len(out_values)
                asserts = [(msg, where, exc) for _, msg, where, exc in tc.asserts]
                outputs.append(code)
                out_values.append(code.value)
                out_views.append(None)
        tc.finish_function(f, out_values)
    captured = list(tc.captures)
    specs = specs + [(tuple(c.shape), np.dtype(c.dtype), False, False) for c in captured]
    return TracedProgram(
        tc=tc,
        module=tc.module,
        input_specs=specs,
        captured=captured,
        reads=tc.reads,
        output_specs=[(o.shape, o.dtype) for o in outputs],
        out_tree=out_tree,
        out_leaves=out_leaves,
        aliases=aliases,
        capture_aliases=capture_aliases,
        out_views=out_views,
        state_writes=state_writes_,
        state_outputs=state_outputs,
        assert_output=assert_output,
        asserts=asserts,
    )


def _first_failed(asserts: list) -> TracedRArray:
    """1 + the index of the first assert whose truth value is false, or 0 (an int32 scalar)."""
    from .escape import EscapedTracer
    from .numpy_api.convert import as_traced

    code = as_traced(np.int32(0))
    for k in reversed(range(len(asserts))):
        truth, _, where, _exc = asserts[k]
        if type(truth) is EscapedTracer:
            raise ConcretizationError(f"the assert at {where} checks a value of a region that ended",
                                      hint="move the assert to the compiled function's own body")
        code = np.where(truth, code, np.int32(k + 1))
    return code


def _collect_outputs(result, inputs: list[TracedRArray]):
    """Traced leaves become module outputs, except the input tracers themselves (the caller
    gets its own object back); anything else is returned to the caller as it is."""
    leaves, tree = flatten(result, is_leaf=lambda x: isinstance(x, (TracedRArray, np.ndarray)))
    input_pos = {id(t): i for i, t in enumerate(inputs)}
    outputs: list[TracedRArray] = []
    desc: list[Any] = []
    for leaf in leaves:
        if _is_undef(leaf):  # (a variable a traced loop or branch left unbound: its error)
            leaf._fail()
        if isinstance(leaf, MaskedSelection):
            leaf._shape_error("returning it from the compiled function", at_selection=True)
        if isinstance(leaf, np.ndarray) and leaf.dtype == object and any(isinstance(e, TracedRArray) for e in leaf.flat):
            raise ConcretizationError("the compiled function returns a NumPy object array holding traced values",
                                      hint="build the result with np.stack / np.asarray of the traced values")
        if id(leaf) in input_pos:
            desc.append(("input", input_pos[id(leaf)]))
        elif isinstance(leaf, TracedRArray):
            desc.append(len(outputs))
            outputs.append(leaf)
        else:
            desc.append(("static", leaf))
    return outputs, desc, tree
