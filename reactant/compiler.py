"""``@reactant.compile``: trace, optimize, compile with XLA, cache per call signature, run.

The cache key of a call is its pytree structure plus, per leaf, either the device array's
(shape, dtype, placement, weak) or the value of a static leaf (so a changed Python scalar
recompiles instead of reusing a stale constant). A cached call does no tracing and no MLIR
work: it builds the key, looks it up, and runs the executable on the argument buffers.

A program whose trace read Python state (globals, closure variables, attributes, items: see
``guards``) runs only after its guards found that state unchanged; otherwise the function is
traced again, and up to ``guards.MAX_PER_SIGNATURE`` programs are kept per signature. A new
trace whose optimized module equals an earlier one's reuses that executable.
"""

from __future__ import annotations

import functools
import hashlib
import math
import operator
import sys
import threading
import types
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from jaxlib.mlir import ir

from . import _jax_adapter as jx
from . import cache as _disk_cache
from . import guards as _guards
from . import runtime
from .arrays import ConcreteRArray, ConcreteRNumber, Signature, _sign_unknown, _signature, sig_id, to_rarray
from .decompositions import lower_decompositions
from .ir.context import count_ops
from .ir.contracts import strip_contract_attrs
from .ir.custom_derivatives import is_marker as _is_ad_marker
from .optimize import PassOptions, compile_pipeline, run_pipeline
from .optimize.patterns.loop_raising import kept_loop_raises
from .optimize.pipelines import SATURATION
from .progress import CompileProgress, CompileStats, log_enabled
from .speculation import MAX_OPS as _SPECULATE_MAX_OPS
from .speculation import Speculation
from .tracing import active as _trace_active
from .tracing import autograph
from .tracing.errors import ArgumentError, ReadOnlyError
from .sharding import NamedSharding, Replicated, ShardingError, as_mesh, as_sharding
from .sharding import auto as _auto
from .sharding.shardy import annotate_main, propagated_result_shardings
from .tracing.pytree import TreeDef, flatten, prefix_leaves, structure_key, unflatten
from .tracing.trace import TracedProgram, trace

# Bounds of the tables that grow per call signature; past a bound the oldest entry is dropped
# (a dropped executable is compiled again if its signature comes back).
CACHE_MAX = 1024  # call signatures per compiled function
FAST_MAX = 4096  # entries of each fast lookup table (accelerators of the cache)
EXES_MAX = 256  # executables kept by program (reused by a new identical trace, of any function)
# executables by (program bytecode hash, placement, result placements), for the whole process:
# an identical program traced again (a function compiled twice, another function tracing to the
# same module) reuses the executable instead of compiling it again
_EXECUTABLES: dict[tuple, Any] = {}
_EXECUTABLES_LOCK = threading.Lock()

_ARRAYS = frozenset((ConcreteRArray, ConcreteRNumber))
_PY_NUMBERS = (bool, int, float, complex)
_SID = operator.attrgetter("_sid")
_BUF = operator.attrgetter("_buf")


@dataclass(frozen=True)
class Options:
    """How a function is compiled. ``optimize``: an optimization level ``"O0"``..``"O3"`` or a
    list of pass names; ``track_numbers``: Python scalars among the arguments become runtime
    inputs instead of constants (no recompilation when they change); ``donate``: reuse the
    buffers of arguments updated in place for their new values."""

    optimize: str | tuple[str, ...] = "O2"
    track_numbers: bool = False
    donate: bool = True
    loops: str = "auto"  # for-range loops over plain ints: "auto" (decided per loop), "keep", "unroll"
    control_flow: bool = True  # convert Python if/while/for on traced values (source transformation)
    # reverse mode through loops: "sqrt" or a period (checkpointing); a bound on trip counts
    # that are only known at run time
    ad_checkpoint: str | int | None = None
    ad_max_trip_count: int | None = None
    # shardings of the results of an SPMD program: a sharding or a pytree prefix of the result
    # (None: the shardings propagation gives)
    out_shardings: Any = None
    verbose: bool = False  # print every compilation stage's time and op count (also REACTANT_LOG=1)
    device: Any = None  # where the program runs when no argument says (a device object)
    warn_scalars: bool = True  # warn when new Python-scalar values keep recompiling (not for internal uses)
    fast_math: bool = False  # also rewrites that may change rounding, NaN/Inf or signed zeros (optimize/exactness.py)
    # automatic sharding (sharding/auto.py): None (arrays placed with to_rarray(x, mesh=...) are
    # chosen), "auto", "manual" or a CostModel; ``mesh``: the mesh the program runs on
    shard: Any = None
    mesh: Any = None

    def pass_options(self) -> PassOptions:
        return PassOptions(ad_checkpoint=self.ad_checkpoint, ad_max_trip_count=self.ad_max_trip_count,
                           fast_math=self.fast_math)


def _loop_raises(level, options: PassOptions) -> Callable[[Any], bool] | None:
    """What tells the tracer that a small loop will become tensor operations: only when the
    pipeline runs the rewrite patterns before AD (else the loop would stay a loop)."""
    names = compile_pipeline(level, has_autodiff=False) if level not in (None, False) else []
    if "patterns" not in names:
        return None
    return functools.partial(kept_loop_raises, options=options)


