"""stop_gradient, custom_vjp, custom_jvp, checkpoint, the cumulative product's derivative and
gradient errors in NumPy words: each against jax on the same program written with jax.numpy
(float64), or against finite differences, and (checkpoint) against the structure of the
derivative program."""

import re
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import reactant
from reactant.optimize.autodiff import ADError

RNG = np.random.default_rng(7)


def jax64(fn, *args, **kw):
    with jax.enable_x64(True):
        return jax.tree_util.tree_map(np.asarray, fn(*args, **kw))


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def rarr(x):
    return reactant.to_rarray(x)


# -- stop_gradient ------------------------------------------------------------------------------
def test_stop_gradient_reverse_and_forward_match_jax():
    x = RNG.standard_normal(5)
    t = RNG.standard_normal(5)

    def f(x):  # x - sg(x) is 0 in value but 1 in derivative: the optimizer must not fold it
        return np.sum(x * reactant.stop_gradient(x) ** 2 + (x - reactant.stop_gradient(x)))

    def fj(x):
        return jnp.sum(x * jax.lax.stop_gradient(x) ** 2 + (x - jax.lax.stop_gradient(x)))

    value, g = reactant.value_and_gradient(f, rarr(x))
    ref_v, ref_g = jax64(jax.value_and_grad(fj), x)
    close(value, ref_v)
    close(g, ref_g)
    v, tan = reactant.jvp(f, (rarr(x),), (rarr(t),))
    ref = jax64(jax.jvp, fj, (x,), (t,))
    close(v, ref[0])
    close(tan, ref[1])


def test_stop_gradient_pytree_eager_and_plain_programs():
    x = RNG.standard_normal(3)
    tree = {"a": rarr(x), "n": rarr(np.arange(3)), "k": 2}
    out = reactant.stop_gradient(tree)  # eagerly: the same values
    assert out["k"] == 2 and out["a"] is tree["a"]

    @reactant.compile
    def f(a, n):
        s = reactant.stop_gradient({"a": a, "n": n, "k": 2})
        return s["a"] * s["k"] + s["n"]

    close(f(rarr(x), rarr(np.arange(3))), x * 2 + np.arange(3))
    assert "reactant.ad" not in reactant.code_hlo(f, rarr(x), rarr(np.arange(3)))  # lowered before XLA

    # a gradient through a pytree: only the stopped leaf loses its derivative
    def g(p):
        q = reactant.stop_gradient(p["w"])
        return np.sum(p["w"] * q + p["b"] ** 2)

    gr = reactant.gradient(g, rarr({"w": x, "b": x + 1}))
    close(gr["w"], x)
    close(gr["b"], 2 * (x + 1))


