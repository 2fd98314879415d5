"""Before/after and differential tests of the layout patterns (transpose / reshape /
broadcast_in_dim motion and cancellation, transposes absorbed into dot_general)."""

import pytest
from _harness import case, case_ids, check_case, fn

T = "tensor<{}xf32>"


def t(*s):
    return "tensor<" + "".join(f"{d}x" for d in s) + "f32>"


def ti(*s):
    return "tensor<" + "".join(f"{d}x" for d in s) + "i32>"


def tr(r, x, perm, src, dst):
    return f"%{r} = stablehlo.transpose %{x}, dims = {perm} : ({src}) -> {dst}"


def bc(r, x, dims, src, dst):
    return f"%{r} = stablehlo.broadcast_in_dim %{x}, dims = {dims} : ({src}) -> {dst}"


def rs(r, x, src, dst):
    return f"%{r} = stablehlo.reshape %{x} : ({src}) -> {dst}"


def dot(r, a, b, sa, sb, so, lc, rc, batch=None):
    bd = f"batching_dims = {batch[0]} x {batch[1]}, " if batch else ""
    return (f"%{r} = stablehlo.dot_general %{a}, %{b}, {bd}contracting_dims = {lc} x {rc}, "
            f"precision = [DEFAULT, DEFAULT] : ({sa}, {sb}) -> {so}")


A234, A342, A423 = t(2, 3, 4), t(3, 4, 2), t(4, 2, 3)

