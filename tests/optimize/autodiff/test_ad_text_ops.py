"""Ops and forms JAX does not emit (legacy dot/broadcast, stablehlo.if, implicit captures in
while bodies, active init values, scalar select predicates, sharding custom calls): hand-written
modules, both modes, against central finite differences of the module itself."""

from __future__ import annotations

import numpy as np
import pytest

from adtest_util import check_text

R = np.random.default_rng(11)

CASES = {
    "logistic": ("""
func.func @main(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = stablehlo.logistic %x : tensor<3xf64>
  %1 = stablehlo.multiply %0, %x : tensor<3xf64>
  return %1 : tensor<3xf64>
}""", [R.standard_normal(3)]),
    "chlo_tan": ("""
func.func @main(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = chlo.tan %x : tensor<3xf64> -> tensor<3xf64>
  return %0 : tensor<3xf64>
}""", [R.uniform(-1, 1, 3)]),
    "chlo_conj": ("""
func.func @main(%x: tensor<3xf64>) -> tensor<3xf64> {
  %sq = stablehlo.multiply %x, %x : tensor<3xf64>
  %z = stablehlo.complex %x, %sq : tensor<3xcomplex<f64>>
  %c = chlo.conj %z : tensor<3xcomplex<f64>> -> tensor<3xcomplex<f64>>
  %one = stablehlo.constant dense<(0.5, 1.5)> : tensor<3xcomplex<f64>>
  %m = stablehlo.multiply %c, %one : tensor<3xcomplex<f64>>
  %w = stablehlo.multiply %m, %z : tensor<3xcomplex<f64>>
  %r = stablehlo.real %w : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  %i = stablehlo.imag %m : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  %o = stablehlo.add %r, %i : tensor<3xf64>
  return %o : tensor<3xf64>
}""", [R.standard_normal(3)]),
    "dot": ("""
func.func @main(%a: tensor<3x4xf64>, %b: tensor<4x2xf64>) -> tensor<3x2xf64> {
  %0 = "stablehlo.dot"(%a, %b) : (tensor<3x4xf64>, tensor<4x2xf64>) -> tensor<3x2xf64>
  %1 = stablehlo.multiply %0, %0 : tensor<3x2xf64>
  return %1 : tensor<3x2xf64>
}""", [R.standard_normal((3, 4)), R.standard_normal((4, 2))]),
    "broadcast": ("""
func.func @main(%x: tensor<3xf64>) -> tensor<2x3xf64> {
  %0 = "stablehlo.broadcast"(%x) {broadcast_sizes = array<i64: 2>} : (tensor<3xf64>) -> tensor<2x3xf64>
  %1 = stablehlo.sine %0 : tensor<2x3xf64>
  return %1 : tensor<2x3xf64>
}""", [R.standard_normal(3)]),
    "if_with_captures": ("""
func.func @main(%x: tensor<3xf64>, %y: tensor<3xf64>, %s: tensor<f64>) -> tensor<3xf64> {
  %c0 = stablehlo.constant dense<0.0> : tensor<f64>
  %p = stablehlo.compare GT, %s, %c0 : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %r = "stablehlo.if"(%p) ({
    %a = stablehlo.sine %x : tensor<3xf64>
    %b = stablehlo.multiply %a, %y : tensor<3xf64>
    stablehlo.return %b : tensor<3xf64>
  }, {
    %b = stablehlo.multiply %x, %x : tensor<3xf64>
    stablehlo.return %b : tensor<3xf64>
  }) : (tensor<i1>) -> tensor<3xf64>
  %bs = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f64>) -> tensor<3xf64>
  %o = stablehlo.multiply %r, %bs : tensor<3xf64>
  return %o : tensor<3xf64>
}""", [R.standard_normal(3), R.standard_normal(3), np.float64(0.7)]),
    "if_false_branch": ("""
func.func @main(%x: tensor<3xf64>, %y: tensor<3xf64>, %s: tensor<f64>) -> tensor<3xf64> {
  %c0 = stablehlo.constant dense<0.0> : tensor<f64>
  %p = stablehlo.compare GT, %s, %c0 : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %r = "stablehlo.if"(%p) ({
    stablehlo.return %y : tensor<3xf64>
  }, {
    %b = stablehlo.multiply %x, %y : tensor<3xf64>
    stablehlo.return %b : tensor<3xf64>
  }) : (tensor<i1>) -> tensor<3xf64>
  return %r : tensor<3xf64>
}""", [R.standard_normal(3), R.standard_normal(3), np.float64(-0.7)]),
    "while_implicit_capture": ("""
func.func @main(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %h = %x) : tensor<i32>, tensor<3xf64>
  cond {
    %c4 = stablehlo.constant dense<4> : tensor<i32>
    %p = stablehlo.compare LT, %i, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %c1 : tensor<i32>
    %e = stablehlo.exponential %w : tensor<3xf64>
    %m = stablehlo.multiply %h, %e : tensor<3xf64>
    %s = stablehlo.sine %m : tensor<3xf64>
    %a = stablehlo.add %s, %w : tensor<3xf64>
    stablehlo.return %i2, %a : tensor<i32>, tensor<3xf64>
  }
  return %r#1 : tensor<3xf64>
}""", [R.standard_normal(3), R.standard_normal(3) * 0.3]),
    "while_counting_down_step2": ("""
func.func @main(%x: tensor<3xf64>) -> tensor<3xf64> {
  %c9 = stablehlo.constant dense<9> : tensor<i64>
  %r:2 = stablehlo.while(%i = %c9, %h = %x) : tensor<i64>, tensor<3xf64>
  cond {
    %c0 = stablehlo.constant dense<0> : tensor<i64>
    %p = stablehlo.compare GT, %i, %c0 : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %c2 = stablehlo.constant dense<2> : tensor<i64>
    %i2 = stablehlo.subtract %i, %c2 : tensor<i64>
    %f = stablehlo.convert %i : (tensor<i64>) -> tensor<f64>
    %fb = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f64>) -> tensor<3xf64>
    %m = stablehlo.multiply %h, %fb : tensor<3xf64>
    %s = stablehlo.tanh %m : tensor<3xf64>
    stablehlo.return %i2, %s : tensor<i64>, tensor<3xf64>
  }
  return %r#1 : tensor<3xf64>
}""", [R.standard_normal(3) * 0.2]),
    "reduce_with_active_init": ("""
func.func @main(%x: tensor<3x4xf64>, %s: tensor<f64>) -> (tensor<3xf64>, tensor<4xf64>) {
  %0 = stablehlo.reduce(%x init: %s) applies stablehlo.add across dimensions = [1]
      : (tensor<3x4xf64>, tensor<f64>) -> tensor<3xf64>
  %one = stablehlo.constant dense<1.0> : tensor<f64>
  %si = stablehlo.add %s, %one : tensor<f64>
  %1 = stablehlo.reduce(%x init: %si) applies stablehlo.multiply across dimensions = [0]
      : (tensor<3x4xf64>, tensor<f64>) -> tensor<4xf64>
  return %0, %1 : tensor<3xf64>, tensor<4xf64>
}""", [R.standard_normal((3, 4)), np.float64(0.4)]),
    "select_scalar_predicate": ("""
func.func @main(%x: tensor<3xf64>, %y: tensor<3xf64>, %s: tensor<f64>) -> tensor<3xf64> {
  %c0 = stablehlo.constant dense<0.0> : tensor<f64>
  %p = stablehlo.compare LT, %s, %c0 : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %r = stablehlo.select %p, %x, %y : tensor<i1>, tensor<3xf64>
  %m = stablehlo.multiply %r, %x : tensor<3xf64>
  return %m : tensor<3xf64>
}""", [R.standard_normal(3), R.standard_normal(3), np.float64(-0.4)]),
    "custom_call_sharding": ("""
func.func @main(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{replicated}"} : (tensor<3xf64>) -> tensor<3xf64>
  %1 = stablehlo.multiply %0, %0 : tensor<3xf64>
  return %1 : tensor<3xf64>
}""", [R.standard_normal(3)]),
    "case_three_branches": ("""
func.func @main(%x: tensor<3xf64>, %k: tensor<i32>) -> tensor<3xf64> {
  %r = "stablehlo.case"(%k) ({
    stablehlo.return %x : tensor<3xf64>
  }, {
    %a = stablehlo.cosine %x : tensor<3xf64>
    stablehlo.return %a : tensor<3xf64>
  }, {
    %a = stablehlo.exponential %x : tensor<3xf64>
    stablehlo.return %a : tensor<3xf64>
  }) : (tensor<i32>) -> tensor<3xf64>
  return %r : tensor<3xf64>
}""", [R.standard_normal(3), np.int32(1)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_text_op(name):
    text, args = CASES[name]
    check_text("module {" + text + "\n}", args)


def test_checkpointed_loop_with_implicit_capture():
    text, args = CASES["while_implicit_capture"]
    g0, _, _ = check_text("module {" + text + "\n}", args)
    g1, _, _ = check_text("module {" + text + "\n}", args, extra={"ad_checkpoint": 3})
    for a, b in zip(g0, g1):
        np.testing.assert_allclose(a, b, rtol=1e-13)
