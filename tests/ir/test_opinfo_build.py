"""The op table (facts read by every layer) and the op builders (result types by the shape
rules, checked by MLIR's verifier, values by running the module)."""

import numpy as np
import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from reactant.ir import build as B
from reactant.ir.context import make_context, parse_module
from reactant.ir.opinfo import OPS, combiner, has_effect, info, is_pure_op, reduce_body_kind, reduce_identity
from reactant.ir.types import element_type, ranked


def test_table_facts():
    assert info("stablehlo.add").commutative and info("stablehlo.add").reducible
    assert not info("stablehlo.subtract").commutative
    assert info("stablehlo.exponential").transcendental and not info("stablehlo.add").transcendental
    assert not info("stablehlo.rng").pure and not info("stablehlo.custom_call").pure
    assert not info("my.unknown_op").pure  # unknown ops: conservative
    assert all(i.elementwise for i in OPS.values() if i.kernel is not None)


def test_effects_collectives_moves_and_reduce_kinds():
    collectives = {"stablehlo." + n for n in ("all_reduce", "all_gather", "all_to_all", "reduce_scatter",
                                               "collective_permute", "collective_broadcast")}
    assert {n for n, i in OPS.items() if i.collective} == collectives
    # effects: the table's impure ops, collectives included (rerolling never rolls them); an op
    # the table does not know is not counted (chlo.sinh rolls)
    assert all(has_effect(n) for n in collectives | {"stablehlo.custom_call", "stablehlo.rng_bit_generator"})
    assert not has_effect("stablehlo.add") and not has_effect("chlo.sinh") and not has_effect("my.op")
    assert {n for n, i in OPS.items() if i.move} == {
        "stablehlo." + n for n in ("broadcast_in_dim", "broadcast", "reshape", "transpose", "slice", "convert")}
    kinds = {n: i.reduce_kind for n, i in OPS.items() if i.reducible}
    assert kinds == {"stablehlo.add": "add", "stablehlo.multiply": "mul", "stablehlo.maximum": "max",
                     "stablehlo.minimum": "min", "stablehlo.and": "and", "stablehlo.or": "or"}


def test_purity_looks_into_regions_and_reduce_kinds():
    m = parse_module("""func.func @main(%x: tensor<4xf32>, %k: tensor<i32>) -> (tensor<f32>, tensor<i32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %w = stablehlo.while(%i = %k) : tensor<i32>
   cond { %c = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1> }
   do { %t = stablehlo.create_token : !stablehlo.token
        stablehlo.return %i : tensor<i32> }
  return %s, %w : tensor<f32>, tensor<i32>
}""", make_context())
    ops = list(m.body.operations[0].regions[0].blocks[0].operations)
    red, loop = ops[1], ops[2]
    assert reduce_body_kind(red) == "stablehlo.maximum" and is_pure_op(red)
    assert not is_pure_op(loop)  # a token is created inside its body


@pytest.mark.parametrize("kind, dt, want", [
    ("stablehlo.add", np.float32, 0.0), ("stablehlo.maximum", np.float32, float("-inf")),
    ("stablehlo.minimum", np.int8, 127), ("stablehlo.and", np.uint8, 255), ("stablehlo.and", np.int32, -1),
    ("stablehlo.or", np.bool_, False), ("stablehlo.multiply", np.bool_, True), ("stablehlo.add", np.complex64, None),
])
def test_reduce_identities(kind, dt, want):
    with make_context(), ir.Location.unknown():
        assert reduce_identity(kind, element_type(np.dtype(dt))) == want


def _run(build, args):
    """Build @main(args...) with ``build`` over its block arguments, verify, run with XLA."""
    from reactant import _jax_adapter as jx

    ctx = make_context()
    with ctx, ir.Location.unknown():
        m = ir.Module.create()
        types = [ranked(a.shape, element_type(a.dtype)) for a in args]
        with ir.InsertionPoint(m.body):
            f = func.FuncOp("main", ir.FunctionType.get(types, []))
            block = f.add_entry_block()
        with ir.InsertionPoint(block):
            outs = build(*block.arguments)
            func.ReturnOp(outs)
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [o.type for o in outs]))
        m.operation.verify()
        text = str(m)
    client = jx.backend()
    dev = client.devices()[0]
    exe = jx.compile_and_load(client, text, [dev], jx.default_compile_options())
    return [np.asarray(o) for o in exe.execute([jx.device_put(a, dev) for a in args])]


