"""Reduce rewrites (single-input ``stablehlo.reduce`` whose body is one of add, multiply,
maximum, minimum, and, or).

Init values: XLA treats a reduce's init value as an identity of the body that it may apply
any number of times, so these patterns require the init to be that identity (0 for add,
either sign; 1 for multiply; -Inf/INT_MIN for max; ...). With a different init they leave
the reduce alone.

Exactness (``optimize.exactness``): merging nested reductions, reducing unit dims, moving a
monotone conversion across max/min and folding splats (summed in an order XLA may pick) are
exact; moving a negation or a scale factor across a sum, and replacing the sum of ``n`` equal
numbers by one product, change its rounding or the sign of a cancelled zero: fast-math.

``reduce_add(a * b) → dot_general`` is applied conservatively, see ``reduce_mul_to_dot``.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.attrs import i64_list, scalar_value
from ...ir.opinfo import reduce_body_kind, reduce_identity
from ...ir.types import element_type_of, is_float_type, np_dtype, num_elements, ranked, shape_of
from ...ir.values import def_of, defining_op, has_one_use
from ._registry import once_per_visit, pattern, replace
from ._util import is_reduce_identity

FAMILY = "reduce"


def _dims(op) -> list[int]:
    return i64_list(op.attributes["dimensions"])


def _reduce_of(op, producer: str):
    """``_simple(op)`` plus the op producing the reduced value, when it is
    ``stablehlo.<producer>``: (kind, x, init, dims, producer op); else None."""
    r = _simple(op)
    p = None if r is None else def_of(r[1], producer)
    return None if p is None else (*r, p)


def _simple(op):
    """(kind, x, init, dims) for a single-input reduce with an identity init; else None (asked
    by every reduce pattern: once per visit)."""
    return once_per_visit("reduce_simple", op.operation, lambda: _simple_of(op))


def _simple_of(op):
    kind = reduce_body_kind(op)
    if kind is None:
        return None
    x, init = op.operands
    if not is_reduce_identity(init, kind):
        return None
    return kind, x, init, _dims(op)


@pattern("reduce_no_dims", FAMILY, "stablehlo.reduce", benefit=4)
def reduce_no_dims(op, rewriter):
    """reduce over no dimensions (identity init) → its operand."""
    r = _simple(op)
    if r is None or r[3]:
        return False
    return replace(rewriter, op, r[1])


@pattern("reduce_unit_dims", FAMILY, "stablehlo.reduce", benefit=3)
def reduce_unit_dims(op, rewriter):
    """Reduced dimensions of size 1 (identity init) are reshaped away: a reduce over only
    such dims becomes a reshape (a reduction over all dims is left whole)."""
    r = _simple(op)
    if r is None:
        return False
    kind, x, init, dims = r
    s = shape_of(x)
    unit = [d for d in dims if s[d] == 1]
    if not unit:
        return False
    if len(dims) == len(s) and len(unit) < len(dims):
        return False  # a full reduction stays one (reduce_all_of_reshape would undo the reshape)
    keep = [i for i in range(len(s)) if i not in unit]
    loc = op.location
    with rewriter.ip:
        y = B.reshape(x, [s[i] for i in keep], loc=loc)
        rest = [keep.index(d) for d in dims if d not in unit]
        if rest:
            y = B.reduce(y, init, rest, kind, loc=loc)
        return replace(rewriter, op, y)


def _count_ok(count: int, et: ir.Type) -> bool:
    dt = np_dtype(et)
    if dt is None or dt == np.bool_ or dt.kind == "c":
        return False
    if dt.kind in "iu":
        return True
    return float(np.array(count, dtype=np.float64).astype(dt)) == float(count)


def _count_const(count: int, et: ir.Type, shape, loc):
    """A splat ``count`` of element type et (wrapping for integers); None if a float type
    cannot hold it exactly."""
    dt = np_dtype(et)
    if dt is None or dt == np.bool_ or dt.kind == "c":
        return None
    if dt.kind in "iu":
        c = int(np.array(count, dtype=np.uint64).astype(dt))
    else:
        c = np.array(count, dtype=np.float64).astype(dt)
        if float(c) != float(count):
            return None
        c = float(c)
    return B.full(c, ranked(shape, et), loc=loc)


@pattern("reduce_of_broadcast", FAMILY, "stablehlo.reduce", benefit=3, fast_math=True)
def reduce_of_broadcast(op, rewriter):
    """reduce(broadcast_in_dim(x)) over dims the broadcast created: max/min/and/or just drop
    them; add multiplies by their total size instead of summing equal numbers. Fast-math: n * x
    rounds once where the sum of n copies of x rounds at every step."""
    r = _reduce_of(op, "broadcast_in_dim")
    if r is None:
        return False
    kind, b, init, rdims, bc = r
    if bc is None or kind == "stablehlo.multiply":
        return False
    x = bc.operands[0]
    bdims = i64_list(bc.attributes["broadcast_dimensions"])
    xs, bs = shape_of(x), shape_of(b)
    src = {d: i for i, d in enumerate(bdims)}
    created = [j for j in rdims if j not in src or (xs[src[j]] == 1 and bs[j] != 1)]
    if not created:
        return False
    count = 1
    for j in created:
        count *= bs[j]
    et = element_type_of(x)
    if kind in ("stablehlo.and", "stablehlo.or") and is_float_type(et):
        return False
    if kind == "stablehlo.add" and count > 1 and not _count_ok(count, et):
        return False
    loc = op.location
    with rewriter.ip:
        xr = [src[j] for j in rdims if j in src]  # x dims to reduce (size-1 ones included)
        y = B.reduce(x, init, xr, kind, loc=loc) if xr else x
        if kind == "stablehlo.add" and count > 1:
            k = _count_const(count, et, shape_of(y), loc)
            y = B.op1("stablehlo.multiply", [y, k], y.type, loc=loc)
        kept_b = [j for j in range(len(bs)) if j not in rdims]
        ydims = [kept_b.index(bdims[i]) for i in range(len(xs)) if i not in xr]
        out = shape_of(op.results[0])
        if shape_of(y) != tuple(out) or ydims != list(range(len(ydims))):
            y = B.broadcast_in_dim(y, out, ydims, loc=loc)
        return replace(rewriter, op, y)


def _sum_of_copies(c: np.ndarray, n: int) -> np.ndarray:
    """The float sum of ``n`` copies of ``c`` in c's type, added as a tree (c + c, then those
    pairs, ...; the binary digits of n joined in one more chain): an order XLA may pick, so
    the fold is exact (``optimize.exactness``); c * n rounded once may be no order's result."""
    total, power = None, c
    with np.errstate(all="ignore"):
        while n:
            if n & 1:
                total = power if total is None else total + power
            n >>= 1
            if n:
                power = power + power
    return c if total is None else total


