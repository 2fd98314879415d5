"""Markers inside loops and inside differentiated functions (expanded innermost first), and
small edge cases of the contract (identity, constants, repeated results, complex inputs)."""

from __future__ import annotations

import numpy as np

from adtest_util import Marker, build, check_function, check_text, expand, jax, jnp, lower, make_context, run
from jax import lax
from jaxlib.mlir import ir

R = np.random.default_rng(5)

LOSS = """
  func.func private @loss(%w: tensor<3xf64>, %x: tensor<3xf64>) -> tensor<f64> {
    %0 = stablehlo.multiply %w, %x : tensor<3xf64>
    %1 = stablehlo.tanh %0 : tensor<3xf64>
    %2 = stablehlo.multiply %1, %1 : tensor<3xf64>
    %3 = stablehlo.subtract %2, %x : tensor<3xf64>
    %c = stablehlo.constant dense<0.0> : tensor<f64>
    %4 = stablehlo.reduce(%3 init: %c) applies stablehlo.add across dimensions = [0]
        : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
    return %4 : tensor<f64>
  }
"""

TRAIN = """module {
""" + LOSS + """
  func.func private @train(%w0: tensor<3xf64>, %x: tensor<3xf64>, %lr: tensor<f64>) -> tensor<f64> {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.while(%i = %c0, %w = %w0) : tensor<i32>, tensor<3xf64>
    cond {
      %c4 = stablehlo.constant dense<4> : tensor<i32>
      %p = stablehlo.compare LT, %i, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1.0> : tensor<f64>
      %g:2 = "enzyme.autodiff"(%w, %x, %one) {fn = @loss, activity = ["active", "const"],
                                               ret_activity = ["active"]}
          : (tensor<3xf64>, tensor<3xf64>, tensor<f64>) -> (tensor<f64>, tensor<3xf64>)
      %lrb = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f64>) -> tensor<3xf64>
      %step = stablehlo.multiply %g#1, %lrb : tensor<3xf64>
      %w2 = stablehlo.subtract %w, %step : tensor<3xf64>
      %c1 = stablehlo.constant dense<1> : tensor<i32>
      %i2 = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %i2, %w2 : tensor<i32>, tensor<3xf64>
    }
    %l = func.call @loss(%r#1, %x) : (tensor<3xf64>, tensor<3xf64>) -> tensor<f64>
    return %l : tensor<f64>
  }
  func.func public @main(%w0: tensor<3xf64>, %x: tensor<3xf64>, %lr: tensor<f64>) -> tensor<f64> {
    %r = func.call @train(%w0, %x, %lr) : (tensor<3xf64>, tensor<3xf64>, tensor<f64>) -> tensor<f64>
    return %r : tensor<f64>
  }
}"""


def jloss(w, x):
    return jnp.sum(jnp.tanh(w * x) ** 2 - x)


def jtrain(w0, x, lr):
    w = lax.fori_loop(0, 4, lambda i, w: w - lr * jax.grad(jloss)(w, x), w0)
    return jloss(w, x)


def test_gradient_descent_loop_and_its_meta_gradient():
    w0, x, lr = R.standard_normal(3), R.standard_normal(3), np.float64(0.3)
    # the training loop alone (a marker inside a loop body)
    with make_context(), ir.Location.unknown():
        m = ir.Module.parse(TRAIN)
    expand(m)
    (val,) = run(m, w0, x, lr)
    np.testing.assert_allclose(val, jtrain(w0, x, lr), rtol=1e-12)
    # the gradient of the whole training loop w.r.t. w0 and lr (nested markers, one module)
    grads, _, (seed,) = check_text(TRAIN, [w0, x, lr], active=[0, 2])
    jg = jax.grad(jtrain, argnums=(0, 2))(w0, x, lr)
    np.testing.assert_allclose(grads[0], seed * jg[0], rtol=1e-10)
    np.testing.assert_allclose(grads[1], seed * jg[1], rtol=1e-10)


HVP = """module {
  func.func private @f(%x: tensor<4xf64>) -> tensor<f64> {
    %0 = stablehlo.sine %x : tensor<4xf64>
    %1 = stablehlo.multiply %0, %x : tensor<4xf64>
    %c = stablehlo.constant dense<0.0> : tensor<f64>
    %2 = stablehlo.reduce(%1 init: %c) applies stablehlo.add across dimensions = [0]
        : (tensor<4xf64>, tensor<f64>) -> tensor<f64>
    return %2 : tensor<f64>
  }
  func.func private @g(%x: tensor<4xf64>) -> tensor<4xf64> {
    %one = stablehlo.constant dense<1.0> : tensor<f64>
    %r = "enzyme.autodiff"(%x, %one) {fn = @f, activity = ["active"], ret_activity = ["activenoneed"]}
        : (tensor<4xf64>, tensor<f64>) -> tensor<4xf64>
    return %r : tensor<4xf64>
  }
  func.func public @main(%x: tensor<4xf64>, %v: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
    %r:2 = "enzyme.fwddiff"(%x, %v) {fn = @g, activity = ["dup"], ret_activity = ["dup"]}
        : (tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>)
    return %r#0, %r#1 : tensor<4xf64>, tensor<4xf64>
  }
}"""


def test_forward_over_reverse_in_one_module():
    x, v = R.standard_normal(4), R.standard_normal(4)
    with make_context(), ir.Location.unknown():
        m = ir.Module.parse(HVP)
    expand(m)
    g, hv = run(m, x, v)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-13)
    np.testing.assert_allclose(hv, (2 * np.cos(x) - np.sin(x) * x) * v, rtol=1e-12)


def test_identity_constant_and_repeated_results():
    x = R.standard_normal(3)
    check_function(lambda x: x, [x])
    check_function(lambda x, y: (jnp.floor(x) * y, y), [x, x + 1.0], active=[0])
    check_function(lambda x: (x * 2.0, x * 2.0, jnp.sin(x)), [x])

    def same_twice(x):
        y = jnp.sin(x)
        return y, y

    check_function(same_twice, [x])


def test_complex_inputs():
    z = R.standard_normal(3) + 1j * R.standard_normal(3)
    c = R.standard_normal(3) + 1j * R.standard_normal(3)
    check_function(lambda z, c: jnp.exp(z * c) / (z + 2.0) + jnp.conj(z) * c, [z, c], fd=False)


def test_reverse_with_const_results_and_integer_outputs():
    def f(x, k):
        return jnp.sum(jnp.sin(x) * k), jnp.argmax(x), x * 2.0

    x = R.standard_normal(5)
    text = lower(f, x, np.float64(3.0))
    m = build(text, [Marker("rev", ["active", "const"], ["active", "const", "constnoneed"])])
    expand(m)
    v, am, g = run(m, x, np.float64(3.0), np.float64(1.5))
    np.testing.assert_allclose(v, np.sum(np.sin(x) * 3.0))
    assert am == np.argmax(x)
    np.testing.assert_allclose(g, 1.5 * 3.0 * np.cos(x), rtol=1e-13)
