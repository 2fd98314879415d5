"""Before/after and differential-execution tests of the ``control_flow`` pattern family."""

import pytest

from _harness import check_case, params, rcase, to_text

LOOP_NORM = """
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<64xf32>
  %0:3 = stablehlo.while(%i = %c0, %xx = %x, %acc = %z) : tensor<i32>, tensor<64xf32>, tensor<64xf32>
  cond {
    %n = stablehlo.constant dense<64> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %sq = stablehlo.multiply %xx, %xx : tensor<64xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<64xf32>, tensor<f32>) -> tensor<f32>
    %nrm = stablehlo.sqrt %s : tensor<f32>
    %e = stablehlo.dynamic_slice %xx, %i, sizes = [1] : (tensor<64xf32>, tensor<i32>) -> tensor<1xf32>
    %b = stablehlo.broadcast_in_dim %nrm, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %q = stablehlo.divide %e, %b : tensor<1xf32>
    %u = stablehlo.dynamic_update_slice %acc, %q, %i : (tensor<64xf32>, tensor<1xf32>, tensor<i32>) -> tensor<64xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %xx, %u : tensor<i32>, tensor<64xf32>, tensor<64xf32>
  }
  return %0#2 : tensor<64xf32>
}"""

CASES = [
    rcase("inline_call", """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @f(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = func.call @f(%0, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %x, %y : tensor<4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %3 = stablehlo.add %2, %x : tensor<4xf32>
  return %3 : tensor<4xf32>
}""", present=[r"stablehlo.multiply %arg0, %arg0", r"stablehlo.reduce"], absent=[r"func.call"]),
    rcase("inline_call", """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}""", changed=False, run=False, id="recursive-neg"),
    rcase("dead_private_function", """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @used(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @unused(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @used(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.sine %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}""", present=[r"@used"], absent=[r"@unused"]),
    rcase("dead_private_function", """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @user(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @unused(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @used(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @user(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "enzyme.autodiff"(%x) {fn = @used, activity = [], ret_activity = []} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}""", present=[r"@used", r"@user"], absent=[r"@unused"], run=False, id="symbol-in-attribute"),
    rcase("while_licm", LOOP_NORM, also=("while_passthrough_arg",),
         present=[r"stablehlo.sqrt .*\n.*stablehlo.while"], absent=[r"do \{[^}]*stablehlo.reduce"]),
    rcase("while_licm", """
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>, %s: tensor<f32>) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<8xf32>
  cond {
    %n = stablehlo.constant dense<5> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %t = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %e = stablehlo.exponential %y : tensor<8xf32>
    %w = stablehlo.multiply %e, %t : tensor<8xf32>
    %a2 = stablehlo.add %acc, %w : tensor<8xf32>
    %a3 = stablehlo.multiply %a2, %t : tensor<8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %a3 : tensor<i32>, tensor<8xf32>
  }
  return %0#1 : tensor<8xf32>
}""", present=[r"stablehlo.exponential %arg1 [\s\S]*stablehlo.while",
               r"do \{\n.*broadcast_in_dim %arg2"], absent=[r"do \{[\s\S]*exponential"],
         id="shared-cheap-op-copied"),
    # differential seed 22209: the hoisted multiply reads a cheap reshape that is copied out
    # (it has a user left in the loop); rewiring the copy changed the multiply's hash and it
    # stayed in the loop while the hoisted add read it from outside (invalid IR)
    rcase("while_licm", """
func.func @main(%a: tensor<7x7xf64>) -> tensor<1xf64> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<1xf64>
  %0:2 = stablehlo.while(%i = %c0, %acc = %z) : tensor<i32>, tensor<1xf64>
  cond {
    %n = stablehlo.constant dense<44> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %s = stablehlo.slice %a [0:1, 0:1] : (tensor<7x7xf64>) -> tensor<1x1xf64>
    %r = stablehlo.reshape %s : (tensor<1x1xf64>) -> tensor<1xf64>
    %fi = stablehlo.convert %i : (tensor<i32>) -> tensor<f64>
    %f = stablehlo.broadcast_in_dim %fi, dims = [] : (tensor<f64>) -> tensor<1xf64>
    %m = stablehlo.multiply %r, %f : tensor<1xf64>
    %sq = stablehlo.multiply %r, %r : tensor<1xf64>
    %one = stablehlo.constant dense<1.0> : tensor<1xf64>
    %d = stablehlo.add %sq, %one : tensor<1xf64>
    %q = stablehlo.divide %m, %d : tensor<1xf64>
    %a2 = stablehlo.add %acc, %q : tensor<1xf64>
    %k = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %k : tensor<i32>
    stablehlo.return %i1, %a2 : tensor<i32>, tensor<1xf64>
  }
  return %0#1 : tensor<1xf64>
}""", present=[r"stablehlo.multiply [\s\S]*stablehlo.add [\s\S]*stablehlo.while"],
         absent=[r"do \{[\s\S]*stablehlo.multiply %\w+, %\w+ : tensor<1xf64>[\s\S]*stablehlo.multiply"],
         id="hoisted-op-reading-a-copied-cheap-op"),
    rcase("while_passthrough_arg", """
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:3 = stablehlo.while(%i = %c0, %xx = %x, %acc = %x) : tensor<i32>, tensor<8xf32>, tensor<8xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %a = stablehlo.add %acc, %xx : tensor<8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %xx, %a : tensor<i32>, tensor<8xf32>, tensor<8xf32>
  }
  return %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>
}""", present=[r"stablehlo.add %iterArg_\d+, %arg0", r"return %arg0, %0#2"]),
    rcase("while_dead_arg", """
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:4 = stablehlo.while(%i = %c0, %j = %c0, %acc = %x, %junk = %x) : tensor<i32>, tensor<i32>, tensor<8xf32>, tensor<8xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %a = stablehlo.sine %acc : tensor<8xf32>
    %k = stablehlo.exponential %junk : tensor<8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %j1 = stablehlo.add %j, %i : tensor<i32>
    stablehlo.return %i1, %j1, %a, %k : tensor<i32>, tensor<i32>, tensor<8xf32>, tensor<8xf32>
  }
  return %0#2 : tensor<8xf32>
}""", present=[r"stablehlo.while\(%iterArg = %c(_\d+)?, %iterArg_\d+ = %arg0\) : tensor<i32>, tensor<8xf32>\n"],
         absent=[r"exponential"]),
    rcase("while_duplicate_iv", """
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<i32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c00 = stablehlo.constant dense<0> : tensor<i32>
  %0:3 = stablehlo.while(%i = %c0, %j = %c00, %acc = %x) : tensor<i32>, tensor<i32>, tensor<8xf32>
  cond {
    %n = stablehlo.constant dense<5> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %jf = stablehlo.convert %j : (tensor<i32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %jf, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %a = stablehlo.add %acc, %b : tensor<8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %one2 = stablehlo.constant dense<1> : tensor<i32>
    %j1 = stablehlo.add %j, %one2 : tensor<i32>
    stablehlo.return %i1, %j1, %a : tensor<i32>, tensor<i32>, tensor<8xf32>
  }
  return %0#2, %0#1 : tensor<8xf32>, tensor<i32>
}""", also=("while_dead_arg",), present=[r"stablehlo.convert %iterArg :", r"return %\d+#1, %\d+#0"],
         absent=[r"tensor<i32>, tensor<i32>, tensor<8xf32>"]),
    rcase("while_iv_compare_fold", """
func.func @main(%x: tensor<10xf32>) -> tensor<10xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<10xf32>
  cond {
    %n = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %neg = stablehlo.compare LT, %i, %z, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %ten = stablehlo.constant dense<10> : tensor<i32>
    %w = stablehlo.add %i, %ten : tensor<i32>
    %idx = stablehlo.select %neg, %w, %i : tensor<i1>, tensor<i32>
    %e = stablehlo.dynamic_slice %acc, %idx, sizes = [1] : (tensor<10xf32>, tensor<i32>) -> tensor<1xf32>
    %s = stablehlo.sine %e : tensor<1xf32>
    %u = stablehlo.dynamic_update_slice %acc, %s, %idx : (tensor<10xf32>, tensor<1xf32>, tensor<i32>) -> tensor<10xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %u : tensor<i32>, tensor<10xf32>
  }
  return %0#1 : tensor<10xf32>
}""", present=[r"stablehlo.select %c, "], absent=[r"compare  LT, %iterArg, %c_\d+"]),
    rcase("while_zero_trip", """
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<5> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<8xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %a = stablehlo.sine %acc : tensor<8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %a : tensor<i32>, tensor<8xf32>
  }
  return %0#1 : tensor<8xf32>
}""", present=[r"return %arg0"], absent=["stablehlo.while"]),
    rcase("while_single_trip", """
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<i32>) {
  %c0 = stablehlo.constant dense<2> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<8xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %a = stablehlo.sine %acc : tensor<8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %a : tensor<i32>, tensor<8xf32>
  }
  return %0#1, %0#0 : tensor<8xf32>, tensor<i32>
}""", present=[r"stablehlo.sine %arg0"], absent=["stablehlo.while"]),
    rcase("while_single_trip", """
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<1> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<8xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %a = stablehlo.sine %acc : tensor<8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %a : tensor<i32>, tensor<8xf32>
  }
  return %0#1 : tensor<8xf32>
}""", changed=False, id="two-trips-neg"),
    rcase("while_read_before_write", """
func.func @main(%x: tensor<10xf32>, %y: tensor<10xf32>) -> tensor<10xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<10xf32>
  %zero1 = stablehlo.constant dense<0.0> : tensor<1xf32>
  %0:3 = stablehlo.while(%i = %c0, %acc = %z, %t = %y) : tensor<i32>, tensor<10xf32>, tensor<10xf32>
  cond {
    %n = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %n9 = stablehlo.constant dense<9> : tensor<i32>
    %j = stablehlo.subtract %n9, %i : tensor<i32>
    %r = stablehlo.dynamic_slice %t, %j, sizes = [1] : (tensor<10xf32>, tensor<i32>) -> tensor<1xf32>
    %t2 = stablehlo.dynamic_update_slice %t, %zero1, %j : (tensor<10xf32>, tensor<1xf32>, tensor<i32>) -> tensor<10xf32>
    %e = stablehlo.sine %r : tensor<1xf32>
    %u = stablehlo.dynamic_update_slice %acc, %e, %j : (tensor<10xf32>, tensor<1xf32>, tensor<i32>) -> tensor<10xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %u, %t2 : tensor<i32>, tensor<10xf32>, tensor<10xf32>
  }
  return %0#1 : tensor<10xf32>
}""", present=[r"dynamic_slice %arg1, "]),
    rcase("while_read_before_write", """
func.func @main(%x: tensor<10xf32>, %y: tensor<10xf32>) -> tensor<10xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<10xf32>
  %zero1 = stablehlo.constant dense<0.0> : tensor<1xf32>
  %0:3 = stablehlo.while(%i = %c0, %acc = %z, %t = %y) : tensor<i32>, tensor<10xf32>, tensor<10xf32>
  cond {
    %n = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %two = stablehlo.constant dense<2> : tensor<i32>
    %j = stablehlo.divide %i, %two : tensor<i32>
    %r = stablehlo.dynamic_slice %t, %j, sizes = [1] : (tensor<10xf32>, tensor<i32>) -> tensor<1xf32>
    %t2 = stablehlo.dynamic_update_slice %t, %zero1, %j : (tensor<10xf32>, tensor<1xf32>, tensor<i32>) -> tensor<10xf32>
    %e = stablehlo.sine %r : tensor<1xf32>
    %u = stablehlo.dynamic_update_slice %acc, %e, %i : (tensor<10xf32>, tensor<1xf32>, tensor<i32>) -> tensor<10xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %u, %t2 : tensor<i32>, tensor<10xf32>, tensor<10xf32>
  }
  return %0#1 : tensor<10xf32>
}""", changed=False, id="revisited-window-neg"),
    rcase("if_const_pred", """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %p = stablehlo.constant dense<false> : tensor<i1>
  %0 = "stablehlo.if"(%p) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }, {
    %c = stablehlo.cosine %a : tensor<4xf32>
    stablehlo.return %c : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}""", present=[r"stablehlo.cosine %arg0"], absent=[r"stablehlo.if", r"stablehlo.sine"]),
    rcase("case_const_index", """
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %i = stablehlo.constant dense<1> : tensor<i32>
  %k = stablehlo.constant dense<7> : tensor<i32>
  %0 = "stablehlo.case"(%i) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }, {
    %c = stablehlo.cosine %a : tensor<4xf32>
    stablehlo.return %c : tensor<4xf32>
  }, {
    %c = stablehlo.tanh %a : tensor<4xf32>
    stablehlo.return %c : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  %1 = "stablehlo.case"(%k) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }, {
    %c = stablehlo.exponential %a : tensor<4xf32>
    stablehlo.return %c : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}""", present=[r"stablehlo.cosine %arg0", r"stablehlo.exponential %arg0"], absent=[r"stablehlo.case", "stablehlo.sine", "tanh"]),
    rcase("case_single_branch", """
func.func @main(%a: tensor<4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %0 = "stablehlo.case"(%i) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}""", present=[r"stablehlo.sine %arg0"], absent=[r"stablehlo.case"]),
    rcase("branches_identical@if", """
func.func @main(%a: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %0 = "stablehlo.if"(%p) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    %t = stablehlo.add %s, %a : tensor<4xf32>
    stablehlo.return %t : tensor<4xf32>
  }, {
    %s = stablehlo.sine %a : tensor<4xf32>
    %t = stablehlo.add %s, %a : tensor<4xf32>
    stablehlo.return %t : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}""", absent=[r"stablehlo.if"]),
    rcase("branches_identical@if", """
func.func @main(%a: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %0 = "stablehlo.if"(%p) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    %t = stablehlo.add %s, %a : tensor<4xf32>
    stablehlo.return %t : tensor<4xf32>
  }, {
    %s = stablehlo.sine %a : tensor<4xf32>
    %t = stablehlo.add %a, %s : tensor<4xf32>
    stablehlo.return %t : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}""", changed=False, id="different-neg"),
    rcase("branches_identical@case", """
func.func @main(%a: tensor<4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %0 = "stablehlo.case"(%i) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }, {
    %s = stablehlo.sine %a : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}""", absent=[r"stablehlo.case"], int_range=(-2, 4)),
    rcase("if_to_select", """
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %p: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0:2 = "stablehlo.if"(%p) ({
    stablehlo.return %a, %b : tensor<4xf32>, tensor<4xf32>
  }, {
    stablehlo.return %b, %b : tensor<4xf32>, tensor<4xf32>
  }) : (tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}""", present=[r"stablehlo.select %arg2, %arg0, %arg1 : tensor<i1>, tensor<4xf32>", r"return %0, %arg1"]),
    rcase("if_sink_update_slice", """
func.func @main(%x: tensor<8x8xf32>, %a: tensor<f32>, %i: tensor<i32>, %p: tensor<i1>) -> tensor<8x8xf32> {
  %0 = "stablehlo.if"(%p) ({
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %c1 : tensor<i32>
    %s = stablehlo.sqrt %a : tensor<f32>
    %u = stablehlo.reshape %s : (tensor<f32>) -> tensor<1x1xf32>
    %r = stablehlo.dynamic_update_slice %x, %u, %i, %j : (tensor<8x8xf32>, tensor<1x1xf32>, tensor<i32>, tensor<i32>) -> tensor<8x8xf32>
    stablehlo.return %r : tensor<8x8xf32>
  }, {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %c1 : tensor<i32>
    %u = stablehlo.reshape %a : (tensor<f32>) -> tensor<1x1xf32>
    %r = stablehlo.dynamic_update_slice %x, %u, %i, %j : (tensor<8x8xf32>, tensor<1x1xf32>, tensor<i32>, tensor<i32>) -> tensor<8x8xf32>
    stablehlo.return %r : tensor<8x8xf32>
  }) : (tensor<i1>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}""", present=[r"-> tensor<1x1xf32>\n", r"dynamic_update_slice %arg0, %.*\n.*return"],
          absent=[r"stablehlo.return %\d+ : tensor<8x8xf32>"], id="both_branches_update"),
    rcase("if_sink_update_slice", """
func.func @main(%x: tensor<8x8xf32>, %a: tensor<1x8xf32>, %i: tensor<i32>, %p: tensor<i1>) -> tensor<8x8xf32> {
  %0 = "stablehlo.if"(%p) ({
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %e = stablehlo.exponential %a : tensor<1x8xf32>
    %r = stablehlo.dynamic_update_slice %x, %e, %i, %c0 : (tensor<8x8xf32>, tensor<1x8xf32>, tensor<i32>, tensor<i32>) -> tensor<8x8xf32>
    stablehlo.return %r : tensor<8x8xf32>
  }, {
    stablehlo.return %x : tensor<8x8xf32>
  }) : (tensor<i1>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}""", present=[r"stablehlo.dynamic_slice %arg0"], absent=[r"stablehlo.return %arg0"], id="one_branch_keeps"),
    rcase("if_sink_update_slice", """
func.func @main(%x: tensor<8x8xf32>, %a: tensor<1x1xf32>, %i: tensor<i32>, %p: tensor<i1>) -> tensor<8x8xf32> {
  %0 = "stablehlo.if"(%p) ({
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %r = stablehlo.dynamic_update_slice %x, %a, %i, %c0 : (tensor<8x8xf32>, tensor<1x1xf32>, tensor<i32>, tensor<i32>) -> tensor<8x8xf32>
    stablehlo.return %r : tensor<8x8xf32>
  }, {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %r = stablehlo.dynamic_update_slice %x, %a, %i, %c1 : (tensor<8x8xf32>, tensor<1x1xf32>, tensor<i32>, tensor<i32>) -> tensor<8x8xf32>
    stablehlo.return %r : tensor<8x8xf32>
  }) : (tensor<i1>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}""", changed=False, id="different_windows"),
    rcase("branches_unused_results@if", """
func.func @main(%a: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %0:2 = "stablehlo.if"(%p) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    %c = stablehlo.cosine %a : tensor<4xf32>
    stablehlo.return %s, %c : tensor<4xf32>, tensor<4xf32>
  }, {
    %e = stablehlo.exponential %a : tensor<4xf32>
    stablehlo.return %a, %e : tensor<4xf32>, tensor<4xf32>
  }) : (tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#1 : tensor<4xf32>
}""", present=[r"\}\) : \(tensor<i1>\) -> tensor<4xf32>"], absent=[r"stablehlo.sine"]),
    rcase("branches_unused_results@case", """
func.func @main(%a: tensor<4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %0:2 = "stablehlo.case"(%i) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    stablehlo.return %s, %a : tensor<4xf32>, tensor<4xf32>
  }, {
    %e = stablehlo.exponential %a : tensor<4xf32>
    stablehlo.return %e, %a : tensor<4xf32>, tensor<4xf32>
  }) : (tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}""", present=[r"\}\) : \(tensor<i32>\) -> tensor<4xf32>"], int_range=(-1, 3)),
    rcase("if_not_pred", """
func.func @main(%a: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %q = stablehlo.not %p : tensor<i1>
  %0 = "stablehlo.if"(%q) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }, {
    %c = stablehlo.cosine %a : tensor<4xf32>
    stablehlo.return %c : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}""", present=[r"stablehlo.if\"?\(?%arg1|if %arg1", r"cosine[\s\S]*sine"], absent=[r"stablehlo.not"]),
    rcase("case_two_branches_to_if", """
func.func @main(%a: tensor<4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %0 = "stablehlo.case"(%i) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }, {
    %c = stablehlo.cosine %a : tensor<4xf32>
    stablehlo.return %c : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}""", present=[r"stablehlo.if", r"compare +EQ"], absent=[r"stablehlo.case"], int_range=(-2, 3)),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case):
    """The rewrite, its IR, and the module before and after run through PJRT."""
    check_case(case)


