"""``reactant.export``: a compiled program as a self-contained, versioned object that runs
without its Python source, in this process, in another one, or called from JAX.

    exp = reactant.export(f, x, 3)     # traced and optimized as reactant.compile(f)(x, 3) would be
    data = exp.serialize()             # bytes (format version, producer versions, VHLO artifact)
    exp = reactant.deserialize(data)   # elsewhere: no source, no tracing, no optimizer
    y = exp(x, 3)                      # compiled by XLA on the first call per placement, then cached

The program is the one the compiled function would run (``_Compiled._lower`` and
``_finalize``: the same pipeline, decompositions and shardings), stored as a StableHLO
portable artifact (VHLO), readable by this StableHLO version and newer ones. With it go the
argument and result pytree structures, every leaf's shape and dtype, the mesh (axis names and
sizes) and each input's and output's partition spec, which arguments the function updates in
place (and whether their buffers are donated), the static values baked in, and the values of
the arrays the function reads from Python state (globals, closures, attributes: a snapshot
taken at export, as ``jax.export`` bakes closed-over arrays in).
The byte layout and the JSON forms of the description are ``reactant/export_format.py``.

Calling an ``Exported`` takes the arguments of the exporting call, in the same structure:

- a static leaf (a Python value that became a constant) must be passed again with the same
  value (checked: ``ArgumentError`` otherwise);
- an array leaf is a ``ConcreteRArray`` or a NumPy array (moved like a compiled function's)
  of exactly the stored shape and dtype; with ``track_numbers=True`` a Python number stays a
  number of its type. It is placed where the program runs: the arguments' device, or for an
  SPMD program a mesh of the stored shape (the arguments' own when it matches, otherwise the
  platform's first devices: a ``ShardingError`` when there are too few), resharded as the
  stored partition spec says;
- an argument the function updated in place is updated in place, as a compiled call does:
  the call returns the results and writes each new value into the argument object it was
  given (a ConcreteRArray keeps its placement; a NumPy array is written back into).

The export is traced as if no integer argument were known to be non-negative (a compiled
function may specialize on that; an exported program sees other values). Exporting refuses
(``UnsupportedError``) what another process cannot replay: a function that updates arrays of
the Python state or binds state to traced values. Result classes of namedtuples and
dataclasses are the original classes when their module is already imported in the reading
process (deserializing never imports anything), otherwise look-alikes of the same name and
fields; a result of a type registered with ``register_pytree_node`` needs its module imported.
"""

from __future__ import annotations

import builtins
import inspect
import io
import json
import sys
import threading
from typing import Any, Callable

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from . import _jax_adapter as jx
from . import runtime
from .arrays import ConcreteRArray, ConcreteRNumber, _signature
from .compiler import (
    _PY_NUMBERS,
    CompiledFunction,
    Options,
    _check_no_autodiff_left,
    _block_all,
    _Entry,
    _has_collectives,
    _host_inputs,
    _is_concrete,
    _run_writing_hosts,
    _spmd_inputs,
    _track,
)
from .ir.context import function_type, main_func, make_context
from .ir.manual import has_sub_axes, mesh_axes, sharding_axes
from .ir.types import spec_of
from .sharding import Mesh, NamedSharding, ShardingError
from .tracing import active as _trace_active
from .tracing import errors as _errors
from .tracing.errors import ArgumentError, PlatformError, UnsupportedError
from .tracing.pytree import TreeDef, flatten, unflatten
from .tracing.trace import TracedProgram
from .export_format import (  # noqa: F401  (ArraySpec, Static, Argument, ExportError: public here too)
    FORMAT_VERSION,
    Argument,
    ArraySpec,
    ExportError,
    Static,
    custom_node,
    dec_array,
    dec_static,
    dec_tree,
    enc_array,
    enc_static,
    enc_static_or_none,
    enc_tree,
    leaf_paths,
    pack,
    show,
    show_tree,
    unpack,
)

# consumers up to ~4 weeks older than this jaxlib read the artifact (what jax.export uses)
STABLEHLO_TARGET = hlo.get_version_from_compatibility_requirement(hlo.StablehloCompatibilityRequirement.WEEK_4)

