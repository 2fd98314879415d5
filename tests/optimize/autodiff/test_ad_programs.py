"""Whole programs through the AD pass in both modes: an MLP loss, softmax cross-entropy, a
fori_loop with a carried state (plain and with periodic checkpointing), scan, lax.cond,
lax.switch, nested calls, higher-order derivatives, vector forward mode, and the corpus'
normalize_loop against JAX's own gradient module."""

from __future__ import annotations

import numpy as np
import pytest

from adtest_util import Marker, build, check_function, expand, jax, jnp, lower, run

from jax import lax

R = np.random.default_rng(7)


def mlp_loss(w1, b1, w2, b2, x, labels):
    h = jax.nn.relu(x @ w1 + b1)
    logits = h @ w2 + b2
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.sum(labels * logp, axis=-1))


def softmax_xent(logits, labels):
    return -jnp.sum(labels * jax.nn.log_softmax(logits, axis=-1)) / logits.shape[0]


def test_mlp_loss():
    x = R.standard_normal((5, 6))
    labels = np.eye(3)[R.integers(0, 3, 5)]
    args = [R.standard_normal((6, 8)) * 0.5, R.standard_normal(8) * 0.1, R.standard_normal((8, 3)) * 0.5,
            R.standard_normal(3) * 0.1, x, labels]
    check_function(mlp_loss, args, active=[0, 1, 2, 3])


def test_softmax_cross_entropy():
    check_function(softmax_xent, [R.standard_normal((4, 5)), np.eye(5)[[0, 3, 1, 4]]], active=[0])


def carried_loop(x, w):
    def body(i, c):
        h, acc = c
        h = jnp.tanh(h @ w + x[i % 3])
        return h, acc + jnp.sum(h * h) * (i + 1)

    h, acc = lax.fori_loop(0, 7, body, (jnp.zeros(4), 0.0))
    return acc + jnp.sum(h)


LOOP_ARGS = [R.standard_normal((3, 4)), R.standard_normal((4, 4)) * 0.5]


@pytest.mark.parametrize("ckpt", [None, "sqrt", 2, 3, 100])
def test_fori_loop_carried_state(ckpt):
    extra = {} if ckpt is None else {"ad_checkpoint": ckpt}
    rep = check_function(carried_loop, LOOP_ARGS, extra=extra)
    if ckpt is not None:
        base = check_function(carried_loop, LOOP_ARGS, fd=False, jax_ref=False, modes=("rev",))
        for a, b in zip(rep["grads"], base["grads"]):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


def test_scan_with_stacked_outputs():
    def f(xs, w):
        def step(c, x):
            c = jnp.sin(c * w) + x
            return c, c * c

        c, ys = lax.scan(step, jnp.ones(3), xs)
        return jnp.sum(ys) + jnp.sum(c)

    check_function(f, [R.standard_normal((6, 3)), R.standard_normal(3)])


def test_nested_loops():
    def f(x, w):
        def outer(i, c):
            def inner(j, d):
                return jnp.sin(d * w[j]) + c * 0.1

            return lax.fori_loop(0, 3, inner, c) + x[i]

        return jnp.sum(lax.fori_loop(0, 4, outer, jnp.zeros(2)) ** 2)

    check_function(f, [R.standard_normal((4, 2)), R.standard_normal((3, 2))])
    check_function(f, [R.standard_normal((4, 2)), R.standard_normal((3, 2))], extra={"ad_checkpoint": 2},
                   modes=("rev",))


@pytest.mark.parametrize("sgn", [1.0, -1.0])  # each branch
def test_cond_both_branches(sgn):
    def f(x, y):
        return lax.cond(jnp.sum(x) > 0, lambda: jnp.sin(x) * y, lambda: x * x * y[0])

    x = np.abs(R.standard_normal(3)) * sgn
    check_function(f, [x, R.standard_normal(3)])


@pytest.mark.parametrize("k", [0, 1, 2])
def test_switch(k):
    def f(x, y, k):
        return lax.switch(k, [lambda: x * 2.0, lambda: jnp.sin(x) * y, lambda: x ** 3 + y], )

    check_function(f, [R.standard_normal(3), R.standard_normal(3), np.int64(k)])


def test_cond_inside_loop():
    def f(x):
        def body(i, c):
            return lax.cond(i % 2 == 0, lambda: jnp.sin(c) * x, lambda: c * c + 0.1 * x)

        return jnp.sum(lax.fori_loop(0, 5, body, x))

    check_function(f, [R.standard_normal(3) * 0.5])


