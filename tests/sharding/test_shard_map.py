"""shard_map with every collective, forward and through AD, and sharding constraints, on the 8
simulated CPU devices: results against the same NumPy program unsharded, derivatives against
jax.grad / jax.jvp of the global function."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import reactant
from reactant.sharding import (
    NamedSharding, Replicated, ShardingError, all_gather, all_to_all, axis_index, axis_size, constrain, make_mesh,
    pmax, pmean, pmin, ppermute, psum, psum_scatter, shard_map,
)

R = np.random.default_rng(1)


@pytest.fixture(scope="module")
def mesh():
    return make_mesh((8,), ("d",))


@pytest.fixture(scope="module")
def mesh2():
    return make_mesh((2, 4), ("a", "b"))


def rows(a, mesh, spec=("d",)):
    return reactant.to_rarray(a, sharding=NamedSharding(mesh, spec))


def blocks(a, n):
    """The n row blocks of ``a`` (what each device holds of a row-sharded array)."""
    return np.split(a, n)


# -- forward: each collective against NumPy ------------------------------------------------------
def test_psum_pmax_pmin_pmean_axis_index_axis_size(mesh):
    a = R.standard_normal((16, 3)).astype(np.float32)
    f = reactant.compile(shard_map(
        lambda x: (psum(x, "d"), pmax(x, "d"), pmin(x, "d"), pmean(x, "d"), x * 0 + axis_index("d"),
                   psum(1, "d") + axis_size("d") * 0),
        mesh, ("d",), (None, None, None, None, ("d",), None)))
    s, mx, mn, me, idx, n = f(rows(a, mesh))
    bl = np.stack(blocks(a, 8))
    np.testing.assert_allclose(np.asarray(s), bl.sum(0), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(mx), bl.max(0))
    np.testing.assert_array_equal(np.asarray(mn), bl.min(0))
    np.testing.assert_allclose(np.asarray(me), bl.mean(0), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(idx), np.repeat(np.arange(8), 2)[:, None] * np.ones((1, 3)))
    assert int(n) == 8
    assert s.sharding == Replicated(mesh)


def test_all_gather_psum_scatter_ppermute(mesh):
    a = R.standard_normal((16, 8)).astype(np.float32)
    perm = [(i, (i + 1) % 8) for i in range(8)]
    f = reactant.compile(shard_map(
        lambda x: (all_gather(x, "d"), all_gather(x, "d", axis=1), all_gather(x, "d", tiled=False),
                   psum_scatter(x, "d", scatter_dimension=1), ppermute(x, "d", perm[:-1])),
        mesh, ("d",), ("d", "d", "d", "d", "d"), check_vma=False))
    g0, g1, g2, rs, pp = (np.asarray(v) for v in f(rows(a, mesh)))
    bl = blocks(a, 8)
    np.testing.assert_array_equal(g0, np.concatenate([a] * 8))
    np.testing.assert_array_equal(g1, np.concatenate([np.concatenate(bl, axis=1)] * 8))
    np.testing.assert_array_equal(g2, np.concatenate([np.stack(bl)] * 8))
    total = sum(bl)  # (2, 8): device k keeps column k
    np.testing.assert_allclose(rs, np.concatenate([total[:, k:k + 1] for k in range(8)]), rtol=1e-5)
    want = [np.zeros_like(bl[0])] + bl[:-1]  # device 0 is no pair's target: zeros
    np.testing.assert_array_equal(pp, np.concatenate(want))


def test_all_to_all_tiled_and_untiled(mesh):
    a = R.standard_normal((16, 8)).astype(np.float32)
    f = reactant.compile(shard_map(lambda x: all_to_all(x, "d", 1, 0, tiled=True), mesh, ("d",), ("d",)))
    out = np.asarray(f(rows(a, mesh)))
    bl = blocks(a, 8)  # device k receives column block k of every device, stacked on rows
    np.testing.assert_array_equal(out, np.concatenate([np.concatenate([b[:, k:k + 1] for b in bl]) for k in range(8)]))
    b8 = R.standard_normal((64, 3)).astype(np.float32)  # blocks (8, 3): split axis 0 has the axis size
    g = reactant.compile(shard_map(lambda x: all_to_all(x, "d", 0, 1), mesh, ("d",), ("d",)))
    out = np.asarray(g(rows(b8, mesh)))
    bl = blocks(b8, 8)
    np.testing.assert_array_equal(out, np.concatenate([np.stack([b[k] for b in bl], axis=1)[None][0] for k in range(8)]))


def test_collectives_over_one_axis_of_a_2d_mesh(mesh2):
    a = R.standard_normal((4, 8)).astype(np.float32)
    f = reactant.compile(shard_map(lambda x: (psum(x, "b"), x * 0 + axis_index(("a", "b"))),
                                   mesh2, (("a", "b"),), (("a",), ("a", "b"))))
    s, idx = f(reactant.to_rarray(a, sharding=NamedSharding(mesh2, ("a", "b"))))
    # device (i, j) holds a[2i:2i+2, 2j:2j+2]; psum over "b" adds the j blocks of row band i
    want = np.concatenate([sum(np.split(band, 4, axis=1)) for band in np.split(a, 2)])
    np.testing.assert_allclose(np.asarray(s), want, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(idx), np.kron(np.arange(8).reshape(2, 4), np.ones((2, 2))))


def test_closures_enter_replicated_and_pytrees_work(mesh):
    a = R.standard_normal((16, 4))
    c = R.standard_normal((4,))
    f = reactant.compile(lambda x, c: shard_map(lambda t: {"s": psum(t["x"] @ c, "d")}, mesh,
                                                ({"x": ("d",)},), {"s": None})({"x": x}))
    out = f(rows(a, mesh), reactant.to_rarray(c, sharding=Replicated(mesh)))
    np.testing.assert_allclose(np.asarray(out["s"]), sum(b @ c for b in blocks(a, 8)), rtol=1e-10)


def test_shard_map_outside_a_trace_runs_compiled(mesh):
    a = R.standard_normal((16, 2))
    f = shard_map(lambda x: psum(np.sum(x * x), "d"), mesh, ("d",), None)
    np.testing.assert_allclose(float(f(rows(a, mesh))), np.sum(a * a), rtol=1e-10)
    np.testing.assert_allclose(float(f(rows(2 * a, mesh))), 4 * np.sum(a * a), rtol=1e-10)


# -- derivatives ------------------------------------------------------------------------------------
def _grads(f, *args):
    return reactant.compile(lambda *a: reactant.gradient(f, *a, argnums=tuple(range(len(a)))))(*args)


def test_gradient_of_psum_is_a_broadcast(mesh):
    x, w = R.standard_normal((16, 4)), R.standard_normal((4,))
    loss = lambda x, w: shard_map(lambda xb, wb: psum(np.sum(np.tanh(xb @ wb) ** 2), "d"), mesh,  # noqa: E731
                                  ("d", None), None)(x, w)
    gx, gw = _grads(loss, rows(x, mesh), reactant.to_rarray(w, sharding=Replicated(mesh)))
    with jax.enable_x64(True):
        jx, jw = jax.grad(lambda x, w: jnp.sum(jnp.tanh(x @ w) ** 2), (0, 1))(x, w)
    np.testing.assert_allclose(np.asarray(gx), jx, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(gw), jw, rtol=1e-10)
    assert gw.sharding == Replicated(mesh)
    text = reactant.code_xla(lambda x, w: reactant.gradient(loss, x, w, argnums=(0, 1)),
                             rows(x, mesh), reactant.to_rarray(w, sharding=Replicated(mesh)))
    # one sum of w's cotangent over the devices: the psum's adjoint communicates nothing (and
    # the forward psum is dead when only gradients are asked for)
    assert text.count("all-reduce(") == 1


@pytest.mark.parametrize("which", ["all_gather", "psum_scatter", "ppermute", "all_to_all", "pmax", "pmean"])
def test_gradients_of_collectives_match_jax(mesh, which):
    x = R.standard_normal((16, 8))
    c = R.standard_normal((128, 8)) if which == "all_gather" else R.standard_normal((16, 8))
    if which == "psum_scatter":
        c = R.standard_normal((16, 1))
    if which == "all_to_all":
        c = R.standard_normal((128, 1))
    n = 8
    perm = [(i, (i + 3) % n) for i in range(n)]
    body = {
        "all_gather": lambda b: all_gather(np.sin(b), "d"),
        "psum_scatter": lambda b: psum_scatter(np.sin(b), "d", scatter_dimension=1),
        "ppermute": lambda b: ppermute(np.sin(b), "d", perm),
        "all_to_all": lambda b: all_to_all(np.sin(b), "d", 1, 0, tiled=True),
        "pmax": lambda b: pmax(np.sin(b), "d") * b,
        "pmean": lambda b: pmean(np.sin(b), "d") * b,
    }[which]
    loss = lambda x, c: np.sum(shard_map(body, mesh, ("d",), ("d",), check_vma=False)(x) * c)  # noqa: E731

    def jbody(b):
        return {
            "all_gather": lambda: jax.lax.all_gather(jnp.sin(b), "d", tiled=True),
            "psum_scatter": lambda: jax.lax.psum_scatter(jnp.sin(b), "d", scatter_dimension=1, tiled=True),
            "ppermute": lambda: jax.lax.ppermute(jnp.sin(b), "d", perm),
            "all_to_all": lambda: jax.lax.all_to_all(jnp.sin(b), "d", 1, 0, tiled=True),
            "pmean": lambda: jax.lax.pmean(jnp.sin(b), "d") * b,
        }[which]()

    jm = jax.sharding.Mesh(np.array(jax.devices()[:8]), ("d",))
    P = jax.sharding.PartitionSpec
    jloss = lambda x, c: jnp.sum(jax.shard_map(jbody, mesh=jm, in_specs=P("d"), out_specs=P("d"),  # noqa: E731
                                               check_vma=False)(x) * c)
    if which == "pmax":
        def jloss(x, c):
            b = x.reshape(8, 2, 8)
            return jnp.sum((jnp.max(jnp.sin(b), axis=0)[None] * b).reshape(16, 8) * c)
    gx, gc = _grads(loss, rows(x, mesh), rows(c, mesh))
    with jax.enable_x64(True):
        jx, jc = jax.jit(jax.grad(jloss, (0, 1)))(x, c)
    np.testing.assert_allclose(np.asarray(gc), jc, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gx), jx, rtol=1e-9, atol=1e-12)
    # forward mode agrees with reverse: <J t, c> == <t, J^T c>
    t = R.standard_normal(x.shape)
    f = lambda x: shard_map(body, mesh, ("d",), ("d",), check_vma=False)(x)  # noqa: E731
    _, jt = reactant.compile(lambda x, t: reactant.jvp(f, (x,), (t,)))(rows(x, mesh), rows(t, mesh))
    np.testing.assert_allclose(np.sum(np.asarray(jt) * c), np.sum(np.asarray(gx) * t), rtol=1e-9)


def test_replicated_output_that_varies_gets_an_equal_share_of_the_cotangent(mesh):
    # all_gather's result is the same on every device; declared replicated (check_vma=False)
    x = R.standard_normal((16, 2))
    loss = lambda x: np.sum(np.cos(shard_map(lambda b: all_gather(b, "d"), mesh, ("d",), None,  # noqa: E731
                                             check_vma=False)(x)))
    (g,) = _grads(loss, rows(x, mesh))
    np.testing.assert_allclose(np.asarray(g), -np.sin(x), rtol=1e-12)


def test_data_parallel_training_with_shard_map(mesh):
    x, y = R.standard_normal((32, 5)), R.standard_normal((32,))
    w0 = R.standard_normal((5,))

    def step(w, x, y):
        def local(w, xb, yb):
            g = 2 * xb.T @ (xb @ w - yb) / 32
            return w - 0.1 * psum(g, "d")
        return shard_map(local, mesh, (None, "d", "d"), None)(w, x, y)

    f = reactant.compile(step)
    w = reactant.to_rarray(w0, sharding=Replicated(mesh))
    X, Y = rows(x, mesh), rows(y, mesh)
    wn = w0.copy()
    for _ in range(10):
        w = f(w, X, Y)
        wn = wn - 0.1 * 2 * x.T @ (x @ wn - y) / 32
    np.testing.assert_allclose(np.asarray(w), wn, rtol=1e-10)


# -- constraints ------------------------------------------------------------------------------------
def test_constrain_inside_and_outside_a_trace(mesh2):
    a = R.standard_normal((8, 8))
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh2, ("a",)))
    f = reactant.compile(lambda x: constrain(np.sin(x), NamedSharding(mesh2, (None, "b"))) * 2)
    y = f(x)
    np.testing.assert_allclose(np.asarray(y), np.sin(a) * 2)
    assert y.sharding == NamedSharding(mesh2, (None, "b"))
    assert 'sdy.sharding_constraint' in reactant.code_hlo(f, x)
    z = constrain(x, NamedSharding(mesh2, ("b", "a")))
    assert z.sharding == NamedSharding(mesh2, ("b", "a"))
    np.testing.assert_array_equal(np.asarray(z), a)
    (g,) = _grads(lambda x: np.sum(constrain(np.sin(x), Replicated(mesh2)) ** 2), x)
    np.testing.assert_allclose(np.asarray(g), 2 * np.sin(a) * np.cos(a), rtol=1e-12)


def test_optimizer_keeps_shardings_and_constraints(mesh2):
    a = R.standard_normal((8, 8))
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh2, ("a",)))

    def f(x):
        t = constrain(x.T, NamedSharding(mesh2, ("b",)))  # transpose(transpose(.)) must not fold across it
        y = shard_map(lambda b: psum(b * 1.0 + 0.0, "b"), mesh2, (("a", "b"),), ("a",))(t.T)
        return y

    for level in ("O1", "O2"):
        text = reactant.code_hlo(f, x, optimize=level)
        assert text.count("sdy.sharding_constraint") == 1 and '<@mesh, [{"b"}, {}]>' in text
        assert 'in_shardings=[<@mesh, [{"a"}, {"b"}]>]' in text and 'manual_axes={"a", "b"}' in text
        assert "stablehlo.all_reduce" in text
    want = np.concatenate([sum(np.split(band, 4, axis=1)) for band in np.split(a, 2)])
    np.testing.assert_allclose(np.asarray(reactant.compile(f)(x)), want, rtol=1e-12)


# -- bad input ---------------------------------------------------------------------------------------
def test_bad_shard_map_use_is_a_clear_error(mesh, mesh2):
    a = rows(R.standard_normal((16, 4)), mesh)

    def err(fn, *args, match):
        with pytest.raises(ShardingError, match=match):
            reactant.compile(fn)(*args)

    err(lambda x: psum(x, "d"), a, match="inside a function given to reactant.sharding.shard_map")
    err(shard_map(lambda x: psum(x, "q"), mesh, ("d",), ("d",)), a, match="'q' is not a manual axis")
    err(shard_map(lambda x: (x, x), mesh, ("d",), (("d",),) * 3), a, match="out_specs disagree")
    err(shard_map(lambda x: x.sum(), mesh, ("d",), ("d",)), a, match="out_specs disagree")
    err(shard_map(lambda x: x * 2, mesh, ("d",), None), a, match="replicated over mesh axes \\['d'\\]")
    err(shard_map(lambda x: x, mesh, ((None, "d"),), (None, "d")), a, match="dimension 1 of size 4 is not divisible")

    def inplace(x):
        x += 1
        return x

    err(shard_map(inplace, mesh, ("d",), ("d",)), a, match="updates an array in place")
    err(shard_map(lambda x: constrain(x, Replicated(mesh)), mesh, ("d",), ("d",)), a, match="constrain inside")
    err(shard_map(lambda x: ppermute(x, "d", [(0, 1), (1, 1)]), mesh, ("d",), ("d",)), a,
        match="not a partial permutation")
    single = reactant.to_rarray(np.ones(16))
    err(lambda x: constrain(x, Replicated(mesh)), single, match="arguments are on a single device")
    err(lambda x: constrain(x, Replicated(mesh2)), a, match="arguments are on")


def test_collectives_in_a_helper_called_twice(mesh):
    # the helper is traced once and called (func.call): its psum still makes the result invariant
    def helper(t):
        return psum(np.sum(t * t), "d")

    a = R.standard_normal((16, 3))
    f = reactant.compile(shard_map(lambda x: helper(x) + helper(2 * x), mesh, ("d",), None))
    np.testing.assert_allclose(float(f(rows(a, mesh))), 5 * np.sum(a * a), rtol=1e-12)


def test_gradient_through_loops_inside_and_around_shard_map(mesh):
    x = R.standard_normal((16, 3))

    def block_step(b):  # a loop inside the block (taped residuals feed its adjoint)
        def body(i, c):
            return np.sin(c) * 1.5 + psum(np.sum(c), "d") * 0.01
        return reactant.fori_loop(0, 3, body, b)

    def inner(x):
        return np.sum(shard_map(block_step, mesh, ("d",), ("d",))(x) ** 2)

    def outer(x):  # shard_map in a loop body (its adjoint recomputes the block)
        for _ in range(reactant.keep(3)):
            x = shard_map(lambda b: np.sin(b) * 1.5 + psum(np.sum(b), "d") * 0.01, mesh, ("d",), ("d",))(x)
        return np.sum(x ** 2)

    def jstep(c):
        return jnp.sin(c) * 1.5 + jnp.sum(c) * 0.01

    def jloss(x):
        for _ in range(3):
            x = jstep(x)
        return jnp.sum(x ** 2)

    with jax.enable_x64(True):
        want = np.asarray(jax.grad(jloss)(x))
    for f in (inner, outer):
        (g,) = _grads(f, rows(x, mesh))
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-10)
        t = R.standard_normal(x.shape)
        _, jt = reactant.compile(lambda x, t: reactant.jvp(f, (x,), (t,)))(rows(x, mesh), rows(t, mesh))
        np.testing.assert_allclose(float(jt), np.sum(want * t), rtol=1e-10)


def test_random_numbers_in_a_program_over_a_mesh(mesh):
    g = reactant.random.default_rng(5, sharding=Replicated(mesh))
    twin = reactant.random.default_rng(5)
    x = rows(np.zeros((16, 4)), mesh)
    y = reactant.compile(lambda x, g: x + g.standard_normal((16, 4)))(x, g)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(twin.standard_normal((16, 4))))
    assert g.state.sharding == Replicated(mesh)
