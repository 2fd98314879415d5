"""The op table (facts read by every layer) and the op builders (result types by the shape
rules, checked by MLIR's verifier, values by running the module)."""

import numpy as np
import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from reactant.ir import build as B
from reactant.ir.context import make_context, parse_module
from reactant.ir.opinfo import OPS, info, is_pure_op, reduce_body_kind, reduce_identity
from reactant.ir.types import element_type, ranked


def test_table_facts():
    assert info("stablehlo.add").commutative and info("stablehlo.add").reducible
    assert not info("stablehlo.subtract").commutative
    assert info("stablehlo.exponential").transcendental and not info("stablehlo.add").transcendental
    assert not info("stablehlo.rng").pure and not info("stablehlo.custom_call").pure
    assert not info("my.unknown_op").pure  # unknown ops: conservative
    assert all(i.elementwise for i in OPS.values() if i.kernel is not None)


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
