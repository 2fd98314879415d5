"""Before/after and differential tests of the reduce patterns."""

import pytest
from _harness import case, case_ids, check_case, fn


def t(*s, e="f32"):
    return "tensor<" + "".join(f"{d}x" for d in s) + e + ">"


def red(r, x, src, dst, dims, kind="add", init="%z", e="f32"):
    return (f"%{r} = stablehlo.reduce(%{x} init: {init}) applies stablehlo.{kind} across dimensions = {dims} : "
            f"({src}, tensor<{e}>) -> {dst}")


Z = "%z = stablehlo.constant dense<0.0> : tensor<f32>"
ZI = "%z = stablehlo.constant dense<0> : tensor<i32>"
NINF = "%z = stablehlo.constant dense<0xFF800000> : tensor<f32>"
N = 8
MI = f"tensor<{N}x{N}xi32>"
MB = f"tensor<{N}x{N}xi1>"
M = t(N, N)


def diag(v="v"):
    return "; ".join([
        f"%i0 = stablehlo.iota dim = 0 : {MI}", f"%i1 = stablehlo.iota dim = 1 : {MI}",
        f"%m = stablehlo.compare EQ, %i0, %i1, SIGNED : ({MI}, {MI}) -> {MB}",
        f"%vt = stablehlo.broadcast_in_dim %{v}, dims = [0] : ({t(N)}) -> {M}",
        f"%zb = stablehlo.constant dense<0.0> : {M}",
        f"%D = stablehlo.select %m, %vt, %zb : {MB}, {M}"])


