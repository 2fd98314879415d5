"""Derivative rules of the decomposition markers (``reactant.ir.decompositions``): the
standard matrix-calculus rules, in forward (JVP) and reverse (VJP) form.

Notation: ``A = P^T L U`` (``P b = b[perm]``). Each reverse rule is the transpose of its forward
rule's linear map, written out (for complex matrices the plain transpose: JAX's convention for
complex cotangents, which the whole AD pass follows):

- ``solve`` (``X = A^-1 B``): ``dX = A^-1 (dB - dA X)``; ``Bbar = A^-T Xbar``, ``Abar = -Bbar X^T``,
  with the marker's own LU factors (no second factorization).
- ``lu``: ``M = L^-1 P dA U^-1``, ``dL = L tril(M, -1)``, ``dU = triu(M) U``;
  ``Abar = P^T L^-T (tril(L^T Lbar, -1) + triu(Ubar U^T)) U^-T``.
- ``qr`` (reduced, ``m >= n``; real): ``C = Q^T dA R^-1``, ``W = tril(C, -1) - tril(C, -1)^T``,
  ``dQ = Q (W - C) + dA R^-1``, ``dR = (C - W) R``; with ``G = Q^T Qbar - Rbar R^T``:
  ``Abar = (Qbar + Q (tril(G - G^T, -1) - G)) R^-T``.
- ``eigh`` (real symmetric, read through one triangle like LAPACK): ``S = V^T dA V``,
  ``dw = diag(S)``, ``dV = V (F o S)`` with ``F_ij = 1 / (w_j - w_i)`` off the diagonal;
  ``Abar = V (diag(wbar) + F o (V^T Vbar)) V^T``. Degenerate eigenvalues make ``F`` infinite:
  eigenvector derivatives are then undefined (as in every framework).
- ``svd`` (reduced; real): ``dS = U^T dA V``, ``ds = diag(dS)``, ``F_ij = 1 / (s_j^2 - s_i^2)``,
  ``dU = U (F o (dS s + s dS^T)) + (I - U U^T) dA V / s`` (``m > n``),
  ``dV = V (F o (s dS + dS^T s)) + (I - V V^T) dA^T U / s`` (``n > m``); reverse: ``Abar = U Z V^T``
  plus the two projections, with ``Z = diag(sbar) + (J + J^T) s + s (K + K^T)``,
  ``J = F o (U^T Ubar)``, ``K = F o (V^T Vbar)``. Repeated or zero singular values make the
  singular-vector derivatives undefined; singular values alone are always fine.

Complex QR, SVD and eigh derivatives and ``eig`` derivatives raise ``ADError``.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir import decompositions as D
from ...ir.types import element_type, element_type_of, from_element_type, is_complex_type, ranked, shape_of
from . import emit as E
from .errors import ADError
from .rules import prim, register_custom_call, res, tadd, tsub
from .rules_linalg import sym_from_triangle, sym_from_triangle_t


# -- small matrix helpers (last two dims; batch dims equal) ---------------------------------------
def _mm(a, b):
    return E.matmul_t(a, b)


def _h(x):
    """Conjugate transpose."""
    return E.conj(E.swap_last2(x))


def _tril(x, k: int = 0):
    return B.select(E.tril_mask(x.type, k), x, B.zeros_like(x))


def _triu(x, k: int = 0):
    return B.select(E.tril_mask(x.type, k, upper=True), x, B.zeros_like(x))


def _unpack_lu(lu):
    """Unit lower ``L`` and upper ``U`` from the packed factor."""
    eye = B.select(E.tril_mask(lu.type, 0, upper=True), B.full_like(lu, 1), B.zeros_like(lu))
    eye = B.select(E.tril_mask(lu.type, 0), eye, B.zeros_like(lu))
    return B.add(_tril(lu, -1), eye), _triu(lu)


def _row_index(perm, like):
    """``perm[..., n]`` broadcast to the shape of ``like[..., n, r]`` (rows index)."""
    s = list(shape_of(like))
    return B.broadcast_in_dim(perm, s, list(range(len(s) - 1)))


def _permute_rows(x, perm):
    """``P x = x[..., perm, :]``."""
    return E.take_along(x, _row_index(perm, x), len(shape_of(x)) - 2)


def _unpermute_rows(y, perm):
    """``P^T y``: row ``i`` of ``y`` goes to row ``perm[i]``."""
    return E.scatter_add_along(y.type, _row_index(perm, y), y, len(shape_of(y)) - 2)


def _lu_solve(lu, perm, b):
    """``A^-1 b`` from ``A``'s packed LU factor and row permutation."""
    y = B.triangular_solve(lu, _permute_rows(b, perm), left_side=True, lower=True, unit_diagonal=True)
    return B.triangular_solve(lu, y, left_side=True, lower=False)