# -- custom_jvp ---------------------------------------------------------------------------------
@reactant.custom_jvp
def softplus(x):
    return np.log1p(np.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t / (1 + np.exp(-x))


@jax.custom_jvp
def softplus_j(x):
    return jnp.log1p(jnp.exp(x))


@softplus_j.defjvp
def softplus_j_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus_j(x), t / (1 + jnp.exp(-x))


X_BIG = np.array([1000.0, 1.0, -3.0, 0.3])


def test_custom_jvp_fixes_the_nan_gradient():
    plain = reactant.gradient(lambda x: np.sum(np.log1p(np.exp(x))), rarr(X_BIG))
    assert np.isnan(np.asarray(plain)[0])  # what the custom rule is for
    g = reactant.gradient(lambda x: np.sum(softplus(x)), rarr(X_BIG))
    close(g, jax64(jax.grad(lambda x: jnp.sum(softplus_j(x))), X_BIG))
    assert np.asarray(g)[0] == 1.0
    t = RNG.standard_normal(4)
    v, tan = reactant.jvp(softplus, (rarr(X_BIG),), (rarr(t),))
    ref = jax64(jax.jvp, softplus_j, (X_BIG,), (t,))
    close(v, ref[0])
    close(tan, ref[1])


def test_custom_jvp_inside_compile_higher_order_and_jacobians():
    x = X_BIG

    @reactant.compile
    def hess_diag_sum(x):
        return reactant.gradient(lambda x: np.sum(reactant.gradient(lambda y: np.sum(softplus(y) ** 2), x)), x)

    ref = jax64(jax.grad(lambda x: jnp.sum(jax.grad(lambda y: jnp.sum(softplus_j(y) ** 2))(x))), x)
    np.testing.assert_allclose(np.asarray(hess_diag_sum(rarr(x))), ref, rtol=1e-10, equal_nan=True)
    y = x[1:]  # (finite values)
    jf = reactant.jacobian(lambda x: softplus(x) * x[0], rarr(y))  # vector forward mode
    close(jf, jax64(jax.jacfwd(lambda x: softplus_j(x) * x[0]), y))
    jr = reactant.jacobian(lambda x: softplus(x) * x[1], rarr(y), mode="reverse")
    close(jr, jax64(jax.jacrev(lambda x: softplus_j(x) * x[1]), y))


def test_custom_jvp_pytrees_kwargs_nondiff_and_loops():
    @partial(reactant.custom_jvp, nondiff_argnums=(0,))
    def f(scale, p, x):
        return {"a": p["w"] * x * scale, "b": np.sin(x) + p["c"]}

    @f.defjvp
    def f_jvp(scale, primals, tangents):
        (p, x), (tp, tx) = primals, tangents
        return f(scale, p, x), {"a": (tp["w"] * x + p["w"] * tx) * scale, "b": np.cos(x) * tx + tp["c"]}

    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def fj(scale, p, x):
        return {"a": p["w"] * x * scale, "b": jnp.sin(x) + p["c"]}

    @fj.defjvp
    def fj_jvp(scale, primals, tangents):
        (p, x), (tp, tx) = primals, tangents
        return fj(scale, p, x), {"a": (tp["w"] * x + p["w"] * tx) * scale, "b": jnp.cos(x) * tx + tp["c"]}

    def loss(p, x):
        h = x
        for _ in range(reactant.keep(3)):  # a stablehlo.while: the rule is used in its body
            o = f(1.5, p, x=h)
            h = np.tanh(o["a"] + o["b"])
        return np.sum(h ** 2)

    def loss_j(p, x):
        def body(i, h):
            o = fj(1.5, p, h)
            return jnp.tanh(o["a"] + o["b"])
        return jnp.sum(jax.lax.fori_loop(0, 3, body, x) ** 2)

    p = {"w": RNG.standard_normal(3), "c": np.array(0.5)}
    x = RNG.standard_normal(3)
    gp, gx = reactant.compile(lambda p, x: reactant.gradient(loss, p, x, argnums=(0, 1)))(rarr(p), rarr(x))
    rp, rx = jax64(jax.grad(loss_j, argnums=(0, 1)), p, x)
    close(gp["w"], rp["w"])
    close(gp["c"], rp["c"])
    close(gx, rx)


# -- custom_vjp ---------------------------------------------------------------------------------
@reactant.custom_vjp
def softplus_v(x):
    return np.log1p(np.exp(x))


softplus_v.defvjp(lambda x: (softplus_v(x), x), lambda x, g: (g / (1 + np.exp(-x)),))


@partial(reactant.custom_vjp, nondiff_argnums=(0, 1))
def clip_gradient(lo, hi, x):
    return x


clip_gradient.defvjp(lambda lo, hi, x: (x, None), lambda lo, hi, _, g: (np.clip(g, lo, hi),))


@partial(jax.custom_vjp, nondiff_argnums=(0, 1))
def clip_gradient_j(lo, hi, x):
    return x


clip_gradient_j.defvjp(lambda lo, hi, x: (x, None), lambda lo, hi, _, g: (jnp.clip(g, lo, hi),))


def test_custom_vjp_fixes_the_nan_gradient_and_keeps_f_value():
    g = reactant.gradient(lambda x: np.sum(softplus_v(x)), rarr(X_BIG))
    close(g, jax64(jax.grad(lambda x: jnp.sum(softplus_j(x))), X_BIG))

    @reactant.custom_vjp
    def f(x):
        return x * 2

    f.defvjp(lambda x: (x * 3, x), lambda r, g: (g * 5,))  # (inconsistent on purpose)
    close(reactant.compile(f)(rarr(X_BIG)), X_BIG * 2)  # not differentiated: f's value
    close(f(rarr(X_BIG)), X_BIG * 2)  # eagerly too
    close(reactant.gradient(lambda x: np.sum(f(x)), rarr(X_BIG)), np.full(4, 5.0))  # the rule


def test_custom_vjp_nondiff_residual_pytrees_and_loops():
    x = RNG.standard_normal(4)

    def loss(x):
        h = x
        for _ in range(reactant.keep(3)):
            h = clip_gradient(-0.1, 0.1, np.sin(h) * 3.0)
        return np.sum(h ** 2)

    def loss_j(x):
        return jnp.sum(jax.lax.fori_loop(0, 3, lambda i, h: clip_gradient_j(-0.1, 0.1, jnp.sin(h) * 3.0), x) ** 2)

    close(reactant.compile(lambda x: reactant.gradient(loss, x))(rarr(x)), jax64(jax.grad(loss_j), x))

    # residuals as a pytree with static leaves; a None cotangent; pytree arguments and results
    @reactant.custom_vjp
    def f(p, y):
        return {"s": np.sin(p["a"]) * y, "c": np.cos(p["b"])}

    def f_fwd(p, y):
        return f(p, y), {"p": p, "y": y, "k": 3, "tag": "static"}

    def f_bwd(res, g):
        assert res["k"] == 3 and res["tag"] == "static"
        p, y = res["p"], res["y"]
        return {"a": g["s"] * np.cos(p["a"]) * y, "b": -g["c"] * np.sin(p["b"])}, None

    f.defvjp(f_fwd, f_bwd)

    def fj(p, y):
        return {"s": jnp.sin(p["a"]) * y, "c": jnp.cos(p["b"])}

    p = {"a": RNG.standard_normal(4), "b": RNG.standard_normal(4)}
    gp, gy = reactant.gradient(lambda p, y: np.sum(f(p, y)["s"] ** 2 + f(p, y)["c"]), rarr(p), rarr(x),
                               argnums=(0, 1))
    rp = jax64(jax.grad(lambda p, y: jnp.sum(fj(p, y)["s"] ** 2 + fj(p, y)["c"])), p, x)
    close(gp["a"], rp["a"])
    close(gp["b"], rp["b"])
    close(gy, np.zeros(4))  # bwd said None: zero, whatever the true derivative


def test_custom_vjp_errors():
    x = rarr(X_BIG)
    with pytest.raises(ADError, match="custom_vjp function softplus_v.*forward-mode") as ei:
        reactant.jvp(softplus_v, (x,), (x,))
    assert isinstance(ei.value, reactant.ReactantError) and "test_custom_derivatives.py" in str(ei.value)

    w = rarr(np.array([1.0, 2.0, 3.0, 4.0]))

    def outer(w, x):
        @reactant.custom_vjp
        def f(x):
            return x * w

        f.defvjp(lambda x: (x * w, None), lambda r, g: (g * w,))
        return np.sum(f(x))

    close(reactant.gradient(outer, w, x, argnums=1), [1.0, 2.0, 3.0, 4.0])  # w held constant: fine
    with pytest.raises(ADError, match="reads a value that is being differentiated"):
        reactant.gradient(outer, w, x, argnums=0)

    @reactant.custom_vjp
    def g(x):
        return x * 2

    g.defvjp(lambda x: ((x * 2, x), None), lambda r, ct: (ct,))
    with pytest.raises(reactant.ShapeError, match="fwd rule of custom_vjp function g returns the structure"):
        reactant.gradient(lambda x: np.sum(g(x)), x)
    g.defvjp(lambda x: (x * 2, None), lambda r, ct: (ct, ct))
    with pytest.raises(reactant.ArgumentError, match="one cotangent per differentiable argument"):
        reactant.gradient(lambda x: np.sum(g(x)), x)
    g.defvjp(lambda x: (x * 2, None), lambda r, ct: (ct[:2],))
    with pytest.raises(reactant.ShapeError, match="for a value of shape"):
        reactant.gradient(lambda x: np.sum(g(x)), x)

    @reactant.custom_vjp
    def h(x):
        x[0] = 1.0  # the traced rule cannot update the caller's array
        return x * 2

    h.defvjp(lambda x: (x * 2, None), lambda r, ct: (ct,))
    with pytest.raises(reactant.UnsupportedError, match="in place"):
        reactant.gradient(lambda x: np.sum(h(x)), x)


# -- checkpoint ---------------------------------------------------------------------------------
def _gradient_of(loss):
    def grad(x):
        return reactant.gradient(loss, x)
    return grad


def _sines(x):
    return np.sin(np.sin(np.sin(x)))


def _sines_j(x):
    return jnp.sin(jnp.sin(jnp.sin(x)))


def test_checkpoint_recomputes_in_the_backward_pass():
    x = RNG.standard_normal(6)
    ref = jax64(jax.grad(lambda x: jnp.sum(jax.checkpoint(_sines_j)(x) ** 2)), x)
    texts = {}
    for name, fn in (("plain", _sines), ("remat", reactant.checkpoint(_sines))):
        grad = _gradient_of(lambda x, fn=fn: np.sum(fn(x) ** 2))
        close(reactant.compile(grad)(rarr(x)), ref)
        texts[name] = reactant.code_hlo(grad, rarr(x))
    # plain: the forward's three sines are kept for the backward pass; remat: the backward pass
    # starts from x and the cotangent only (one barrier against CSE) and recomputes two sines
    assert texts["plain"].count("stablehlo.sine") == 3
    assert "optimization_barrier" not in texts["plain"]
    remat = texts["remat"]
    assert remat.count("stablehlo.sine") == 5
    (fence,) = re.findall(r"(%\w+):2 = stablehlo.optimization_barrier (%arg0), (%\w+)", remat)
    after = remat.split("optimization_barrier", 1)[1]
    assert after.count("stablehlo.sine") == 2 and f"stablehlo.sine {fence[0]}#0" in after


W8 = RNG.standard_normal((8, 8)) * 0.4


def _block(h):
    for _ in range(4):
        h = np.tanh(W8 @ h)
    return h


def _loop_loss(blk):
    def loss(x):
        h = x
        for _ in range(reactant.keep(10)):
            h = blk(h)
        return np.sum(h ** 2)
    return loss


def _loop_loss_j(x):
    def body(i, h):
        for _ in range(4):
            h = jnp.tanh(W8 @ h)
        return h
    return jnp.sum(jax.lax.fori_loop(0, 10, body, x) ** 2)


def test_checkpoint_in_a_loop_stores_only_the_inputs_and_dots_policy():
    x = RNG.standard_normal(8) * 3
    ref = jax64(jax.grad(_loop_loss_j), x)
    stats = {}
    calls = 0

    def tanh_only(name):
        nonlocal calls
        calls += 1
        return name == "stablehlo.tanh"

    for name, blk in (("plain", _block), ("remat", reactant.checkpoint(_block)),
                      ("dots", reactant.checkpoint(_block, policy="dots_saveable")),
                      ("tanh", reactant.remat(_block, policy=tanh_only))):
        grad = _gradient_of(_loop_loss(blk))
        close(reactant.compile(grad)(rarr(x)), ref)
        text = str(reactant.compile(grad).lower(rarr(x)).module)
        # per-iteration stacks the forward loop fills for the reverse loop
        stats[name] = (text.count("dynamic_update_slice"), text.count("stablehlo.dot_general"),
                       text.count("stablehlo.tanh"))
    assert calls > 0
    plain, remat, dots, tanh = stats["plain"], stats["remat"], stats["dots"], stats["tanh"]
    assert plain[0] == 4 and remat[0] == 1  # four tanh outputs per iteration vs the block's input
    assert remat[1] == plain[1] + 4 and remat[2] == 2 * plain[2]  # the block recomputed
    # dots kept (and the input), the tanh recomputed from them
    assert dots[0] == 5 and dots[1] == plain[1] and dots[2] == 2 * plain[2]
    # the tanh kept: all the backward pass reads (a dot's derivative needs its operands only)
    assert tanh == plain


def test_checkpoint_forward_mode_pytrees_closures_and_options():
    x = RNG.standard_normal(5)
    w = RNG.standard_normal(5)

    @reactant.checkpoint
    def f(x, *, p):
        return {"y": np.sin(x) * p["w"], "z": np.exp(x[0])}

    def fj(x, w):
        return {"y": jnp.sin(x) * w, "z": jnp.exp(x[0])}

    def loss(x, w):  # w is read by the checkpointed function through its pytree argument
        o = f(x, p={"w": w})
        return np.sum(o["y"] ** 2) * o["z"]

    def loss_j(x, w):
        o = fj(x, w)
        return jnp.sum(o["y"] ** 2) * o["z"]

    gx, gw = reactant.gradient(loss, rarr(x), rarr(w), argnums=(0, 1))
    rx, rw = jax64(jax.grad(loss_j, argnums=(0, 1)), x, w)
    close(gx, rx)
    close(gw, rw)
    t = RNG.standard_normal(5)
    v, tan = reactant.jvp(lambda x: loss(x, w), (rarr(x),), (rarr(t),))
    ref = jax64(jax.jvp, lambda x: loss_j(x, w), (x,), (t,))
    close(v, ref[0])
    close(tan, ref[1])

    def closing(x, w):  # a closure over a differentiated value is differentiated too
        return np.sum(reactant.checkpoint(lambda y: np.sin(y * w))(x))

    close(reactant.gradient(closing, rarr(x), rarr(w), argnums=1),
          jax64(jax.grad(lambda x, w: jnp.sum(jnp.sin(x * w)), argnums=1), x, w))
    close(f(rarr(x), p={"w": rarr(w)})["y"], np.sin(x) * w)  # eagerly: just the function
    with pytest.raises(reactant.ReactantError, match="policy 'everything' is not supported"):
        reactant.checkpoint(_sines, policy="everything")
    with pytest.raises(reactant.ReactantError, match="must return True or False"):
        reactant.gradient(lambda x: np.sum(reactant.checkpoint(_sines, policy=lambda n: "yes")(x)), rarr(x))


# -- cumulative products ------------------------------------------------------------------------
@pytest.mark.parametrize("x", [
    np.array([1.5, 0.0, 2.0, -1.0, 0.0, 3.0, 0.5]),  # two zeros
    np.array([0.0, 2.0, -0.5, 1.25]),  # a leading zero
    np.array([0.7, -1.3, 2.1, 0.4, 1.1, -0.9, 1.6, 0.8, 1.2]),  # none (odd length)
    np.array([2.5]),
])
def test_cumprod_gradient_matches_jax_at_zeros(x):
    w = RNG.standard_normal(x.shape)
    g = reactant.gradient(lambda x: np.sum(np.cumprod(x) * w), rarr(x))
    close(g, jax64(jax.grad(lambda x: jnp.sum(jnp.cumprod(x) * w)), x))
    t = RNG.standard_normal(x.shape)
    v, tan = reactant.jvp(np.cumprod, (rarr(x),), (rarr(t),))
    ref = jax64(jax.jvp, jnp.cumprod, (x,), (t,))
    close(v, ref[0])
    close(tan, ref[1])


def test_cumprod_along_axes_accumulate_and_finite_differences():
    a = RNG.standard_normal((4, 6))
    a[1, 2] = a[2, 0] = a[3, 5] = 0.0
    w = RNG.standard_normal((4, 6))

    @reactant.compile
    def grads(a):
        return (reactant.gradient(lambda a: np.sum(np.cumprod(a, axis=0) * w), a),
                reactant.gradient(lambda a: np.sum(np.multiply.accumulate(a, axis=1) * w), a),
                reactant.gradient(lambda a: np.sum(np.cumprod(a) * w.ravel()), a))

    g0, g1, gflat = grads(rarr(a))
    close(g0, jax64(jax.grad(lambda a: jnp.sum(jnp.cumprod(a, axis=0) * w)), a))
    close(g1, jax64(jax.grad(lambda a: jnp.sum(jnp.cumprod(a, axis=1) * w)), a))
    close(gflat, jax64(jax.grad(lambda a: jnp.sum(jnp.cumprod(a) * w.ravel())), a))
    t = RNG.standard_normal((4, 6))
    _, tan = reactant.jvp(lambda a: np.multiply.accumulate(a, axis=1), (rarr(a),), (rarr(t),))
    close(tan, jax64(jax.jvp, lambda a: jnp.cumprod(a, axis=1), (a,), (t,))[1])
    # central differences of the float64 program (away from zeros: a smooth function)
    b = RNG.uniform(0.5, 1.5, 6)
    v = w[0] ** 2
    g = np.asarray(reactant.gradient(lambda x: np.sum(np.cumprod(x) * v), rarr(b)))
    eps = 1e-6
    fd = [(np.sum(np.cumprod(b + eps * e) * v) - np.sum(np.cumprod(b - eps * e) * v)) / (2 * eps)
          for e in np.eye(6)]
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)


