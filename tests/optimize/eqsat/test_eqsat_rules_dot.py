"""dot_general and reduce rule families: matmul reassociation (both ways, picked by shapes),
transpose(dot) <-> dot of swapped operands, transposes folded into dimension numbers,
distributivity, scalar factors, outer products, diagonal-matrix products, the diagonal of a
product, reduce over unit dims, reduce(mul) <-> dot.

Reassociation, distributivity, scalar factors and diagonal-matrix products are fast-math
(``optimize.exactness``): their tests run with fast math, and check that the exact rules alone
leave the program as it was."""

import pytest
from eqsat_util import count, eqsat_and_check, main_func, op_names

from reactant.ir import context as irc


def _f(sig: str, ret: str, body: str) -> str:
    return f"func.func public @main({sig}) -> {ret} {{\n{body}\n}}"


def _dots(after):
    out = []
    for op in main_func(after).regions[0].blocks[0].operations:
        if op.operation.name == "stablehlo.dot_general":
            out.append(([tuple(v.type.shape) for v in op.operands], tuple(op.results[0].type.shape)))
    return out


def _chain(m, k, n, p, assoc_left_first: bool):
    """(A B) C or A (B C) for A: m x k, B: k x n, C: n x p."""
    A, B, C = f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{n}x{p}xf32>"
    if assoc_left_first:
        body = f"""
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({A}, {B}) -> tensor<{m}x{n}xf32>
  %1 = stablehlo.dot_general %0, %c, contracting_dims = [1] x [0] : (tensor<{m}x{n}xf32>, {C}) -> tensor<{m}x{p}xf32>"""
    else:
        body = f"""
  %0 = stablehlo.dot_general %b, %c, contracting_dims = [1] x [0] : ({B}, {C}) -> tensor<{k}x{p}xf32>
  %1 = stablehlo.dot_general %a, %0, contracting_dims = [1] x [0] : ({A}, tensor<{k}x{p}xf32>) -> tensor<{m}x{p}xf32>"""
    return _f(f"%a: {A}, %b: {B}, %c: {C}", f"tensor<{m}x{p}xf32>", body + f"\n  return %1 : tensor<{m}x{p}xf32>")


def _exact_keeps(text):
    """The exact rules alone (the default) leave the products as they were: (module before,
    module after)."""
    before, after, rep = eqsat_and_check(text)
    assert _dots(after) == _dots(before), (_dots(before), _dots(after))
    return before, after


@pytest.mark.parametrize("left_first", [True, False])
def test_reassociation_picks_cheaper_order(left_first):
    # (AB)C with A 256x8, B 8x256, C 256x4: A(BC) costs 2*(8*256*4 + 256*8*4) flops vs 2*(256*8*256 + 256*256*4)
    text = _chain(256, 8, 256, 4, left_first)
    before, after, rep = eqsat_and_check(text, fast_math=True)
    dots = _dots(after)
    assert len(dots) == 2
    # the inner product must be B C (8x4), never A B (256x256)
    assert any(out == (8, 4) for _, out in dots), dots
    if left_first:
        assert rep.segments[0].replaced
        _exact_keeps(text)  # reassociation rounds and overflows differently: fast-math only
    else:
        assert not rep.segments[0].replaced  # already optimal: left alone


@pytest.mark.parametrize("left_first", [True, False])
def test_reassociation_other_direction(left_first):
    # A 4x256, B 256x8, C 8x256: (AB)C is cheap (4x8 inner), A(BC) builds 256x256
    text = _chain(4, 256, 8, 256, left_first)
    before, after, rep = eqsat_and_check(text, fast_math=True)
    dots = _dots(after)
    assert any(out == (4, 8) for _, out in dots), dots
    assert rep.segments[0].replaced == (not left_first)
    if not left_first:
        _exact_keeps(text)


