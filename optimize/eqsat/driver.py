"""The equality-saturation pass: segment, weigh, encode, saturate under limits, extract, rebuild.

The blocks of program code are cut into segments (``encode.segments_of_block``). First the
cost model weighs every segment as it stands (one e-graph with the analyses and cost rules
only): a segment whose predicted time per call, times its loops' trip counts, is under
``Limits.min_cost`` is left alone, since it has less to win than saturating it costs, and so is
the whole program when its predicted time over ``Limits.calls`` calls is under the work of
building the pass's e-graph (``BUILD_NODES``; both bounds are off with ``min_cost=0``). A
program whose cost bound (``cost.upper_bound``) settles either is not weighed at all. The
others are saturated one after another in a shared e-graph holding the prelude, the rules and
the cost rules (``_Shared``; building it costs more than saturating most segments): each is
bulk-loaded from TSV tables; the analyses run; the original program's DAG cost is taken;
rewrite iterations run one at a time until saturation, the iteration cap or the node limit
(which also anticipates the next iteration's growth); the cheapest program is extracted
(DAG-aware greedy plus local search, also started from the original program) and, only if
strictly cheaper than the original (by at least ``Limits.min_gain``, so that ties never churn
the IR), rebuilt in place of the segment. Anything unexpected (an egglog error, a type
mismatch while rebuilding) leaves the segment as it was.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

from jaxlib.mlir import ir

from ...ir import loops
from ..exactness import EXACT, FAST_MATH
from ..passes import log_pass
from . import cost as cost_mod
from .encode import (
    TYPE_INFO,
    Encoded,
    Encoder,
    Segment,
    segments_of_block,
    write_tables,
)
from .extract import Frozen, dag_cost, greedy_dag, improve, original_choice, tree_greedy
from .lang import CTORS, prelude
from .rebuild import Builder, RebuildError
from .rules import analysis_rules, rules_for

log = logging.getLogger("reactant.optimize.eqsat")

_REWRITE_PREFIXES = (EXACT + ":", FAST_MATH + ":")  # names of the rewrite rules (rules._rule)

# ops whose regions hold program code we optimize (not scalar bodies of reduce/scatter/sort)
_CODE_REGION_OPS = {"func.func", "stablehlo.while", "stablehlo.if", "stablehlo.case"}


@dataclass
class Limits:
    """Work budgets (never time: the result must not depend on the machine's load)."""

    node_limit: int = 20_000  # e-nodes per segment
    iterations: int = 8  # rewrite iterations per segment
    max_segment_ops: int = 300
    pass_node_budget: int = 100_000  # e-nodes summed over the pass's segments; then the rest is skipped
    dag_extract_limit: int = 6_000  # e-graphs larger than this use the tree-cost greedy
    # replace a segment only when the model predicts at least this gain: smaller predicted gains
    # are within the cost model's error against XLA's code (an MLP train-step gradient
    # predicted 2% faster ran 6-10% slower)
    min_gain: float = 0.03
    extract_steps: int = 5_000  # cost evaluations of local search per segment (split over its starts)
    fast_math: bool = False
    rewrite: bool = True  # False: encode and extract only (round-trip check)
    # a segment holding fewer than two ops of these kinds is not saturated (None: one
    # structural op of any kind will do). Products, reductions and transposes are what the rules
    # restructure into gains the greedy patterns miss, and they gain by combining two of them
    # (associating products, folding a transpose into a product, fusing reductions): on the
    # benchmark corpus, the shared bench modules and the kernels every improved segment holds
    # two or more (8 of 8), none of 14 segments holding one improved (an inner product in a
    # loop: 0.1-0.2 s of a first call for nothing), and 0 of ~500 segments of slices, reshapes,
    # broadcasts and elementwise algebra (60 generated NumPy programs) improved
    gainful_kinds: frozenset | None = frozenset({"Dot", "Reduce", "Transpose"})
    # a segment the cost model predicts to take less than this per call (femtoseconds; times
    # its loops' trip counts) is not saturated: it has less to win than saturating costs
    min_cost: int = 0
    # with calls > 0, a segment's e-node limit is also what saturating it can win back over
    # this many calls: its predicted time (times its loops' trip counts) x calls / NODE_FS
    calls: int = 0


@dataclass
class SegmentStat:
    ops: int
    roots: int
    nodes_start: int = 0
    nodes_end: int = 0
    iterations: int = 0
    stop: str = ""
    cost_before: int = 0
    cost_after: int = 0
    replaced: bool = False
    seconds: float = 0.0
    error: str = ""
    cached: bool = False  # a segment encoded alike was saturated before without a gain
    # rewrite rules that matched during saturation: rule name (``rules.name_of``) -> matches
    matched: dict = field(default_factory=dict)


@dataclass
class EqsatReport:
    segments: list[SegmentStat] = field(default_factory=list)
    seconds: float = 0.0
    skipped: int = 0  # segments left out when the pass's node budget was spent
    not_gainful: int = 0  # segments without an op the rules can gain on (``Limits.gainful_kinds``)
    small: int = 0  # segments predicted under ``Limits.min_cost`` per call

    @property
    def replaced(self) -> int:
        return sum(s.replaced for s in self.segments)


_EGGLOG: list = []


def _egglog():
    """egglog's bindings (the compiled e-graph engine), loaded when saturation first runs.
    Only the extension module is loaded (~20 ms): importing the ``egglog`` package runs its
    Python front end too (0.4-0.8 s, a code formatter included), which a first call should
    not pay. Anything unexpected falls back to the plain import."""
    if not _EGGLOG:
        eb = sys.modules.get("egglog.bindings")  # (the user imported egglog)
        if eb is None:
            try:
                spec = importlib.util.find_spec("egglog")  # (finds the package without running it)
                folder = os.path.dirname(spec.origin)
                path = next(os.path.join(folder, "bindings" + sfx) for sfx in importlib.machinery.EXTENSION_SUFFIXES
                            if os.path.exists(os.path.join(folder, "bindings" + sfx)))
                loader = importlib.machinery.ExtensionFileLoader("egglog.bindings", path)
                eb = importlib.util.module_from_spec(importlib.util.spec_from_loader("egglog.bindings", loader))
                loader.exec_module(eb)
                # (not left registered without its package: a later ``import egglog`` loads
                # it again, which returns this same module and binds it to the package)
                sys.modules.pop("egglog.bindings", None)
            except Exception:  # noqa: BLE001 - any layout we do not expect: the documented way
                import egglog.bindings as eb
        _EGGLOG.append(eb)
    return _EGGLOG[0]


def _run(eg, text: str):
    out = []
    for cmd in eg.parse_program(text):
        out.extend(eg.run_program(cmd))
    return out


def _size(eg) -> int:
    out = _run(eg, "(print-size)")
    for o in out:
        sizes = getattr(o, "sizes", None)
        if sizes is None and isinstance(o, _egglog().PrintAllFunctionsSize):
            sizes = o.sizes
        if sizes is not None:
            return sum(n for name, n in sizes if name in CTORS)
    return 0


def _base_egraph(ranks, fast_math: bool, consts: dict, present):
    """A new e-graph with the prelude, the rules that can fire on a segment made of the op
    constructors ``present`` and the cost rules (0.05-0.15 s to build: more than saturating
    most segments). Never reset with egglog 13's ``(push)``/``(pop)``, which corrupted the
    heap on some of our e-graphs (an abort in a later, unrelated compile): consecutive
    segments share one instead (``_Shared``)."""
    ranks = tuple(sorted(set(ranks)))
    _, rules = rules_for(frozenset(present), ranks, fast_math)
    eg = _egglog().EGraph()
    for cmd in prelude():
        _run(eg, cmd)
    for r in rules:
        _run(eg, r)
    for c in cost_mod.cost_commands(consts):
        _run(eg, c)
    return eg


# a shared e-graph is given up beyond this many e-nodes: extraction reads the whole e-graph
SHARED_NODES = 3_000
# the work of saturating one e-node (rewriting, analyses, extraction), in the cost model's
# femtoseconds: ~0.1 ms (8,000 e-nodes of an MLP step in ~0.8 s on a 2-core machine). A
# constant, not a measurement: budgets are work, so the result is the same on any machine
NODE_FS = 100_000_000_000
MIN_NODES = 500  # the e-node limit of any segment worth saturating at all
# the work of building a pass's e-graph (prelude, rules, cost rules; 0.05-0.15 s), in e-nodes
BUILD_NODES = 1_000
# the work of weighing a program (the analyses and cost rules declared, its segments loaded and
# their costs extracted; ~30 ms): a program whose bound cannot pay for both is not weighed
WEIGH_NODES = 300


class _Shared:
    """One e-graph for consecutive segments of a pass. Each segment is loaded with numbers of
    its own (the encoder keeps counting), so it meets earlier segments only in constants,
    which are the same values wherever they occur. The e-graph is given up (a new one built)
    when a segment needs rules it lacks, when one stopped unsaturated (later iterations would
    go on growing it), after an egglog error, and past ``SHARED_NODES``."""

    def __init__(self, fast_math: bool, consts: dict, kinds: frozenset, ranks: frozenset = frozenset()):
        # the constructors and tensor ranks of every segment the pass will saturate: one e-graph
        # with their rules serves them all (rules of other ranks cost its build, 35 -> 65 ms for
        # ranks up to 4 instead of 2, and never fire)
        self.fast_math, self.consts, self.kinds, self.pass_ranks = fast_math, consts, kinds, ranks
        self.eg = None

    def take(self, present: frozenset, ranks) -> tuple:
        """(e-graph, encoder, its size before the segment) for a segment."""
        ranks = frozenset(ranks) | self.pass_ranks
        if self.eg is None or not (present <= self.present and ranks <= self.ranks) or self.size > SHARED_NODES:
            self.present = frozenset(present | self.kinds)
            self.ranks = ranks if self.eg is None else ranks | self.ranks
            self.eg = _base_egraph(self.ranks, self.fast_math, self.consts, self.present)
            self.encoder, self.size = Encoder(), _size(self.eg)
        return self.eg, self.encoder, self.size

    def done(self, stat: SegmentStat, ok: bool) -> None:
        if ok and stat.stop in ("saturated", ""):
            self.size = _size(self.eg)
        else:
            self.eg = None


def _ranks(seg: Segment) -> set:
    """The ranks of the tensors a segment's ops read and make (what its encoding holds)."""
    out = set()
    for op in seg.ops:
        for v in list(op.operands) + list(op.results):
            if isinstance(v.type, ir.RankedTensorType):
                out.add(ir.RankedTensorType(v.type).rank)
    return out


def _present(enc) -> frozenset:
    """The op constructors an encoded segment's tables hold."""
    return frozenset(t[2:] for t in enc.tables if t.startswith("In") and t[2:] in CTORS)


def _blocks(module: ir.Module) -> list[tuple]:
    """(block, runs) for every block of program code: ``runs`` is how many times the block
    runs per call at most (the product of its loops' static trip bounds), None when unknown
    (a loop without one, a private function that may be called from a loop)."""
    out = []

    def visit(op, runs):
        name = op.operation.name
        if name not in _CODE_REGION_OPS:  # (scalar bodies; code may still be nested deeper)
            for region in op.regions:
                for b in region.blocks:
                    for inner in b.operations:
                        visit(inner, runs)
            return
        if name == "func.func":
            private = "sym_visibility" in op.attributes and \
                ir.StringAttr(op.attributes["sym_visibility"]).value == "private"
            runs = None if private else 1
        elif name == "stablehlo.while":
            info = loops.analyze(op)
            trips = info.trip_bound if info is not None else None
            runs = None if runs is None or trips is None else runs * (trips + 1)
        for region in op.regions:
            for b in region.blocks:
                out.append((b, runs))
                for inner in b.operations:
                    visit(inner, runs)

    for op in module.body.operations:
        visit(op, 1)
    return out


def _weigh(plan: list, consts: dict, limits: Limits) -> tuple[list[int | None], bool]:
    """Each segment's predicted cost, or its cost's upper bound (``cost.upper_bound``: then
    True) where
    that alone settles both bounds of ``_run_blocks``: when every segment's bound is under
    ``min_cost``, or the whole program's bound over ``calls`` calls is under the work of
    weighing it and building an e-graph (``WEIGH_NODES + BUILD_NODES``: even a saturation that
    won it all could not pay for them), the e-graph that weighs segments is not needed (small
    programs: ~30 ms of a ~60-100 ms compile)."""
    bounds = [cost_mod.upper_bound(seg.ops, consts) for seg, _ in plan]
    if all(b >= 0 and r is not None for b, (_, r) in zip(bounds, plan)):
        each = all(b * r < limits.min_cost for b, (_, r) in zip(bounds, plan))
        whole = limits.calls > 0 and sum(b * r for b, (_, r) in zip(bounds, plan)) * limits.calls \
            < (BUILD_NODES + WEIGH_NODES) * NODE_FS
        if each or whole:
            return bounds, True
    return _predicted_costs([seg for seg, _ in plan], consts), False


def _predicted_costs(segs: list[Segment], consts: dict) -> list[int | None]:
    """The cost model's cost of each segment as it stands (femtoseconds per run), from an
    e-graph with the analyses and the cost rules but no rewrites (~1 ms per segment): the
    most that saturating a segment can gain. None where a segment cannot be encoded."""
    predictor = getattr(_PREDICTORS, "one", None)
    if predictor is None:
        predictor = _PREDICTORS.one = _Predictor()
    try:
        return predictor.costs(segs, consts)
    except BaseException:
        predictor.eg = None  # (egglog may have been left mid-command)
        raise


class _Predictor:
    """One weighing e-graph kept across passes (per thread): declaring the prelude, the analyses and the
    cost rules (~20 ms) costs more than weighing most programs. Each pass's segments are loaded
    with numbers of their own (one encoder keeps counting: a slot or constant of one program is
    never another's; types and vectors are the same wherever they occur), and nothing rewrites,
    so earlier programs change no cost. Rebuilt for other cost constants or ranks, and past
    ``SHARED_NODES`` (extraction reads the whole e-graph)."""

    def __init__(self):
        self.eg = None

    def costs(self, segs: list[Segment], consts: dict) -> list[int | None]:
        key = tuple(sorted(consts.items()))
        if self.eg is not None and (self.key != key or self.nodes > SHARED_NODES):
            self.eg = None
        encoder = self.encoder if self.eg is not None else Encoder()
        encs, tables, ranks = _encode_all(segs, encoder)
        if self.eg is not None and not ranks <= self.ranks:
            # a new e-graph: encoded again by a new encoder, which loads every vector and type
            # (the kept encoder leaves out those the old e-graph already has)
            self.eg, encoder = None, Encoder()
            encs, tables, ranks = _encode_all(segs, encoder)
        if self.eg is None:
            self.eg, self.key, self.ranks, self.nodes = _egglog().EGraph(), key, ranks, 0
            self.encoder = encoder
            for cmd in prelude() + analysis_rules(tuple(sorted(ranks))) + cost_mod.cost_commands(consts):
                _run(self.eg, cmd)
        eg = self.eg
        with tempfile.TemporaryDirectory(prefix="reactant_eqsat_") as tmp:
            for name, path in write_tables(Encoded(tables=tables), tmp):
                _run(eg, f'(input {name} "{path}")')
        _run(eg, "(run-schedule (saturate (run load)) (saturate (run ana)))")
        self.nodes += sum(len(rows) for rows in tables.values())
        fz = Frozen(eg, consts["mat"], (consts["lhs_t"], consts["rhs_t"]), consts["ew"])
        choice = greedy_dag(fz)  # (each class holds its one original op)
        out = []
        for enc in encs:
            c = None if enc is None else dag_cost(fz, choice, [fz.slot_class[s] for s in enc.roots])
            out.append(None if c is None else c[0])
        return out


def _encode_all(segs: list[Segment], encoder: Encoder) -> tuple[list, dict, set]:
    """(each segment's encoding or None, the tables of all, their ranks) with ``encoder``."""
    encs, tables, ranks = [], {}, set(range(5))
    for seg in segs:
        try:
            enc = encoder.encode(seg)
        except (ValueError, TypeError):
            enc = None
        encs.append(enc)
        if enc is not None:
            ranks |= enc.ranks
            for name, rows in enc.tables.items():
                tables.setdefault(name, []).extend(rows)
    return encs, tables, ranks


# one per thread: an egglog e-graph must stay on the thread that made it
_PREDICTORS = threading.local()


# ops that give the rules something to work with beyond plain elementwise algebra (which the
# greedy patterns already handle)
_STRUCTURAL = {"Dot", "Reduce", "Transpose", "Slice", "Pad", "Concat", "Bcast", "Reshape", "Reverse"}


def _gainful_ops(seg: Segment, limits: Limits) -> int:
    """How many of the segment's ops are of a kind the rules gain on (``Limits.gainful_kinds``)."""
    kinds = limits.gainful_kinds if limits.gainful_kinds is not None else _STRUCTURAL
    return sum(k in kinds for k in seg.kinds)


def run_eqsat(module: ir.Module, limits: Limits, *, inspect=None) -> EqsatReport:
    report = EqsatReport()
    t_start = time.perf_counter()
    consts = cost_mod.constants()
    try:
        _run_blocks(module, limits, consts, report, inspect)
    finally:
        TYPE_INFO.clear()
    report.seconds = time.perf_counter() - t_start
    return report


def _run_blocks(module: ir.Module, limits: Limits, consts: dict, report: EqsatReport, inspect) -> None:
    spent = 0  # e-nodes of the segments saturated so far
    with module.context, ir.Location.unknown():
        # (a block's rebuilds touch only its own segments' ops: all can be cut up front)
        plan = [(seg, runs) for block, runs in _blocks(module)
                for seg in segments_of_block(block, limits.max_segment_ops)]
        gainful = [_gainful_ops(seg, limits) for seg, _ in plan]
        need = 1 if limits.gainful_kinds is None else 2  # (see ``Limits.gainful_kinds``)
        todo = [not limits.rewrite or (len(seg.ops) >= 2 and g >= need) for (seg, _), g in zip(plan, gainful)]
        report.not_gainful = todo.count(False)
        lone = sum(not t and g == 1 for t, g in zip(todo, gainful))
        if limits.rewrite and lone:
            log_pass("eqsat", f"{lone} segment(s) with one product, reduction or transpose: not saturated "
                     "(nothing for the rules to combine it with)")
        if limits.rewrite and limits.min_cost > 0 and any(todo):
            picked = [i for i, t in enumerate(todo) if t]
            try:
                costs, bounded = _weigh([plan[i] for i in picked], consts, limits)
            except Exception as e:  # never let the optimizer break a compile: nothing saturated
                if inspect is not None:
                    raise
                log.warning("eqsat: weighing the program failed, not saturated: %s: %s", type(e).__name__, e)
                report.skipped += len(picked)
                return
            under = "at most" if bounded else "predicted at"
            for i, c in zip(picked, costs):
                runs = plan[i][1]
                if c is not None and runs is not None and c * runs < limits.min_cost:
                    todo[i] = False
                    report.small += 1
            if report.small:
                log_pass("eqsat", f"{report.small} of {len(picked)} segments {'bounded' if bounded else 'predicted'} under "
                         f"{limits.min_cost / 1e9:g} us per call: not saturated (nothing to win)")
            # the whole program's predicted time over ``calls`` calls is the most saturation can
            # win back: under the work of building its e-graph, it cannot pay for itself
            left = [(c, plan[i][1]) for i, c in zip(picked, costs) if todo[i]]
            if limits.min_cost > 0 and limits.calls > 0 and left and all(c is not None and r is not None for c, r in left):
                total = sum(c * r for c, r in left)
                # (bounded: the program was not weighed, and weighing it would cost too)
                if total * limits.calls < (BUILD_NODES + (WEIGH_NODES if bounded else 0)) * NODE_FS:
                    for i in picked:
                        todo[i] = False
                    report.small += len(left)
                    log_pass("eqsat", f"program {under} {total / 1e9:.3g} us per call: over "
                             f"{limits.calls} calls less than saturating it costs; not saturated")
        runs = [r for _, r in plan]
        plan = [seg for seg, _ in plan]
        kinds = {k for seg, t in zip(plan, todo) if t for k in seg.kinds} | {"Leaf"}
        if "Concat" in kinds:
            kinds.add("Reshape")  # (a concatenate of one operand is encoded as a reshape)
        ranks = {r for seg, t in zip(plan, todo) if t for r in _ranks(seg)}
        shared = _Shared(limits.fast_math, consts, frozenset(kinds), frozenset(ranks))
        for seg, t, r in zip(plan, todo, runs):
            if spent >= limits.pass_node_budget:
                report.skipped += 1
                continue
            if not t:
                continue
            try:
                stat = optimize_segment(seg, limits, consts, inspect=inspect, shared=shared, runs=r)
            except Exception as e:  # never let the optimizer break a compile
                if inspect is not None:
                    raise
                shared.eg = None  # (egglog may have been left mid-command)
                stat = SegmentStat(ops=len(seg.ops), roots=0, error=f"{type(e).__name__}: {e}")
                log.warning("eqsat: segment skipped after an error: %s", stat.error)
            report.segments.append(stat)
            spent += stat.nodes_end


def optimize_segment(seg: Segment, limits: Limits, consts: dict, *, inspect=None,
                     shared: _Shared | None = None, runs: int | None = 1) -> SegmentStat:
    """Saturate, extract and (when cheaper) rebuild one segment, in an e-graph of its own or
    in ``shared``'s; it runs ``runs`` times per call (None: unknown). ``inspect(frozen,
    encoded)`` is called with the saturated e-graph before extraction (tests use it)."""
    t0 = time.perf_counter()
    stat = SegmentStat(ops=len(seg.ops), roots=0)
    try:
        enc = Encoder().encode(seg)
    except (ValueError, TypeError) as e:
        stat.error = f"encode: {e}"
        return stat
    stat.roots = len(enc.roots)
    key = _segment_key(enc, limits, consts) if limits.rewrite and inspect is None else None
    seen = _NO_GAIN.get(key) if key is not None else None
    if seen is not None:  # same encoding, same budgets: the same (empty) result
        stat.cached = True
        stat.nodes_start, stat.nodes_end, stat.cost_before, stat.cost_after = seen
        stat.seconds = time.perf_counter() - t0
        return stat
    if enc.roots:
        base = 0
        if shared is None:
            eg = _base_egraph(enc.ranks, limits.fast_math, consts, _present(enc))
        else:
            eg, encoder, base = shared.take(_present(enc), enc.ranks)
            enc = encoder.encode(seg)  # the same segment, numbered on from the e-graph's others
        res = _saturate(eg, enc, limits, stat, consts, base, runs)
        if shared is not None:
            shared.done(stat, res is not None)
        if res is not None:
            fz, choice, sol, roots = res
            if inspect is not None:
                inspect(fz, enc)
            if not limits.rewrite or sol[0] < stat.cost_before * (1.0 - limits.min_gain):
                try:
                    _rebuild(seg, enc, fz, choice, sol[1], roots)
                    stat.replaced = True
                except RebuildError as e:
                    stat.error = f"rebuild: {e}"
        if key is not None and not stat.replaced and not stat.error:
            with _NO_GAIN_LOCK:
                if len(_NO_GAIN) >= NO_GAIN_SIZE:
                    _NO_GAIN.clear()
                _NO_GAIN[key] = (stat.nodes_start, stat.nodes_end, stat.cost_before, stat.cost_after)
    stat.seconds = time.perf_counter() - t0
    return stat


# Segments saturated without a gain, by encoding: an unrolled program repeats the same
# segment many times, and saturating it again would find nothing again (saturation and
# extraction are deterministic in the encoding, the budgets and the cost constants). The
# cached e-node count still counts against the pass budget, so results do not depend on what
# was compiled before.
NO_GAIN_SIZE = 4096
_NO_GAIN: dict = {}
_NO_GAIN_LOCK = threading.Lock()


def _segment_key(enc, limits: Limits, consts: dict) -> str:
    h = hashlib.sha1()
    for name in sorted(enc.tables):
        h.update(name.encode())
        h.update(repr(enc.tables[name]).encode())
    for k in sorted(enc.dense):
        h.update(f"{k}:{enc.dense[k]}".encode())
    h.update(repr((sorted(enc.roots), sorted(enc.ranks), limits, sorted(consts.items()))).encode())
    return h.hexdigest()


def _node_limit(limits: Limits, cost: int, runs: int | None) -> int:
    """A segment's e-node limit: the budget, and with ``limits.calls`` at most what saturating
    it can win back over that many calls (it cannot win more than its own time)."""
    if not limits.calls or runs is None:
        return limits.node_limit
    return max(MIN_NODES, min(limits.node_limit, cost * runs * limits.calls // NODE_FS))


def _saturate(eg, enc, limits: Limits, stat: SegmentStat, consts: dict, base: int = 0, runs: int | None = 1):
    """Load ``enc`` into ``eg`` (holding ``base`` e-nodes of earlier, saturated segments),
    take the original cost, saturate under the limits and extract. Returns (frozen graph,
    choice, (cost, class order), root classes) or None."""
    try:
        with tempfile.TemporaryDirectory(prefix="reactant_eqsat_") as tmp:
            for name, path in write_tables(enc, tmp):
                _run(eg, f'(input {name} "{path}")')
            _run(eg, "(run-schedule (saturate (run load)))")
        _run(eg, "(run-schedule (saturate (run ana)))")
        fz0 = Frozen(eg, consts["mat"], (consts["lhs_t"], consts["rhs_t"]), consts["ew"])
        roots0 = [fz0.slot_class[s] for s in enc.roots]
        choice0 = greedy_dag(fz0)  # before rewriting, every class holds exactly its original op
        orig = dag_cost(fz0, choice0, roots0)
        if orig is None:
            stat.error = "original not extractable"
            return None
        stat.cost_before = orig[0]
        stat.nodes_start = stat.nodes_end = _size(eg) - base
        if limits.rewrite:
            # fast-math rules (associativity, annihilators) can multiply the e-graph within a
            # single iteration: a back-off scheduler caps their matches per iteration
            sched = ("(run-schedule (let-scheduler bo (back-off :match-limit 1000)) (saturate (run ana)) "
                     f"(run {EXACT}) (run-with bo {FAST_MATH}))" if limits.fast_math
                     else f"(run-schedule (saturate (run ana)) (run {EXACT}))")
            stat.stop = "iterations"
            prev = max(1, stat.nodes_start)
            node_limit = _node_limit(limits, stat.cost_before, runs)
            for it in range(limits.iterations):
                out = _run(eg, sched)
                stat.iterations = it + 1
                reports = [r for r in (getattr(o, "report", None) for o in out) if r is not None]
                updated = any(r.updated for r in reports)
                for r in reports:
                    for name, n in r.num_matches_per_rule.items():
                        if n and name.startswith(_REWRITE_PREFIXES):
                            stat.matched[name] = stat.matched.get(name, 0) + n
                n = stat.nodes_end = _size(eg) - base
                if not updated:
                    stat.stop = "saturated"
                    break
                # stop before an iteration that would overshoot the node limit (growth is
                # roughly geometric)
                if n > node_limit or n * (n / prev) > 2 * node_limit:
                    stat.stop = "nodes"
                    break
                prev = n
            _run(eg, "(run-schedule (saturate (run ana)))")
        fz = Frozen(eg, consts["mat"], (consts["lhs_t"], consts["rhs_t"]), consts["ew"])
        roots = [fz.slot_class[s] for s in enc.roots]
        choice = greedy_dag(fz) if len(fz.nodes) <= limits.dag_extract_limit else tree_greedy(fz)
        if limits.rewrite:
            # local search from three starts: the greedy extraction; the original program
            # (so never worse than the input); and a greedy extraction in which the terms
            # the outputs themselves need are free to share (finds e.g. a loss rewritten
            # onto a product that a gradient output computes anyway)
            starts = [choice]
            orig_start = original_choice(fz0, choice0, orig[1], fz, choice)
            if orig_start is not None:
                starts.append(orig_start)
            if len(fz.nodes) <= limits.dag_extract_limit:
                for base in list(starts):
                    first = dag_cost(fz, base, roots)
                    if first is not None:
                        starts.append(greedy_dag(fz, free={c: base[c] for c in roots}))
            sol, seen = None, set()
            for st in starts:
                key = tuple(st)  # (classes outside the program matter: local moves reach them)
                if key in seen or dag_cost(fz, st, roots) is None:
                    continue
                seen.add(key)
                r = improve(fz, st, roots, max_steps=limits.extract_steps // len(starts))
                if r is not None and (sol is None or r[0] < sol[0]):
                    sol, choice = r, st
        else:
            sol = dag_cost(fz, choice, roots)
    except _egglog().EggSmolError as e:  # egglog refused the segment: keep it as it is
        stat.error = f"egglog: {str(e)[:300]}"
        log.debug("eqsat segment left as it is: %s", stat.error)
        return None
    if sol is None:
        stat.error = "no extraction"
        return None
    stat.cost_after = sol[0]
    return fz, choice, sol, roots


def _rebuild(seg: Segment, enc, fz: Frozen, choice, order, roots) -> None:
    leaf_value = {s: enc.slot_value[s] for s in enc.leaf_slots}
    loc = seg.ops[-1].location
    b = Builder(fz, choice, leaf_value, enc.dense, loc)
    root_vals = [enc.slot_value[s] for s in enc.roots]
    try:
        with ir.InsertionPoint(seg.end_op):
            for c in order:
                b.build(c)
        new_vals = [b.values[c] for c in roots]
        for old, new in zip(root_vals, new_vals):
            if old.type != new.type:
                raise RebuildError(f"type mismatch {old.type} vs {new.type}")
    except RebuildError:
        b.erase_created()
        raise
    except Exception as e:
        b.erase_created()
        raise RebuildError(f"{type(e).__name__}: {e}") from e
    seg_ops = {op.operation for op in seg.ops}
    for old, new in zip(root_vals, new_vals):
        if old == new:
            continue
        for use in list(old.uses):
            if use.owner not in seg_ops:
                use.owner.operands[use.operand_number] = new
    # erase the old segment ops that became dead (reverse order: users first)
    for op in reversed(seg.ops):
        if all(len(list(r.uses)) == 0 for r in op.results):
            op.operation.erase()
