"""Automatic differentiation of StableHLO modules (EnzymeMLIR-style), run after optimization.

The ``autodiff`` pass expands the ``enzyme.autodiff`` (reverse mode) and ``enzyme.fwddiff``
(forward mode) marker ops (contract: :mod:`.markers`) into derivative code, using one
derivative rule per op (:mod:`.rules`), activity analysis (:mod:`.activity`), and loop and
branch support (:mod:`.forward`, :mod:`.reverse`, :mod:`.loops`). Works on any StableHLO
module. Options (fields of ``PassOptions``): ``ad_checkpoint`` (``"sqrt"`` or an int period:
periodic checkpointing of loops in reverse mode) and ``ad_max_trip_count`` (an upper bound
for loops whose trip count is not known at compile time), ``ad_vector_forward``.
"""

from __future__ import annotations

from ..passes import PassOptions, register_pass
from .errors import ADError
from .expand import expand_all, expand_marker
from .markers import MarkerSpec, parse_marker
from .rules import NONDIFF, RULES, table


@register_pass("autodiff")
def autodiff_pass(module, options: PassOptions) -> None:
    """Expand every AD marker of ``module`` into derivative code (in place)."""
    expand_all(module, options)


__all__ = ["ADError", "MarkerSpec", "parse_marker", "expand_all", "expand_marker", "RULES", "NONDIFF", "table",
           "autodiff_pass"]