def export(f: Callable, *args, **kwargs) -> "Exported":
    """The program ``f(*args, **kwargs)`` runs, as an ``Exported`` (see the module docstring).

    ``f`` is a Python function (compiled with the default options) or a ``reactant.compile``d
    function (its options apply); ``args`` are example arguments as for a call: device arrays
    (placed on a mesh for an SPMD program), NumPy arrays and static values."""
    if _trace_active() is not None:
        raise UnsupportedError("reactant.export is called inside a function being traced",
                               hint="export outside compiled code")
    cf = f if isinstance(f, CompiledFunction) else CompiledFunction(f, Options())
    state, opts = cf._state, cf._state.options
    device = getattr(opts, "device", None)
    # the arguments exactly as a compiled call prepares them (CompiledFunction.lower)
    leaves, tree = flatten((args, kwargs), is_leaf=_is_concrete)
    leaves, _ = _host_inputs(leaves, device)
    numbers = {i: type(x) for i, x in enumerate(leaves) if opts.track_numbers and type(x) in _PY_NUMBERS}
    leaves = [_track(x, device) if i in numbers else x for i, x in enumerate(leaves)]
    leaves = _signs_unknown(leaves)
    in_tree = enc_tree(tree, "the arguments")
    paths = leaf_paths(in_tree, _param_names(cf.fn))

    prog = state._lower(leaves, tree, opts.optimize)
    _check_no_autodiff_left(prog.module)
    if prog.capture_aliases or prog.state_writes:
        raise UnsupportedError(
            f"{_name(cf.fn)} updates arrays or values of the Python state (attributes, globals, closures): "
            "an exported program has no Python state to write to",
            hint="pass that state as arguments and return its new values (or update the arguments in place)")
    concretes = [x for x in leaves if isinstance(x, ConcreteRArray)]
    mesh = prog.tc.extensions.get("mesh")
    shardings = _spmd_inputs(leaves, prog.captured)[1] if mesh is not None else None
    if mesh is not None and shardings is None and (concretes or prog.captured):
        raise UnsupportedError("an SPMD program whose arguments are not placed on its mesh cannot be exported",
                               hint="place the arguments with reactant.to_rarray(x, sharding=...)")
    _, outs, _ = state._finalize(prog.module, prog, concretes)
    with prog.tc.ctx:
        artifact = jx.portable_artifact(prog.module, STABLEHLO_TARGET)

    in_leaves, k = [], 0
    for i, x in enumerate(leaves):
        if isinstance(x, ConcreteRArray):
            in_leaves.append({"array": enc_array(x.shape, x.dtype, shardings[k] if shardings else None),
                              "number": numbers[i].__name__ if i in numbers else None})
            k += 1
        else:
            in_leaves.append({"static": enc_static(x, paths[i])})
    out_tree = enc_tree(prog.out_tree, "the result")
    out_leaves = []
    for d in prog.out_leaves:
        if type(d) is int:
            out_leaves.append({"output": d})
        elif d[0] == "input":
            out_leaves.append({"argument": d[1]})
        else:
            out_leaves.append({"static": enc_static(d[1], "a result")})
    n = len(concretes)
    captured = [c.to_numpy() if isinstance(c, ConcreteRArray) else np.ascontiguousarray(c) for c in prog.captured]
    header = {
        "producer": _versions(),
        "stablehlo": STABLEHLO_TARGET,
        "fun_name": _name(cf.fn),
        "arg_names": _param_names(cf.fn),
        "platform": (next(iter(mesh.devices.flat)) if mesh is not None else outs[0] if outs
                     else _default_device(concretes)).platform,
        "mesh": None if mesh is None else {"axes": list(mesh.axis_names), "sizes": list(mesh.devices.shape)},
        "in_tree": in_tree,
        "in_leaves": in_leaves,
        "same": [[id(c) for c in concretes].index(id(c)) for c in concretes],
        "out_tree": out_tree,
        "out_leaves": out_leaves,
        "outputs": [enc_array(s, d, p if mesh is not None else None) for (s, d), p in zip(prog.output_specs, outs)],
        "aliases": [list(a) for a in prog.aliases],
        "donated": bool(opts.donate and prog.aliases and prog.assert_output is None),
        "captured": [enc_array(a.shape, a.dtype, shardings[n + m] if shardings else None)
                     for m, a in enumerate(captured)],
        "asserts": None if prog.assert_output is None else {
            "output": prog.assert_output,
            "checks": [[None if msg is None else str(msg), str(where), _exc_name(exc)]
                       for msg, where, exc in prog.asserts]},
    }
    header = json.loads(json.dumps(header))  # exactly what deserialize will read
    return Exported._build(header, artifact, captured)


