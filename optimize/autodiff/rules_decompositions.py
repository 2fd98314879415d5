"""Derivative rules of the decomposition markers (``reactant.ir.decompositions``): the
standard matrix-calculus rules, in forward (JVP) and reverse (VJP) form.

Notation: ``A = P^T L U`` (``P b = b[perm]``). Each reverse rule is the transpose of its forward
rule's linear map, written out (for complex matrices the plain transpose: JAX's convention for
complex cotangents, which the whole AD pass follows):

- ``solve`` (``X = A^-1 B``): ``dX = A^-1 (dB - dA X)``; ``Bbar = A^-T Xbar``, ``Abar = -Bbar X^T``,
  with the marker's own LU factors (no second factorization).
- ``lu``: ``M = L^-1 P dA U^-1``, ``dL = L tril(M, -1)``, ``dU = triu(M) U``;
  ``Abar = P^T L^-T (tril(L^T Lbar, -1) + triu(Ubar U^T)) U^-T``; when only U's diagonal
  result is read (determinants), ``triu(Ubar U^T) = diag(dbar * diag(U))`` and no product is needed.
- ``qr`` (reduced, ``m >= n``): ``C = Q^H dA R^-1``, ``W = tril(C, -1) - tril(C, -1)^H + i Im diag(C)``,
  ``dQ = Q (W - C) + dA R^-1``, ``dR = (C - W) R``; with ``G = Q^T Qbar - Rbar R^T``:
  ``Abar = (Qbar + conj(Q) (tril(G - G^H, -1) + i Im diag(G) - G)) R^-T``.
- ``eigh`` (symmetric or Hermitian, read through one triangle like LAPACK): ``S = V^T dA V``,
  ``dw = diag(S)``, ``dV = V (F o S)`` with ``F_ij = 1 / (w_j - w_i)`` off the diagonal;
  ``Abar = V (diag(wbar) + F o (V^T Vbar)) V^T``. Degenerate eigenvalues make ``F`` infinite:
  eigenvector derivatives are then undefined (as in every framework).
- ``svd`` (reduced; written here for real matrices, the code carries the conjugations and the
  complex gauge term ``i Im diag(dS) / s`` of ``dU``): ``dS = U^T dA V``, ``ds = diag(dS)``, ``F_ij = 1 / (s_j^2 - s_i^2)``,
  ``dU = U (F o (dS s + s dS^T)) + (I - U U^T) dA V / s`` (``m > n``),
  ``dV = V (F o (s dS + dS^T s)) + (I - V V^T) dA^T U / s`` (``n > m``); reverse: ``Abar = U Z V^T``
  plus the two projections, with ``Z = diag(sbar) + (J + J^T) s + s (K + K^T)``,
  ``J = F o (U^T Ubar)``, ``K = F o (V^T Vbar)``. Repeated or zero singular values make the
  singular-vector derivatives undefined; singular values alone are always fine.

Complex matrices: the rules hold with ``^H`` in the forward maps; the reverse rules are their
transposes under JAX's pairing ``Re sum(a * b)`` (e.g. for Hermitian ``eigh``:
``Abar = conj(V) (diag(wbar) + F o (V^T Vbar)) V^T``).
- ``eig``: eigenvalues only (eigenvectors have an arbitrary scale): ``dw = diag(V^-1 dA V)``,
  ``Abar = V^-T diag(wbar) V^T`` (real part for a real matrix), with solve markers for ``V^-1``.
"""

from __future__ import annotations


from ...ir import build as B
from ...ir import decompositions as D
from ...ir.types import element_type_of, is_complex_type, ranked, shape_of
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


def _permute_rows(x, perm):
    """``P x = x[..., perm, :]``: a gather of whole rows (one index per row, not per element)."""
    s = list(shape_of(x))
    r = len(s)
    batch = list(range(r - 2))
    idx = B.reshape(perm, list(shape_of(perm)) + [1])
    return B.gather(x, idx, offset_dims=[r - 1], collapsed_slice_dims=[r - 2], operand_batching_dims=batch,
                    start_indices_batching_dims=batch, start_index_map=[r - 2], index_vector_dim=r - 1,
                    slice_sizes=[1] * (r - 2) + [1, s[-1]])


