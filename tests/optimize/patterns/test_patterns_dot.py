"""Before/after and differential tests of the dot_general patterns, including the two
diagonal-matrix forms of the diagmm corpus workloads."""

import pytest
from _harness import case, case_ids, check_case, differential, fn, main_body, parse, rewrite, to_text
from hlo_corpus import corpus_text

N = 8
M = f"tensor<{N}x{N}xf32>"
MI = f"tensor<{N}x{N}xi32>"
MB = f"tensor<{N}x{N}xi1>"
V = f"tensor<{N}xf32>"


def t(*s, e="f32"):
    return "tensor<" + "".join(f"{d}x" for d in s) + e + ">"


def mask(direction="EQ", off0=0, off1=0, name="m"):
    lines = [f"%i0 = stablehlo.iota dim = 0 : {MI}", f"%i1 = stablehlo.iota dim = 1 : {MI}",
             f"%o0 = stablehlo.constant dense<{off0}> : {MI}", f"%o1 = stablehlo.constant dense<{off1}> : {MI}",
             f"%j0 = stablehlo.add %i0, %o0 : {MI}", f"%j1 = stablehlo.add %o1, %i1 : {MI}",
             f"%{name} = stablehlo.compare {direction}, %j0, %j1, SIGNED : ({MI}, {MI}) -> {MB}"]
    return "; ".join(lines)


def diag_select(v="v", col=False, direction="EQ", off0=0, off1=0, name="D"):
    """select-built diag(v) (through a [n,1] broadcast like jnp.diag)."""
    d = "[1]" if col else "[0]"
    mid = t(1, N) if col else t(N, 1)
    z = "%zs = stablehlo.constant dense<0.0> : tensor<f32>; %zb = stablehlo.broadcast_in_dim %zs, dims = [] : (tensor<f32>) -> " + M
    br = (f"%vb = stablehlo.broadcast_in_dim %{v}, dims = {d} : ({V}) -> {mid}; "
          f"%vt = stablehlo.broadcast_in_dim %vb, dims = [0, 1] : ({mid}) -> {M}")
    sel = (f"%{name} = stablehlo.select %m, %vt, %zb : {MB}, {M}" if direction == "EQ"
           else f"%{name} = stablehlo.select %m, %zb, %vt : {MB}, {M}")
    return f"{mask(direction, off0, off1)}; {z}; {br}; {sel}"


def dotl(r, a, b, sa, sb, so, lc="[1]", rc="[0]", batch=None):
    bd = f"batching_dims = {batch[0]} x {batch[1]}, " if batch else ""
    return (f"%{r} = stablehlo.dot_general %{a}, %{b}, {bd}contracting_dims = {lc} x {rc}, "
            f"precision = [DEFAULT, DEFAULT] : ({sa}, {sb}) -> {so}")


def scatter_diag(v="v", name="D", idx_cols=("%ic", "%ic")):
    return "; ".join([
        f"%zs = stablehlo.constant dense<0.0> : {M}",
        f"%ii = stablehlo.iota dim = 0 : tensor<{N}xi32>",
        f"%ic = stablehlo.broadcast_in_dim %ii, dims = [0] : (tensor<{N}xi32>) -> tensor<{N}x1xi32>",
        f"%ix = stablehlo.concatenate {idx_cols[0]}, {idx_cols[1]}, dim = 1 : (tensor<{N}x1xi32>, tensor<{N}x1xi32>) -> tensor<{N}x2xi32>",
        f'%{name} = "stablehlo.scatter"(%zs, %ix, %{v}) <{{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}}> ({{ ^bb0(%s0: tensor<f32>, %s1: tensor<f32>): stablehlo.return %s1 : tensor<f32> }}) : ({M}, tensor<{N}x2xi32>, {V}) -> {M}',
    ])


def scatter_fn(body_lines, args, res):
    # keep the scatter region on one line: fn() splits on ';' only between statements
    return ("func.func @main(" + args + ") -> " + res + " {\n  " + body_lines.replace("; ", "\n  ") + "\n}\n")


