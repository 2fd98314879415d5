"""Derivative rules: reductions (reduce with add/max/min/mul bodies, argmax-style variadic
reduce) and windowed reductions (reduce_window add/max/min, and cumulative products)."""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.attrs import i64_array, i64_list, padding_attr
from ...ir.opinfo import combiner, info
from ...ir.regions import terminator
from ...ir.types import element_type_of, is_integer_type, rank_of, ranked, shape_of
from . import emit as E
from . import scans as S
from .errors import ADError
from .ir_util import iota_dimension
from .rules import prim, register, res, tadd

def body_kind(op) -> str | None:
    """The op table's ``reduce_kind`` (``add``, ``mul``, ``max``, ``min``, ``and``, ``or``) of
    the op a single-value reduction body combines with, or None."""
    f = combiner(op)
    return None if f is None else info(f.name).reduce_kind


def _dims(op):
    return i64_list(op.attributes["dimensions"])


def _bcast_back(y, x_shape, dims):
    kept = [d for d in range(len(x_shape)) if d not in dims]
    return B.broadcast_in_dim(y, x_shape, kept)


def _indicators(x, y, dims):
    """1.0 where x equals the reduced extremum, and the count of such places."""
    yb = _bcast_back(y, list(shape_of(x)), dims)
    loc = B.select(B.compare(x, yb, "EQ"), B.full_like(x, 1), B.zeros_like(x))
    return loc, B.reduce_sum(loc, dims)


def _prod_others(x, dims, init):
    """For each element, the product of the other elements of its reduction group (times the
    init value), computed without dividing by zero."""
    z, one = B.zeros_like(x), B.full_like(x, 1)
    iszero = B.compare(x, z, "EQ")
    xnz = B.select(iszero, one, x)
    pnz = B.reduce(xnz, B.scalar(1, element_type_of(x)), dims, "stablehlo.multiply")
    pnz = B.multiply(pnz, B.broadcast_to(init, list(shape_of(pnz))))
    cz = B.reduce_sum(B.select(iszero, one, z), dims)
    xs = list(shape_of(x))
    pb = _bcast_back(pnz, xs, dims)
    czb = _bcast_back(cz, xs, dims)
    no_zero = B.compare(czb, z, "EQ")
    one_zero_here = B.and_(B.compare(czb, one, "EQ"), iszero)
    return B.select(no_zero, B.divide(pb, xnz), B.select(one_zero_here, pb, z))


def _argmax_parts(op):
    """For a variadic reduce over one dimension with an iota operand: (dim, iota index)."""
    dims = _dims(op)
    n = len(op.results)
    if len(dims) != 1:
        return None
    for k in range(n):
        if is_integer_type(element_type_of(op.operands[k])) and iota_dimension(op.operands[k]) == dims[0]:
            return dims[0], k
    return None


def _check_select_body(op, j):
    blk = op.regions[0].blocks[0]
    r = terminator(blk).operands[j]
    owner = r.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "stablehlo.select":
        raise ADError("variadic reduce: result %d is not chosen by a select (only argmax/argmin-style "
                      "variadic reductions are differentiable)" % j, op)


def _no_body_rule(op):
    return ADError("no derivative rule for a reduce with this body (add, max, min and multiply "
                   "reductions are differentiable)", op)


def _variadic_parts(op):
    """``_argmax_parts(op)``; raises where no rule covers the variadic reduce."""
    parts = _argmax_parts(op)
    if parts is None:
        raise ADError("no derivative rule for this variadic reduce (only argmax/argmin-style reductions "
                      "with an iota operand are differentiable)", op)
    return parts


def _index_along(idx, op, j, d):
    """Operand ``j``'s shape with dim ``d`` set to 1, and ``idx`` reshaped to it."""
    es = list(shape_of(op.operands[j]))
    es[d] = 1
    return es, B.reshape(idx, es)


def _reduce_fwd(cx, op, ts):
    n = len(op.results)
    dims = _dims(op)
    if n == 1:
        kind = body_kind(op)
        t, tinit = ts
        x, y = prim(cx, op, 0), res(cx, op)
        if kind == "add":
            out = None if t is None else B.reduce_sum(t, dims)
            if tinit is not None:
                out = tadd(out, B.broadcast_to(tinit, list(shape_of(y))))
            return [out]
        if kind in ("max", "min"):
            if tinit is not None:
                raise ADError(f"derivative of a {kind} reduction with respect to its init value is not "
                              "supported", op)
            loc, cnt = _indicators(x, y, dims)
            return [B.divide(B.reduce_sum(B.multiply(t, loc), dims), cnt)]
        if kind == "mul":
            init = prim(cx, op, 1)
            out = None
            if t is not None:
                out = B.reduce_sum(B.multiply(t, _prod_others(x, dims, init)), dims)
            if tinit is not None:
                px = B.reduce(x, B.scalar(1, element_type_of(x)), dims, "stablehlo.multiply")
                out = tadd(out, B.multiply(B.broadcast_to(tinit, list(shape_of(y))), px))
            return [out]
        raise _no_body_rule(op)
    d, k = _variadic_parts(op)
    if any(t is not None for t in ts[n:]):
        raise ADError("derivative of a variadic reduce with respect to its init values is not supported", op)
    idx = res(cx, op, k)
    outs = []
    for j in range(n):
        t = ts[j]
        if t is None or j == k:
            outs.append(None)
            continue
        _check_select_body(op, j)
        es, idx_e = _index_along(idx, op, j, d)
        outs.append(B.reshape(E.take_along(t, idx_e, d), list(shape_of(op.results[j]))))
    return outs


