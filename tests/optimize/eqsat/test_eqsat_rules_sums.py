"""Rules on sums and pads: full contractions (symmetry, rotation of a product onto the other
operand, distribution over sums), scalar factors out of reductions, zero-padding rules.

Rotations, distribution, scalar factors and zero-padded products change the terms of a sum
(``optimize.exactness``): fast-math. Their tests run with fast math and check that the exact
rules alone leave the program's products and sums as they were."""

from eqsat_util import count, eqsat_and_check, main_func, op_names

from reactant.optimize.eqsat import Limits


def _f(sig: str, ret: str, body: str) -> str:
    return f"func.func public @main({sig}) -> {ret} {{\n{body}\n}}"


def _big_dots(m, n=128):
    out = 0
    for op in main_func(m).regions[0].blocks[0].operations:
        if op.operation.name == "stablehlo.dot_general" and tuple(op.results[0].type.shape) == (n, n):
            out += 1
    return out


def test_loss_rotates_onto_a_product_the_gradient_needs():
    # loss = <(A B)^T C, G>, and (A B) G is needed anyway: the loss becomes <C, (A B) G>
    M = "tensor<128x128xf32>"
    text = _f(f"%a: {M}, %b: {M}, %c: {M}, %g: {M}", f"(tensor<f32>, {M})", f"""
  %x = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({M}, {M}) -> {M}
  %y = stablehlo.dot_general %x, %c, contracting_dims = [0] x [0] : ({M}, {M}) -> {M}
  %l = stablehlo.dot_general %y, %g, contracting_dims = [0, 1] x [0, 1] : ({M}, {M}) -> tensor<f32>
  %d = stablehlo.dot_general %x, %g, contracting_dims = [1] x [0] : ({M}, {M}) -> {M}
  return %l, %d : tensor<f32>, {M}""")
    before, after, rep = eqsat_and_check(text, rtol=1e-3, fast_math=True)
    assert _big_dots(before) == 3 and _big_dots(after) == 2, op_names(after)
    before, after, rep = eqsat_and_check(text, rtol=1e-3)
    assert _big_dots(after) == 3, op_names(after)


def test_full_contraction_distributes_over_sums():
    # <G, X + Y> with X = P Q: the sum is never materialized, each term rotates
    M = "tensor<128x128xf32>"
    text = _f(f"%p: {M}, %q: {M}, %y: {M}, %g: {M}", f"(tensor<f32>, {M})", f"""
  %x = stablehlo.dot_general %p, %q, contracting_dims = [1] x [0] : ({M}, {M}) -> {M}
  %s = stablehlo.add %x, %y : {M}
  %l = stablehlo.dot_general %g, %s, contracting_dims = [0, 1] x [0, 1] : ({M}, {M}) -> tensor<f32>
  %d = stablehlo.dot_general %p, %g, contracting_dims = [0] x [0] : ({M}, {M}) -> {M}
  return %l, %d : tensor<f32>, {M}""")
    before, after, rep = eqsat_and_check(text, rtol=1e-3, fast_math=True)
    assert _big_dots(after) == 1, op_names(after)
    before, after, rep = eqsat_and_check(text, rtol=1e-3)
    assert _big_dots(after) == 2 and count(after, "add") == 1, op_names(after)


def test_scalar_factors_leave_sums_and_equal_sums_merge():
    # sum(x / n * y) and sum(y * k * x): one reduction of x * y, scaled twice
    text = _f("%x: tensor<4096xf32>, %y: tensor<4096xf32>, %n: tensor<f32>, %k: tensor<f32>",
              "(tensor<f32>, tensor<f32>)", """
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %nb = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> tensor<4096xf32>
  %kb = stablehlo.broadcast_in_dim %k, dims = [] : (tensor<f32>) -> tensor<4096xf32>
  %0 = stablehlo.divide %x, %nb : tensor<4096xf32>
  %1 = stablehlo.multiply %0, %y : tensor<4096xf32>
  %2 = stablehlo.reduce(%1 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4096xf32>, tensor<f32>) -> tensor<f32>
  %3 = stablehlo.multiply %y, %kb : tensor<4096xf32>
  %4 = stablehlo.multiply %3, %x : tensor<4096xf32>
  %5 = stablehlo.reduce(%4 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4096xf32>, tensor<f32>) -> tensor<f32>
  return %2, %5 : tensor<f32>, tensor<f32>""")
    before, after, rep = eqsat_and_check(text, positive=True, rtol=1e-4, fast_math=True)
    assert count(after, "reduce") + count(after, "dot_general") == 1, op_names(after)
    before, after, rep = eqsat_and_check(text, positive=True, rtol=1e-4)
    assert count(after, "reduce") + count(after, "dot_general") == 2, op_names(after)