class Exported:
    """A program exported by ``reactant.export``: call it like the function, ``serialize()``
    it, or hand it to JAX with ``to_jax()``. Attributes describe it: ``in_leaves`` /
    ``out_leaves`` (per leaf of the arguments ``(args, kwargs)`` and of the result:
    ``ArraySpec``, ``Static`` or, for a result, ``Argument``), ``in_tree`` / ``out_tree``,
    ``in_paths`` (each argument leaf's name), ``outputs`` (every result of the program,
    new values of updated arguments included), ``in_place`` ((argument leaf, output) pairs of
    in-place updates), ``donated``, ``mesh_shape``, ``platform``, ``versions``."""

    def __init__(self, *args, **kwargs):
        raise TypeError("an Exported is made by reactant.export(f, *args) or reactant.deserialize(data)")

    @classmethod
    def _build(cls, header: dict, artifact: bytes, captured: list) -> "Exported":
        self = object.__new__(cls)
        self._header, self._artifact, self._captured = header, artifact, captured
        try:
            self._decode(header)
        except ExportError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            raise ExportError(f"the export's description is malformed ({type(e).__name__}: {e})") from None
        self._bytecode = _read_module(artifact, header["stablehlo"], self)
        self._entries: dict = {}  # per device or mesh: (compiled entry, whether it has collectives)
        self._lock = threading.Lock()
        self._trees_ok: set = set()  # argument structures seen to match (skips re-encoding)
        return self

    def _decode(self, h: dict) -> None:
        self.fun_name: str = str(h["fun_name"])
        self.platform: str = str(h["platform"])
        self.versions: dict = {"format": FORMAT_VERSION, **{str(k): str(v) for k, v in h["producer"].items()},
                               "stablehlo_target": str(h["stablehlo"])}
        mesh = h["mesh"]
        self.mesh_shape: dict[str, int] | None = (
            None if mesh is None else dict(zip(map(str, mesh["axes"]), map(int, mesh["sizes"]))))
        self._in_tree_enc = h["in_tree"]
        self.in_tree: TreeDef = dec_tree(h["in_tree"], strict=False)
        self._out_tree_enc = h["out_tree"]
        self.out_tree: TreeDef = dec_tree(h["out_tree"], strict=False)
        self.in_paths: tuple[str, ...] = tuple(leaf_paths(h["in_tree"], h["arg_names"]))
        leaves, self._inputs = [], []  # _inputs: the leaf position of each program input
        for pos, d in enumerate(h["in_leaves"]):
            if "static" in d:
                leaves.append(Static(dec_static(d["static"])))
                continue
            number = d["number"]
            if number is not None and number not in ("bool", "int", "float", "complex"):
                raise ValueError(f"number type {number!r}")
            leaves.append(dec_array(d["array"], getattr(builtins, number) if number else None))
            self._inputs.append(pos)
        self.in_leaves: tuple = tuple(leaves)
        if len(leaves) != self.in_tree.n:
            raise ValueError("argument leaves do not match the argument structure")
        self._statics = [(pos, d["static"]) for pos, d in enumerate(h["in_leaves"]) if "static" in d]
        self._same = [_index(s, k + 1) for k, s in enumerate(h["same"])]
        if len(self._same) != len(self._inputs):
            raise ValueError("the aliasing of the arguments does not match them")
        self.outputs: tuple[ArraySpec, ...] = tuple(dec_array(o) for o in h["outputs"])
        outs = []
        for d in h["out_leaves"]:
            if "output" in d:
                outs.append(self.outputs[_index(d["output"], len(self.outputs))])
            elif "argument" in d:
                outs.append(Argument(self._inputs[_index(d["argument"], len(self._inputs))]))
            else:
                outs.append(Static(dec_static(d["static"])))
        self.out_leaves: tuple = tuple(outs)
        if len(outs) != self.out_tree.n:
            raise ValueError("result leaves do not match the result structure")
        self._aliases = [(_index(i, len(self._inputs)), _index(j, len(self.outputs))) for i, j in h["aliases"]]
        self.in_place: tuple[tuple[int, int], ...] = tuple((self._inputs[i], j) for i, j in self._aliases)
        self.donated: bool = bool(h["donated"])
        self._captured_specs = [dec_array(c) for c in h["captured"]]
        if len(self._captured_specs) != len(self._captured):
            raise ValueError("captured arrays do not match their descriptions")
        for s, a in zip(self._captured_specs, self._captured):
            if (s.shape, s.dtype) != (a.shape, a.dtype):
                raise ValueError("a captured array does not match its description")
        asserts = h["asserts"]
        self._assert_output = None if asserts is None else _index(asserts["output"], len(self.outputs))
        self._asserts = [] if asserts is None else [(msg, where, _exc_class(exc)) for msg, where, exc in
                                                    asserts["checks"]]

    # -- description ------------------------------------------------------------------------
    @property
    def statics(self) -> dict[str, Any]:
        """The static argument values baked in, by argument leaf name."""
        return {self.in_paths[i]: s.value for i, s in enumerate(self.in_leaves) if isinstance(s, Static)}

    def stablehlo(self) -> str:
        """The program's StableHLO text (what XLA compiles)."""
        with make_context() as ctx:
            return str(ir.Module.parse(self._bytecode, ctx))

    def __repr__(self) -> str:
        ins = ", ".join(f"{p}={s.value!r}" if isinstance(s, Static) else f"{p}: {s}"
                        for p, s in zip(self.in_paths, self.in_leaves))
        outs = ", ".join(str(s) if isinstance(s, ArraySpec) else
                         f"argument {self.in_paths[s.index]}" if isinstance(s, Argument) else repr(s.value)
                         for s in self.out_leaves)
        where = self.platform if self.mesh_shape is None else \
            f"{self.platform} mesh " + ", ".join(f"{a}={n}" for a, n in self.mesh_shape.items())
        upd = f"; updates {', '.join(self.in_paths[i] for i, _ in self.in_place)} in place" if self.in_place else ""
        return f"<reactant.Exported {self.fun_name}({ins}) -> ({outs}) on {where}{upd}>"

    def __reduce__(self):  # pickles as its serialized form
        return deserialize, (self.serialize(),)

    # -- serialization ----------------------------------------------------------------------
    def serialize(self) -> bytes:
        """The versioned bytes ``reactant.deserialize`` reads: a magic line, the format
        version, a JSON description, the VHLO artifact and captured arrays, a SHA-256."""
        return pack(self._header, [self._artifact] + [np.ascontiguousarray(a).tobytes() for a in self._captured])

    # -- calling ----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs) -> Any:
        """Run the program on these arguments (see the module docstring)."""
        if _trace_active() is not None:
            raise UnsupportedError("an Exported program cannot be called inside a function being traced",
                                   hint="call it outside compiled code")
        leaves, tree = flatten((args, kwargs), is_leaf=_is_concrete)
        if tree not in self._trees_ok:
            self._check_tree(tree)
        for pos, enc in self._statics:
            if enc_static_or_none(leaves[pos]) != enc:
                raise ArgumentError(f"argument {self.in_paths[pos]} is {show(leaves[pos])}, but the program was "
                                    f"exported with the static value {show(self.in_leaves[pos].value)}",
                                    hint="static values are constants of an exported program: export again "
                                         "for another value (or use track_numbers=True for numbers)")
        leaves, hosts = _host_inputs(leaves)
        concretes = [self._input(pos, leaves[pos]) for pos in self._inputs]
        self._check_same(concretes)
        (entry, collectives), places = self._entry(concretes)
        bufs, moved = [], []
        for k, (c, place) in enumerate(zip(concretes, places)):
            buf = c._buf
            if c._sig.placement != (place if isinstance(place, NamedSharding) else place.id):
                here = c._sig.placement if isinstance(c._sig.placement, NamedSharding) else \
                    next(iter(c._buf.devices()))
                moved.append((k, here))
                buf = _moved(c, place)._buf
            bufs.append(buf)
        if hosts:
            result = _run_writing_hosts(entry, bufs, concretes, hosts)
            if collectives:
                _block_all(result)
        else:
            result = entry.fast_run(bufs, concretes)
        written = {i for i, _ in self._aliases}
        for k, where in moved:  # an argument updated in place keeps its placement
            if k in written:
                c = concretes[k]
                back = _moved(c, where)
                c._buf, c._sig, c._sid = back._buf, back._sig, back._sid
        return result

    def _check_tree(self, tree: TreeDef) -> None:
        try:
            enc = enc_tree(tree, "the arguments")
        except UnsupportedError:
            enc = None
        if enc != self._in_tree_enc:
            raise ArgumentError(f"the arguments have the structure {show_tree(enc, tree)}, but {self.fun_name} "
                                f"was exported for {show_tree(self._in_tree_enc, self.in_tree)}",
                                hint="pass arguments of the exporting call's structure (static values included)")
        with self._lock:
            self._trees_ok.add(tree)

    def _input(self, pos: int, x) -> ConcreteRArray:
        """The device array for input leaf ``pos`` (shape and dtype checked)."""
        spec = self.in_leaves[pos]
        if spec.number is not None and type(x) is spec.number:
            x = _track(x)
        if not isinstance(x, ConcreteRArray):
            want = (f"a Python {spec.number.__name__} (made a runtime input by track_numbers=True) or a "
                    f"{spec.dtype} device scalar") if spec.number else f"a device array of {spec}"
            raise ArgumentError(f"argument {self.in_paths[pos]} must be {want}, got {show(x)}",
                                hint="move arrays with reactant.to_rarray")
        if x.shape != spec.shape or x.dtype != spec.dtype:
            raise ArgumentError(f"argument {self.in_paths[pos]} has shape {x.shape} and dtype {x.dtype}, but the "
                                f"program was exported for shape {spec.shape} and dtype {spec.dtype}",
                                hint="export again for these shapes and dtypes")
        return x

    def _check_same(self, concretes: list) -> None:
        """The same array passed twice was one handle in the trace: the calls must agree."""
        ids = [id(c) for c in concretes]
        same = [ids.index(i) for i in ids]
        if same == self._same:
            return
        traced_once = [k for k, s in enumerate(self._same) if s != k]
        if traced_once or self._aliases:
            names = [self.in_paths[self._inputs[k]] for k in range(len(same)) if same[k] != self._same[k]]
            raise ArgumentError(
                f"arguments {', '.join(names)} {'were one array' if traced_once else 'were distinct arrays'} "
                f"when {self.fun_name} was exported{'' if traced_once else ' (and it updates arguments in place)'}",
                hint="pass arrays aliased as in the exporting call")

    def _entry(self, concretes: list) -> tuple:
        """The compiled program for where these arguments say it runs, and the placement
        of each input there."""
        if self.mesh_shape is not None:
            mesh = self._mesh(concretes)
            key = ("mesh", tuple(mesh.device_ids), mesh.axis_names)
            places = [NamedSharding(mesh, self.in_leaves[p].spec) for p in self._inputs]
        else:
            device = self._device(concretes)
            key = ("device", device.id, device.client.platform)
            places = [device] * len(concretes)
        found = self._entries.get(key)
        if found is None:
            entry = self._compile(mesh if self.mesh_shape is not None else device)
            # (queued collective programs deadlock XLA's CPU rendezvous: calls with NumPy
            # arguments wait for theirs; fast_run syncs every few calls itself)
            with self._lock:
                found = self._entries.setdefault(key, (entry, _has_collectives(entry.exe)))
        return found, places

    def _compile(self, where) -> _Entry:
        """XLA's executable for ``where`` (a Mesh or a device), wrapped like a compiled
        function's (results, in-place write-back, run-time checks, captured inputs)."""
        if isinstance(where, Mesh):
            devices = list(where.devices.flat)
            exe = runtime.compile_module(self._bytecode, devices, num_partitions=where.size)
            outs = [NamedSharding(where, o.spec) for o in self.outputs]
            captured = [_placed(a, runtime.jax_sharding(NamedSharding(where, s.spec)))
                        for a, s in zip(self._captured, self._captured_specs)]
        else:
            exe = runtime.compile_module(self._bytecode, [where])
            outs = [where] * len(self.outputs)
            captured = [_placed(a, where) for a in self._captured]
        out_tree = dec_tree(self._out_tree_enc, strict=True)
        out_leaves = []
        for d in self._header["out_leaves"]:
            if "output" in d:
                out_leaves.append(int(d["output"]))
            elif "argument" in d:
                out_leaves.append(("input", int(d["argument"])))
            else:
                out_leaves.append(("static", dec_static(d["static"], strict=True)))
        prog = TracedProgram(tc=None, module=None, input_specs=[self.in_leaves[p] for p in self._inputs],
                             output_specs=[(o.shape, o.dtype) for o in self.outputs], out_tree=out_tree,
                             out_leaves=out_leaves, aliases=list(self._aliases), captured=captured,
                             out_views=[None] * len(self.outputs), assert_output=self._assert_output,
                             asserts=list(self._asserts))
        return _Entry(exe, prog, outs, self.donated)

    def _mesh(self, concretes: list) -> Mesh:
        """The arguments' mesh when it has the stored shape, else one over this process's devices."""
        names, sizes = tuple(self.mesh_shape), tuple(self.mesh_shape.values())
        for c in concretes:
            p = c._sig.placement
            if isinstance(p, NamedSharding) and p.mesh.axis_names == names and p.mesh.devices.shape == sizes:
                return p.mesh
        devices = self._platform_devices()
        n = int(np.prod(sizes))
        if len(devices) < n:
            raise ShardingError(f"{self.fun_name} was exported for a mesh of {n} devices "
                                f"({', '.join(f'{a}={s}' for a, s in self.mesh_shape.items())}); this process has "
                                f"{len(devices)} {self.platform} device(s)",
                                hint="run it where that many devices exist (XLA_FLAGS="
                                     "--xla_force_host_platform_device_count=N for CPU devices)")
        return Mesh(np.array(devices[:n], dtype=object).reshape(sizes), names)

    def _device(self, concretes: list):
        """The device the single-device arguments share (the platform's first device when none)."""
        devs = {}
        for c in concretes:
            if not isinstance(c._sig.placement, NamedSharding):
                devs.setdefault(c._sig.placement, c.device)
        if len(devs) > 1:
            raise ArgumentError(f"arguments live on different devices ({sorted(map(str, devs.values()))})",
                                hint="move them to one device with reactant.to_rarray(x, device=...)")
        if devs:
            dev = next(iter(devs.values()))
            if dev.platform == self.platform:
                return dev
        return self._platform_devices()[0]

    def _platform_devices(self) -> list:
        try:
            return runtime.devices(self.platform)
        except PlatformError as e:
            raise PlatformError(f"{self.fun_name} was exported for {self.platform} devices: {e}") from None

    # -- JAX --------------------------------------------------------------------------------
    def to_jax(self):
        """A ``jax.export.Exported`` running this program, for JAX code:
        ``exp.to_jax().call(x, ...)``, eagerly or under ``jax.jit``, on JAX or NumPy arrays.

        It carries a single-device program whose arguments are arrays only (no static leaves),
        in containers JAX flattens in the same order (tuples, lists, None, dicts whose keys are
        in sorted order), whose results are the program's outputs in order (no argument or
        constant returned as is), with no in-place update of an argument (JAX arrays are
        immutable), no run-time check (``assert``), no array read from the Python state and no
        mesh. Anything else raises ``UnsupportedError`` naming what. 64-bit dtypes need
        ``jax_enable_x64``. JAX cannot differentiate it (no VJP is attached)."""
        why = self._jax_obstacle()
        if why is not None:
            raise UnsupportedError(f"to_jax: {self.fun_name} {why}", hint="export a function without it")
        n, m = len(self._inputs), len(self.outputs)
        args = unflatten(self.in_tree, list(range(n)))
        out = unflatten(dec_tree(self._out_tree_enc, strict=True), list(range(m)))
        if jx.tree_leaves(args) != list(range(n)) or jx.tree_leaves(out) != list(range(m)):
            raise UnsupportedError(f"to_jax: JAX flattens the arguments or result of {self.fun_name} in another "
                                   "order (dict keys are sorted in JAX)", hint="use dicts with sorted keys")
        return jx.jax_exported(self.fun_name, args, [(s.shape, s.dtype) for s in self.in_leaves],
                               out, [(o.shape, o.dtype) for o in self.outputs], self._artifact, self.platform)

    def _jax_obstacle(self) -> str | None:
        if self.mesh_shape is not None:
            return "is an SPMD program over a mesh (to_jax carries single-device programs)"
        if self._statics:
            return f"has static arguments ({', '.join(self.in_paths[p] for p, _ in self._statics)})"
        if any(s.number is not None for s in self.in_leaves):
            return "takes Python numbers (track_numbers=True): JAX passes arrays"
        if self._aliases:
            return "updates arguments in place"
        if self._asserts:
            return "checks asserts when it runs"
        if self._captured:
            return "reads arrays from the Python state"
        if [d.get("output") for d in self._header["out_leaves"]] != list(range(len(self.outputs))):
            return "returns arguments, constants or one output twice"
        for kinds, enc in (("arguments", self._in_tree_enc), ("result", self._out_tree_enc)):
            k = custom_node(enc)
            if k is not None:
                return f"has a {k} in its {kinds} (to_jax carries tuples, lists, dicts and None)"
        wide = {np.dtype(t) for t in ("float64", "int64", "uint64", "complex128")}
        if not jx.x64_enabled() and any(s.dtype in wide for s in self.in_leaves + self.outputs):
            return "has 64-bit arrays and JAX's 64-bit mode is off (jax.config.update('jax_enable_x64', True))"
        return None


