"""Rewrites of the decomposition markers (``reactant.ir.decompositions``).

``decomposition_reuse``: a values-only decomposition (``svd`` without vectors, ``eig`` without
vectors) of a matrix that is also decomposed with vectors takes its values from that one: a
gradient of ``svdvals``/``eigvals`` needs the vectors, and the primal then paid for a second
LAPACK call (svdvals' gradient 1.2-1.4x jax's, which computes one).

``solve_triangular_factor``: a general solve whose matrix is a Cholesky factor (or its
transpose) is a triangular solve: ``np.linalg.solve(L, y)`` with ``L = np.linalg.cholesky(K)``,
the way NumPy code without SciPy writes the Gaussian-process likelihood, becomes one
``triangular_solve`` (O(n^2) per right-hand side) instead of an LU factorization (O(n^3)) and
two triangular solves. Exact in exact arithmetic; the triangular solve is the more accurate.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir import decompositions as D
from ...ir.attrs import i64_list
from ...ir.types import element_type_of, is_complex_type, rank_of
from ...ir.values import defining_op
from ._registry import pattern, replace

FAMILY = "linalg"


def _triangular_factor(a: ir.Value):
    """``(factor, lower, transposed)`` when ``a`` is a Cholesky factor or its transpose over the
    last two dims (real only: a complex factor's transpose is not its adjoint); else None."""
    if is_complex_type(element_type_of(a)):
        return None
    transposed = False
    op = defining_op(a)
    if op is not None and op.operation.name == "stablehlo.transpose":
        r = rank_of(a)
        if i64_list(op.attributes["permutation"]) != list(range(r - 2)) + [r - 1, r - 2]:
            return None
        a, transposed, op = op.operands[0], True, defining_op(op.operands[0])
    if op is None or op.operation.name != "stablehlo.cholesky":
        return None
    lower = bool(ir.BoolAttr(op.attributes["lower"]).value) if "lower" in op.attributes else False
    return a, lower, transposed


@pattern("solve_triangular_factor", FAMILY, "stablehlo.custom_call", benefit=2)
def solve_triangular_factor(op, rewriter):
    """solve(cholesky(K) or its transpose, B) -> triangular_solve (when the LU factors are unused)."""
    marker = D.read(op.operation)
    if marker is None or marker[0] != "solve" or any(len(list(r.uses)) for r in op.results[1:]):
        return False
    found = _triangular_factor(op.operands[0])
    if found is None:
        return False
    factor, lower, transposed = found
    with rewriter.ip, op.location:
        x = B.triangular_solve(factor, op.operands[1], left_side=True, lower=lower,
                               transpose_a="TRANSPOSE" if transposed else "NO_TRANSPOSE")
        unused = [B.zeros(r.type) for r in op.results[1:]]
    return replace(rewriter, op, [x] + unused)


def _values_twin(op):
    """The marker on the same operand that computes the same values plus vectors, if any."""
    marker = D.read(op.operation)
    if marker is None:
        return None
    kind, opts = marker
    if kind == "svd" and not opts["compute_uv"]:
        want = lambda o: o["compute_uv"]  # noqa: E731
    elif kind == "eig" and not opts["vectors"]:
        want = lambda o: o["vectors"]  # noqa: E731
    else:
        return None
    for use in op.operands[0].uses:
        other = use.owner.operation
        if other == op.operation or other.name != "stablehlo.custom_call":
            continue
        m = D.read(other)
        if m is not None and m[0] == kind and want(m[1]) and other.operands[0] == op.operands[0]:
            if other.block == op.operation.block:
                return other
    return None


def _comes_before(a, b) -> bool:
    """Whether op ``a`` precedes op ``b`` in their (common) block."""
    for o in a.block.operations:
        if o.operation == a:
            return True
        if o.operation == b:
            return False
    return False


@pattern("decomposition_reuse", FAMILY, "stablehlo.custom_call", benefit=2)
def decomposition_reuse(op, rewriter):
    """svd(a, compute_uv=False) / eig(a, vectors=False) -> the values of a marker on ``a`` in
    the same block that also computes the vectors. When that marker comes later (the AD pass
    emits it in the derivative code), it is recreated here and its results replaced."""
    twin = _values_twin(op)
    if twin is None:
        return False
    kind = D.read(op.operation)[0]
    pick = 1 if kind == "svd" else 0
    if _comes_before(twin, op.operation):
        return replace(rewriter, op, twin.results[pick])
    with rewriter.ip, op.location:
        full = B.create("stablehlo.custom_call", [op.operands[0]], [r.type for r in twin.results],
                        D.attributes(kind, D.read(twin)[1]))
    rewriter.replace_op(twin, list(full.results))
    return replace(rewriter, op, full.results[pick])
