"""Equality saturation over StableHLO with egglog.

The pass ``eqsat`` (and ``eqsat_o3``, with four times the budgets) encodes each function
body (and while/if/case region) segment by segment into an egglog e-graph (``encode``;
term language in ``lang``), runs the rewrite rules (``rules``) one iteration at a time
under node, time and iteration limits, extracts the cheapest equivalent program with a
fusion-aware cost model calibrated on this machine (``cost``; DAG-aware extraction in
``extract``) and rebuilds it in place (``rebuild``) when it is strictly cheaper.

Budgets come from ``PassOptions``: ``saturation_node_limit``, ``saturation_time_limit``
(seconds per segment), ``saturation_iterations``, ``fast_math``; ``options.extra`` may set
``eqsat_max_segment_ops``, ``eqsat_total_time`` (seconds per pass) and
``eqsat_dag_extract_limit``, ``eqsat_extract_time`` (seconds of extraction search per
segment). ``last_report()`` returns the statistics of the latest run.
"""

from __future__ import annotations

from ..passes import PassOptions, register_pass
from .driver import EqsatReport, Limits, SegmentStat, run_eqsat  # noqa: F401

_last: list[EqsatReport | None] = [None]


def limits_from_options(options: PassOptions, scale: float = 1.0) -> Limits:
    ex = options.extra or {}
    return Limits(
        node_limit=int(options.saturation_node_limit * scale),
        time_limit=float(options.saturation_time_limit * scale),
        iterations=int(options.saturation_iterations * (2 if scale > 1 else 1)),
        max_segment_ops=int(ex.get("eqsat_max_segment_ops", 300 * (2 if scale > 1 else 1))),
        total_time=float(ex.get("eqsat_total_time", 4.0 * options.saturation_time_limit * scale)),
        fast_math=bool(options.fast_math),
        dag_extract_limit=int(ex.get("eqsat_dag_extract_limit", 6_000)),
        extract_time=float(ex.get("eqsat_extract_time", 0.4 * scale)),
    )


def last_report() -> EqsatReport | None:
    """Statistics of the most recent eqsat pass in this process."""
    return _last[0]


@register_pass("eqsat")
def eqsat_pass(module, options: PassOptions) -> None:
    """Equality saturation with a calibrated cost model (default budgets)."""
    _last[0] = run_eqsat(module, limits_from_options(options))


@register_pass("eqsat_o3")
def eqsat_o3_pass(module, options: PassOptions) -> None:
    """Equality saturation with four times the budgets of ``eqsat``."""
    _last[0] = run_eqsat(module, limits_from_options(options, scale=4.0))