CASES = [
    case("transpose_identity", fn(f"%a: {A234}", A234, f"{tr('r', 'a', '[0, 1, 2]', A234, A234)}; return %r : {A234}"), lacks="transpose"),
    case("transpose_transpose", fn(f"%a: {A234}", A234, f"{tr('x', 'a', '[1, 2, 0]', A234, A342)}; {tr('r', 'x', '[2, 0, 1]', A342, A234)}; return %r : {A234}"), lacks="transpose"),
    case("transpose_transpose", fn(f"%a: {A234}", A423, f"{tr('x', 'a', '[1, 2, 0]', A234, A342)}; {tr('r', 'x', '[1, 2, 0]', A342, A423)}; return %r : {A423}"), has="dims = [2, 0, 1]"),
    case("transpose_is_reshape", fn(f"%a: {t(1, 5, 1, 3)}", t(5, 3, 1, 1), f"{tr('r', 'a', '[1, 0, 3, 2]', t(1, 5, 1, 3), t(5, 1, 3, 1))}; %q = stablehlo.reshape %r : ({t(5, 1, 3, 1)}) -> {t(5, 3, 1, 1)}; return %q : {t(5, 3, 1, 1)}"), has="reshape", lacks="transpose"),
    case("transpose_is_reshape", fn(f"%a: {t(2, 5, 1)}", t(5, 2, 1), f"{tr('r', 'a', '[1, 0, 2]', t(2, 5, 1), t(5, 2, 1))}; return %r : {t(5, 2, 1)}"), fires=False),
    case("transpose_of_broadcast", fn(f"%a: {t(3)}", t(4, 3), f"{bc('b', 'a', '[0]', t(3), t(3, 4))}; {tr('r', 'b', '[1, 0]', t(3, 4), t(4, 3))}; return %r : {t(4, 3)}"), has="dims = [1]", lacks="transpose"),
    case("transpose_of_broadcast", fn(f"%a: {t(2, 3)}", t(3, 5, 2), f"{bc('b', 'a', '[0, 1]', t(2, 3), t(2, 3, 5))}; {tr('r', 'b', '[1, 2, 0]', t(2, 3, 5), t(3, 5, 2))}; return %r : {t(3, 5, 2)}"), has=("dims = [1, 0]", "dims = [0, 2]")),
    case("transpose_of_iota", fn("", ti(3, 2), f"%i = stablehlo.iota dim = 0 : {ti(2, 3)}; {tr('r', 'i', '[1, 0]', ti(2, 3), ti(3, 2))}; return %r : {ti(3, 2)}"), has="iota dim = 1", lacks="transpose"),
    case("transpose_elementwise_sink", fn(f"%a: {t(3, 4)}, %b: {t(4, 3)}", t(4, 3), f"{tr('x', 'a', '[1, 0]', t(3, 4), t(4, 3))}; %s = stablehlo.add %x, %b : {t(4, 3)}; {tr('r', 's', '[1, 0]', t(4, 3), t(3, 4))}; %q = stablehlo.add %r, %a : {t(3, 4)}; {tr('z', 'q', '[1, 0]', t(3, 4), t(4, 3))}; return %z : {t(4, 3)}"), fires=False),
    case("transpose_elementwise_sink", fn(f"%a: {t(3, 4)}, %v: {t(3)}", t(3, 4), f"{tr('x', 'a', '[1, 0]', t(3, 4), t(4, 3))}; {bc('b', 'v', '[1]', t(3), t(4, 3))}; %c = stablehlo.constant dense<2.0> : {t(4, 3)}; %s = stablehlo.multiply %x, %b : {t(4, 3)}; {tr('r', 's', '[1, 0]', t(4, 3), t(3, 4))}; return %r : {t(3, 4)}"), lacks="transpose", has="dims = [0]"),
    case("transpose_elementwise_sink", fn(f"%a: {t(3, 4)}, %p: tensor<i1>", ti(3, 4), f"{tr('x', 'a', '[1, 0]', t(3, 4), t(4, 3))}; %c = stablehlo.constant dense<1.0> : {t(4, 3)}; %s = stablehlo.select %p, %x, %c : tensor<i1>, {t(4, 3)}; %q = stablehlo.convert %s : ({t(4, 3)}) -> {ti(4, 3)}; {tr('r', 'q', '[1, 0]', ti(4, 3), ti(3, 4))}; return %r : {ti(3, 4)}"), fires=False),
    case("transpose_elementwise_sink", fn(f"%a: {t(3, 5)}, %b: {t(5, 4)}, %c: {t(4, 3)}", t(4, 3), f"{dot('d', 'a', 'b', t(3, 5), t(5, 4), t(3, 4), '[1]', '[0]')}; {tr('x', 'c', '[1, 0]', t(4, 3), t(3, 4))}; %s = stablehlo.subtract %d, %x : {t(3, 4)}; {tr('r', 's', '[1, 0]', t(3, 4), t(4, 3))}; return %r : {t(4, 3)}"), lacks="transpose", has="dot_general %arg1, %arg0"),
    case("transpose_elementwise_sink", fn(f"%a: {t(3, 4)}, %p: tensor<i1>", t(3, 4), f"{tr('x', 'a', '[1, 0]', t(3, 4), t(4, 3))}; %c = stablehlo.constant dense<1.0> : {t(4, 3)}; %s = stablehlo.select %p, %x, %c : tensor<i1>, {t(4, 3)}; {tr('r', 's', '[1, 0]', t(4, 3), t(3, 4))}; return %r : {t(3, 4)}"), lacks="transpose"),
    case("elementwise_transpose_hoist@add", fn(f"%a: {t(3, 4)}, %b: {t(3, 4)}", t(4, 3), f"{tr('x', 'a', '[1, 0]', t(3, 4), t(4, 3))}; {tr('y', 'b', '[1, 0]', t(3, 4), t(4, 3))}; %r = stablehlo.add %x, %y : {t(4, 3)}; return %r : {t(4, 3)}"), has="add %arg0, %arg1"),
    case("elementwise_transpose_hoist@select", fn(f"%p: {'tensor<3x4xi1>'}, %a: {t(3, 4)}", t(4, 3), f"{tr('q', 'p', '[1, 0]', 'tensor<3x4xi1>', 'tensor<4x3xi1>')}; {tr('x', 'a', '[1, 0]', t(3, 4), t(4, 3))}; %c = stablehlo.constant dense<0.0> : {t(4, 3)}; %r = stablehlo.select %q, %x, %c : tensor<4x3xi1>, {t(4, 3)}; return %r : {t(4, 3)}"), has="select %arg0, %arg1"),
    case("elementwise_transpose_hoist@compare", fn(f"%a: {t(3, 4)}, %b: {t(3, 4)}", "tensor<4x3xi1>", f"{tr('x', 'a', '[1, 0]', t(3, 4), t(4, 3))}; {tr('y', 'b', '[1, 0]', t(3, 4), t(4, 3))}; %r = stablehlo.compare LT, %x, %y, FLOAT : ({t(4, 3)}, {t(4, 3)}) -> tensor<4x3xi1>; return %r : tensor<4x3xi1>"), has="compare LT, %arg0, %arg1"),
    case("elementwise_transpose_hoist@add", fn(f"%a: {t(3, 4)}, %b: {t(4, 3)}", t(4, 3), f"{tr('x', 'a', '[1, 0]', t(3, 4), t(4, 3))}; %r = stablehlo.add %x, %b : {t(4, 3)}; return %r : {t(4, 3)}"), fires=False),
    case("reshape_identity", fn(f"%a: {A234}", A234, f"{rs('r', 'a', A234, A234)}; return %r : {A234}"), lacks="reshape"),
    case("reshape_reshape", fn(f"%a: {A234}", t(4, 6), f"{rs('x', 'a', A234, t(24))}; {rs('r', 'x', t(24), t(4, 6))}; return %r : {t(4, 6)}"), has=f"({A234}) -> {t(4, 6)}"),
    case("reshape_reshape", fn(f"%a: {A234}", A234, f"{rs('x', 'a', A234, t(6, 4))}; {rs('r', 'x', t(6, 4), A234)}; return %r : {A234}"), lacks="reshape"),
    case("reshape_of_broadcast", fn(f"%a: {t(3)}", t(3, 5), f"{bc('b', 'a', '[0]', t(3), t(3, 1, 5))}; {rs('r', 'b', t(3, 1, 5), t(3, 5))}; return %r : {t(3, 5)}"), lacks="reshape", has="dims = [0]"),
    case("reshape_of_broadcast", fn(f"%a: {t(1, 3)}", t(1, 4, 3), f"{bc('b', 'a', '[0, 2]', t(1, 3), t(1, 4, 3))}; {rs('r', 'b', t(1, 4, 3), t(4, 3))}; {bc('q', 'r', '[0, 1]', t(4, 3), t(4, 3))}; {rs('z', 'q', t(4, 3), t(1, 4, 3))}; return %z : {t(1, 4, 3)}"), lacks="stablehlo.reshape %1"),
    case("reshape_of_broadcast", fn(f"%a: {t(3)}", t(15), f"{bc('b', 'a', '[0]', t(3), t(3, 5))}; {rs('r', 'b', t(3, 5), t(15))}; return %r : {t(15)}"), fires=False),
    case("reshape_of_iota", fn("", ti(4, 1), f"%i = stablehlo.iota dim = 0 : {ti(4)}; {rs('r', 'i', ti(4), ti(4, 1))}; return %r : {ti(4, 1)}"), has="iota dim = 0 : tensor<4x1xi32>", lacks="reshape"),
    case("broadcast_identity", fn(f"%a: {A234}", A234, f"{bc('r', 'a', '[0, 1, 2]', A234, A234)}; return %r : {A234}"), lacks="broadcast"),
    case("broadcast_is_transpose", fn(f"%a: {t(3, 4)}", t(4, 3), f"{bc('r', 'a', '[1, 0]', t(3, 4), t(4, 3))}; return %r : {t(4, 3)}"), has="transpose", lacks="broadcast"),
    case("broadcast_broadcast", fn(f"%a: {t(5)}", t(5, 4), f"{bc('x', 'a', '[0]', t(5), t(5, 1))}; {bc('r', 'x', '[0, 1]', t(5, 1), t(5, 4))}; return %r : {t(5, 4)}"), has="dims = [0] : (tensor<5xf32>) -> tensor<5x4xf32>"),
    case("broadcast_broadcast", fn(f"%a: {t(2, 3)}", t(3, 7, 2, 5), f"{bc('x', 'a', '[2, 0]', t(2, 3), t(3, 5, 2))}; {bc('r', 'x', '[0, 3, 2]', t(3, 5, 2), t(3, 7, 2, 5))}; return %r : {t(3, 7, 2, 5)}"), has="dims = [2, 0]"),
    case("broadcast_of_unit_reshape", fn(f"%a: {t(5)}", t(5, 4), f"{rs('x', 'a', t(5), t(5, 1))}; {bc('r', 'x', '[0, 1]', t(5, 1), t(5, 4))}; return %r : {t(5, 4)}"), has="dims = [0] : (tensor<5xf32>)", lacks="reshape"),
    case("broadcast_of_unit_reshape", fn(f"%a: {t(5, 1)}", t(4, 5), f"{rs('x', 'a', t(5, 1), t(5))}; {bc('r', 'x', '[1]', t(5), t(4, 5))}; return %r : {t(4, 5)}"), lacks="reshape"),
    case("broadcast_of_unit_reshape", fn(f"%a: {t(5, 2)}", t(10, 3), f"{rs('x', 'a', t(5, 2), t(10))}; {bc('r', 'x', '[0]', t(10), t(10, 3))}; return %r : {t(10, 3)}"), fires=False),
    case("broadcast_to_reshape", fn(f"%a: {t(5, 3)}", t(5, 1, 3), f"{bc('r', 'a', '[0, 2]', t(5, 3), t(5, 1, 3))}; return %r : {t(5, 1, 3)}"), has="reshape", lacks="broadcast"),
    case("broadcast_of_iota", fn("", ti(3, 4), f"%i = stablehlo.iota dim = 0 : {ti(4)}; {bc('r', 'i', '[1]', ti(4), ti(3, 4))}; return %r : {ti(3, 4)}"), has="iota dim = 1", lacks="broadcast"),
    case("unary_of_broadcast@exponential", fn(f"%a: {t(3)}", t(3, 4), f"{bc('x', 'a', '[0]', t(3), t(3, 4))}; %r = stablehlo.exponential %x : {t(3, 4)}; return %r : {t(3, 4)}"), has="exponential %arg0 : tensor<3xf32>"),
    case("unary_of_broadcast@convert", fn(f"%a: {ti(3)}", t(3, 4), f"{bc('x', 'a', '[0]', ti(3), ti(3, 4))}; %r = stablehlo.convert %x : ({ti(3, 4)}) -> {t(3, 4)}; return %r : {t(3, 4)}"), has="convert %arg0 : (tensor<3xi32>) -> tensor<3xf32>"),
    case("unary_of_broadcast@negate", fn(f"%a: {t(3, 4)}", t(3, 4), f"{bc('x', 'a', '[1, 0]', t(3, 4), t(4, 3))}; %r = stablehlo.negate %x : {t(4, 3)}; return %r : {t(4, 3)}").replace(f"-> {t(3, 4)} {{", f"-> {t(4, 3)} {{"), fires=False),
    case("binary_of_broadcasts@add", fn(f"%a: {t(3)}, %b: {t(3)}", t(3, 4), f"{bc('x', 'a', '[0]', t(3), t(3, 4))}; {bc('y', 'b', '[0]', t(3), t(3, 4))}; %r = stablehlo.add %x, %y : {t(3, 4)}; return %r : {t(3, 4)}"), has="add %arg0, %arg1 : tensor<3xf32>"),
    case("binary_of_broadcasts@multiply", fn(f"%a: tensor<f32>", t(3, 4), f"{bc('x', 'a', '[]', 'tensor<f32>', t(3, 4))}; %c = stablehlo.constant dense<3.0> : {t(3, 4)}; %r = stablehlo.multiply %c, %x : {t(3, 4)}; return %r : {t(3, 4)}"), has="multiply %cst, %arg0 : tensor<f32>"),
    case("binary_of_broadcasts@compare", fn(f"%a: {t(3)}, %b: {t(3)}", "tensor<3x4xi1>", f"{bc('x', 'a', '[0]', t(3), t(3, 4))}; {bc('y', 'b', '[0]', t(3), t(3, 4))}; %r = stablehlo.compare GT, %x, %y : ({t(3, 4)}, {t(3, 4)}) -> tensor<3x4xi1>; return %r : tensor<3x4xi1>"), has="(tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>"),
    case("binary_of_broadcasts@add", fn(f"%a: {t(3)}, %b: {t(3, 4)}", t(3, 4), f"{bc('x', 'a', '[0]', t(3), t(3, 4))}; %r = stablehlo.add %x, %b : {t(3, 4)}; return %r : {t(3, 4)}"), fires=False),
    case("binary_of_broadcasts@add", fn(f"%a: {t(3)}, %b: {t(4)}", t(3, 4), f"{bc('x', 'a', '[0]', t(3), t(3, 4))}; {bc('y', 'b', '[1]', t(4), t(3, 4))}; %r = stablehlo.add %x, %y : {t(3, 4)}; return %r : {t(3, 4)}"), fires=False),
    case("unary_of_unit_reshape@log", fn(f"%a: {t(6)}", t(6, 4), f"{rs('x', 'a', t(6), t(6, 1))}; %l = stablehlo.log %x : {t(6, 1)}; {bc('r', 'l', '[0, 1]', t(6, 1), t(6, 4))}; return %r : {t(6, 4)}"), has="log %arg0 : tensor<6xf32>", also=("broadcast_of_unit_reshape",), inputs="pos"),
    case("unary_of_unit_reshape@convert", fn(f"%a: {t(2, 3)}", ti(6), f"{rs('x', 'a', t(2, 3), t(6))}; %r = stablehlo.convert %x : ({t(6)}) -> {ti(6)}; return %r : {ti(6)}"), fires=False),
    # transposes into dot_general
    # an lhs transpose stays when absorbing it would make the lhs contract a leading dim
    case("dot_transpose_operand", fn(f"%a: {t(5, 3)}, %b: {t(5, 4)}", t(3, 4), f"{tr('x', 'a', '[1, 0]', t(5, 3), t(3, 5))}; {dot('r', 'x', 'b', t(3, 5), t(5, 4), t(3, 4), '[1]', '[0]')}; return %r : {t(3, 4)}"), fires=False),
    case("dot_transpose_operand", fn(f"%a: {t(3, 5)}, %b: {t(4, 5)}", t(3, 4), f"{tr('y', 'b', '[1, 0]', t(4, 5), t(5, 4))}; {dot('r', 'a', 'y', t(3, 5), t(5, 4), t(3, 4), '[1]', '[0]')}; return %r : {t(3, 4)}"), has="contracting_dims = [1] x [1]", lacks="transpose"),
    case("dot_transpose_operand", fn(f"%a: {t(2, 5, 3)}, %b: {t(2, 5, 4)}", t(2, 3, 4), f"{tr('x', 'a', '[0, 2, 1]', t(2, 5, 3), t(2, 3, 5))}; {dot('r', 'x', 'b', t(2, 3, 5), t(2, 5, 4), t(2, 3, 4), '[2]', '[1]', ('[0]', '[0]'))}; return %r : {t(2, 3, 4)}"), fires=False),
    case("dot_transpose_operand", fn(f"%a: {t(5, 2, 3)}, %b: {t(2, 5, 4)}", t(2, 3, 4), f"{tr('x', 'a', '[1, 2, 0]', t(5, 2, 3), t(2, 3, 5))}; {dot('r', 'x', 'b', t(2, 3, 5), t(2, 5, 4), t(2, 3, 4), '[2]', '[1]', ('[0]', '[0]'))}; return %r : {t(2, 3, 4)}"), fires=False),
    case("dot_transpose_operand", fn(f"%a: {t(3, 2, 5)}, %b: {t(2, 5, 4)}", t(2, 3, 4), f"{tr('x', 'a', '[1, 0, 2]', t(3, 2, 5), t(2, 3, 5))}; {dot('r', 'x', 'b', t(2, 3, 5), t(2, 5, 4), t(2, 3, 4), '[2]', '[1]', ('[0]', '[0]'))}; return %r : {t(2, 3, 4)}"), has="batching_dims = [1] x [0], contracting_dims = [2] x [1]", lacks="transpose"),
    case("dot_transpose_operand", fn(f"%a: {t(2, 3, 5)}", t(3, 2, 4), f"{tr('x', 'a', '[1, 0, 2]', t(2, 3, 5), t(3, 2, 5))}; %b = stablehlo.constant dense<1.0> : {t(5, 4)}; {dot('r', 'x', 'b', t(3, 2, 5), t(5, 4), t(3, 2, 4), '[2]', '[0]')}; return %r : {t(3, 2, 4)}"), fires=False),
    case("transpose_of_dot", fn(f"%a: {t(3, 5)}, %b: {t(5, 4)}", t(4, 3), f"{dot('d', 'a', 'b', t(3, 5), t(5, 4), t(3, 4), '[1]', '[0]')}; {tr('r', 'd', '[1, 0]', t(3, 4), t(4, 3))}; return %r : {t(4, 3)}"), fires=False),
    case("transpose_of_dot", fn(f"%a: {t(3, 5)}, %b: {t(4, 5)}", t(4, 3), f"{dot('d', 'a', 'b', t(3, 5), t(4, 5), t(3, 4), '[1]', '[1]')}; {tr('r', 'd', '[1, 0]', t(3, 4), t(4, 3))}; return %r : {t(4, 3)}"), has="dot_general %arg1, %arg0, contracting_dims = [1] x [1]", lacks="transpose"),
    case("transpose_of_dot", fn(f"%a: {t(2, 3, 5)}, %b: {t(2, 5, 4)}", t(2, 4, 3), f"{dot('d', 'a', 'b', t(2, 3, 5), t(2, 5, 4), t(2, 3, 4), '[2]', '[1]', ('[0]', '[0]'))}; {tr('r', 'd', '[0, 2, 1]', t(2, 3, 4), t(2, 4, 3))}; return %r : {t(2, 4, 3)}"), fires=False),
    case("transpose_of_dot", fn(f"%a: {t(2, 3, 5)}, %b: {t(2, 4, 5)}", t(2, 4, 3), f"{dot('d', 'a', 'b', t(2, 3, 5), t(2, 4, 5), t(2, 3, 4), '[2]', '[2]', ('[0]', '[0]'))}; {tr('r', 'd', '[0, 2, 1]', t(2, 3, 4), t(2, 4, 3))}; return %r : {t(2, 4, 3)}"), has="dot_general %arg1, %arg0, batching_dims = [0] x [0], contracting_dims = [2] x [2]", lacks="transpose"),
    case("transpose_of_dot", fn(f"%a: {t(2, 6, 3, 5)}, %b: {t(6, 2, 5, 4)}", t(6, 2, 3, 4), f"{dot('d', 'a', 'b', t(2, 6, 3, 5), t(6, 2, 5, 4), t(2, 6, 3, 4), '[3]', '[2]', ('[0, 1]', '[1, 0]'))}; {tr('r', 'd', '[1, 0, 2, 3]', t(2, 6, 3, 4), t(6, 2, 3, 4))}; return %r : {t(6, 2, 3, 4)}"), has="batching_dims = [1, 0] x [0, 1]"),
    case("transpose_of_dot", fn(f"%a: {t(3, 5)}, %b: {t(5, 2, 4)}", t(4, 3, 2), f"{dot('d', 'a', 'b', t(3, 5), t(5, 2, 4), t(3, 2, 4), '[1]', '[0]')}; {tr('r', 'd', '[2, 0, 1]', t(3, 2, 4), t(4, 3, 2))}; return %r : {t(4, 3, 2)}"), fires=False),
]


