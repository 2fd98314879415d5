"""Whether a ``for i in range(n)`` over plain ints becomes one ``stablehlo.while``.

Unrolling a loop over plain ints is always faithful to Python but costs trip count × body
size ops, traced, optimized and compiled one by one. Rolling it keeps one body. With the
default ``loops="auto"`` each such loop is *tried* as a ``stablehlo.while`` with a traced
index, inside a scratch op so that the attempt can be thrown away; it is kept when

- the body's statements change no Python object (no ``lst.append(...)``, attribute or
  container stores: found in the source by ``python_effects``), nor does the code it calls
  change plain Python values (a counter in a method: ``aliases.PythonState.changed``);
  attributes it rebinds to arrays are carried like variables (``autograph.loops``),
- tracing the body with a traced index succeeds (a body that needs the index as a Python
  int, e.g. ``range(i)`` bounds in NumPy calls, ``int(i)``, raises and falls back),
- no carried variable that starts as a Python/NumPy value would have stayed one when
  unrolled (a counter ``k += 1`` stays a Python int: ``host_carries_stay_static``),
- and the unrolled program would be large: trip count × body ops ≥ ``ROLL_MIN_OPS``, or the
  body rewrites a large window of an array in place (``ROLL_MIN_WINDOW`` elements: a stencil
  time loop, which XLA runs faster as a loop than fused across unrolled steps), or unrolled it
  would make ``ROLL_MAX_UPDATES`` in-place updates and inner loops or ``ROLL_MAX_KERNELS``
  reductions and products, each compiled by XLA on its own (a small loop the optimizer turns
  into tensor operations stays a loop too).

Otherwise the loop is unrolled. ``loops="keep"`` / ``reactant.keep(n)`` force a while (an
error if the body cannot be traced with a traced index), ``loops="unroll"`` /
``reactant.unroll(n)`` force unrolling. With ``REACTANT_LOG=1`` each decision is printed
with its reason.
"""

from __future__ import annotations

import ast
from contextlib import contextmanager
from typing import Iterator

from jaxlib.mlir import ir

from ..ir.opinfo import info
from ..ir.regions import walk_nested
from ..ir.types import num_elements
from .context import TraceContext
from .aliases import PythonState
from .escape import Checkpoint

# Unrolled size (trip count × body ops) from which a rollable loop stays a loop. Below it
# the unrolled program is small, and XLA fuses straight-line code better than a loop body.
ROLL_MIN_OPS = 1000
# ... except a time loop that rewrites windows of a large array in place (stencil sweeps): XLA
# fuses the unrolled steps into one pass that recomputes every neighbour of every step (a 3-D
# heat equation, 10 steps on 32^3: 0.98 ms unrolled, 0.59 ms as a loop, as jax.lax.fori_loop).
ROLL_MIN_WINDOW = 4096  # elements of one in-place window update
# ... and a loop whose iterations write into an array in place, one after the other, or run a
# loop of their own: XLA compiles each unrolled in-place update (a dynamic_update_slice) or
# inner loop on its own, 20-30 ms apiece (a Gauss-Seidel sweep of 14 updates: 400 ms unrolled,
# 31 ms as a loop).
ROLL_MAX_UPDATES = 4  # in-place updates and inner loops of an unrolled loop: from 4, a loop
# ... and one whose iterations run ops XLA compiles as kernels of their own (reductions, products,
# 5-8 ms of XLA's compile apiece, and as many traces and pattern visits here): k-means' 5 steps of
# 4 reductions, 0.18 s first call and 62 us per call unrolled, 0.13 s and 40 us as a loop
ROLL_MAX_KERNELS = 8  # such ops of an unrolled loop: from 8, a loop

LOOP_MODES = ("auto", "keep", "unroll")


class KeepLoop(int):
    """``range(reactant.keep(n))``: this loop becomes a ``stablehlo.while``."""


class UnrollLoop(int):
    """``range(reactant.unroll(n))``: this loop is unrolled."""


