"""One table of facts per StableHLO op name (``OPS``): arity, elementwise, commutative, purity,
reduction kind and identity, cost class, and its NumPy kernel (``reactant.ir.kernels``).

Every classification the layers need reads this table (the rewrite patterns, equality
saturation's language and cost model, the loop analyses, the AD pass, scatter tiling), so an
op's facts are written once. Ops missing from the table are treated conservatively: not
elementwise, not pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from jaxlib.mlir import ir

from . import kernels as K
from .types import np_dtype


@dataclass(frozen=True)
class OpInfo:
    name: str  # "stablehlo.add"
    arity: int | None = None  # number of operands (None: variadic or with regions)
    elementwise: bool = False  # each result element depends on the same-index operand elements
    commutative: bool = False
    pure: bool = True  # no side effects (ops with regions: when their bodies are pure too)
    transcendental: bool = False  # a math-library call per element (cost model)
    reducible: bool = False  # can be the body of a reduction (has an identity)
    cheap: bool = False  # fused by XLA into its consumers: not worth hoisting on its own
    kernel: Callable | None = None  # elementwise kernel on NumPy arrays (reactant.ir.kernels)

    @property
    def short(self) -> str:
        return self.name.split(".", 1)[1]


def _table() -> dict[str, OpInfo]:
    ops: dict[str, OpInfo] = {}

    def add(short: str, **kw):
        ops["stablehlo." + short] = OpInfo("stablehlo." + short, **kw)

    transcendental = {"cosine", "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic",
                      "rsqrt", "sine", "sqrt", "cbrt", "tan", "tanh", "power", "atan2", "divide", "remainder"}
    commutative = {"add", "multiply", "maximum", "minimum", "and", "or", "xor"}
    reducible = {"add", "multiply", "maximum", "minimum", "and", "or"}
    for short, fn in K.UNARY.items():
        add(short, arity=1, elementwise=True, transcendental=short in transcendental, kernel=fn)
    for short, fn in K.BINARY.items():
        add(short, arity=2, elementwise=True, commutative=short in commutative,
            transcendental=short in transcendental, reducible=short in reducible, kernel=fn)
    for short in ("real", "imag", "reduce_precision"):
        add(short, arity=1, elementwise=True)
    add("complex", arity=2, elementwise=True)
    add("convert", arity=1, elementwise=True, cheap=True)
    add("bitcast_convert", arity=1, cheap=True)  # to another width it adds or drops a dimension
    add("compare", arity=2, elementwise=True)
    add("select", arity=3, elementwise=True)
    add("clamp", arity=3, elementwise=True)
    for short in ("constant", "iota"):
        add(short, arity=0, cheap=True)
    add("broadcast_in_dim", arity=1, cheap=True)
    add("reshape", arity=1, cheap=True)
    for short in ("transpose", "slice", "reverse", "dynamic_slice", "dynamic_update_slice", "concatenate",
                  "pad", "dot_general", "dot", "reduce", "gather", "scatter", "select_and_scatter", "sort",
                  "reduce_window", "convolution", "get_tuple_element", "tuple", "while", "if", "case", "map",
                  "dynamic_broadcast_in_dim", "dynamic_reshape", "dynamic_iota", "get_dimension_size",
                  "real_dynamic_slice", "dynamic_pad", "dynamic_gather", "return", "fft", "cholesky",
                  "triangular_solve"):
        add(short)
    for short in ("custom_call", "rng", "rng_bit_generator", "infeed", "outfeed", "send", "recv", "all_reduce",
                  "all_gather", "all_to_all", "reduce_scatter", "collective_permute", "collective_broadcast",
                  "optimization_barrier", "create_token", "after_all", "partition_id", "replica_id"):
        add(short, pure=False)
    for name in ("chlo.erf", "chlo.erf_inv", "chlo.lgamma", "chlo.digamma"):
        ops[name] = OpInfo(name, arity=1, elementwise=True, transcendental=True)
    return ops


OPS: dict[str, OpInfo] = _table()
_UNKNOWN_IMPURE = OpInfo("?", pure=False)

CONTROL_FLOW = frozenset(("stablehlo.while", "stablehlo.if", "stablehlo.case"))
ELEMENTWISE = frozenset(n for n, i in OPS.items() if i.elementwise)


def info(name: str) -> OpInfo:
    """The facts of op ``name`` (an impure, non-elementwise entry for unknown ops)."""
    return OPS.get(name, _UNKNOWN_IMPURE)


def is_pure_op(op) -> bool:
    """No side effects, recursively through regions (loops and branches included)."""
    o = op.operation
    if not info(o.name).pure:
        return False
    if not len(o.regions):
        return True
    ok = [True]

    def visit(x):
        if not info(x.name).pure:
            ok[0] = False
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    o.walk(visit)
    return ok[0]


def reduce_body_kind(op) -> str | None:
    """For a single-input ``stablehlo.reduce`` whose body is ``return f(arg0, arg1)`` (either
    order) with ``f`` a reducible op (add, multiply, maximum, minimum, and, or): ``f``'s name."""
    if op.operation.name != "stablehlo.reduce" or len(op.operands) != 2:
        return None
    blocks = op.regions[0].blocks
    if len(blocks) != 1:
        return None
    block = blocks[0]
    ops = list(block.operations)
    if len(ops) != 2 or ops[1].operation.name != "stablehlo.return":
        return None
    body = ops[0]
    name = body.operation.name
    if not info(name).reducible or len(body.operands) != 2 or len(body.attributes):
        return None
    args = list(block.arguments)
    if len(args) != 2 or len(ops[1].operands) != 1 or ops[1].operands[0] != body.results[0]:
        return None
    if {body.operands[0], body.operands[1]} != {args[0], args[1]} or body.operands[0] == body.operands[1]:
        return None
    return name


def reduce_identity(kind: str, elem: ir.Type):
    """The identity of reduction ``kind`` (an op name) for element type ``elem`` as a Python
    scalar, or None (complex, or no identity)."""
    dt = np_dtype(elem)
    if dt is None or dt.kind == "c":
        return None
    isf = K.is_float(dt)
    boolean = dt == np.bool_
    short = kind.split(".", 1)[-1]
    if short == "add":
        return 0.0 if isf else (False if boolean else 0)
    if short == "multiply":
        return 1.0 if isf else (True if boolean else 1)
    if short == "maximum":
        return float("-inf") if isf else (False if boolean else int(np.iinfo(dt).min))
    if short == "minimum":
        return float("inf") if isf else (True if boolean else int(np.iinfo(dt).max))
    if short in ("and", "or") and not isf:
        if boolean:
            return short == "and"
        return (-1 if dt.kind == "i" else int(np.iinfo(dt).max)) if short == "and" else 0
    return None