class CompiledFunction(functools.partial):
    """A function traced and compiled per call signature. Call it like the original.
    ``compile_count`` counts compilations; ``lower(*args)`` traces and optimizes for these
    arguments without compiling."""

    # A functools.partial of the dispatcher with this function's state bound first: a call
    # runs C code up to the dispatcher (a Python-level __call__ costs ~75 ns more, 2-3 % of a
    # tiny cached call).
    def __new__(cls, fn: Callable, options: Options):
        state = _Compiled(fn, options)
        self = super().__new__(cls, _dispatch, state)
        self._state = state
        functools.update_wrapper(self, fn)
        return self

    fn = property(lambda self: self._state.fn, doc="The original Python function.")
    options = property(lambda self: self._state.options, doc="The compile options.")
    compile_count = property(lambda self: self._state.compile_count,
                             doc="Compilations (traces) so far.")
    xla_compile_count = property(lambda self: self._state.xla_compile_count,
                                 doc="XLA compilations so far (a trace giving a program compiled before reuses it).")
    _cache = property(lambda self: self._state._cache)

    def lower(self, *args, optimize: bool | str | list = True, **kwargs) -> TracedProgram:
        """Trace for these arguments and run the pipeline (``optimize=False``: none, a level or
        pass list: that one); returns the traced program (``.module``, ``.text()``)."""
        return self._state.lower(*args, optimize=optimize, **kwargs)

    def compile_stats(self, *args, **kwargs) -> CompileStats:
        """Where the compilation for these arguments spent its time (trace, each optimizer
        pass, XLA), as data; compiles (without running) if this call signature is new."""
        return self._state.entry_for(args, kwargs).stats

    def export(self, *args, **kwargs):
        """``reactant.export(self, *args, **kwargs)``: the program for these arguments as an
        ``Exported`` (serializable, runs without the source)."""
        from .export import export  # (reactant/export.py imports this module)

        return export(self, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<reactant.compile {getattr(self.fn, '__qualname__', self.fn)!r}>"

    def __get__(self, obj, objtype=None):  # methods: bind like a function
        return self if obj is None else functools.partial(self, obj)

    def __reduce__(self):
        raise TypeError("a compiled function cannot be pickled; pickle the Python function instead")


class _Compiled:
    """The state and logic of a compiled function: the cache of executables per call
    signature, the fast lookup tables, tracing and compiling."""

    def __init__(self, fn: Callable, options: Options):
        self.fn = fn
        self.options = options
        self._cache: dict[Any, _Entry] = {}
        # positional signatures -> the entry's runner, for entries that update nothing in place
        self._fast: dict[tuple, Callable] = {}
        # structural keys of pytrees of device arrays (pytree.structure_key) -> the entry's runner
        self._fast_trees: dict[tuple, Callable] = {}
        self._lock = threading.Lock()
        self.compile_count = 0
        self._exes = _EXECUTABLES  # (shared by every compiled function: see _EXECUTABLES)
        self.xla_compile_count = 0
        self._warned = False  # about a signature traced again and again
        # per call signature with its Python scalars masked: the scalar values compiled for
        # (a warning names the argument when they keep changing)
        self._scalar_values: dict[Any, set] = {}
        self._scalars_warned = False

    # -- calling (the hot path is _dispatch, below the class) --------------------------------
    def _call(self, args: tuple, kwargs: dict):
        if _trace_active() is not None:
            return self.fn(*args, **kwargs)  # inside another trace: just trace the body
        # pytrees of device arrays only: a structural key built without the general flatten
        key: list = []
        concretes: list = []
        tree_key = None
        if structure_key(args, _ARRAYS, _SID, key, concretes) and (
                not kwargs or structure_key(kwargs, _ARRAYS, _SID, key, concretes)):
            tree_key = tuple(key) if _distinct(concretes) else None
            run = self._fast_trees.get(tree_key)
            if run is not None:
                try:
                    return run(list(map(_BUF, concretes)), concretes)
                except _Stale:  # the Python state it read changed
                    pass
        leaves, tree = flatten((args, kwargs), is_leaf=_is_concrete)
        leaves, hosts = _host_inputs(leaves, self.options.device)
        key, bufs, concretes = self._key(leaves, tree)
        entry, bufs, concretes = self._entry(leaves, tree, key, bufs, concretes)
        if hosts:  # NumPy arrays among the arguments: inputs, their in-place updates copied back
            return _run_writing_hosts(entry, bufs, concretes, hosts)
        if tree_key is not None:  # later calls like this one: fast
            with self._lock:
                _put(self._fast_trees, tree_key, entry.fast_checked, FAST_MAX)
                if not kwargs and not entry.writeback and _all_arrays(args) and _distinct(args):
                    # (before the trace check: must not write into arrays captured by a trace)
                    _put(self._fast, tuple(map(_SID, args)), entry.fast_checked, FAST_MAX)
        return entry.run(bufs, concretes)

    def _entry(self, leaves, tree, key, bufs, concretes):
        """The cached program for this call (its guards hold), traced and compiled if there is
        none; returns it with the buffers and device arrays to run it on."""
        head = entry = self._cache.get(key)
        while entry is not None and entry.guards is not None and not entry.guards.check():
            entry = entry.next  # programs for the same signature and other Python state
        if entry is None:
            if self.options.track_numbers:  # runtime inputs for Python numbers, converted once
                leaves = [_track(x, self.options.device) if type(x) in _PY_NUMBERS else x for x in leaves]
            why = head.guards.explain() if head is not None else None
            if head is None and self._cache and (self.options.verbose or log_enabled("recompile")):
                why = self._new_signature(key, leaves, tree)
            if why is not None and not self._warned and _length(head) >= _guards.MAX_PER_SIGNATURE:
                self._warned = True
                warnings.warn(f"{getattr(self.fn, '__qualname__', self.fn)} is traced again and again for the same "
                              f"argument signature because Python state it reads changes ({why}); a function that "
                              "updates state it reads is traced at every call (pass the value as an argument, or "
                              "keep the state in device arrays)", RuntimeWarning, stacklevel=4)
            entry = self._compile(leaves, tree, why)
            if head is None:
                self._note_scalars(leaves, tree, key)
            with self._lock:
                entry.next = _trim(head, _guards.MAX_PER_SIGNATURE - 1)
                _put(self._cache, key, entry, CACHE_MAX)
                self.compile_count += 1
            concretes = [x for x in leaves if isinstance(x, ConcreteRArray)]
            bufs = [c._buf for c in concretes]
        return entry, bufs, concretes

    def _new_signature(self, key, leaves, tree) -> str:
        """Why a call needs a new program: its arguments against the closest signature
        compiled before (which argument, which leaf, old and new shape/dtype/value)."""
        best = None
        for old in reversed(list(self._cache)):
            if old[0] != key[0] or len(old[1]) != len(key[1]):
                continue
            diff = [i for i, (a, b) in enumerate(zip(old[1], key[1])) if a != b]
            if best is None or len(diff) < len(best[1]):
                best = (old, diff)
        if best is None:
            return "the arguments' pytree structure is new (other containers, keys or lengths)"
        old, diff = best
        return "; ".join(f"{_leaf_name(self.fn, tree, leaves, i)}: {_describe(old[1][i])} -> {_describe(key[1][i])}"
                         if i < len(leaves) else "arguments passed twice differ" for i in diff)

    def entry_for(self, args: tuple, kwargs: dict) -> "_Entry":
        """The entry a call with these arguments runs (compiled now if it is new)."""
        leaves, tree = flatten((args, kwargs), is_leaf=_is_concrete)
        leaves, _ = _host_inputs(leaves, self.options.device)
        key, bufs, concretes = self._key(leaves, tree)
        return self._entry(leaves, tree, key, bufs, concretes)[0]

    def _note_scalars(self, leaves, tree, key) -> None:
        """Warn once when this function keeps compiling for new values of a static Python
        scalar argument (``track_numbers=True`` makes such scalars inputs)."""
        if self._scalars_warned or self.options.track_numbers or not self.options.warn_scalars:
            return
        parts = key[1]
        pos = [i for i, x in enumerate(leaves) if type(x) in _PY_NUMBERS]
        if not pos:
            return
        masked = list(parts)
        for i in pos:
            masked[i] = type(leaves[i])
        seen = self._scalar_values.setdefault((key[0], tuple(masked)), set())
        seen.add(tuple(parts[i] for i in pos))
        if len(seen) <= SCALAR_RECOMPILES:
            return
        self._scalars_warned = True
        values = list(seen)
        varying = [i for k, i in enumerate(pos) if len({v[k] for v in values}) > 1]
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        what = ", ".join(_leaf_name(self.fn, tree, leaves, i) for i in varying)
        warnings.warn(f"{name} was compiled {len(seen)} times for new values of {what}: Python numbers "
                      "among the arguments are compile-time constants; pass "
                      "reactant.compile(..., track_numbers=True) to make them runtime inputs",
                      RuntimeWarning, stacklevel=5)

    def call_viewing(self, args: tuple, kwargs: dict, make_view: Callable) -> Any:
        """Call; a result leaf that NumPy would return as a view of an argument is replaced by
        ``make_view(leaf, (argument, strides), position)``. Used by eager NumPy."""
        leaves, tree = flatten((args, kwargs), is_leaf=_is_concrete)
        key, bufs, concretes = self._key(leaves, tree)
        entry, bufs, concretes = self._entry(leaves, tree, key, bufs, concretes)
        result = entry.run(bufs, concretes)
        views = {p: (concretes[entry.out_views[d][0]], entry.out_views[d][1]) for p, d in enumerate(entry.out_leaves)
                 if type(d) is int and entry.out_views[d] is not None}
        if not views:
            return result
        out, out_tree = flatten(result, is_leaf=_is_concrete)
        if len(out) != len(entry.out_leaves):
            return result
        return unflatten(out_tree, [make_view(leaf, views[p], p) if p in views else leaf
                                    for p, leaf in enumerate(out)])

    def _key(self, leaves, tree: TreeDef):
        parts = []
        bufs, concretes = [], []
        track = self.options.track_numbers
        for leaf in leaves:
            if isinstance(leaf, ConcreteRArray):
                parts.append(leaf._sig)
                bufs.append(leaf._buf)
                concretes.append(leaf)
            elif track and type(leaf) in _PY_NUMBERS:
                c = _track(leaf, self.options.device)
                parts.append(c._sig)
                bufs.append(c._buf)
                concretes.append(c)
            else:
                parts.append(_static_key(leaf))
        if not _distinct(concretes):  # an array passed twice is one handle in the trace
            ids = [id(c) for c in concretes]
            parts.append(("same", tuple(ids.index(i) for i in ids)))
        return (tree, tuple(parts)), bufs, concretes

    # -- compiling --------------------------------------------------------------------------
    def lower(self, *args, optimize: bool | str | list = True, **kwargs) -> TracedProgram:
        """See ``CompiledFunction.lower``."""
        leaves, tree = flatten((args, kwargs), is_leaf=_is_concrete)
        leaves, _ = _host_inputs(leaves, self.options.device)
        if self.options.track_numbers:
            leaves = [_track(x, self.options.device) if type(x) in _PY_NUMBERS else x for x in leaves]
        level = self.options.optimize if optimize is True else optimize
        return self._lower(leaves, tree, level)

    def _lower(self, leaves, tree, level, progress: CompileProgress | None = None,
               fork: Callable[[ir.Module, TracedProgram], None] | None = None,
               cached: Callable[[TracedProgram], bool] | None = None) -> TracedProgram:
        """Trace and optimize. ``fork(copy, prog)`` is called with a copy of the module finished
        without its last equality-saturation pass (see ``speculation``), when it has one.
        ``cached(prog)`` True: the persistent cache has the compiled program, nothing is optimized."""
        inputs = {}
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, ConcreteRArray):
                sig = leaf._sig
                inputs[i] = (sig.shape, sig.dtype, sig.weak, sig.nonneg)
            else:
                _static_key(leaf)  # rejects what cannot be a constant, naming it
        fn = self.fn
        if self.options.control_flow:
            fn = autograph.convert(fn)
        log = progress.log if progress is not None and progress.verbose else None
        prog = trace(fn, leaves, tree, inputs, loops=self.options.loops, log=log,
                     loop_raises=_loop_raises(level, self.options.pass_options()))
        if progress is not None:
            progress.done("trace", f"{count_ops(prog.module)} ops" if progress.verbose else "")
        if self.options.donate and prog.aliases and prog.assert_output is None:
            # (a failed assert raises before the arguments take their new values: their buffers
            # must still be theirs)
            _set_aliasing(prog)
        mesh, arg_shardings, free = _decide_inputs(self.options, prog, leaves)
        if mesh is not None:  # one SPMD program over the mesh: Shardy annotations on @main
            annotate_main(prog.module, mesh, arg_shardings or [None] * len(prog.input_specs))
        if free and self.options.shard != "manual":
            fork = None  # (the shardings are chosen after the pipeline: no speculative copy)
        if cached is not None and cached(prog):  # persistent compile cache hit (cache.py)
            return prog
        if level is not False:
            passes = compile_pipeline(list(level) if isinstance(level, (list, tuple)) else level,
                                      has_autodiff=_has_autodiff(prog.module))
            stats: list | None = [] if progress is not None and progress.verbose else None
            on_pass = None if progress is None else (lambda n: progress.enter(f"pass {n}"))
            cut = max((i for i, n in enumerate(passes) if n in SATURATION), default=None)
            clean: set[str] = set()  # (the parts below skip idempotent passes as one run would)
            with prog.tc.ctx:
                if fork is not None and cut is not None and count_ops(prog.module) <= _SPECULATE_MAX_OPS:
                    run_pipeline(prog.module, passes[:cut], self.options.pass_options(), stats=stats,
                                 on_pass=on_pass, clean=clean)
                    copy = ir.Module.parse(_bytecode(prog.module))
                    run_pipeline(copy, passes[cut + 1:], self.options.pass_options(), clean=set(clean))
                    fork(copy, prog)
                    passes = passes[cut:]
                run_pipeline(prog.module, passes, self.options.pass_options(), stats=stats, on_pass=on_pass,
                             clean=clean)
            if progress is not None:
                progress.enter("finalize")  # (ends the last pass's stage)
            for st in stats or ():
                if not st.skipped:
                    progress.on_pass(st.name, st.seconds, st.ops_before, st.ops_after)
        if free and self.options.shard != "manual":
            _choose_shardings(self, prog, mesh, arg_shardings, free, progress)
        return prog

    def _compile(self, leaves, tree, why: str | None = None) -> "_Entry":
        """A new entry for these arguments (``why``: what changed since the last trace for the
        same signature, when it is traced again)."""
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        if why is not None and (self.options.verbose or log_enabled("recompile")):
            print(f"reactant: {name}: traced again: {why}", file=sys.stderr, flush=True)
        progress = CompileProgress(name, self.options.verbose)
        try:
            entry = self._compile_reporting(leaves, tree, progress)
        finally:
            progress.close()
        entry.stats = progress.stats()
        return entry

    def _compile_reporting(self, leaves, tree, progress: CompileProgress) -> "_Entry":
        concretes = [x for x in leaves if isinstance(x, ConcreteRArray)]
        spec: list[Speculation] = []

        def fork(copy: ir.Module, prog: TracedProgram) -> None:
            try:
                bc, _, compile_fn = self._finalize(copy, prog, concretes)
            except Exception:  # noqa: BLE001 - the program itself is finalized below and reports it
                return
            spec.append(Speculation(bc, compile_fn))

        # -- persistent compile cache (reactant/cache.py): a hit skips the optimizer and XLA
        disk = _disk_cache.Lookup(progress.name, self.options, progress,
                                  lambda p: _common_device(concretes + p.captured, self.options.device))
        prog = self._lower(leaves, tree, self.options.optimize, progress, fork, disk.find)
        if disk.hit is None:
            _check_no_autodiff_left(prog.module)
        guards = _guards.build(prog.reads)  # (before the XLA compile: a failure leaves no entry)
        bc, outs, compile_fn = disk.hit or self._finalize(prog.module, prog, concretes)
        # -- end persistent compile cache
        mesh = prog.tc.extensions.get("mesh")
        stage = "XLA compile" if mesh is None else "XLA compile and partition"
        progress.enter(stage if mesh is None else f"{stage} over {mesh.size} devices")
        exe_key = (hashlib.blake2b(bc, digest_size=16).digest(),
                   repr(mesh) if mesh is not None else _common_device(concretes + prog.captured, self.options.device).id,
                   tuple(map(repr, outs)))
        exe = self._exes.get(exe_key)
        note = "the executable of an earlier trace (the same program)" if exe is not None else ""
        if exe is None:
            exe = spec[0].take(bc) if spec else None
            note = "the executable compiled during equality saturation (the wait shown)" if exe is not None else ""
            if exe is None:
                exe = compile_fn(bc)
            with _EXECUTABLES_LOCK:
                _put(self._exes, exe_key, exe, EXES_MAX)
            with self._lock:
                if disk.hit is None:  # (persistent compile cache: a hit compiled nothing)
                    self.xla_compile_count += 1
            if disk.hit is not None:
                note = "loaded from the persistent compile cache"
        progress.done(stage, note)
        progress.reused = note
        disk.save(bc, outs, exe)  # (persistent compile cache: a miss is stored)
        entry = _Entry(exe, prog, outs, self.options.donate,
                       _host_put(mesh, concretes + prog.captured, self.options.device), guards)
        if prog.tc.extensions.get("free_inputs"):  # placed where the program wants them
            _place_free_inputs(entry, prog, bc, mesh, len(concretes))
        return entry

    def _finalize(self, module: ir.Module, prog: TracedProgram, concretes: list):
        """Make ``module`` (``prog``'s, or a speculative copy) what XLA compiles: returns its
        bytecode, the results' placements and the compile function."""
        mesh = prog.tc.extensions.get("mesh")
        with prog.tc.ctx:
            # XLA names the executable after the module: profiles and dumps show the function
            module.operation.attributes["sym_name"] = ir.StringAttr.get(_module_name(self.fn))
            strip_contract_attrs(module)  # facts for our optimizer only
            lower_decompositions(module)  # the platform's LU/QR/SVD/eigen library calls
        if mesh is None:
            if self.options.out_shardings is not None:
                raise ShardingError("out_shardings is for programs over a mesh: no argument is sharded",
                                    hint="place the arguments with reactant.to_rarray(x, sharding=...)")
            device = _common_device(concretes + prog.captured, self.options.device)
            return (_bytecode(module), [device] * len(prog.output_specs),
                    lambda bc: runtime.compile_module(bc, [device]))
        with prog.tc.ctx:
            wanted = _output_shardings(prog, self.options.out_shardings)
            if any(s is not None for s in wanted):
                annotate_main(module, mesh, [None] * len(prog.input_specs), wanted)
            # results placed as propagation places them, fixed on @main so XLA agrees
            outs = propagated_result_shardings(module, mesh)
            annotate_main(module, mesh, [None] * len(prog.input_specs), outs)
        devices = list(mesh.devices.flat)
        return _bytecode(module), outs, lambda bc: runtime.compile_module(bc, devices, num_partitions=mesh.size)