def test_reassociation_through_transposes():
    # ((A B)^T C)^T with transposes everywhere: still finds the small inner product
    text = _f("%a: tensor<256x8xf32>, %b: tensor<8x256xf32>, %c: tensor<256x4xf32>", "tensor<4x256xf32>", """
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<256x8xf32>, tensor<8x256xf32>) -> tensor<256x256xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %2 = stablehlo.dot_general %1, %c, contracting_dims = [1] x [0] : (tensor<256x256xf32>, tensor<256x4xf32>) -> tensor<256x4xf32>
  %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<256x4xf32>) -> tensor<4x256xf32>
  return %3 : tensor<4x256xf32>""")
    before, after, rep = eqsat_and_check(text, fast_math=True)
    assert all(256 * 256 not in (o[0] * o[1] for o in [out]) for _, out in _dots(after)), _dots(after)
    _, exact, _ = eqsat_and_check(text)  # exact: the 256x256 product stays (transposes may fold)
    assert any(o == (256, 256) for _, o in _dots(exact)), _dots(exact)


def test_transpose_of_dot_costs_the_swapped_dot():
    # (A B)^T: XLA itself emits B^T A^T writing the transposed result, so the transpose is free
    # and nothing is gained by rewriting it (the swapped dot is in the graph at the same cost)
    text = _f("%a: tensor<512x8xf32>, %b: tensor<8x512xf32>, %c: tensor<512x512xf32>", "tensor<512x512xf32>", """
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %2 = stablehlo.add %1, %c : tensor<512x512xf32>
  return %2 : tensor<512x512xf32>""")
    before, after, rep = eqsat_and_check(text)
    assert count(after, "dot_general") == 1
    assert not rep.segments[0].replaced
    assert rep.segments[0].cost_after == rep.segments[0].cost_before


def test_transposed_operands_fold_into_dimension_numbers():
    text = _f("%a: tensor<32x64xf32>, %b: tensor<16x32xf32>", "tensor<64x16xf32>", """
  %ta = stablehlo.transpose %a, dims = [1, 0] : (tensor<32x64xf32>) -> tensor<64x32xf32>
  %tb = stablehlo.transpose %b, dims = [1, 0] : (tensor<16x32xf32>) -> tensor<32x16xf32>
  %0 = stablehlo.dot_general %ta, %tb, contracting_dims = [1] x [0] : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>""")
    before, after, rep = eqsat_and_check(text)
    assert count(after, "transpose") <= 1


def test_shared_product_is_computed_once():
    # the transpose_chain seed: (A^T B^T)^T and (B A) are the same product
    text = _f("%a: tensor<128x128xf32>, %b: tensor<128x128xf32>, %c: tensor<128x128xf32>", "tensor<128x128xf32>", """
  %ta = stablehlo.transpose %a, dims = [1, 0] : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %tb = stablehlo.transpose %b, dims = [1, 0] : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %0 = stablehlo.dot_general %ta, %tb, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %2 = stablehlo.dot_general %1, %c, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %3 = stablehlo.dot_general %b, %a, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %4 = stablehlo.transpose %c, dims = [1, 0] : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %5 = stablehlo.dot_general %4, %3, contracting_dims = [1] x [1] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %6 = stablehlo.add %2, %5 : tensor<128x128xf32>
  return %6 : tensor<128x128xf32>""")
    before, after, rep = eqsat_and_check(text)
    # (B A) C and its transpose C^T (B A)^T: one product chain, reused
    assert count(after, "dot_general") == 2, op_names(after)


def test_distributivity():
    text = _f("%a: tensor<64x128xf32>, %b: tensor<128x64xf32>, %c: tensor<128x64xf32>", "tensor<64x64xf32>", """
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<64x64xf32>
  %1 = stablehlo.dot_general %a, %c, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<64x64xf32>
  %2 = stablehlo.subtract %0, %1 : tensor<64x64xf32>
  return %2 : tensor<64x64xf32>""")
    before, after, rep = eqsat_and_check(text, fast_math=True)
    assert count(after, "dot_general") == 1
    _exact_keeps(text)


def test_scalar_factor_moves_to_the_smaller_side():
    text = _f("%a: tensor<8x512xf32>, %b: tensor<8x512xf32>", "tensor<512x512xf32>", """
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
  %c = stablehlo.constant dense<0.5> : tensor<512x512xf32>
  %1 = stablehlo.multiply %0, %c : tensor<512x512xf32>
  %2 = stablehlo.exponential %1 : tensor<512x512xf32>
  return %2 : tensor<512x512xf32>""")

    def muls(m):
        return [tuple(op.results[0].type.shape) for op in main_func(m).regions[0].blocks[0].operations
                if op.operation.name == "stablehlo.multiply"]

    before, after, rep = eqsat_and_check(text, fast_math=True)
    assert muls(after) == [(8, 512)]
    _, exact = _exact_keeps(text)
    assert muls(exact) == [(512, 512)]