CASES = [
    case("dot_diag_select_lhs", fn(f"%v: {V}, %b: {t(N, 5)}", t(N, 5), f"{diag_select()}; {dotl('r', 'D', 'b', M, t(N, 5), t(N, 5))}; return %r : {t(N, 5)}"), has="multiply", lacks="dot_general"),
    case("dot_diag_select_lhs", fn(f"%v: {V}, %b: {t(5, N)}", t(N, 5), f"{diag_select(col=True)}; {dotl('r', 'D', 'b', M, t(5, N), t(N, 5), '[0]', '[1]')}; return %r : {t(N, 5)}"), has=("multiply", "transpose"), lacks="dot_general"),
    case("dot_diag_select_lhs", fn(f"%v: {V}, %b: {t(3, N, 2)}", t(N, 3, 2), f"{diag_select(direction='NE')}; {dotl('r', 'D', 'b', M, t(3, N, 2), t(N, 3, 2), '[1]', '[1]')}; return %r : {t(N, 3, 2)}"), lacks="dot_general"),
    case("dot_diag_select_lhs", fn(f"%v: {V}, %b: {t(N, 5)}", t(N, 5), f"{diag_select(off0=3, off1=3)}; {dotl('r', 'D', 'b', M, t(N, 5), t(N, 5))}; return %r : {t(N, 5)}"), lacks="dot_general"),
    case("dot_diag_select_lhs", fn(f"%v: {V}, %b: {t(N, 5)}", t(N, 5), f"{diag_select(off0=1)}; {dotl('r', 'D', 'b', M, t(N, 5), t(N, 5))}; return %r : {t(N, 5)}"), fires=False),
    case("dot_diag_select_lhs", fn(f"%v: {V}, %b: {t(N, 5)}", t(N, 5), f"%i0 = stablehlo.iota dim = 0 : {MI}; %i1 = stablehlo.iota dim = 1 : {MI}; %df = stablehlo.subtract %i1, %i0 : {MI}; %k0 = stablehlo.constant dense<0> : {MI}; %m = stablehlo.compare EQ, %df, %k0, SIGNED : ({MI}, {MI}) -> {MB}; %vt = stablehlo.broadcast_in_dim %v, dims = [0] : ({V}) -> {M}; %zb = stablehlo.constant dense<0.0> : {M}; %D = stablehlo.select %m, %vt, %zb : {MB}, {M}; {dotl('r', 'D', 'b', M, t(N, 5), t(N, 5))}; return %r : {t(N, 5)}"), lacks="dot_general", id="tracer-form"),
    case("dot_diag_select_lhs", fn(f"%v: {V}, %b: {t(N, 5)}", t(N, 5), f"%i0 = stablehlo.iota dim = 0 : {MI}; %i1 = stablehlo.iota dim = 1 : {MI}; %df = stablehlo.subtract %i1, %i0 : {MI}; %k0 = stablehlo.constant dense<1> : {MI}; %m = stablehlo.compare EQ, %df, %k0, SIGNED : ({MI}, {MI}) -> {MB}; %vt = stablehlo.broadcast_in_dim %v, dims = [0] : ({V}) -> {M}; %zb = stablehlo.constant dense<0.0> : {M}; %D = stablehlo.select %m, %vt, %zb : {MB}, {M}; {dotl('r', 'D', 'b', M, t(N, 5), t(N, 5))}; return %r : {t(N, 5)}"), fires=False, id="tracer-form-offdiag"),
    case("dot_diag_select_rhs", fn(f"%v: {V}, %a: {t(5, N)}", t(5, N), f"{diag_select()}; {dotl('r', 'a', 'D', t(5, N), M, t(5, N))}; return %r : {t(5, N)}"), has="multiply", lacks="dot_general"),
    case("dot_diag_select_rhs", fn(f"%v: {V}, %a: {t(N, 5)}", t(5, N), f"{diag_select()}; {dotl('r', 'a', 'D', t(N, 5), M, t(5, N), '[0]', '[0]')}; return %r : {t(5, N)}"), has="transpose", lacks="dot_general"),
    case("dot_diag_scatter_lhs", scatter_fn(f"{scatter_diag()}; {dotl('r', 'D', 'b', M, t(N, 5), t(N, 5))}; return %r : {t(N, 5)}", f"%v: {V}, %b: {t(N, 5)}", t(N, 5)), has="multiply", lacks=("dot_general", "scatter")),
    case("dot_diag_scatter_rhs", scatter_fn(f"{scatter_diag()}; {dotl('r', 'a', 'D', t(5, N), M, t(5, N))}; return %r : {t(5, N)}", f"%v: {V}, %a: {t(5, N)}", t(5, N)), has="multiply", lacks=("dot_general", "scatter")),
    # the fast-math variants: the broadcast multiply alone
    case("dot_diag_select_lhs_fast", fn(f"%v: {V}, %b: {t(N, 5)}", t(N, 5), f"{diag_select()}; {dotl('r', 'D', 'b', M, t(N, 5), t(N, 5))}; return %r : {t(N, 5)}"), has="multiply", lacks=("dot_general", "is_finite")),
    case("dot_diag_select_rhs_fast", fn(f"%v: {V}, %a: {t(5, N)}", t(5, N), f"{diag_select()}; {dotl('r', 'a', 'D', t(5, N), M, t(5, N))}; return %r : {t(5, N)}"), has="multiply", lacks=("dot_general", "is_finite")),
    case("dot_diag_scatter_lhs_fast", scatter_fn(f"{scatter_diag()}; {dotl('r', 'D', 'b', M, t(N, 5), t(N, 5))}; return %r : {t(N, 5)}", f"%v: {V}, %b: {t(N, 5)}", t(N, 5)), has="multiply", lacks=("dot_general", "scatter", "is_finite")),
    case("dot_diag_scatter_rhs_fast", scatter_fn(f"{scatter_diag()}; {dotl('r', 'a', 'D', t(5, N), M, t(5, N))}; return %r : {t(5, N)}", f"%v: {V}, %a: {t(5, N)}", t(5, N)), has="multiply", lacks=("dot_general", "scatter", "is_finite")),
    # the exact variants: the count of non-finite entries per contracted line, on floats only
    case("dot_diag_select_lhs", fn(f"%v: {V}, %b: {t(N, 5)}", t(N, 5), f"{diag_select()}; {dotl('r', 'D', 'b', M, t(N, 5), t(N, 5))}; return %r : {t(N, 5)}"), has=("is_finite", "reduce", "0x7FC00000"), lacks="dot_general", id="exact-correction"),
    case("dot_diag_select_lhs", fn(f"%v: {t(N, e='i32')}, %b: {t(N, 5, e='i32')}", t(N, 5, e="i32"), (f"{diag_select()}; {dotl('r', 'D', 'b', M, t(N, 5), t(N, 5))}; return %r : {t(N, 5)}").replace("f32", "i32").replace("0.0", "0")), has="multiply", lacks=("dot_general", "is_finite"), id="integers-need-no-correction"),
    case("dot_diag_select_lhs", fn("%v: tensor<1xf32>, %b: tensor<1x5xf32>", "tensor<1x5xf32>", "%i0 = stablehlo.iota dim = 0 : tensor<1x1xi32>; %i1 = stablehlo.iota dim = 1 : tensor<1x1xi32>; %m = stablehlo.compare EQ, %i0, %i1, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>; %vt = stablehlo.broadcast_in_dim %v, dims = [0] : (tensor<1xf32>) -> tensor<1x1xf32>; %z = stablehlo.constant dense<0.0> : tensor<1x1xf32>; %D = stablehlo.select %m, %vt, %z : tensor<1x1xi1>, tensor<1x1xf32>; " + dotl('r', 'D', 'b', "tensor<1x1xf32>", "tensor<1x5xf32>", "tensor<1x5xf32>") + "; return %r : tensor<1x5xf32>"), fires=False, id="one-by-one-is-a-unit-contraction"),
    case("dot_diag_scatter_lhs", scatter_fn(f"{scatter_diag(idx_cols=('%ic', '%ir'))}; {dotl('r', 'D', 'b', M, t(N, 5), t(N, 5))}; return %r : {t(N, 5)}".replace("%ix =", f"%ir = stablehlo.reverse %ic, dims = [0] : tensor<{N}x1xi32>; %ix ="), f"%v: {V}, %b: {t(N, 5)}", t(N, 5)), fires=False),
    case("diag_of_dot", fn(f"%g: {t(N, 6)}, %a: {t(N, 6)}", M, f"{mask()}; {dotl('d', 'g', 'a', t(N, 6), t(N, 6), M, '[1]', '[1]')}; %z = stablehlo.constant dense<0.0> : {M}; %r = stablehlo.select %m, %d, %z : {MB}, {M}; return %r : {M}"), has=("reduce", "multiply"), lacks="dot_general"),
    case("diag_of_dot", fn(f"%g: {t(6, N)}, %a: {t(N, 6)}", M, f"{mask()}; {dotl('d', 'g', 'a', t(6, N), t(N, 6), M, '[0]', '[1]')}; %z = stablehlo.constant dense<0.0> : {M}; %r = stablehlo.select %m, %d, %z : {MB}, {M}; return %r : {M}"), lacks="dot_general"),
    case("diag_gather_of_dot", scatter_fn(f"%ii = stablehlo.iota dim = 0 : tensor<{N}xi32>; %ic = stablehlo.broadcast_in_dim %ii, dims = [0] : (tensor<{N}xi32>) -> tensor<{N}x1xi32>; %ix = stablehlo.concatenate %ic, %ic, dim = 1 : (tensor<{N}x1xi32>, tensor<{N}x1xi32>) -> tensor<{N}x2xi32>; {dotl('d', 'g', 'a', t(N, 6), t(N, 6), M, '[1]', '[1]')}; %c = stablehlo.constant dense<2.0> : {M}; %s = stablehlo.multiply %d, %c : {M}; " + f'%r = "stablehlo.gather"(%s, %ix) <{{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}}> : ({M}, tensor<{N}x2xi32>) -> {V}; return %r : {V}', f"%g: {t(N, 6)}, %a: {t(N, 6)}", V), has=("reduce", "multiply"), lacks=("dot_general", "gather")),
    case("dot_scalar_factor", fn(f"%x: {t(4, 6)}, %y: {t(6, 3)}, %s: tensor<f32>", t(4, 3), f"%sb = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> {t(4, 6)}; %xs = stablehlo.multiply %x, %sb : {t(4, 6)}; {dotl('r', 'xs', 'y', t(4, 6), t(6, 3), t(4, 3))}; return %r : {t(4, 3)}"), has="dot_general %arg0, %arg1"),
    case("dot_scalar_factor", fn(f"%x: {t(4, 6)}, %y: {t(6, 3)}", t(4, 3), f"%c = stablehlo.constant dense<2.5> : {t(6, 3)}; %ys = stablehlo.multiply %c, %y : {t(6, 3)}; {dotl('r', 'x', 'ys', t(4, 6), t(6, 3), t(4, 3))}; return %r : {t(4, 3)}"), has=("dot_general %arg0, %arg1", "2.5")),
    case("dot_scalar_factor", fn(f"%x: {t(4, 6)}, %y: {t(6, 3)}", t(4, 3), f"%xs = stablehlo.negate %x : {t(4, 6)}; {dotl('r', 'xs', 'y', t(4, 6), t(6, 3), t(4, 3))}; return %r : {t(4, 3)}"), has=("dot_general %arg0, %arg1", "negate")),
    case("dot_scalar_factor", fn(f"%x: {t(4, 2)}, %y: {t(2, 8)}, %s: tensor<f32>", t(4, 8), f"%sb = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> {t(4, 2)}; %xs = stablehlo.multiply %x, %sb : {t(4, 2)}; {dotl('r', 'xs', 'y', t(4, 2), t(2, 8), t(4, 8))}; return %r : {t(4, 8)}"), fires=False),
    case("dot_distribute@add", fn(f"%x: {t(4, 6)}, %y: {t(6, 3)}, %z: {t(6, 3)}", t(4, 3), f"{dotl('p', 'x', 'y', t(4, 6), t(6, 3), t(4, 3))}; {dotl('q', 'x', 'z', t(4, 6), t(6, 3), t(4, 3))}; %r = stablehlo.add %p, %q : {t(4, 3)}; return %r : {t(4, 3)}"), has="add %arg1, %arg2"),
    case("dot_distribute@subtract", fn(f"%x: {t(4, 6)}, %y: {t(4, 6)}, %z: {t(6, 3)}", t(4, 3), f"{dotl('p', 'x', 'z', t(4, 6), t(6, 3), t(4, 3))}; {dotl('q', 'y', 'z', t(4, 6), t(6, 3), t(4, 3))}; %r = stablehlo.subtract %p, %q : {t(4, 3)}; return %r : {t(4, 3)}"), has="subtract %arg0, %arg1"),
    case("dot_distribute@add", fn(f"%x: {t(4, 6)}, %y: {t(6, 3)}, %z: {t(6, 3)}", t(4, 3), f"{dotl('p', 'x', 'y', t(4, 6), t(6, 3), t(4, 3))}; {dotl('q', 'x', 'z', t(4, 6), t(6, 3), t(4, 3))}; %r = stablehlo.add %p, %q : {t(4, 3)}; %w = stablehlo.multiply %r, %p : {t(4, 3)}; return %w : {t(4, 3)}"), fires=False),
    case("dot_of_pad", fn(f"%x: {t(10)}, %y: {t(40)}", "tensor<f32>", f"%z = stablehlo.constant dense<0.0> : tensor<f32>; %p = stablehlo.pad %x, %z, low = [5], high = [25], interior = [0] : ({t(10)}, tensor<f32>) -> {t(40)}; {dotl('r', 'p', 'y', t(40), t(40), 'tensor<f32>', '[0]', '[0]')}; return %r : tensor<f32>"), has=("slice", "tensor<10xf32>, tensor<10xf32>"), lacks="pad"),
    case("dot_of_pad", fn(f"%x: {t(3, 5)}, %y: {t(5, 4)}", t(7, 4), f"%z = stablehlo.constant dense<0.0> : tensor<f32>; %p = stablehlo.pad %x, %z, low = [1, 0], high = [3, 0], interior = [0, 0] : ({t(3, 5)}, tensor<f32>) -> {t(7, 5)}; {dotl('r', 'p', 'y', t(7, 5), t(5, 4), t(7, 4))}; return %r : {t(7, 4)}"), has=("dot_general %arg0, %arg1", "pad")),
    case("dot_of_pad", fn(f"%x: {t(4, 5)}, %y: {t(3, 6)}", t(4, 7), f"%z = stablehlo.constant dense<0.0> : tensor<f32>; %p = stablehlo.pad %y, %z, low = [2, 0], high = [0, 1], interior = [0, 0] : ({t(3, 6)}, tensor<f32>) -> {t(5, 7)}; {dotl('r', 'x', 'p', t(4, 5), t(5, 7), t(4, 7))}; return %r : {t(4, 7)}"), has=("slice %arg0", "dot_general")),
    case("dot_of_pad", fn(f"%x: {t(10)}, %y: {t(40)}", "tensor<f32>", f"%z = stablehlo.constant dense<1.0> : tensor<f32>; %p = stablehlo.pad %x, %z, low = [5], high = [25], interior = [0] : ({t(10)}, tensor<f32>) -> {t(40)}; {dotl('r', 'p', 'y', t(40), t(40), 'tensor<f32>', '[0]', '[0]')}; return %r : tensor<f32>"), fires=False),
    case("dot_of_broadcast", fn(f"%u: {t(4)}, %b: {t(6, 3)}", t(4, 3), f"%a = stablehlo.broadcast_in_dim %u, dims = [0] : ({t(4)}) -> {t(4, 6)}; {dotl('r', 'a', 'b', t(4, 6), t(6, 3), t(4, 3))}; return %r : {t(4, 3)}"), has="reduce", rtol=1e-5),
    case("dot_of_broadcast", fn(f"%u: {t(6)}, %b: {t(6, 3)}", t(4, 3), f"%a = stablehlo.broadcast_in_dim %u, dims = [1] : ({t(6)}) -> {t(4, 6)}; {dotl('r', 'a', 'b', t(4, 6), t(6, 3), t(4, 3))}; return %r : {t(4, 3)}"), has=("dot_general %arg0, %arg1", "(tensor<6xf32>, tensor<6x3xf32>) -> tensor<3xf32>")),
    case("dot_of_broadcast", fn(f"%a: {t(4, 6)}, %u: {t(3, 1)}", t(4, 3), f"%b = stablehlo.broadcast_in_dim %u, dims = [1, 0] : ({t(3, 1)}) -> {t(6, 3)}; {dotl('r', 'a', 'b', t(4, 6), t(6, 3), t(4, 3))}; return %r : {t(4, 3)}"), has="reduce"),
    case("dot_of_broadcast", fn(f"%s: tensor<f32>, %b: {t(6, 3)}", t(4, 3), f"%a = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> {t(4, 6)}; {dotl('r', 'a', 'b', t(4, 6), t(6, 3), t(4, 3))}; return %r : {t(4, 3)}"), has="reduce"),
    case("dot_of_broadcast", fn(f"%u: {t(4, 6)}, %b: {t(6, 3)}", t(4, 3), f"%a = stablehlo.broadcast_in_dim %u, dims = [0, 1] : ({t(4, 6)}) -> {t(4, 6)}; {dotl('r', 'a', 'b', t(4, 6), t(6, 3), t(4, 3))}; return %r : {t(4, 3)}"), fires=False),
    case("dot_zero", fn(f"%x: {t(4, 6, e='i32')}", t(4, 3, e="i32"), f"%c = stablehlo.constant dense<0> : {t(6, 3, e='i32')}; {dotl('r', 'x', 'c', t(4, 6, e='i32'), t(6, 3, e='i32'), t(4, 3, e='i32'))}; return %r : {t(4, 3, e='i32')}"), lacks="dot_general"),
    case("dot_zero", fn(f"%x: {t(4, 6)}", t(4, 3), f"%c = stablehlo.constant dense<0.0> : {t(6, 3)}; {dotl('r', 'x', 'c', t(4, 6), t(6, 3), t(4, 3))}; return %r : {t(4, 3)}"), fires=False),
    case("dot_zero_fast", fn(f"%x: {t(4, 6)}", t(4, 3), f"%c = stablehlo.constant dense<0.0> : {t(6, 3)}; {dotl('r', 'x', 'c', t(4, 6), t(6, 3), t(4, 3))}; return %r : {t(4, 3)}"), lacks="dot_general"),
    case("dot_unit_contract", fn(f"%x: {t(4, 1)}, %y: {t(1, 3)}", t(4, 3), f"{dotl('r', 'x', 'y', t(4, 1), t(1, 3), t(4, 3))}; return %r : {t(4, 3)}"), has="multiply", lacks="dot_general"),
    case("dot_unit_contract", fn(f"%x: {t(4)}, %y: {t(3)}", t(4, 3), f"{dotl('r', 'x', 'y', t(4), t(3), t(4, 3), '[]', '[]')}; return %r : {t(4, 3)}"), has="multiply", lacks="dot_general"),
    case("dot_unit_contract", fn(f"%x: {t(4, 2, 1)}, %y: {t(2, 1, 3)}", t(2, 4, 3), f"{dotl('r', 'x', 'y', t(4, 2, 1), t(2, 1, 3), t(2, 4, 3), '[2]', '[1]', ('[1]', '[0]'))}; return %r : {t(2, 4, 3)}"), has="multiply", lacks="dot_general"),
    case("dot_unit_contract", fn(f"%x: {t(4, 2)}, %y: {t(2, 3)}", t(4, 3), f"{dotl('r', 'x', 'y', t(4, 2), t(2, 3), t(4, 3))}; return %r : {t(4, 3)}"), fires=False),
]