def _dispatch(state: "_Compiled", *args, **kwargs):
    """A call of a compiled function (``CompiledFunction`` binds ``state``)."""
    # Hot path: positional device arrays with a signature seen before, and an entry that
    # updates nothing in place. Small arities are unpacked and type-checked by hand: the
    # loop forms cost 3x more, and a caught AttributeError more than the whole lookup.
    if not kwargs:
        n = len(args)
        run = None
        if n == 2:
            a, b = args
            if type(a) in _ARRAYS and type(b) in _ARRAYS and a is not b:
                run = state._fast.get((a._sid, b._sid))
                bufs = [a._buf, b._buf]
        elif n == 1:
            (a,) = args
            if type(a) in _ARRAYS:
                run = state._fast.get((a._sid,))
                bufs = [a._buf]
        elif n == 3:
            a, b, c = args
            if type(a) in _ARRAYS and type(b) in _ARRAYS and type(c) in _ARRAYS and a is not b \
                    and b is not c and a is not c:
                run = state._fast.get((a._sid, b._sid, c._sid))
                bufs = [a._buf, b._buf, c._buf]
        elif _all_arrays(args) and _distinct(args):
            run = state._fast.get(tuple(map(_SID, args)))
            bufs = list(map(_BUF, args))
        if run is not None:
            try:  # (free in Python 3.11+ when nothing is raised)
                return run(bufs, args)
            except _Stale:  # its guards failed: the Python state it read changed
                pass
    return state._call(args, kwargs)


