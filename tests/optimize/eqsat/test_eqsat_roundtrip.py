"""Encoding round trips: encode -> (no rules) -> extract -> rebuild gives an equivalent module,
for every modelled op kind, opaque ops (multi-result, with regions), nested regions, and
corpus modules; plus segmentation and op classification."""

import numpy as np
import pytest
from eqsat_util import count, eqsat_and_check, execute, main_func, op_names, parse, random_inputs
from hlo_corpus import MODULES, corpus_module

from reactant.ir import context as irc
from reactant.optimize import run_pipeline
from reactant.optimize.eqsat import Limits, run_eqsat
from reactant.optimize.eqsat.encode import classify, segments_of_block

NO_RULES = Limits(rewrite=False)

ALL_KINDS = """
func.func public @main(%a: tensor<4x6xf32>, %b: tensor<4x6xf32>, %v: tensor<6xf32>, %i: tensor<4x6xi32>,
                       %m: tensor<3x4x5xf32>, %n: tensor<3x5x2xf32>) -> (tensor<6x4xf32>, tensor<4x6xi32>,
                       tensor<f32>, tensor<3x4x2xf32>, tensor<9x6xf32>, tensor<4xf32>, tensor<2x3xf32>) {
  %c1 = stablehlo.constant dense<1.5> : tensor<f32>
  %cd = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]> : tensor<1x6xf32>
  %ci = stablehlo.constant dense<3> : tensor<4x6xi32>
  %io = stablehlo.iota dim = 1 : tensor<4x6xi32>
  %0 = stablehlo.add %a, %b : tensor<4x6xf32>
  %1 = stablehlo.exponential %0 : tensor<4x6xf32>
  %2 = stablehlo.broadcast_in_dim %c1, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
  %3 = stablehlo.multiply %1, %2 : tensor<4x6xf32>
  %4 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
  %5 = stablehlo.select %4, %3, %a : tensor<4x6xi1>, tensor<4x6xf32>
  %6 = stablehlo.clamp %c1, %5, %2 : (tensor<f32>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %8 = stablehlo.reverse %7, dims = [0] : tensor<6x4xf32>
  %9 = stablehlo.convert %a : (tensor<4x6xf32>) -> tensor<4x6xi32>
  %10 = stablehlo.add %9, %io : tensor<4x6xi32>
  %11 = stablehlo.multiply %10, %ci : tensor<4x6xi32>
  %12 = stablehlo.reduce(%5 init: %c1) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
  %13 = stablehlo.dot_general %m, %n, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<3x4x5xf32>, tensor<3x5x2xf32>) -> tensor<3x4x2xf32>
  %14 = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<6xf32>) -> tensor<1x6xf32>
  %15 = stablehlo.concatenate %a, %14, %cd, %b, dim = 0 : (tensor<4x6xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
  %16 = stablehlo.slice %15 [1:10, 0:6] : (tensor<10x6xf32>) -> tensor<9x6xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %17 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  %18 = stablehlo.pad %17, %c1, low = [1], high = [-1], interior = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %19 = stablehlo.reshape %6 : (tensor<4x6xf32>) -> tensor<24xf32>
  %20 = stablehlo.slice %19 [0:6:4] : (tensor<24xf32>) -> tensor<2xf32>
  %21 = stablehlo.pad %20, %z, low = [0], high = [0], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<3xf32>
  %22 = stablehlo.broadcast_in_dim %21, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %23 = stablehlo.negate %22 : tensor<2x3xf32>
  return %8, %11, %12, %13, %16, %18, %23 : tensor<6x4xf32>, tensor<4x6xi32>, tensor<f32>, tensor<3x4x2xf32>, tensor<9x6xf32>, tensor<4xf32>, tensor<2x3xf32>
}
"""


def test_roundtrip_every_modelled_kind():
    before, after, rep = eqsat_and_check(ALL_KINDS, limits=NO_RULES)
    assert len(rep.segments) == 1 and rep.segments[0].replaced
    names = set(op_names(after))
    for k in ("add", "exponential", "compare", "select", "clamp", "transpose", "reverse", "convert", "iota",
              "reduce", "dot_general", "concatenate", "slice", "pad", "reshape", "broadcast_in_dim", "negate"):
        assert f"stablehlo.{k}" in names, k


def test_every_kind_is_modelled():
    m = parse(ALL_KINDS)
    for op in main_func(m).regions[0].blocks[0].operations:
        if op.operation.name != "func.return":
            assert classify(op) is not None, op.operation.name


OPAQUE = """
func.func public @main(%a: tensor<8xf32>, %b: tensor<8xf32>, %k: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<i32>) {
  %0 = stablehlo.add %a, %b : tensor<8xf32>
  %1 = stablehlo.multiply %0, %a : tensor<8xf32>
  %2:2 = stablehlo.while(%it = %k, %x = %1) : tensor<i32>, tensor<8xf32>
   cond {
    %c = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %it, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %n = stablehlo.add %it, %one : tensor<i32>
    %t = stablehlo.transpose %x, dims = [0] : (tensor<8xf32>) -> tensor<8xf32>
    %y = stablehlo.multiply %t, %b : tensor<8xf32>
    %s = stablehlo.slice %y [0:8] : (tensor<8xf32>) -> tensor<8xf32>
    stablehlo.return %n, %s : tensor<i32>, tensor<8xf32>
  }
  %3 = "stablehlo.sort"(%b) ({
    ^bb0(%l: tensor<f32>, %r: tensor<f32>):
      %lt = stablehlo.compare LT, %l, %r, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<8xf32>) -> tensor<8xf32>
  %4 = stablehlo.add %2#1, %3 : tensor<8xf32>
  %5 = stablehlo.transpose %4, dims = [0] : (tensor<8xf32>) -> tensor<8xf32>
  %6 = stablehlo.subtract %5, %0 : tensor<8xf32>
  return %6, %1, %2#0 : tensor<8xf32>, tensor<8xf32>, tensor<i32>
}
"""