@pytest.mark.parametrize("c", CASES, ids=case_ids(CASES))
def test_pattern(c):
    check_case(c)


def test_every_dot_pattern_has_a_case():
    from reactant.optimize.patterns import PATTERNS

    names = {c.name for c in CASES if c.fires}
    missing = [n for n, p in PATTERNS.items() if p.family == "dot" and n not in names]
    assert not missing, missing


def _corpus(name, n=16):
    from _harness import inline_calls

    text = corpus_text(name).replace("1024", str(n))

    return to_text(inline_calls(parse(text)))


@pytest.mark.parametrize("name", ["diagmm.fwd", "diagmm_scatter.fwd", "diagmm.grad", "diagmm_scatter.grad"])
def test_diagmm_corpus_matmuls_disappear(name):
    """Both diag forms of the corpus (shrunk to n = 16) lose their O(n³) products; in the
    gradient of the select form the diagonal of G @ A^T is computed as a row-wise dot."""
    from reactant.optimize.patterns import PATTERNS

    before = _corpus(name)
    pats = [n for n, p in PATTERNS.items() if p.family in ("dot", "layout", "algebraic", "reduce")
            and not p.fast_math]
    after = rewrite(before, pats)
    body = main_body(after)
    big = [ln for ln in body.splitlines() if "dot_general" in ln and "-> tensor<16x16xf32>" in ln]
    if name != "diagmm_scatter.grad":
        assert not big, body
    else:  # the scatter form's gradient has no diag matrix left to recognise for dA's product
        assert len(big) <= 1, body
    differential(before, after, rtol=2e-4, atol=2e-4)


