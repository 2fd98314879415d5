"""Errors of the AD pass: each names the op and the user's file/line location; plus the
marker contract's edge cases and the pass registration."""

from __future__ import annotations

import numpy as np
import pytest

from adtest_util import make_context, run
from jaxlib.mlir import ir

from reactant.optimize.autodiff import ADError, expand_all

F = """
  func.func private @f(%x: tensor<3xf64>, %n: tensor<i32>) -> tensor<f64> {
    %0 = "chlo.bessel_i1e"(%x) : (tensor<3xf64>) -> tensor<3xf64> loc("model.py":7:3)
    %1 = stablehlo.sine %x : tensor<3xf64> loc("model.py":8:3)
    %c = stablehlo.constant dense<0.0> : tensor<f64>
    %2 = stablehlo.reduce(%1 init: %c) applies stablehlo.add across dimensions = [0]
        : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
    %3 = stablehlo.reduce(%0 init: %c) applies stablehlo.add across dimensions = [0]
        : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
    %4 = stablehlo.add %2, %3 : tensor<f64>
    return %4 : tensor<f64>
  }
  func.func private @g(%x: tensor<3xf64>, %n: tensor<i32>) -> tensor<f64> {
    %1 = stablehlo.sine %x : tensor<3xf64>
    %c = stablehlo.constant dense<0.0> : tensor<f64>
    %2 = stablehlo.reduce(%1 init: %c) applies stablehlo.add across dimensions = [0]
        : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
    return %2 : tensor<f64>
  }
"""


def module(main_sig: str, marker: str, results: str) -> ir.Module:
    text = f"""module {{
{F}
  func.func public @main({main_sig}) -> ({results.split(',')[0]}) {{
    {marker} loc("model.py":12:5)
    return %r#0 : {results.split(',')[0]}
  }}
}}"""
    with make_context(), ir.Location.unknown():
        return ir.Module.parse(text)


def expect(m, *patterns):
    with pytest.raises(ADError) as ei:
        expand_all(m)
    msg = str(ei.value)
    for p in patterns:
        assert p in msg, msg
    return ei.value


def test_op_without_rule_is_named_with_its_line():
    m = module("%x: tensor<3xf64>, %n: tensor<i32>, %s: tensor<f64>",
               '%r:2 = "enzyme.autodiff"(%x, %n, %s) {fn = @f, activity = ["active", "const"], '
               'ret_activity = ["active"]} : (tensor<3xf64>, tensor<i32>, tensor<f64>) -> (tensor<f64>, tensor<3xf64>)',
               "tensor<f64>, tensor<3xf64>")
    e = expect(m, "no derivative rule for chlo.bessel_i1e", "model.py:7:3")
    assert e.op_name == "chlo.bessel_i1e" and e.location == "model.py:7:3"


def test_op_without_rule_forward_mode():
    m = module("%x: tensor<3xf64>, %t: tensor<3xf64>, %n: tensor<i32>",
               '%r:2 = "enzyme.fwddiff"(%x, %t, %n) {fn = @f, activity = ["dup", "const"], '
               'ret_activity = ["dup"]} : (tensor<3xf64>, tensor<3xf64>, tensor<i32>) -> (tensor<f64>, tensor<f64>)',
               "tensor<f64>, tensor<f64>")
    expect(m, "no derivative rule for chlo.bessel_i1e", "model.py:7:3")


def test_dup_shadow_of_wrong_type():
    m = module("%x: tensor<3xf64>, %sh: tensor<4xf64>, %n: tensor<i32>, %s: tensor<f64>",
               '%r:2 = "enzyme.autodiff"(%x, %sh, %n, %s) {fn = @g, activity = ["dup", "const"], '
               'ret_activity = ["active"]} : (tensor<3xf64>, tensor<4xf64>, tensor<i32>, tensor<f64>) '
               '-> (tensor<f64>, tensor<3xf64>)', "tensor<f64>, tensor<3xf64>")
    expect(m, "shadow of duplicated argument 0", "tensor<4xf64>", "enzyme.autodiff", "model.py:12:5")