@pytest.mark.parametrize("c", CASES, ids=case_ids(CASES))
def test_pattern(c):
    check_case(c)


def test_every_layout_pattern_has_a_case():
    from reactant.optimize.patterns import PATTERNS

    names = {c.name.split("@")[0] for c in CASES if c.fires}
    missing = [n for n, p in PATTERNS.items() if p.family == "layout" and n.split("@")[0] not in names]
    assert not missing, missing


def test_transpose_chain_corpus_module_loses_its_transposes():
    """The transpose_chain workload: the layout patterns fold all transposes into the dots
    but one, kept on purpose (absorbing it would make a dot's lhs contract a leading dim,
    which XLA's CPU dot runs 10-15% slower than an explicit transpose)."""
    from _harness import differential, main_body, rewrite, to_text, parse
    from hlo_corpus import corpus_text

    from reactant.optimize.patterns import PATTERNS

    text = corpus_text("transpose_chain.fwd")
    text = text.replace("512", "16")
    before = to_text(parse(text))
    names = [n for n, p in PATTERNS.items() if p.family == "layout"]
    after = rewrite(before, names)
    body = main_body(after)
    assert body.count("stablehlo.transpose") < main_body(before).count("stablehlo.transpose")
    assert body.count("stablehlo.transpose") <= 1, body
    differential(before, after, rtol=1e-4, atol=1e-4)
