"""dot_general rewrites: diagonal matrices, scalar factoring, distributivity, degenerate
contractions, and the diagonal of a matrix product.

Diagonal matrices are recognised in the two forms JAX and our tracer emit:
- ``select(iota_i == iota_j, broadcast(v), 0)`` (``jnp.diag``, ``np.diag``), seeing through
  offsets added to the iotas, broadcasts, unit reshapes, converts;
- ``scatter(zeros(n, n), [[k, k] for k in range(n)], v)`` (``zeros.at[i, i].set(v)``); the
  index tensor is evaluated with NumPy when it is computed from iotas and constants.
A product with such a matrix becomes a broadcast multiply: O(n²) instead of O(n³).

Semantics (``optimize.exactness``): scalar factoring, distributivity, zero-padded and
broadcast operands change the rounding, overflow or NaNs of the products: fast-math. A
product with a diagonal matrix is exact (``dot_diag_*``) with a correction, still O(n²), for
what the dense sum adds to the one nonzero product: its 0·Inf and 0·NaN terms (NaN where any
other entry of the contracted row or column is not finite) and its +0.0 start (a -0 product
becomes +0). The plain broadcast multiply is the fast-math variant (``dot_diag_*_fast``).
``dot_zero`` on floats is fast-math only.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from ...ir import build as B
from ...ir import shapes
from ...ir.attrs import i64_list, scalar_value
from ...ir.evaluate import evaluate_value
from ...ir.loops import add_affine, scale_affine
from ...ir.types import element_type_of, is_float_type, num_elements, ranked, shape_of
from ...ir.values import def_of, defining_op, has_one_use
from ._registry import pattern, replace, variant

FAMILY = "dot"
EVAL_LIMIT = 1 << 16


# -- index analysis --------------------------------------------------------------------------

def linear_index(v: ir.Value, depth: int = 0):
    """(coefficients {dim: c}, offset) when the integer tensor ``v`` equals
    ``sum_d c_d * index[d] + offset`` everywhere: iotas combined by add, subtract, negate and
    multiplication by constants, seen through broadcasts, unit reshapes and widening
    converts; else None."""
    if depth > 16 or not isinstance(element_type_of(v), ir.IntegerType):
        return None
    s = scalar_value(v)
    if s is not None:
        return {}, int(s)
    op = defining_op(v)
    if op is None:
        return None
    name = op.operation.name
    if name == "stablehlo.iota":
        return {ir.IntegerAttr(op.attributes["iota_dimension"]).value: 1}, 0
    if name in ("stablehlo.add", "stablehlo.subtract"):
        a, b = linear_index(op.operands[0], depth + 1), linear_index(op.operands[1], depth + 1)
        if a is None or b is None:
            return None
        return add_affine(a, b, 1 if name == "stablehlo.add" else -1)
    if name == "stablehlo.negate":
        a = linear_index(op.operands[0], depth + 1)
        return None if a is None else ({d: -c for d, c in a[0].items()}, -a[1])
    if name == "stablehlo.multiply":
        for x, k in ((op.operands[0], op.operands[1]), (op.operands[1], op.operands[0])):
            sk = scalar_value(k)
            if sk is not None:
                a = linear_index(x, depth + 1)
                return None if a is None else scale_affine(a, int(sk))
        return None
    if name == "stablehlo.broadcast_in_dim":
        x = op.operands[0]
        a = linear_index(x, depth + 1)
        if a is None:
            return None
        bd = i64_list(op.attributes["broadcast_dimensions"])
        xs, vs = shape_of(x), shape_of(v)
        if any(xs[d] != vs[bd[d]] for d in a[0]):
            return None
        return {bd[d]: c for d, c in a[0].items()}, a[1]
    if name == "stablehlo.convert":
        x = op.operands[0]
        if isinstance(element_type_of(x), ir.IntegerType) and \
                ir.IntegerType(element_type_of(x)).width <= ir.IntegerType(element_type_of(v)).width:
            return linear_index(x, depth + 1)
        return None
    if name == "stablehlo.reshape":
        x = op.operands[0]
        a = linear_index(x, depth + 1)
        m = shapes.unit_dims_map(shape_of(x), shape_of(v))
        if a is None or m is None or any(m[d] is None for d in a[0]):
            return None
        return {m[d]: c for d, c in a[0].items()}, a[1]
    return None


def _direction(op) -> str:
    return hlo.ComparisonDirectionAttr(op.attributes["comparison_direction"]).value


def eye_mask(p: ir.Value):
    """"EQ" when ``p`` is the n×n mask i == j, "NE" for i != j; else None. The sides of the
    compare may be any linear index expressions (``iota0 == iota1``, ``iota1 - iota0 == 0``,
    ``iota0 + k == iota1 + k``, ...)."""
    s = shape_of(p)
    if len(s) != 2 or s[0] != s[1]:
        return None
    c = def_of(p, "compare")
    if c is None:
        return None
    d = _direction(c)
    if d not in ("EQ", "NE"):
        return None
    a, b = linear_index(c.operands[0]), linear_index(c.operands[1])
    if a is None or b is None:
        return None
    co = dict(a[0])
    for k, v in b[0].items():
        co[k] = co.get(k, 0) - v
    co = {k: v for k, v in co.items() if v}
    if set(co) != {0, 1} or co[0] != -co[1] or a[1] != b[1]:
        return None
    # every intermediate stays far inside the integer range: no wraparound
    et = ir.IntegerType(element_type_of(c.operands[0]))
    bound = (abs(co[0]) * 2 + 2) * s[0] + abs(a[1]) + abs(b[1])
    if bound >= (1 << (et.width - 2)):
        return None
    return d


def _broadcast_vector(t: ir.Value, n: int):
    """For an n×n tensor t whose value at (i, i) depends on i only through a single vector
    (t is a broadcast of a vector along rows or columns, or of a scalar): a function
    ``B.op1(loc) -> value of shape [n]`` producing that vector; else None."""
    sv = scalar_value(t)
    if sv is not None:
        et = element_type_of(t)
        return lambda loc: B.full(sv, ranked([n], et), loc=loc)
    # compose nested broadcast_in_dim / unit reshapes down to a source with a dim map
    x, dims = t, list(range(2))
    for _ in range(8):
        b = def_of(x, "broadcast_in_dim")
        r = def_of(x, "reshape")
        if b is not None:
            bd = i64_list(b.attributes["broadcast_dimensions"])
            x, dims = b.operands[0], [dims[d] for d in bd]
            continue
        if r is not None:
            src = r.operands[0]
            m = shapes.unit_dims_map(shape_of(src), shape_of(x))
            if m is None:
                break
            ss = shape_of(src)
            if any(m[i] is None and ss[i] != 1 for i in range(len(ss))):
                break
            x, dims = src, [None if m[i] is None else dims[m[i]] for i in range(len(ss))]
            continue
        break
    if x is t:
        return None
    xs = shape_of(x)
    big = [k for k, s in enumerate(xs) if s != 1]
    if len(big) > 1:
        return None
    if not big:
        def build_scalar(loc, x=x):
            s = B.reshape(x, [], loc=loc)
            return B.broadcast_in_dim(s, [n], [], loc=loc)
        return build_scalar
    k = big[0]
    if dims[k] not in (0, 1) or xs[k] != n:
        return None
    return lambda loc, x=x: B.reshape(x, [n], loc=loc)


def _is_zero(v, depth: int = 0) -> bool:
    """v is all zeros: a zero splat (seen through broadcasts) or a select of two such."""
    s = scalar_value(v)
    if s is not None:
        return float(s) == 0.0
    sel = def_of(v, "select")
    return sel is not None and depth < 4 and _is_zero(sel.operands[1], depth + 1) \
        and _is_zero(sel.operands[2], depth + 1)


def diag_of_select(v: ir.Value):
    """``B.op1(loc) -> d`` for v = select(i == j, T, 0) (or select(i != j, 0, T)) with T a row
    or column broadcast of a vector, i.e. v = diag(d); else None."""
    sel = def_of(v, "select")
    if sel is None:
        return None
    p, a, b = sel.operands
    kind = eye_mask(p)
    if kind == "EQ" and _is_zero(b):
        t = a
    elif kind == "NE" and _is_zero(a):
        t = b
    else:
        return None
    return _broadcast_vector(t, shape_of(v)[0])


def diag_of_scatter(v: ir.Value):
    """``B.op1(loc) -> d`` for v = scatter(zeros(n, n), [[k, k]]_k, d) (set or add); else None."""
    sc = def_of(v, "scatter")
    if sc is None or len(sc.operands) != 3:
        return None
    z, idx, upd = sc.operands
    s = shape_of(v)
    if len(s) != 2 or s[0] != s[1] or not _is_zero(z) or shape_of(upd) != (s[0],):
        return None
    dn = hlo.ScatterDimensionNumbers(sc.attributes["scatter_dimension_numbers"])
    if list(dn.update_window_dims) or sorted(dn.inserted_window_dims) != [0, 1] \
            or list(dn.input_batching_dims) or sorted(dn.scattered_dims_to_operand_dims) != [0, 1]:
        return None
    # the update computation: return the update (set) or the sum
    block = sc.regions[0].blocks[0]
    ops = list(block.operations)
    args = list(block.arguments)
    ret = ops[-1]
    if ret.operation.name != "stablehlo.return" or len(ret.operands) != 1:
        return None
    r = ret.operands[0]
    if r == args[1]:
        pass
    elif len(ops) == 2 and ops[0].operation.name == "stablehlo.add" and r == ops[0].results[0] \
            and {ops[0].operands[0], ops[0].operands[1]} == {args[0], args[1]}:
        pass
    else:
        return None
    n = s[0]
    ivd = dn.index_vector_dim
    ish = shape_of(idx)
    if len(ish) != 2 or ivd != 1 or ish != (n, 2):
        return None
    val = evaluate_value(idx, EVAL_LIMIT)
    if val is None:
        return None
    k = np.arange(n)
    if not ((val[:, 0] == k).all() and (val[:, 1] == k).all()):
        return None
    return lambda loc: upd


def diag_vector(v: ir.Value):
    """``B.op1(loc) -> d`` when v is diag(d) in either recognised form."""
    return diag_of_select(v) or diag_of_scatter(v)


# -- diagonal matrix products ----------------------------------------------------------------

def _plain_dot(op):
    """(lc, rc) of a dot_general without batch dims and with one contracting dim each,
    operands and result of one element type; else None."""
    lb, rb, lc, rc = B.dot_dims(op)
    a, b = op.operands
    if lb or rb or len(lc) != 1 or len(rc) != 1:
        return None
    if not (element_type_of(a) == element_type_of(b) == element_type_of(op.results[0])):
        return None
    return lc[0], rc[0]


def _matrix_dot(v: ir.Value):
    """(lhs, rhs, lc, rc) when ``v`` is a single-use ``_plain_dot`` of two matrices."""
    d = def_of(v, "dot_general")
    if d is None or not has_one_use(v):
        return None
    pd = _plain_dot(d)
    if pd is None:
        return None
    lhs, rhs = d.operands
    if len(shape_of(lhs)) != 2 or len(shape_of(rhs)) != 2:
        return None
    return lhs, rhs, pd[0], pd[1]


def _product_diagonal(lhs, rhs, lc: int, rc: int, et, loc) -> ir.Value:
    """sum_k A'[i,k] * B'[i,k]: the diagonal of the ``_matrix_dot`` product, as a vector."""
    at = B.transpose(lhs, [1 - lc, lc], loc=loc)  # [n, k]
    bt = B.transpose(rhs, [1 - rc, rc], loc=loc)  # [n, k]
    prod = B.op1("stablehlo.multiply", [at, bt], at.type, loc=loc)
    zero = B.full(0, ranked([], et), loc=loc)
    return B.reduce(prod, zero, [1], "stablehlo.add", loc=loc)


def _dense_sum_of_one_product(r, x, axis: int, loc):
    """What a dense product adds to its one nonzero term ``r`` = d * ``x`` (``x`` the other
    operand, contracted along ``axis``). Every other term is 0 * x[k]: NaN where x[k] is
    infinite or NaN, else a zero; and the sum starts from +0.0 (NumPy's BLAS and XLA's matrix
    products, measured; XLA's products of short vectors may drop that start, a reduction's
    schedule being free: ``optimize.exactness``). So the result is NaN where some *other* x[k]
    of the contracted line is not finite, else r with a -0 turned into +0: NumPy's bits.
    O(n²): one count per line."""
    out = shape_of(r)
    i32 = ir.IntegerType.get_signless(32)
    bad = B.convert(B.not_(B.is_finite(x, loc=loc), loc=loc), i32, loc=loc)
    per_line = B.reduce(bad, B.scalar(0, i32, loc=loc), [axis], "stablehlo.add", loc=loc)
    lines = B.broadcast_in_dim(per_line, out, [d for d in range(len(out)) if d != axis], loc=loc)
    poisoned = B.compare(lines, bad, "GT", loc=loc)  # a non-finite x[k], k off the diagonal
    # r + (NaN or +0.0): the 0 * Inf terms' NaN, or the +0.0 start turning a -0 into +0 (a
    # computed +0.0: XLA folds away an add of the constant, ``optimize.exactness``)
    et = element_type_of(r)
    p = B.select(poisoned, B.full(float("nan"), ranked(out, et), loc=loc), B.full(0.0, ranked(out, et), loc=loc),
                 loc=loc)
    return B.op1("stablehlo.add", [r, p], r.type, loc=loc)


def _diag_product(op, rewriter, side: int, finder, fast: bool) -> bool:
    pd = _plain_dot(op)
    if pd is None:
        return False
    dmat = op.operands[side]
    if len(shape_of(dmat)) != 2:
        return False
    et = element_type_of(op.results[0])
    exact_float = not fast and is_float_type(et)
    # exact: real floats (corrected) and integers (0 * x is 0, wrapping sums are exact); a
    # complex product's 0 * Inf spreads NaN by the rules of complex multiplication: fast-math
    # only. A 1x1 diagonal is a single product, no sum (XLA's too): dot_unit_contract.
    if not fast and (not (exact_float or isinstance(et, ir.IntegerType)) or shape_of(dmat)[0] == 1):
        return False
    build_d = finder(dmat)
    if build_d is None:
        return False
    other = op.operands[1 - side]
    c = pd[1 - side]  # the other operand's contracting dim
    free = [d for d in range(len(shape_of(other))) if d != c]
    loc = op.location
    with rewriter.ip:
        # scale (and correct) in the other operand's layout, then move its contracted dim to
        # where the product puts d's free one: diag(d) @ B: out[i, f] = d[i] * B[.., i at c, ..];
        # A @ diag(d): out[f, j] = A[.., j at c, ..] * d[j]
        dv = B.broadcast_in_dim(build_d(loc), shape_of(other), [c], loc=loc)
        r = B.op1("stablehlo.multiply", [dv, other] if side == 0 else [other, dv], other.type, loc=loc)
        if exact_float:
            r = _dense_sum_of_one_product(r, other, c, loc)
        return replace(rewriter, op, B.transpose(r, [c] + free if side == 0 else free + [c], loc=loc))


# exact (the default) and fast-math (no correction; tried first when fast math is on)
for _side, _sname, _shape in ((0, "lhs", "dot(diag(d), B) → broadcast(d) * B"),
                              (1, "rhs", "dot(A, diag(d)) → A * broadcast(d)")):
    for _finder, _form in ((diag_of_select, "select"), (diag_of_scatter, "scatter")):
        _how = ("built by iota/compare/select" if _form == "select" else "built by scattering d into zeros")
        variant(f"dot_diag_{_form}_{_sname}", FAMILY, "stablehlo.dot_general", _diag_product, _side, _finder, False,
                benefit=5, doc=f"{_shape} for diag {_how}, NaN where the dense product's 0 * Inf "
                               "terms are (a -0 product as +0): exact.")
        variant(f"dot_diag_{_form}_{_sname}_fast", FAMILY, "stablehlo.dot_general", _diag_product, _side, _finder,
                True, benefit=6, fast_math=True,
                doc=f"{_shape} for diag {_how} (fast-math: the dense product's 0 * Inf NaNs and +0 terms are lost).")


@pattern("diag_of_dot", FAMILY, "stablehlo.select", benefit=4)
def diag_of_dot(op, rewriter):
    """select(i == j, dot(A, B), 0) → select(i == j, broadcast(sum_k A'[i,k] * B'[i,k]), 0):
    only the diagonal of the product is kept, so compute just that (O(nk), not O(n²k))."""
    p, a, z = op.operands
    if eye_mask(p) != "EQ" or not _is_zero(z):
        return False
    md = _matrix_dot(a)
    if md is None or not is_float_type(element_type_of(a)) \
            and not isinstance(element_type_of(a), ir.IntegerType):
        return False
    n = shape_of(a)[0]
    loc = op.location
    with rewriter.ip:
        dvec = _product_diagonal(*md, element_type_of(a), loc)
        dv = B.broadcast_in_dim(dvec, [n, n], [0], loc=loc)
        return replace(rewriter, op, B.op1("stablehlo.select", [p, dv, z], op.results[0].type, loc=loc))


# -- scalar factoring, distributivity ----------------------------------------------------------

def _scalar_factor(v: ir.Value):
    """(x, s, kind) when v = x * s (s a splat or a broadcast rank-0 value; kind "mul") or
    v = -x (kind "neg"); else None."""
    m = def_of(v, "multiply")
    if m is not None:
        for x, s in ((m.operands[0], m.operands[1]), (m.operands[1], m.operands[0])):
            if scalar_value(x) is not None:
                continue
            if scalar_value(s) is not None:
                return x, s, "mul"
            b = def_of(s, "broadcast_in_dim")
            if b is not None and len(shape_of(b.operands[0])) == 0:
                return x, b.operands[0], "mul"
    n = def_of(v, "negate")
    if n is not None:
        return n.operands[0], None, "neg"
    return None


@pattern("dot_scalar_factor", FAMILY, "stablehlo.dot_general", benefit=2, fast_math=True)
def dot_scalar_factor(op, rewriter):
    """dot(x * s, y) → dot(x, y) * s and dot(-x, y) → -dot(x, y) (either operand; s a scalar
    or splat) when the result is no bigger than the scaled operand: fewer multiplies, and it
    exposes x (e.g. a diagonal matrix) to the other dot patterns. Fast-math: the products
    round and overflow differently, and -dot(x, y) is -0 where dot(-x, y) cancels to +0."""
    out = op.results[0]
    for side in (0, 1):
        f = _scalar_factor(op.operands[side])
        if f is None:
            continue
        x, s, kind = f
        if num_elements(out) > num_elements(x) or element_type_of(x) != element_type_of(out):
            continue
        lb, rb, lc, rc = B.dot_dims(op)
        ops = list(op.operands)
        ops[side] = x
        loc = op.location
        with rewriter.ip:
            d = B.dot_general(ops[0], ops[1], lb, rb, lc, rc, result_type=out.type, loc=loc, like=op)
            if kind == "neg":
                r = B.op1("stablehlo.negate", [d], out.type, loc=loc)
            else:
                sv = scalar_value(s)
                if sv is not None:
                    sb = B.full(sv, ir.RankedTensorType(out.type), loc=loc)
                else:
                    sb = B.broadcast_in_dim(s, shape_of(out), [], loc=loc)
                r = B.op1("stablehlo.multiply", [d, sb], out.type, loc=loc)
            return replace(rewriter, op, r)
    return False


def _same_dot_config(d1, d2) -> bool:
    return (B.dot_dims(d1) == B.dot_dims(d2) and d1.results[0].type == d2.results[0].type
            and all((k in d1.attributes) == (k in d2.attributes) and
                    (k not in d1.attributes or str(d1.attributes[k]) == str(d2.attributes[k]))
                    for k in ("precision_config", "algorithm")))


@pattern("dot_distribute", FAMILY, ("stablehlo.add", "stablehlo.subtract"), benefit=2, fast_math=True)
def dot_distribute(op, rewriter):
    """dot(x, y) ± dot(x, z) → dot(x, y ± z) and dot(x, z) ± dot(y, z) → dot(x ± y, z) (same
    dimension numbers, single-use dots): one product instead of two. Fast-math: y ± z rounds,
    overflows or cancels (Inf - Inf) before the products."""
    d1, d2 = def_of(op.operands[0], "dot_general"), def_of(op.operands[1], "dot_general")
    if d1 is None or d2 is None or op.operands[0] == op.operands[1] or not _same_dot_config(d1, d2):
        return False
    if not (has_one_use(op.operands[0]) and has_one_use(op.operands[1])):
        return False
    (a1, b1), (a2, b2) = d1.operands, d2.operands
    lb, rb, lc, rc = B.dot_dims(d1)
    loc = op.location
    name = op.operation.name
    if a1 == a2 and b1.type == b2.type:
        with rewriter.ip:
            s = B.op1(name, [b1, b2], b1.type, loc=loc)
            return replace(rewriter, op, B.dot_general(a1, s, lb, rb, lc, rc, result_type=op.results[0].type,
                                                      loc=loc, like=d1))
    if b1 == b2 and a1.type == a2.type:
        with rewriter.ip:
            s = B.op1(name, [a1, a2], a1.type, loc=loc)
            return replace(rewriter, op, B.dot_general(s, b1, lb, rb, lc, rc, result_type=op.results[0].type,
                                                      loc=loc, like=d1))
    return False


# -- degenerate products ---------------------------------------------------------------------

def _zero_if_zero_operand(op, rewriter, zero) -> bool:
    """Replace the product by ``zero``s when an operand is all zeros."""
    if any(_is_zero(v) for v in op.operands):
        with rewriter.ip:
            return replace(rewriter, op, B.full(zero, ir.RankedTensorType(op.results[0].type),
                                                loc=op.location))
    return False


@pattern("dot_zero", FAMILY, "stablehlo.dot_general", benefit=4)
def dot_zero(op, rewriter):
    """dot with an all-zero integer operand → zeros."""
    if not isinstance(element_type_of(op.results[0]), ir.IntegerType):
        return False
    return _zero_if_zero_operand(op, rewriter, 0)


@pattern("dot_zero_fast", FAMILY, "stablehlo.dot_general", benefit=4, fast_math=True)
def dot_zero_fast(op, rewriter):
    """dot with an all-zero float operand → zeros (wrong when the other holds Inf/NaN)."""
    if not is_float_type(element_type_of(op.results[0])):
        return False
    return _zero_if_zero_operand(op, rewriter, 0.0)


def _operand_to_output(v, batch, contract, out_positions, out_shape, loc):
    """Broadcast a dot operand (its contracting dims all of size 1) into the result shape:
    batch dims to the front positions, free dims to ``out_positions``."""
    s = shape_of(v)
    free = [d for d in range(len(s)) if d not in batch and d not in contract]
    order = list(batch) + free
    kept = sorted(order)
    x = B.reshape(v, [s[d] for d in kept], loc=loc)
    pos = {d: i for i, d in enumerate(kept)}
    x = B.transpose(x, [pos[d] for d in order], loc=loc)
    return B.broadcast_in_dim(x, out_shape, list(range(len(batch))) + out_positions, loc=loc)


@pattern("dot_unit_contract", FAMILY, "stablehlo.dot_general", benefit=3)
def dot_unit_contract(op, rewriter):
    """dot_general whose contracting dims all have size 1 (or that has none: an outer
    product) → broadcast multiply (each result element is a single product)."""
    a, b = op.operands
    lb, rb, lc, rc = B.dot_dims(op)
    sa = shape_of(a)
    if any(sa[d] != 1 for d in lc):
        return False
    if not (element_type_of(a) == element_type_of(b) == element_type_of(op.results[0])):
        return False
    out = shape_of(op.results[0])
    nb = len(lb)
    nlf = len(sa) - nb - len(lc)
    nrf = len(shape_of(b)) - nb - len(rc)
    loc = op.location
    with rewriter.ip:
        x = _operand_to_output(a, lb, lc, list(range(nb, nb + nlf)), out, loc)
        y = _operand_to_output(b, rb, rc, list(range(nb + nlf, nb + nlf + nrf)), out, loc)
        return replace(rewriter, op, B.op1("stablehlo.multiply", [x, y], op.results[0].type, loc=loc))


# -- the diagonal of a product, read with a gather -------------------------------------------

def _diag_gather(op):
    """n when ``op`` is gather(X[n, n], indices = [[k, k]]_k) reading X's diagonal."""
    if len(op.operands) != 2:
        return None
    x, idx = op.operands
    s = shape_of(x)
    if len(s) != 2 or s[0] != s[1] or shape_of(op.results[0]) != (s[0],):
        return None
    dn = hlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    if list(dn.offset_dims) or sorted(dn.collapsed_slice_dims) != [0, 1] \
            or sorted(dn.start_index_map) != [0, 1] or list(dn.operand_batching_dims) \
            or dn.index_vector_dim != 1:
        return None
    if i64_list(op.attributes["slice_sizes"]) != [1, 1] or shape_of(idx) != (s[0], 2):
        return None
    val = evaluate_value(idx, EVAL_LIMIT)
    k = np.arange(s[0])
    if val is None or not ((val[:, 0] == k).all() and (val[:, 1] == k).all()):
        return None
    return s[0]


