"""reactant.autodiff and its conveniences, inside and outside compiled functions, against
jax.grad / jax.jvp / jax.jacfwd of the same function written with jax.numpy (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import reactant
from reactant import Active, Const, Duplicated, BatchDuplicated

RNG = np.random.default_rng(0)
W = RNG.standard_normal((3, 2))
X = RNG.standard_normal((4, 3))
Y = RNG.integers(0, 2, 4)


def loss_np(w, x):
    return (np.tanh(x @ w) ** 2).sum()


def loss_jnp(w, x):
    return (jnp.tanh(x @ w) ** 2).sum()


def jax64(fn, *args, **kw):
    with jax.enable_x64(True):
        out = fn(*args, **kw)
        return jax.tree_util.tree_map(np.asarray, out)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def test_reverse_inside_compile():
    @reactant.compile
    def g(w, x):
        return reactant.autodiff(reactant.Reverse, loss_np, Active(w), Const(x))

    dw, dx = g(*reactant.to_rarray((W, X)))
    assert dx is None
    close(dw, jax64(jax.grad(loss_jnp), W, X))


def test_reverse_with_primal_and_pytrees():
    params = {"w": W, "b": np.ones(2)}

    def loss(p, x):
        return (np.tanh(x @ p["w"] + p["b"]) ** 2).mean()

    def loss_j(p, x):
        return (jnp.tanh(x @ p["w"] + p["b"]) ** 2).mean()

    @reactant.compile
    def g(p, x):
        return reactant.autodiff(reactant.ReverseWithPrimal, loss, Active(p), Const(x))

    (gp, _), value = g(reactant.to_rarray(params), reactant.to_rarray(X))
    ref_v, ref_g = jax64(jax.value_and_grad(loss_j), params, X)
    close(value, ref_v)
    close(gp["w"], ref_g["w"])
    close(gp["b"], ref_g["b"])


def test_duplicated_accumulates_in_place():
    dw = reactant.to_rarray(np.ones_like(W))

    @reactant.compile
    def g(w, dw, x):
        reactant.autodiff(reactant.Reverse, loss_np, Duplicated(w, dw), Const(x))

    g(reactant.to_rarray(W), dw, reactant.to_rarray(X))
    close(dw, 1 + jax64(jax.grad(loss_jnp), W, X))


def test_outside_compile_is_compiled_and_cached():
    w, x = reactant.to_rarray((W, X))
    g1 = reactant.gradient(loss_np, w, x)
    g2 = reactant.gradient(loss_np, w, x)
    close(g1, jax64(jax.grad(loss_jnp), W, X))
    close(g2, g1)
    v, (gw, gx) = reactant.value_and_gradient(loss_np, w, x, argnums=(0, 1))
    rv, (rgw, rgx) = jax64(jax.value_and_grad(loss_jnp, argnums=(0, 1)), W, X)
    close(v, rv)
    close(gw, rgw)
    close(gx, rgx)


def test_forward_modes_and_jvp():
    f_np = lambda x: np.sin(x) * x.sum()  # noqa: E731
    f_j = lambda x: jnp.sin(x) * x.sum()  # noqa: E731
    x0, t0 = RNG.standard_normal(5), RNG.standard_normal(5)

    @reactant.compile
    def fwd(x, t):
        return reactant.autodiff(reactant.Forward, f_np, Duplicated(x, t))

    ref_p, ref_t = jax64(jax.jvp, f_j, (x0,), (t0,))
    close(fwd(*reactant.to_rarray((x0, t0))), ref_t)
    value, tangent = reactant.jvp(f_np, reactant.to_rarray((x0,)), reactant.to_rarray((t0,)))
    close(value, ref_p)
    close(tangent, ref_t)

    @reactant.compile
    def batch(x, t1, t2):
        return reactant.autodiff(reactant.Forward, f_np, BatchDuplicated(x, (t1, t2)))

    t1, t2 = batch(*reactant.to_rarray((x0, t0, 2 * t0)))
    close(t1, ref_t)
    close(t2, 2 * ref_t)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_jacobian(mode):
    f_np = lambda x: np.tanh(np.outer(x, x[:2]))  # noqa: E731
    f_j = lambda x: jnp.tanh(jnp.outer(x, x[:2]))  # noqa: E731
    x0 = RNG.standard_normal(3)
    j = reactant.jacobian(f_np, reactant.to_rarray(x0), mode=mode)
    close(j, jax64(jax.jacfwd(f_j), x0))


def test_vjp_with_cotangent():
    f_np = lambda a, b: np.sin(a) * b  # noqa: E731
    f_j = lambda a, b: jnp.sin(a) * b  # noqa: E731
    a0, b0, ct = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal(4)
    value, (ga, gb) = reactant.vjp(f_np, *reactant.to_rarray((a0, b0)), cotangent=reactant.to_rarray(ct))
    ref_v, vjp_fn = jax64(lambda: jax.vjp(f_j, a0, b0))
    ra, rb = jax64(lambda: jax.vjp(f_j, a0, b0)[1](ct))
    close(value, ref_v)
    close(ga, ra)
    close(gb, rb)


def test_nested_hessian_vector_product():
    f_np = lambda x: (np.sin(x) ** 2).sum() * x[0]  # noqa: E731
    f_j = lambda x: (jnp.sin(x) ** 2).sum() * x[0]  # noqa: E731
    x0, v0 = RNG.standard_normal(4), RNG.standard_normal(4)

    def grad_f(x):
        return reactant.autodiff(reactant.Reverse, f_np, Active(x))[0]

    @reactant.compile
    def hvp(x, v):
        return reactant.autodiff(reactant.Forward, grad_f, Duplicated(x, v))

    ref = jax64(lambda: jax.jvp(jax.grad(f_j), (x0,), (v0,))[1])
    close(hvp(*reactant.to_rarray((x0, v0))), ref)


def test_closure_over_traced_values_is_const():
    @reactant.compile
    def g(w, x):
        return reactant.gradient(lambda w_: loss_np(w_, x), w)  # x captured from the outer trace

    close(g(*reactant.to_rarray((W, X))), jax64(jax.grad(loss_jnp), W, X))


def test_errors():
    w, x = reactant.to_rarray((W, X))
    with pytest.raises(reactant.DTypeError, match="only floating-point") as e:
        reactant.autodiff(reactant.Reverse, lambda a: a.sum() * 1.0, Active(reactant.to_rarray(Y)))
    assert "test_autodiff_api.py" in str(e.value)
    with pytest.raises(reactant.ShapeError, match="one scalar") as e:
        reactant.autodiff(reactant.Reverse, lambda a: np.sin(a), Active(w))
    assert "hint" in str(e.value)
    with pytest.raises(reactant.ShapeError, match="shadow"):
        reactant.autodiff(reactant.Forward, np.sin, Duplicated(w, x))
    with pytest.raises(TypeError, match="forward"):
        reactant.autodiff(reactant.Forward, np.sin, Active(w))