class _Entry:
    """One compiled executable and how to map Python values in and out of it."""

    __slots__ = ("exe", "execute", "handlers", "out_sigs", "out_sids", "out_classes", "out_tree",
                 "out_leaves", "writeback", "donate", "fast_run", "run", "calls", "captured", "host_put",
                 "guards", "fast_checked", "next", "out_views", "capture_writeback", "state_writes",
                 "state_outputs", "assert_output", "asserts", "stats")

    def __init__(self, exe, prog: TracedProgram, placements: list, donate: bool,
                 host_put: Callable | None = None, guards: "_guards.Guards | None" = None):
        """``placements``: per output, its device or (SPMD) its NamedSharding; ``host_put``:
        places a captured NumPy array where the program runs; ``guards``: of the Python state
        the trace read (None: it read none)."""
        self.exe = exe
        self.execute = _execute_of(exe)
        # (an output whose sharding does not divide it comes as its padded buffer: sharding/uneven.py)
        self.handlers = [jx.result_handler(p.padded_shape(s), d, runtime.jax_sharding(p))
                         if isinstance(p, NamedSharding) else jx.result_handler(s, d, p)
                         for (s, d), p in zip(prog.output_specs, placements)]
        self.out_sigs = [Signature(s, d, p if isinstance(p, NamedSharding) else p.id, False, False)
                         for (s, d), p in zip(prog.output_specs, placements)]
        self.out_sids = [sig_id(s) for s in self.out_sigs]
        self.out_classes = [ConcreteRNumber if s == () else ConcreteRArray for s, _ in prog.output_specs]
        self.out_tree = prog.out_tree
        self.out_leaves = prog.out_leaves
        self.out_views = prog.out_views  # per output: the input it is a NumPy view of, or None
        self.writeback = prog.aliases  # (argument, output) pairs of in-place updates
        # (captured device array, output): arrays the function read from the Python state and
        # updated in place (``self.w *= 0.5``): the same objects take the new values
        self.capture_writeback = [(prog.captured[k], j) for k, j in prog.capture_aliases]
        # places of the Python state the function left holding traced values: each call puts
        # its results there (``tracing/state_rebinds.py``)
        self.state_writes = prog.state_writes
        self.state_outputs = prog.state_outputs
        self.assert_output, self.asserts = prog.assert_output, prog.asserts
        updated = {k for k, _ in prog.capture_aliases}
        for rb in self.state_writes:  # (an array also updated in place keeps its own guard)
            if rb.follows is not None and (guards is None or rb.follows[1] in updated):
                rb.follows = None
        self.donate = donate
        # the common case, one array returned and nothing updated, gets its own short path
        self.run = self._run
        single = not self.writeback and not self.capture_writeback and not self.state_writes \
            and self.assert_output is None and self.out_leaves == [0] and prog.out_tree.kind is None
        self.fast_run = self._single_runner() if single else self._run
        self.calls = 0
        self.stats: CompileStats | None = None  # set by the compilation that made it
        # arrays the function reads without receiving them (device arrays, large NumPy arrays
        # of the Python state): their current contents are passed after the arguments'
        self.captured = prog.captured
        self.host_put = host_put
        if prog.captured:
            self.fast_run = self._with_captured(self.fast_run)
            self.run = self._with_captured(self.run)
        if _has_collectives(exe):  # queued collective programs deadlock XLA's CPU rendezvous
            self.fast_run = self._synced(self.fast_run)
        self.guards = guards
        self.next: _Entry | None = None  # an older entry for the same signature (other state)
        self.fast_checked = self.fast_run if guards is None else _checked(guards.check, self.fast_run)

    def _with_captured(self, run: Callable) -> Callable:
        captured = self.captured
        if any(type(c) is np.ndarray for c in captured):
            put = self.host_put

            def with_host(bufs: list, concretes) -> Any:
                return run(list(bufs) + [put(c) if type(c) is np.ndarray else c._buf for c in captured], concretes)

            return with_host

        def with_captured(bufs: list, concretes) -> Any:
            return run(list(bufs) + [c._buf for c in captured], concretes)

        return with_captured

    def _synced(self, run: Callable) -> Callable:
        """``run`` that waits for the device every ``SYNC_EVERY`` calls (XLA's CPU collectives
        abort past ~100 queued dispatches of a program with collectives)."""

        def synced(bufs: list, concretes) -> Any:
            out = run(bufs, concretes)
            self.calls += 1
            if self.calls % SYNC_EVERY == 0:
                _block_all(out)
            return out

        return synced

    def _single_runner(self) -> Callable:
        execute, handlers = self.execute, self.handlers
        cls, sig, sid, new = self.out_classes[0], self.out_sigs[0], self.out_sids[0], object.__new__

        def run(bufs: list, concretes) -> Any:
            out = new(cls)
            out._buf = execute(bufs).consume_with_handlers(handlers)[0]
            out._sig = sig
            out._sid = sid
            return out

        return run

    def _run(self, bufs: list, concretes) -> Any:
        if self.writeback and self.donate:
            bufs = _undonate_duplicates(bufs, self.writeback)
        outs = self.execute(bufs).consume_with_handlers(self.handlers)
        if self.assert_output is not None:  # (waits for the program: before anything is written)
            failed = int(np.asarray(outs[self.assert_output]))
            if failed:
                msg, where, exc = self.asserts[failed - 1]
                text = "" if msg is None else str(msg)
                raise exc(f"{text}{' ' if text else ''}(at {where}, checked when the compiled program ran)")
        for i, j in self.writeback:  # write back in-place updates (values changed: sign unknown)
            c = concretes[i]
            c._buf, c._sig = outs[j], _sign_unknown(c._sig)
            c._sid = sig_id(c._sig)
        for c, j in self.capture_writeback:
            if type(c) is np.ndarray:  # a NumPy array of the state: NumPy's in-place update
                np.copyto(c, np.asarray(outs[j]))
            else:
                c._buf, c._sig = outs[j], _sign_unknown(c._sig)
                c._sid = sig_id(c._sig)
        if self.state_writes:
            self._put_state(outs)
        res = []
        for d in self.out_leaves:
            if type(d) is int:
                res.append(self.out_classes[d]._wrap(outs[d], self.out_sigs[d], self.out_sids[d]))
            elif d[0] == "input":
                res.append(concretes[d[1]])
            else:
                res.append(d[1])
        return unflatten(self.out_tree, res)

    def _put_state(self, outs: list) -> None:
        """Put this call's results where the traced code left traced values in the Python
        state; a simple rebinding (``Rebind.follows``) moves its guard and captured input to
        the new array, so the next call reads it without tracing again."""
        made: dict[int, Any] = {}

        def value(t):
            if t[0] == "out":
                j = self.state_outputs[t[1]]
                v = made.get(j)
                if v is None:
                    v = made[j] = self.out_classes[j]._wrap(outs[j], self.out_sigs[j], self.out_sids[j])
                return v
            if t[0] == "tuple":
                items = [value(x) for x in t[2]]
                return t[1](*items) if hasattr(t[1], "_fields") else t[1](items)
            return t[1]

        for rb in self.state_writes:
            v = value(rb.template)
            rb.place.put(v)
            if rb.follows is not None:
                i, k = rb.follows
                self.guards.follow(i, v)
                self.captured[k] = v


