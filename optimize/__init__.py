"""reactant.optimize: transformations of StableHLO modules (any module, not only traced
ones): the pass registry, rewrite patterns, equality saturation, automatic differentiation
and named pipelines ``O0``..``O3``. Command line: ``python -m reactant.optimize``."""

from .passes import PASSES, PassOptions, PassStat, count_ops, register_pass, run_pipeline  # noqa: F401
from .pipelines import LEVELS, compile_pipeline, pipeline  # noqa: F401


def optimize(module, level="O2", options: PassOptions | None = None, stats=None):
    """Optimize ``module`` (an ``ir.Module``) in place at ``level``; returns it."""
    return run_pipeline(module, pipeline(level), options, stats=stats)