def test_reduce_of_negate():
    text = _f("%x: tensor<64x64xf32>", "tensor<64xf32>", """
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %n = stablehlo.negate %t : tensor<64x64xf32>
  %0 = stablehlo.reduce(%n init: %z) applies stablehlo.add across dimensions = [0] : (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>""")
    eqsat_and_check(text)


def test_dot_of_zero_padded_vector_reads_only_the_unpadded_part():
    # the slice_of_dot gradient: <pad(v, 0, 0..99990), x> = <v, x[0:10]>
    text = _f("%v: tensor<10xf32>, %x: tensor<100000xf32>", "(tensor<f32>, tensor<f32>)", """
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.pad %v, %z, low = [0], high = [99990], interior = [0] : (tensor<10xf32>, tensor<f32>) -> tensor<100000xf32>
  %m = stablehlo.multiply %p, %x : tensor<100000xf32>
  %0 = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [0] : (tensor<100000xf32>, tensor<f32>) -> tensor<f32>
  %1 = stablehlo.dot_general %p, %x, contracting_dims = [0] x [0] : (tensor<100000xf32>, tensor<100000xf32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>""")
    before, after, rep = eqsat_and_check(text, fast_math=True)
    assert count(after, "pad") == 0
    sliced = [op for op in main_func(after).regions[0].blocks[0].operations if op.operation.name == "stablehlo.slice"]
    assert sliced and all(tuple(op.results[0].type.shape) == (10,) for op in sliced)
    # exact: the padded products are 0 * x (NaN where x is infinite): all 100000 are kept
    before, after, rep = eqsat_and_check(text)
    assert count(after, "pad") == 1 and count(after, "slice") == 0, op_names(after)


def test_pad_of_pad_and_slice_of_pad():
    text = _f("%x: tensor<64x64xf32>", "(tensor<70x64xf32>, tensor<8x8xf32>)", """
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %e = stablehlo.exponential %x : tensor<64x64xf32>
  %p = stablehlo.pad %e, %z, low = [1, 0], high = [2, 0], interior = [0, 0] : (tensor<64x64xf32>, tensor<f32>) -> tensor<67x64xf32>
  %q = stablehlo.pad %p, %z, low = [3, 0], high = [0, 0], interior = [0, 0] : (tensor<67x64xf32>, tensor<f32>) -> tensor<70x64xf32>
  %s = stablehlo.slice %q [10:18, 3:11] : (tensor<70x64xf32>) -> tensor<8x8xf32>
  return %q, %s : tensor<70x64xf32>, tensor<8x8xf32>""")
    before, after, rep = eqsat_and_check(text)
    assert count(after, "pad") + count(after, "concatenate") <= 2


def test_zero_padding_as_concatenate_is_equivalent():
    # pads of computed values may become concatenates with zero blocks (same results)
    text = _f("%x: tensor<62x64xf32>", "tensor<64x64xf32>", """
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %c = stablehlo.constant dense<-2.0> : tensor<62x64xf32>
  %m = stablehlo.multiply %x, %c : tensor<62x64xf32>
  %a = stablehlo.pad %x, %z, low = [2, 0], high = [0, 0], interior = [0, 0] : (tensor<62x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  %b = stablehlo.pad %m, %z, low = [1, 0], high = [1, 0], interior = [0, 0] : (tensor<62x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  %d = stablehlo.pad %x, %z, low = [0, 0], high = [2, 0], interior = [0, 0] : (tensor<62x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  %s = stablehlo.add %a, %b : tensor<64x64xf32>
  %t = stablehlo.add %s, %d : tensor<64x64xf32>
  return %t : tensor<64x64xf32>""")
    eqsat_and_check(text, limits=Limits(min_gain=-1.0))  # force the rebuild of whatever is extracted


def test_fast_math_divide_by_broadcast_scalar():
    text = _f("%x: tensor<4096xf32>, %s: tensor<f32>", "tensor<4096xf32>", """
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4096xf32>
  %0 = stablehlo.divide %x, %b : tensor<4096xf32>
  return %0 : tensor<4096xf32>""")
    before, after, rep = eqsat_and_check(text, positive=True, limits=Limits(fast_math=True, gainful_kinds=None))
    assert count(after, "divide") == 1 and count(after, "multiply") == 1  # 1/s once, then a multiply
    before, after, rep = eqsat_and_check(text, positive=True)
    assert count(after, "divide") == 1 and count(after, "multiply") == 0