SYNC_EVERY = 16


class _Stale(Exception):
    """Raised by a fast runner whose guards failed: the call takes the general path."""


def _checked(check: Callable[[], bool], run: Callable) -> Callable:
    """``run`` behind its guards' check (for the fast tables)."""

    def checked(bufs: list, concretes) -> Any:
        if check():
            return run(bufs, concretes)
        raise _Stale

    return checked


def _length(entry: "_Entry | None") -> int:
    n = 0
    while entry is not None:
        entry, n = entry.next, n + 1
    return n


def _trim(entry: "_Entry | None", keep: int) -> "_Entry | None":
    """The chain of entries from ``entry`` cut after ``keep`` entries."""
    head = entry
    for _ in range(keep - 1):
        if entry is None:
            return head
        entry = entry.next
    if entry is not None:
        entry.next = None
    return head if keep > 0 else None


def _host_put(mesh, concretes: list, device=None) -> Callable[[np.ndarray], Any]:
    """Places a captured NumPy array where the program runs (a copy: the host array may change
    while the program still reads it)."""
    if mesh is not None:
        sharding = runtime.jax_sharding(Replicated(mesh))
        return lambda a: jx.device_put_sharded(a, sharding, copy=True)
    device = _common_device(concretes, device)
    return lambda a: jx.device_put(a, device, copy=True)


def _block_all(out) -> None:
    for leaf in flatten(out, is_leaf=_is_concrete)[0]:
        if isinstance(leaf, ConcreteRArray):
            jx.block_until_ready(leaf._buf)


def _execute_of(exe) -> Callable:
    """The executable's run function. In a multi-process run, a program with collectives
    waits for its results under ``reactant.distributed``'s watchdog: a peer's death is then a
    ``DistributedError``, not a hang in the collective."""
    from . import distributed

    if distributed._watchdog is not None and _has_collectives(exe):
        return distributed.guarded_execute(exe.execute_sharded)
    return exe.execute_sharded


def _has_collectives(exe) -> bool:
    text = jx.optimized_hlo_text(exe)
    return any(k in text for k in ("all-reduce", "all-gather", "collective-permute", "all-to-all",
                                   "reduce-scatter"))


def _program_mesh(prog: TracedProgram, leaves, args_mesh):
    """The mesh the program runs on: its arguments' and the one its constraints and shard_maps
    name must agree; recorded on the trace (``extensions["mesh"]``)."""
    traced = prog.tc.extensions.get("mesh")
    if traced is not None and args_mesh is not None and traced != args_mesh:
        raise ShardingError(f"the function places values on {traced!r} but its arguments are on {args_mesh!r}",
                            hint="use one mesh for the arguments and inside the function")
    if traced is not None and args_mesh is None and any(isinstance(x, ConcreteRArray) for x in leaves):
        raise ShardingError(f"the function runs on {traced!r} (reactant.sharding.constrain or shard_map) but its "
                            "arguments are on a single device",
                            hint="place them with reactant.to_rarray(x, sharding=reactant.sharding.Replicated(mesh))")
    mesh = args_mesh or traced
    prog.tc.extensions["mesh"] = mesh
    return mesh


def _decide_inputs(options: Options, prog: TracedProgram, leaves) -> tuple:
    """(mesh, per-input sharding or None, free inputs): the inputs placed by hand keep their
    shardings; arrays placed with ``to_rarray(x, mesh=...)`` (and, when ``compile`` names a
    mesh, single-device arrays) are free: replicated with ``shard="manual"``, else left open
    for ``_choose_shardings``."""
    args = [x for x in leaves if isinstance(x, ConcreteRArray)]
    inputs = args + list(prog.captured)
    for x in prog.captured:  # (only arguments can be moved before each call)
        if isinstance(x, ConcreteRArray) and isinstance(x._sig.placement, _auto.AutoPlaced):
            raise ShardingError(f"the function reads an array ({x.dtype}{list(x.shape)}) placed with "
                                "to_rarray(x, mesh=...) without receiving it as an argument",
                                hint="pass it as an argument of the compiled function, or place it with sharding=")
    free = [k for k, x in enumerate(args) if isinstance(x._sig.placement, _auto.AutoPlaced)
            or (options.mesh is not None and not isinstance(x._sig.placement, NamedSharding))]
    if not free and options.mesh is None:
        mesh, shardings = _spmd_inputs(leaves, prog.captured)
        mesh = _program_mesh(prog, leaves, mesh)
        if mesh is None and options.shard is not None and options.shard != "manual":
            raise ShardingError("shard='auto' needs a mesh: no argument is placed on one",
                                hint="pass reactant.compile(..., mesh=mesh), or place an argument with "
                                     "reactant.to_rarray(x, mesh=mesh)")
        return mesh, shardings, []
    meshes = {x._sig.placement.mesh for x in inputs
              if isinstance(x, ConcreteRArray) and isinstance(x._sig.placement, NamedSharding)}
    if options.mesh is not None:
        meshes.add(options.mesh)
    if len(meshes) > 1:
        raise ShardingError(f"arguments are placed on {len(meshes)} different meshes: "
                            + ", ".join(map(repr, meshes)), hint="place every argument on one mesh")
    mesh = _program_mesh(prog, leaves, meshes.pop())
    shardings: list = []
    for k, x in enumerate(inputs):
        if k in free:
            shardings.append(Replicated(mesh) if options.shard == "manual" else None)
        elif not isinstance(x, ConcreteRArray):
            shardings.append(Replicated(mesh))  # a NumPy array the function reads
        elif isinstance(x._sig.placement, NamedSharding):
            shardings.append(x._sig.placement)
        else:
            raise ShardingError("an argument on a single device is passed with arguments placed on a mesh",
                                hint="place it with reactant.to_rarray(x, mesh=mesh), or pass "
                                     "reactant.compile(..., mesh=mesh)")
    prog.tc.extensions["free_inputs"] = free
    return mesh, shardings, free