def deserialize(data: bytes) -> Exported:
    """The ``Exported`` whose ``serialize()`` gave ``data``. Bytes that are not an export,
    corrupted ones, or ones of a format or StableHLO version this installation cannot read
    raise ``ExportError`` saying which."""
    header, blobs = unpack(data, _versions()["reactant"])
    try:
        specs = [dec_array(c) for c in header["captured"]]
        captured = [np.frombuffer(b, dtype=s.dtype).reshape(s.shape).copy() for b, s in zip(blobs[1:], specs)]
    except (ValueError, KeyError, TypeError) as e:
        raise ExportError(f"the export's captured arrays are malformed ({e})") from None
    return Exported._build(header, blobs[0], captured)


# -- the program --------------------------------------------------------------------------------
def _read_module(artifact: bytes, target: str, exp: Exported) -> bytes:
    """The artifact as MLIR bytecode for XLA, checked against the description."""
    current = hlo.get_current_version()
    if _version_tuple(target) > _version_tuple(current):
        raise ExportError(f"this export holds StableHLO {target}, newer than this jaxlib's {current}",
                          hint="upgrade jax/jaxlib")
    with make_context() as ctx:
        try:
            module = hlo.deserialize_portable_artifact(ctx, artifact)
            module.operation.verify()
        except (ValueError, ir.MLIRError) as e:
            raise ExportError(f"the export's StableHLO artifact cannot be read ({e})") from None
        try:
            ft = function_type(main_func(module))
        except (ValueError, KeyError) as e:
            raise ExportError(f"the export's program has no entry function ({e})") from None
        ins = [spec_of(t) for t in ft.inputs]
        want = [(exp.in_leaves[p].shape, exp.in_leaves[p].dtype) for p in exp._inputs] + \
            [(s.shape, s.dtype) for s in exp._captured_specs]
        if ins != want or [spec_of(t) for t in ft.results] != [(o.shape, o.dtype) for o in exp.outputs]:
            raise ExportError("the export's program does not match its description (arguments or results differ)")
        _check_placements(module, exp)
        buf = io.BytesIO()
        module.operation.write_bytecode(buf)
        return buf.getvalue()


