"""The fusion part of the cost model (``extract._fusion_cost``) on small programs, against what
XLA CPU does with them (seen in its optimized HLO): a matrix transpose of a dot's result is
folded into the dot, a reduction read by one elementwise consumer joins that consumer's fusion
(which then reads the reduction's input once), and elementwise work inside a reduction's
fusion costs more than in a loop fusion."""

import pytest
from eqsat_util import parse

from reactant.optimize.eqsat import Limits, cost, run_eqsat


def _f(sig: str, ret: str, body: str) -> str:
    return f"func.func public @main({sig}) -> {ret} {{\n{body}\n}}"


def _cost(text: str) -> int:
    """The model's cost of the program as it is (one segment)."""
    rep = run_eqsat(parse(text), Limits(rewrite=False))
    assert len(rep.segments) == 1 and not rep.segments[0].error, rep.segments
    return rep.segments[0].cost_before


@pytest.fixture(autouse=True)
def _defaults():
    cost.set_constants(None)
    yield
    cost.set_constants(None)


C = cost.DEFAULTS
M = "tensor<128x512xf32>"
MT = "tensor<512x128xf32>"
W = "tensor<512x512xf32>"


def _dot_t(extra_use: bool) -> str:
    ret = f"({MT}, {M})" if extra_use else MT
    tail = (f"  %2 = stablehlo.exponential %0 : {M}\n  return %1, %2 : {MT}, {M}" if extra_use
            else f"  return %1 : {MT}")
    return _f(f"%a: {M}, %b: {W}", ret, f"""
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({M}, {W}) -> {M}
  %1 = stablehlo.transpose %0, dims = [1, 0] : ({M}) -> {MT}
{tail}""")


def test_transpose_of_a_dot_costs_the_swapped_dot():
    swapped = _f(f"%a: {M}, %b: {W}", MT, f"""
  %0 = stablehlo.dot_general %b, %a, contracting_dims = [0] x [1] : ({W}, {M}) -> {MT}
  return %0 : {MT}""")
    assert _cost(_dot_t(False)) == _cost(swapped)


def test_transpose_of_a_dot_read_elsewhere_is_charged():
    # the dot's result is needed as it is by another consumer: the transpose is a real copy
    n = 128 * 512
    with_t = _cost(_dot_t(True))
    without_t = _cost(_f(f"%a: {M}, %b: {W}", M, f"""
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({M}, {W}) -> {M}
  %2 = stablehlo.exponential %0 : {M}
  return %2 : {M}"""))
    assert with_t - without_t >= C["transpose"] * n


X = "tensor<256x1000xf32>"
R = "tensor<256xf32>"


def _centered(reduce_is_output: bool) -> str:
    """d = x - max(x) per row, read by two reductions (so written once)."""
    ret = f"({R}, tensor<f32>, {R})" if reduce_is_output else f"({R}, tensor<f32>)"
    extra = ", %m" if reduce_is_output else ""
    extra_t = f", {R}" if reduce_is_output else ""
    return _f(f"%x: {X}, %y: {X}", ret, f"""
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : ({X}, tensor<f32>) -> {R}
  %bm = stablehlo.broadcast_in_dim %m, dims = [0] : ({R}) -> {X}
  %d = stablehlo.subtract %x, %bm : {X}
  %e = stablehlo.exponential %d : {X}
  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : ({X}, tensor<f32>) -> {R}
  %p = stablehlo.multiply %d, %y : {X}
  %t = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [0, 1] : ({X}, tensor<f32>) -> tensor<f32>
  return %s, %t{extra} : {R}, tensor<f32>{extra_t}""")


def test_reduction_joins_its_single_elementwise_consumer():
    # XLA CPU fuses max(x) into the fusion that writes x - max(x): x is read once for both.
    # When the row maxima are also an output, that fusion reads x again.
    n = 256 * 1000
    assert _cost(_centered(True)) - _cost(_centered(False)) >= C["mat"] * n


def test_elementwise_work_in_a_reduction_costs_more():
    def summed(expr_ops: str, last: str) -> str:
        return _f(f"%x: {X}, %y: {X}, %w: {X}", "tensor<f32>", f"""
  %z = stablehlo.constant dense<0.0> : tensor<f32>
{expr_ops}
  %t = stablehlo.reduce({last} init: %z) applies stablehlo.add across dimensions = [0, 1] : ({X}, tensor<f32>) -> tensor<f32>
  return %t : tensor<f32>""")

    n = 256 * 1000
    one = summed(f"  %p = stablehlo.multiply %x, %y : {X}", "%p")
    two = summed(f"  %p = stablehlo.multiply %x, %y : {X}\n  %q = stablehlo.add %p, %w : {X}", "%q")
    # the add's node cost, its extra cost inside the reduction fusion, and the read of %w
    assert _cost(two) - _cost(one) == (2 * C["ew"] + C["mat"]) * n


def _mm(lc: int, rc: int) -> str:
    return _f(f"%a: {W}, %b: {W}", W, f"""
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [{lc}] x [{rc}] : ({W}, {W}) -> {W}
  return %0 : {W}""")


def test_transposed_rhs_costs_more_beside_a_transposed_lhs():
    # XLA CPU: A^T B^T runs much slower than A^T B, A B^T about as fast as A B
    n = 512 * 512
    plain, lt, rt, both = (_cost(_mm(lc, rc)) for lc, rc in ((1, 0), (0, 0), (1, 1), (0, 1)))
    assert lt - plain == C["lhs_t"] * n
    assert rt - plain == C["rhs_t"] * n
    assert both - lt == max(C["lhs_t"], C["rhs_t"]) * n


def test_transpose_through_a_scaling_folds_into_the_dot():
    # transpose(dot(a, b) * 0.5): the patterns pass moves the transpose onto the product and
    # XLA swaps the dot, so it costs the swapped dot scaled
    scaled_t = _f(f"%a: {M}, %b: {W}", MT, f"""
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({M}, {W}) -> {M}
  %h = stablehlo.constant dense<0.5> : {M}
  %1 = stablehlo.multiply %0, %h : {M}
  %2 = stablehlo.transpose %1, dims = [1, 0] : ({M}) -> {MT}
  return %2 : {MT}""")
    swapped = _f(f"%a: {M}, %b: {W}", MT, f"""
  %0 = stablehlo.dot_general %b, %a, contracting_dims = [0] x [1] : ({W}, {M}) -> {MT}
  %h = stablehlo.constant dense<0.5> : {MT}
  %1 = stablehlo.multiply %0, %h : {MT}
  return %1 : {MT}""")
    assert _cost(scaled_t) == _cost(swapped)


def test_full_contraction_dot_costs_its_fused_multiply_reduce():
    # XLA CPU runs a full-contraction dot as the fused multiply-reduce: same elementwise work
    # in the reduction (only the reduce's one-element result write differs)
    dot = _f(f"%x: {X}, %y: {X}", "tensor<f32>", f"""
  %t = stablehlo.dot_general %x, %y, contracting_dims = [0, 1] x [0, 1] : ({X}, {X}) -> tensor<f32>
  return %t : tensor<f32>""")
    red = _f(f"%x: {X}, %y: {X}", "tensor<f32>", f"""
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.multiply %x, %y : {X}
  %t = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [0, 1] : ({X}, tensor<f32>) -> tensor<f32>
  return %t : tensor<f32>""")
    assert _cost(red) - _cost(dot) == C["mat"]
