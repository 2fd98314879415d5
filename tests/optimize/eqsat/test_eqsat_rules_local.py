"""Rule families on small modules: algebraic identities, data-movement motion (transpose /
reshape / broadcast) and slice pushdown. Each case checks the IR after eqsat, that every
e-class is consistent under a NumPy interpreter, and that PJRT gives the original's results."""

import pytest
from eqsat_util import count, eqsat_and_check, op_names


def _f(sig: str, ret: str, body: str) -> str:
    return f"func.func public @main({sig}) -> {ret} {{\n{body}\n}}"


CASES = {
    # ---------------------------------------------------------------- algebra
    "mul_one": (_f("%a: tensor<64x32xf32>", "tensor<64x32xf32>", """
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
  %0 = stablehlo.multiply %b, %a : tensor<64x32xf32>
  %t = stablehlo.transpose %0, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %t2 = stablehlo.transpose %t, dims = [1, 0] : (tensor<32x64xf32>) -> tensor<64x32xf32>
  return %t2 : tensor<64x32xf32>"""), {"multiply": 0, "transpose": 0}),
    # x + (-0.0), x - (+0.0), x / 1: the exact identities (with the other zeros: FAST_CASES)
    "add_zero_sub_zero_div_one": (_f("%a: tensor<64xf32>", "tensor<64xf32>", """
  %nz = stablehlo.constant dense<-0.0> : tensor<64xf32>
  %pz = stablehlo.constant dense<0.0> : tensor<64xf32>
  %o = stablehlo.constant dense<1.0> : tensor<f32>
  %ob = stablehlo.broadcast_in_dim %o, dims = [] : (tensor<f32>) -> tensor<64xf32>
  %0 = stablehlo.add %a, %nz : tensor<64xf32>
  %1 = stablehlo.subtract %0, %pz : tensor<64xf32>
  %2 = stablehlo.divide %1, %ob : tensor<64xf32>
  return %2 : tensor<64xf32>"""), {"add": 0, "subtract": 0, "divide": 0}),
    # (-0.0) - a == -a exactly ((+0.0) - a is +0 for a = +0: FAST_CASES)
    "double_negation_and_zero_minus": (_f("%a: tensor<64xf32>", "tensor<64xf32>", """
  %z = stablehlo.constant dense<-0.0> : tensor<f32>
  %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<64xf32>
  %0 = stablehlo.subtract %zb, %a : tensor<64xf32>
  %1 = stablehlo.negate %0 : tensor<64xf32>
  %2 = stablehlo.negate %1 : tensor<64xf32>
  %3 = stablehlo.negate %2 : tensor<64xf32>
  return %3 : tensor<64xf32>"""), {"negate": 0, "subtract": 0}),
    "negate_of_products_and_differences": (_f("%a: tensor<64xf32>, %b: tensor<64xf32>", "tensor<64xf32>", """
  %na = stablehlo.negate %a : tensor<64xf32>
  %nb = stablehlo.negate %b : tensor<64xf32>
  %0 = stablehlo.multiply %na, %nb : tensor<64xf32>
  %s = stablehlo.subtract %a, %b : tensor<64xf32>
  %ns = stablehlo.negate %s : tensor<64xf32>
  %t = stablehlo.transpose %ns, dims = [0] : (tensor<64xf32>) -> tensor<64xf32>
  %1 = stablehlo.add %0, %t : tensor<64xf32>
  return %1 : tensor<64xf32>"""), {"negate": 0}),
    "int_times_zero_and_x_minus_x": (_f("%a: tensor<64xi32>, %b: tensor<64xi32>", "tensor<64xi32>", """
  %z = stablehlo.constant dense<0> : tensor<i32>
  %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<i32>) -> tensor<64xi32>
  %0 = stablehlo.multiply %a, %zb : tensor<64xi32>
  %1 = stablehlo.subtract %b, %b : tensor<64xi32>
  %2 = stablehlo.add %0, %1 : tensor<64xi32>
  %3 = stablehlo.add %2, %a : tensor<64xi32>
  return %3 : tensor<64xi32>"""), {"multiply": 0, "subtract": 0, "add": 0}),
    "select_same_and_not_predicate": (_f("%p: tensor<64xi1>, %a: tensor<64xf32>, %b: tensor<64xf32>",
                                          "(tensor<64xf32>, tensor<64xf32>)", """
  %t = stablehlo.transpose %a, dims = [0] : (tensor<64xf32>) -> tensor<64xf32>
  %0 = stablehlo.select %p, %t, %a : tensor<64xi1>, tensor<64xf32>
  %np = stablehlo.not %p : tensor<64xi1>
  %1 = stablehlo.select %np, %a, %b : tensor<64xi1>, tensor<64xf32>
  return %0, %1 : tensor<64xf32>, tensor<64xf32>"""), {"not": 0, "transpose": 0, "select": 1}),
    "convert_identity_and_roundtrip_f64": (_f("%a: tensor<64xf32>", "tensor<64xf32>", """
  %0 = stablehlo.convert %a : (tensor<64xf32>) -> tensor<64xf64>
  %1 = stablehlo.convert %0 : (tensor<64xf64>) -> tensor<64xf32>
  %2 = stablehlo.convert %1 : tensor<64xf32>
  %3 = stablehlo.reshape %2 : (tensor<64xf32>) -> tensor<64xf32>
  return %3 : tensor<64xf32>"""), {"convert": 0, "reshape": 0}),
    # ---------------------------------------------------------------- motion
    "transpose_composition": (_f("%a: tensor<4x8x16xf32>", "tensor<16x4x8xf32>", """
  %0 = stablehlo.transpose %a, dims = [1, 2, 0] : (tensor<4x8x16xf32>) -> tensor<8x16x4xf32>
  %1 = stablehlo.transpose %0, dims = [1, 2, 0] : (tensor<8x16x4xf32>) -> tensor<16x4x8xf32>
  %2 = stablehlo.exponential %1 : tensor<16x4x8xf32>
  return %2 : tensor<16x4x8xf32>"""), {"transpose": 1}),
    "transpose_of_elementwise_pulled_out": (_f("%a: tensor<64x32xf32>, %b: tensor<64x32xf32>", "tensor<64x32xf32>", """
  %ta = stablehlo.transpose %a, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %tb = stablehlo.transpose %b, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %0 = stablehlo.add %ta, %tb : tensor<32x64xf32>
  %1 = stablehlo.tanh %0 : tensor<32x64xf32>
  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<32x64xf32>) -> tensor<64x32xf32>
  return %2 : tensor<64x32xf32>"""), {"transpose": 0}),
    "transpose_of_broadcast": (_f("%v: tensor<32xf32>, %a: tensor<64x32xf32>", "tensor<32x64xf32>", """
  %0 = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<32xf32>) -> tensor<64x32xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %2 = stablehlo.transpose %a, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %3 = stablehlo.multiply %1, %2 : tensor<32x64xf32>
  return %3 : tensor<32x64xf32>"""), {"transpose": 1}),
    "broadcast_composition_and_reshape_as_broadcast": (_f("%v: tensor<16xf32>, %a: tensor<16x8xf32>", "tensor<16x8xf32>", """
  %0 = stablehlo.reshape %v : (tensor<16xf32>) -> tensor<16x1xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x8xf32>
  %2 = stablehlo.add %1, %a : tensor<16x8xf32>
  return %2 : tensor<16x8xf32>"""), {"reshape": 0, "broadcast_in_dim": 1}),
    "elementwise_of_broadcasts": (_f("%u: tensor<16xf32>, %v: tensor<16xf32>", "tensor<16x512xf32>", """
  %0 = stablehlo.broadcast_in_dim %u, dims = [0] : (tensor<16xf32>) -> tensor<16x512xf32>
  %1 = stablehlo.broadcast_in_dim %v, dims = [0] : (tensor<16xf32>) -> tensor<16x512xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<16x512xf32>
  %3 = stablehlo.exponential %2 : tensor<16x512xf32>
  return %3 : tensor<16x512xf32>"""), {"exponential": 1, "multiply": 1, "broadcast_in_dim": 1}),
    "reshape_chain": (_f("%a: tensor<8x8xf32>", "tensor<4x16xf32>", """
  %0 = stablehlo.reshape %a : (tensor<8x8xf32>) -> tensor<64xf32>
  %1 = stablehlo.reshape %0 : (tensor<64xf32>) -> tensor<2x32xf32>
  %2 = stablehlo.reshape %1 : (tensor<2x32xf32>) -> tensor<4x16xf32>
  %3 = stablehlo.transpose %2, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %3 : tensor<4x16xf32>"""), {"reshape": 1, "transpose": 0}),
    # ---------------------------------------------------------------- slice pushdown
    "slice_of_elementwise": (_f("%a: tensor<4096xf32>, %b: tensor<4096xf32>", "tensor<8xf32>", """
  %0 = stablehlo.multiply %a, %b : tensor<4096xf32>
  %1 = stablehlo.exponential %0 : tensor<4096xf32>
  %2 = stablehlo.slice %1 [8:16] : (tensor<4096xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>"""), "slices_first"),
    "slice_of_broadcast_and_splat": (_f("%v: tensor<64x1xf32>", "tensor<4x8xf32>", """
  %c = stablehlo.constant dense<2.0> : tensor<f32>
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
  %0 = stablehlo.broadcast_in_dim %v, dims = [0, 1] : (tensor<64x1xf32>) -> tensor<64x512xf32>
  %1 = stablehlo.multiply %0, %cb : tensor<64x512xf32>
  %2 = stablehlo.tanh %1 : tensor<64x512xf32>
  %3 = stablehlo.slice %2 [10:18:2, 100:108] : (tensor<64x512xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>"""), "slices_first"),
    "slice_of_transpose_and_slice": (_f("%a: tensor<64x128xf32>", "tensor<3x5xf32>", """
  %0 = stablehlo.exponential %a : tensor<64x128xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
  %2 = stablehlo.slice %1 [10:100:3, 4:60] : (tensor<128x64xf32>) -> tensor<30x56xf32>
  %3 = stablehlo.slice %2 [1:7:2, 2:12:2] : (tensor<30x56xf32>) -> tensor<3x5xf32>
  return %3 : tensor<3x5xf32>"""), "slices_first"),
    "slice_of_concatenate": (_f("%a: tensor<1000x8xf32>, %b: tensor<1000x8xf32>", "(tensor<10x8xf32>, tensor<10x8xf32>, tensor<20x8xf32>)", """
  %ea = stablehlo.exponential %a : tensor<1000x8xf32>
  %eb = stablehlo.exponential %b : tensor<1000x8xf32>
  %0 = stablehlo.concatenate %ea, %eb, dim = 0 : (tensor<1000x8xf32>, tensor<1000x8xf32>) -> tensor<2000x8xf32>
  %1 = stablehlo.slice %0 [5:15, 0:8] : (tensor<2000x8xf32>) -> tensor<10x8xf32>
  %2 = stablehlo.slice %0 [1500:1510, 0:8] : (tensor<2000x8xf32>) -> tensor<10x8xf32>
  %3 = stablehlo.slice %0 [990:1010, 0:8] : (tensor<2000x8xf32>) -> tensor<20x8xf32>
  return %1, %2, %3 : tensor<10x8xf32>, tensor<10x8xf32>, tensor<20x8xf32>"""), "slices_first"),
    "slice_of_select_with_scalar_predicate": (_f("%p: tensor<i1>, %a: tensor<4096xf32>, %b: tensor<4096xf32>", "tensor<4xf32>", """
  %ea = stablehlo.exponential %a : tensor<4096xf32>
  %0 = stablehlo.select %p, %ea, %b : tensor<i1>, tensor<4096xf32>
  %1 = stablehlo.slice %0 [0:4] : (tensor<4096xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>"""), "slices_first"),
    "slice_of_matmul": (_f("%a: tensor<256x128xf32>, %b: tensor<128x256xf32>", "tensor<4x8xf32>", """
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<256x128xf32>, tensor<128x256xf32>) -> tensor<256x256xf32>
  %1 = stablehlo.slice %0 [0:4, 8:16] : (tensor<256x256xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>"""), "slices_first"),
    "slice_of_matvec_transposed": (_f("%a: tensor<128x256xf32>, %v: tensor<128xf32>", "tensor<4xf32>", """
  %0 = stablehlo.dot_general %a, %v, contracting_dims = [0] x [0] : (tensor<128x256xf32>, tensor<128xf32>) -> tensor<256xf32>
  %1 = stablehlo.slice %0 [100:104] : (tensor<256xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>"""), "slices_first"),
}


