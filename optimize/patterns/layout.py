"""Layout patterns: transpose / reshape / broadcast_in_dim cancellation and motion, and
transposes absorbed into dot_general.

All rewrites are exact (they only move data). Measures that make the greedy fixpoint exist:
each pattern removes an op, or strictly lowers the number of ``transpose`` ops, or moves an
elementwise op onto a strictly smaller tensor (``unary_of_broadcast``,
``binary_of_broadcasts``); ``broadcast_to_reshape`` turns a size-preserving broadcast into a
reshape and nothing turns a reshape back into a broadcast of the same size. No pattern here
creates a transpose unless it removes at least one more.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir import shapes
from ...ir.attrs import i64_list, splat_value
from ...ir.types import element_type_of, num_elements, ranked, shape_of
from ...ir.values import def_of, defining_op, has_one_use
from ._registry import identity_pattern, pattern, replace

FAMILY = "layout"

UNARY_EW = frozenset("stablehlo." + n for n in (
    "abs cbrt ceil convert cosine count_leading_zeros exponential exponential_minus_one floor "
    "is_finite log log_plus_one logistic negate not popcnt round_nearest_afz round_nearest_even "
    "rsqrt sign sine sqrt tan tanh").split())
BINARY_EW = frozenset("stablehlo." + n for n in (
    "add and atan2 compare divide maximum minimum multiply or power remainder shift_left "
    "shift_right_arithmetic shift_right_logical subtract xor").split())
NARY_EW = UNARY_EW | BINARY_EW | {"stablehlo.select", "stablehlo.clamp"}


def _perm(op) -> list[int]:
    return i64_list(op.attributes["permutation"])


def _inverse(p: list[int]) -> list[int]:
    inv = [0] * len(p)
    for k, d in enumerate(p):
        inv[d] = k
    return inv


def _bdims(op) -> list[int]:
    return i64_list(op.attributes["broadcast_dimensions"])


def _attrs(op) -> dict:
    a = op.attributes
    return {name: a[name] for name in a}


def _clone_with(op, operands, result_type, loc) -> ir.Value:
    """A copy of an elementwise op (attributes kept) on new operands and result type."""
    return B.op1(op.operation.name, operands, result_type, _attrs(op), loc=loc)


# -- transpose -------------------------------------------------------------------------------

@pattern("transpose_identity", FAMILY, "stablehlo.transpose", benefit=4)
def transpose_identity(op, rewriter):
    """transpose with the identity permutation → its operand."""
    p = _perm(op)
    if p == list(range(len(p))):
        return replace(rewriter, op, op.operands[0])
    return False


@pattern("transpose_transpose", FAMILY, "stablehlo.transpose", benefit=4)
def transpose_transpose(op, rewriter):
    """transpose(transpose(x, p1), p2) → transpose(x, p1∘p2) (x itself when that is the
    identity)."""
    inner = def_of(op.operands[0], "transpose")
    if inner is None:
        return False
    p1, p2 = _perm(inner), _perm(op)
    q = [p1[k] for k in p2]
    with rewriter.ip:
        return replace(rewriter, op, B.transpose(inner.operands[0], q, loc=op.location))


@pattern("transpose_is_reshape", FAMILY, "stablehlo.transpose", benefit=2)
def transpose_is_reshape(op, rewriter):
    """A transpose that only moves size-1 dimensions (the others keep their order) →
    reshape."""
    x = op.operands[0]
    s, p = shape_of(x), _perm(op)
    moved = [d for d in p if s[d] != 1]
    if moved != sorted(moved) or p == list(range(len(p))):
        return False
    with rewriter.ip:
        return replace(rewriter, op, B.reshape(x, shape_of(op.results[0]), loc=op.location))


@pattern("transpose_of_broadcast", FAMILY, "stablehlo.transpose", benefit=3)
def transpose_of_broadcast(op, rewriter):
    """transpose(broadcast_in_dim(x, dims)) → broadcast_in_dim(x, dims') (with a transpose of
    the smaller x first when dims' would not be increasing)."""
    b = def_of(op.operands[0], "broadcast_in_dim")
    if b is None:
        return False
    x = b.operands[0]
    inv = _inverse(_perm(op))
    nd = [inv[d] for d in _bdims(b)]
    out = shape_of(op.results[0])
    with rewriter.ip:
        if nd != sorted(nd):
            if num_elements(x) >= num_elements(op.results[0]):
                return False
            order = sorted(range(len(nd)), key=lambda i: nd[i])
            x = B.transpose(x, order, loc=op.location)
            nd = sorted(nd)
        return replace(rewriter, op, B.broadcast_in_dim(x, out, nd, loc=op.location))


def _iota_operand_dim(op) -> int | None:
    """The iota dimension of ``op``'s operand when an iota defines it, else None."""
    i = def_of(op.operands[0], "iota")
    return None if i is None else ir.IntegerAttr(i.attributes["iota_dimension"]).value


@pattern("transpose_of_iota", FAMILY, "stablehlo.transpose", benefit=3)
def transpose_of_iota(op, rewriter):
    """transpose(iota(dim d)) → iota(dim p⁻¹[d]) of the transposed shape."""
    d = _iota_operand_dim(op)
    if d is None:
        return False
    nd = _inverse(_perm(op))[d]
    with rewriter.ip:
        return replace(rewriter, op, B.iota(op.results[0].type, nd, loc=op.location))


def _free_under_transpose(v: ir.Value, perm: list[int], loc):
    """``transpose(v, perm)`` without a new transpose op, or None: v a splat constant, a
    rank-0 scalar operand, an inverse transpose, or a broadcast_in_dim (its dims permuted
    and still increasing)."""
    s = shape_of(v)
    if len(s) == 0:
        return v
    t = ranked([s[p] for p in perm], element_type_of(v))
    sv = splat_value(v)
    if sv is not None:
        return B.full(sv, t, loc=loc)
    tr = def_of(v, "transpose")
    if tr is not None:
        q = _perm(tr)
        if [q[k] for k in perm] == list(range(len(perm))):
            return tr.operands[0]
        return None
    b = def_of(v, "broadcast_in_dim")
    if b is not None:
        inv = _inverse(perm)
        nd = [inv[d] for d in _bdims(b)]
        if nd == sorted(nd):
            return B.broadcast_in_dim(b.operands[0], t.shape, nd, loc=loc)
    d = def_of(v, "dot_general")
    if d is not None and has_one_use(v):
        return _dot_transposed(d, perm, t, loc)
    return None


def _absorbing_dot(v, perm) -> bool:
    d = def_of(v, "dot_general")
    return d is not None and has_one_use(v) and _dot_plan(d, perm) is not None


def _is_inverse_transpose(v, perm) -> bool:
    tr = def_of(v, "transpose")
    if tr is None:
        return False
    q = _perm(tr)
    return [q[k] for k in perm] == list(range(len(perm)))


@pattern("transpose_elementwise_sink", FAMILY, "stablehlo.transpose", benefit=2)
def transpose_elementwise_sink(op, rewriter):
    """transpose(ew(a, b, ...)) → ew(a', b', ...) when every operand takes the transpose for
    free (an inverse transpose that cancels, a splat, a broadcast, a scalar, a single-use
    dot_general that absorbs it) and at least one is an inverse transpose or a dot: the
    transpose disappears."""
    ew = defining_op(op.operands[0])
    if ew is None or ew.operation.name not in NARY_EW or not has_one_use(op.operands[0]):
        return False
    perm = _perm(op)
    if not any(_is_inverse_transpose(v, perm) or _absorbing_dot(v, perm) for v in ew.operands):
        return False
    # dry run first: nothing is built unless all operands are free
    for v in ew.operands:
        if len(shape_of(v)) and splat_value(v) is None and not _is_inverse_transpose(v, perm) \
                and not _absorbing_dot(v, perm):
            b = def_of(v, "broadcast_in_dim")
            if b is None:
                return False
            inv = _inverse(perm)
            nd = [inv[d] for d in _bdims(b)]
            if nd != sorted(nd):
                return False
    with rewriter.ip:
        new_ops = [_free_under_transpose(v, perm, op.location) for v in ew.operands]
        rt = ranked(shape_of(op.results[0]), element_type_of(ew.results[0]))
        return replace(rewriter, op, _clone_with(ew, new_ops, rt, op.location))


@pattern("elementwise_transpose_hoist", FAMILY, tuple(sorted(NARY_EW - UNARY_EW)), benefit=1)
def elementwise_transpose_hoist(op, rewriter):
    """ew(transpose(a, p), transpose(b, p), splat...) → transpose(ew(a, b, splat'), p) when at
    least two operands are single-use transposes with the same permutation (and the rest are
    splats or scalars): one transpose instead of several."""
    perm = None
    n = 0
    for v in op.operands:
        if len(shape_of(v)) == 0 or splat_value(v) is not None:
            continue
        tr = def_of(v, "transpose")
        if tr is None or not has_one_use(v):
            return False
        p = _perm(tr)
        if perm is None:
            perm = p
        elif p != perm:
            return False
        n += 1
    if n < 2:
        return False
    inv = _inverse(perm)
    with rewriter.ip:
        ops = []
        for v in op.operands:
            s = shape_of(v)
            if len(s) == 0:
                ops.append(v)
            elif splat_value(v) is not None:
                ops.append(B.full(splat_value(v), ranked([s[k] for k in inv], element_type_of(v)),
                                          loc=op.location))
            else:
                ops.append(defining_op(v).operands[0])
        rs = shape_of(op.results[0])
        inner = _clone_with(op, ops, ranked([rs[k] for k in inv], element_type_of(op.results[0])),
                            op.location)
        return replace(rewriter, op, B.transpose(inner, perm, loc=op.location))


# -- reshape ---------------------------------------------------------------------------------

identity_pattern("reshape_identity", FAMILY, "stablehlo.reshape", benefit=4,
                 doc="reshape to the operand's own shape → the operand.")


@pattern("reshape_reshape", FAMILY, "stablehlo.reshape", benefit=4)
def reshape_reshape(op, rewriter):
    """reshape(reshape(x)) → reshape(x) (x when the shapes agree)."""
    inner = def_of(op.operands[0], "reshape")
    if inner is None:
        return False
    with rewriter.ip:
        return replace(rewriter, op, B.reshape(inner.operands[0], shape_of(op.results[0]), loc=op.location))


def _fill_unit_dims(nd: list, out_rank: int):
    """Give each None entry (a size-1 operand dim) an unused output dim; None if none left."""
    used = {d for d in nd if d is not None}
    free = [d for d in range(out_rank) if d not in used]
    out = []
    for d in nd:
        if d is None:
            if not free:
                return None
            d = free.pop(0)
        out.append(d)
    return out


@pattern("reshape_of_broadcast", FAMILY, "stablehlo.reshape", benefit=3)
def reshape_of_broadcast(op, rewriter):
    """reshape(broadcast_in_dim(x)) that only inserts/removes size-1 dims → one
    broadcast_in_dim(x)."""
    b = def_of(op.operands[0], "broadcast_in_dim")
    if b is None:
        return False
    out = shape_of(op.results[0])
    m = shapes.unit_dims_map(shape_of(b.results[0]), out)
    if m is None:
        return False
    nd = _fill_unit_dims([m[d] for d in _bdims(b)], len(out))
    if nd is None:
        return False
    with rewriter.ip:
        return replace(rewriter, op, B.broadcast_in_dim(b.operands[0], out, nd, loc=op.location))


@pattern("reshape_of_iota", FAMILY, "stablehlo.reshape", benefit=3)
def reshape_of_iota(op, rewriter):
    """reshape(iota) that only inserts/removes size-1 dims → iota of the new shape."""
    d = _iota_operand_dim(op)
    if d is None:
        return False
    m = shapes.unit_dims_map(shape_of(op.operands[0]), shape_of(op.results[0]))
    if m is None or m[d] is None:
        return False
    with rewriter.ip:
        return replace(rewriter, op, B.iota(op.results[0].type, m[d], loc=op.location))


# -- broadcast_in_dim ------------------------------------------------------------------------

@pattern("broadcast_identity", FAMILY, "stablehlo.broadcast_in_dim", benefit=4)
def broadcast_identity(op, rewriter):
    """broadcast_in_dim to the operand's own type with dims 0..n-1 → the operand."""
    x = op.operands[0]
    d = _bdims(op)
    if x.type == op.results[0].type and d == list(range(len(d))):
        return replace(rewriter, op, x)
    return False


@pattern("broadcast_is_transpose", FAMILY, "stablehlo.broadcast_in_dim", benefit=3)
def broadcast_is_transpose(op, rewriter):
    """broadcast_in_dim with a permutation as dims and no size change → transpose."""
    x = op.operands[0]
    d = _bdims(op)
    s, out = shape_of(x), shape_of(op.results[0])
    if len(s) != len(out) or sorted(d) != list(range(len(d))) or d == sorted(d):
        return False
    if any(out[d[i]] != s[i] for i in range(len(s))):
        return False
    with rewriter.ip:
        return replace(rewriter, op, B.transpose(x, _inverse(d), loc=op.location))


@pattern("broadcast_broadcast", FAMILY, "stablehlo.broadcast_in_dim", benefit=4)
def broadcast_broadcast(op, rewriter):
    """broadcast_in_dim(broadcast_in_dim(x, d1), d2) → broadcast_in_dim(x, d2∘d1)."""
    inner = def_of(op.operands[0], "broadcast_in_dim")
    if inner is None:
        return False
    d1, d2 = _bdims(inner), _bdims(op)
    with rewriter.ip:
        return replace(rewriter, op, B.broadcast_in_dim(inner.operands[0], shape_of(op.results[0]),
                                                [d2[d] for d in d1], loc=op.location))


@pattern("broadcast_of_unit_reshape", FAMILY, "stablehlo.broadcast_in_dim", benefit=3)
def broadcast_of_unit_reshape(op, rewriter):
    """broadcast_in_dim(reshape(x)) where the reshape only inserts/removes size-1 dims →
    broadcast_in_dim(x)."""
    r = def_of(op.operands[0], "reshape")
    if r is None:
        return False
    x = r.operands[0]
    m = shapes.unit_dims_map(shape_of(x), shape_of(r.results[0]))
    if m is None:
        return False
    d = _bdims(op)
    nd = _fill_unit_dims([None if j is None else d[j] for j in m], len(shape_of(op.results[0])))
    if nd is None:
        return False
    with rewriter.ip:
        return replace(rewriter, op, B.broadcast_in_dim(x, shape_of(op.results[0]), nd, loc=op.location))


@pattern("broadcast_to_reshape", FAMILY, "stablehlo.broadcast_in_dim", benefit=2)
def broadcast_to_reshape(op, rewriter):
    """broadcast_in_dim that keeps the element count and the dimension order (it only
    inserts size-1 dims) → reshape."""
    x = op.operands[0]
    d = _bdims(op)
    if d != sorted(d) or num_elements(x) != num_elements(op.results[0]) or x.type == op.results[0].type:
        return False
    s, out = shape_of(x), shape_of(op.results[0])
    if any(out[d[i]] != s[i] for i in range(len(s))):
        return False
    with rewriter.ip:
        return replace(rewriter, op, B.reshape(x, out, loc=op.location))


@pattern("broadcast_of_iota", FAMILY, "stablehlo.broadcast_in_dim", benefit=3)
def broadcast_of_iota(op, rewriter):
    """broadcast_in_dim(iota(dim d), dims) → iota(dim dims[d]) of the result shape (when the
    iota dimension keeps its size)."""
    d = _iota_operand_dim(op)
    if d is None:
        return False
    nd = _bdims(op)[d]
    if shape_of(op.operands[0])[d] != shape_of(op.results[0])[nd]:
        return False
    with rewriter.ip:
        return replace(rewriter, op, B.iota(op.results[0].type, nd, loc=op.location))


@pattern("unary_of_broadcast", FAMILY, tuple(sorted(UNARY_EW)), benefit=2)
def unary_of_broadcast(op, rewriter):
    """u(broadcast_in_dim(x)) → broadcast_in_dim(u(x)) when x is smaller: the op runs on
    fewer elements."""
    b = def_of(op.operands[0], "broadcast_in_dim")
    if b is None:
        return False
    x = b.operands[0]
    if num_elements(x) >= num_elements(op.results[0]) or splat_value(x) is not None:
        return False
    with rewriter.ip:
        inner = _clone_with(op, [x], ranked(shape_of(x), element_type_of(op.results[0])), op.location)
        return replace(rewriter, op, B.broadcast_in_dim(inner, shape_of(op.results[0]), _bdims(b), loc=op.location))


@pattern("binary_of_broadcasts", FAMILY, tuple(sorted(BINARY_EW)), benefit=2)
def binary_of_broadcasts(op, rewriter):
    """op(broadcast(x, d), broadcast(y, d)) → broadcast(op(x, y), d) for same-shaped x, y;
    op(broadcast(x, d), splat) → broadcast(op(x, splat'), d). Only when x is smaller than the
    result."""
    a, b = op.operands
    ba, bb = def_of(a, "broadcast_in_dim"), def_of(b, "broadcast_in_dim")
    out = shape_of(op.results[0])
    src = ba if ba is not None else bb
    if src is None:
        return False
    x = src.operands[0]
    dims = _bdims(src)
    if num_elements(x) >= num_elements(op.results[0]):
        return False
    xs = shape_of(x)
    new = []
    for v, bv in ((a, ba), (b, bb)):
        if bv is not None and _bdims(bv) == dims and shape_of(bv.operands[0]) == xs:
            new.append(bv.operands[0])
        elif splat_value(v) is not None:
            new.append(None)
        else:
            return False
    if all(n is None for n in new) or all(splat_value(n) is not None for n in new if n is not None):
        return False  # constants: folding's job
    with rewriter.ip:
        ops = [n if n is not None else B.full(splat_value(v), ranked(xs, element_type_of(v)), loc=op.location)
               for n, v in zip(new, (a, b))]
        inner = _clone_with(op, ops, ranked(xs, element_type_of(op.results[0])), op.location)
        return replace(rewriter, op, B.broadcast_in_dim(inner, out, dims, loc=op.location))


# -- transposes and dot_general --------------------------------------------------------------

def _absorb(perm, batch, contract):
    """Map a dot operand's dimension numbers through the transpose feeding it; None when the
    operand's free dims would change order (that would permute the dot's result)."""
    n = len(perm)
    free = [d for d in range(n) if d not in batch and d not in contract]
    mapped = [perm[d] for d in free]
    if mapped != sorted(mapped):
        return None
    return [perm[d] for d in batch], [perm[d] for d in contract]


@pattern("dot_transpose_operand", FAMILY, "stablehlo.dot_general", benefit=3)
def dot_transpose_operand(op, rewriter):
    """dot_general(transpose(a), b) → dot_general(a, b) with the dimension numbers mapped
    through the permutation (same for the rhs), when the operand's free dims keep their
    order."""
    lhs, rhs = op.operands
    lb, rb, lc, rc = B.dot_dims(op)
    changed = False
    tl = def_of(lhs, "transpose")
    if tl is not None:
        r = _absorb(_perm(tl), lb, lc)
        # XLA's CPU dot is markedly slower when the lhs contracts a leading dim (measured
        # 10-15% on 512^2): absorb an lhs transpose only if the lhs keeps contracting its
        # trailing dims; an explicit transpose is cheaper than that.
        if r is not None and _contracts_trailing(tl.operands[0], r[1]):
            lhs, (lb, lc), changed = tl.operands[0], r, True
    tr = def_of(rhs, "transpose")
    if tr is not None:
        r = _absorb(_perm(tr), rb, rc)
        if r is not None:
            rhs, (rb, rc), changed = tr.operands[0], r, True
    if not changed:
        return False
    with rewriter.ip:
        return replace(rewriter, op, B.dot_general(lhs, rhs, lb, rb, lc, rc, result_type=op.results[0].type,
                                                  loc=op.location, like=op))


def _swap_precision(op) -> dict:
    out = {}
    if "precision_config" in op.attributes:
        pc = ir.ArrayAttr(op.attributes["precision_config"])
        if len(pc) == 2:
            out["precision_config"] = ir.ArrayAttr.get([pc[1], pc[0]])
    return out


def _dot_plan(d, p):
    """How ``transpose(dot_general d, p)`` becomes one dot_general: ("same", lb, rb) (batch
    dims reordered) or ("swap", lb, rb) (operands swapped); None if it cannot."""
    if "algorithm" in d.attributes:
        return None
    a, b = d.operands
    lb, rb, lc, rc = B.dot_dims(d)
    nb = len(lb)
    nlf = len(shape_of(a)) - nb - len(lc)
    nrf = len(shape_of(b)) - nb - len(rc)
    batch = list(p[:nb])
    if sorted(batch) != list(range(nb)):
        return None
    rest = list(p[nb:])
    lf = list(range(nb, nb + nlf))
    rf = list(range(nb + nlf, nb + nlf + nrf))
    nlb, nrb = [lb[k] for k in batch], [rb[k] for k in batch]
    if rest == lf + rf:
        if batch == list(range(nb)):
            return None  # identity permutation
        return ("same", nlb, nrb)
    if rest == rf + lf and nlf and nrf:
        return ("swap", nlb, nrb)
    return None


def _dot_transposed(d, p, result_type, loc) -> ir.Value | None:
    plan = _dot_plan(d, p)
    if plan is None:
        return None
    kind, nlb, nrb = plan
    a, b = d.operands
    _, _, lc, rc = B.dot_dims(d)
    if kind == "same":
        return B.dot_general(a, b, nlb, nrb, lc, rc, result_type=result_type, loc=loc, like=d)
    v = B.dot_general(b, a, nrb, nlb, rc, lc, result_type=result_type, loc=loc)
    attrs = _swap_precision(d)
    if attrs:
        v.owner.attributes["precision_config"] = attrs["precision_config"]
    return v


@pattern("transpose_of_dot", FAMILY, "stablehlo.transpose", benefit=3)
def transpose_of_dot(op, rewriter):
    """transpose(dot_general(a, b)) → dot_general(b, a) when the permutation swaps the lhs
    and rhs free-dim blocks (each kept in order), or → dot_general(a, b) with reordered batch
    dims when it only permutes the batch dims; batch dims stay in front either way."""
    d = def_of(op.operands[0], "dot_general")
    if d is None or not has_one_use(op.operands[0]):
        return False
    plan = _dot_plan(d, _perm(op))
    if plan is None or (plan[0] == "swap" and not _contracts_trailing(d.operands[1], B.dot_dims(d)[3])):
        return False  # swapped, the rhs would become an lhs contracting leading dims: slower
    with rewriter.ip:
        return replace(rewriter, op, _dot_transposed(d, _perm(op), op.results[0].type, op.location))


def _contracts_trailing(x, contracting) -> bool:
    """Whether ``contracting`` are the trailing dims of ``x`` (the fast lhs form on CPU)."""
    n = len(shape_of(x))
    return sorted(contracting) == list(range(n - len(contracting), n))


# (reduce(transpose) is in reduce.py; slices, pads and concatenates are family B's.)


@pattern("unary_of_unit_reshape", FAMILY, tuple(sorted(UNARY_EW)), benefit=1)
def unary_of_unit_reshape(op, rewriter):
    """u(reshape(x)) → reshape(u(x)) when the reshape only inserts/removes size-1 dims (a
    bitcast): moves reshapes towards their users, where they merge with broadcasts
    (``broadcast_of_unit_reshape``) and other reshapes. Nothing moves them back."""
    r = def_of(op.operands[0], "reshape")
    if r is None or not has_one_use(op.operands[0]):
        return False
    x = r.operands[0]
    if shapes.unit_dims_map(shape_of(x), shape_of(op.operands[0])) is None:
        return False
    with rewriter.ip:
        inner = _clone_with(op, [x], ranked(shape_of(x), element_type_of(op.results[0])), op.location)
        return replace(rewriter, op, B.reshape(inner, shape_of(op.results[0]), loc=op.location))