def _unpermute_rows(y, perm):
    """``P^T y``: row ``i`` of ``y`` goes to row ``perm[i]``. Done as a gather of rows by the
    inverse permutation (itself a scatter of n indices): XLA's CPU scatter of whole rows of a
    matrix was the slowest part of a determinant's gradient."""
    n = shape_of(perm)[-1]
    iota = B.iota(perm.type, len(shape_of(perm)) - 1)
    inverse = E.scatter_add_along(perm.type, perm, iota, len(shape_of(perm)) - 1)
    return _permute_rows(y, inverse) if n else y


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
        return [None] * 4
    lu, perm = res(cx, op, 0), res(cx, op, 2)
    L, U = _unpack_lu(lu)
    y = B.triangular_solve(lu, _permute_rows(ta, perm), left_side=True, lower=True, unit_diagonal=True)
    m = B.triangular_solve(lu, y, left_side=False, lower=False)  # L^-1 P dA U^-1
    dlu = B.add(_mm(L, _tril(m, -1)), _mm(_triu(m), U))
    return [dlu, None, None, _diag_part(dlu)]


def _lu_rev(cx, op, cts, want):
    _no_cotangent(op, cts[1:3], ("the pivots", "the permutation"))
    g, gd = cts[0], cts[3]
    if g is None and gd is None:
        return [None]
    lu, perm = res(cx, op, 0), res(cx, op, 2)
    if g is None:  # only U's diagonal is read (determinants): M = diag(gd * diag(U))
        m = _diag_embed(B.multiply(gd, res(cx, op, 3)), lu)
    else:
        L, U = _unpack_lu(lu)
        if gd is not None:
            g = B.add(g, _diag_embed(gd, lu))
        m = B.add(_tril(_mm(E.swap_last2(L), _tril(g, -1)), -1), _triu(_mm(_triu(g), E.swap_last2(U))))
    w = B.triangular_solve(lu, m, left_side=True, lower=True, unit_diagonal=True, transpose_a="TRANSPOSE")
    v = B.triangular_solve(lu, w, left_side=False, lower=False, transpose_a="TRANSPOSE")
    return [_unpermute_rows(v, perm)]


# -- qr ---------------------------------------------------------------------------------------------
def _qr_check(op):
    a = op.operands[0]
    m, n = shape_of(a)[-2:]
    full = D.read(op)[1]["full_matrices"]
    if m < n or (full and m != n):
        raise ADError(f"derivative of QR is defined for reduced factors of matrices with at least as many rows "
                      f"as columns; got {m}x{n}" + (" with mode='complete'" if full else ""), op)


def _imag_diag(x):
    """``i Im(diag(x))`` as a matrix (zero for real ``x``)."""
    if not is_complex_type(element_type_of(x)):
        return None
    return _diag_embed(B.complex_(B.zeros_like(_diag_part(B.real(x))), _diag_part(B.imag(x))), x)


def _qr_fwd(cx, op, ts):
    (ta,) = ts
    if ta is None:
        return [None, None]
    _qr_check(op)
    q, r = res(cx, op, 0), res(cx, op, 1)
    d = B.triangular_solve(r, ta, left_side=False, lower=False)  # dA R^-1
    c = _mm(_h(q), d)
    low = _tril(c, -1)
    w = tadd(B.subtract(low, _h(low)), _imag_diag(c))  # skew-Hermitian
    return [B.add(_mm(q, B.subtract(w, c)), d), _mm(B.subtract(c, w), r)]


def _qr_rev(cx, op, cts, want):
    qbar, rbar = cts
    if qbar is None and rbar is None:
        return [None]
    _qr_check(op)
    q, r = res(cx, op, 0), res(cx, op, 1)
    qbar = qbar if qbar is not None else B.zeros_like(q)
    rbar = rbar if rbar is not None else B.zeros_like(r)
    g = B.subtract(_mm(E.swap_last2(q), qbar), _mm(rbar, E.swap_last2(r)))
    k = tadd(B.subtract(_tril(B.subtract(g, _h(g)), -1), g), _imag_diag(g))
    n = B.add(qbar, _mm(E.conj(q), k))
    return [B.triangular_solve(r, n, left_side=False, lower=False, transpose_a="TRANSPOSE")]


# -- eigh -------------------------------------------------------------------------------------------
def _like_v(x, v):
    """A real matrix or vector in the eigenvectors' element type (complex for Hermitian input)."""
    et = element_type_of(v)
    return x if element_type_of(x) == et else B.convert(x, et)


def _eigh_fwd(cx, op, ts):
    (ta,) = ts
    if ta is None:
        return [None, None]
    lower = D.read(op)[1]["lower"]
    v, w = res(cx, op, 0), res(cx, op, 1)
    s = _mm(_h(v), _mm(sym_from_triangle(ta, lower), v))
    dv = _mm(v, B.multiply(_like_v(_inv_gaps(w, B.real(s) if is_complex_type(element_type_of(s)) else s), v), s))
    dw = _diag_part(s)
    return [dv, B.real(dw) if is_complex_type(element_type_of(dw)) else dw]