def _check_placements(module: ir.Module, exp: Exported) -> None:
    """The mesh, the shardings and the donations the description gives are the program's (a
    mismatch would feed XLA buffers it does not expect)."""
    fn = main_func(module)
    mesh = mesh_axes(module.operation)
    if mesh != (exp.mesh_shape or {}) or list(mesh) != list(exp.mesh_shape or {}):
        raise ExportError(f"the export's program runs on a mesh {mesh or 'of one device'}, its description says "
                          f"{exp.mesh_shape or 'one device'}")
    args = _attr_dicts(fn, "arg_attrs", len(exp._inputs) + len(exp._captured_specs))
    results = _attr_dicts(fn, "res_attrs", len(exp.outputs))
    specs = [exp.in_leaves[p].spec for p in exp._inputs] + [s.spec for s in exp._captured_specs]
    for what, attrs, want in (("argument", args, specs), ("result", results, [o.spec for o in exp.outputs])):
        for k, (d, spec) in enumerate(zip(attrs, want)):
            text = str(d["sdy.sharding"]) if "sdy.sharding" in d else None
            got = None if text is None or has_sub_axes(text) else _trimmed(sharding_axes(text))
            if (got is None) != (spec is None) or (got is not None and got != _trimmed(spec)):
                raise ExportError(f"{what} {k} of the export's program is sharded as {text}, its description says "
                                  f"{spec!r}")
    donated = sorted((k, ir.IntegerAttr(d["tf.aliasing_output"]).value) for k, d in enumerate(args)
                     if "tf.aliasing_output" in d)
    if donated != (sorted(exp._aliases) if exp.donated else []):
        raise ExportError("the export's program donates other arguments than its description says")