def _lu_solve_transposed(lu, perm, g):
    """``A^-T g``."""
    y = B.triangular_solve(lu, g, left_side=True, lower=False, transpose_a="TRANSPOSE")
    z = B.triangular_solve(lu, y, left_side=True, lower=True, unit_diagonal=True, transpose_a="TRANSPOSE")
    return _unpermute_rows(z, perm)


def _diag_embed(v, like):
    """A matrix shaped like ``like`` with ``v[..., k]`` on its diagonal."""
    s = list(shape_of(like))
    full = B.broadcast_in_dim(v, s, list(range(len(s) - 1)))
    diag = B.and_(E.tril_mask(like.type, 0), E.tril_mask(like.type, 0, upper=True))
    return B.select(diag, full, B.zeros_like(full))


def _diag_part(x):
    """``x[..., i, i]`` as ``[..., k]`` (square matrices)."""
    s = list(shape_of(x))
    diag = B.and_(E.tril_mask(x.type, 0), E.tril_mask(x.type, 0, upper=True))
    return B.reduce_sum(B.select(diag, x, B.zeros_like(x)), [len(s) - 1])


def _cols(v, like):
    """``v[..., k]`` broadcast along rows: entry ``(i, j)`` is ``v[j]``."""
    s = list(shape_of(like))
    return B.broadcast_in_dim(v, s, list(range(len(s) - 2)) + [len(s) - 1])


def _rows(v, like):
    """Entry ``(i, j)`` is ``v[i]``."""
    s = list(shape_of(like))
    return B.broadcast_in_dim(v, s, list(range(len(s) - 1)))


def _inv_gaps(w, like, square: bool = False):
    """``F_ij = 1 / (w_j - w_i)`` (``1 / (w_j^2 - w_i^2)`` when ``square``), 0 on the diagonal."""
    wj, wi = _cols(w, like), _rows(w, like)
    gap = B.multiply(B.add(wj, wi), B.subtract(wj, wi)) if square else B.subtract(wj, wi)
    diag = B.and_(E.tril_mask(like.type, 0), E.tril_mask(like.type, 0, upper=True))
    one = B.full_like(gap, 1)
    return B.select(diag, B.zeros_like(gap), B.divide(one, B.select(diag, one, gap)))


def _real_only(op, x, what: str):
    if is_complex_type(element_type_of(x)):
        raise ADError(f"derivative of a complex {what} is not supported", op)


def _no_cotangent(op, cts, names):
    for ct, name in zip(cts, names):
        if ct is not None and not E.is_zero(ct):
            raise ADError(f"internal: {name} of a decomposition marker cannot carry a derivative", op)


# -- solve ------------------------------------------------------------------------------------------
def _solve_fwd(cx, op, ts):
    ta, tb = ts
    if ta is None and tb is None:
        return [None, None, None]
    x, lu, perm = res(cx, op, 0), res(cx, op, 1), res(cx, op, 2)
    rhs = tb
    if ta is not None:
        rhs = tsub(rhs, _mm(ta, x))
    return [_lu_solve(lu, perm, rhs), None, None]


def _solve_rev(cx, op, cts, want):
    _no_cotangent(op, cts[1:], ("the LU factor", "the permutation"))
    g = cts[0]
    if g is None:
        return [None, None]
    x, lu, perm = res(cx, op, 0), res(cx, op, 1), res(cx, op, 2)
    bbar = _lu_solve_transposed(lu, perm, g)
    abar = B.negate(_mm(bbar, E.swap_last2(x))) if want[0] else None
    return [abar, bbar if want[1] else None]


# -- lu ---------------------------------------------------------------------------------------------
def _lu_fwd(cx, op, ts):
    (ta,) = ts
    if ta is None:
        return [None, None, None]
    lu, perm = res(cx, op, 0), res(cx, op, 2)
    L, U = _unpack_lu(lu)
    y = B.triangular_solve(lu, _permute_rows(ta, perm), left_side=True, lower=True, unit_diagonal=True)
    m = B.triangular_solve(lu, y, left_side=False, lower=False)  # L^-1 P dA U^-1
    return [B.add(_mm(L, _tril(m, -1)), _mm(_triu(m), U)), None, None]