def test_builders_give_verified_types_and_numpy_values():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = np.arange(20, dtype=np.float32).reshape(4, 5)

    def build(a, b):
        zero = B.scalar(0.0, ir.F32Type.get())
        return [
            B.transpose(a, [2, 0, 1]),
            B.slice(a, [0, 1, 0], [2, 3, 4], [1, 1, 2]),
            B.pad(a, zero, [1, 0, 0], [0, -1, 1], [0, 1, 0]),
            B.concatenate([a, a], 1),
            B.dot_general(a, b, [], [], [2], [0]),
            B.reduce(a, zero, [0, 2]),
            B.broadcast_in_dim(B.reduce_sum(a, [1]), [2, 5, 4], [0, 2]),
            B.reduce_window(a, zero, [1, 2, 2], [1, 1, 2], [1, 1, 1], [1, 1, 1], [(0, 0), (0, 0), (0, 0)]),
            B.select(B.compare(a, B.full(5.0, a.type), "GT"), a, B.zeros_like(a)),
            B.gather(a, B.constant(np.array([[1], [0]], np.int32)), offset_dims=[1, 2], collapsed_slice_dims=[0],
                     start_index_map=[0], index_vector_dim=1, slice_sizes=[1, 3, 4]),
        ]

    outs = _run(build, [x, y])
    pad = np.zeros((3, 5, 5), np.float32)
    pad[1:, 0::2, :4] = x[:, :3]
    want = [x.transpose(2, 0, 1), x[:, 1:3, ::2], pad[:, :4], np.concatenate([x, x], 1), x @ y,
            x.sum((0, 2)), np.broadcast_to(x.sum(1)[:, None, :], (2, 5, 4)),
            x[:, :2, 0::2] + x[:, 1:, 0::2] + x[:, :2, 1::2] + x[:, 1:, 1::2], np.where(x > 5, x, 0), x[[1, 0]]]
    for got, w in zip(outs, want):
        np.testing.assert_allclose(got, w, rtol=1e-6)


def test_identity_builders_emit_nothing():
    ctx = make_context()
    with ctx, ir.Location.unknown():
        m = parse_module("func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n return %a : tensor<2x3xf32>\n}", ctx)
        a = m.body.operations[0].regions[0].blocks[0].arguments[0]
        assert B.reshape(a, [2, 3]) is a or B.reshape(a, [2, 3]) == a
        assert B.transpose(a, [0, 1]) == a and B.slice(a, [0, 0], [2, 3]) == a
        assert B.pad(a, a, [0, 0], [0, 0]) == a and B.concatenate([a], 0) == a and B.reduce(a, a, []) == a


def test_combiner_of_reductions_collectives_and_scatter():
    """The op a one-value region combines with, whatever the op holding it (its reduce kind
    comes from the table); other bodies have none."""
    with make_context(), ir.Location.unknown():
        m = ir.Module.create()
        t = ranked([8], ir.F32Type.get())
        with ir.InsertionPoint(m.body):
            f = func.FuncOp("main", ir.FunctionType.get([t], []))
            block = f.add_entry_block()
        with ir.InsertionPoint(block):
            x = block.arguments[0]
            zero = B.scalar(0.0, ir.F32Type.get())
            ar = B.all_reduce(x, [[0]], "stablehlo.maximum").owner
            rw = B.reduce_window(x, zero, [2], [1], [1], [1], [(0, 0)], "stablehlo.multiply").owner
            idx = B.constant(np.array([[1]], np.int32))
            dn = dict(update_window_dims=[], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0],
                      index_vector_dim=1)
            upd = B.constant(np.array([1.0], np.float32))
            sc_add = B.scatter(x, idx, upd, **dn).owner
            sc_set = B.scatter(x, idx, upd, combiner=None, **dn).owner
            sub = B.variadic_reduce([x], [zero], [0], lambda blk: [B.subtract(blk.arguments[1], blk.arguments[0])])
        assert info(combiner(ar).name).reduce_kind == "max"
        assert info(combiner(rw).name).reduce_kind == "mul"
        assert info(combiner(sc_add).name).reduce_kind == "add"
        assert combiner(sc_set) is None
        red = sub[0].owner
        assert combiner(red).name == "stablehlo.subtract" and not info("stablehlo.subtract").reducible
        assert reduce_body_kind(red) is None