def _choose_shardings(state: "_Compiled", prog: TracedProgram, mesh, shardings: list, free: list,
                      progress: CompileProgress | None) -> None:
    """Shardings for the free inputs by the cost model (``sharding/auto.py``), put on ``@main``
    (the inputs updated in place: on their results too)."""
    opts = state.options
    model = opts.shard if isinstance(opts.shard, _auto.CostModel) else _auto.CostModel()
    measure = None
    if opts.shard is not None:  # asked for: the best candidates are compiled by XLA and compared
        devices = list(mesh.devices.flat)

        def measure(copy: ir.Module):
            with prog.tc.ctx:
                strip_contract_attrs(copy)
                lower_decompositions(copy)
                annotate_main(copy, mesh, [None] * len(prog.input_specs), propagated_result_shardings(copy, mesh))
            exe = runtime.compile_module(_bytecode(copy), devices, num_partitions=mesh.size)
            return jx.optimized_hlo_text(exe), jx.cost_analysis(exe), jx.memory_per_device(exe)

    if progress is not None:
        progress.enter("automatic sharding")
    with prog.tc.ctx:
        asked = _output_shardings(prog, opts.out_shardings) if opts.out_shardings is not None else None
        choice = _auto.choose(prog.module, mesh, shardings, free, model=model, aliases=dict(prog.aliases),
                              results=asked, measure=measure)
        placed = [NamedSharding(mesh, s) if s is not None else None for s in choice.specs]
        outs = [None] * len(prog.output_specs)
        for i, j in prog.aliases:
            if i < len(placed) and placed[i] is not None:
                outs[j] = placed[i]
        annotate_main(prog.module, mesh, placed, outs if any(o is not None for o in outs) else None)
    prog.tc.extensions["auto_choice"] = choice
    state.auto_choice = choice  # (the last choice of this function: benchmarks read it)
    if progress is not None:
        progress.done("automatic sharding", f"{choice.evaluated} assignments, {choice.verified} compiled")
    if opts.verbose or log_enabled("sharding"):
        name = getattr(state.fn, "__qualname__", repr(state.fn))
        print(f"reactant: {name}: automatic sharding over {mesh!r}: {choice.describe(_input_names(state, prog))}; "
              f"predicted {choice.cost} ({choice.evaluated} assignments costed, {choice.verified} compiled by XLA, "
              f"{choice.seconds:.2f} s)", file=sys.stderr, flush=True)


def _input_names(state: "_Compiled", prog: TracedProgram) -> list[str]:
    """Names of ``@main``'s inputs for messages (parameter names where they are known)."""
    import inspect

    try:
        params = list(inspect.signature(state.fn).parameters)
    except (TypeError, ValueError):
        params = []
    n = len(prog.input_specs)
    return [params[i] if i < len(params) and len(params) == n - len(prog.captured) else f"input {i}"
            for i in range(n)]


def _place_free_inputs(entry: "_Entry", prog: TracedProgram, bc: bytes, mesh, n_args: int) -> None:
    """Calls of ``entry`` first move each free argument to the sharding the program takes
    (an array placed with ``mesh=`` stays there: later calls move nothing)."""
    with prog.tc.ctx:
        wanted = _auto.main_arg_shardings(ir.Module.parse(bc), mesh)
    targets = [(k, runtime.jax_sharding(wanted[k] or Replicated(mesh)))
               for k in prog.tc.extensions["free_inputs"] if k < n_args]

    accepted: dict = {k: [js] for k, js in targets}  # sharding objects found equivalent (checked once)
    last = [js for _, js in targets]  # per target, the sharding object the last call had

    def placing(run: Callable) -> Callable:
        def placed(bufs: list, concretes) -> Any:
            # (the usual call: each array already where the program takes it, as last time;
            # a few identity checks, no copy of the list: this runs at every call)
            if all(bufs[k].sharding is s for (k, _), s in zip(targets, last)):
                return run(bufs, concretes)
            bufs = list(bufs)
            for j, (k, js) in enumerate(targets):
                b = bufs[k]
                have = b.sharding
                ok = accepted[k]
                if have is ok[0] or any(have is o for o in ok):
                    last[j] = have
                    continue
                if have == js or have.is_equivalent_to(js, len(b.shape)):
                    ok.append(have)
                    del ok[1:-4]  # (a few kept: strong references to small objects)
                    last[j] = have
                else:
                    b = bufs[k] = jx.device_put_sharded(b, js)
                    last[j] = b.sharding
                    c = concretes[k]
                    if type(c) in _ARRAYS and isinstance(c._sig.placement, _auto.AutoPlaced):
                        c._buf = b
            return run(bufs, concretes)

        return placed

    entry.run = placing(entry.run)
    entry.fast_run = placing(entry.fast_run)
    entry.fast_checked = placing(entry.fast_checked)


def _spmd_inputs(leaves, captured: list) -> tuple:
    """(mesh, per-input sharding) when the device arrays among ``leaves`` and ``captured``
    are placed on a mesh (NumPy arrays among ``captured`` are replicated); (None, None) when
    they live on single devices. Arrays of two meshes, or a single-device array next to
    mesh-placed ones, are a ShardingError."""
    inputs = [x for x in leaves if isinstance(x, ConcreteRArray)] + list(captured)
    placements = [x._sig.placement for x in inputs if isinstance(x, ConcreteRArray)]
    sharded = [p for p in placements if isinstance(p, NamedSharding)]
    if not sharded:
        return None, None
    meshes = {p.mesh for p in sharded}
    if len(meshes) > 1:
        raise ShardingError(f"arguments are placed on {len(meshes)} different meshes: "
                            + ", ".join(map(repr, meshes)), hint="place every argument on one mesh")
    if len(sharded) != len(placements):
        raise ShardingError("an argument on a single device is passed with arguments placed on a mesh",
                            hint="place it with reactant.to_rarray(x, sharding=reactant.sharding.Replicated(mesh))")
    mesh = sharded[0].mesh
    return mesh, [x._sig.placement if isinstance(x, ConcreteRArray) else Replicated(mesh) for x in inputs]


def _output_shardings(prog: TracedProgram, spec) -> list:
    """Per output of the program, the sharding asked for with ``out_shardings`` (or None). An
    array updated in place keeps its argument's sharding unless ``out_shardings`` says
    otherwise: the call writes the new buffer back under the argument's signature."""
    n = len(prog.output_specs)
    out: list = [None] * n
    mesh = prog.tc.extensions.get("mesh")
    if mesh is not None and (prog.aliases or prog.capture_aliases):
        from .sharding.shardy import argument_shardings

        placed = argument_shardings(prog.module, mesh)
        first_captured = len(prog.input_specs) - len(prog.captured)
        for i, j in list(prog.aliases) + [(first_captured + k, j) for k, j in prog.capture_aliases]:
            if i < len(placed):
                out[j] = placed[i]
    if spec is None:
        return out
    result = unflatten(prog.out_tree, list(range(len(prog.out_leaves))))
    try:
        per_leaf = prefix_leaves(spec, result, lambda s: s is None or isinstance(s, NamedSharding)
                                 or hasattr(s, "spec"))
    except ValueError as e:
        raise ShardingError(f"out_shardings must be a sharding or a pytree prefix of the result: {e}") from None
    for d, s in zip(prog.out_leaves, per_leaf):
        if type(d) is int and s is not None:
            out[d] = as_sharding(s)
            out[d].check_shape(prog.output_specs[d][0])
    return out


