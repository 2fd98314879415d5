"""The derivative rule table: one entry per op name.

Each entry is a :class:`Rule` with

* ``fwd(cx, op, tangents) -> [tangent per result]`` (JVP): ``tangents`` has one entry per
  operand, ``None`` meaning a zero tangent (the operand is not active);
* ``rev(cx, op, cts, want) -> [cotangent per operand]`` (VJP): ``cts`` has one entry per
  result (``None``: zero), ``want[i]`` says whether operand ``i`` needs its cotangent (the
  rule may return ``None`` for the others).

``op`` is the *source* op (its attributes and types are read from it); ``cx.get(v)`` gives
the primal value to use for the source value ``v`` at the current insertion point (in a
reverse loop this may be a cached or rematerialized value). Rules build at the ambient
insertion point and location with :mod:`.emit`.

Ops in :data:`NONDIFF` have zero derivative (their results never carry derivatives).
Control flow (``stablehlo.while``/``if``/``case``) is listed with ``kind="control"``: the
AD engines expand it (``forward.py``, ``reverse.py``, ``loops.py``); ``func.call`` is
inlined before differentiation. The table is filled by the ``rules_*`` modules, one op
family each; registering an op twice is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...ir import build as B
from ...ir.custom_derivatives import STOP_GRADIENT, target_of


@dataclass(frozen=True)
class Rule:
    fwd: Callable | None
    rev: Callable | None
    kind: str = "rule"  # "rule" | "control"


RULES: dict[str, Rule] = {}

NONDIFF = frozenset({
    # comparisons, predicates, integer/bit ops
    "stablehlo.compare", "stablehlo.is_finite", "stablehlo.and", "stablehlo.or", "stablehlo.not",
    "stablehlo.xor", "stablehlo.shift_left", "stablehlo.shift_right_arithmetic",
    "stablehlo.shift_right_logical", "stablehlo.popcnt", "stablehlo.count_leading_zeros",
    # piecewise constant
    "stablehlo.floor", "stablehlo.ceil", "stablehlo.sign", "stablehlo.round_nearest_afz",
    "stablehlo.round_nearest_even",
    # sources and metadata
    "stablehlo.constant", "stablehlo.iota", "stablehlo.rng", "stablehlo.rng_bit_generator",
    "stablehlo.get_dimension_size", "stablehlo.partition_id", "stablehlo.replica_id",
    "stablehlo.create_token", "stablehlo.after_all", "stablehlo.bitcast_convert",
    "chlo.is_inf", "chlo.is_neg_inf", "chlo.is_pos_inf", "chlo.next_after", "chlo.constant",
    "chlo.constant_like",
    # the AD pass' own temporaries
    "enzyme.placeholder", "enzyme.sentinel",
})


def register(name: str, fwd: Callable | None, rev: Callable | None, kind: str = "rule") -> None:
    if name in RULES or name in NONDIFF:
        raise ValueError(f"derivative rule for {name} registered twice")
    RULES[name] = Rule(fwd, rev, kind)


# stablehlo.custom_call rules by call target (the decomposition markers)
CUSTOM_CALLS: dict[str, Rule] = {}


def register_custom_call(target: str, fwd: Callable | None, rev: Callable | None) -> None:
    if target in CUSTOM_CALLS:
        raise ValueError(f"derivative rule for custom_call @{target} registered twice")
    CUSTOM_CALLS[target] = Rule(fwd, rev)


def stops_derivative(op) -> bool:
    """Whether ``op``'s results never carry derivatives although it is not in NONDIFF (the
    ``stop_gradient`` marker): activity analysis stops there."""
    return op.name == "stablehlo.custom_call" and target_of(op) == STOP_GRADIENT


# ---------------------------------------------------------------------------------------------
# helpers shared by the rule modules (zero tangents are None)


def tadd(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return B.add(a, b)


def tsub(a, b):
    if b is None:
        return a
    if a is None:
        return B.negate(b)
    return B.subtract(a, b)


def tmul(t, c):
    return None if t is None else B.multiply(t, c)


def tneg(t):
    return None if t is None else B.negate(t)


def or_zeros(t, like_value):
    return B.zeros(like_value.type) if t is None else t


def prim(cx, op, i: int):
    return cx.get(op.operands[i])


def res(cx, op, j: int = 0):
    return cx.get(op.results[j])


def table() -> dict[str, str]:
    """``op name -> "fwd+rev" | "control" | "nondiff"`` for reports and tests."""
    out = {}
    for n, r in sorted(RULES.items()):
        if r.kind == "control":
            out[n] = "control"
        else:
            out[n] = "+".join(x for x, f in (("fwd", r.fwd), ("rev", r.rev)) if f is not None)
    for n in sorted(NONDIFF):
        out[n] = "nondiff"
    return out


# fill the table (modules import ``register`` from here)
from . import rules_elementwise  # noqa: E402,F401
from . import rules_shape  # noqa: E402,F401
from . import rules_reduce  # noqa: E402,F401
from . import rules_index  # noqa: E402,F401
from . import rules_linalg  # noqa: E402,F401
from . import rules_control  # noqa: E402,F401
from . import rules_decompositions  # noqa: E402,F401
from . import rules_collective  # noqa: E402,F401
from . import rules_custom  # noqa: E402,F401