def test_region_builders_with_callable_bodies():
    """Variadic reduce (argmax), sort with a comparator, and the elementwise and linear-algebra
    builders the tracer uses: verified types and NumPy's values."""
    x = np.array([[3.0, -1.0, 7.0, 6.0], [0.5, 2.0, -4.0, 0.0]], np.float32)
    spd = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)

    def build(a, p):
        f32, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(32)
        idx = B.iota(ranked([2, 4], i32), 1)

        def argmax(blk):
            av, ai, bv, bi = blk.arguments
            pick = B.compare(av, bv, "GE")
            return [B.select(pick, av, bv), B.select(pick, ai, bi)]

        def less(blk):
            return [B.compare(blk.arguments[0], blk.arguments[1], "LT")]

        mx, am = B.variadic_reduce([a, idx], [B.scalar(float("-inf"), f32), B.scalar(0, i32)], [1], argmax)
        sa, si = B.sort([a, idx], 1, less)
        return [mx, am, sa, si, B.bitcast_convert(a, i32), B.is_finite(B.divide(a, B.zeros_like(a))),
                B.sinh(a), B.cholesky(p, lower=True), B.round_nearest_even(a), B.shift_left(idx, idx)]

    mx, am, sa, si, bits, fin, sh, ch, rne, shl = _run(build, [x, spd])
    np.testing.assert_array_equal(mx, x.max(1))
    np.testing.assert_array_equal(am, x.argmax(1))
    np.testing.assert_array_equal(sa, np.sort(x, 1, kind="stable"))
    np.testing.assert_array_equal(si, np.argsort(x, 1, kind="stable"))
    np.testing.assert_array_equal(bits, x.view(np.int32))
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(fin, np.isfinite(x / np.zeros_like(x)))
    np.testing.assert_allclose(sh, np.sinh(x), rtol=1e-6)
    np.testing.assert_allclose(np.tril(ch), np.linalg.cholesky(spd), rtol=1e-6)
    np.testing.assert_array_equal(rne, np.rint(x))
    i = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(shl, np.broadcast_to(i << i, (2, 4)))


def test_decomposition_and_rng_builders_types():
    """The decomposition marker's and rng_bit_generator's result types come from their rules."""
    with make_context(), ir.Location.unknown():
        m = ir.Module.create()
        a_t = ranked([3, 5, 4], ir.F64Type.get())
        s_t = ranked([2], ir.IntegerType.get_unsigned(64))
        with ir.InsertionPoint(m.body):
            f = func.FuncOp("main", ir.FunctionType.get([a_t, s_t], []))
            block = f.add_entry_block()
        with ir.InsertionPoint(block):
            a, s = block.arguments
            u, sv, vh = B.decomposition("svd", [a], {"full_matrices": False, "compute_uv": True})
            s2, bits = B.rng_bit_generator(s, [6], ir.IntegerType.get_unsigned(32))
            func.ReturnOp([u, sv, vh, s2, bits])
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a_t, s_t], [v.type for v in (u, sv, vh, s2, bits)]))
        m.operation.verify()
        assert [str(v.type) for v in (u, sv, vh, s2, bits)] == [
            "tensor<3x5x4xf64>", "tensor<3x4xf64>", "tensor<3x4x4xf64>", "tensor<2xui64>", "tensor<6xui32>"]
        assert "reactant.linalg.svd" in str(u.owner) and "THREE_FRY" in str(bits.owner)


def test_tracing_ops_build_through_ir_build():
    """The tracer's Ops layer creates no op itself: every op comes from its builder in
    ``reactant.ir.build`` (one per op, with its shape rule)."""
    import ast
    import pathlib

    ops_dir = pathlib.Path(__file__).resolve().parents[2] / "tracing" / "ops"
    for path in sorted(ops_dir.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                assert node.attr not in ("Operation", "create"), f"{path.name}:{node.lineno} creates an op"
            if isinstance(node, ast.ImportFrom) and node.module:
                assert "dialects" not in node.module, f"{path.name}:{node.lineno} imports MLIR dialect builders"