def _reduce_rev(cx, op, cts, want):
    n = len(op.results)
    dims = _dims(op)
    if n == 1:
        kind = body_kind(op)
        g = cts[0]
        x = op.operands[0]
        xs = list(shape_of(x))
        if kind == "add":
            gx = _bcast_back(g, xs, dims) if want[0] else None
            gi = B.reduce_sum(g, range(rank_of(g))) if want[1] else None
            return [gx, gi]
        if kind in ("max", "min"):
            if want[1]:
                raise ADError(f"derivative of a {kind} reduction with respect to its init value is not "
                              "supported", op)
            loc, cnt = _indicators(prim(cx, op, 0), res(cx, op), dims)
            return [B.multiply(_bcast_back(B.divide(g, cnt), xs, dims), loc), None]
        if kind == "mul":
            xv, init = prim(cx, op, 0), prim(cx, op, 1)
            gx = B.multiply(_bcast_back(g, xs, dims), _prod_others(xv, dims, init)) if want[0] else None
            gi = None
            if want[1]:
                px = B.reduce(xv, B.scalar(1, element_type_of(xv)), dims, "stablehlo.multiply")
                gi = B.reduce_sum(B.multiply(g, px), range(rank_of(g)))
            return [gx, gi]
        raise _no_body_rule(op)
    d, k = _variadic_parts(op)
    if any(want[n:]):
        raise ADError("derivative of a variadic reduce with respect to its init values is not supported", op)
    idx = res(cx, op, k)
    outs = []
    for j in range(n):
        g = cts[j] if j < len(cts) else None
        if not want[j] or j == k or g is None:
            outs.append(None)
            continue
        _check_select_body(op, j)
        es, idx_e = _index_along(idx, op, j, d)
        outs.append(E.scatter_add_along(op.operands[j].type, idx_e, B.reshape(g, es), d))
    return outs + [None] * n


register("stablehlo.reduce", _reduce_fwd, _reduce_rev)

# ---------------------------------------------------------------------------------------------
# reduce_window


def _rw_params(op):
    x = op.operands[0]
    r = rank_of(x)
    a = op.attributes

    def get(name, default):
        return i64_list(a[name]) if name in a else default

    win = get("window_dimensions", None)
    strides = get("window_strides", [1] * r)
    bdil = get("base_dilations", [1] * r)
    wdil = get("window_dilations", [1] * r)
    if "padding" in a:
        flat = i64_list(a["padding"])
        padding = [(flat[2 * i], flat[2 * i + 1]) for i in range(r)]
    else:
        padding = [(0, 0)] * r
    return win, strides, bdil, wdil, padding


def _cumulative(op, win, strides, bdil, wdil, padding) -> tuple[int | None, bool] | None:
    """For a windowed product that is a cumulative product: ``(axis, from_the_end)``, with axis
    None when every window holds one element (a product with the init value); else None."""
    xs = list(shape_of(op.operands[0]))
    if any(s != 1 for s in strides + bdil + wdil):
        return None
    axes = [d for d in range(len(xs)) if win[d] != 1]
    if any(padding[d] != (0, 0) for d in range(len(xs)) if d not in axes):
        return None
    if not axes:
        return None, False
    if len(axes) != 1:
        return None
    d = axes[0]
    w, n = win[d], xs[d]
    if w < n:  # a moving product, not a cumulative one
        return None
    if padding[d] == (w - 1, 0):
        return d, False
    if padding[d] == (0, w - 1):
        return d, True
    return None


_NOT_CUMULATIVE = ("no derivative rule for this windowed product: only cumulative products (np.cumprod, "
                   "np.multiply.accumulate) are differentiable")


