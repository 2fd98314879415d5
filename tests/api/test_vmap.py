"""reactant.vmap against jax.vmap of the same program written with jax.numpy (float64), inside
and outside compiled functions, nested and composed with reactant's autodiff; the batched
programs the optimizer makes of it (no loop left for typical bodies); np.vectorize and
np.apply_along_axis on traced arrays against NumPy; and the errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import reactant

RNG = np.random.default_rng(0)
X = RNG.standard_normal((5, 3))
Y = RNG.standard_normal((3, 5))
W = RNG.standard_normal((3, 4))
M = RNG.standard_normal((5, 3, 3))


def jax64(fn, *args, **kw):
    with jax.enable_x64(True):
        out = fn(*args, **kw)
        return jax.tree_util.tree_map(np.asarray, out)


def close(a, b, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def compiled_vmap(f, in_axes=0, out_axes=0):
    return reactant.compile(lambda *a: reactant.vmap(f, in_axes, out_axes)(*a))


def rarrays(*xs):
    return reactant.to_rarray(xs)


def hlo(f, *args) -> str:
    return reactant.code_hlo(f, *args)


# -- in_axes / out_axes ----------------------------------------------------------------------
@pytest.mark.parametrize("in_axes,out_axes,args", [
    (0, 0, (X, X)),
    ((0, None), 0, (X, W[:, 0])),
    ((1, 0), 1, (Y, X)),
    ((-1, -2), -1, (Y, X)),
    ((None, 1), 0, (X[0], Y)),
])
def test_in_and_out_axes_like_jax(in_axes, out_axes, args):
    f = lambda a, b: np.tanh(a) * b + np.sum(a * b)  # noqa: E731
    fj = lambda a, b: jnp.tanh(a) * b + jnp.sum(a * b)  # noqa: E731
    out = compiled_vmap(f, in_axes, out_axes)(*rarrays(*args))
    close(out, jax64(jax.vmap(fj, in_axes, out_axes), *args))


def test_matrices_and_pytrees_of_arguments_and_results():
    params = {"w": W, "b": np.arange(4.0)}  # in_axes gives the dict keys in another order

    def f(p, x):
        h = x @ p["w"] + p["b"]
        return {"h": np.tanh(h), "stats": (h.max(), h.argmax())}

    def fj(p, x):
        h = x @ p["w"] + p["b"]
        return {"h": jnp.tanh(h), "stats": (h.max(), h.argmax())}

    in_axes = ({"b": None, "w": None}, 0)
    out_axes = {"h": 1, "stats": 0}
    out = compiled_vmap(f, in_axes, out_axes)(reactant.to_rarray(params), reactant.to_rarray(X))
    ref = jax64(jax.vmap(fj, in_axes, out_axes), params, X)
    close(out["h"], ref["h"])
    close(out["stats"][0], ref["stats"][0])
    np.testing.assert_array_equal(np.asarray(out["stats"][1]), ref["stats"][1])


def test_list_in_axes_kwargs_and_unmapped_python_values():
    def f(a, k, scale, b):
        return a[:k].sum() * scale + b

    g = reactant.compile(lambda x, b: reactant.vmap(f, in_axes=[0, None, None])(x, 2, 3.0, b=b))
    out = g(*rarrays(X, X[:, 0]))
    close(out, np.array([f(x, 2, 3.0, b) for x, b in zip(X, X[:, 0])]))


def test_out_axes_none_returns_the_unmapped_result():
    def f(x, w):
        return x @ w, w.sum() * 2

    fj = lambda x, w: (x @ w, w.sum() * 2)  # noqa: E731
    out = compiled_vmap(f, (0, None), (0, None))(*rarrays(X, W))
    ref = jax64(jax.vmap(fj, (0, None), (0, None)), X, W)
    close(out[0], ref[0])
    close(out[1], ref[1])


def test_unmapped_results_are_broadcast_and_size_zero_batches():
    f = lambda x: (x * 2, np.ones(2))  # noqa: E731
    fj = lambda x: (x * 2, jnp.ones(2))  # noqa: E731
    out = compiled_vmap(f)(reactant.to_rarray(X))
    ref = jax64(jax.vmap(fj), X)
    close(out[0], ref[0])
    close(out[1], ref[1])
    empty = np.zeros((0, 3))
    out = compiled_vmap(lambda x: np.sin(x).sum())(reactant.to_rarray(empty))
    close(out, jax64(jax.vmap(lambda x: jnp.sin(x).sum()), empty))


def test_python_control_flow_on_traced_values_in_the_mapped_function():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return -x

    out = compiled_vmap(f)(reactant.to_rarray(X))
    close(out, np.stack([f(x) for x in X]))


def test_nested_vmap():
    f = lambda a, b: np.dot(a, b) + a[0]  # noqa: E731
    fj = lambda a, b: jnp.dot(a, b) + a[0]  # noqa: E731
    inner = reactant.vmap(f, (None, 1))
    out = reactant.compile(lambda x, y: reactant.vmap(inner, (0, None))(x, y))(*rarrays(X, Y))
    close(out, jax64(jax.vmap(jax.vmap(fj, (None, 1)), (0, None)), X, Y))


def test_closure_arrays_updated_in_place_run_in_order():
    # the loop carries an array the function updates: iterations run one after the other, as a
    # Python loop over the examples would
    @reactant.compile
    def g(x):
        acc = np.zeros_like(x[0])

        def f(row):
            acc[...] = acc * 0.5 + row
            return acc.sum()

        out = reactant.vmap(f)(x)
        return out, acc

    out, acc = g(reactant.to_rarray(X))
    ref_acc, ref = np.zeros(3), []
    for row in X:
        ref_acc = ref_acc * 0.5 + row
        ref.append(ref_acc.sum())
    close(out, np.array(ref))
    close(acc, ref_acc)


# -- eager -----------------------------------------------------------------------------------
def test_eager_on_device_arrays_compiles_once():
    f = lambda a, w: np.tanh(a @ w)  # noqa: E731
    fj = lambda a, w: jnp.tanh(a @ w)  # noqa: E731
    vf = reactant.vmap(f, (0, None))
    x, w = rarrays(X, W)
    from reactant import transforms

    before = transforms._COMPILED.compile_count
    close(vf(x, w), jax64(jax.vmap(fj, (0, None)), X, W))
    close(vf(x, w), jax64(jax.vmap(fj, (0, None)), X, W))
    assert transforms._COMPILED.compile_count == before + 1
    assert isinstance(vf(x, w), reactant.ConcreteRArray)


# -- with autodiff ---------------------------------------------------------------------------
def loss_np(x, w):
    return (np.tanh(x @ w) ** 2).sum()


def loss_jnp(x, w):
    return (jnp.tanh(x @ w) ** 2).sum()


def test_vmap_of_gradient_per_example():
    @reactant.compile
    def g(x, w):
        def per_example(a):
            return reactant.gradient(loss_np, a, w)

        return reactant.vmap(per_example)(x)

    x, w = rarrays(X, W)
    close(g(x, w), jax64(jax.vmap(jax.grad(loss_jnp), (0, None)), X, W))
    assert "stablehlo.while" not in hlo(g, x, w)  # differentiated, then batched
    # eagerly, with the weights' gradient per example
    per_example = reactant.vmap(lambda a, w: reactant.gradient(loss_np, a, w, argnums=1), (0, None))(x, w)
    close(per_example, jax64(jax.vmap(jax.grad(loss_jnp, argnums=1), (0, None)), X, W))


def test_gradient_of_vmap():
    def total(w, x):
        return reactant.vmap(loss_np, (0, None))(x, w).sum()

    def total_j(w, x):
        return jax.vmap(loss_jnp, (0, None))(x, w).sum()

    x, w = rarrays(X, W)
    close(reactant.gradient(total, w, x), jax64(jax.grad(total_j), W, X))
    g = reactant.compile(lambda w, x: reactant.gradient(total, w, x))
    close(g(w, x), jax64(jax.grad(total_j), W, X))
    assert "stablehlo.while" not in hlo(g, w, x)


def test_vjp_and_jacobian_with_vmap():
    f = lambda r: np.sin(r) * r[0]  # noqa: E731
    fj = lambda r: jnp.sin(r) * r[0]  # noqa: E731
    ct = RNG.standard_normal(X.shape)
    value, (gx,) = reactant.vjp(reactant.vmap(f), reactant.to_rarray(X), cotangent=reactant.to_rarray(ct))
    ref_v, vjp_fn = jax64(lambda: jax.vjp(jax.vmap(fj), X))
    close(value, ref_v)
    close(gx, jax64(lambda: jax.vjp(jax.vmap(fj), X)[1](ct)[0]))
    jac = reactant.vmap(lambda r: reactant.jacobian(f, r))(reactant.to_rarray(X))
    close(jac, jax64(jax.vmap(jax.jacfwd(fj)), X))


# -- the batched program ---------------------------------------------------------------------
T = RNG.standard_normal((10, 3))
LABELS = RNG.integers(0, 10, 5)


def _onehot(label):
    y = np.zeros(10)
    y[label] = 1.0
    return y


def _piecewise(x):
    if x.sum() > 0:
        return np.sqrt(np.abs(x))
    return x ** 2


@pytest.mark.parametrize("f,args", [
    (lambda x: np.exp(x) * 2 + x ** 2, (X,)),  # elementwise
    (lambda x: x @ W, (X,)),  # matmul
    (lambda m, x: m @ x, (M, X)),  # a matrix and a vector per example
    (lambda x: (x - x.mean()) / x.std(), (X,)),  # reductions
    (lambda x: np.exp(x - x.max()) / np.exp(x - x.max()).sum(), (X,)),  # softmax
    (lambda x: x[1] + x[-1] + x[1:3].sum(), (X,)),  # constant indices and slices
    (lambda x: x[np.array([2, 0, 1])], (X,)),  # constant integer-array index (a gather)
    (lambda i: T[i], (LABELS,)),  # a table read at a per-example index (embedding lookup)
    (lambda x, i: x[i % 3], (X, LABELS)),  # a per-example index into a per-example array
    (_onehot, (LABELS,)),  # a write at a per-example index
    (lambda x: np.cumsum(x), (X,)),  # reduce_window
    (lambda x: np.sort(x), (X,)),
    (_piecewise, (X,)),  # a traced if: both branches, selected
])
def test_typical_bodies_are_batched_without_a_loop(f, args):
    g = compiled_vmap(f)
    ra = reactant.to_rarray(args)
    close(g(*ra), np.stack([f(*[a[k] for a in args]) for k in range(args[0].shape[0])]))
    assert "stablehlo.while" not in hlo(g, *ra)


def test_a_loop_in_the_mapped_function_becomes_one_loop_over_the_batch():
    def euler(y0, k):  # an ODE integrator: a kept loop with a recurrence
        y = y0
        for _ in range(reactant.keep(50)):
            y = y - 0.01 * k * y * np.abs(y).sum()
        return y

    ks = np.linspace(0.5, 2.0, 5)
    g = compiled_vmap(euler)
    ra = rarrays(X, ks)
    close(g(*ra), np.stack([euler(y, k) for y, k in zip(X, ks)]))
    text = hlo(g, *ra)
    assert text.count("stablehlo.while") == 1 and "tensor<5x3xf64>" in text.split("stablehlo.while")[1].split("\n")[0]


def test_a_body_without_batching_rules_stays_a_correct_loop():
    def f(m):  # np.linalg.solve is a library call the loop raising does not batch
        return np.linalg.solve(m @ m.T + 3 * np.eye(3), m[0])

    g = compiled_vmap(f)
    m = reactant.to_rarray(M)
    close(g(m), np.stack([f(a) for a in M]), tol=1e-9)
    assert "stablehlo.while" in hlo(g, m)


# -- errors ----------------------------------------------------------------------------------
def _raises(exc, match, fn, *args):
    with pytest.raises(exc, match=match) as info:
        fn(*args)
    assert "test_vmap.py" in str(info.value)  # names the user's line
    return info.value


def test_error_inconsistent_batch_sizes_names_the_shapes():
    x, y = rarrays(np.ones((3, 4)), np.ones(5))
    e = _raises(reactant.ShapeError, "inconsistent sizes", reactant.vmap(lambda a, b: a.sum() + b), x, y)
    assert "(3, 4)" in str(e) and "(5,)" in str(e)


def test_error_axes_out_of_range():
    x = reactant.to_rarray(np.ones((3, 4)))
    e = _raises(reactant.ShapeError, "in_axes 2 is out of range", reactant.vmap(lambda a: a, in_axes=2), x)
    assert "(3, 4)" in str(e)
    _raises(reactant.ShapeError, "out_axes -3 is out of range", reactant.vmap(lambda a: a, out_axes=-3), x)


def test_error_mapped_result_with_out_axes_none():
    x = reactant.to_rarray(np.ones((3, 4)))
    _raises(reactant.ShapeError, "depends on the mapped arguments", reactant.vmap(lambda a: a * 2, out_axes=None), x)


def test_errors_in_axes_specifications():
    x = reactant.to_rarray(np.ones((3, 4)))
    _raises(reactant.ArgumentError, "at least one mapped", reactant.vmap(lambda a: a, in_axes=None), x)
    _raises(reactant.ArgumentError, "2 entries", reactant.vmap(lambda a: a, in_axes=(0, 0)), x)
    _raises(reactant.ArgumentError, "not a pytree prefix", reactant.vmap(lambda a: a, in_axes=((0, 0),)), x)
    _raises(reactant.ArgumentError, "can map only arrays", reactant.vmap(lambda a, s: a, in_axes=(0, 0)), x, "s")
    _raises(reactant.ArgumentError, "got a dict", reactant.vmap(lambda a: a, in_axes={"a": 0}), x)
    with pytest.raises(reactant.ArgumentError, match="must be an int, None"):
        reactant.vmap(lambda a: a, in_axes=1.5)


def test_error_writing_into_a_mapped_argument():
    def f(row):
        row[0] = 0.0
        return row

    x = reactant.to_rarray(np.ones((3, 4)))
    _raises(reactant.UnsupportedError, "writes into its mapped argument", reactant.vmap(f), x)
    np.testing.assert_array_equal(np.asarray(x), np.ones((3, 4)))


def test_error_mapped_function_changing_python_state():
    log = []

    def f(row):
        log.append(row)  # would run once per example in NumPy, once here
        return row * 2

    x = reactant.to_rarray(np.ones((3, 4)))
    _raises(reactant.ConcretizationError, "changes Python state", reactant.vmap(f), x)


# -- np.vectorize and np.apply_along_axis on traced arrays -----------------------------------
def _step(a, b):
    if a > b:
        return a - b
    return a * b


def test_vectorize_scalar_function_with_broadcasting():
    vs = np.vectorize(_step)  # made outside the compiled function
    b = RNG.standard_normal(3)
    g = reactant.compile(lambda x, y: (vs(x, y), vs(x, 0.5), np.vectorize(_step)(x, b)))
    out = g(*rarrays(X, b))
    close(out[0], vs(X, b))
    close(out[1], vs(X, 0.5))
    close(out[2], vs(X, b))
    assert "stablehlo.while" not in hlo(g, *rarrays(X, b))


def test_vectorize_outputs_otypes_excluded_and_keywords():
    def f(a, b, scale=1.0):
        return a * scale + b, a > b

    xs, ys = X[0], X[1]
    vf = np.vectorize(f)
    out = reactant.compile(lambda x, y: vf(x, y, scale=2.0))(*rarrays(xs, ys))
    ref = vf(xs, ys, scale=2.0)
    close(out[0], ref[0])
    np.testing.assert_array_equal(np.asarray(out[1]), ref[1])
    assert np.asarray(out[1]).dtype == ref[1].dtype == np.bool_

    vi = np.vectorize(lambda a, n: a * n, otypes=[np.float32], excluded={1})
    out = reactant.compile(lambda x: vi(x, 3))(reactant.to_rarray(X))
    close(out, vi(X, 3), tol=1e-6)


def test_vectorize_with_a_gufunc_signature():
    dot = np.vectorize(lambda a, b: (a * b).sum(), signature="(n),(n)->()")
    normalize = np.vectorize(lambda a: a / np.linalg.norm(a), signature="(n)->(n)")
    outer = np.vectorize(np.outer, signature="(m),(n)->(m,n)")
    g = reactant.compile(lambda x, m: (dot(x, m[:, 0]), normalize(x), outer(x, m[0, 0])))
    out = g(*rarrays(X, M))
    close(out[0], dot(X, M[:, 0]))
    close(out[1], normalize(X))
    close(out[2], outer(X, M[0, 0]))
    assert np.asarray(out[2]).shape == (5, 3, 3)


def _double(v):
    return v * 2


def _pair(v):
    return np.ones(2) * v


def test_vectorize_errors_like_numpy():
    x = reactant.to_rarray(np.ones((0, 3)))
    with pytest.raises(reactant.ShapeError, match="size 0 inputs unless `otypes`"):
        reactant.compile(lambda a: np.vectorize(_double)(a))(x)
    out = reactant.compile(lambda a: np.vectorize(_double, otypes=[np.float64])(a))(x)
    assert np.asarray(out).shape == (0, 3) and np.asarray(out).dtype == np.float64
    with pytest.raises(reactant.ShapeError, match="where a scalar is expected"):
        reactant.compile(lambda a: np.vectorize(_pair)(a))(reactant.to_rarray(X))
    with pytest.raises(reactant.ShapeError, match="inconsistent size for core dimension 'n'"):
        dot = np.vectorize(lambda a, b: (a * b).sum(), signature="(n),(n)->()")
        reactant.compile(lambda a, b: dot(a, b))(*rarrays(X, W))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("func1d", [
    lambda r: r.max() - r.min(),  # a scalar: the axis goes away
    lambda r: np.sort(r)[::-1][:2],  # a vector in its place
    np.diag,  # a matrix in its place
])
def test_apply_along_axis(func1d, axis):
    g = reactant.compile(lambda x: np.apply_along_axis(func1d, axis, x))
    close(g(reactant.to_rarray(X)), np.apply_along_axis(func1d, axis, X))


def test_apply_along_axis_extra_arguments_eager_and_errors():
    f = lambda r, k, scale=1.0: r[:k] * scale  # noqa: E731
    g = reactant.compile(lambda x, s: np.apply_along_axis(f, 1, x, 2, scale=s))
    close(g(*rarrays(X, np.float64(3.0))), np.apply_along_axis(f, 1, X, 2, scale=3.0))
    close(np.apply_along_axis(np.cumsum, 0, reactant.to_rarray(X)), np.apply_along_axis(np.cumsum, 0, X))
    with pytest.raises(reactant.ShapeError, match="iteration dimensions are 0"):
        reactant.compile(lambda x: np.apply_along_axis(np.sum, 1, x))(reactant.to_rarray(np.ones((0, 3))))
