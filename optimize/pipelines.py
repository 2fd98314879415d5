"""Named optimization levels. A pipeline is a list of pass names (see ``passes.PASSES``).

``compile_pipeline(level)`` is what ``@reactant.compile`` runs: optimize, then expand the
automatic-differentiation ops, then optimize again (differentiating optimized IR is what
makes some gradients asymptotically cheaper).
"""

from __future__ import annotations

from . import autodiff, builtin_passes, eqsat, inline, patterns  # noqa: F401  (register passes)

LEVELS: dict[str, list[str]] = {
    "O0": [],
    "O1": ["inline", "canonicalize", "patterns", "cse"],
    "O2": ["inline", "canonicalize", "patterns", "eqsat", "patterns", "cse"],
    "O3": ["inline", "canonicalize", "patterns", "eqsat_o3", "patterns", "cse"],
}


def pipeline(level: str | list[str]) -> list[str]:
    """The pass list of an optimization level (``"O0"``..``"O3"``) or an explicit list."""
    if isinstance(level, (list, tuple)):
        return list(level)
    if level not in LEVELS:
        raise KeyError(f"unknown optimization level {level!r}; known: {sorted(LEVELS)}")
    return list(LEVELS[level])


def compile_pipeline(level: str | list[str], *, has_autodiff: bool = True) -> list[str]:
    """optimize -> expand AD -> optimize, for ``level``. Always inlines, and always expands
    AD ops (XLA cannot run them), even at O0. Without AD markers, optimizing once is enough."""
    opt = pipeline(level)
    pre = opt if opt else ["inline"]
    if not has_autodiff:
        return pre
    return pre + ["autodiff"] + opt