def keep(n):
    """``for i in range(reactant.keep(n))``: emit this loop as a ``stablehlo.while`` even though
    its bounds are plain ints (an error if the body needs the index as a Python int)."""
    return KeepLoop(n)


def unroll(n):
    """``for i in range(reactant.unroll(n))``: unroll this loop (trace the body once per
    iteration with a Python int index), whatever the automatic choice would be."""
    return UnrollLoop(n)


# -- what the body does to Python objects (from its source) ----------------------------------
class _Effects(ast.NodeVisitor):
    """The first statement of a loop body that changes a Python object other than by binding a
    name: a call used as a statement, a store into an attribute or into an expression."""

    def __init__(self):
        self.found: str | None = None

    def _note(self, node, what: str):
        if self.found is None:
            self.found = f"{what} at line {node.lineno}"

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Call):
            self._note(node, f"the call {ast.unparse(node.value.func)}(...) as a statement")
        self.generic_visit(node)

    def _targets(self, node, targets):
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                    self._note(node, f"the attribute store {ast.unparse(n)} = ...")
                elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) \
                        and not isinstance(n.value, ast.Name):
                    self._note(node, f"the item store {ast.unparse(n)} = ...")
        self.generic_visit(node)

    def visit_Assign(self, node):
        self._targets(node, node.targets)

    def visit_AugAssign(self, node):
        self._targets(node, [node.target])

    def visit_AnnAssign(self, node):
        self._targets(node, [node.target])

    def visit_Delete(self, node):
        self._note(node, "a del statement")

    def visit_With(self, node):
        self._note(node, "a with statement")

    visit_AsyncWith = visit_With

    def visit_Try(self, node):
        self._note(node, "a try statement")

    visit_TryStar = visit_Try

    def visit_FunctionDef(self, node):
        pass  # defining a function changes nothing; calling it is seen where it is called

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef


def python_effects(body: list) -> str | None:
    """Why running ``body`` once with a traced index is not the same as running it for every
    index: the first statement changing a Python object, or None."""
    v = _Effects()
    for stmt in body:
        v.visit(stmt)
    return v.found


# -- attempts that can be thrown away -----------------------------------------------------------
@contextmanager
def attempt(tc: TraceContext) -> Iterator["Attempt"]:
    """Trace into a scratch op; ``a.commit()`` moves what was traced into place, anything else
    (including an exception) erases it and undoes the in-place rebindings and function
    caches of the attempt."""
    a = Attempt(tc)
    try:
        with tc.insert_into(a.block):
            yield a
    except BaseException:
        a.discard()
        raise
    else:
        if not a.committed:
            a.discard()


class Attempt:
    def __init__(self, tc: TraceContext):
        self.tc = tc
        self.holder = ir.Operation.create("reactant.scratch", results=[], operands=[], regions=1,
                                          loc=tc.unknown_loc, ip=tc.ip)
        self.block = self.holder.regions[0].blocks.append()
        self.checkpoint = Checkpoint(tc)
        self.raised_mark = len(tc.raised_loops)  # (the loops marked inside go with the attempt)
        self.python_state = PythonState()
        self.committed = False
        self.done = False
        # loop decisions made inside the attempt: reported only if it is kept
        self.messages: list[str] = []
        self.outer_log = tc.log
        if tc.log is not None:
            tc.log = self.messages.append

    def commit(self) -> None:
        for op in list(self.block.operations):
            op.move_before(self.holder)
        self.holder.erase()
        self.committed = self.done = True
        self._close_log()

    def _close_log(self) -> None:
        if self.outer_log is not None:
            self.tc.log = self.outer_log
            if self.committed:
                for m in self.messages:
                    self.outer_log(m)

    def discard(self) -> None:
        if self.done:
            return
        self.done = True
        self._close_log()
        self.python_state.restore()
        del self.tc.raised_loops[self.raised_mark:]
        self.checkpoint.undo("the loop body it was made in ended (it was kept in a list or attribute; carry "
                             "values out of loops in variables)", erase=self.holder)


