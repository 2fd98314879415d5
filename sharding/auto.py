"""Automatic sharding: shardings for the arguments of ``@main`` that nobody placed, chosen by a
cost model of one program step on the mesh.

The search (``choose``) sees the traced, optimized module with the hand-placed arguments
already annotated. Each free argument gets candidate shardings (replicated; each dimension
split over each mesh axis, or over all of them; two dimensions over two axes). A candidate
assignment is costed on a copy of the module: Shardy propagates from it (hand placements and
``constrain`` ops stay binding), inserts explicit reshards and turns them into collectives,
and ``estimate`` adds up per device

- compute: flops of each op on its local block (a dot's contraction split by its operand's
  sharding), over the accelerator's flop rate;
- memory traffic: the bytes each op writes and a dot/reduce reads, over the HBM bandwidth;
- communication: each collective's bytes (ring model, as in ``benchmarks/bench_sharding``:
  all-reduce 2(g-1)/g S, all-gather and all-to-all (g-1)/g S, reduce-scatter (g-1)/g of its
  operand, permute S) over the bandwidth of the slowest mesh axis it runs on, plus a latency
  per step (log2 g, or one for a permute). Shardy leaves a halo (a concatenate or pad on a
  split dimension: ``np.roll`` and slices) to XLA; the estimate prices it as the permute XLA
  makes of the piece that crosses the boundary;
- collectives and ops inside a ``stablehlo.while`` count once per iteration (static trip
  counts; one otherwise).

The step time is max(compute, memory traffic) + communication; a per-device footprint over
the model's memory is refused. The search is greedy, largest argument first (undecided ones
left open, so propagation completes each assignment), then one round of coordinate descent
with all fixed. When the caller gives ``measure`` (XLA compiles a candidate and returns its
per-device HLO and cost analysis), the best few assignments are costed again from XLA's
partitioned program, and the one XLA makes cheapest wins: the estimate ranks, the
partitioner decides.
"""

from __future__ import annotations

import io
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.passmanager import PassManager

from ..ir.context import function_type, main_func
from ..ir.loops import analyze as analyze_loop
from .errors import ShardingError
from .mesh import Mesh, NamedSharding, as_mesh
from .shardy import annotate_main, ensure_mesh

MODES = ("auto", "manual")


class AutoPlaced(NamedSharding):
    """Where ``reactant.to_rarray(x, mesh=mesh)`` puts an array: on ``mesh``, its layout left
    to the compiler. It starts replicated; a compiled function taking it chooses its
    sharding (``choose``) and moves it there on the first call. Not equal to any hand-written
    sharding: a hand placement stays binding, this one does not."""

    __slots__ = ()

    def __init__(self, mesh: Any):
        super().__init__(mesh, ())

    def __eq__(self, other) -> bool:
        return type(other) is AutoPlaced and self.mesh == other.mesh

    def __hash__(self) -> int:
        return hash(("auto", self.mesh))

    def __repr__(self) -> str:
        return f"AutoPlaced({self.mesh!r})"


def check_mode(shard: Any) -> str | CostModel | None:
    """``reactant.compile``'s ``shard=``: None (the default: arrays placed with ``mesh=`` only
    are chosen automatically), ``"auto"``, ``"manual"`` (arrays without a spec are replicated)
    or a ``CostModel`` (``"auto"`` with that machine)."""
    if shard is None or isinstance(shard, CostModel) or (isinstance(shard, str) and shard in MODES):
        return shard
    raise ShardingError(f"shard= must be 'auto', 'manual', a reactant.sharding.CostModel or None, got {shard!r}",
                        hint="shard='auto' lets the compiler choose the shardings of arrays placed without a spec")


def main_arg_shardings(module: ir.Module, mesh: Mesh) -> list[NamedSharding | None]:
    """The shardings on ``@main``'s arguments (None where there is none; replicated where a
    named spec cannot say it)."""
    fn = main_func(module)
    n = len(function_type(fn).inputs)
    attrs = list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else []
    out: list[NamedSharding | None] = [None] * n
    for i, a in enumerate(attrs[:n]):
        d = ir.DictAttr(a)
        if "sdy.sharding" in d:
            spec = _spec_of(str(d["sdy.sharding"]), mesh.shape)
            out[i] = NamedSharding(mesh, spec if spec is not None else ())
    return out

_EXPLICIT = ("builtin.module(sdy-propagation-pipeline,"
             "func.func(sdy-insert-explicit-reshards{enable-full-version=true}),"
             "func.func(sdy-reshard-to-collectives))")