def _attr_dicts(fn, key: str, n: int) -> list:
    if key not in fn.attributes:
        return [{}] * n
    return [ir.DictAttr(d) for d in ir.ArrayAttr(fn.attributes[key])]


def _trimmed(spec) -> tuple:
    """A spec's entries as tuples of axes, without trailing unsplit dimensions."""
    out = [() if e is None else (e,) if isinstance(e, str) else tuple(e) for e in spec]
    while out and not out[-1]:
        out.pop()
    return tuple(out)


def _index(v, n: int) -> int:
    """``v`` as an index below ``n`` (ValueError otherwise: a malformed description)."""
    if type(v) is not int or not 0 <= v < n:
        raise ValueError(f"index {v!r} out of range({n})")
    return v


def _placed(value: np.ndarray, where):
    """A captured array's stored value as a device array placed at ``where`` (a device or a jax sharding)."""
    buf = jx.device_put_sharded(value, where)
    return ConcreteRArray._wrap(buf, _signature(buf, False))


def _signs_unknown(leaves: list) -> list:
    """The device arrays as handles that claim nothing about their values' signs (the same
    object twice stays one handle)."""
    out, made = [], {}
    for x in leaves:
        if isinstance(x, ConcreteRArray) and x._sig.nonneg:
            h = made.get(id(x))
            if h is None:
                cls = ConcreteRNumber if isinstance(x, ConcreteRNumber) else ConcreteRArray
                h = made[id(x)] = cls._wrap(x._buf, x._sig._replace(nonneg=False))
            x = h
        out.append(x)
    return out