def _diag_product_module(n, side, form, zero="0.0", vector=False):
    """diag(v) @ a (side 0) or a^T @ diag(v) (side 1; a vector: a @ diag(v)), with the
    diagonal built by select (off-diagonal ``zero``) or by a scatter-add into ``zero``s."""
    Mn, Vn = f"tensor<{n}x{n}xf32>", f"tensor<{n}xf32>"
    Mi, Mb = f"tensor<{n}x{n}xi32>", f"tensor<{n}x{n}xi1>"
    if form == "select":
        d = [f"%i0 = stablehlo.iota dim = 0 : {Mi}", f"%i1 = stablehlo.iota dim = 1 : {Mi}",
             f"%m = stablehlo.compare EQ, %i0, %i1, SIGNED : ({Mi}, {Mi}) -> {Mb}",
             f"%vt = stablehlo.broadcast_in_dim %v, dims = [0] : ({Vn}) -> {Mn}",
             f"%z = stablehlo.constant dense<{zero}> : {Mn}", f"%D = stablehlo.select %m, %vt, %z : {Mb}, {Mn}"]
    else:
        d = [f"%zs = stablehlo.constant dense<{zero}> : {Mn}", f"%ii = stablehlo.iota dim = 0 : tensor<{n}xi32>",
             f"%ic = stablehlo.broadcast_in_dim %ii, dims = [0] : (tensor<{n}xi32>) -> tensor<{n}x1xi32>",
             f"%ix = stablehlo.concatenate %ic, %ic, dim = 1 : (tensor<{n}x1xi32>, tensor<{n}x1xi32>) -> tensor<{n}x2xi32>",
             f'%D = "stablehlo.scatter"(%zs, %ix, %v) <{{indices_are_sorted = false, scatter_dimension_numbers = '
             f'#stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], '
             f'index_vector_dim = 1>, unique_indices = false}}> ({{ ^bb0(%s0: tensor<f32>, %s1: tensor<f32>): '
             f'%q = stablehlo.add %s0, %s1 : tensor<f32>\n stablehlo.return %q : tensor<f32> }}) : '
             f"({Mn}, tensor<{n}x2xi32>, {Vn}) -> {Mn}"]
    A = Vn if vector else f"tensor<{n}x5xf32>"
    R = Vn if vector else (f"tensor<{n}x5xf32>" if side == 0 else f"tensor<5x{n}xf32>")
    d.append(f"%r = stablehlo.dot_general %D, %a, contracting_dims = [1] x [0] : ({Mn}, {A}) -> {R}" if side == 0
             else f"%r = stablehlo.dot_general %a, %D, contracting_dims = [0] x [0] : ({A}, {Mn}) -> {R}")
    body = "\n  ".join(d + [f"return %r : {R}"])
    return f"func.func @main(%v: {Vn}, %a: {A}) -> {R} {{\n  {body}\n}}\n"