# -- facts about a traced while -------------------------------------------------------------------
def body_op_count(while_op) -> int:
    """Ops in the condition and body of a while, nested ones included."""
    n = [0]

    def visit(_op):
        n[0] += 1

    walk_nested(while_op, visit)
    return n[0]


def updates_large_windows(while_op, min_elements: int = ROLL_MIN_WINDOW) -> bool:
    """Whether the loop body writes a window of at least ``min_elements`` elements into an
    array in place (a ``dynamic_update_slice`` with an update that large)."""
    found = [False]

    def visit(op):
        if op.name == "stablehlo.dynamic_update_slice":
            if num_elements(op.operands[1]) >= min_elements:
                found[0] = True

    walk_nested(while_op, visit)
    return found[0]


def in_place_updates(while_op, raised: list = ()) -> int:
    """How many in-place updates (``dynamic_update_slice`` of a part of an array) and loops
    (but those in ``raised``: small loops that become tensor operations) one iteration of the
    loop runs in its own body: unrolled, XLA compiles each copy of one on its own."""
    body = while_op.regions[1].blocks[0]
    n = 0
    for o in body.operations:
        name = o.operation.name
        if name == "stablehlo.dynamic_update_slice":
            # (an update of the whole array is a new array: XLA fuses it like any other op)
            n += num_elements(o.operands[1]) < num_elements(o.operands[0])
        elif name == "stablehlo.while":
            n += not any(_same_op(o.operation, r) for r in raised)
    return n


def own_kernels(while_op) -> int:
    """How many ops of the loop's own body XLA compiles as kernels of their own (a reduction, a
    product, a sort: ``ir.opinfo``): they fuse with nothing across iterations, so unrolled
    each copy is one more kernel to compile, and to trace and optimize before that."""
    body = while_op.regions[1].blocks[0]
    return sum(info(o.operation.name).own_kernel for o in body.operations)


def _same_op(a, b) -> bool:
    try:
        return a == b
    except RuntimeError:  # (an op erased through its own handle: not a loop of this body)
        return False


def host_carries_stay_static(while_op, candidates: list[int], counter: int) -> list[int]:
    """The carried slots among ``candidates`` (slots whose initial value was a Python or NumPy
    value) that the unrolled loop would have kept as Python/NumPy values: their new value is
    computed from constants, the loop index (slot ``counter``) and such slots only, never from
    traced data. Conservative: unknown means static (the caller then unrolls)."""
    body = while_op.regions[1].blocks[0]
    args = list(body.arguments)
    term = body.operations[len(body.operations) - 1]
    yields = list(term.operands)
    static = set(candidates)
    while True:
        dyn_args = {a for k, a in enumerate(args) if k != counter and k not in static}
        memo: dict = {}
        changed = [k for k in static if _dynamic(yields[k], dyn_args, args, memo, while_op)]
        if not changed:
            return sorted(k for k in static if yields[k] != args[k])
        static -= set(changed)


def _dynamic(v: ir.Value, dyn_args: set, args: list, memo: dict, loop) -> bool:
    """Whether ``v`` (inside the loop body) depends on traced data: a dynamic block argument,
    a non-constant value from outside the loop, or (for ops with regions) such a value used
    inside them. Iterative: bodies can be long chains."""
    stack = [v]
    order = []
    while stack:
        x = stack.pop()
        if x in memo:
            continue
        owner = x.owner
        if isinstance(owner, ir.Block):
            memo[x] = x in dyn_args if x in args else not _defined_in(owner.owner, loop)
            continue
        op = owner
        if not _defined_in(op, loop):
            memo[x] = op.name != "stablehlo.constant"
            continue
        deps = list(op.operands)
        if len(op.regions):
            from ..ir.regions import captured_values

            deps += captured_values(op)
        pending = [d for d in deps if d not in memo]
        if pending:
            stack.append(x)
            stack.extend(pending)
            continue
        memo[x] = any(memo[d] for d in deps)
        order.append(x)
    return memo[v]


def _defined_in(op, loop) -> bool:
    o, loop = op.operation, loop.operation
    while o is not None:
        if o == loop:
            return True
        o = o.parent
    return False
