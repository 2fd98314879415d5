"""The kernels and the evaluator of reactant.ir: StableHLO's exact semantics, checked on edge
cases and differentially against XLA (each op compiled and run through PJRT on the same
inputs: results bit-identical, except transcendental functions, which XLA computes to within
its own error bound)."""

import numpy as np
import pytest

from reactant.ir import kernels as K
from reactant.ir.context import make_context, parse_module
from reactant.ir.evaluate import evaluate_op, evaluate_value
from reactant.ir.types import bfloat16

i8, i32, u32, f32 = np.int8, np.int32, np.uint32, np.float32


def test_integer_arithmetic_wraps():
    a = np.array([127, -128], i8)
    np.testing.assert_array_equal(evaluate_op("stablehlo.add", [a, np.array([1, -1], i8)]), np.array([-128, 127], i8))
    np.testing.assert_array_equal(evaluate_op("stablehlo.multiply", [a, a]), np.array([1, 0], i8))
    assert evaluate_op("stablehlo.negate", [np.array([-128], i8)])[0] == -128


@pytest.mark.parametrize("a, b, q, r", [(7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (-7, -2, 3, -1)])
def test_integer_division_truncates_toward_zero(a, b, q, r):
    x, y = np.array([a], i32), np.array([b], i32)
    assert evaluate_op("stablehlo.divide", [x, y])[0] == q
    assert evaluate_op("stablehlo.remainder", [x, y])[0] == r


@pytest.mark.parametrize("name, args", [
    ("stablehlo.divide", [np.array([1], i32), np.array([0], i32)]),  # division by zero
    ("stablehlo.divide", [np.array([-2**31], i32), np.array([-1], i32)]),  # INT_MIN / -1
    ("stablehlo.remainder", [np.array([5], i32), np.array([0], i32)]),
    ("stablehlo.shift_left", [np.array([1], i32), np.array([32], i32)]),  # shift by the width
    ("stablehlo.count_leading_zeros", [np.array([-1], i32)]),  # XLA's evaluator is wrong there
    ("stablehlo.maximum", [np.array([0.0], f32), np.array([-0.0], f32)]),  # +0/-0 pair
    ("stablehlo.power", [np.array([2], i32), np.array([-1], i32)]),
    ("stablehlo.add", [np.array([True]), np.array([True])]),  # arithmetic on booleans
])
def test_results_stablehlo_leaves_open_are_not_evaluated(name, args):
    assert evaluate_op(name, args) is None


def test_compare_honours_compare_type():
    a, b = np.array([-1], i32), np.array([1], i32)
    assert evaluate_op("stablehlo.compare", [a, b], direction="LT", compare_type="SIGNED")[0]
    assert not evaluate_op("stablehlo.compare", [a, b], direction="LT", compare_type="UNSIGNED")[0]
    n = np.array([np.nan], f32)
    assert not evaluate_op("stablehlo.compare", [n, n], direction="EQ", compare_type="FLOAT")[0]
    assert evaluate_op("stablehlo.compare", [n, n], direction="NE", compare_type="FLOAT")[0]
    assert evaluate_op("stablehlo.compare", [n, n], direction="EQ", compare_type="TOTALORDER") is None


def test_convert_rules():
    assert K.convert(np.array([3.9, -3.9], f32), np.dtype(i32)).tolist() == [3, -3]
    assert K.convert(np.array([np.inf], f32), np.dtype(i32)) is None
    assert K.convert(np.array([3e9], f32), np.dtype(i32)) is None
    assert K.convert(np.array([2**60 + 1], np.int64), np.dtype(np.float64)) is None  # would round twice
    assert K.convert(np.array([2], i32), np.dtype(np.bool_)).tolist() == [True]


def test_transcendentals_round_once_from_float64():
    x = np.array([0.1, 1.7], bfloat16)
    want = np.exp(x.astype(np.float64)).astype(bfloat16)
    np.testing.assert_array_equal(evaluate_op("stablehlo.exponential", [x]), want)


def test_data_movement_kernels():
    x = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(K.broadcast_in_dim(x, [1, 0], (3, 2)), x.T)  # dims in any order
    np.testing.assert_array_equal(K.pad(np.array([1, 2, 3]), 0, [1], [-1], [1]), [0, 1, 0, 2, 0])
    np.testing.assert_array_equal(K.dot_general(x, x, [], [], [1], [1]), x @ x.T)
    np.testing.assert_array_equal(K.reduce(np.array([[1, 2], [3, 4]], i32), 10, [1], "add"), [13, 17])


# -- differential: the kernels against XLA ----------------------------------------------------
_SHORT = {np.dtype(i32): "i32", np.dtype(u32): "ui32", np.dtype(np.uint64): "ui64", np.dtype(f32): "f32", np.dtype(np.float64): "f64",
          np.dtype(np.int64): "i64", np.dtype(i8): "i8"}
_RNG = np.random.default_rng(0)


def _inputs(dt, n=64):
    if dt.kind == "f":
        x = _RNG.standard_normal(n).astype(dt) * 3
        x[:4] = [0.0, -0.0, np.inf, np.nan]
        return x
    info = np.iinfo(dt)
    x = _RNG.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    x[:3] = [0, 1, info.max]
    return x


def _xla(text, args):
    import jax

    from reactant import _jax_adapter as jx

    client = jx.backend()
    dev = client.devices()[0]
    exe = jx.compile_and_load(client, text, [dev], jx.default_compile_options())
    return np.asarray(exe.execute([jx.device_put(a, dev) for a in args])[0])


@pytest.mark.parametrize("name", sorted(set(K.BINARY) - {"atan2", "power"}) + ["power"])
@pytest.mark.parametrize("dt", [i32, u32, f32, i8])
def test_binary_kernels_match_xla(name, dt):
    dt = np.dtype(dt)
    a, b = _inputs(dt), _inputs(dt)
    if name in ("shift_left", "shift_right_arithmetic", "shift_right_logical", "power") and dt.kind in "iu":
        b = (np.abs(b.astype(np.int64)) % (8 * dt.itemsize)).astype(dt)
    if name in ("divide", "remainder") and dt.kind in "iu":
        b = np.where(b == 0, 1, b).astype(dt)
        if dt.kind == "i":
            b = np.where((a == np.iinfo(dt).min) & (b == -1), 1, b).astype(dt)
    if name in ("maximum", "minimum") and dt.kind == "f":
        a, b = a[4:], b[4:]  # +0/-0 pairs are not evaluated
    if dt.kind == "f" and name in ("and", "or", "xor", "shift_left", "shift_right_arithmetic",
                                   "shift_right_logical", "power"):
        pytest.skip("not an op on floats (power: transcendental)")
    want = evaluate_op(f"stablehlo.{name}", [a, b])
    assert want is not None
    t = f"tensor<{a.size}x{_SHORT[dt]}>"
    got = _xla(f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n %r = stablehlo.{name} %a, %b : {t}\n"
               f" return %r : {t}\n}}", [a, b])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("direction", ["EQ", "NE", "LT", "LE", "GT", "GE"])
@pytest.mark.parametrize("dt, ct", [(i32, "SIGNED"), (u32, "UNSIGNED"), (np.uint64, "UNSIGNED"), (f32, "FLOAT")])
def test_compare_matches_xla(direction, dt, ct):
    dt = np.dtype(dt)
    a, b = _inputs(dt), _inputs(dt)
    b[8:16] = a[8:16]
    want = evaluate_op("stablehlo.compare", [a, b], direction=direction, compare_type=ct)
    t, tb = f"tensor<{a.size}x{_SHORT[dt]}>", f"tensor<{a.size}xi1>"
    got = _xla(f"func.func @main(%a: {t}, %b: {t}) -> {tb} {{\n %r = stablehlo.compare {direction}, %a, %b, {ct}"
               f" : ({t}, {t}) -> {tb}\n return %r : {tb}\n}}", [a, b])
    np.testing.assert_array_equal(got, want)


def test_evaluate_value_follows_the_graph_exactly():
    """An unsigned 64-bit compare (which an evaluator widening to int64 gets wrong above 2**63)
    and a broadcast with unsorted dims."""
    text = """func.func @main() -> (tensor<4xi1>, tensor<3x2xi32>) {
  %i = stablehlo.iota dim = 0 : tensor<4xui64>
  %c = stablehlo.constant dense<[18446744073709551615, 0, 1, 2]> : tensor<4xui64>
  %lt = stablehlo.compare LT, %c, %i, UNSIGNED : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xi1>
  %m = stablehlo.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi32>
  %b = stablehlo.broadcast_in_dim %m, dims = [1, 0] : (tensor<2x3xi32>) -> tensor<3x2xi32>
  return %lt, %b : tensor<4xi1>, tensor<3x2xi32>
}"""
    m = parse_module(text, make_context())
    ret = list(m.body.operations[0].regions[0].blocks[0].operations)[-1]
    lt, b = (evaluate_value(v) for v in ret.operands)
    np.testing.assert_array_equal(lt, [False, True, True, True])  # widened to int64, the first is True
    np.testing.assert_array_equal(b, np.arange(6, dtype=i32).reshape(2, 3).T)