@pattern("reduce_splat", FAMILY, "stablehlo.reduce", benefit=4)
def reduce_splat(op, rewriter):
    """reduce of a splat constant c → splat of the sum of (reduced size) copies of c for add,
    c for max/min/and/or."""
    r = _simple(op)
    if r is None:
        return False
    kind, x, init, dims = r
    s = scalar_value(x)
    if s is None or def_of(x, "constant") is None or kind == "stablehlo.multiply":
        return False
    et = element_type_of(x)
    dt = np_dtype(et)
    if dt is None:
        return False
    xs = shape_of(x)
    count = 1
    for d in dims:
        count *= xs[d]
    v = np.array(s).astype(dt)
    if kind == "stablehlo.add":
        if dt == np.bool_:
            return False
        if dt.kind in "iu":  # wrapping product
            w = 8 * dt.itemsize
            v = np.array((int(v) * count) % (1 << w), dtype=np.uint64).astype(f"u{dt.itemsize}").view(dt)
        else:
            v = _sum_of_copies(v, count)
    if count == 0:
        v = np.array(reduce_identity(kind, et)).astype(dt)
    with rewriter.ip:
        return replace(rewriter, op, B.full(v.item(), ir.RankedTensorType(op.results[0].type),
                                               loc=op.location))


@pattern("reduce_reduce", FAMILY, "stablehlo.reduce", benefit=3)
def reduce_reduce(op, rewriter):
    """reduce(reduce(x, d1), d2) with the same body → reduce(x, d1 ∪ d2')."""
    r = _reduce_of(op, "reduce")
    if r is None:
        return False
    kind, y, init, d2, inner = r
    if inner is None or not has_one_use(y):
        return False
    ri = _simple(inner)
    if ri is None or ri[0] != kind:
        return False
    _, x, _, d1 = ri
    kept = [i for i in range(len(shape_of(x))) if i not in d1]
    dims = sorted(set(d1) | {kept[d] for d in d2})
    with rewriter.ip:
        return replace(rewriter, op, B.reduce(x, init, dims, kind, loc=op.location))


