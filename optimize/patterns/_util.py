"""Analyses shared by the pattern families: reduction identities of init values, broadcast
sources, and value ranges of integer index computations. Types, constants, op facts,
evaluation, loops and builders come from ``reactant.ir``."""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import attrs as _attrs
from ...ir.loops import WhileLoopInfo, analyze, int_range, loop_counter_range  # noqa: F401  (int_range: used by the patterns)
from ...ir.opinfo import reduce_identity
from ...ir.types import element_type_of
from ._registry import once_per_visit


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


def loop_facts(w) -> WhileLoopInfo | None:
    """``analyze(w)``, once per visit of the driver: the patterns of a while loop each ask for
    its counter, trip count and ranges."""
    return once_per_visit("loop_facts", w.operation, lambda: analyze(w))


def scalar_value(v: ir.Value):
    """``reactant.ir.attrs.scalar_value``, once per operand and visit (the patterns of an op ask
    it of the same operands: x * 1, x * -1, x * 0, (-x) * c ...)."""
    return once_per_visit("scalar_value", v, lambda: _attrs.scalar_value(v))


def is_scalar_value(v: ir.Value, value) -> bool:
    """``reactant.ir.attrs.is_scalar_value`` through the visit's ``scalar_value``."""
    return _attrs.scalar_matches(scalar_value(v), value)
