"""The pass registry: every transformation of a StableHLO module is a named pass.

A pass is ``fn(module: ir.Module, options: PassOptions) -> bool | None`` that rewrites the
module in place and may return ``False`` when it certainly changed nothing. A pass registered
as ``idempotent`` (running it twice in a row is the same as once) is skipped when the module
has not changed since it last ran, e.g. the second greedy pattern pass of O2 after an
equality-saturation pass that kept the program. Pipelines are lists of pass names (``pipelines.py``). ``run_pipeline`` runs them,
records per-pass time and op counts, and with ``REACTANT_DUMP_IR=dir`` writes the module after
every pass.

No invalid module reaches a pass (MLIR's passes assume valid IR and may crash the process on
anything else): ``run_pipeline`` verifies its input, and the module after every pass that may
have changed it, and raises ``InvalidModuleError`` naming the pass that would have run and the
one that produced the module. Verification includes MLIR's isolation check, so an operand
defined outside the module (a value of another module or context, e.g. a traced value kept
from another compiled function) is reported there, before any pass touches it.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import Callable, Iterable

from jaxlib.mlir import ir

from ..ir.context import count_ops
from ..ir.errors import ReactantError


@dataclass(frozen=True)
class PassOptions:
    """Options of the passes, typed (a misspelt option is a TypeError, a bad value a
    ValueError naming it).

    Equality saturation stops on work budgets, never on time, so that the optimized module is
    the same on a loaded and an idle machine; ``eqsat_o3`` multiplies them by 4."""

    disabled: frozenset[str] = frozenset()  # rewrite patterns (or families) to leave out
    # also the rewrites that are not exact (``optimize.exactness``): they may round, overflow or
    # give NaN, Inf and signed zeros differently (float reassociation, distribution, x * 0 -> 0)
    fast_math: bool = False
    # -- equality saturation, per segment of straight-line code
    saturation_node_limit: int = 20_000  # e-nodes (the next iteration must not overshoot it)
    saturation_iterations: int = 8  # rewrite iterations
    eqsat_max_segment_ops: int = 300  # ops per segment (longer blocks are cut)
    eqsat_dag_extract_limit: int = 6_000  # larger e-graphs use the tree-cost greedy extraction
    eqsat_extract_steps: int = 5_000  # cost evaluations of the extraction's local search
    # -- equality saturation, per pass: e-nodes summed over the segments saturated so far;
    # the segments after the budget is spent are left as they are
    eqsat_pass_node_budget: int = 100_000
    # -- equality saturation is worth its time: a segment the cost model predicts to take
    # less than this per call (nanoseconds, times its loops' trip counts) is left as it is.
    # Saturating a segment takes 5-30 ms, and it can win at most its own time per call
    eqsat_min_cost_ns: int = 10_000
    # ... and a segment's e-nodes are bounded by what saturating it can win back over this many
    # calls (its predicted time, times its loops' trip counts; 0: no such bound)
    eqsat_calls: int = 500
    # -- automatic differentiation
    ad_checkpoint: str | int | None = None  # reverse mode through loops: "sqrt" or a period
    ad_max_trip_count: int | None = None  # bound for loops whose trip count is known only at run time
    ad_vector_forward: str = "auto"  # vector forward mode: "auto", "unroll" (per lane) or "loop"

    def __post_init__(self):
        object.__setattr__(self, "disabled", frozenset(self.disabled))
        for name in ("saturation_node_limit", "saturation_iterations", "eqsat_max_segment_ops",
                     "eqsat_dag_extract_limit", "eqsat_extract_steps", "eqsat_pass_node_budget",
                     "eqsat_min_cost_ns", "eqsat_calls"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"PassOptions.{name} must be a non-negative int, got {v!r}")
        ck = self.ad_checkpoint
        if not (ck is None or ck == "sqrt" or (isinstance(ck, int) and not isinstance(ck, bool) and ck >= 1)):
            raise ValueError(f"PassOptions.ad_checkpoint must be None, 'sqrt' or a period >= 1, got {ck!r}")
        n = self.ad_max_trip_count
        if not (n is None or (isinstance(n, int) and not isinstance(n, bool) and n >= 1)):
            raise ValueError(f"PassOptions.ad_max_trip_count must be None or an int >= 1, got {n!r}")
        if self.ad_vector_forward not in ("auto", "unroll", "loop"):
            raise ValueError("PassOptions.ad_vector_forward must be 'auto', 'unroll' or 'loop', "
                             f"got {self.ad_vector_forward!r}")


def log_pass(name: str, msg: str) -> None:
    """A line about a pass's decision on stderr, when ``REACTANT_LOG`` asks for every stage
    (set, not "0", and not only topics of reactant's: ``recompile``, ``cache``)."""
    value = os.environ.get("REACTANT_LOG", "")
    if value not in ("", "0") and {t.strip() for t in value.split(",")} - {"recompile", "cache"}:
        print(f"reactant: {name}: {msg}", file=sys.stderr)


@dataclass
class PassStat:
    name: str
    seconds: float
    ops_before: int
    ops_after: int
    skipped: bool = False  # idempotent and the module unchanged since it last ran


class InvalidModuleError(ReactantError, ValueError):
    """A module that fails MLIR verification before a pass would run on it."""


# MLIR's diagnostic for an operand defined outside the module (its isolation check)
_FOREIGN = "using value defined outside the region"


def verify_module(module: ir.Module, *, before: str | None, produced_by: str | None) -> None:
    """Raise ``InvalidModuleError`` unless ``module`` verifies. ``before``: the pass that would
    run next (None: the end of the pipeline); ``produced_by``: the pass whose output this is
    (None: the pipeline's input)."""
    try:
        module.operation.verify()
    except ir.MLIRError as e:
        raise _invalid(str(e), before, produced_by) from None


def _invalid(diagnostic: str, before: str | None, produced_by: str | None) -> InvalidModuleError:
    source = "the module given to the optimizer" if produced_by is None else f"the output of pass {produced_by!r}"
    where = f"before pass {before!r}" if before is not None else "at the end of the pipeline"
    if _FOREIGN in diagnostic:
        what = ("an operation uses a value defined outside the module (a value of another module or MLIR "
                "context, such as a traced array kept from another compiled function or a finished trace)")
        hint = ("do not keep traced arrays between compiled functions (on self, in globals): return them, "
                "and pass the results in as arguments")
    else:
        what = "the module is not valid MLIR"
        hint = None if produced_by is None else \
            f"this is a bug in pass {produced_by!r}: please report it with the module"
    return InvalidModuleError(f"{source} fails verification {where}: {what}\n{diagnostic.strip()}", hint=hint)


PassFn = Callable[[ir.Module, PassOptions], "bool | None"]
PASSES: dict[str, PassFn] = {}
IDEMPOTENT: set[str] = set()


def register_pass(name: str, *, idempotent: bool = False):
    """Register the decorated ``fn(module, options)`` as pass ``name``."""

    def deco(fn: PassFn) -> PassFn:
        if name in PASSES:
            raise ValueError(f"pass {name!r} registered twice")
        PASSES[name] = fn
        if idempotent:
            IDEMPOTENT.add(name)
        return fn

    return deco


_dump_counter = [0]


def run_pipeline(
    module: ir.Module,
    names: Iterable[str],
    options: PassOptions | None = None,
    *,
    stats: list[PassStat] | None = None,
    dump_dir: str | None = None,
    verify: bool = True,
    on_pass: Callable[[str], None] | None = None,
    clean: set[str] | None = None,
) -> ir.Module:
    """Run the named passes in order on ``module`` (in place); returns it. ``on_pass(name)`` is
    called before each pass (progress reports). ``clean``: the idempotent passes that already
    ran on the module as it is (skipped until a pass changes it), updated in place, so that a
    pipeline run in parts skips them as one run would.

    The input is always verified (``InvalidModuleError`` before the first pass); with
    ``verify`` (the default) so is the module after every pass that may have changed it, so no
    pass sees invalid IR. ``verify=False`` is for timing the passes alone."""
    options = options or PassOptions()
    dump_dir = dump_dir if dump_dir is not None else os.environ.get("REACTANT_DUMP_IR")
    names = list(names)
    unknown = [n for n in names if n not in PASSES]
    if unknown:
        raise KeyError(f"unknown pass(es) {unknown}; known: {sorted(PASSES)}")
    if dump_dir:
        os.makedirs(dump_dir, exist_ok=True)
        _dump_counter[0] += 1
        tag = f"{os.getpid()}_{_dump_counter[0]:04d}"
        _dump(module, dump_dir, f"{tag}_00_input.mlir")
    if names:
        verify_module(module, before=names[0], produced_by=None)
    clean = set() if clean is None else clean  # idempotent passes that ran on the module as it is now
    for i, name in enumerate(names, 1):
        before = count_ops(module) if stats is not None else 0
        if name in clean:
            if stats is not None:
                stats.append(PassStat(name, 0.0, before, before, skipped=True))
            continue
        if on_pass is not None:
            on_pass(name)
        t0 = time.perf_counter()
        with module.context, ir.Location.unknown(module.context):  # a default for builders
            changed = PASSES[name](module, options)
        dt = time.perf_counter() - t0
        if changed is not False:
            clean.clear()
        if name in IDEMPOTENT:
            clean.add(name)
        if stats is not None:
            stats.append(PassStat(name, dt, before, count_ops(module)))
        if dump_dir:  # before verifying: an invalid output is what one wants to read
            _dump(module, dump_dir, f"{tag}_{i:02d}_{name}.mlir")
        if verify and changed is not False:
            verify_module(module, before=names[i] if i < len(names) else None, produced_by=name)
    return module


def _dump(module: ir.Module, d: str, fname: str) -> None:
    with open(os.path.join(d, fname), "w") as f:
        f.write(module.operation.get_asm(enable_debug_info=False, large_elements_limit=64))