def test_nested_jit_calls():
    @jax.jit
    def inner(a, b):
        return jnp.tanh(a * b) + a

    def f(x, y):
        return jnp.sum(inner(x, y) * inner(y, x))

    text = lower(f, np.ones(3), np.ones(3))
    assert "call @" in text  # the lowering keeps the calls: the pass differentiates through them
    check_function(f, [R.standard_normal(3), R.standard_normal(3)])


def test_unknown_trip_count_needs_bound():
    from reactant.optimize.autodiff import ADError

    def f(x):
        return lax.while_loop(lambda c: jnp.sum(c) < 10.0, lambda c: c * 1.5 + 0.1, x)

    x = np.abs(R.standard_normal(3)) + 0.5
    with pytest.raises(ADError, match=r"stablehlo.while.*trip count|trip count.*ad_max_trip_count"):
        check_function(f, [x], jax_ref=False, modes=("rev",))
    # forward mode needs no trip count; reverse mode with a run-time checked bound
    check_function(f, [x], modes=("fwd",))
    check_function(f, [x], jax_ref=False, modes=("rev",), extra={"ad_max_trip_count": 20})
    check_function(f, [x], jax_ref=False, modes=("rev",), extra={"ad_max_trip_count": 20, "ad_checkpoint": 3})
    # a bound below the actual trip count gives NaN cotangents (the run-time check)
    text = lower(f, x)
    m = build(text, [Marker("rev", ["active"], ["active"])])
    expand(m, ad_max_trip_count=2)
    out = run(m, x, np.ones(3))
    assert np.all(np.isnan(out[1])) and np.all(np.isfinite(out[0]))


@pytest.mark.parametrize("n,mode", [(3, "auto"), (3, "loop"), (9, "auto"), (9, "unroll")])
def test_vector_forward_mode_jacobian(n, mode):
    def f(x, w):
        y = lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c @ w) + x, x) * jnp.sum(x)
        return lax.cond(y[0] > -10.0, lambda: jnp.sin(y), lambda: y), jnp.sum(w)

    x, w = R.standard_normal(n), R.standard_normal((n, n)) * 0.5
    text = lower(f, x, w)
    m = build(text, [Marker("fwd", ["dup", "const"], ["dup", "const"], width=n)])
    expand(m, ad_vector_forward=mode)
    prim, s, jac_t = run(m, x, np.eye(n), w)
    np.testing.assert_allclose(prim, f(x, w)[0], rtol=1e-12)
    np.testing.assert_allclose(jac_t, np.asarray(jax.jacfwd(f)(x, w)[0]).T, rtol=1e-10, atol=1e-12)


def test_activity_variants_and_dup_shadows():
    def f(x, y):
        return jnp.sin(x) * y, jnp.sum(x * x)

    x, y = R.standard_normal(4), R.standard_normal(4)
    text = lower(f, x, y)
    # reverse: dup x (shadow accumulates), const y; first result activenoneed, second const
    m = build(text, [Marker("rev", ["dup", "const"], ["activenoneed", "const"])])
    expand(m)
    shadow, seed = R.standard_normal(4), R.standard_normal(4)
    o1, sh = run(m, x, shadow, y, seed)
    np.testing.assert_allclose(o1, np.sum(x * x), rtol=1e-12)
    np.testing.assert_allclose(sh, shadow + np.cos(x) * y * seed, rtol=1e-12)
    # forward: tangent only for the first result, nothing for the second
    m = build(text, [Marker("fwd", ["dup", "const"], ["dupnoneed", "constnoneed"])])
    expand(m)
    t = R.standard_normal(4)
    (tan,) = run(m, x, t, y)
    np.testing.assert_allclose(tan, np.cos(x) * y * t, rtol=1e-12)


def test_inactive_values_get_no_derivative_code():
    def f(x, c):
        return jnp.sin(c) * x + jnp.exp(c)

    text = lower(f, np.ones(3), np.ones(3))
    m = build(text, [Marker("rev", ["active", "const"], ["active"]), Marker("fwd", ["dup", "const"], ["dup"])])
    expand(m)
    main = [o for o in m.body.operations if "main" in str(o.attributes["sym_name"])][0]
    body = str(main)
    assert "stablehlo.cosine" not in body  # d sin(c) is never formed
    assert body.count("stablehlo.exponential") == 2  # the primal exp only (one per marker)