CASES = [
    case("reduce_no_dims", fn(f"%a: {t(3, 4)}", t(3, 4), f"{Z}; {red('r', 'a', t(3, 4), t(3, 4), '[]')}; return %r : {t(3, 4)}"), lacks="reduce"),
    case("reduce_no_dims", fn(f"%a: {t(3, 4)}", t(3, 4), f"%z = stablehlo.constant dense<1.0> : tensor<f32>; {red('r', 'a', t(3, 4), t(3, 4), '[]')}; return %r : {t(3, 4)}"), fires=False),
    case("reduce_unit_dims", fn(f"%a: {t(3, 1, 4)}", t(3, 4), f"{Z}; {red('r', 'a', t(3, 1, 4), t(3, 4), '[1]')}; return %r : {t(3, 4)}"), has="reshape", lacks="reduce"),
    case("reduce_unit_dims", fn(f"%a: {t(3, 1, 4)}", t(4), f"{NINF}; {red('r', 'a', t(3, 1, 4), t(4), '[0, 1]', 'maximum')}; return %r : {t(4)}"), has=("reshape", "dimensions = [0]")),
    case("reduce_of_broadcast", fn(f"%a: {t(3)}", t(3), f"{Z}; %b = stablehlo.broadcast_in_dim %a, dims = [0] : ({t(3)}) -> {t(3, 5)}; {red('r', 'b', t(3, 5), t(3), '[1]')}; return %r : {t(3)}"), has=("multiply", "5.0"), lacks="reduce"),
    case("reduce_of_broadcast", fn(f"%a: {t(3, 1)}", "tensor<f32>", f"{Z}; %b = stablehlo.broadcast_in_dim %a, dims = [0, 2] : ({t(3, 1)}) -> {t(3, 4, 6)}; {red('r', 'b', t(3, 4, 6), 'tensor<f32>', '[0, 1, 2]')}; return %r : tensor<f32>"), has="2.4"),
    case("reduce_of_broadcast", fn(f"%a: {t(3)}", t(5), f"{NINF}; %b = stablehlo.broadcast_in_dim %a, dims = [1] : ({t(3)}) -> {t(5, 3, 2)}; {red('r', 'b', t(5, 3, 2), t(5), '[1, 2]', 'maximum')}; return %r : {t(5)}"), lacks="multiply", has="broadcast_in_dim"),
    case("reduce_of_broadcast", fn(f"%a: {t(3, e='i32')}", t(3, 4, e="i32"), f"{ZI}; %b = stablehlo.broadcast_in_dim %a, dims = [1] : ({t(3, e='i32')}) -> {t(2, 3, 4, e='i32')}; {red('r', 'b', t(2, 3, 4, e='i32'), t(3, 4, e='i32'), '[0]', e='i32')}; return %r : {t(3, 4, e='i32')}"), has="dense<2>"),
    case("reduce_of_broadcast", fn(f"%a: {t(3, 5)}", t(3), f"{Z}; %b = stablehlo.broadcast_in_dim %a, dims = [0, 1] : ({t(3, 5)}) -> {t(3, 5)}; {red('r', 'b', t(3, 5), t(3), '[1]')}; return %r : {t(3)}"), fires=False),
    case("reduce_splat", fn("", t(3), f"{Z}; %c = stablehlo.constant dense<1.5> : {t(3, 4)}; {red('r', 'c', t(3, 4), t(3), '[1]')}; return %r : {t(3)}"), has="6.0", lacks="reduce"),
    case("reduce_splat", fn("", t(3, e="i32"), f"{ZI}; %c = stablehlo.constant dense<1000000000> : {t(3, 5, e='i32')}; {red('r', 'c', t(3, 5, e='i32'), t(3, e='i32'), '[1]', e='i32')}; return %r : {t(3, e='i32')}"), lacks="reduce"),
    case("reduce_splat", fn("", t(3), f"{NINF}; %c = stablehlo.constant dense<-2.5> : {t(3, 4)}; {red('r', 'c', t(3, 4), t(3), '[1]', 'maximum')}; return %r : {t(3)}"), lacks="reduce"),
    case("reduce_reduce", fn(f"%a: {t(3, 4, 5)}", t(4), f"{Z}; {red('x', 'a', t(3, 4, 5), t(4, 5), '[0]')}; {red('r', 'x', t(4, 5), t(4), '[1]')}; return %r : {t(4)}"), has="dimensions = [0, 2]"),
    case("reduce_reduce", fn(f"%a: {t(3, 4, 5)}", t(4), f"{Z}; {NINF.replace('%z', '%y')}; {red('x', 'a', t(3, 4, 5), t(4, 5), '[0]')}; {red('r', 'x', t(4, 5), t(4), '[1]', 'maximum', '%y')}; return %r : {t(4)}"), fires=False),
    case("reduce_of_transpose", fn(f"%a: {t(3, 4, 5)}", t(5, 3), f"{Z}; %x = stablehlo.transpose %a, dims = [2, 1, 0] : ({t(3, 4, 5)}) -> {t(5, 4, 3)}; {red('r', 'x', t(5, 4, 3), t(5, 3), '[1]')}; return %r : {t(5, 3)}"), has=("dimensions = [1]", "dims = [1, 0] : (tensor<3x5xf32>)")),
    case("reduce_of_transpose", fn(f"%a: {t(3, 4, 5)}", t(4), f"{Z}; %x = stablehlo.transpose %a, dims = [2, 1, 0] : ({t(3, 4, 5)}) -> {t(5, 4, 3)}; {red('r', 'x', t(5, 4, 3), t(4), '[0, 2]')}; return %r : {t(4)}"), lacks="transpose"),
    case("reduce_of_negate", fn(f"%a: {t(3, 4)}", t(3), f"{Z}; %n = stablehlo.negate %a : {t(3, 4)}; {red('r', 'n', t(3, 4), t(3), '[1]')}; return %r : {t(3)}"), has="negate %0"),
    case("reduce_of_negate", fn(f"%a: {t(3, 4)}", t(3), f"{NINF}; %n = stablehlo.negate %a : {t(3, 4)}; {red('r', 'n', t(3, 4), t(3), '[1]', 'maximum')}; return %r : {t(3)}"), has="stablehlo.minimum"),
    case("reduce_of_negate", fn(f"%a: {t(3, 4, e='i32')}", t(3, e="i32"), f"%z = stablehlo.constant dense<-2147483648> : tensor<i32>; %n = stablehlo.negate %a : {t(3, 4, e='i32')}; {red('r', 'n', t(3, 4, e='i32'), t(3, e='i32'), '[1]', 'maximum', e='i32')}; return %r : {t(3, e='i32')}"), fires=False),
    case("reduce_of_convert", fn(f"%a: {t(3, 4)}", t(3, e="f64"), f"%z = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>; %c = stablehlo.convert %a : ({t(3, 4)}) -> {t(3, 4, e='f64')}; {red('r', 'c', t(3, 4, e='f64'), t(3, e='f64'), '[1]', 'maximum', e='f64')}; return %r : {t(3, e='f64')}"), has="(tensor<3xf32>) -> tensor<3xf64>"),
    case("reduce_of_convert", fn(f"%a: {t(3, 4, e='i8')}", t(3, e="i32"), f"{ZI}; %c = stablehlo.convert %a : ({t(3, 4, e='i8')}) -> {t(3, 4, e='i32')}; {red('r', 'c', t(3, 4, e='i32'), t(3, e='i32'), '[1]', e='i32')}; return %r : {t(3, e='i32')}"), fires=False),
    case("reduce_add_of_scaled", fn(f"%a: {t(3, 4)}, %s: tensor<f32>", t(3), f"{Z}; %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> {t(3, 4)}; %m = stablehlo.multiply %a, %b : {t(3, 4)}; {red('r', 'm', t(3, 4), t(3), '[1]')}; return %r : {t(3)}"), has="multiply %0"),
    case("reduce_add_of_scaled", fn(f"%a: {t(3, 4)}, %v: {t(3)}", t(3), f"{Z}; %b = stablehlo.broadcast_in_dim %v, dims = [0] : ({t(3)}) -> {t(3, 4)}; %m = stablehlo.multiply %b, %a : {t(3, 4)}; {red('r', 'm', t(3, 4), t(3), '[1]')}; return %r : {t(3)}"), has="multiply %0, %arg1"),
    case("reduce_add_of_scaled", fn(f"%a: {t(3, 4)}", t(3), f"{Z}; %c = stablehlo.constant dense<0.5> : {t(3, 4)}; %m = stablehlo.multiply %a, %c : {t(3, 4)}; {red('r', 'm', t(3, 4), t(3), '[1]')}; return %r : {t(3)}"), has="5.0"),
    case("reduce_add_of_scaled", fn(f"%a: {t(3, 4)}, %v: {t(4)}", t(3), f"{Z}; %b = stablehlo.broadcast_in_dim %v, dims = [1] : ({t(4)}) -> {t(3, 4)}; %m = stablehlo.multiply %b, %a : {t(3, 4)}; {red('r', 'm', t(3, 4), t(3), '[1]')}; return %r : {t(3)}"), fires=False),
    case("reduce_add_of_scaled", fn(f"%a: {t(3, 4)}, %s: tensor<f32>", t(3), f"{Z}; %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> {t(3, 4)}; %m = stablehlo.divide %a, %b : {t(3, 4)}; {red('r', 'm', t(3, 4), t(3), '[1]')}; return %r : {t(3)}"), has="divide %0"),
    case("reduce_add_of_scaled", fn(f"%a: {t(3, 4)}, %v: {t(3)}", t(3), f"{Z}; %b = stablehlo.broadcast_in_dim %v, dims = [0] : ({t(3)}) -> {t(3, 4)}; %m = stablehlo.divide %a, %b : {t(3, 4)}; {red('r', 'm', t(3, 4), t(3), '[1]')}; return %r : {t(3)}"), has="divide %0, %arg1"),
    case("reduce_add_of_scaled", fn(f"%a: {t(3, 4)}, %v: {t(3)}", t(3), f"{Z}; %b = stablehlo.broadcast_in_dim %v, dims = [0] : ({t(3)}) -> {t(3, 4)}; %m = stablehlo.divide %b, %a : {t(3, 4)}; {red('r', 'm', t(3, 4), t(3), '[1]')}; return %r : {t(3)}"), fires=False),
    case("reduce_diag", fn(f"%v: {t(N)}", t(N), f"{Z}; {diag()}; {red('r', 'D', M, t(N), '[1]')}; return %r : {t(N)}"), lacks=("reduce", "select")),
    case("reduce_diag", fn(f"%v: {t(N)}", t(N), f"{Z}; {diag()}; {red('r', 'D', M, t(N), '[0]')}; return %r : {t(N)}"), lacks=("select",)),
    case("reduce_diag", fn(f"%v: {t(N)}", "tensor<f32>", f"{Z}; {diag()}; {red('r', 'D', M, 'tensor<f32>', '[0, 1]')}; return %r : tensor<f32>"), lacks=("select",), has="reduce"),
    case("reduce_mul_to_dot", fn(f"%a: {t(256, 256)}, %b: {t(256, 256)}", "tensor<f32>", f"{Z}; %m = stablehlo.multiply %a, %b : {t(256, 256)}; {red('r', 'm', t(256, 256), 'tensor<f32>', '[0, 1]')}; return %r : tensor<f32>"), has="dot_general", lacks="reduce", rtol=1e-4, atol=1e-3),
    case("reduce_all_of_reshape", fn(f"%a: {t(3, 4)}", "tensor<f32>", f"{NINF}; %x = stablehlo.reshape %a : ({t(3, 4)}) -> {t(2, 6)}; {red('r', 'x', t(2, 6), 'tensor<f32>', '[0, 1]', 'maximum')}; return %r : tensor<f32>"), lacks="reshape"),
    case("reduce_all_of_reshape", fn(f"%a: {t(3, 4)}", t(2), f"{Z}; %x = stablehlo.reshape %a : ({t(3, 4)}) -> {t(2, 6)}; {red('r', 'x', t(2, 6), t(2), '[1]')}; return %r : {t(2)}"), fires=False),
    case("reduce_mul_to_dot", fn(f"%a: {t(256, 256)}, %b: {t(256, 256)}", t(256), f"{Z}; %m = stablehlo.multiply %a, %b : {t(256, 256)}; {red('r', 'm', t(256, 256), t(256), '[1]')}; return %r : {t(256)}"), fires=False),
    case("reduce_mul_to_dot", fn(f"%a: {t(256, 256)}, %b: {t(256, 256)}", "tensor<f32>", f"{Z}; %e = stablehlo.exponential %a : {t(256, 256)}; %m = stablehlo.multiply %e, %b : {t(256, 256)}; {red('r', 'm', t(256, 256), 'tensor<f32>', '[0, 1]')}; return %r : tensor<f32>"), fires=False),
    case("reduce_mul_to_dot", fn(f"%a: {t(64)}, %b: {t(64)}", "tensor<f32>", f"{Z}; %m = stablehlo.multiply %a, %b : {t(64)}; {red('r', 'm', t(64), 'tensor<f32>', '[0]')}; return %r : tensor<f32>"), fires=False),
]


@pytest.mark.parametrize("c", CASES, ids=case_ids(CASES))
def test_pattern(c):
    check_case(c)


def test_every_reduce_pattern_has_a_case():
    from reactant.optimize.patterns import PATTERNS

    names = {c.name for c in CASES if c.fires}
    missing = [n for n, p in PATTERNS.items() if p.family == "reduce" and n not in names]
    assert not missing, missing
