"""Before/after and differential-execution tests of the algebraic patterns (one row each)."""

import pytest
from _harness import case, case_ids, check_case, fn

F = "tensor<4x3xf32>"
I = "tensor<4x3xi32>"
U = "tensor<4x3xui8>"
B = "tensor<4x3xi1>"


def f1(body, t=F, res=None):
    return fn(f"%a: {t}", res or t, body)


def f2(body, t=F, res=None):
    return fn(f"%a: {t}, %b: {t}", res or t, body)


def k(name, value, t):
    """A splat constant line (through a scalar broadcast when ``t`` is not rank 0)."""
    et = t.split("x")[-1].rstrip(">")
    return (f"%{name}0 = stablehlo.constant dense<{value}> : tensor<{et}>;"
            f"%{name} = stablehlo.broadcast_in_dim %{name}0, dims = [] : (tensor<{et}>) -> {t}")


def c(name, value, t):
    return f"%{name} = stablehlo.constant dense<{value}> : {t}"


def bin_(op, x, y, t=F, r="r"):
    return f"%{r} = stablehlo.{op} %{x}, %{y} : {t}"


def un_(op, x, t=F, r="r"):
    return f"%{r} = stablehlo.{op} %{x} : {t}"


RET = "return %r : {}"

CASES = [
    # add / subtract
    case("add_zero", f1(f"{c('z', 0, I)}; {bin_('add', 'a', 'z', I)}; return %r : {I}", I), lacks="stablehlo.add"),
    case("add_zero", f1(f"{k('z', 0, I)}; {bin_('add', 'z', 'a', I)}; return %r : {I}", I), lacks="stablehlo.add"),
    case("add_zero", f1(f"{k('z', '-0.0', F)}; {bin_('add', 'z', 'a')}; return %r : {F}"), lacks="stablehlo.add"),
    case("add_zero", f1(f"{k('z', '0.0', F)}; {bin_('add', 'a', 'z')}; return %r : {F}"), fires=False),
    case("add_zero_fast", f1(f"{k('z', '0.0', F)}; {bin_('add', 'a', 'z')}; return %r : {F}"), lacks="stablehlo.add"),
    case("sub_zero", f1(f"{k('z', '0.0', F)}; {bin_('subtract', 'a', 'z')}; return %r : {F}"), lacks="subtract"),
    case("sub_zero", f1(f"{c('z', 0, I)}; {bin_('subtract', 'a', 'z', I)}; return %r : {I}", I), lacks="subtract"),
    case("sub_zero", f1(f"{k('z', '-0.0', F)}; {bin_('subtract', 'a', 'z')}; return %r : {F}"), fires=False),
    case("sub_zero_fast", f1(f"{k('z', '-0.0', F)}; {bin_('subtract', 'a', 'z')}; return %r : {F}"), lacks="subtract"),
    case("sub_self", f1(f"{bin_('subtract', 'a', 'a', I)}; return %r : {I}", I), lacks="subtract", has="constant"),
    case("sub_self", f1(f"{bin_('subtract', 'a', 'a')}; return %r : {F}"), fires=False),
    case("sub_self_fast", f1(f"{bin_('subtract', 'a', 'a')}; return %r : {F}"), lacks="subtract"),
    case("zero_sub", f1(f"{k('z', 0, I)}; {bin_('subtract', 'z', 'a', I)}; return %r : {I}", I), has="negate", lacks="subtract"),
    case("zero_sub", f1(f"{k('z', '-0.0', F)}; {bin_('subtract', 'z', 'a')}; return %r : {F}"), has="negate"),
    case("zero_sub", f1(f"{k('z', '0.0', F)}; {bin_('subtract', 'z', 'a')}; return %r : {F}"), fires=False),
    case("zero_sub", f1(f"{k('z', 0, U)}; {bin_('subtract', 'z', 'a', U)}; return %r : {U}", U), fires=False),
    case("zero_sub_fast", f1(f"{k('z', '0.0', F)}; {bin_('subtract', 'z', 'a')}; return %r : {F}"), has="negate"),
    case("add_neg", f2(f"{un_('negate', 'b', r='n')}; {bin_('add', 'a', 'n')}; return %r : {F}"), has="subtract %arg0, %arg1", lacks="stablehlo.add"),
    case("add_neg", f2(f"{un_('negate', 'a', I, r='n')}; {bin_('add', 'n', 'b', I)}; return %r : {I}", I), has="subtract %arg1, %arg0"),
    case("sub_neg", f2(f"{un_('negate', 'b', r='n')}; {bin_('subtract', 'a', 'n')}; return %r : {F}"), has="stablehlo.add", lacks=("negate", "subtract")),
    case("neg_sub", f2(f"{bin_('subtract', 'a', 'b', I, r='s')}; {un_('negate', 's', I)}; return %r : {I}", I), has="subtract %arg1, %arg0", lacks="negate"),
    case("neg_sub", f2(f"{bin_('subtract', 'a', 'b', r='s')}; {un_('negate', 's')}; return %r : {F}"), fires=False),
    case("neg_sub_fast", f2(f"{bin_('subtract', 'a', 'b', r='s')}; {un_('negate', 's')}; return %r : {F}"), lacks="negate"),
    case("sub_add_cancel", f2(f"{bin_('add', 'a', 'b', I, r='s')}; {bin_('subtract', 's', 'b', I)}; return %r : {I}", I), lacks=("subtract", "stablehlo.add")),
    case("sub_add_cancel", f2(f"{bin_('add', 'a', 'b', I, r='s')}; {bin_('subtract', 's', 'a', I)}; return %r : {I}", I), lacks="subtract"),
    case("sub_add_cancel", f2(f"{bin_('add', 'a', 'b', r='s')}; {bin_('subtract', 's', 'b')}; return %r : {F}"), fires=False),
    case("sub_add_cancel_fast", f2(f"{bin_('add', 'a', 'b', r='s')}; {bin_('subtract', 's', 'b')}; return %r : {F}"), lacks="subtract"),
    case("add_sub_cancel", f2(f"{bin_('subtract', 'a', 'b', I, r='s')}; {bin_('add', 'b', 's', I)}; return %r : {I}", I), lacks=("subtract", "stablehlo.add")),
    case("add_sub_cancel_fast", f2(f"{bin_('subtract', 'a', 'b', r='s')}; {bin_('add', 's', 'b')}; return %r : {F}"), lacks="subtract"),
    case("add_const_reassoc", f1(f"{k('p', 7, I)}; {k('q', -3, I)}; {bin_('add', 'a', 'p', I, r='s')}; {bin_('add', 'q', 's', I)}; return %r : {I}", I), has="dense<4>"),
    case("add_const_reassoc", f1(f"{k('p', '1.5', F)}; {k('q', '2.0', F)}; {bin_('add', 'a', 'p', r='s')}; {bin_('add', 's', 'q')}; return %r : {F}"), fires=False),
    case("add_const_reassoc_fast", f1(f"{k('p', '1.5', F)}; {k('q', '2.0', F)}; {bin_('add', 'a', 'p', r='s')}; {bin_('add', 's', 'q')}; return %r : {F}"), has="3.5"),
    case("mul_const_reassoc", f1(f"{k('p', 100000, I)}; {k('q', 100000, I)}; {bin_('multiply', 'a', 'p', I, r='s')}; {bin_('multiply', 's', 'q', I)}; return %r : {I}", I), has="dense<1410065408>"),
    case("mul_const_reassoc_fast", f1(f"{k('p', '3.0', F)}; {k('q', '0.5', F)}; {bin_('multiply', 'a', 'p', r='s')}; {bin_('multiply', 's', 'q')}; return %r : {F}"), has="1.5"),
    # multiply / divide
    case("mul_one", f1(f"{k('o', '1.0', F)}; {bin_('multiply', 'o', 'a')}; return %r : {F}"), lacks="multiply"),
    case("mul_one", f1(f"{c('o', 1, I)}; {bin_('multiply', 'a', 'o', I)}; return %r : {I}", I), lacks="multiply"),
    case("mul_one", f1(f"{c('o', 'true', B)}; {bin_('multiply', 'a', 'o', B)}; return %r : {B}", B), lacks="multiply"),
    case("mul_zero", f1(f"{k('z', 0, I)}; {bin_('multiply', 'a', 'z', I)}; return %r : {I}", I), lacks="multiply"),
    case("mul_zero", f1(f"{k('z', '0.0', F)}; {bin_('multiply', 'a', 'z')}; return %r : {F}"), fires=False),
    case("mul_zero_fast", f1(f"{k('z', '-0.0', F)}; {bin_('multiply', 'a', 'z')}; return %r : {F}"), lacks="multiply", zero_sign=False),
    case("mul_neg_one", f1(f"{k('m', '-1.0', F)}; {bin_('multiply', 'a', 'm')}; return %r : {F}"), has="negate", lacks="multiply"),
    case("mul_neg_one", f1(f"{k('m', -1, I)}; {bin_('multiply', 'm', 'a', I)}; return %r : {I}", I), has="negate"),
    case("mul_neg_neg", f2(f"{un_('negate', 'a', r='x')}; {un_('negate', 'b', r='y')}; {bin_('multiply', 'x', 'y')}; return %r : {F}"), lacks="negate"),
    case("div_neg_neg", f2(f"{un_('negate', 'a', r='x')}; {un_('negate', 'b', r='y')}; {bin_('divide', 'x', 'y')}; return %r : {F}"), lacks="negate"),
    case("neg_mul_const", f1(f"{k('m', '2.5', F)}; {bin_('multiply', 'a', 'm', r='s')}; {un_('negate', 's')}; return %r : {F}"), has="-2.5", lacks="negate"),
    case("neg_mul_const", f1(f"{k('m', 3, I)}; {bin_('multiply', 'm', 'a', I, r='s')}; {un_('negate', 's', I)}; return %r : {I}", I), has="dense<-3>"),
    case("mul_neg_const", f1(f"{k('m', '2.5', F)}; {un_('negate', 'a', r='n')}; {bin_('multiply', 'm', 'n')}; return %r : {F}"), has="-2.5", lacks="negate"),
    case("div_by_scalar_fast", fn(f"%a: {F}, %s: tensor<f32>", F, f"%b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> {F}; {bin_('divide', 'a', 'b')}; return %r : {F}"), has=("divide %cst, %arg1 : tensor<f32>", "multiply"), inputs="pos"),
    case("div_one", f1(f"{k('o', '1.0', F)}; {bin_('divide', 'a', 'o')}; return %r : {F}"), lacks="divide"),
    case("div_one", f1(f"{c('o', 1, I)}; {bin_('divide', 'a', 'o', I)}; return %r : {I}", I), lacks="divide"),
    case("div_neg_one", f1(f"{k('o', '-1.0', F)}; {bin_('divide', 'a', 'o')}; return %r : {F}"), has="negate", lacks="divide"),
    case("div_pow2", f1(f"{k('o', '4.0', F)}; {bin_('divide', 'a', 'o')}; return %r : {F}"), has=("multiply", "2.500000e-01"), lacks="divide", rtol=0, atol=0),
    case("div_pow2", f1(f"{k('o', '-0.125', F)}; {bin_('divide', 'a', 'o')}; return %r : {F}"), has="-8.0", rtol=0, atol=0),
    case("div_pow2", f1(f"{k('o', '3.0', F)}; {bin_('divide', 'a', 'o')}; return %r : {F}"), fires=False),
    case("div_pow2", f1(f"{k('o', '1.0e-39', F)}; {bin_('divide', 'a', 'o')}; return %r : {F}"), fires=False),
    case("div_const_fast", f1(f"{k('o', '3.0', F)}; {bin_('divide', 'a', 'o')}; return %r : {F}"), has="multiply", lacks="divide"),
    case("div_self_fast", f1(f"{bin_('divide', 'a', 'a')}; return %r : {F}"), lacks="divide", inputs="pos"),
    case("remainder_one", f1(f"{k('o', 1, I)}; {bin_('remainder', 'a', 'o', I)}; return %r : {I}", I), lacks="remainder"),
    case("remainder_one", f1(f"{k('o', '1.0', F)}; {bin_('remainder', 'a', 'o')}; return %r : {F}"), fires=False),
    case("remainder_in_range", f1(f"%i = stablehlo.iota dim = 0 : {I}; {k('n', 4, I)}; {bin_('add', 'i', 'n', I, r='s')}; {bin_('remainder', 's', 'n', I, r='w')}; {bin_('add', 'a', 'w', I)}; return %r : {I}", I), has="subtract", lacks="remainder"),
    case("remainder_in_range", f1(f"%i = stablehlo.iota dim = 0 : {I}; {k('n', 4, I)}; {bin_('remainder', 'i', 'n', I, r='w')}; {bin_('add', 'a', 'w', I)}; return %r : {I}", I), lacks="remainder"),
    case("remainder_in_range", f1(f"%i = stablehlo.iota dim = 0 : {I}; {k('n', 3, I)}; {bin_('add', 'i', 'n', I, r='s')}; {bin_('remainder', 's', 'n', I, r='w')}; {bin_('add', 'a', 'w', I)}; return %r : {I}", I), fires=False),
    case("remainder_in_range", f1(f"{k('n', 4, I)}; {bin_('remainder', 'a', 'n', I)}; return %r : {I}", I), fires=False),
    case("commuted_duplicate@multiply", f2(f"{bin_('multiply', 'a', 'b', r='x')}; {bin_('multiply', 'b', 'a', r='y')}; {bin_('subtract', 'x', 'y')}; return %r : {F}"), has="subtract %0, %0"),
    case("commuted_duplicate@add", f2(f"{bin_('add', 'a', 'b', I, r='x')}; {bin_('add', 'b', 'a', I, r='y')}; {bin_('multiply', 'x', 'y', I)}; return %r : {I}", I), has="multiply %0, %0"),
    case("commuted_duplicate@maximum", f2(f"{bin_('maximum', 'a', 'b', r='x')}; {bin_('minimum', 'b', 'a', r='y')}; {bin_('add', 'x', 'y')}; return %r : {F}"), fires=False),
    # unary
    case("neg_neg", f1(f"{un_('negate', 'a', r='n')}; {un_('negate', 'n')}; return %r : {F}"), lacks="negate"),
    case("abs_abs", f1(f"{un_('abs', 'a', r='n')}; {un_('abs', 'n')}; return %r : {F}"), has="abs"),
    case("abs_neg", f1(f"{un_('negate', 'a', r='n')}; {un_('abs', 'n')}; return %r : {F}"), has="abs %arg0", lacks="negate"),
    case("abs_square", f1(f"{bin_('multiply', 'a', 'a', r='n')}; {un_('abs', 'n')}; return %r : {F}"), lacks="abs"),
    case("abs_square", f1(f"{bin_('multiply', 'a', 'a', I, r='n')}; {un_('abs', 'n', I)}; return %r : {I}", I), fires=False),
    case("round_of_integral@floor", f1(f"{un_('ceil', 'a', r='n')}; {un_('floor', 'n')}; return %r : {F}"), lacks="floor"),
    case("round_of_integral@ceil", f1(f"{un_('round_nearest_even', 'a', r='n')}; {un_('ceil', 'n')}; return %r : {F}"), lacks="ceil"),
    case("round_of_integral@round_nearest_even", fn(f"%a: {I}", F, f"%n = stablehlo.convert %a : ({I}) -> {F}; {un_('round_nearest_even', 'n')}; return %r : {F}"), lacks="round"),
    case("round_of_integral@round_nearest_afz", f1(f"{un_('floor', 'a', r='n')}; {un_('round_nearest_afz', 'n')}; return %r : {F}"), lacks="round"),
    # exp / log / sqrt / pow
    case("exp_log_fast", f1(f"{un_('log', 'a', r='n')}; {un_('exponential', 'n')}; return %r : {F}"), lacks=("log", "exponential"), inputs="pos"),
    case("log_exp_fast", f1(f"{un_('exponential', 'a', r='n')}; {un_('log', 'n')}; return %r : {F}"), lacks=("log", "exponential")),
    case("sqrt_mul_self_fast", f1(f"{un_('sqrt', 'a', r='s')}; {bin_('multiply', 's', 's')}; return %r : {F}"), lacks=("sqrt", "multiply"), inputs="pos"),
    case("sqrt_square_fast", f1(f"{bin_('multiply', 'a', 'a', r='s')}; {un_('sqrt', 's')}; return %r : {F}"), has="abs", lacks="sqrt"),
    case("pow_two", f1(f"{k('e', '2.0', F)}; {bin_('power', 'a', 'e')}; return %r : {F}"), has="multiply %arg0, %arg0", lacks="power"),
    case("pow_two", f1(f"{k('e', 2, I)}; {bin_('power', 'a', 'e', I)}; return %r : {I}", I), has="multiply"),
    case("pow_one", f1(f"{k('e', '1.0', F)}; {bin_('power', 'a', 'e')}; return %r : {F}"), lacks="power"),
    case("pow_zero", f1(f"{k('e', '0.0', F)}; {bin_('power', 'a', 'e')}; return %r : {F}"), lacks="power"),
    case("pow_zero", f1(f"{k('e', 0, I)}; {bin_('power', 'a', 'e', I)}; return %r : {I}", I), lacks="power"),
    case("pow_neg_one", f1(f"{k('e', '-1.0', F)}; {bin_('power', 'a', 'e')}; return %r : {F}"), has="divide", lacks="power"),
    case("pow_half_fast", f1(f"{k('e', '0.5', F)}; {bin_('power', 'a', 'e')}; return %r : {F}"), has="sqrt", inputs="pos"),
    case("pow_neg_half_fast", f1(f"{k('e', '-0.5', F)}; {bin_('power', 'a', 'e')}; return %r : {F}"), has="rsqrt", inputs="pos"),
    # convert
    case("convert_noop", f1(f"%r = stablehlo.convert %a : {F}; return %r : {F}"), lacks="convert"),
    case("convert_convert", fn(f"%a: {F}", F, "%x = stablehlo.convert %a : (tensor<4x3xf32>) -> tensor<4x3xf64>; %r = stablehlo.convert %x : (tensor<4x3xf64>) -> tensor<4x3xf32>; return %r : tensor<4x3xf32>"), lacks="convert"),
    case("convert_convert", fn(f"%a: {I}", F, "%x = stablehlo.convert %a : (tensor<4x3xi32>) -> tensor<4x3xi64>; %r = stablehlo.convert %x : (tensor<4x3xi64>) -> tensor<4x3xf32>; return %r : tensor<4x3xf32>"), has="(tensor<4x3xi32>) -> tensor<4x3xf32>", lacks="i64"),
    case("convert_convert", fn("%a: tensor<4x3xi8>", "tensor<4x3xi8>", "%x = stablehlo.convert %a : (tensor<4x3xi8>) -> tensor<4x3xf32>; %r = stablehlo.convert %x : (tensor<4x3xf32>) -> tensor<4x3xi8>; return %r : tensor<4x3xi8>"), lacks="convert"),
    case("convert_convert", fn(f"%a: {F}", F, "%x = stablehlo.convert %a : (tensor<4x3xf32>) -> tensor<4x3xf16>; %r = stablehlo.convert %x : (tensor<4x3xf16>) -> tensor<4x3xf32>; return %r : tensor<4x3xf32>"), fires=False),
    case("convert_convert", fn(f"%a: {I}", I, "%x = stablehlo.convert %a : (tensor<4x3xi32>) -> tensor<4x3xf32>; %r = stablehlo.convert %x : (tensor<4x3xf32>) -> tensor<4x3xi32>; return %r : tensor<4x3xi32>"), fires=False),
    # compare / logic
    case("compare_self_fast", fn(f"%a: {F}", B, f"%r = stablehlo.compare NE, %a, %a, FLOAT : ({F}, {F}) -> {B}; return %r : {B}"), lacks="compare"),
    case("xor_const", f1(f"{k('t', 'true', B)}; {bin_('xor', 'a', 't', B)}; return %r : {B}", B), has="not", lacks="xor"),
    case("xor_const", f1(f"{k('t', 0, I)}; {bin_('xor', 't', 'a', I)}; return %r : {I}", I), lacks="xor"),
    case("shift_zero@shift_left", f1(f"{k('z', 0, I)}; {bin_('shift_left', 'a', 'z', I)}; return %r : {I}", I), lacks="shift"),
    case("shift_zero@shift_right_arithmetic", f1(f"{k('z', 0, I)}; {bin_('shift_right_arithmetic', 'a', 'z', I)}; return %r : {I}", I), lacks="shift"),
    case("shift_zero@shift_right_logical", f1(f"{k('z', 0, I)}; {bin_('shift_right_logical', 'a', 'z', I)}; return %r : {I}", I), lacks="shift"),
    # min / max
    case("minmax_self@maximum", f1(f"{bin_('maximum', 'a', 'a')}; return %r : {F}"), lacks="maximum"),
    case("minmax_self@minimum", f1(f"{bin_('minimum', 'a', 'a', I)}; return %r : {I}", I), lacks="minimum"),
    case("minmax_identity@maximum", f1(f"{k('m', '0xFF800000', F)}; {bin_('maximum', 'm', 'a')}; return %r : {F}"), lacks="maximum"),
    case("minmax_identity@minimum", f1(f"{k('m', 2147483647, I)}; {bin_('minimum', 'a', 'm', I)}; return %r : {I}", I), lacks="minimum"),
    case("minmax_identity@maximum", f1(f"{k('m', '0.0', F)}; {bin_('maximum', 'm', 'a')}; return %r : {F}"), fires=False),
    # select
]


@pytest.mark.parametrize("c", CASES, ids=case_ids(CASES))
def test_pattern(c):
    check_case(c)


def test_every_algebraic_pattern_has_a_case():
    from reactant.optimize.patterns import PATTERNS

    names = {c.name.split("@")[0] for c in CASES if c.fires}
    missing = [n for n, p in PATTERNS.items() if p.family == "algebraic" and n.split("@")[0] not in names]
    assert not missing, missing