def test_cumprod_complex_and_float32():
    z = RNG.standard_normal(5) + 1j * RNG.standard_normal(5)
    z[2] = 0
    ct = RNG.standard_normal(5) + 1j * RNG.standard_normal(5)
    _, (gz,) = reactant.vjp(np.cumprod, rarr(z), cotangent=rarr(ct))
    with jax.enable_x64(True):
        ref = np.asarray(jax.vjp(jnp.cumprod, z)[1](ct)[0])
    close(gz, ref)
    x = np.array([1.5, 0.0, -2.0, 0.5], np.float32)
    g = reactant.gradient(lambda x: np.sum(np.cumprod(x)), rarr(x))
    assert np.asarray(g).dtype == np.float32
    close(g, jax.grad(lambda x: jnp.sum(jnp.cumprod(x)))(x), tol=1e-6)


# -- errors in NumPy words ----------------------------------------------------------------------
def test_gradient_error_names_the_numpy_call_and_line():
    a = rarr(np.array([[2.0, 1.0], [0.5, 3.0]]))

    def f(a):
        return np.sum(np.linalg.eig(a)[1].real)  # eigenvectors: no derivative

    line = f.__code__.co_firstlineno + 1
    for run in (lambda: reactant.gradient(f, a), lambda: reactant.jvp(f, (a,), (a,))):
        with pytest.raises(ADError) as ei:
            run()
        e = ei.value
        msg = str(e)
        assert isinstance(e, reactant.ReactantError)
        assert msg.startswith("cannot differentiate np.linalg.eig:"), msg
        assert f"test_custom_derivatives.py:{line}" in msg and "np.linalg.eig(a)[1]" in msg
        assert "stablehlo" not in msg and "[op " not in msg
        assert e.numpy_name == "np.linalg.eig" and e.op_name == "stablehlo.custom_call"


def test_numpy_call_names_do_not_change_the_optimized_program(monkeypatch):
    from reactant.tracing.context import TraceContext

    x = rarr(RNG.standard_normal((3, 4)))
    w = rarr(RNG.standard_normal((4, 2)))

    def prog(x, w):
        h = np.tanh(x @ w)
        return reactant.gradient(lambda w: np.sum(np.cumprod(np.tanh(x @ w), axis=0) ** 2) + np.mean(h), w)

    def optimized():
        cf = reactant.compile(prog)
        module = cf.lower(x, w).module
        return str(module), module.operation.get_asm(enable_debug_info=True)

    named, named_debug = optimized()
    assert 'loc("np.cumprod"' in named_debug or '"np.cumprod"(' in named_debug
    monkeypatch.setattr(TraceContext, "numpy_calling", lambda self, name, impl, args, kwargs: impl(*args, **kwargs))
    plain, plain_debug = optimized()
    assert '"np.cumprod"(' not in plain_debug
    assert named == plain  # the names are debug information only
