"""One loop analysis (reactant.ir.loops) and one cloner/inliner (reactant.ir.regions), on
hand-written loops and functions."""

import numpy as np
import pytest
from jaxlib.mlir import ir

from reactant.ir.context import functions, make_context, parse_module
from reactant.ir import loops
from reactant.ir.loops import analyze, int_range, loop_counter_range, unchanged_ir
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


_NESTED = """func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<BOUND> : tensor<i32>
  %four = stablehlo.constant dense<4> : tensor<i32>
  %r:2 = stablehlo.while(%i = %z, %acc = %x) : tensor<i32>, tensor<f32>
   cond {
     %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
     stablehlo.return %c : tensor<i1>
   } do {
     %i1 = stablehlo.add %i, %one : tensor<i32>
     %s:2 = stablehlo.while(%j = %z, %a = %acc) : tensor<i32>, tensor<f32>
      cond {
        %c2 = stablehlo.compare LT, %j, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %c2 : tensor<i1>
      } do {
        %j1 = stablehlo.add %j, %one : tensor<i32>
        %k = stablehlo.add %i, %j : tensor<i32>
        %a2 = stablehlo.add %a, %a : tensor<f32>
        stablehlo.return %j1, %a2 : tensor<i32>, tensor<f32>
      }
     stablehlo.return %i1, %s#1 : tensor<i32>, tensor<f32>
   }
  return %r#1 : tensor<f32>
}"""


def _inner_sum(m):
    """``%k = i + j`` in the inner loop of ``_NESTED``."""
    outer = list(m.body.operations[0].regions[0].blocks[0].operations)[4]
    inner = list(outer.regions[1].blocks[0].operations)[1]
    return list(inner.regions[1].blocks[0].operations)[1].results[0]


def test_range_queries_share_their_loop_facts_only_while_the_ir_is_unchanged(monkeypatch):
    m = parse_module(_NESTED.replace("BOUND", "8"), make_context())
    k = _inner_sum(m)
    assert int_range(k) == (0, 10)  # i in [0, 7], j in [0, 3]
    calls = []
    real = loops.analyze
    monkeypatch.setattr(loops, "analyze", lambda w: calls.append(w) or real(w))
    with unchanged_ir():
        assert int_range(k) == int_range(k) == (0, 10)
    assert len(calls) == 2  # each loop analyzed once for both queries
    int_range(k), int_range(k)
    assert len(calls) == 6  # outside a block, each query analyzes afresh
    # the IR changes between queries: the next one sees the new bound
    with m.context:
        n = list(m.body.operations[0].regions[0].blocks[0].operations)[2]
        n.attributes["value"] = ir.DenseElementsAttr.get(np.array(4, np.int32), type=n.results[0].type)
    assert int_range(k) == (0, 6)


def test_scalar_int_values_of_constants_wrap_as_their_type():
    # (read without NumPy: unsigned constants come back from MLIR as signed)
    from reactant.ir.evaluate import scalar_int_value

    m = parse_module("""func.func @main() -> (tensor<ui64>, tensor<i32>, tensor<1xui8>, tensor<i1>, tensor<2xi32>, tensor<i64>) {
  %a = stablehlo.constant dense<18446744073709551615> : tensor<ui64>
  %b = stablehlo.constant dense<-7> : tensor<i32>
  %c = stablehlo.constant dense<200> : tensor<1xui8>
  %d = stablehlo.constant dense<true> : tensor<i1>
  %e = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %f = stablehlo.constant dense<-9223372036854775808> : tensor<i64>
  return %a, %b, %c, %d, %e, %f : tensor<ui64>, tensor<i32>, tensor<1xui8>, tensor<i1>, tensor<2xi32>, tensor<i64>
}""", make_context())
    got = [scalar_int_value(o.results[0]) for o in m.body.operations[0].regions[0].blocks[0].operations
           if o.operation.name == "stablehlo.constant"]
    assert got == [2**64 - 1, -7, 200, None, None, -2**63]


@pytest.mark.parametrize("cmp, ct, want", [
    ("LT, %j, %i1", "SIGNED", (0, 7)),  # j < i + 1 with i in [0, 7]: j in [0, 7]
    ("LE, %j, %i1", "SIGNED", (0, 8)),  # j <= i + 1
    ("GT, %i1, %j", "SIGNED", (0, 7)),  # the bound on the left
    ("LT, %j, %i1", "UNSIGNED", None),  # an unsigned compare of signed counters: no range
    ("LT, %j, %x2", "SIGNED", None),  # a bound of unknown range
])
def test_a_counter_below_a_bound_of_known_range_has_a_range(cmp, ct, want):
    # an inner loop ``for j in range(i + 1)``: the body runs only while j is below the bound,
    # at most the bound's largest value
    text = _NESTED.replace("BOUND", "8").replace("%c2 = stablehlo.compare LT, %j, %four, SIGNED",
                                                 f"%c2 = stablehlo.compare {cmp}, {ct}")
    text = text.replace("func.func @main(%x: tensor<f32>)", "func.func @main(%x: tensor<f32>, %x2: tensor<i32>)")
    m = parse_module(text, make_context())
    j = _inner_sum(m).owner.operands[1]
    assert loop_counter_range(j) == want
    if want is not None:
        assert int_range(_inner_sum(m)) == (0, 7 + want[1])  # i + j


def test_a_loop_still_being_built_has_no_facts():
    # (the tracer asks for index ranges while it builds a loop's body: no return there yet)
    m = _loop("0", "add", "1", "LT", "10", "i32", "SIGNED")
    w = _while(m)
    assert analyze(w).trip_count == 10
    body = w.regions[1].blocks[0]
    list(body.operations)[-1].operation.erase()  # the body's return
    assert analyze(w) is None
    assert loop_counter_range(body.arguments[0]) is None
    assert int_range(body.arguments[0]) is None
