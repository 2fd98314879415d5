"""Named optimization levels. A pipeline is a list of pass names (see ``passes.PASSES``).

``compile_pipeline(level)`` is what ``@reactant.compile`` runs: optimize, then expand the
automatic-differentiation ops, then optimize again (differentiating optimized IR is what
makes some gradients asymptotically cheaper).
"""

from __future__ import annotations

from . import autodiff, builtin_passes, eqsat, inline, patterns, reroll, tiling  # noqa: F401  (register passes)

LEVELS: dict[str, list[str]] = {
    "O0": [],
    "O1": ["inline", "reroll", "canonicalize", "patterns", "cse"],
    "O2": ["inline", "reroll", "canonicalize", "patterns", "eqsat", "patterns", "cse"],
    "O3": ["inline", "reroll", "canonicalize", "patterns", "eqsat_o3", "patterns", "cse"],
}

# Passes that only pay once the program is final (they make loops the AD pass would have to
# differentiate): run at the end of a level, after AD expansion in the compile pipeline.
LATE: dict[str, list[str]] = {"O0": [], "O1": ["scatter_tiling", "cse"], "O2": ["scatter_tiling", "cse"],
                              "O3": ["scatter_tiling", "cse"]}


def pipeline(level: str | list[str]) -> list[str]:
    """The pass list of an optimization level (``"O0"``..``"O3"``) or an explicit list."""
    if isinstance(level, (list, tuple)):
        return list(level)
    return _level(level) + LATE[level]


def _level(level: str) -> list[str]:
    if level not in LEVELS:
        raise KeyError(f"unknown optimization level {level!r}; known: {sorted(LEVELS)}")
    return list(LEVELS[level])


# Left out before AD expansion at a named level: equality saturation prices the primal
# alone, not the program AD makes of it, and the pass after AD sees primal and derivative
# together. Measured on the 17 gradient workloads (benchmarks/workloads.py): 13 final programs
# identical, the other 4 (normalize_*, transpose_matmul) running 0.98-1.01x; the pre-AD
# saturation cost 0.1-1 s of first call (a data-parallel MLP step's compile: 0.4 s of 1 s).
SATURATION = frozenset({"eqsat", "eqsat_o3"})  # the equality-saturation passes


def compile_pipeline(level: str | list[str], *, has_autodiff: bool = True) -> list[str]:
    """optimize -> expand AD -> optimize (+ late passes), for ``level``. Always inlines, and
    always expands AD ops (XLA cannot run them), even at O0. Without AD markers, optimizing
    once is enough. At a named level equality saturation runs after AD only (``SATURATION``);
    an explicit pass list runs as given on both sides."""
    if isinstance(level, (list, tuple)):
        opt, late = list(level), []
        before = opt
    else:
        opt, late = _level(level), LATE[level]
        before = [p for p in opt if p not in SATURATION]
    pre = opt if opt else ["inline"]
    if not has_autodiff:
        return pre + late
    return (before if before else ["inline"]) + ["autodiff"] + opt + late