def test_scalar_times_vector_dot_is_broadcast_multiply():
    text = _f("%s: tensor<f32>, %v: tensor<4096xf32>, %u: tensor<64xf32>, %w: tensor<32xf32>",
              "(tensor<4096xf32>, tensor<64x32xf32>)", """
  %0 = stablehlo.dot_general %s, %v, contracting_dims = [] x [] : (tensor<f32>, tensor<4096xf32>) -> tensor<4096xf32>
  %1 = stablehlo.dot_general %u, %w, contracting_dims = [] x [] : (tensor<64xf32>, tensor<32xf32>) -> tensor<64x32xf32>
  return %0, %1 : tensor<4096xf32>, tensor<64x32xf32>""")
    before, after, rep = eqsat_and_check(text)
    assert count(after, "dot_general") == 0 and count(after, "multiply") == 2


DIAG_SELECT = _f("%v: tensor<256xf32>, %a: tensor<256x256xf32>", "(tensor<256x256xf32>, tensor<256x256xf32>)", """
  %i0 = stablehlo.iota dim = 0 : tensor<256xi32>
  %r = stablehlo.broadcast_in_dim %i0, dims = [0] : (tensor<256xi32>) -> tensor<256x256xi32>
  %c = stablehlo.broadcast_in_dim %i0, dims = [1] : (tensor<256xi32>) -> tensor<256x256xi32>
  %eye = stablehlo.compare EQ, %r, %c, SIGNED : (tensor<256x256xi32>, tensor<256x256xi32>) -> tensor<256x256xi1>
  %vv = stablehlo.reshape %v : (tensor<256xf32>) -> tensor<256x1xf32>
  %vb = stablehlo.broadcast_in_dim %vv, dims = [0, 1] : (tensor<256x1xf32>) -> tensor<256x256xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
  %d = stablehlo.select %eye, %vb, %zb : tensor<256x256xi1>, tensor<256x256xf32>
  %0 = stablehlo.dot_general %d, %a, contracting_dims = [1] x [0] : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = stablehlo.dot_general %a, %d, contracting_dims = [0] x [1] : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0, %1 : tensor<256x256xf32>, tensor<256x256xf32>""")

DIAG_MUL = _f("%v: tensor<256xf32>, %a: tensor<256x256xf32>", "tensor<256x256xf32>", """
  %r = stablehlo.iota dim = 0 : tensor<256x256xi32>
  %c = stablehlo.iota dim = 1 : tensor<256x256xi32>
  %eye = stablehlo.compare EQ, %c, %r, SIGNED : (tensor<256x256xi32>, tensor<256x256xi32>) -> tensor<256x256xi1>
  %f = stablehlo.convert %eye : (tensor<256x256xi1>) -> tensor<256x256xf32>
  %vb = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<256xf32>) -> tensor<256x256xf32>
  %d = stablehlo.multiply %f, %vb : tensor<256x256xf32>
  %0 = stablehlo.dot_general %a, %d, contracting_dims = [1] x [1] : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>""")


@pytest.mark.parametrize("text", [DIAG_SELECT, DIAG_MUL], ids=["select", "convert_mul"])
def test_diagonal_matrix_product_is_broadcast_multiply(text):
    # fast-math in the e-graph (0 * Inf of the dense product is lost); the greedy dot_diag_*
    # patterns do it exactly, with a correction for the non-finite entries
    before, after, rep = eqsat_and_check(text, fast_math=True)
    assert count(after, "dot_general") == 0, op_names(after)
    assert count(after, "compare") == 0
    # exact: the dense products stay (DIAG_SELECT's two are one transposed, which is exact)
    _, exact, _ = eqsat_and_check(text)
    assert count(exact, "dot_general") >= 1 and count(exact, "compare") == 1, op_names(exact)