@dataclass(frozen=True)
class CostModel:
    """The machine the automatic sharding optimizes for (per device). Defaults: an H100-SXM-like
    accelerator (the numbers of ``benchmarks/bench_sharding.py``): ``flops`` fp32 flop/s,
    ``hbm`` memory bytes/s, ``link`` bytes/s one device sends over a mesh axis (NVLink),
    ``axis_bandwidth`` per-axis overrides (e.g. ``{"data": 50e9}`` for an axis across nodes),
    ``latency`` seconds per collective step, ``memory`` bytes a device holds.
    ``verify``: how many of the best assignments XLA compiles and costs again (0: trust the
    estimate); ``beam``: partial assignments kept per argument; ``max_evaluations`` bounds
    the search."""

    flops: float = 67e12
    hbm: float = 3.35e12
    link: float = 450e9
    axis_bandwidth: Mapping[str, float] | None = None
    latency: float = 5e-6
    memory: float = 80e9
    verify: int = 3
    beam: int = 4
    max_evaluations: int = 300

    def __post_init__(self):
        for name in ("flops", "hbm", "link", "memory"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not v > 0:
                raise ShardingError(f"CostModel.{name} must be a positive number, got {v!r}")
        if not isinstance(self.latency, (int, float)) or self.latency < 0:
            raise ShardingError(f"CostModel.latency must be a number >= 0, got {self.latency!r}")
        for name in ("verify", "beam", "max_evaluations"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ShardingError(f"CostModel.{name} must be an integer >= 0, got {v!r}")
        for k, v in dict(self.axis_bandwidth or {}).items():
            if not isinstance(k, str) or not isinstance(v, (int, float)) or not v > 0:
                raise ShardingError(f"CostModel.axis_bandwidth maps mesh axis names to positive bytes/s, "
                                    f"got {k!r}: {v!r}")

    @classmethod
    def simulated_cpu(cls, devices: int, cores: int = 2, **kw) -> "CostModel":
        """Rough constants for ``devices`` simulated CPU devices sharing ``cores`` cores (the
        test machine): the cores' flop rate and memory bandwidth split over the devices, and
        collectives that are memory copies behind a rendezvous of all device threads (about
        0.1 ms per step on 2 cores: ``bench_sharding``'s single-collective steps)."""
        share = max(cores, 1) / max(devices, 1)
        return cls(**{"flops": 2e10 * share, "hbm": 1e10 * share, "link": 5e9, "latency": 1e-4, **kw})

    def bandwidth(self, axes: Sequence[str]) -> float:
        """Bytes/s of a collective over ``axes``: its slowest axis."""
        per = dict(self.axis_bandwidth or {})
        return min([per.get(a, self.link) for a in axes] or [self.link])

    def check_mesh(self, mesh: Mesh) -> None:
        """Every axis named in ``axis_bandwidth`` is the mesh's (a typo is not ignored)."""
        for a in dict(self.axis_bandwidth or {}):
            if a not in mesh.axis_names:
                raise ShardingError(f"CostModel.axis_bandwidth names axis {a!r}, not in {mesh!r}")


@dataclass
class Cost:
    """One step of a program on one device, by a ``CostModel``."""

    flops: float = 0.0
    hbm_bytes: float = 0.0  # memory traffic
    comm_bytes: float = 0.0  # bytes this device sends
    comm_seconds: float = 0.0  # bandwidth and latency of the collectives
    collectives: dict = field(default_factory=dict)  # kind -> count (per step, loops unrolled)
    memory: float = 0.0  # footprint: arguments, results and the largest temporary
    model: CostModel = field(default_factory=CostModel)
    source: str = "estimate"  # or "xla": from the partitioned program

    @property
    def compute_seconds(self) -> float:
        return max(self.flops / self.model.flops, self.hbm_bytes / self.model.hbm)

    @property
    def step(self) -> float:
        """Seconds per step; infinite when the footprint exceeds the device's memory."""
        if self.memory > self.model.memory:
            return math.inf
        return self.compute_seconds + self.comm_seconds

    def key(self) -> tuple:
        # fewer bytes, then the smaller footprint, break ties of step time (at the ns scale)
        return (round(self.step, 9), self.comm_bytes, self.memory)

    def __str__(self) -> str:
        ops = " ".join(f"{v}{_SHORT.get(k, k)}" for k, v in sorted(self.collectives.items())) or "none"
        return (f"{self.step * 1e6:.2f} us/step (compute {self.compute_seconds * 1e6:.2f} us, "
                f"collectives {self.comm_seconds * 1e6:.2f} us: {ops}, {self.comm_bytes / 1024:.1f} KiB sent; "
                f"{self.memory / 2**20:.2f} MiB per device; {self.source})")


_SHORT = {"all-reduce": "AR", "all-gather": "AG", "reduce-scatter": "RS", "collective-permute": "CP",
          "all-to-all": "A2A"}


@dataclass
class Choice:
    """The search's answer: per input of ``@main`` its spec (None: placed by the caller)."""

    specs: list
    cost: Cost
    evaluated: int
    seconds: float
    verified: int = 0
    ranking: list = field(default_factory=list)  # (specs, Cost) of the assignments costed last

    def describe(self, names: Sequence[str] | None = None) -> str:
        parts = []
        for i, s in enumerate(self.specs):
            if s is None:
                continue
            name = names[i] if names is not None and i < len(names) else f"arg{i}"
            parts.append(f"{name}: P{tuple(s)!r}")
        return ", ".join(parts) or "(nothing to choose)"


# -- candidates ------------------------------------------------------------------------------------
def candidate_specs(shape: Sequence[int], mesh: Mesh) -> list[tuple]:
    """Shardings worth trying for an array of ``shape``: replicated; each dimension over each
    axis (or over all axes, major first); two dimensions over two axes. Only even splits."""
    sizes = mesh.shape
    axes = [a for a, s in sizes.items() if s > 1]
    rank = len(shape)
    out: list[tuple] = [()]

    def spec(assign: dict) -> tuple:
        s = [assign.get(d) for d in range(rank)]
        while s and s[-1] is None:
            s.pop()
        return tuple(s)

    def fits(d: int, group: Sequence[str]) -> bool:
        k = int(np.prod([sizes[a] for a in group]))
        return shape[d] >= k and shape[d] % k == 0

    for d in range(rank):
        for a in axes:
            if fits(d, [a]):
                out.append(spec({d: a}))
        if len(axes) > 1 and fits(d, axes):
            out.append(spec({d: tuple(axes)}))
    if len(axes) > 1:
        for d1 in range(rank):
            for d2 in range(rank):
                if d1 == d2:
                    continue
                for i, a1 in enumerate(axes):
                    for a2 in axes[i + 1:]:
                        if fits(d1, [a1]) and fits(d2, [a2]):
                            out.append(spec({d1: a1, d2: a2}))
    seen, uniq = set(), []
    for s in out:
        if s not in seen:
            seen.add(s)
            uniq.append(s)
    return uniq


# -- reading shardings from the module ---------------------------------------------------------------
_ONE = re.compile(r"<@[\w.$-]+, \[([^\]]*)\]")
_DIMS = re.compile(r"\{([^}]*)\}")
_AXIS = re.compile(r'"([^"]+)"(?::\((\d+)\)(\d+))?')


def _parse_one(text: str, sizes: Mapping[str, int]) -> list[tuple[tuple, int]]:
    """Per dimension of a ``<@mesh, [{"x"}, {}]>``: (axes, split factor)."""
    dims = []
    for d in _DIMS.findall(text):
        axes, k = [], 1
        for name, _pre, sub in _AXIS.findall(d):
            axes.append(name)
            k *= int(sub) if sub else sizes.get(name, 1)
        dims.append((tuple(axes), k))
    return dims


def _per_value(attr_text: str, sizes: Mapping[str, int]) -> list[list[tuple[tuple, int]]]:
    return [_parse_one(m.group(0), sizes) for m in _ONE.finditer(attr_text)]


def _type_info(t: ir.Type) -> tuple[tuple[int, ...], int] | None:
    """(shape, element bytes) of a ranked tensor type; None otherwise."""
    try:
        rt = ir.RankedTensorType(t)
    except (ValueError, TypeError):
        return None
    et = rt.element_type
    width = getattr(et, "width", None)
    if width is None:
        try:
            width = ir.ComplexType(et).element_type.width * 2
        except (ValueError, TypeError, AttributeError):
            width = 32
    return tuple(rt.shape), max(1, int(width) // 8)


class _Shardings:
    """The sharding (per dimension: axes, factor) of every value of a propagated module."""

    def __init__(self, fn, sizes: Mapping[str, int]):
        self.sizes = sizes
        self.table: dict = {}
        args = list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else []
        block = fn.regions[0].blocks[0]
        for i, v in enumerate(block.arguments):
            if i < len(args):
                d = ir.DictAttr(args[i])
                if "sdy.sharding" in d:
                    self.table[v] = _parse_one(str(d["sdy.sharding"]), sizes)

    def note(self, op) -> None:
        if "sdy.sharding" in op.attributes:
            for r, s in zip(op.results, _per_value(str(op.attributes["sdy.sharding"]), self.sizes)):
                self.table[r] = s
        elif "out_sharding" in op.attributes and len(op.results) == 1:
            self.table[op.results[0]] = _parse_one(str(op.attributes["out_sharding"]), self.sizes)
        if op.name == "stablehlo.while":  # the carried values inside take the loop's shardings
            for region in op.regions:
                for block in region.blocks:
                    for a, r in zip(block.arguments, op.results):
                        if r in self.table:
                            self.table[a] = self.table[r]

    def dims(self, v, rank: int) -> list[tuple[tuple, int]]:
        s = self.table.get(v)
        if s is None or len(s) != rank:
            return [((), 1)] * rank
        return s

    def factor(self, v, rank: int) -> int:
        return int(np.prod([k for _, k in self.dims(v, rank)] or [1]))


_COLLECTIVE = {"sdy.all_reduce": "all-reduce", "sdy.all_gather": "all-gather", "sdy.reduce_scatter": "reduce-scatter",
               "sdy.all_to_all": "all-to-all", "sdy.collective_permute": "collective-permute"}
_FREE = {"sdy.all_slice", "sdy.constant", "stablehlo.constant", "func.return", "stablehlo.return",
         "sdy.sharding_constraint", "sdy.return", "stablehlo.optimization_barrier"}


def estimate(module: ir.Module | ir.Operation, model: CostModel) -> Cost:
    """The cost of one step of an explicitly resharded module (see the module docstring)."""
    op = module.operation
    sizes = _mesh_sizes(op)
    fn = main_func(module)
    sh = _Shardings(fn, sizes)
    cost = Cost(model=model)
    peak = [0.0]

    def local(v) -> tuple[float, tuple, int] | None:
        info = _type_info(v.type)
        if info is None:
            return None
        shape, eb = info
        n = float(np.prod(shape)) if shape else 1.0
        return n / sh.factor(v, len(shape)), shape, eb

    def collective(kind: str, o, mult: float) -> None:
        r = local(o.results[0])
        if r is None:
            return
        elems, shape, eb = r
        size = elems * eb
        axes = []
        attrs = o.attributes
        for k in range(len(attrs)):
            a = attrs[k]
            if a.name != "out_sharding":
                axes += [n for n, _, _ in _AXIS.findall(str(a.attr)) if n in sizes]
        if kind == "collective-permute":
            axes = [a for dims in sh.dims(o.results[0], len(shape)) for a in dims[0]]
        g = int(np.prod([sizes[a] for a in set(axes)] or [1]))
        if kind != "collective-permute" and g <= 1:
            return
        sent = {"all-reduce": 2 * (g - 1) / g * size, "all-gather": (g - 1) / g * size,
                "reduce-scatter": (g - 1) * size, "all-to-all": (g - 1) / g * size,
                "collective-permute": size}[kind]
        steps = 1 if kind == "collective-permute" else math.log2(max(g, 2))
        _add(cost, kind, sent, sent / model.bandwidth(sorted(set(axes))) + steps * model.latency, mult)

    def halo(o, mult: float) -> None:
        """A concatenate or pad along a split dimension: XLA exchanges the boundary pieces."""
        r = local(o.results[0])
        if r is None:
            return
        _, shape, eb = r
        dims = sh.dims(o.results[0], len(shape))
        if o.name == "stablehlo.concatenate":
            d = int(ir.IntegerAttr(o.attributes["dimension"]).value)
            if dims[d][1] <= 1:
                return
            block = shape[d] // dims[d][1]
            for x in o.operands:
                info = _type_info(x.type)
                if info is None or info[0][d] >= block:
                    continue
                piece = float(np.prod(info[0])) / int(np.prod([k for i, (_, k) in enumerate(dims) if i != d] or [1]))
                _add(cost, "collective-permute", piece * eb,
                     piece * eb / model.bandwidth(dims[d][0]) + model.latency, mult)
        else:  # pad
            lo = [int(x) for x in re.findall(r"-?\d+", str(o.attributes["edge_padding_low"]))]
            hi = [int(x) for x in re.findall(r"-?\d+", str(o.attributes["edge_padding_high"]))]
            for d, (axes, k) in enumerate(dims):
                if k > 1 and d < len(lo) and (lo[d] or hi[d]):
                    rows = abs(lo[d]) + abs(hi[d])
                    piece = rows * float(np.prod(shape)) / shape[d] / (
                        int(np.prod([kk for i, (_, kk) in enumerate(dims) if i != d] or [1])))
                    _add(cost, "collective-permute", piece * eb,
                         piece * eb / model.bandwidth(axes) + model.latency, mult)

    def visit(block: ir.Block, mult: float) -> None:
        for o in block.operations:
            name = o.operation.name
            sh.note(o)
            if name == "stablehlo.while":
                info = analyze_loop(o)
                trips = info.trip_count if info is not None and info.trip_count else 1
                for region in o.regions:
                    for b in region.blocks:
                        visit(b, mult * max(trips, 1))
                continue
            if name in _COLLECTIVE:
                collective(_COLLECTIVE[name], o, mult)
                continue
            if name in _FREE or name.startswith("sdy."):
                continue
            if name in ("stablehlo.concatenate", "stablehlo.pad"):
                halo(o, mult)
            outs = [local(r) for r in o.results]
            out_bytes = sum(e * eb for e, _, eb in (x for x in outs if x is not None))
            out_elems = sum(e for e, _, _ in (x for x in outs if x is not None))
            peak[0] = max(peak[0], out_bytes)
            flops, traffic = out_elems, out_bytes
            if name == "stablehlo.dot_general" and outs and outs[0] is not None:
                lhs = o.operands[0]
                info = _type_info(lhs.type)
                text = str(o.attributes["dot_dimension_numbers"])
                m = re.search(r"lhs_contracting_dimensions = \[([\d, ]*)\]", text)
                contract = [int(x) for x in m.group(1).split(",") if x.strip()] if m else []
                k = 1.0
                if info is not None:
                    ldims = sh.dims(lhs, len(info[0]))
                    for c in contract:
                        k *= info[0][c] / max(ldims[c][1], 1)
                flops = 2.0 * outs[0][0] * k
                traffic += sum((local(x) or (0, 0, 0))[0] * (local(x) or (0, 0, 0))[2] for x in o.operands)
            elif name in ("stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.convolution"):
                ins = [local(x) for x in o.operands]
                flops = sum(e for e, _, _ in (x for x in ins if x is not None))
                traffic += sum(e * eb for e, _, eb in (x for x in ins if x is not None))
            cost.flops += flops * mult
            cost.hbm_bytes += traffic * mult
            for region in o.regions:  # (reduce bodies etc.: scalar work, counted above)
                for b in region.blocks:
                    for inner in b.operations:
                        sh.note(inner)

    visit(fn.regions[0].blocks[0], 1.0)
    block = fn.regions[0].blocks[0]
    ft = function_type(fn)
    def nbytes(v) -> float:
        r = local(v)
        return r[0] * r[2] if r else 0.0

    foot = sum(nbytes(a) for a in block.arguments)
    cost.hbm_bytes += foot  # every argument block is read (a replicated one whole: see xla_cost)
    ret = list(block.operations)[-1]
    aliased = _aliased_outputs(fn)
    foot += sum(nbytes(v) for j, v in enumerate(ret.operands) if j not in aliased and j < len(ft.results))
    cost.memory = foot + peak[0]
    return cost


def _add(cost: Cost, kind: str, sent: float, seconds: float, mult: float) -> None:
    cost.collectives[kind] = cost.collectives.get(kind, 0) + int(round(mult))
    cost.comm_bytes += sent * mult
    cost.comm_seconds += seconds * mult


def _mesh_sizes(module_op) -> dict[str, int]:
    for o in module_op.regions[0].blocks[0].operations:
        if o.operation.name == "sdy.mesh":
            return {n: int(s) for n, s in re.findall(r'"([^"]+)"=(\d+)', str(o.attributes["mesh"]))}
    return {}


def _aliased_outputs(fn) -> dict[int, int]:
    """output -> argument of ``tf.aliasing_output`` (in-place updates)."""
    out = {}
    if "arg_attrs" not in fn.attributes:
        return out
    for i, a in enumerate(ir.ArrayAttr(fn.attributes["arg_attrs"])):
        d = ir.DictAttr(a)
        if "tf.aliasing_output" in d:
            out[int(ir.IntegerAttr(d["tf.aliasing_output"]).value)] = i
    return out


# -- XLA's partitioned program ---------------------------------------------------------------------
_BYTES = {"f32": 4, "f64": 8, "bf16": 2, "f16": 2, "s32": 4, "u32": 4, "s64": 8, "u64": 8, "pred": 1, "s8": 1,
          "u8": 1, "c64": 8, "c128": 16, "s16": 2, "u16": 2}
_HLO_COLL = re.compile(r"= (\(.*?\)|\S+) (all-reduce|all-gather|reduce-scatter|collective-permute|all-to-all)"
                       r"(?:-start)?\((.*)$")


def _hlo_size(shape_text: str) -> int:
    total = 0
    for dt, dims in re.findall(r"(\w+)\[([\d,]*)\]", shape_text):
        if dt in _BYTES:
            total += _BYTES[dt] * int(np.prod([int(d) for d in dims.split(",") if d] or [1]))
    return total


def _hlo_group(rest: str, n: int) -> int:
    m = re.search(r"replica_groups=\{\{([\d,]*)\}", rest)
    if m:
        return len(m.group(1).split(","))
    m = re.search(r"replica_groups=\[(\d+),(\d+)\]", rest)
    if m:
        return int(m.group(2))
    m = re.search(r"replica_groups=mesh\[([^\]]*)\] \{([^}]*)\}", rest)
    if m:
        sz = {k: int(v) for k, v in re.findall(r"'([^']+)'=(\d+)", m.group(1))}
        return int(np.prod([sz[a] for a in re.findall(r"'([^']+)'", m.group(2))] or [1]))
    return n


def hlo_collectives(hlo: str, n: int) -> list[tuple[str, float, int]]:
    """(kind, bytes one device sends, group size) of every collective in per-device HLO text
    (the ring model of the module docstring; a loop body's collectives once)."""
    out = []
    for line in hlo.splitlines():
        m = _HLO_COLL.search(line)
        if not m or "-done" in line:
            continue
        shape, kind, rest = m.groups()
        size = _hlo_size(shape)
        g = _hlo_group(rest, n)
        if kind == "all-reduce":
            sent = 2 * (g - 1) / g * size
        elif kind == "collective-permute":
            sent = size
        elif kind == "reduce-scatter":
            sent = (g - 1) * size
        else:
            sent = (g - 1) / g * size
        out.append((kind, sent, g))
    return out


def _hlo_trip_factor(hlo: str) -> dict[str, int]:
    """Computation name -> iterations of the while loops that run it (XLA's
    ``known_trip_count`` backend config; 1 when unknown)."""
    factor: dict[str, int] = {}
    for m in re.finditer(r" while\(.*?condition=%?([\w.-]+), body=%?([\w.-]+)(.*)", hlo):
        n = re.search(r'"known_trip_count":\{"n":"(\d+)"', m.group(3))
        factor[m.group(2)] = int(n.group(1)) if n else 1
    return factor


def xla_cost(hlo: str, analysis: Mapping[str, float], mesh: Mesh, model: CostModel,
             memory: float = 0.0, argument_bytes: float = 0.0) -> Cost:
    """The step cost of XLA's partitioned program: its cost analysis (per device) and its
    collectives (each loop body's once per iteration), a group's bandwidth that of the slowest
    set of mesh axes of its size. ``argument_bytes`` (the arguments' blocks on one device) are
    added to the memory traffic: XLA counts only what a program reads of a replicated argument
    it slices, but the whole copy lives on every device (measured: such programs run slower)."""
    cost = Cost(flops=float(analysis.get("flops", 0.0)),
                hbm_bytes=float(analysis.get("bytes accessed", 0.0)) + argument_bytes,
                model=model, memory=memory, source="xla")
    sizes = mesh.shape
    trips = _hlo_trip_factor(hlo)
    current, mult = None, 1
    for line in hlo.splitlines():
        head = re.match(r"\s*(?:ENTRY\s+)?%?([\w.-]+)\s.*\{\s*$", line)
        if head and "=" not in line.split("{")[0]:
            current = head.group(1)
            mult = trips.get(current, 1)
        for kind, sent, g in hlo_collectives(line, mesh.size):
            axes = _axes_of_group(sizes, g)
            steps = 1 if kind == "collective-permute" else math.log2(max(g, 2))
            _add(cost, kind, sent, sent / model.bandwidth(axes) + steps * model.latency, mult)
    return cost


def _axes_of_group(sizes: Mapping[str, int], g: int) -> list[str]:
    """The slowest-to-be-safe guess of the axes a group of ``g`` devices spans: every subset of
    axes whose sizes multiply to ``g`` is a candidate; all of them are returned."""
    names = list(sizes)
    hit: list[str] = []
    for mask in range(1, 1 << len(names)):
        sub = [names[i] for i in range(len(names)) if mask >> i & 1]
        if int(np.prod([sizes[a] for a in sub])) == g:
            hit += sub
    return sorted(set(hit)) or names


# -- the search ------------------------------------------------------------------------------------
def _bytecode(module: ir.Module) -> bytes:
    buf = io.BytesIO()
    module.operation.write_bytecode(buf)
    return buf.getvalue()


class _Evaluator:
    def __init__(self, module: ir.Module, mesh: Mesh, bound: Sequence[NamedSharding | None],
                 free: Sequence[int], model: CostModel, aliases: Mapping[int, int],
                 results: Sequence[NamedSharding | None] | None = None):
        self.ctx = module.context
        self.code = _bytecode(module)
        self.mesh, self.bound, self.free, self.model = mesh, list(bound), list(free), model
        self.aliases = dict(aliases)  # argument -> output it is updated into
        n_out = len(function_type(main_func(module)).results)
        self.n_out = n_out
        self.results = list(results) if results is not None else [None] * n_out
        self.arg_info = [(_type_info(t) or ((), 4)) for t in function_type(main_func(module)).inputs]
        self.pm = PassManager.parse(_EXPLICIT, context=self.ctx)
        self.count = 0
        self.seen: dict[tuple, Cost] = {}

    def argument_bytes(self, specs: Mapping[int, tuple | None]) -> float:
        """Bytes of all arguments' blocks on one device under ``specs`` (and the bound ones)."""
        total = 0.0
        for i, (shape, eb) in enumerate(self.arg_info):
            s = specs.get(i) if i in specs else None
            sh = NamedSharding(self.mesh, s) if s is not None else self.bound[i]
            parts = sh.parts(len(shape)) if sh is not None and hasattr(sh, "parts") else (
                [int(np.prod([self.mesh.shape[a] for a in ax])) for ax in sh.dims(len(shape))] if sh is not None
                else [1] * len(shape))
            total += float(np.prod(shape) if shape else 1) * eb / float(np.prod(parts) if parts else 1)
        return total

    def copy(self, specs: Mapping[int, tuple | None]) -> ir.Module:
        """The module with ``specs`` (argument -> spec; None: open) on the free arguments, and
        on the outputs they are updated into."""
        with self.ctx, ir.Location.unknown(self.ctx):
            m = ir.Module.parse(self.code)
            args: list = [None] * len(self.bound)
            outs: list = list(self.results)
            for i, s in specs.items():
                if s is not None:
                    args[i] = NamedSharding(self.mesh, s)
                    if i in self.aliases:
                        outs[self.aliases[i]] = args[i]
            annotate_main(m, self.mesh, args, outs if any(o is not None for o in outs) else None)
        return m

    def __call__(self, specs: Mapping[int, tuple | None]) -> tuple[Cost, dict[int, tuple]]:
        """(cost, the complete assignment propagation made of it)."""
        key = tuple(sorted((i, s) for i, s in specs.items()))
        if key in self.seen:
            return self.seen[key]
        m = self.copy(specs)
        with self.ctx:
            self.pm.run(m.operation)
        full = dict(specs)
        fn = main_func(m)
        arg_attrs = list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else []
        sizes = self.mesh.shape
        for i in self.free:
            if full.get(i) is None and i < len(arg_attrs):
                d = ir.DictAttr(arg_attrs[i])
                if "sdy.sharding" in d:
                    full[i] = _spec_of(str(d["sdy.sharding"]), sizes)
        self.count += 1
        cost = estimate(m, self.model)
        self.seen[key] = (cost, full)
        return cost, full


def _spec_of(text: str, sizes: Mapping[str, int]) -> tuple | None:
    """A propagated argument sharding as a spec (None when it splits part of an axis)."""
    if re.search(r'"[^"]+":\(\d+\)\d+', text):
        return None
    dims = [axes for axes, _ in _parse_one(text, sizes)]
    spec = [None if not a else a[0] if len(a) == 1 else tuple(a) for a in dims]
    while spec and spec[-1] is None:
        spec.pop()
    return tuple(spec)


VERIFY_WITHIN = 2.0


def _rank(cost: Cost, specs: Sequence) -> tuple:
    """Order of assignments: step time (within 2 %: the model is not more precise), bytes
    sent, the footprint (within 5 %: a replicated copy where a block does is waste), then the
    simpler one (fewer axes named: fewer reshards where the model is blind), then the one
    splitting leading dimensions (contiguous blocks of row-major arrays)."""
    named = [(d, e) for s in specs if s for d, e in enumerate(s) if e is not None]
    axes = sum(1 if isinstance(e, str) else len(e) for _, e in named)
    return (_bucket(cost.step, 1.02), round(cost.comm_bytes), _bucket(cost.memory, 1.05), axes,
            sum(d for d, _ in named), cost.memory)


PICK_WITHIN = 1.05


def _pick(items: list) -> tuple:
    """The final choice among (specs, cost): of those within PICK_WITHIN of the fastest, the
    one sending the fewest bytes (then as ``_rank``): a few percent of modelled step time is
    below the model's precision, bytes on the wire are not."""
    fastest = min(c.step for _, c in items)
    near = [(k, c) for k, c in items if c.step <= PICK_WITHIN * fastest] or items
    return min(near, key=lambda kc: (round(kc[1].comm_bytes),) + _rank(kc[1], kc[0])[2:] + (kc[1].step,))


def _bucket(x: float, base: float) -> float:
    if not math.isfinite(x):
        return math.inf
    return round(math.log(x) / math.log(base)) if x > 0 else -1e9


def choose(module: ir.Module, mesh: Any, bound: Sequence[NamedSharding | None], free: Sequence[int], *,
           model: CostModel | None = None, aliases: Mapping[int, int] | None = None,
           results: Sequence[NamedSharding | None] | None = None,
           measure: Callable[[ir.Module], tuple[str, Mapping[str, float], float]] | None = None) -> Choice:
    """Shardings for the ``free`` arguments of ``module``'s ``@main`` (the others are placed by
    ``bound``, which stays binding, as do the module's sharding constraints). ``aliases``:
    argument -> the output it is updated into (it keeps the argument's sharding); ``results``:
    shardings the caller fixes on outputs (``out_shardings``; None: propagation's).
    ``measure(copy)`` compiles an annotated copy with XLA and returns (per-device HLO text,
    cost analysis, footprint bytes); when given, the best ``model.verify`` assignments are
    costed again from it."""
    t0 = time.perf_counter()
    mesh = as_mesh(mesh)
    model = model or CostModel()
    model.check_mesh(mesh)
    with module.context, ir.Location.unknown(module.context):
        ensure_mesh(module, mesh)
    ft = function_type(main_func(module))
    shapes = [tuple(ir.RankedTensorType(t).shape) for t in ft.inputs]
    nbytes = [float(np.prod(s) if s else 1) * (_type_info(t) or ((), 4))[1] for s, t in zip(shapes, ft.inputs)]
    free = [i for i in free if i < len(shapes)]
    ev = _Evaluator(module, mesh, bound, free, model, aliases or {}, results)
    fixed = {i: None for i in free}
    results: dict[tuple, tuple[Cost, dict]] = {}

    def run(specs: dict) -> tuple[Cost, dict]:
        """Cost an assignment; remember the complete assignment propagation made of it."""
        cost, full = ev(specs)
        if all(full.get(i) is not None for i in free):
            k = tuple(full[i] for i in free)
            if k not in results or cost.key() < results[k][0].key():
                results[k] = (cost, {i: full[i] for i in free})
        return cost, full

    cands = {i: candidate_specs(shapes[i], mesh) for i in free}
    # a beam over the arguments, largest first and then smallest first (an open argument
    # that propagation leaves replicated makes a partial assignment look worse than it is);
    # the undecided ones stay open, so Shardy's propagation completes each partial assignment
    finals = []
    for order in (sorted(free, key=lambda i: -nbytes[i]), sorted(free, key=lambda i: nbytes[i])):
        beam = [(run(dict(fixed))[0], dict(fixed))]
        for i in order:
            grown = []
            for _, state in beam:
                for s in cands[i]:
                    if ev.count >= model.max_evaluations and grown:
                        break
                    trial = dict(state)
                    trial[i] = s
                    c, full = run(trial)
                    grown.append((c, trial, tuple(full.get(j) for j in free)))
            grown.sort(key=lambda cs: _rank(cs[0], cs[2]))
            beam, seen_full = [], set()
            for c, trial, full in grown:  # distinct programs only (propagation may complete two alike)
                if full not in seen_full:
                    seen_full.add(full)
                    beam.append((c, trial))
                if len(beam) >= max(model.beam, 1):
                    break
        finals.append(beam[0])
        if len(free) < 2:
            break
    finals.sort(key=lambda ct: _rank(ct[0], tuple(ct[1].values())))
    fixed = dict(finals[0][1])
    order = sorted(free, key=lambda i: -nbytes[i])
    # then coordinate descent: one argument at a time, the others fixed
    for _ in range(2):
        changed = False
        for i in order:
            best = None
            for s in cands[i]:
                if ev.count >= model.max_evaluations:
                    break
                trial = dict(fixed)
                trial[i] = s
                k = _rank(run(trial)[0], tuple(trial.values()))
                if best is None or k < best[0]:
                    best = (k, s)
            if best is not None and best[1] != fixed[i]:
                changed = True
                fixed[i] = best[1]
        if not changed:
            break
    ranked = sorted(results.items(), key=lambda kv: _rank(kv[1][0], kv[0]))
    if not ranked:  # nothing could be completed (e.g. sub-axes only): replicate
        specs = {i: () for i in free}
        ranked = [(tuple(specs[i] for i in free), (run(specs)[0], specs))]
    best_specs, best_cost = _pick([(k, c) for k, (c, _) in ranked])
    verified = 0
    ranking = [(list(k), c) for k, (c, _) in ranked[: max(model.verify, 1)]]
    if measure is not None and model.verify > 0 and len(free) > 0:
        checked = []
        top = ranked[0][1][0].step
        # (only assignments the estimate puts within VERIFY_WITHIN of the best: XLA's compile
        # is what the search spends most time on)
        near = [kv for kv in ranked if kv[1][0].step <= VERIFY_WITHIN * top] or ranked[:1]
        for k, (c, specs) in near[: model.verify]:
            hlo, analysis, mem = measure(ev.copy(specs))
            checked.append((k, xla_cost(hlo, analysis, mesh, model, mem or c.memory, ev.argument_bytes(specs))))
            verified += 1
        checked.sort(key=lambda kv: _rank(kv[1], kv[0]))
        best_specs, best_cost = _pick(checked)
        ranking = [(list(k), c) for k, c in checked]
    out = [None] * len(shapes)
    for i, s in zip(free, best_specs):
        out[i] = s
    return Choice(out, best_cost, ev.count, time.perf_counter() - t0, verified, ranking)