def _lu_rev(cx, op, cts, want):
    _no_cotangent(op, cts[1:], ("the pivots", "the permutation"))
    g = cts[0]
    if g is None:
        return [None]
    lu, perm = res(cx, op, 0), res(cx, op, 2)
    L, U = _unpack_lu(lu)
    m = B.add(_tril(_mm(E.swap_last2(L), _tril(g, -1)), -1), _triu(_mm(_triu(g), E.swap_last2(U))))
    w = B.triangular_solve(lu, m, left_side=True, lower=True, unit_diagonal=True, transpose_a="TRANSPOSE")
    v = B.triangular_solve(lu, w, left_side=False, lower=False, transpose_a="TRANSPOSE")
    return [_unpermute_rows(v, perm)]


# -- qr ---------------------------------------------------------------------------------------------
def _qr_check(op):
    a = op.operands[0]
    _real_only(op, a, "QR decomposition")
    m, n = shape_of(a)[-2:]
    full = D.read(op)[1]["full_matrices"]
    if m < n or (full and m != n):
        raise ADError(f"derivative of QR is defined for reduced factors of matrices with at least as many rows "
                      f"as columns; got {m}x{n}" + (" with mode='complete'" if full else ""), op)


def _qr_fwd(cx, op, ts):
    (ta,) = ts
    if ta is None:
        return [None, None]
    _qr_check(op)
    q, r = res(cx, op, 0), res(cx, op, 1)
    d = B.triangular_solve(r, ta, left_side=False, lower=False)  # dA R^-1
    c = _mm(_h(q), d)
    low = _tril(c, -1)
    w = B.subtract(low, E.swap_last2(low))
    return [B.add(_mm(q, B.subtract(w, c)), d), _mm(B.subtract(c, w), r)]


def _qr_rev(cx, op, cts, want):
    qbar, rbar = cts
    if qbar is None and rbar is None:
        return [None]
    _qr_check(op)
    q, r = res(cx, op, 0), res(cx, op, 1)
    qbar = qbar if qbar is not None else B.zeros_like(q)
    rbar = rbar if rbar is not None else B.zeros_like(r)
    g = B.subtract(_mm(_h(q), qbar), _mm(rbar, _h(r)))
    k = B.subtract(_tril(B.subtract(g, E.swap_last2(g)), -1), g)
    n = B.add(qbar, _mm(q, k))
    return [B.triangular_solve(r, n, left_side=False, lower=False, transpose_a="TRANSPOSE")]


# -- eigh -------------------------------------------------------------------------------------------
def _eigh_fwd(cx, op, ts):
    (ta,) = ts
    if ta is None:
        return [None, None]
    _real_only(op, ta, "eigh")
    lower = D.read(op)[1]["lower"]
    v, w = res(cx, op, 0), res(cx, op, 1)
    s = _mm(_h(v), _mm(sym_from_triangle(ta, lower), v))
    dv = _mm(v, B.multiply(_inv_gaps(w, s), s))
    return [dv, _diag_part(s)]


def _eigh_rev(cx, op, cts, want):
    vbar, wbar = cts
    if vbar is None and wbar is None:
        return [None]
    _real_only(op, op.operands[0], "eigh")
    lower = D.read(op)[1]["lower"]
    v, w = res(cx, op, 0), res(cx, op, 1)
    z = B.zeros_like(v)
    if wbar is not None:
        z = _diag_embed(wbar, v)
    if vbar is not None:
        z = B.add(z, B.multiply(_inv_gaps(w, v), _mm(_h(v), vbar)))
    return [sym_from_triangle_t(_mm(v, _mm(z, _h(v))), lower)]