def test_every_control_flow_pattern_has_a_case():
    from reactant.optimize.patterns import PATTERNS

    mine = {n for n, p in PATTERNS.items() if p.family == "control_flow"}
    covered = {c.name for c in CASES if c.fires}
    assert mine <= covered, sorted(mine - covered)


def test_normalize_loop_norm_is_hoisted():
    """The corpus' normalize_loop: after inlining, the norm moves out of the loop (and the
    loop, a map over the rows, becomes one elementwise division)."""
    from hlo_corpus import corpus_module

    from reactant.ir.context import load
    import reactant.optimize as ro

    m = load(str(corpus_module("normalize_loop.fwd")))
    ro.run_pipeline(m, ro.pipeline("O1"), ro.PassOptions(disabled=frozenset({"raising"})))
    txt = to_text(m)
    head, loop = txt.split("stablehlo.while", 1)
    assert "stablehlo.reduce" in head and "stablehlo.sqrt" in head, txt
    assert "stablehlo.reduce" not in loop and "func.call" not in loop, txt
    m = load(str(corpus_module("normalize_loop.fwd")))
    ro.run_pipeline(m, ro.pipeline("O1"))
    txt = to_text(m)
    assert "stablehlo.while" not in txt and txt.count("stablehlo.reduce") == 1, txt
    assert "stablehlo.divide %arg0" in txt, txt