def _eigh_rev(cx, op, cts, want):
    # complex (JAX's convention, the transpose under the pairing Re sum(a * b)):
    # Abar = conj(V) (diag(wbar) + F o (V^T Vbar)) V^T
    vbar, wbar = cts
    if vbar is None and wbar is None:
        return [None]
    lower = D.read(op)[1]["lower"]
    v, w = res(cx, op, 0), res(cx, op, 1)
    z = B.zeros_like(v)
    if wbar is not None:
        z = _like_v(_diag_embed(wbar, _square_like(w)), v)
    if vbar is not None:
        f = _like_v(_inv_gaps(w, _square_like(w)), v)
        z = B.add(z, B.multiply(f, _mm(E.swap_last2(v), vbar)))
    return [sym_from_triangle_t(_mm(E.conj(v), _mm(z, E.swap_last2(v))), lower)]


# -- svd --------------------------------------------------------------------------------------------
def _svd_factors(cx, op):
    """``(u, s, vh)`` of the reduced SVD of the marker's operand: the marker's own results, or
    (for a singular-values-only marker) a second marker that also computes the vectors."""
    a = op.operands[0]
    opts = D.read(op)[1]
    m, n = shape_of(a)[-2:]
    if opts["compute_uv"]:
        if opts["full_matrices"] and m != n:
            raise ADError("derivative of a full-matrices SVD of a non-square matrix is not defined (the extra "
                          "singular vectors are not unique); use full_matrices=False", op)
        return res(cx, op, 0), res(cx, op, 1), res(cx, op, 2)
    u, s, vh = _marker("svd", [prim(cx, op, 0)], {"full_matrices": False, "compute_uv": True})
    return u, s, vh


def _square_like(s):
    """A zero ``[..., k, k]`` matrix in the element type of the vectors ``s[..., k]`` (real
    eigen/singular values: the gap and diagonal matrices are built real, then converted)."""
    k = shape_of(s)[-1]
    return B.zeros(ranked(list(shape_of(s)) + [k], element_type_of(s)))


def _svd_fwd(cx, op, ts):
    (ta,) = ts
    if ta is None:
        return [None] * len(op.results)
    u, s, vh = _svd_factors(cx, op)
    v = _h(vh)
    ds_mat = _mm(_h(u), _mm(ta, v))
    ds = _diag_part(ds_mat)
    ds = B.real(ds) if is_complex_type(element_type_of(ds)) else ds
    if not D.read(op)[1]["compute_uv"]:
        return [ds]
    sq = _square_like(s)
    f = _like_v(_inv_gaps(s, sq, square=True), u)
    s_cols, s_rows = _like_v(_cols(s, sq), u), _like_v(_rows(s, sq), u)
    dss = B.multiply(ds_mat, s_cols)  # dS s
    sds = B.multiply(s_rows, ds_mat)  # s dS
    du = _mm(u, tadd(B.multiply(f, B.add(dss, _h(dss))), _svd_phase(ds_mat, s)))
    dv = _mm(v, B.multiply(f, B.add(sds, _h(sds))))
    m, n = shape_of(ta)[-2:]
    if m > n:
        dav = _mm(ta, v)
        du = B.add(du, B.divide(B.subtract(dav, _mm(u, _mm(_h(u), dav))), _like_v(_cols(s, dav), u)))
    if n > m:
        dahu = _mm(_h(ta), u)
        dv = B.add(dv, B.divide(B.subtract(dahu, _mm(v, _mm(vh, dahu))), _like_v(_cols(s, dahu), u)))
    return [du, ds, _h(dv)]


def _inv_s(s):
    """``1/s``, 0 where ``s`` is 0."""
    zero = B.compare(s, B.zeros_like(s), "EQ")
    return B.select(zero, B.zeros_like(s), B.divide(B.full_like(s, 1), B.select(zero, B.full_like(s, 1), s)))


def _svd_phase(ds_mat, s):
    """Complex only: the gauge term ``i Im(diag(dS)) / s`` of the left singular vectors."""
    if not is_complex_type(element_type_of(ds_mat)):
        return None
    im = B.multiply(_diag_part(B.imag(ds_mat)), _inv_s(s))
    return _diag_embed(B.complex_(B.zeros_like(im), im), ds_mat)