@pattern("reduce_of_transpose", FAMILY, "stablehlo.reduce", benefit=2)
def reduce_of_transpose(op, rewriter):
    """reduce(transpose(x, p), dims) → reduce(x, p[dims]), followed by a transpose of the
    (smaller) result only if the kept dims change order."""
    r = _reduce_of(op, "transpose")
    if r is None:
        return False
    kind, t, init, dims, tr = r
    if tr is None:
        return False
    p = i64_list(tr.attributes["permutation"])
    x = tr.operands[0]
    xd = sorted(p[d] for d in dims)
    kept_t = [p[k] for k in range(len(p)) if k not in dims]  # x dims in result order
    kept_x = [i for i in range(len(p)) if i not in xd]  # x dims in reduce(x) order
    loc = op.location
    with rewriter.ip:
        y = B.reduce(x, init, xd, kind, loc=loc)
        y = B.transpose(y, [kept_x.index(i) for i in kept_t], loc=loc)
        return replace(rewriter, op, y)


@pattern("reduce_of_negate", FAMILY, "stablehlo.reduce", benefit=2, fast_math=True)
def reduce_of_negate(op, rewriter):
    """sum(-x) → -sum(x); max(-x) → -min(x); min(-x) → -max(x) (floats and signed ints).
    Fast-math: a float sum that cancels is +0, its negation -0 (sum(-[1, -1]) = +0, but
    -sum([1, -1]) = -0)."""
    r = _reduce_of(op, "negate")
    if r is None:
        return False
    kind, n, init, dims, neg = r
    if neg is None or not has_one_use(n):
        return False
    et = element_type_of(n)
    dt = np_dtype(et)
    if dt is None or dt.kind in "uc" or dt == np.bool_:
        return False
    flip = {"stablehlo.add": "stablehlo.add", "stablehlo.maximum": "stablehlo.minimum",
            "stablehlo.minimum": "stablehlo.maximum"}.get(kind)
    if flip is None:
        return False
    if flip != kind and dt.kind == "i":
        return False  # -INT_MIN wraps: max(-x) is not -min(x)
    loc = op.location
    with rewriter.ip:
        ident = B.full(reduce_identity(flip, et), ranked([], et), loc=loc)
        y = B.reduce(neg.operands[0], ident, dims, flip, loc=loc)
        return replace(rewriter, op, B.op1("stablehlo.negate", [y], y.type, loc=loc))


def _monotone_lossless(src: ir.Type, dst: ir.Type) -> bool:
    from .algebraic import lossless

    if isinstance(src, ir.IntegerType) and ir.IntegerType(src).width == 1:
        return False
    return lossless(src, dst)