def _diagonal_of_product(mask_zero: str) -> str:
    """diag(X @ A^T) as select(eye, X @ A^T, mask_zero) summed over rows (diagmm's gradient)."""
    return _f("%x: tensor<256x256xf32>, %a: tensor<256x256xf32>", "tensor<256xf32>", f"""
  %r = stablehlo.iota dim = 0 : tensor<256x256xi32>
  %c = stablehlo.iota dim = 1 : tensor<256x256xi32>
  %eye = stablehlo.compare EQ, %r, %c, SIGNED : (tensor<256x256xi32>, tensor<256x256xi32>) -> tensor<256x256xi1>
  %p = stablehlo.dot_general %x, %a, contracting_dims = [1] x [1] : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %mz = stablehlo.constant dense<{mask_zero}> : tensor<f32>
  %zb = stablehlo.broadcast_in_dim %mz, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
  %m = stablehlo.select %eye, %p, %zb : tensor<256x256xi1>, tensor<256x256xf32>
  %0 = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [1] : (tensor<256x256xf32>, tensor<f32>) -> tensor<256xf32>
  return %0 : tensor<256xf32>""")


def test_diagonal_of_product_is_rowwise_reduction():
    # a -0.0 mask adds nothing to the row sums: exact
    before, after, rep = eqsat_and_check(_diagonal_of_product("-0.0"))
    assert count(after, "dot_general") == 0 and count(after, "select") == 0
    # a +0.0 mask turns a -0 diagonal entry into +0: fast-math only
    text = _diagonal_of_product("0.0")
    before, after, rep = eqsat_and_check(text, fast_math=True)
    assert count(after, "dot_general") == 0 and count(after, "select") == 0
    _, exact = _exact_keeps(text)
    assert count(exact, "select") == 1


def test_reduce_over_unit_dims_is_reshape():
    text = _f("%a: tensor<64x1x32xf32>", "tensor<64x32xf32>", """
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %e = stablehlo.exponential %a : tensor<64x1x32xf32>
  %0 = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<64x1x32xf32>, tensor<f32>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>""")
    before, after, rep = eqsat_and_check(text)
    assert count(after, "reduce") == 0


def test_rowwise_dot_becomes_fused_reduction():
    # a batched dot of many short vectors is slower than XLA's fused reduce: turn it around
    text = _f("%a: tensor<256x64xf32>, %b: tensor<256x64xf32>", "tensor<256xf32>", """
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [1] x [1] : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256xf32>
  %1 = stablehlo.tanh %0 : tensor<256xf32>
  return %1 : tensor<256xf32>""")
    before, after, rep = eqsat_and_check(text)
    assert count(after, "dot_general") == 0 and count(after, "reduce") == 1


def test_rowwise_reduction_is_not_turned_into_batched_dot():
    text = _f("%a: tensor<256x64xf32>, %b: tensor<256x64xf32>", "tensor<256xf32>", """
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %ea = stablehlo.exponential %a : tensor<256x64xf32>
  %m = stablehlo.multiply %ea, %b : tensor<256x64xf32>
  %0 = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [1] : (tensor<256x64xf32>, tensor<f32>) -> tensor<256xf32>
  %t = stablehlo.transpose %0, dims = [0] : (tensor<256xf32>) -> tensor<256xf32>
  return %t : tensor<256xf32>""")
    before, after, rep = eqsat_and_check(text)
    assert count(after, "dot_general") == 0 and count(after, "reduce") == 1


def test_mixed_precision_dots_are_left_alone():
    text = _f("%a: tensor<64x32xbf16>, %b: tensor<32x64xbf16>, %c: tensor<64x4xf32>", "tensor<64x4xf32>", """
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x32xbf16>, tensor<32x64xbf16>) -> tensor<64x64xf32>
  %1 = stablehlo.dot_general %0, %c, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
  return %1 : tensor<64x4xf32>""")
    from reactant.optimize.eqsat import Limits, run_eqsat
    from eqsat_util import parse

    m = parse(text)
    run_eqsat(m, Limits())
    m.operation.verify()
    assert "bf16" in irc.to_text(m) and count(m, "dot_general") == 2
