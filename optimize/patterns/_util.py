"""Analyses shared by the pattern families: reduction identities of init values, broadcast
sources, and value ranges of integer index computations. Types, constants, op facts,
evaluation, loops and builders come from ``reactant.ir``."""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir.attrs import scalar_value
from ...ir.loops import int_range, loop_counter_range  # noqa: F401  (int_range: used by the patterns)
from ...ir.opinfo import reduce_identity
from ...ir.types import element_type_of


def is_reduce_identity(init: ir.Value, kind: str) -> bool:
    """``init`` is the identity of ``kind`` (for add, either float zero: XLA treats a reduce's
    init as an identity that it may apply any number of times)."""
    ident = reduce_identity(kind, element_type_of(init))
    if ident is None:
        return False
    s = scalar_value(init)
    if s is None:
        return False
    if isinstance(ident, float):
        return float(s) == ident
    return s == ident