@pattern("diag_gather_of_dot", FAMILY, "stablehlo.gather", benefit=4)
def diag_gather_of_dot(op, rewriter):
    """gather(dot(A, B) [* s], [[k, k]]_k) → sum_k A'[i,k] * B'[i,k] [* s]: read only the
    diagonal of a single-use product (s: scalar or splat factors)."""
    if _diag_gather(op) is None:
        return False
    x = op.operands[0]
    scales = []
    for _ in range(4):
        f = _scalar_factor(x)
        if f is None or not has_one_use(x):
            break
        x, s, kind = f
        scales.append((s, kind))
    md = _matrix_dot(x)
    if md is None:
        return False
    loc = op.location
    with rewriter.ip:
        r = _product_diagonal(*md, element_type_of(x), loc)
        rt = op.results[0].type
        for s, kind in reversed(scales):
            if kind == "neg":
                r = B.op1("stablehlo.negate", [r], rt, loc=loc)
            else:
                sv = scalar_value(s)
                sb = (B.full(sv, ir.RankedTensorType(rt), loc=loc) if sv is not None
                      else B.broadcast_in_dim(s, shape_of(op.results[0]), [], loc=loc))
                r = B.op1("stablehlo.multiply", [r, sb], rt, loc=loc)
        return replace(rewriter, op, r)