def test_forward_tangent_of_wrong_width():
    m = module("%x: tensor<3xf64>, %t: tensor<3xf64>, %n: tensor<i32>",
               '%r:2 = "enzyme.fwddiff"(%x, %t, %n) {fn = @g, activity = ["dup", "const"], '
               'ret_activity = ["dup"], width = 2 : i64} : (tensor<3xf64>, tensor<3xf64>, tensor<i32>) '
               '-> (tensor<f64>, tensor<2xf64>)', "tensor<f64>, tensor<2xf64>")
    expect(m, "tangent of duplicated argument 0", "tensor<2x3xf64>")


def test_activity_length_mismatch():
    m = module("%x: tensor<3xf64>, %n: tensor<i32>, %s: tensor<f64>",
               '%r:2 = "enzyme.autodiff"(%x, %n, %s) {fn = @g, activity = ["active"], '
               'ret_activity = ["active"]} : (tensor<3xf64>, tensor<i32>, tensor<f64>) -> (tensor<f64>, tensor<3xf64>)',
               "tensor<f64>, tensor<3xf64>")
    expect(m, "activity has 1 entries but @g has 2 argument(s)", "model.py:12:5")


def test_active_integer_argument():
    m = module("%x: tensor<3xf64>, %n: tensor<i32>, %s: tensor<f64>",
               '%r:3 = "enzyme.autodiff"(%x, %n, %s) {fn = @g, activity = ["active", "active"], '
               'ret_activity = ["active"]} : (tensor<3xf64>, tensor<i32>, tensor<f64>) '
               '-> (tensor<f64>, tensor<3xf64>, tensor<i32>)', "tensor<f64>, tensor<3xf64>, tensor<i32>")
    expect(m, "argument 1 of @g is marked 'active'", "tensor<i32>", "model.py:12:5")


def test_reverse_active_result_without_seed():
    m = module("%x: tensor<3xf64>, %n: tensor<i32>",
               '%r:2 = "enzyme.autodiff"(%x, %n) {fn = @g, activity = ["active", "const"], '
               'ret_activity = ["active"]} : (tensor<3xf64>, tensor<i32>) -> (tensor<f64>, tensor<3xf64>)',
               "tensor<f64>, tensor<3xf64>")
    expect(m, "needs one seed", "model.py:12:5")


def test_unknown_function_and_activity():
    m = module("%x: tensor<3xf64>, %n: tensor<i32>, %s: tensor<f64>",
               '%r:2 = "enzyme.autodiff"(%x, %n, %s) {fn = @nope, activity = ["active", "const"], '
               'ret_activity = ["active"]} : (tensor<3xf64>, tensor<i32>, tensor<f64>) -> (tensor<f64>, tensor<3xf64>)',
               "tensor<f64>, tensor<3xf64>")
    expect(m, "@nope is not defined")
    m = module("%x: tensor<3xf64>, %t: tensor<3xf64>, %n: tensor<i32>",
               '%r:2 = "enzyme.fwddiff"(%x, %t, %n) {fn = @g, activity = ["active", "const"], '
               'ret_activity = ["dup"]} : (tensor<3xf64>, tensor<3xf64>, tensor<i32>) -> (tensor<f64>, tensor<f64>)',
               "tensor<f64>, tensor<f64>")
    expect(m, "activity[0] = 'active' is not one of ['const', 'dup']")


def test_result_types_must_match_contract():
    m = module("%x: tensor<3xf64>, %n: tensor<i32>, %s: tensor<f64>",
               '%r:1 = "enzyme.autodiff"(%x, %n, %s) {fn = @g, activity = ["active", "const"], '
               'ret_activity = ["active"]} : (tensor<3xf64>, tensor<i32>, tensor<f64>) -> (tensor<f64>)',
               "tensor<f64>")
    expect(m, "do not match the contract")


def test_enzyme_style_activity_attributes_and_pass_registration():
    from reactant.optimize.passes import PASSES, PassOptions, run_pipeline
    from reactant.optimize.pipelines import compile_pipeline

    assert "autodiff" in PASSES and "autodiff" in compile_pipeline("O0")
    m = module("%x: tensor<3xf64>, %n: tensor<i32>, %s: tensor<f64>",
               '%r:2 = "enzyme.autodiff"(%x, %n, %s) {fn = @g, activity = [#enzyme<activity enzyme_active>, '
               '#enzyme<activity enzyme_const>], ret_activity = [#enzyme<activity enzyme_active>]} '
               ': (tensor<3xf64>, tensor<i32>, tensor<f64>) -> (tensor<f64>, tensor<3xf64>)',
               "tensor<f64>, tensor<3xf64>")
    # main returns only r#0; make it return the gradient too
    run_pipeline(m, ["autodiff"], PassOptions())
    assert "enzyme." not in str(m)