def _svd_rev(cx, op, cts, want):
    if all(c is None for c in cts):
        return [None]
    u, s, vh = _svd_factors(cx, op)
    sq = _square_like(s)
    if not D.read(op)[1]["compute_uv"]:
        return [_mm(E.conj(u), _mm(_like_v(_diag_embed(cts[0], sq), u), E.conj(vh)))]
    ubar, sbar, vhbar = cts
    z = _like_v(sq if sbar is None else _diag_embed(sbar, sq), u)
    f = _like_v(_inv_gaps(s, sq, square=True), u)
    s_cols, s_rows = _like_v(_cols(s, sq), u), _like_v(_rows(s, sq), u)
    m, n = shape_of(u)[-2], shape_of(vh)[-1]
    out = None
    if ubar is not None:
        ut_ubar = _mm(E.swap_last2(u), ubar)
        j = B.multiply(f, ut_ubar)
        z = B.add(z, B.add(B.multiply(j, s_cols), _h(B.multiply(s_rows, j))))
        z = tadd(z, _svd_phase(ut_ubar, s))  # the transpose of the forward gauge term
        if m > n:
            proj = B.subtract(ubar, _mm(E.conj(u), ut_ubar))
            out = _mm(B.divide(proj, _like_v(_cols(s, proj), u)), E.conj(vh))
    if vhbar is not None:
        vbar = _h(vhbar)  # dVh = dV^H: the cotangent of V is Vh's, conjugate-transposed
        v = _h(vh)
        kk = B.multiply(f, _mm(E.swap_last2(v), vbar))
        z = B.add(z, B.add(B.multiply(s_rows, kk), _h(B.multiply(kk, s_cols))))
        if n > m:
            proj = B.subtract(vbar, _mm(E.conj(v), _mm(E.swap_last2(v), vbar)))
            zt = _mm(B.divide(proj, _like_v(_cols(s, proj), u)), E.swap_last2(u))
            out = tadd(out, _h(zt))
    return [tadd(out, _mm(E.conj(u), _mm(z, E.conj(vh))))]


# -- eig (eigenvalues only) ------------------------------------------------------------------------
def _marker(kind: str, operands: list, options: dict) -> list:
    """A new decomposition marker on ``operands`` (for rules that need more than the primal
    marker computed); returns its results."""
    return B.decomposition(kind, operands, options)


def _eig_vectors(cx, op):
    if D.read(op)[1]["vectors"]:
        return res(cx, op, 1)
    return _marker("eig", [prim(cx, op, 0)], {"vectors": True})[1]


def _eig_check(op, cts):
    if len(cts) > 1 and cts[1] is not None and not E.is_zero(cts[1]):
        raise ADError("derivatives of the eigenvectors of numpy.linalg.eig are not supported (their scale is "
                      "arbitrary); eigenvalue derivatives are, and eigh's eigenvectors for symmetric matrices", op)


def _eig_fwd(cx, op, ts):
    """``dw = diag(V^-1 dA V)`` (distinct eigenvalues)."""
    (ta,) = ts
    if ta is None:
        return [None] * len(op.results)
    if len(op.results) > 1:
        _eig_check(op, [None, op.results[1]] if list(op.results[1].uses) else [None])
    v = _eig_vectors(cx, op)
    dav = _mm(_like_v(ta, v), v)
    dw = _diag_part(_marker("solve", [v, dav], {})[0])
    return [dw] + [None] * (len(op.results) - 1)


def _eig_rev(cx, op, cts, want):
    """``Abar = V^-T diag(wbar) V^T`` (its real part for a real matrix)."""
    _eig_check(op, cts)
    wbar = cts[0]
    if wbar is None:
        return [None]
    v = _eig_vectors(cx, op)
    vt = E.swap_last2(v)
    abar = _marker("solve", [vt, _mm(_diag_embed(wbar, v), vt)], {})[0]
    return [abar if is_complex_type(element_type_of(op.operands[0])) else B.real(abar)]


register_custom_call(D.PREFIX + "solve", _solve_fwd, _solve_rev)
register_custom_call(D.PREFIX + "lu", _lu_fwd, _lu_rev)
register_custom_call(D.PREFIX + "qr", _qr_fwd, _qr_rev)
register_custom_call(D.PREFIX + "eigh", _eigh_fwd, _eigh_rev)
register_custom_call(D.PREFIX + "svd", _svd_fwd, _svd_rev)
register_custom_call(D.PREFIX + "eig", _eig_fwd, _eig_rev)