@pattern("reduce_of_convert", FAMILY, "stablehlo.reduce", benefit=2)
def reduce_of_convert(op, rewriter):
    """max/min(convert(x)) → convert(max/min(x)) for a lossless (hence monotone) convert:
    the reduction runs in the narrower type."""
    r = _reduce_of(op, "convert")
    if r is None:
        return False
    kind, c, init, dims, cv = r
    if cv is None or kind not in ("stablehlo.maximum", "stablehlo.minimum") or not has_one_use(c):
        return False
    x = cv.operands[0]
    src, dst = element_type_of(x), element_type_of(c)
    if not _monotone_lossless(src, dst):
        return False
    ident = reduce_identity(kind, src)
    if ident is None:
        return False
    loc = op.location
    with rewriter.ip:
        y = B.reduce(x, B.full(ident, ranked([], src), loc=loc), dims, kind, loc=loc)
        return replace(rewriter, op, B.op1("stablehlo.convert", [y], op.results[0].type, loc=loc))


def _factor_along_kept(v: ir.Value, dims):
    """When v does not vary along the reduced ``dims``: (small, sdims) with v =
    broadcast_in_dim(small, sdims) (small may be rank 0); else None."""
    s = scalar_value(v)
    if s is not None:
        return None  # a splat: handled by the caller
    b = def_of(v, "broadcast_in_dim")
    if b is None:
        return None
    bd = i64_list(b.attributes["broadcast_dimensions"])
    xs = shape_of(b.operands[0])
    for i, d in enumerate(bd):
        if d in dims and xs[i] != 1:
            return None
    return b.operands[0], bd


@pattern("reduce_add_of_scaled", FAMILY, "stablehlo.reduce", benefit=2, fast_math=True)
def reduce_add_of_scaled(op, rewriter):
    """sum(x * c) → sum(x) * c and sum(x / c) → sum(x) / c when c is constant along the
    reduced dims (a splat, a broadcast scalar, or a broadcast of the kept dims): one multiply
    or divide per result element instead of one per input element. Fast-math: the scaled
    terms round and overflow unlike the scaled sum."""
    r = _simple(op)
    if r is None or r[0] != "stablehlo.add":
        return False
    _, m, init, dims = r
    d = defining_op(m)
    if d is None or d.operation.name not in ("stablehlo.multiply", "stablehlo.divide") \
            or not has_one_use(m):
        return False
    name = d.operation.name
    a, b = d.operands
    pairs = [(a, b), (b, a)] if name == "stablehlo.multiply" else [(a, b)]  # only the divisor
    out = shape_of(op.results[0])
    ms = shape_of(m)
    kept = [i for i in range(len(ms)) if i not in dims]
    loc = op.location
    for x, c in pairs:
        sv = scalar_value(c)
        f = None if sv is not None else _factor_along_kept(c, dims)
        if sv is None and f is None:
            continue
        if scalar_value(x) is not None:
            return False
        with rewriter.ip:
            y = B.reduce(x, init, dims, "stablehlo.add", loc=loc)
            if sv is not None:
                k = B.full(sv, ir.RankedTensorType(y.type), loc=loc)
            else:
                small, bd = f
                ss = shape_of(small)
                drop = [i for i, d in enumerate(bd) if d in dims]  # size-1 dims of small
                small = B.reshape(small, [ss[i] for i in range(len(ss)) if i not in drop], loc=loc)
                nd = [kept.index(d) for i, d in enumerate(bd) if i not in drop]
                k = small if (shape_of(small) == tuple(out) and nd == sorted(nd)) else \
                    B.broadcast_in_dim(small, out, nd, loc=loc)
            return replace(rewriter, op, B.op1(name, [y, k], y.type, loc=loc))
    return False