@pytest.mark.parametrize("form", ["select", "scatter"])
@pytest.mark.parametrize("side", [0, 1])
def test_diag_product_gives_the_dense_products_bits(side, form):
    """The exact variants give the dense product's bits (XLA's and NumPy's) on inputs full of
    ±0, ±Inf and NaN: the 0 * Inf NaNs of the other rows, the +0.0 the sum starts from; the
    fast-math variants do not."""
    import numpy as np
    from _harness import execute

    from reactant.optimize.exactness import same_bits, special_array

    name = f"dot_diag_{form}_{'lhs' if side == 0 else 'rhs'}"
    rng = np.random.default_rng(side + 2 * (form == "select"))
    fast_differs = False
    for n, zero in ((2, "-0.0"), (8, "0.0")):
        text = _diag_product_module(n, side, form, zero)
        exact, fast = rewrite(text, [name]), rewrite(text, [name + "_fast"])
        assert "dot_general" not in main_body(exact) and "dot_general" not in main_body(fast)
        draws = [[np.float32([1, -1, 0, -0.0] * (n // 2))[:n], np.zeros((n, 5), np.float32)]]  # -0 products
        draws += [[special_array(rng, (n,), np.float32), special_array(rng, (n, 5), np.float32)] for _ in range(6)]
        for v, a in draws:
            ref = execute(text, [v, a])[0]
            with np.errstate(all="ignore"):
                npy = np.diag(v) @ a if side == 0 else a.T @ np.diag(v)
            assert same_bits(ref, npy), (n, ref, npy)  # XLA's dense product is NumPy's here
            got = execute(exact, [v, a])[0]
            assert same_bits(got, ref), (n, zero, v, a, ref, got)
            fast_differs |= not same_bits(execute(fast, [v, a])[0], ref)
    assert fast_differs


def test_diag_vector_product_gives_numpys_bits():
    """v @ diag(d) for a short vector: XLA's dense product drops the +0.0 start of its sum (an
    all -0 sum is -0; a reduction's schedule is free, ``optimize.exactness``); the rewrite
    gives NumPy's +0, and the NaNs of both."""
    import numpy as np
    from _harness import execute

    from reactant.optimize.exactness import same_bits, special_array

    rng = np.random.default_rng(5)
    for n in (2, 3, 16):
        text = _diag_product_module(n, 1, "select", "-0.0", vector=True)
        exact = rewrite(text, ["dot_diag_select_rhs"])
        assert "dot_general" not in main_body(exact)
        draws = [[np.float32([1, -1, 2] * n)[:n], np.float32([-0.0, 0.0, -0.0] * n)[:n]]]
        draws += [[special_array(rng, (n,), np.float32), special_array(rng, (n,), np.float32)] for _ in range(8)]
        for v, a in draws:
            with np.errstate(all="ignore"):
                npy = a @ np.diag(v)
            got = execute(exact, [v, a])[0]
            assert same_bits(got, npy), (n, v, a, npy, got)
            ref = execute(text, [v, a])[0]
            assert np.array_equal(np.isnan(ref), np.isnan(got)) and ((ref == got) | np.isnan(ref)).all()


@pytest.mark.parametrize("side", ["left", "right"])
def test_traced_np_diag_matmul_becomes_broadcast_multiply(side):
    """Our tracer's np.diag (iota1 - iota0 == 0 mask) is recognised on either side."""
    import numpy as np

    import reactant

    rng = np.random.default_rng(0)
    v = rng.standard_normal(6).astype(np.float32)
    a = rng.standard_normal((6, 5) if side == "left" else (5, 6)).astype(np.float32)

    def f(v, a):
        return np.diag(v) @ a if side == "left" else a @ np.diag(v)

    text = reactant.code_hlo(f, reactant.to_rarray(v), reactant.to_rarray(a), optimize=False)
    from reactant.optimize.patterns import PATTERNS

    before = to_text(parse(text))
    after = rewrite(before, [n for n, p in PATTERNS.items() if p.family == "dot"])
    assert "dot_general" not in main_body(after)
    differential(before, after)
