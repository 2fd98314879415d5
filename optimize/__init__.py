"""reactant.optimize: transformations of StableHLO modules (any module, not only traced
ones): the pass registry, rewrite patterns, equality saturation, automatic differentiation
and named pipelines ``O0``..``O3``. Command line: ``python -m reactant.optimize``."""

from ..ir.context import count_ops  # noqa: F401  (public: ops in a module)
from .passes import PASSES, InvalidModuleError, PassOptions, PassStat, register_pass, run_pipeline, verify_module  # noqa: F401
from .pipelines import LEVELS, compile_pipeline, pipeline  # noqa: F401


def optimize(module, level="O2", options: PassOptions | None = None, stats=None):
    """Optimize ``module`` (an ``ir.Module``) in place at ``level``; returns it."""
    return run_pipeline(module, pipeline(level), options, stats=stats)