def _undonate_duplicates(bufs: list, aliases) -> list:
    """A buffer passed twice cannot be donated: give the donated position its own copy."""
    donated = {i for i, _ in aliases}
    seen: dict[int, int] = {}
    out = list(bufs)
    for i, b in enumerate(bufs):
        if id(b) in seen and (i in donated or seen[id(b)] in donated):
            out[i] = jx.copy_buffer(b)
        seen.setdefault(id(b), i)
    return out


# -- helpers ----------------------------------------------------------------------------------
def _put(table: dict, key, value, bound: int) -> None:
    """Insert into a table of at most ``bound`` entries, dropping the oldest (dicts keep
    insertion order). The caller holds the table's lock; readers need none."""
    if key not in table:
        while table and len(table) >= bound:
            del table[next(iter(table))]
    table[key] = value


def _all_arrays(args: tuple) -> bool:
    for x in args:
        if type(x) not in _ARRAYS:
            return False
    return True


def _host_inputs(leaves: list, device=None) -> tuple[list, list]:
    """NumPy arrays among the arguments become inputs, as in ``jax.jit``: each is moved to
    where the other arguments live (replicated over their mesh), the program is compiled per
    shape and dtype, not per value. Returns the leaves with device arrays in their place and
    the (NumPy array, its device array, that array's buffer) triples; the same NumPy array
    passed twice is one device array, so the program sees the aliasing NumPy would."""
    hosts: list = []
    for i, leaf in enumerate(leaves):
        if type(leaf) is not np.ndarray or leaf.dtype == object:
            continue
        if not hosts:
            place = _placement_of(leaves, device)
            moved: dict[int, ConcreteRArray] = {}
        c = moved.get(id(leaf))
        if c is None:
            c = moved[id(leaf)] = to_rarray(leaf, **place)
            hosts.append((leaf, c, c._buf))
        leaves[i] = c
    return leaves, hosts


def _placement_of(leaves: list, device=None) -> dict:
    """Where NumPy arguments go: the mesh (replicated), compile's ``device`` or the device
    of the device arrays."""
    if device is not None:
        return {"device": device}
    for x in leaves:
        if isinstance(x, ConcreteRArray):
            p = x._sig.placement
            if isinstance(p, NamedSharding):
                return {"sharding": Replicated(p.mesh)}
            return {"device": x.device}
    return {}


def _check_overlaps(hosts: list, written: set) -> None:
    """Two different NumPy arrays over the same memory (``a`` and ``a[1:]``) are two inputs: a
    write through one would not reach the other, so a program writing one of them is refused
    (reading both is fine)."""
    for k, (a, ca, _) in enumerate(hosts):
        for b, cb, _ in hosts[k + 1:]:
            if (id(ca) in written or id(cb) in written) and np.may_share_memory(a, b):
                raise ArgumentError(
                    f"two NumPy array arguments share memory (shapes {a.shape} and {b.shape}, {a.dtype}): "
                    "a compiled function receives each as its own input",
                    hint="pass the base array once and take the view inside the function, or pass .copy()")


def _run_writing_hosts(entry: "_Entry", bufs: list, concretes: list, hosts: list) -> Any:
    """Run, then copy what the program wrote into NumPy-array arguments back into them (the
    device array kept the argument's dtype: NumPy's casting is the identity). A read-only
    argument the program writes is refused before anything runs."""
    written = {id(concretes[i]) for i, _ in entry.writeback}
    if written and len(hosts) > 1:
        _check_overlaps(hosts, written)
    for arr, c, _ in hosts:
        if id(c) in written and not arr.flags.writeable:
            raise ReadOnlyError(f"a NumPy array argument ({arr.shape}, {arr.dtype}) that the function updates "
                                "in place is read-only", hint="pass a writeable array (.copy())")
    result = entry.run(bufs, concretes)
    for arr, c, buf in hosts:
        if c._buf is not buf:
            np.copyto(arr, c.to_numpy())
    return result


SCALAR_RECOMPILES = 4  # compiles for new values of a Python scalar argument before the warning


def _leaf_name(fn: Callable, tree: TreeDef, leaves: list, index: int) -> str:
    """The argument holding leaf ``index`` of ``(args, kwargs)``, by its parameter name."""
    import inspect

    args, kwargs = unflatten(tree, list(leaves))
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = []
    start = 0
    for k, a in enumerate(list(args) + list(kwargs.values())):
        n = len(flatten(a, is_leaf=_is_concrete)[0])
        if index < start + n:
            label = (params[k] if k < len(params) else f"#{k}") if k < len(args) else list(kwargs)[k - len(args)]
            return f"argument {label!r}" + ("" if n == 1 else f" (leaf {index - start})")
        start += n
    return f"argument leaf {index}"


def _describe(part) -> str:
    """A call signature's part for one leaf, in words."""
    if isinstance(part, Signature):
        where = part.placement if isinstance(part.placement, NamedSharding) else f"device {part.placement}"
        return (f"array {np.dtype(part.dtype).name}{list(part.shape)} on {where}" + (" (weak)" if part.weak else "")
                + (" (known >= 0)" if part.nonneg else ""))
    if isinstance(part, tuple) and part and isinstance(part[0], type):
        t = part[0]
        if t is np.ndarray:
            return f"NumPy array {part[2]}{list(part[1])}"
        return f"{t.__name__} {part[1]!r}" if len(part) == 2 else t.__name__
    return repr(part)