def _hvp_module(f, x, v, outer):
    """d/dx <grad f(x), v>: the expanded gradient module becomes the function @g that a
    second marker differentiates (forward-over-reverse or reverse-over-reverse)."""
    m = build(lower(f, x), [Marker("rev", ["active"], ["active"])])
    expand(m)
    if outer == "fwd":
        m2 = build(str(m), [Marker("fwd", ["dup", "const"], ["constnoneed", "dup"], fn="g")], name="g")
        expand(m2)
        return run(m2, x, v, np.float64(1.0))[-1]
    m2 = build(str(m), [Marker("rev", ["active", "const"], ["constnoneed", "active"], fn="g")], name="g")
    expand(m2)
    return run(m2, x, np.float64(1.0), v)[-1]


@pytest.mark.parametrize("outer", ["fwd", "rev"])
def test_hessian_vector_product_through_loop(outer):
    def f(x):
        return jnp.sum(lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * x + c * c * 0.1, x) ** 2)

    x, v = R.standard_normal(3) * 0.5, R.standard_normal(3)
    hv = _hvp_module(f, x, v, outer)
    ref = jax.jvp(jax.grad(f), (x,), (v,))[1]
    np.testing.assert_allclose(hv, ref, rtol=1e-10, atol=1e-12)


def test_normalize_loop_from_corpus_against_jax_grad():
    """The corpus' fori_loop normalize (n = 1e4, 1e4 iterations) differentiated by the pass
    equals JAX's own gradient module on the same inputs."""
    from hlo_corpus import corpus_text

    fwd = corpus_text("normalize_loop.fwd")
    grad = corpus_text("normalize_loop.grad")
    m = build(fwd, [Marker("rev", ["active"], ["active"])])
    expand(m)
    r = np.random.default_rng(3)
    x = r.standard_normal(10000).astype(np.float32)
    ct = r.standard_normal(10000).astype(np.float32)
    out, g = run(m, x, ct)
    from adtest_util import make_context
    from jaxlib.mlir import ir

    with make_context(), ir.Location.unknown():
        jm = ir.Module.parse(grad)
    val, jg = run(jm, x, ct)
    np.testing.assert_allclose(np.sum(out * ct), val, rtol=1e-4)
    np.testing.assert_allclose(g, jg, rtol=2e-4, atol=1e-6)
    # and forward mode against a float64 JVP of the same formula
    m = build(fwd, [Marker("fwd", ["dup"], ["dupnoneed"])])
    expand(m)
    (t,) = run(m, x, ct)
    x64, t64 = x.astype(np.float64), ct.astype(np.float64)
    n = np.linalg.norm(x64)
    ref = t64 / n - x64 * np.dot(x64, t64) / n ** 3
    np.testing.assert_allclose(t, ref, rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize("sgn", [1.0, -1.0])  # each branch
def test_loop_inside_branch_and_branch_inside_loop_with_checkpointing(sgn):
    def f(x, w):
        def body(i, c):
            return jnp.tanh(c * w) + 0.1 * x

        y = lax.cond(jnp.sum(x) > 0, lambda: lax.fori_loop(0, 3, body, x), lambda: x * w)
        z = lax.fori_loop(0, 4, lambda i, c: lax.cond(i % 2 == 0, lambda: jnp.sin(c) * w, lambda: c * c), y)
        return jnp.sum(z)

    x = np.abs(R.standard_normal(3)) * sgn
    w = R.standard_normal(3)
    check_function(f, [x, w])
    check_function(f, [x, w], extra={"ad_checkpoint": 2}, modes=("rev",))


def test_scan_checkpointed_and_zero_trip_loop():
    def f(xs, w):
        c, ys = lax.scan(lambda c, x: (jnp.sin(c * w + x), c * x), jnp.ones(3), xs)
        z = lax.fori_loop(0, 0, lambda i, c: c * w, c)  # never runs
        return jnp.sum(ys) + jnp.sum(z)

    args = [R.standard_normal((7, 3)), R.standard_normal(3)]
    base = check_function(f, args)
    for ck in ("sqrt", 3):
        rep = check_function(f, args, extra={"ad_checkpoint": ck}, modes=("rev",), fd=False)
        for a, b in zip(rep["grads"], base["grads"]):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