@pytest.mark.parametrize("level", ["O0", ["inline", "autodiff", "cse"]], ids=["O0", "passes"])
def test_pipeline_end_to_end(level):
    from reactant.optimize.passes import run_pipeline
    from reactant.optimize.pipelines import compile_pipeline

    text = """module {
  func.func private @g(%x: tensor<3xf64>) -> tensor<f64> {
    %1 = stablehlo.sine %x : tensor<3xf64>
    %2 = stablehlo.multiply %1, %x : tensor<3xf64>
    %c = stablehlo.constant dense<0.0> : tensor<f64>
    %3 = stablehlo.reduce(%2 init: %c) applies stablehlo.add across dimensions = [0]
        : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
    return %3 : tensor<f64>
  }
  func.func public @main(%x: tensor<3xf64>, %s: tensor<f64>) -> (tensor<f64>, tensor<3xf64>) {
    %r:2 = "enzyme.autodiff"(%x, %s) {fn = @g, activity = ["active"], ret_activity = ["active"]}
        : (tensor<3xf64>, tensor<f64>) -> (tensor<f64>, tensor<3xf64>)
    return %r#0, %r#1 : tensor<f64>, tensor<3xf64>
  }
}"""
    x = np.array([0.3, -1.2, 2.0])
    with make_context(), ir.Location.unknown():
        m = ir.Module.parse(text)
    run_pipeline(m, compile_pipeline(level) if isinstance(level, str) else level)
    v, g = run(m, x, np.float64(2.0))
    np.testing.assert_allclose(v, np.sum(np.sin(x) * x))
    np.testing.assert_allclose(g, 2.0 * (np.cos(x) * x + np.sin(x)))


def test_create_marker_builds_the_contract():
    from jaxlib.mlir.dialects import func

    from reactant.ir.markers import create_marker

    text = """module {
  func.func private @g(%x: tensor<3xf64>, %n: tensor<i32>) -> (tensor<f64>, tensor<3xf64>) {
    %1 = stablehlo.sine %x : tensor<3xf64>
    %c = stablehlo.constant dense<0.0> : tensor<f64>
    %2 = stablehlo.reduce(%1 init: %c) applies stablehlo.add across dimensions = [0]
        : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
    return %2, %1 : tensor<f64>, tensor<3xf64>
  }
}"""
    with make_context(), ir.Location.unknown():
        m = ir.Module.parse(text)
        g = list(m.body.operations)[0]
        f64 = ir.F64Type.get()
        t3, ts = ir.RankedTensorType.get([3], f64), ir.RankedTensorType.get([], f64)
        ti = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
        with ir.InsertionPoint(m.body):
            main = func.FuncOp("main", ir.FunctionType.get([t3, t3, ti, ts, t3, t3], [ts, t3, t3, ts, t3]))
            main.attributes["sym_visibility"] = ir.StringAttr.get("public")
            entry = main.add_entry_block()
        with ir.InsertionPoint(entry):
            x, sh, n, s0, s1, tx = entry.arguments
            r = create_marker("reverse", g, [x, sh, n, s0, s1], ["dup", "const"], ["active", "activenoneed"])
            f = create_marker("forward", g, [x, tx, n], ["dup", "const"], ["dupnoneed", "dup"])
            func.ReturnOp([r.results[0], r.results[1], f.results[0], f.results[1], f.results[2]])
    expand_all(m)
    x = np.array([0.3, -1.0, 2.0])
    sh, s1, tx = np.ones(3), np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.0, -1.0])
    v, shadow, p1, t0, t1 = run(m, x, sh, np.int32(0), np.float64(2.0), s1, tx)
    np.testing.assert_allclose(v, np.sum(np.sin(x)))
    np.testing.assert_allclose(shadow, sh + np.cos(x) * (2.0 + s1))
    np.testing.assert_allclose(t0, np.sum(np.cos(x) * tx))
    np.testing.assert_allclose(p1, np.sin(x))
    np.testing.assert_allclose(t1, np.cos(x) * tx)