def _slices_first(after):
    """Every slice reads a function argument directly (it was pushed to the inputs)."""
    from eqsat_util import main_func
    from jaxlib.mlir import ir

    for op in main_func(after).regions[0].blocks[0].operations:
        if op.operation.name == "stablehlo.slice":
            assert isinstance(op.operands[0].owner, ir.Block), "slice not pushed to an argument"
    assert count(after, "slice") >= 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_case(name):
    text, expect = CASES[name]
    before, after, rep = eqsat_and_check(text)
    assert rep.segments and rep.segments[0].replaced, rep
    if expect == "slices_first":
        _slices_first(after)
    else:
        for op, n in expect.items():
            assert count(after, op) == n, (op, op_names(after))


# identities that hold only up to the sign of a zero (``optimize.exactness``): fast-math.
# name -> (module, op counts with fast math, op counts without)
FAST_CASES = {
    # x + (+0.0) is +0 for x = -0; x - (-0.0) likewise
    "add_positive_zero_sub_negative_zero": (_f("%a: tensor<64xf32>", "tensor<64xf32>", """
  %pz = stablehlo.constant dense<0.0> : tensor<64xf32>
  %nz = stablehlo.constant dense<-0.0> : tensor<64xf32>
  %t = stablehlo.transpose %a, dims = [0] : (tensor<64xf32>) -> tensor<64xf32>
  %0 = stablehlo.add %t, %pz : tensor<64xf32>
  %1 = stablehlo.subtract %0, %nz : tensor<64xf32>
  return %1 : tensor<64xf32>"""), {"add": 0, "subtract": 0}, {"add": 1, "subtract": 1}),
    # (+0.0) - a is +0 for a = +0, where -a is -0
    "positive_zero_minus": (_f("%a: tensor<64xf32>", "tensor<64xf32>", """
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<64xf32>
  %0 = stablehlo.subtract %zb, %a : tensor<64xf32>
  %1 = stablehlo.negate %0 : tensor<64xf32>
  %2 = stablehlo.negate %1 : tensor<64xf32>
  %3 = stablehlo.negate %2 : tensor<64xf32>
  return %3 : tensor<64xf32>"""), {"negate": 0, "subtract": 0}, {"negate": 1, "subtract": 1}),
}


@pytest.mark.parametrize("name", sorted(FAST_CASES))
def test_fast_math_rule_case(name):
    text, fast, exact = FAST_CASES[name]
    before, after, rep = eqsat_and_check(text, fast_math=True)
    assert rep.segments and rep.segments[0].replaced, rep
    for op, n in fast.items():
        assert count(after, op) == n, (op, op_names(after))
    # the default (exact rules only) keeps the ops whose zero has the wrong sign
    before, after, rep = eqsat_and_check(text)
    for op, n in exact.items():
        assert count(after, op) == n, (op, op_names(after))
