"""Derivative rules: contractions and linear algebra (dot_general, dot, convolution,
cholesky, triangular_solve, fft).

dot_general and convolution are bilinear: the tangent is the sum of the op applied with one
tangent at a time; the cotangent of each operand is a contraction of the output cotangent
with the other operand (for convolutions: a convolution with the strides turned into
dilations and the kernel reversed, the standard transposition).

cholesky and triangular_solve follow XLA's semantics: they read one triangle of the matrix
(and triangular_solve with unit_diagonal ignores the diagonal), so the derivative with
respect to the unread entries is zero; a symmetric matrix perturbation is read through the
used triangle.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from ...ir import build as B
from ...ir import shapes
from ...ir.attrs import i64_array, i64_attr, i64_list, padding_attr
from ...ir.attrs import copy_attrs
from ...ir.types import complex_part_type, element_type_of, is_complex_type, rank_of, ranked, shape_of
from . import emit as E
from .errors import ADError
from .rules import prim, register, res, tadd, tsub

# ---------------------------------------------------------------------------------------------
# dot_general / dot


def _dot_dims(op):
    if op.name == "stablehlo.dot":
        ra = rank_of(op.operands[0])
        return [], [], [ra - 1], [0]
    d = hlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    return (list(d.lhs_batching_dimensions), list(d.rhs_batching_dimensions),
            list(d.lhs_contracting_dimensions), list(d.rhs_contracting_dimensions))


def _precision(op):
    return op.attributes["precision_config"] if "precision_config" in op.attributes else None


def _dot_fwd(cx, op, ts):
    ta, tb = ts
    lb, rb, lc, rc = _dot_dims(op)
    et = element_type_of(op.results[0])
    prec = _precision(op)
    out = None
    if ta is not None:
        out = B.dot_general(ta, prim(cx, op, 1), lb, rb, lc, rc, elem=et, precision=prec)
    if tb is not None:
        out = tadd(out, B.dot_general(prim(cx, op, 0), tb, lb, rb, lc, rc, elem=et, precision=prec))
    if out is not None and list(shape_of(out)) != list(shape_of(op.results[0])):
        out = B.reshape(out, list(shape_of(op.results[0])))
    return [out]


def _dot_transpose(g, other, n_self_rank, self_b, self_c, self_free, other_b, other_c, other_free, g_self_free,
                   g_other_free, nb, prec):
    """Cotangent of one operand: contract g with the other operand over the other's free
    dims, then lay the dims out like the operand. Of the two operand orders of the
    contraction, the one needing no transpose is preferred."""
    g_batch = list(range(nb))
    rem_sorted = sorted(other_c)
    cands = []
    for g_first in (True, False):
        pos = []
        for d in range(n_self_rank):
            if d in self_b:
                pos.append(self_b.index(d))
            elif d in self_free:
                i = self_free.index(d)
                pos.append(nb + i if g_first else nb + len(rem_sorted) + i)
            else:
                i = rem_sorted.index(other_c[self_c.index(d)])
                pos.append(nb + len(self_free) + i if g_first else nb + i)
        cands.append((pos != list(range(n_self_rank)), not g_first, g_first, pos))
    cands.sort(key=lambda c: (c[0], c[1]))
    _, _, g_first, pos = cands[0]
    if g_first:
        r = B.dot_general(g, other, g_batch, other_b, g_other_free, other_free, elem=element_type_of(g), precision=prec)
    else:
        r = B.dot_general(other, g, other_b, g_batch, other_free, g_other_free, elem=element_type_of(g), precision=prec)
    return B.transpose(r, pos)


def _dot_rev(cx, op, cts, want):
    g = cts[0]
    lb, rb, lc, rc = _dot_dims(op)
    a, b = op.operands
    ra, rr = rank_of(a), rank_of(b)
    lfree = [d for d in range(ra) if d not in lb and d not in lc]
    rfree = [d for d in range(rr) if d not in rb and d not in rc]
    nb = len(lb)
    g_l = list(range(nb, nb + len(lfree)))
    g_r = list(range(nb + len(lfree), nb + len(lfree) + len(rfree)))
    prec = _precision(op)
    ga = gb = None
    if want[0]:
        bv = prim(cx, op, 1)
        gg = B.convert(g, element_type_of(bv))
        ga = _dot_transpose(gg, bv, ra, lb, lc, lfree, rb, rc, rfree, g_l, g_r, nb, prec)
        ga = B.convert(ga, element_type_of(a))
    if want[1]:
        av = prim(cx, op, 0)
        gg = B.convert(g, element_type_of(av))
        gb = _dot_transpose(gg, av, rr, rb, rc, rfree, lb, lc, lfree, g_r, g_l, nb, prec)
        gb = B.convert(gb, element_type_of(b))
    return [ga, gb]


register("stablehlo.dot_general", _dot_fwd, _dot_rev)
register("stablehlo.dot", _dot_fwd, _dot_rev)

# ---------------------------------------------------------------------------------------------
# convolution


class _Conv:
    """The parameters of a stablehlo.convolution in JAX-like spec form."""

    def __init__(self, op):
        a = op.attributes
        lhs, rhs = op.operands
        nsp = rank_of(lhs) - 2
        get = lambda n, d: i64_list(a[n]) if n in a else d  # noqa: E731
        self.strides = get("window_strides", [1] * nsp)
        self.lhs_dil = get("lhs_dilation", [1] * nsp)
        self.rhs_dil = get("rhs_dilation", [1] * nsp)
        if "padding" in a:
            flat = i64_list(a["padding"])
            self.padding = [(flat[2 * i], flat[2 * i + 1]) for i in range(nsp)]
        else:
            self.padding = [(0, 0)] * nsp
        if "window_reversal" in a and any(bool(x) for x in ir.DenseBoolArrayAttr(a["window_reversal"])):
            raise ADError("derivative of a convolution with window_reversal is not supported", op)
        d = hlo.ConvDimensionNumbers(a["dimension_numbers"])
        self.lhs_spec = [d.input_batch_dimension, d.input_feature_dimension, *d.input_spatial_dimensions]
        self.rhs_spec = [d.kernel_output_feature_dimension, d.kernel_input_feature_dimension,
                         *d.kernel_spatial_dimensions]
        self.out_spec = [d.output_batch_dimension, d.output_feature_dimension, *d.output_spatial_dimensions]
        self.fgc = int(ir.IntegerAttr(a["feature_group_count"]).value) if "feature_group_count" in a else 1
        self.bgc = int(ir.IntegerAttr(a["batch_group_count"]).value) if "batch_group_count" in a else 1
        self.precision = a["precision_config"] if "precision_config" in a else None


def conv(lhs, rhs, *, strides, padding, lhs_dil, rhs_dil, lhs_spec, rhs_spec, out_spec, fgc, bgc, precision,
         out_et=None):
    ls, ks = list(shape_of(lhs)), list(shape_of(rhs))
    nsp = len(ls) - 2
    out = [0] * (nsp + 2)
    out[out_spec[0]] = ls[lhs_spec[0]] // bgc
    out[out_spec[1]] = ks[rhs_spec[0]]
    spatial = shapes.reduce_window([ls[d] for d in lhs_spec[2:]], [ks[d] for d in rhs_spec[2:]], strides, padding,
                                   lhs_dil, rhs_dil)  # a convolution slides its kernel like a window
    for d, n in zip(out_spec[2:], spatial):
        out[d] = n
    dn = hlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0], input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]), kernel_input_feature_dimension=rhs_spec[1],
        kernel_output_feature_dimension=rhs_spec[0], kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0], output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]))
    attrs = {"window_strides": i64_array(strides), "padding": padding_attr(padding),
             "lhs_dilation": i64_array(lhs_dil), "rhs_dilation": i64_array(rhs_dil),
             "dimension_numbers": dn, "feature_group_count": i64_attr(fgc), "batch_group_count": i64_attr(bgc)}
    if precision is not None:
        attrs["precision_config"] = precision
    return B.op1("stablehlo.convolution", [lhs, rhs], ranked(out, out_et or element_type_of(lhs)), attrs)


def _spec_t(spec):
    return [spec[1], spec[0], *spec[2:]]


def _axis_out_of(src, size1, x):
    s = list(shape_of(x))
    s[src:src + 1] = [size1, s[src] // size1]
    return B.reshape(x, s)


def _axis_into(src, dst, x):
    """Merge axis ``src`` into axis ``dst`` (numbered after removing src), src major."""
    s = list(shape_of(x))
    perm = [i for i in range(len(s)) if i != src]
    perm.insert(dst, src)
    x = B.transpose(x, perm)
    ns = [s[i] for i in range(len(s)) if i != src]
    ns[dst] *= s[src]
    return B.reshape(x, ns)


def _conv_fwd(cx, op, ts):
    tl, tr = ts
    out = None
    attrs = copy_attrs(op)
    rt = op.results[0].type
    if tl is not None:
        out = B.op1("stablehlo.convolution", [tl, prim(cx, op, 1)], rt, attrs)
    if tr is not None:
        out = tadd(out, B.op1("stablehlo.convolution", [prim(cx, op, 0), tr], rt, attrs))
    return [out]


def _conv_rev(cx, op, cts, want):
    g = cts[0]
    c = _Conv(op)
    lhs, rhs = op.operands
    ls, ks, gs = list(shape_of(lhs)), list(shape_of(rhs)), list(shape_of(g))
    nsp = len(ls) - 2
    sp = lambda shape_, spec: [shape_[d] for d in spec[2:]]  # noqa: E731
    lhs_sp, rhs_sp, out_sp = sp(ls, c.lhs_spec), sp(ks, c.rhs_spec), sp(gs, c.out_spec)
    dil = lambda n, d: (n - 1) * d + 1 if n > 0 else 0  # noqa: E731
    gl = gr = None
    if want[0]:
        k = prim(cx, op, 1)
        fgc = c.fgc
        if c.fgc > 1 or c.bgc > 1:
            grp = c.fgc if c.fgc > 1 else c.bgc
            k = _axis_out_of(c.rhs_spec[0], grp, k)
            k = _axis_into(c.rhs_spec[0], c.rhs_spec[1], k)
            fgc = grp
        pads = []
        for i in range(nsp):
            before = dil(rhs_sp[i], c.rhs_dil[i]) - c.padding[i][0] - 1
            after = dil(lhs_sp[i], c.lhs_dil[i]) + dil(rhs_sp[i], c.rhs_dil[i]) - 1 - dil(out_sp[i], c.strides[i]) \
                - before
            pads.append((before, after))
        krev = B.reverse(k, list(c.rhs_spec[2:]))
        gl = conv(B.convert(g, element_type_of(krev)), krev, strides=c.lhs_dil, padding=pads, lhs_dil=c.strides,
                  rhs_dil=c.rhs_dil, lhs_spec=c.out_spec, rhs_spec=_spec_t(c.rhs_spec), out_spec=c.lhs_spec,
                  fgc=fgc, bgc=1, precision=c.precision)
        if c.bgc > 1:
            gl = _axis_out_of(c.lhs_spec[1], c.bgc, gl)
            gl = _axis_into(c.lhs_spec[1], c.lhs_spec[0], gl)
        gl = B.convert(gl, element_type_of(lhs))
        if list(shape_of(gl)) != ls:
            raise ADError(f"internal: convolution input cotangent has shape {list(shape_of(gl))}, expected {ls}", op)
    if want[1]:
        if any(n == 0 for n in gs):
            gr = B.zeros(rhs.type)
        else:
            x = B.convert(prim(cx, op, 0), element_type_of(g))
            fgc, bgc = c.fgc, c.bgc
            if bgc > 1:
                fgc, bgc = bgc, 1
            elif fgc > 1:
                fgc, bgc = 1, fgc
            pads = []
            for i in range(nsp):
                lo = c.padding[i][0]
                from_lhs = dil(out_sp[i], c.strides[i]) - dil(lhs_sp[i], c.lhs_dil[i])
                from_rhs = dil(rhs_sp[i], c.rhs_dil[i]) - lo - 1
                pads.append((lo, from_lhs + from_rhs))
            gr = conv(x, g, strides=c.rhs_dil, padding=pads, lhs_dil=c.lhs_dil, rhs_dil=c.strides,
                      lhs_spec=_spec_t(c.lhs_spec), rhs_spec=_spec_t(c.out_spec), out_spec=_spec_t(c.rhs_spec),
                      fgc=fgc, bgc=bgc, precision=c.precision)
            gr = B.convert(gr, element_type_of(rhs))
            if list(shape_of(gr)) != ks:
                raise ADError(f"internal: convolution kernel cotangent has shape {list(shape_of(gr))}, expected {ks}", op)
    return [gl, gr]


register("stablehlo.convolution", _conv_fwd, _conv_rev)

# ---------------------------------------------------------------------------------------------
# cholesky


def _bool(op, name, default=False):
    a = op.attributes
    return bool(ir.BoolAttr(a[name]).value) if name in a else default


def sym_from_triangle(d, lower):
    """The symmetric (complex: Hermitian) matrix read from one triangle of ``d``."""
    tri = B.select(E.tril_mask(d.type, 0, upper=not lower), d, B.zeros_like(d))
    strict = B.select(E.tril_mask(d.type, -1 if lower else 1, upper=not lower), d, B.zeros_like(d))
    return B.add(tri, E.conj(E.swap_last2(strict)))


def sym_from_triangle_t(s, lower):
    """Transpose of ``sym_from_triangle``."""
    tri = B.select(E.tril_mask(s.type, 0, upper=not lower), s, B.zeros_like(s))
    st = E.conj(E.swap_last2(s))
    strict = B.select(E.tril_mask(s.type, -1 if lower else 1, upper=not lower), st, B.zeros_like(s))
    return B.add(tri, strict)


def _phi(m):
    """Lower triangle of m with the diagonal halved."""
    t = m.type
    lower_strict = E.tril_mask(t, -1)
    diag = B.and_(E.tril_mask(t, 0), E.tril_mask(t, 0, upper=True))
    w = B.select(lower_strict, B.full_like(m, 1), B.select(diag, B.full_like(m, 0.5), B.zeros_like(m)))
    return B.multiply(m, w)


def _chol_L(cx, op, lower):
    y = res(cx, op)
    return y if lower else E.swap_last2(y)


def _chol_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    if is_complex_type(element_type_of(t)):
        raise ADError("derivative of a complex cholesky is not supported", op)
    lower = _bool(op, "lower")
    L = _chol_L(cx, op, lower)
    p = sym_from_triangle(t, lower)
    x = B.triangular_solve(L, p, left_side=True, lower=True)  # L^-1 P
    m = B.triangular_solve(L, x, left_side=False, lower=True, transpose_a="TRANSPOSE")  # L^-1 P L^-T
    dl = E.matmul_t(L, _phi(m))
    return [dl if lower else E.swap_last2(dl)]


def _chol_rev(cx, op, cts, want):
    g = cts[0]
    if is_complex_type(element_type_of(g)):
        raise ADError("derivative of a complex cholesky is not supported", op)
    lower = _bool(op, "lower")
    L = _chol_L(cx, op, lower)
    lbar = g if lower else E.swap_last2(g)
    p = _phi(E.matmul_t(L, lbar, ta=True))  # phi(L^T Lbar)
    y = B.triangular_solve(L, p, left_side=True, lower=True, transpose_a="TRANSPOSE")  # L^-T P
    s = B.triangular_solve(L, y, left_side=False, lower=True)  # L^-T P L^-1, no transposes
    return [sym_from_triangle_t(s, lower)]


register("stablehlo.cholesky", _chol_fwd, _chol_rev)

# ---------------------------------------------------------------------------------------------
# triangular_solve


def _ts_params(op):
    a = op.attributes
    tr = hlo.TransposeAttr(a["transpose_a"]).value if "transpose_a" in a else "NO_TRANSPOSE"
    transposed = tr != "NO_TRANSPOSE"
    return _bool(op, "left_side"), _bool(op, "lower"), _bool(op, "unit_diagonal"), transposed, tr


def _ts_mask(da, lower, unit):
    k = (-1 if lower else 1) if unit else 0
    return B.select(E.tril_mask(da.type, k, upper=not lower), da, B.zeros_like(da))


def _ts_fwd(cx, op, ts):
    ta, tb = ts
    if ta is None and tb is None:
        return [None]
    left, lower, unit, transposed, tr = _ts_params(op)
    if is_complex_type(element_type_of(op.operands[0])):
        raise ADError("derivative of a complex triangular_solve is not supported", op)
    a = prim(cx, op, 0)
    x = res(cx, op)
    rhs = tb
    if ta is not None:
        da = _ts_mask(ta, lower, unit)
        opda = E.swap_last2(da) if transposed else da
        corr = E.matmul_t(opda, x) if left else E.matmul_t(x, opda)
        rhs = tsub(rhs, corr)
    return [B.triangular_solve(a, rhs, left_side=left, lower=lower, unit_diagonal=unit,
                               transpose_a=tr)]


def _ts_rev(cx, op, cts, want):
    g = cts[0]
    left, lower, unit, transposed, tr = _ts_params(op)
    if is_complex_type(element_type_of(op.operands[0])):
        raise ADError("derivative of a complex triangular_solve is not supported", op)
    a = prim(cx, op, 0)
    flipped = "NO_TRANSPOSE" if transposed else "TRANSPOSE"
    bbar = B.triangular_solve(a, g, left_side=left, lower=lower, unit_diagonal=unit, transpose_a=flipped)
    abar = None
    if want[0]:
        x = res(cx, op)
        if left:
            m = E.matmul_t(bbar, x, tb=True) if not transposed else E.matmul_t(x, bbar, tb=True)
        else:
            m = E.matmul_t(x, bbar, ta=True) if not transposed else E.matmul_t(bbar, x, ta=True)
        abar = _ts_mask(B.negate(m), lower, unit)
    return [abar, bbar if want[1] else None]


register("stablehlo.triangular_solve", _ts_fwd, _ts_rev)

# ---------------------------------------------------------------------------------------------
# fft (linear; cotangents follow JAX's convention: the transpose, without conjugation)


def _fft_params(op):
    a = op.attributes
    return hlo.FftTypeAttr(a["fft_type"]).value, i64_list(a["fft_length"])


def _fft_fwd(cx, op, ts):
    t = ts[0]
    if t is None:
        return [None]
    return [B.op1("stablehlo.fft", [t], op.results[0].type, copy_attrs(op))]


def _fft_rev(cx, op, cts, want):
    g = cts[0]
    kind, lengths = _fft_params(op)
    x = op.operands[0]
    if kind in ("FFT", "IFFT"):  # the DFT matrices are symmetric
        return [B.fft(g, kind, lengths)]
    if kind == "RFFT":
        # rfft = slice(fft(complex(x))), so the transpose is real(fft(zero-padded g)); the same
        # real result comes from an inverse real FFT (half the work of a complex one):
        # N * irfft(conj(g) / w), w = 2 on the frequencies irfft counts twice (1 on DC and, for
        # even n, Nyquist), N the product of the lengths
        n = lengths[-1]
        gs = list(shape_of(g))
        m = gs[-1]
        w = np.full(m, 2.0)
        w[0] = 1.0
        if n % 2 == 0:
            w[-1] = 1.0
        part = complex_part_type(element_type_of(g))
        inv_w = B.broadcast_in_dim(B.constant(1.0 / w, ranked([m], part)), gs, [len(gs) - 1])
        h = B.multiply(E.conj(g), B.complex_(inv_w, B.zeros_like(inv_w)))
        r = B.fft(h, "IRFFT", lengths)
        return [B.multiply(r, B.full_like(r, float(np.prod(lengths))))]
    # IRFFT
    n = lengths[-1]
    xs = list(shape_of(x))
    m = xs[-1]
    odd = n % 2
    w = np.array([1.0] + [2.0] * (m - 2 + odd) + [1.0] * (1 - odd))[:m] / float(np.prod(lengths))
    r = B.fft(g, "RFFT", lengths)
    part = complex_part_type(element_type_of(x))
    wv = B.broadcast_in_dim(B.constant(w, ranked(w.shape, part)), xs, [len(xs) - 1])
    return [E.conj(B.multiply(r, B.complex_(wv, B.zeros_like(wv))))]


register("stablehlo.fft", _fft_fwd, _fft_rev)
