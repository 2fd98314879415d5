"""The pass registry: every transformation of a StableHLO module is a named pass.

A pass is ``fn(module: ir.Module, options: PassOptions) -> bool | None`` that rewrites the
module in place and may return ``False`` when it certainly changed nothing. A pass registered
as ``idempotent`` (running it twice in a row is the same as once) is skipped when the module
has not changed since it last ran, e.g. the second greedy pattern pass of O2 after an
equality-saturation pass that kept the program. Pipelines are lists of pass names (``pipelines.py``). ``run_pipeline`` runs them,
verifies after each, records per-pass time and op counts, and with ``REACTANT_DUMP_IR=dir``
writes the module after every pass.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from jaxlib.mlir import ir

from ..ir.context import count_ops


@dataclass
class PassOptions:
    """Knobs shared by passes; ``disabled`` names rewrite patterns to leave out."""

    disabled: frozenset[str] = frozenset()
    fast_math: bool = False
    saturation_node_limit: int = 20_000
    saturation_time_limit: float = 1.0
    saturation_iterations: int = 8
    extra: dict = field(default_factory=dict)


@dataclass
class PassStat:
    name: str
    seconds: float
    ops_before: int
    ops_after: int
    skipped: bool = False  # idempotent and the module unchanged since it last ran


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
) -> ir.Module:
    """Run the named passes in order on ``module`` (in place); returns it."""
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
    clean: set[str] = set()  # idempotent passes that ran on the module as it is now
    for i, name in enumerate(names, 1):
        before = count_ops(module) if stats is not None else 0
        if name in clean:
            if stats is not None:
                stats.append(PassStat(name, 0.0, before, before, skipped=True))
            continue
        t0 = time.perf_counter()
        with module.context, ir.Location.unknown(module.context):  # a default for builders
            changed = PASSES[name](module, options)
        dt = time.perf_counter() - t0
        if changed is not False:
            clean = set()
        if name in IDEMPOTENT:
            clean.add(name)
        if verify:
            module.operation.verify()
        if stats is not None:
            stats.append(PassStat(name, dt, before, count_ops(module)))
        if dump_dir:
            _dump(module, dump_dir, f"{tag}_{i:02d}_{name}.mlir")
    return module


def _dump(module: ir.Module, d: str, fname: str) -> None:
    with open(os.path.join(d, fname), "w") as f:
        f.write(module.operation.get_asm(enable_debug_info=False, large_elements_limit=64))
