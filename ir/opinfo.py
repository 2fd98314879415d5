"""One table of facts per StableHLO op name (``OPS``): arity, elementwise, commutative, purity
(side effects), collective, reduction kind and identity, cost classes (transcendental, cheap,
data movement), and its NumPy kernel (``reactant.ir.kernels``).

Every classification the layers need reads this table (the rewrite patterns, equality
saturation's language and cost model, the loop analyses, rerolling, the AD pass, scatter
tiling, the manual computations' variance), so an op's facts are written once. Ops missing
from the table are treated conservatively: not elementwise, not pure.
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
    # no side effects (ops with regions: when their bodies are pure too); an impure op (I/O, a
    # random state, a custom call, communication between devices) is never removed, moved,
    # duplicated or rolled into a loop
    pure: bool = True
    collective: bool = False  # communicates between the devices of an SPMD program (impure)
    transcendental: bool = False  # a math-library call per element (cost model)
    # as the body of a reduction (it has an identity): "add", "mul", "max", "min", "and", "or"
    reduce_kind: str | None = None
    cheap: bool = False  # fused by XLA into its consumers: not worth hoisting on its own
    # moves or converts one operand's elements, no arithmetic (reshape, broadcast, transpose,
    # slice, convert): recomputing it from its operand beats storing it (the AD pass
    # recomputes rather than tapes it)
    move: bool = False
    # XLA compiles it as a kernel of its own, never fused into an elementwise loop (a dot, a
    # reduction, a sort): what its copies cost to compile counts ``KERNEL_WEIGHT`` ops each
    own_kernel: bool = False
    kernel: Callable | None = None  # elementwise kernel on NumPy arrays (reactant.ir.kernels)

    @property
    def short(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def reducible(self) -> bool:
        """Can be the body of a reduction (has an identity)."""
        return self.reduce_kind is not None


def _table() -> dict[str, OpInfo]:
    ops: dict[str, OpInfo] = {}

    def add(short: str, **kw):
        ops["stablehlo." + short] = OpInfo("stablehlo." + short, **kw)

    transcendental = {"cosine", "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic",
                      "rsqrt", "sine", "sqrt", "cbrt", "tan", "tanh", "power", "atan2", "divide", "remainder"}
    commutative = {"add", "multiply", "maximum", "minimum", "and", "or", "xor"}
    reduce_kinds = {"add": "add", "multiply": "mul", "maximum": "max", "minimum": "min", "and": "and", "or": "or"}
    for short, fn in K.UNARY.items():
        add(short, arity=1, elementwise=True, transcendental=short in transcendental, kernel=fn)
    for short, fn in K.BINARY.items():
        add(short, arity=2, elementwise=True, commutative=short in commutative,
            transcendental=short in transcendental, reduce_kind=reduce_kinds.get(short), kernel=fn)
    for short in ("real", "imag", "reduce_precision"):
        add(short, arity=1, elementwise=True)
    add("complex", arity=2, elementwise=True)
    add("convert", arity=1, elementwise=True, cheap=True, move=True)
    add("bitcast_convert", arity=1, cheap=True)  # to another width it adds or drops a dimension
    add("compare", arity=2, elementwise=True)
    add("select", arity=3, elementwise=True)
    add("clamp", arity=3, elementwise=True)
    for short in ("constant", "iota"):
        add(short, arity=0, cheap=True)
    for short in ("broadcast_in_dim", "broadcast", "reshape"):  # (broadcast: the legacy form)
        add(short, arity=1, cheap=True, move=True)
    for short in ("transpose", "slice"):
        add(short, arity=1, move=True)
    for short in ("reverse", "dynamic_slice", "dynamic_update_slice", "concatenate",
                  "pad", "gather", "get_tuple_element", "tuple", "while", "if", "case", "map",
                  "dynamic_broadcast_in_dim", "dynamic_reshape", "dynamic_iota", "get_dimension_size",
                  "real_dynamic_slice", "dynamic_pad", "dynamic_gather", "return"):
        add(short)
    for short in ("dot_general", "dot", "convolution", "reduce", "reduce_window", "sort", "scatter",
                  "select_and_scatter", "fft", "cholesky", "triangular_solve"):
        add(short, own_kernel=True)
    for short in ("custom_call", "rng", "rng_bit_generator", "infeed", "outfeed", "send", "recv",
                  "optimization_barrier", "create_token", "after_all", "partition_id", "replica_id"):
        add(short, pure=False)
    for short in ("all_reduce", "all_gather", "all_to_all", "reduce_scatter", "collective_permute",
                  "collective_broadcast"):
        add(short, pure=False, collective=True)
    for name in ("chlo.erf", "chlo.erf_inv", "chlo.lgamma", "chlo.digamma"):
        ops[name] = OpInfo(name, arity=1, elementwise=True, transcendental=True)
    return ops


OPS: dict[str, OpInfo] = _table()
_UNKNOWN_IMPURE = OpInfo("?", pure=False)

# what an op XLA compiles as a kernel of its own counts, in ops, toward the size of unrolled
# code: on CPU each costs XLA 5-8 ms to compile, a fused elementwise op ~0.5 ms (jax 0.10.2,
# chains of 8 vs 32 steps)
KERNEL_WEIGHT = 16

CONTROL_FLOW = frozenset(("stablehlo.while", "stablehlo.if", "stablehlo.case"))
ELEMENTWISE = frozenset(n for n, i in OPS.items() if i.elementwise)


def info(name: str) -> OpInfo:
    """The facts of op ``name`` (an impure, non-elementwise entry for unknown ops)."""
    return OPS.get(name, _UNKNOWN_IMPURE)


def compile_weight(name: str) -> int:
    """Op ``name``'s share of XLA's compile time, in fused elementwise ops."""
    return KERNEL_WEIGHT if info(name).own_kernel else 1


def has_effect(name: str) -> bool:
    """Op ``name`` is in the table with a side effect (unknown ops are not counted: callers
    that must be conservative about them use ``info(name).pure``)."""
    i = OPS.get(name)
    return i is not None and not i.pure


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


def combiner(op) -> ir.Operation | None:
    """The op ``f`` of ``op``'s first region when that is one block ``^(a, b): return f(a, b)``
    (either order): what a single-value reduce, reduce_window, all_reduce, reduce_scatter or
    scatter combines with (read its ``reduce_kind`` from the table)."""
    blocks = op.regions[0].blocks
    if len(blocks) != 1:
        return None
    block = blocks[0]
    ops = list(block.operations)
    args = list(block.arguments)
    if len(ops) != 2 or len(args) != 2:
        return None
    f, ret = ops[0].operation, ops[1].operation
    if ret.name != "stablehlo.return" or len(ret.operands) != 1 or len(f.operands) != 2 or len(f.results) != 1:
        return None
    if ret.operands[0] != f.results[0]:
        return None
    if {f.operands[0], f.operands[1]} != {args[0], args[1]} or f.operands[0] == f.operands[1]:
        return None
    return f


def reduce_body_kind(op) -> str | None:
    """For a single-input ``stablehlo.reduce`` whose body is ``return f(arg0, arg1)`` (either
    order) with ``f`` a reducible op (add, multiply, maximum, minimum, and, or) without
    attributes: ``f``'s name."""
    if op.operation.name != "stablehlo.reduce" or len(op.operands) != 2:
        return None
    f = combiner(op)
    if f is None or not info(f.name).reducible or len(f.attributes):
        return None
    return f.name


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