# -- svd --------------------------------------------------------------------------------------------
def _svd_factors(cx, op):
    """``(u, s, vh)`` of the reduced SVD of the marker's operand: the marker's own results, or
    (for a singular-values-only marker) a second marker that also computes the vectors."""
    a = op.operands[0]
    _real_only(op, a, "SVD")
    opts = D.read(op)[1]
    m, n = shape_of(a)[-2:]
    if opts["compute_uv"]:
        if opts["full_matrices"] and m != n:
            raise ADError("derivative of a full-matrices SVD of a non-square matrix is not defined (the extra "
                          "singular vectors are not unique); use full_matrices=False", op)
        return res(cx, op, 0), res(cx, op, 1), res(cx, op, 2)
    x = prim(cx, op, 0)
    opts = {"full_matrices": False, "compute_uv": True}
    specs = D.result_specs("svd", [(tuple(shape_of(x)), from_element_type(element_type_of(x)))], opts)
    types = [ranked(shape, element_type(dt)) for shape, dt in specs]
    full = B.create("stablehlo.custom_call", [x], types, D.attributes("svd", opts))
    return full.results[0], full.results[1], full.results[2]


def _svd_fwd(cx, op, ts):
    (ta,) = ts
    if ta is None:
        return [None] * len(op.results)
    u, s, vh = _svd_factors(cx, op)
    v = _h(vh)
    ds_mat = _mm(_h(u), _mm(ta, v))
    ds = _diag_part(ds_mat)
    if not D.read(op)[1]["compute_uv"]:
        return [ds]
    f = _inv_gaps(s, ds_mat, square=True)
    dss = B.multiply(ds_mat, _cols(s, ds_mat))  # dS s
    sds = B.multiply(_rows(s, ds_mat), ds_mat)  # s dS
    du = _mm(u, B.multiply(f, B.add(dss, E.swap_last2(dss))))
    dv = _mm(v, B.multiply(f, B.add(sds, E.swap_last2(sds))))
    m, n = shape_of(ta)[-2:]
    if m > n:
        dav = _mm(ta, v)
        du = B.add(du, B.divide(B.subtract(dav, _mm(u, _mm(_h(u), dav))), _cols(s, dav)))
    if n > m:
        dahu = _mm(_h(ta), u)
        dv = B.add(dv, B.divide(B.subtract(dahu, _mm(v, _mm(vh, dahu))), _cols(s, dahu)))
    return [du, ds, _h(dv)]


def _svd_rev(cx, op, cts, want):
    if all(c is None for c in cts):
        return [None]
    u, s, vh = _svd_factors(cx, op)
    v = _h(vh)
    if not D.read(op)[1]["compute_uv"]:
        k = shape_of(s)[-1]
        return [_mm(u, _mm(_diag_embed(cts[0], B.zeros(ranked(list(shape_of(s)) + [k], element_type_of(u)))), vh))]
    ubar, sbar, vhbar = cts
    k = shape_of(s)[-1]
    sq = ranked(list(shape_of(s)) + [k], element_type_of(u))
    z = B.zeros(sq) if sbar is None else _diag_embed(sbar, B.zeros(sq))
    f = _inv_gaps(s, z, square=True)
    m, n = shape_of(u)[-2], shape_of(vh)[-1]
    out = None
    if ubar is not None:
        j = B.multiply(f, _mm(_h(u), ubar))
        z = B.add(z, B.multiply(B.add(j, E.swap_last2(j)), _cols(s, j)))
        if m > n:
            proj = B.subtract(ubar, _mm(u, _mm(_h(u), ubar)))
            out = _mm(B.divide(proj, _cols(s, proj)), vh)
    if vhbar is not None:
        vbar = _h(vhbar)
        kk = B.multiply(f, _mm(vh, vbar))
        z = B.add(z, B.multiply(_rows(s, kk), B.add(kk, E.swap_last2(kk))))
        if n > m:
            proj = B.subtract(vbar, _mm(v, _mm(vh, vbar)))  # (I - V V^T) Vbar
            out = tadd(out, _mm(B.divide(u, _cols(s, u)), _h(proj)))
    return [tadd(out, _mm(u, _mm(z, vh)))]


def _eig_rule(cx, op, *args):
    raise ADError("derivative of numpy.linalg.eig/eigvals is not supported (use eigh for symmetric matrices)", op)


register_custom_call(D.PREFIX + "solve", _solve_fwd, _solve_rev)
register_custom_call(D.PREFIX + "lu", _lu_fwd, _lu_rev)
register_custom_call(D.PREFIX + "qr", _qr_fwd, _qr_rev)
register_custom_call(D.PREFIX + "eigh", _eigh_fwd, _eigh_rev)
register_custom_call(D.PREFIX + "svd", _svd_fwd, _svd_rev)
register_custom_call(D.PREFIX + "eig", _eig_rule, _eig_rule)