@pattern("reduce_diag", FAMILY, "stablehlo.reduce", benefit=3)
def reduce_diag(op, rewriter):
    """sum over rows (or columns) of diag(d) = select(i == j, broadcast(d), 0) → d (a sum over
    both → sum(d)). With float +0.0 zeros (and n > 1) a -0 entry sums to +0: the result is
    (+0.0) - (-d), as exact as the original sum (not d + 0.0, which XLA folds to d)."""
    r = _simple(op)
    if r is None or r[0] != "stablehlo.add":
        return False
    _, v, init, dims = r
    from .dot import diag_vector

    if len(shape_of(v)) != 2 or len(dims) not in (1, 2):
        return False
    build_d = diag_vector(v)
    if build_d is None:
        return False
    zd = defining_op(v)
    cands = list(zd.operands[1:]) if zd.operation.name == "stablehlo.select" else [zd.operands[0]]
    zs = [scalar_value(c) for c in cands if scalar_value(c) is not None]
    et = element_type_of(v)
    loc = op.location
    with rewriter.ip:
        d = build_d(loc)
        if sorted(dims) == [0, 1]:
            d = B.reduce(d, init, [0], "stablehlo.add", loc=loc)
        if is_float_type(et) and shape_of(v)[0] > 1:
            if not (zs and all(np.signbit(float(z)) for z in zs)):
                pz = B.full(0.0, ir.RankedTensorType(d.type), loc=loc)
                nd = B.op1("stablehlo.negate", [d], d.type, loc=loc)
                d = B.op1("stablehlo.subtract", [pz, nd], d.type, loc=loc)
        return replace(rewriter, op, d)


MUL_TO_DOT_MIN_ELEMENTS = 1 << 16


@pattern("reduce_mul_to_dot", FAMILY, "stablehlo.reduce", benefit=1)
def reduce_mul_to_dot(op, rewriter):
    """sum(a * b) over *all* dims → dot_general(a, b) contracting every dim, and only when:
    the product is single-use, neither factor is a broadcast, splat or iota (a broadcast
    factor belongs in reduce_add_of_scaled) nor an elementwise result (XLA fuses that into
    the reduce; a dot would make it materialize first), and there are at least
    MUL_TO_DOT_MIN_ELEMENTS elements. A full contraction is one long BLAS dot (measured on
    this 2-core CPU: on par with XLA's fused reduce, 0.9-1.0x, at 65k-1M elements); a reduction
    that keeps dims would become a batched dot of many short vectors, which XLA runs
    slower than its fused reduce (Enzyme-JaX's indiscriminate version of this rewrite
    slows a transformer block's gradient by 1.15-1.30x), so that case is left alone."""
    r = _reduce_of(op, "multiply")
    if r is None or r[0] != "stablehlo.add":
        return False
    _, m, init, dims, mul = r
    if mul is None or not has_one_use(m) or sorted(dims) != list(range(len(shape_of(m)))):
        return False
    if num_elements(m) < MUL_TO_DOT_MIN_ELEMENTS or not is_float_type(element_type_of(m)):
        return False
    a, b = mul.operands
    from .layout import NARY_EW

    for v in (a, b):
        d = defining_op(v)
        if scalar_value(v) is not None or (d is not None and (d.operation.name in (
                "stablehlo.broadcast_in_dim", "stablehlo.iota", "stablehlo.constant")
                or d.operation.name in NARY_EW)):
            return False  # an elementwise factor would fuse into the reduce, not into a dot
    nd = list(range(len(shape_of(m))))
    with rewriter.ip:
        return replace(rewriter, op, B.dot_general(a, b, [], [], nd, nd, result_type=op.results[0].type,
                                                  loc=op.location))


@pattern("reduce_all_of_reshape", FAMILY, "stablehlo.reduce", benefit=2)
def reduce_all_of_reshape(op, rewriter):
    """A reduction over every dim of reshape(x) → the same reduction over every dim of x."""
    r = _reduce_of(op, "reshape")
    if r is None:
        return False
    kind, y, init, dims, rs = r
    if rs is None or sorted(dims) != list(range(len(shape_of(y)))):
        return False
    x = rs.operands[0]
    with rewriter.ip:
        return replace(rewriter, op, B.reduce(x, init, list(range(len(shape_of(x)))), kind, loc=op.location))
