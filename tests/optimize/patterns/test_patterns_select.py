"""Before/after and differential-execution tests of the ``select`` pattern family."""

import pytest

from _harness import check_case, params, rcase

F4 = "tensor<4xf32>"
I4 = "tensor<4xi32>"
B4 = "tensor<4xi1>"

CASES = [
    rcase("select_const_pred", f"""
func.func @main(%a: {F4}, %b: {F4}) -> {F4} {{
  %t = stablehlo.constant dense<true> : {B4}
  %0 = stablehlo.select %t, %a, %b : {B4}, {F4}
  return %0 : {F4}
}}""", present=[r"return %arg0"], absent=["stablehlo.select"]),
    rcase("select_const_pred", f"""
func.func @main(%a: {F4}, %b: {F4}) -> {F4} {{
  %t = stablehlo.constant dense<false> : tensor<i1>
  %0 = stablehlo.select %t, %a, %b : tensor<i1>, {F4}
  return %0 : {F4}
}}""", present=[r"return %arg1"], absent=["stablehlo.select"], id="scalar-false"),
    rcase("select_const_pred", f"""
func.func @main(%a: {F4}, %b: {F4}) -> {F4} {{
  %t = stablehlo.constant dense<[true, false, true, true]> : {B4}
  %0 = stablehlo.select %t, %a, %b : {B4}, {F4}
  return %0 : {F4}
}}""", changed=False, id="nonsplat-neg"),
    rcase("select_same_operands", f"""
func.func @main(%p: {B4}, %a: {F4}) -> {F4} {{
  %0 = stablehlo.select %p, %a, %a : {B4}, {F4}
  return %0 : {F4}
}}""", present=[r"return %arg1"]),
    rcase("select_not_pred", f"""
func.func @main(%p: {B4}, %a: {F4}, %b: {F4}) -> {F4} {{
  %q = stablehlo.not %p : {B4}
  %0 = stablehlo.select %q, %a, %b : {B4}, {F4}
  return %0 : {F4}
}}""", present=[r"stablehlo.select %arg0, %arg2, %arg1"]),
    rcase("select_select_same_pred", f"""
func.func @main(%p: {B4}, %a: {F4}, %b: {F4}, %c: {F4}) -> ({F4}, {F4}) {{
  %0 = stablehlo.select %p, %a, %b : {B4}, {F4}
  %1 = stablehlo.select %p, %0, %c : {B4}, {F4}
  %2 = stablehlo.select %p, %c, %0 : {B4}, {F4}
  return %1, %2 : {F4}, {F4}
}}""", present=[r"stablehlo.select %arg0, %arg1, %arg3", r"stablehlo.select %arg0, %arg3, %arg2"]),
    rcase("select_bool_consts", f"""
func.func @main(%p: {B4}) -> ({B4}, {B4}) {{
  %t = stablehlo.constant dense<true> : {B4}
  %f = stablehlo.constant dense<false> : {B4}
  %0 = stablehlo.select %p, %t, %f : {B4}, {B4}
  %1 = stablehlo.select %p, %f, %t : {B4}, {B4}
  return %0, %1 : {B4}, {B4}
}}""", present=[r"stablehlo.not %arg0", r"return %arg0, %0"]),
    rcase("select_compare_to_minmax", f"""
func.func @main(%a: {I4}, %b: {I4}) -> ({I4}, {I4}) {{
  %p = stablehlo.compare GT, %a, %b, SIGNED : ({I4}, {I4}) -> {B4}
  %0 = stablehlo.select %p, %a, %b : {B4}, {I4}
  %1 = stablehlo.select %p, %b, %a : {B4}, {I4}
  return %0, %1 : {I4}, {I4}
}}""", present=[r"stablehlo.maximum %arg0, %arg1", r"stablehlo.minimum %arg1, %arg0"], int_range=(-4, 4)),
    rcase("select_compare_to_minmax", f"""
func.func @main(%a: {F4}, %b: {F4}) -> {F4} {{
  %p = stablehlo.compare GT, %a, %b : ({F4}, {F4}) -> {B4}
  %0 = stablehlo.select %p, %a, %b : {B4}, {F4}
  return %0 : {F4}
}}""", changed=False, id="float-neg"),
    rcase("select_compare_to_minmax_float", f"""
func.func @main(%a: {F4}, %b: {F4}) -> {F4} {{
  %p = stablehlo.compare LT, %a, %b : ({F4}, {F4}) -> {B4}
  %0 = stablehlo.select %p, %a, %b : {B4}, {F4}
  return %0 : {F4}
}}""", present=[r"stablehlo.minimum %arg0, %arg1"]),
    rcase("compare_same_operand", f"""
func.func @main(%a: {I4}) -> ({B4}, {B4}) {{
  %0 = stablehlo.compare LE, %a, %a : ({I4}, {I4}) -> {B4}
  %1 = stablehlo.compare NE, %a, %a : ({I4}, {I4}) -> {B4}
  return %0, %1 : {B4}, {B4}
}}""", present=[r"dense<true>", r"dense<false>"], absent=["stablehlo.compare"]),
    rcase("compare_same_operand", f"""
func.func @main(%a: {F4}) -> {B4} {{
  %0 = stablehlo.compare EQ, %a, %a : ({F4}, {F4}) -> {B4}
  return %0 : {B4}
}}""", changed=False, id="float-neg"),
    rcase("compare_i1_with_const", f"""
func.func @main(%p: {B4}) -> ({B4}, {B4}) {{
  %t = stablehlo.constant dense<true> : {B4}
  %0 = stablehlo.compare EQ, %p, %t : ({B4}, {B4}) -> {B4}
  %1 = stablehlo.compare EQ, %t, %p : ({B4}, {B4}) -> {B4}
  %f = stablehlo.constant dense<false> : {B4}
  %2 = stablehlo.compare EQ, %1, %f : ({B4}, {B4}) -> {B4}
  return %0, %2 : {B4}, {B4}
}}""", present=[r"stablehlo.not %arg0", r"return %arg0, %0"]),
    rcase("not_compare", f"""
func.func @main(%a: {I4}, %b: {I4}, %x: {F4}, %y: {F4}) -> ({B4}, {B4}) {{
  %0 = stablehlo.compare LT, %a, %b, SIGNED : ({I4}, {I4}) -> {B4}
  %1 = stablehlo.not %0 : {B4}
  %2 = stablehlo.compare EQ, %x, %y : ({F4}, {F4}) -> {B4}
  %3 = stablehlo.not %2 : {B4}
  return %1, %3 : {B4}, {B4}
}}""", present=[r"compare +GE, %arg0, %arg1", r"compare +NE, %arg2, %arg3"], absent=["stablehlo.not"],
         int_range=(-3, 3)),
    rcase("not_compare", f"""
func.func @main(%x: {F4}, %y: {F4}) -> {B4} {{
  %2 = stablehlo.compare LT, %x, %y : ({F4}, {F4}) -> {B4}
  %3 = stablehlo.not %2 : {B4}
  return %3 : {B4}
}}""", changed=False, id="float-order-neg"),
    rcase("logic_not_not", f"""
func.func @main(%p: {I4}) -> {I4} {{
  %0 = stablehlo.not %p : {I4}
  %1 = stablehlo.not %0 : {I4}
  return %1 : {I4}
}}""", present=[r"return %arg0"]),
    rcase("logic_idempotent@and", f"""
func.func @main(%p: {B4}) -> {B4} {{
  %0 = stablehlo.and %p, %p : {B4}
  return %0 : {B4}
}}""", present=[r"return %arg0"]),
    rcase("logic_idempotent@or", f"""
func.func @main(%p: {I4}) -> {I4} {{
  %0 = stablehlo.or %p, %p : {I4}
  return %0 : {I4}
}}""", present=[r"return %arg0"]),
    rcase("logic_xor_self", f"""
func.func @main(%p: {I4}) -> {I4} {{
  %0 = stablehlo.xor %p, %p : {I4}
  return %0 : {I4}
}}""", present=[r"dense<0>"], absent=["xor"]),
    rcase("logic_complement@and", f"""
func.func @main(%p: {B4}) -> {B4} {{
  %n = stablehlo.not %p : {B4}
  %0 = stablehlo.and %n, %p : {B4}
  return %0 : {B4}
}}""", present=[r"dense<false>"]),
    rcase("logic_complement@or", f"""
func.func @main(%p: {I4}) -> {I4} {{
  %n = stablehlo.not %p : {I4}
  %0 = stablehlo.or %p, %n : {I4}
  return %0 : {I4}
}}""", present=[r"dense<-1>"]),
    rcase("logic_bool_consts@and", f"""
func.func @main(%p: {B4}, %q: {I4}) -> ({B4}, {I4}) {{
  %t = stablehlo.constant dense<true> : {B4}
  %0 = stablehlo.and %t, %p : {B4}
  %z = stablehlo.constant dense<0> : {I4}
  %1 = stablehlo.and %q, %z : {I4}
  return %0, %1 : {B4}, {I4}
}}""", present=[r"return %arg0, %c"]),
    rcase("logic_bool_consts@or", f"""
func.func @main(%p: {B4}, %q: {I4}) -> ({B4}, {I4}) {{
  %t = stablehlo.constant dense<true> : {B4}
  %0 = stablehlo.or %t, %p : {B4}
  %z = stablehlo.constant dense<0> : {I4}
  %1 = stablehlo.or %q, %z : {I4}
  return %0, %1 : {B4}, {I4}
}}""", present=[r"return %c, %arg1"]),
    rcase("select_one_zero_to_convert", f"""
func.func @main(%a: {F4}, %b: {F4}) -> {F4} {{
  %p = stablehlo.compare LT, %a, %b : ({F4}, {F4}) -> {B4}
  %one = stablehlo.constant dense<1.0> : {F4}
  %zero = stablehlo.constant dense<0.0> : {F4}
  %0 = stablehlo.select %p, %one, %zero : {B4}, {F4}
  return %0 : {F4}
}}""", present=["stablehlo.convert"], absent=["stablehlo.select"]),
    rcase("select_one_zero_to_convert", f"""
func.func @main(%a: {I4}, %b: {I4}) -> {I4} {{
  %p = stablehlo.compare LT, %a, %b : ({I4}, {I4}) -> {B4}
  %one = stablehlo.constant dense<1> : {I4}
  %zero = stablehlo.constant dense<0> : {I4}
  %0 = stablehlo.select %p, %zero, %one : {B4}, {I4}
  return %0 : {I4}
}}""", present=["stablehlo.convert", "stablehlo.not"], absent=["stablehlo.select"], id="inverted-int"),
    rcase("select_one_zero_to_convert", f"""
func.func @main(%a: {F4}, %b: {F4}) -> {F4} {{
  %p = stablehlo.compare LT, %a, %b : ({F4}, {F4}) -> {B4}
  %one = stablehlo.constant dense<1.0> : {F4}
  %zero = stablehlo.constant dense<-0.0> : {F4}
  %0 = stablehlo.select %p, %one, %zero : {B4}, {F4}
  return %0 : {F4}
}}""", changed=False, id="negzero-neg"),
    rcase("select_broadcast_scalar_pred", f"""
func.func @main(%p: tensor<i1>, %a: {F4}, %b: {F4}) -> {F4} {{
  %q = stablehlo.broadcast_in_dim %p, dims = [] : (tensor<i1>) -> {B4}
  %0 = stablehlo.select %q, %a, %b : {B4}, {F4}
  return %0 : {F4}
}}""", present=[r"stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<4xf32>"]),
    rcase("select_bool_to_logic", f"""
func.func @main(%p: {B4}, %q: {B4}) -> ({B4}, {B4}) {{
  %f = stablehlo.constant dense<false> : {B4}
  %t = stablehlo.constant dense<true> : {B4}
  %0 = stablehlo.select %p, %q, %f : {B4}, {B4}
  %1 = stablehlo.select %p, %t, %q : {B4}, {B4}
  return %0, %1 : {B4}, {B4}
}}""", present=["stablehlo.and", "stablehlo.or"], absent=["stablehlo.select"]),
    rcase("select_merge_common_branch", f"""
func.func @main(%a: {F4}, %b: {F4}, %c: {F4}) -> ({F4}, {F4}) {{
  %p = stablehlo.compare LT, %a, %b : ({F4}, {F4}) -> {B4}
  %q = stablehlo.compare GT, %b, %c : ({F4}, {F4}) -> {B4}
  %0 = stablehlo.select %q, %a, %c : {B4}, {F4}
  %1 = stablehlo.select %p, %0, %c : {B4}, {F4}
  %2 = stablehlo.select %q, %b, %c : {B4}, {F4}
  %3 = stablehlo.select %p, %b, %2 : {B4}, {F4}
  return %1, %3 : {F4}, {F4}
}}""", present=["stablehlo.and", "stablehlo.or"]),
    rcase("select_eq_const_identity", f"""
func.func @main(%a: {I4}) -> ({I4}, {I4}) {{
  %c = stablehlo.constant dense<3> : {I4}
  %p = stablehlo.compare EQ, %a, %c : ({I4}, {I4}) -> {B4}
  %0 = stablehlo.select %p, %c, %a : {B4}, {I4}
  %q = stablehlo.compare NE, %a, %c : ({I4}, {I4}) -> {B4}
  %1 = stablehlo.select %q, %a, %c : {B4}, {I4}
  return %0, %1 : {I4}, {I4}
}}""", present=[r"return %arg0, %arg0"], int_range=(0, 6)),
    rcase("select_eq_const_identity", f"""
func.func @main(%a: {F4}) -> {F4} {{
  %c = stablehlo.constant dense<0.0> : {F4}
  %p = stablehlo.compare EQ, %a, %c : ({F4}, {F4}) -> {B4}
  %0 = stablehlo.select %p, %c, %a : {B4}, {F4}
  return %0 : {F4}
}}""", changed=False, id="float-zero-neg"),
    rcase("compare_fold_constants", f"""
func.func @main() -> ({B4}, {B4}) {{
  %a = stablehlo.constant dense<[1.0, 0x7FC00000, -2.0, 3.0]> : {F4}
  %b = stablehlo.constant dense<[1.0, 1.0, 2.0, 0x7FC00000]> : {F4}
  %0 = stablehlo.compare LE, %a, %b : ({F4}, {F4}) -> {B4}
  %1 = stablehlo.compare NE, %a, %b : ({F4}, {F4}) -> {B4}
  return %0, %1 : {B4}, {B4}
}}""", present=[r"dense<\[true, false, true, false\]>", r"dense<\[false, true, true, true\]>"],
         absent=["stablehlo.compare"]),
    rcase("compare_fold_constants", f"""
func.func @main() -> {B4} {{
  %a = stablehlo.constant dense<[-1, 0, 1, 2]> : {I4}
  %b = stablehlo.constant dense<1> : {I4}
  %0 = stablehlo.compare LT, %a, %b, UNSIGNED : ({I4}, {I4}) -> {B4}
  return %0 : {B4}
}}""", present=[r"dense<\[false, true, false, false\]>"], id="unsigned"),
    rcase("compare_range_fold", """
func.func @main() -> tensor<8xi1> {
  %i = stablehlo.iota dim = 0 : tensor<8xi32>
  %z = stablehlo.constant dense<0> : tensor<8xi32>
  %0 = stablehlo.compare LT, %i, %z, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
  return %0 : tensor<8xi1>
}""", present=[r"dense<false> : tensor<8xi1>"], absent=["stablehlo.compare"]),
    rcase("compare_range_fold", """
func.func @main(%a: tensor<8xi32>) -> tensor<8xi1> {
  %i = stablehlo.iota dim = 0 : tensor<8xi32>
  %c = stablehlo.constant dense<3> : tensor<8xi32>
  %0 = stablehlo.add %i, %c : tensor<8xi32>
  %n = stablehlo.constant dense<11> : tensor<8xi32>
  %1 = stablehlo.compare LT, %0, %n, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
  return %1 : tensor<8xi1>
}""", present=[r"dense<true> : tensor<8xi1>"], id="iota-plus-const"),
    rcase("compare_range_fold", """
func.func @main() -> tensor<8xi1> {
  %i = stablehlo.iota dim = 0 : tensor<8xi32>
  %z = stablehlo.constant dense<4> : tensor<8xi32>
  %0 = stablehlo.compare LT, %i, %z, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
  return %0 : tensor<8xi1>
}""", changed=False, id="undecided-neg"),
    rcase("compare_const_to_rhs", f"""
func.func @main(%a: {F4}) -> {B4} {{
  %c = stablehlo.constant dense<0.5> : {F4}
  %0 = stablehlo.compare LT, %c, %a : ({F4}, {F4}) -> {B4}
  return %0 : {B4}
}}""", present=[r"stablehlo.compare +GT, %arg0, %cst"]),
    rcase("compare_of_select_consts", f"""
func.func @main(%a: {I4}) -> {B4} {{
  %z = stablehlo.constant dense<0> : {I4}
  %p = stablehlo.compare LT, %a, %z : ({I4}, {I4}) -> {B4}
  %c1 = stablehlo.constant dense<5> : {I4}
  %c2 = stablehlo.constant dense<7> : {I4}
  %s = stablehlo.select %p, %c1, %c2 : {B4}, {I4}
  %c6 = stablehlo.constant dense<6> : {I4}
  %0 = stablehlo.compare GT, %s, %c6 : ({I4}, {I4}) -> {B4}
  return %0 : {B4}
}}""", present=["stablehlo.not"], absent=["stablehlo.select"], int_range=(-4, 4)),
    rcase("compare_convert_widen", """
func.func @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = stablehlo.convert %a : (tensor<4xi32>) -> tensor<4xi64>
  %1 = stablehlo.convert %b : (tensor<4xi32>) -> tensor<4xi64>
  %2 = stablehlo.compare LT, %0, %1, SIGNED : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %c = stablehlo.constant dense<3> : tensor<4xi64>
  %3 = stablehlo.compare GE, %0, %c, SIGNED : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  return %2, %3 : tensor<4xi1>, tensor<4xi1>
}""", present=[r"compare +LT, %arg0, %arg1", r"compare +GE, %arg0, %c"], int_range=(-5, 5)),
    rcase("compare_convert_widen", """
func.func @main(%a: tensor<4xi32>) -> tensor<4xi1> {
  %0 = stablehlo.convert %a : (tensor<4xi32>) -> tensor<4xi64>
  %c = stablehlo.constant dense<4294967296> : tensor<4xi64>
  %3 = stablehlo.compare GE, %0, %c, SIGNED : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  return %3 : tensor<4xi1>
}""", changed=False, id="const-out-of-range-neg"),
    rcase("clamp_covering", f"""
func.func @main(%a: {F4}) -> {F4} {{
  %lo = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %hi = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %0 = stablehlo.clamp %lo, %a, %hi : (tensor<f32>, {F4}, tensor<f32>) -> {F4}
  return %0 : {F4}
}}""", present=[r"return %arg0"]),
    rcase("clamp_covering", """
func.func @main() -> tensor<8xi32> {
  %i = stablehlo.iota dim = 0 : tensor<8xi32>
  %lo = stablehlo.constant dense<0> : tensor<i32>
  %hi = stablehlo.constant dense<7> : tensor<i32>
  %0 = stablehlo.clamp %lo, %i, %hi : (tensor<i32>, tensor<8xi32>, tensor<i32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}""", absent=["stablehlo.clamp"], id="iota-in-range"),
    rcase("clamp_covering", f"""
func.func @main(%a: {I4}) -> {I4} {{
  %lo = stablehlo.constant dense<0> : tensor<i32>
  %hi = stablehlo.constant dense<7> : tensor<i32>
  %0 = stablehlo.clamp %lo, %a, %hi : (tensor<i32>, {I4}, tensor<i32>) -> {I4}
  return %0 : {I4}
}}""", changed=False, id="arg-neg"),
    rcase("clamp_clamp", f"""
func.func @main(%a: {I4}) -> ({I4}, {I4}) {{
  %lo = stablehlo.constant dense<0> : tensor<i32>
  %hi = stablehlo.constant dense<7> : tensor<i32>
  %lo2 = stablehlo.constant dense<2> : tensor<i32>
  %hi2 = stablehlo.constant dense<10> : tensor<i32>
  %hi3 = stablehlo.constant dense<-3> : tensor<i32>
  %lo3 = stablehlo.constant dense<-5> : tensor<i32>
  %0 = stablehlo.clamp %lo, %a, %hi : (tensor<i32>, {I4}, tensor<i32>) -> {I4}
  %1 = stablehlo.clamp %lo2, %0, %hi2 : (tensor<i32>, {I4}, tensor<i32>) -> {I4}
  %2 = stablehlo.clamp %lo3, %0, %hi3 : (tensor<i32>, {I4}, tensor<i32>) -> {I4}
  return %1, %2 : {I4}, {I4}
}}""", present=[r"dense<-3> : tensor<4xi32>"], int_range=(-10, 12)),
    rcase("clamp_fold_constants", f"""
func.func @main() -> {I4} {{
  %lo = stablehlo.constant dense<0> : tensor<i32>
  %hi = stablehlo.constant dense<7> : tensor<i32>
  %a = stablehlo.constant dense<[-3, 4, 9, 7]> : {I4}
  %0 = stablehlo.clamp %lo, %a, %hi : (tensor<i32>, {I4}, tensor<i32>) -> {I4}
  return %0 : {I4}
}}""", present=[r"dense<\[0, 4, 7, 7\]>"], absent=["stablehlo.clamp"]),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case):
    """The rewrite, its IR, and the module before and after run through PJRT."""
    check_case(case)


def test_every_select_pattern_has_a_case():
    from reactant.optimize.patterns import PATTERNS

    mine = {n for n, p in PATTERNS.items() if p.family == "select"}
    covered = {c.name for c in CASES if c.fires}
    covered |= {n for n in mine if n.split("@")[0] in {c.name.split("@")[0] for c in CASES if c.fires}}
    assert mine <= covered, sorted(mine - covered)