# -- zero padding and broadcast operands -----------------------------------------------------

@pattern("dot_of_pad", FAMILY, "stablehlo.dot_general", benefit=3, fast_math=True)
def dot_of_pad(op, rewriter):
    """dot(pad(x, 0), y) → dot(x, slice(y)) for zero padding of contracting dims (the padded
    products are zeros), and → pad(dot(x, y), 0) for padding of free dims; either operand.
    No interior padding, no padded batch dims. Fast-math: the padded products are 0 * y, NaN
    where y is infinite and -0 where it is negative."""
    lb, rb, lc, rc = B.dot_dims(op)
    for side in (0, 1):
        p = def_of(op.operands[side], "pad")
        if p is None:
            continue
        x, pv = p.operands
        if not _is_zero(pv) or any(i64_list(p.attributes["interior_padding"])):
            continue
        low, high = i64_list(p.attributes["edge_padding_low"]), i64_list(p.attributes["edge_padding_high"])
        if any(v < 0 for v in low + high):
            continue
        my_b, my_c = (lb, lc) if side == 0 else (rb, rc)
        other_c = rc if side == 0 else lc
        padded = [d for d in range(len(low)) if low[d] or high[d]]
        if any(d in my_b for d in padded):
            continue
        other = op.operands[1 - side]
        os_ = shape_of(other)
        starts, limits = [0] * len(os_), list(os_)
        for d in padded:
            if d in my_c:
                e = other_c[my_c.index(d)]
                starts[e], limits[e] = low[d], os_[e] - high[d]
        my_free = [d for d in range(len(low)) if d not in my_b and d not in my_c]
        nb = len(lb)
        nlf = len(shape_of(op.operands[0])) - nb - len(lc)
        base = nb if side == 0 else nb + nlf
        out = list(shape_of(op.results[0]))
        olow, ohigh = [0] * len(out), [0] * len(out)
        for i, d in enumerate(my_free):
            olow[base + i], ohigh[base + i] = low[d], high[d]
            out[base + i] -= low[d] + high[d]
        loc = op.location
        with rewriter.ip:
            other = B.slice(other, starts, limits, loc=loc)
            ops = [x, other] if side == 0 else [other, x]
            d = B.dot_general(ops[0], ops[1], lb, rb, lc, rc, result_type=ranked(out, element_type_of(op.results[0])),
                              loc=loc, like=op)
            zero = B.full(0, ranked([], element_type_of(op.results[0])), loc=loc)
            return replace(rewriter, op, B.pad(d, zero, olow, ohigh, loc=loc))
    return False