def _default_device(concretes: list):
    return concretes[0].device if concretes else runtime.default_device()


def _versions() -> dict:
    import jax
    import jaxlib

    mod = sys.modules.get("reactant")
    return {"reactant": str(getattr(mod, "__version__", "unknown")), "jax": jax.__version__,
            "jaxlib": jaxlib.__version__}


def _version_tuple(v: str) -> tuple:
    return tuple(int(p) for p in str(v).split("."))


def _name(fn) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn))


def _param_names(fn) -> list[str]:
    """Names of the positional parameters (argument leaves are named after them)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _exc_name(exc: type) -> str:
    """How a run-time check's exception class is stored: a builtin or a reactant error."""
    name = getattr(exc, "__name__", "")
    if getattr(builtins, name, None) is exc:
        return name
    if getattr(_errors, name, None) is exc:
        return "reactant." + name
    raise UnsupportedError(f"a run-time check raises {exc!r}, which an exported program cannot name")


def _exc_class(name: str) -> type:
    cls = getattr(_errors, name[len("reactant."):], None) if name.startswith("reactant.") else \
        getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise ValueError(f"unknown exception {name!r}")
    return cls




def _moved(c: ConcreteRArray, place) -> ConcreteRArray:
    """A copy of ``c`` placed by ``place`` (a NamedSharding or a device), as ``to_rarray``
    places it: a shape the mesh does not divide is stored padded (``NamedSharding.padded_shape``),
    which moving the device buffer alone would not do."""
    if isinstance(place, NamedSharding):
        return type(c)(c, sharding=place)
    return type(c)(c, device=place)