def _module_name(fn: Callable) -> str:
    """``reactant_<qualified name>`` with what XLA's names cannot hold replaced by ``_``."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "fn"
    return "reactant_" + "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def _distinct(arrays) -> bool:
    """No array object among ``arrays`` twice (calls passing one twice are keyed apart)."""
    return len(set(map(id, arrays))) == len(arrays)


def _is_concrete(x) -> bool:
    return isinstance(x, ConcreteRArray)


def _track(v, device=None) -> ConcreteRNumber:
    """A Python number as a runtime input (a weak 0-d device array)."""
    buf = jx.device_put(np.asarray(v), device or runtime.default_device())
    return ConcreteRNumber._wrap(buf, _signature(buf, True))


def _static_key(v) -> Any:
    """A hashable, type-exact key of a static (non-array) argument value."""
    t = type(v)
    if t is bool or t is int or t is str or t is bytes or v is None or v is Ellipsis:
        return (t, v)
    if t is float:
        if math.isnan(v) or v == 0.0:
            return (t, repr(v))  # NaN != NaN; 0.0 == -0.0 but they differ as constants
        return (t, v)
    if t is complex:
        return (t, repr(v))
    if t is slice:
        return (t, _static_key(v.start), _static_key(v.stop), _static_key(v.step))
    if t is np.ndarray:
        if v.dtype == object:
            return (t, tuple(_static_key(x) for x in v.reshape(-1)), v.shape)
        return (t, v.shape, v.dtype.str, hashlib.blake2b(np.ascontiguousarray(v).tobytes(), digest_size=16).digest())
    if isinstance(v, np.generic):
        return (t, v.tobytes())
    if isinstance(v, (np.dtype, type, types.FunctionType, types.BuiltinFunctionType, np.ufunc,
                      functools.partial, types.MethodType)):
        return (t, v)
    try:
        hash(v)
    except TypeError:
        raise ArgumentError(
            f"argument of type {t.__name__} cannot be passed to a compiled function: it is neither "
            "a device array nor a hashable constant",
            hint="move arrays with reactant.to_rarray, or make the object a pytree "
            "(tuple/list/dict/dataclass/namedtuple, or reactant.register_pytree_node)",
        ) from None
    return (t, v)


def _common_device(concretes, device=None):
    """The one device of the device arrays (``device``, compile's option, if given: they
    must be there); the default device when there are none."""
    concretes = [c for c in concretes if isinstance(c, ConcreteRArray)]  # (not host arrays)
    if device is not None:
        for c in concretes:
            if c._sig.placement != device.id or c.device.client is not device.client:
                raise ArgumentError(f"an argument ({c.dtype}{list(c.shape)}) lives on {c.device}, but the "
                                    f"function is compiled for {device}",
                                    hint="move it with reactant.to_rarray(x, device=...)")
        return device
    if not concretes:
        return runtime.default_device()
    devs = {c._sig.placement for c in concretes}
    if len(devs) > 1:
        raise ArgumentError(
            f"arguments live on different devices ({sorted(map(str, devs))})",
            hint="move them to one device with reactant.to_rarray(x, device=...)",
        )
    return concretes[0].device


def _set_aliasing(prog: TracedProgram) -> None:
    """``tf.aliasing_output`` on the main function's updated arguments (buffer donation)."""
    fn = prog.tc.functions["main"]
    with prog.tc.ctx:
        n = len(prog.input_specs)
        i32 = ir.IntegerType.get_signless(32)
        attrs = [dict() for _ in range(n)]
        for i, j in prog.aliases:
            attrs[i]["tf.aliasing_output"] = ir.IntegerAttr.get(i32, j)
        fn.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in attrs])


def _autodiff_ops(module: ir.Module) -> list[str]:
    found = []

    def visit(op):
        # (the user-defined-derivative markers need the AD pass too: it lowers them)
        if op.name.startswith("enzyme.") or _is_ad_marker(op.operation):
            found.append(op.name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _has_autodiff(module: ir.Module) -> bool:
    return bool(_autodiff_ops(module))


def _check_no_autodiff_left(module: ir.Module) -> None:
    left = _autodiff_ops(module)
    if left:
        raise RuntimeError(f"internal error: {left[0]} left after the AD pass")


def _bytecode(module: ir.Module) -> bytes:
    import io

    buf = io.BytesIO()
    module.operation.write_bytecode(buf)
    return buf.getvalue()


def compile(fn: Callable | None = None, *, optimize: str | list = "O2", track_numbers: bool = False,
            donate: bool = True, loops: str = "auto", control_flow: bool = True,
            ad_checkpoint: str | int | None = None, ad_max_trip_count: int | None = None,
            out_shardings: Any = None, verbose: bool = False, device: Any = None, fast_math: bool = False,
            shard: Any = None, mesh: Any = None):
    """Compile ``fn`` with XLA on first call for each call signature.

    Use bare (``@reactant.compile``) or with options (``@reactant.compile(optimize="O1")``).
    Arguments may be any pytree of ConcreteRArrays and static values; see ``Options``.
    Python ``if``/``while``/``for ... in range(...)`` on traced values become structured
    StableHLO control flow. A ``for ... in range`` over plain ints is unrolled or kept as one
    ``stablehlo.while``: ``loops="auto"`` decides per loop (kept when the body traces with a
    traced index and the unrolled program would be large; see ``reactant.tracing.loop_rolling``),
    ``"keep"`` keeps every one, ``"unroll"`` unrolls every one (``reactant.keep(n)`` /
    ``reactant.unroll(n)`` force one loop); in ``"auto"`` mode ``for x in a`` over a traced
    array is decided as ``for i in range(len(a))`` with ``x = a[i]``.
    ``ad_checkpoint`` ("sqrt" or a period) trades memory for recomputation in reverse mode
    through loops; ``ad_max_trip_count`` bounds loops whose trip count is only known at run time.
    Arguments placed on a mesh (``reactant.to_rarray(x, sharding=...)``) make one SPMD program;
    ``out_shardings`` (a sharding or a pytree prefix of the result) fixes its results'
    shardings, otherwise they are the ones Shardy's propagation gives. Arrays placed with
    ``to_rarray(x, mesh=mesh)`` (no spec) get shardings chosen by a cost model
    (``reactant.sharding.auto``); ``shard="auto"`` with ``mesh=`` also chooses them for NumPy
    and single-device arguments, ``shard="manual"`` replicates those instead, and a
    ``reactant.sharding.CostModel`` is ``"auto"`` on that machine (per-axis bandwidths, ...).
    Hand placements and ``reactant.sharding.constrain`` stay binding. ``verbose`` (or the
    environment variable ``REACTANT_LOG=1``) prints each compilation stage's time and op count;
    a compilation over 5 s says which stage it is in either way. ``device`` (a device, a
    platform name such as ``"gpu"``, or ``"gpu:1"``) runs the program there: NumPy and
    Python-number arguments go there, device-array arguments must already live there
    (default: where the arguments live, else the default platform's first device).
    ``fast_math=True`` lets the optimizer also reassociate and distribute float arithmetic
    (matrix chains, scalar factors across products, sums) and drop NaN/Inf/signed-zero cases:
    faster, not bit-identical to NumPy on special values (see ``reactant.optimize.exactness``).
    """
    if loops not in ("auto", "unroll", "keep"):
        raise ValueError(f"loops must be 'auto', 'unroll' or 'keep', got {loops!r}")
    shard = _auto.check_mode(shard)  # (a bad value: the error now, naming it)
    if mesh is not None:
        mesh = as_mesh(mesh)
    if isinstance(shard, _auto.CostModel) and mesh is not None:
        shard.check_mesh(mesh)
    opts = Options(tuple(optimize) if isinstance(optimize, list) else optimize, track_numbers, donate, loops,
                   control_flow, ad_checkpoint, ad_max_trip_count, out_shardings, verbose,
                   runtime.resolve_device(device), fast_math=fast_math, shard=shard, mesh=mesh)
    opts.pass_options()  # validates the AD options now, naming a bad one
    if fn is None:
        return lambda f: CompiledFunction(f, opts)
    return CompiledFunction(fn, opts)


def code_hlo(f: Callable, *args, optimize: bool | str | list = True, **kwargs) -> str:
    """The StableHLO that ``f(*args, **kwargs)`` runs (after the pass pipeline unless
    ``optimize=False``; a level or pass list picks another pipeline)."""
    cf = f if isinstance(f, CompiledFunction) else CompiledFunction(f, Options())
    return cf.lower(*args, optimize=optimize, **kwargs).text()


def code_xla(f: Callable, *args, **kwargs) -> str:
    """XLA's optimized HLO for ``f(*args, **kwargs)`` (per device for an SPMD program)."""
    return jx.optimized_hlo_text(_entry_for(f, args, kwargs).exe)


def cost_analysis(f: Callable, *args, **kwargs) -> dict[str, float]:
    """XLA's cost estimate of the executable for ``f(*args, **kwargs)``: ``flops``,
    ``transcendentals``, ``bytes accessed`` (per device for an SPMD program)."""
    return jx.cost_analysis(_entry_for(f, args, kwargs).exe)


def _entry_for(f: Callable, args: tuple, kwargs: dict) -> "_Entry":
    cf = f if isinstance(f, CompiledFunction) else CompiledFunction(f, Options())
    leaves, tree = flatten((args, kwargs), is_leaf=_is_concrete)
    return cf._state._compile(_host_inputs(leaves, cf.options.device)[0], tree)