def _broadcast_only_dims(v):
    """For v = broadcast_in_dim(u, bd): (u, bd, dims of v along which v is constant)."""
    b = def_of(v, "broadcast_in_dim")
    if b is None:
        return None
    u = b.operands[0]
    bd = i64_list(b.attributes["broadcast_dimensions"])
    us, vs = shape_of(u), shape_of(v)
    src = {d: i for i, d in enumerate(bd)}
    const = [j for j in range(len(vs)) if vs[j] != 1 and (j not in src or us[src[j]] == 1)]
    return u, bd, const


@pattern("dot_of_broadcast", FAMILY, "stablehlo.dot_general", benefit=3, fast_math=True)
def dot_of_broadcast(op, rewriter):
    """dot(A, B) with A = broadcast(u) constant along some of its dims (no batch dims):
    along a contracting dim k, sum B over k first (sum_k u*B[k] = u * sum_k B[k]); along a
    free dim, compute the product once and broadcast it. Either operand; fewer FLOPs by the
    size of those dims. Fast-math: u * sum_k B[k] rounds and overflows unlike the sum of the
    products."""
    lb, rb, lc, rc = B.dot_dims(op)
    if lb or rb:
        return False
    if not (element_type_of(op.operands[0]) == element_type_of(op.operands[1]) == element_type_of(op.results[0])):
        return False
    for side in (0, 1):
        info = _broadcast_only_dims(op.operands[side])
        if info is None or not info[2]:
            continue
        u, bd, const = info
        a = op.operands[side]
        other = op.operands[1 - side]
        ac, oc = (lc, rc) if side == 0 else (rc, lc)
        ash, osh = shape_of(a), shape_of(other)
        keep = [j for j in range(len(ash)) if j not in const]
        # u restricted to the kept dims of A, in A's dim order
        us = shape_of(u)
        u_keep = [i for i in range(len(us)) if bd[i] in keep]
        loc = op.location
        et = element_type_of(op.results[0])
        with rewriter.ip:
            u2 = B.reshape(u, [us[i] for i in u_keep], loc=loc)
            order = sorted(range(len(u_keep)), key=lambda k: bd[u_keep[k]])
            u2 = B.transpose(u2, order, loc=loc)
            # with only size-1 dims of A left unaccounted (A dims of size 1 not in bd), reshape
            u2 = B.reshape(u2, [ash[j] for j in keep], loc=loc)
            # sum the other operand over the dims contracted with A's constant dims
            osum = [oc[i] for i, d in enumerate(ac) if d in const]
            o2 = other
            if osum:
                zero = B.full(0, ranked([], et), loc=loc)
                o2 = B.reduce(other, zero, osum, "stablehlo.add", loc=loc)
            okeep = [e for e in range(len(osh)) if e not in osum]
            pairs = [(keep.index(d), okeep.index(oc[i])) for i, d in enumerate(ac) if d not in const]
            nac, noc = [p[0] for p in pairs], [p[1] for p in pairs]
            afree = [j for j in range(len(ash)) if j not in ac]  # original free dims of A
            afree_new = [j for j in afree if j not in const]
            ofree = [e for e in range(len(osh)) if e not in oc]
            if side == 0:
                nshape = [ash[j] for j in afree_new] + [osh[e] for e in ofree]
                d = B.dot_general(u2, o2, [], [], nac, noc, result_type=ranked(nshape, et), loc=loc, like=op)
                pos = [afree.index(j) for j in afree_new] + [len(afree) + i for i in range(len(ofree))]
            else:
                nshape = [osh[e] for e in ofree] + [ash[j] for j in afree_new]
                d = B.dot_general(o2, u2, [], [], noc, nac, result_type=ranked(nshape, et), loc=loc, like=op)
                pos = list(range(len(ofree))) + [len(ofree) + afree.index(j) for j in afree_new]
            out = shape_of(op.results[0])
            if tuple(nshape) != tuple(out):
                d = B.broadcast_in_dim(d, out, pos, loc=loc)
            return replace(rewriter, op, d)
    return False