def test_roundtrip_opaque_ops_multi_results_and_regions():
    before, after, rep = eqsat_and_check(OPAQUE, limits=NO_RULES, check_classes=False)
    assert count(after, "while") == 1 and count(after, "sort") == 1
    # the while body and the main body are processed; ops depending on the loop go after it
    assert len(rep.segments) >= 2


def test_rewrite_inside_while_body_and_around_opaque_ops():
    before, after, rep = eqsat_and_check(OPAQUE, check_classes=False)
    text = irc.to_text(after)
    assert "stablehlo.transpose" not in text  # identity transposes, also inside the loop body
    assert "stablehlo.slice" not in text  # full slice
    assert count(after, "while") == 1 and count(after, "sort") == 1


def test_segments_split_at_dependent_opaque_ops_and_absorb_independent_ones():
    m = parse(OPAQUE)
    block = main_func(m).regions[0].blocks[0]
    segs = segments_of_block(block, 100)
    # [add, multiply] | while (depends) | sort is independent of segment 2 -> absorbed
    assert [len(s.ops) for s in segs] == [2, 3]
    assert segs[0].end_op.operation.name == "stablehlo.while"
    assert segs[1].end_op.operation.name == "func.return"
    small = segments_of_block(block, 1)
    assert [len(s.ops) for s in small] == [1, 1, 1, 1, 1]


def test_max_segment_ops_keeps_results():
    before, after, rep = eqsat_and_check(ALL_KINDS, limits=Limits(max_segment_ops=4, gainful_kinds=None), check_classes=False)
    assert len(rep.segments) > 3


def test_ops_with_extra_attributes_are_opaque():
    text = """
func.func public @main(%a: tensor<4xf32>, %b: tensor<4x4xf32>) -> (tensor<4xf32>, tensor<4x4xf32>) {
  %0 = stablehlo.add %a, %a {mhlo.sharding = "{replicated}"} : tensor<4xf32>
  %1 = stablehlo.dot_general %b, %b, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = stablehlo.dot_general %b, %b, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = stablehlo.add %1, %2 : tensor<4x4xf32>
  return %0, %3 : tensor<4xf32>, tensor<4x4xf32>
}"""
    m = parse(text)
    kinds = [classify(op) for op in main_func(m).regions[0].blocks[0].operations]
    assert kinds[0] is None and kinds[1] is None and kinds[2][0] == "Dot" and kinds[3][0] == "Bin"
    # and the sharding attribute / HIGHEST precision survive eqsat
    before, after, rep = eqsat_and_check(text, check_classes=False)
    t = irc.to_text(after)
    assert "mhlo.sharding" in t and "HIGHEST" in t


def test_unsupported_types_are_opaque():
    text = """
func.func public @main(%a: tensor<4xcomplex<f32>>, %b: tensor<4xf32>) -> (tensor<4xcomplex<f32>>, tensor<4xf32>) {
  %0 = stablehlo.add %a, %a : tensor<4xcomplex<f32>>
  %1 = stablehlo.add %b, %b : tensor<4xf32>
  return %0, %1 : tensor<4xcomplex<f32>>, tensor<4xf32>
}"""
    m = parse(text)
    ops = list(main_func(m).regions[0].blocks[0].operations)
    assert classify(ops[0]) is None and classify(ops[1]) is not None


def test_roundtrip_corpus_structure():
    """Every corpus module (inlined) survives encode/extract/rebuild without rules: it
    verifies and keeps its op count (dead code aside)."""
    assert MODULES
    for f in MODULES:
        m = irc.load(str(corpus_module(f)))
        run_pipeline(m, ["inline", "canonicalize", "patterns", "cse"])
        n0 = len(op_names(m))
        rep = run_eqsat(m, NO_RULES)
        m.operation.verify()
        assert not any(s.error for s in rep.segments), (f, [s.error for s in rep.segments])
        run_pipeline(m, ["cse"])
        assert len(op_names(m)) <= n0 + 2, f


@pytest.mark.parametrize("name", ["mlp_train_step.grad", "normalize_loop.grad", "slice_of_dot.grad"])
def test_roundtrip_corpus_results(name):
    m = irc.load(str(corpus_module(name)))
    run_pipeline(m, ["inline", "canonicalize", "patterns", "cse"])
    ref_mod = irc.parse_module(irc.to_text(m))
    run_eqsat(m, NO_RULES)
    inputs = random_inputs(ref_mod)
    ref, out = execute(ref_mod, inputs), execute(m, inputs)
    for a, b in zip(ref, out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(a).max())))