def _cumprod(cx, op, t, vjp: bool):
    """The tangent (or, ``vjp``, the cotangent of the operand) of a windowed product for the
    (co)tangent ``t``."""
    c = _cumulative(op, *_rw_params(op))
    if c is None:
        raise ADError(_NOT_CUMULATIVE, op)
    axis, from_end = c
    x, init = prim(cx, op, 0), prim(cx, op, 1)
    if axis is None:  # one element per window: y = init * x
        return B.multiply(t, B.broadcast_in_dim(init, list(shape_of(x)), []))
    y = res(cx, op)
    if from_end:  # the same along the reversed axis
        x, y, t = (B.reverse(v, [axis]) for v in (x, y, t))
    out = (S.cumprod_vjp if vjp else S.cumprod_jvp)(x, y, init, t, axis)
    return B.reverse(out, [axis]) if from_end else out


def _rw_fwd(cx, op, ts):
    if len(op.results) != 1:
        raise ADError("no derivative rule for a variadic reduce_window", op)
    kind = body_kind(op)
    t, tinit = ts
    if tinit is not None:
        raise ADError("derivative of reduce_window with respect to its init value is not supported", op)
    if t is None:
        return [None]
    win, strides, bdil, wdil, padding = _rw_params(op)
    if kind == "add":
        return [B.reduce_window(t, B.scalar(0, element_type_of(t)), win, strides, bdil, wdil, padding)]
    if kind in ("max", "min"):
        x = prim(cx, op, 0)
        init = prim(cx, op, 1)
        et = element_type_of(x)
        st = ranked([], et)
        attrs = B.reduce_window_attrs(win, strides, padding, bdil, wdil)
        rt = op.results[0].type
        o = B.create("stablehlo.reduce_window", [x, t, init, B.scalar(0, et)], [rt, rt], attrs, regions=1)
        blk = ir.Block.create_at_start(o.regions[0], [st, st, st, st])
        ax, at, bx, bt = blk.arguments
        with ir.InsertionPoint(blk):
            pick = B.compare(ax, bx, "GE" if kind == "max" else "LE")
            B.create("stablehlo.return", [B.select(pick, ax, bx), B.select(pick, at, bt)], [])
        return [o.results[1]]
    if kind == "mul":
        return [_cumprod(cx, op, t, vjp=False)]
    raise ADError("no derivative rule for a reduce_window with this body (add, max, min and cumulative "
                  "products are differentiable)", op)


def _rw_rev(cx, op, cts, want):
    if len(op.results) != 1:
        raise ADError("no derivative rule for a variadic reduce_window", op)
    if want[1]:
        raise ADError("derivative of reduce_window with respect to its init value is not supported", op)
    kind = body_kind(op)
    g = cts[0]
    win, strides, bdil, wdil, padding = _rw_params(op)
    xs = list(shape_of(op.operands[0]))
    if kind == "add":
        gs = list(shape_of(g))
        lo, hi, interior = [], [], []
        for i in range(len(xs)):
            m = gs[i]
            if m == 0 or xs[i] == 0:
                return [B.zeros(op.operands[0].type), None]
            gd_len = (m - 1) * strides[i] + 1
            low = (win[i] - 1) * wdil[i] - padding[i][0]
            req = (xs[i] - 1) * bdil[i] + (win[i] - 1) * wdil[i] + 1
            lo.append(low)
            hi.append(req - low - gd_len)
            interior.append(strides[i] - 1)
        gp = B.pad(g, B.scalar(0, element_type_of(g)), lo, hi, interior)
        return [B.reduce_window(gp, B.scalar(0, element_type_of(g)), win, bdil, [1] * len(xs), wdil,
                              [(0, 0)] * len(xs)), None]
    if kind in ("max", "min"):
        if any(b != 1 for b in bdil) or any(w != 1 for w in wdil):
            raise ADError(f"reverse-mode derivative of a dilated {kind} reduce_window is not supported", op)
        x = prim(cx, op, 0)
        et = element_type_of(x)
        st = ranked([], et)
        attrs = {"window_dimensions": i64_array(win), "window_strides": i64_array(strides),
                 "padding": padding_attr(padding)}
        o = B.create("stablehlo.select_and_scatter", [x, g, B.scalar(0, et)], [x.type], attrs, regions=2)
        sel = ir.Block.create_at_start(o.regions[0], [st, st])
        with ir.InsertionPoint(sel):
            B.create("stablehlo.return", [B.compare(sel.arguments[0], sel.arguments[1],
                                                    "GE" if kind == "max" else "LE")], [])
        sc = ir.Block.create_at_start(o.regions[1], [st, st])
        with ir.InsertionPoint(sc):
            B.create("stablehlo.return", [B.add(sc.arguments[0], sc.arguments[1])], [])
        return [o.result, None]
    if kind == "mul":
        return [_cumprod(cx, op, g, vjp=True), None]
    raise ADError("no derivative rule for a reduce_window with this body (add, max, min and cumulative "
                  "products are differentiable)", op)


register("stablehlo.reduce_window", _rw_fwd, _rw_rev)
