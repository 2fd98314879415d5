"""One loop analysis (reactant.ir.loops) and one cloner/inliner (reactant.ir.regions), on
hand-written loops and functions."""

import numpy as np
import pytest
from jaxlib.mlir import ir

from reactant.ir.context import functions, make_context, parse_module
from reactant.ir.loops import analyze, loop_counter_range
from reactant.ir.regions import captured_values, clone_op, inline_call, regions_equivalent


def _loop(init: str, step_op: str, step: str, cmp: str, bound: str, ty: str = "i32", ct: str = "SIGNED"):
    """A while loop over (counter, f32 accumulator); the bound is a constant or, with
    ``bound='slot'``, a pass-through slot initialised to 10."""
    t = f"tensor<{ty}>"
    bnd = "%b" if bound == "slot" else f"%lim"
    return parse_module(f"""func.func @main(%x: tensor<f32>) -> tensor<f32> {{
  %i0 = stablehlo.constant dense<{init}> : {t}
  %b0 = stablehlo.constant dense<10> : {t}
  %r:3 = stablehlo.while(%i = %i0, %acc = %x, %b = %b0) : {t}, tensor<f32>, {t}
   cond {{
     %lim = stablehlo.constant dense<{bound if bound != 'slot' else 0}> : {t}
     %c = stablehlo.compare {cmp}, %i, {bnd}, {ct} : ({t}, {t}) -> tensor<i1>
     stablehlo.return %c : tensor<i1>
   }} do {{
     %s = stablehlo.constant dense<{step}> : {t}
     %n = stablehlo.{step_op} %i, %s : {t}
     %a = stablehlo.add %acc, %acc : tensor<f32>
     stablehlo.return %n, %a, %b : {t}, tensor<f32>, {t}
   }}
  return %r#1 : tensor<f32>
}}""", make_context())


def _while(m):
    return list(m.body.operations[0].regions[0].blocks[0].operations)[2]


@pytest.mark.parametrize("init, step_op, step, cmp, bound, ty, ct, trip, rng", [
    ("0", "add", "1", "LT", "10", "i32", "SIGNED", 10, (0, 9)),  # fori_loop
    ("0", "add", "3", "LE", "10", "i64", "SIGNED", 4, (0, 10)),
    ("10", "subtract", "1", "GT", "0", "i32", "SIGNED", 10, None),  # counting down: no range
    ("10", "add", "-2", "GE", "0", "i32", "SIGNED", 6, None),
    ("0", "add", "2", "NE", "10", "i32", "SIGNED", 5, None),
    ("0", "add", "3", "NE", "10", "i32", "SIGNED", None, None),  # never equal: unknown
    ("0", "add", "1", "LT", "slot", "i32", "SIGNED", 10, (0, 9)),  # bound in a pass-through slot
    ("0", "add", "1", "LT", "200", "ui8", "UNSIGNED", 200, (0, 199)),
    ("0", "add", "100", "LT", "120", "i8", "SIGNED", 2, None),  # 119 + 100 overflows i8: no range
    ("5", "add", "1", "LT", "5", "i32", "SIGNED", 0, None),  # never runs
])
def test_while_loop_info(init, step_op, step, cmp, bound, ty, ct, trip, rng):
    m = _loop(init, step_op, step, cmp, bound, ty, ct)
    info = analyze(_while(m))
    assert info.passthrough == {2}
    assert 0 in info.steps and 1 not in info.steps
    assert info.trip_count == trip
    assert info.ranges.get(0) == rng
    assert loop_counter_range(info.body.arguments[0]) == rng
    assert loop_counter_range(info.body.arguments[1]) is None


def test_loop_without_a_counter():
    m = parse_module("""func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %r = stablehlo.while(%a = %x) : tensor<f32>
   cond { %z = stablehlo.constant dense<100.0> : tensor<f32>
          %c = stablehlo.compare LT, %a, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1> }
   do { %n = stablehlo.add %a, %a : tensor<f32>
        stablehlo.return %n : tensor<f32> }
  return %r : tensor<f32>
}""", make_context())
    info = analyze(list(m.body.operations[0].regions[0].blocks[0].operations)[0])
    assert info.steps == {} and info.trip_count is None and info.counter is None and info.ranges == {}


def test_clone_op_remaps_values_captured_by_its_regions():
    ctx = make_context()
    m = parse_module("""func.func @main(%x: tensor<f32>, %y: tensor<f32>, %p: tensor<i1>) -> (tensor<f32>, tensor<f32>) {
  %r = "stablehlo.if"(%p) ({
      %a = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %a : tensor<f32>
    }, {
      stablehlo.return %y : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>
  return %r, %r : tensor<f32>, tensor<f32>
}""", ctx)
    block = m.body.operations[0].regions[0].blocks[0]
    x, y, p = block.arguments
    branch = list(block.operations)[0]
    assert captured_values(branch) == [x, y]
    with ctx, ir.Location.unknown(), ir.InsertionPoint(list(block.operations)[-1]):
        new = clone_op(branch, {x: y, y: x, p: p}.__getitem__)  # swap x and y
    assert captured_values(new) == [y, x]
    assert not regions_equivalent(new.regions[0], branch.regions[0])
    assert regions_equivalent(branch.regions[1], branch.regions[1])
    m.operation.verify()


def test_inlining_nested_calls_keeps_the_values():
    from reactant import _jax_adapter as jx
    from reactant.ir.context import to_text

    m = parse_module("""
func.func private @g(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.multiply %a, %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @f(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @g(%a) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = stablehlo.subtract %0, %b : tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @f(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}""", make_context())
    funcs = functions(m)
    for _ in range(2):
        for fn in (funcs["main"],):
            for op in list(fn.regions[0].blocks[0].operations):
                if op.operation.name == "func.call":
                    inline_call(op.operation, funcs[ir.FlatSymbolRefAttr(op.attributes["callee"]).value])
    m.operation.verify()
    text = to_text(m)
    main = text[text.index("@main"):]
    assert "func.call" not in main
    client = jx.backend()
    dev = client.devices()[0]
    exe = jx.compile_and_load(client, text, [dev], jx.default_compile_options())
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(np.asarray(exe.execute([jx.device_put(x, dev)])[0]), x * x - x)
