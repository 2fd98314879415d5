"""SPMD programs over a mesh of the 8 simulated CPU devices: every sharded result is compared
with the same NumPy program run unsharded."""

import numpy as np
import pytest

import reactant
from reactant.sharding import Mesh, NamedSharding, Replicated, ShardingError, make_mesh

R = np.random.default_rng(0)


@pytest.fixture(scope="module")
def mesh():
    return make_mesh((8,), ("x",))


@pytest.fixture(scope="module")
def mesh2d():
    return make_mesh((4, 2), ("data", "model"))


def test_placement_shards_and_gather(mesh):
    a = R.standard_normal((16, 3)).astype(np.float32)
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh, ("x",)))
    assert x.sharding == NamedSharding(mesh, ("x", None))
    shards = x.addressable_shards
    assert len(shards) == 8 and all(s.data.shape == (2, 3) for s in shards)
    np.testing.assert_array_equal(np.concatenate([s.data for s in sorted(shards, key=lambda s: s.index[0].start)]), a)
    np.testing.assert_array_equal(np.asarray(x), a)


def test_partition_spec_names_axes_per_dimension(mesh2d):
    P = reactant.sharding.PartitionSpec
    assert P("data") == ("data",) and P("data", None) == ("data", None) and P() == ()  # not tuple("data")
    assert P(("data", "model")) == (("data", "model"),) and repr(P("data")) == "PartitionSpec('data')"
    a = R.standard_normal((8, 6)).astype(np.float32)
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh2d, P("data")))
    assert {s.data.shape for s in x.addressable_shards} == {(2, 6)}
    y = reactant.to_rarray(a, sharding=NamedSharding(mesh2d, P(None, "model")))
    assert {s.data.shape for s in y.addressable_shards} == {(8, 3)}
    z = reactant.to_rarray(a, sharding=NamedSharding(mesh2d, P(("data", "model"))))
    assert {s.data.shape for s in z.addressable_shards} == {(1, 6)}
    np.testing.assert_allclose(np.asarray(reactant.compile(lambda u, v: u @ v.T)(x, y)), a @ a.T, rtol=1e-5)
    with pytest.raises(TypeError, match="mesh axis names"):
        P(0)


def test_matmul_over_the_sharded_contracting_dimension(mesh):
    a, b = R.standard_normal((8, 32)).astype(np.float32), R.standard_normal((32, 4)).astype(np.float32)
    ra = reactant.to_rarray(a, sharding=NamedSharding(mesh, (None, "x")))
    rb = reactant.to_rarray(b, sharding=NamedSharding(mesh, ("x",)))
    f = reactant.compile(lambda a, b: np.tanh(a @ b))
    np.testing.assert_allclose(np.asarray(f(ra, rb)), np.tanh(a @ b), rtol=1e-5, atol=1e-5)
    assert "all-reduce" in reactant.code_xla(f, ra, rb)
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>' in reactant.code_hlo(f, ra, rb)


def test_results_keep_propagated_shardings_and_out_shardings(mesh):
    a = R.standard_normal((8, 6))
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh, ("x",)))
    y, s = reactant.compile(lambda x: (np.sin(x) * 2, x.sum(axis=0)))(x)
    assert y.sharding == NamedSharding(mesh, ("x",)) and s.sharding == Replicated(mesh)
    np.testing.assert_allclose(np.asarray(y), np.sin(a) * 2)
    np.testing.assert_allclose(np.asarray(s), a.sum(axis=0))
    z = reactant.compile(lambda x: x + 1, out_shardings=Replicated(mesh))(x)
    assert z.sharding == Replicated(mesh)
    np.testing.assert_allclose(np.asarray(z), a + 1)
    t = reactant.compile(lambda x: {"a": x * 3, "b": x}, out_shardings={"a": NamedSharding(mesh, (None,)), "b": None})(x)
    assert t["a"].sharding == Replicated(mesh)


def test_shardings_are_part_of_the_cache_key(mesh):
    a = R.standard_normal((8, 8))
    f = reactant.compile(lambda x: x * x)
    rows = reactant.to_rarray(a, sharding=NamedSharding(mesh, ("x",)))
    cols = reactant.to_rarray(a, sharding=NamedSharding(mesh, (None, "x")))
    for x in (rows, cols, rows):
        np.testing.assert_allclose(np.asarray(f(x)), a * a)
    assert f.compile_count == 2


def test_in_place_update_keeps_the_sharding(mesh):
    a = R.standard_normal((16, 4))
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh, ("x",)))

    @reactant.compile
    def step(x):
        x[...] = x * 0.5 + 1.0

    for _ in range(3):
        step(x)
        a = a * 0.5 + 1.0
    np.testing.assert_allclose(np.asarray(x), a)
    assert x.sharding == NamedSharding(mesh, ("x",))


def test_eager_operations_on_sharded_arrays(mesh):
    a = R.standard_normal((8, 3))
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh, ("x",)))
    np.testing.assert_allclose(np.asarray(np.exp(x) + 1), np.exp(a) + 1)
    np.testing.assert_allclose(np.asarray(x[2:5]), a[2:5])


def test_data_parallel_gradient_equals_the_unsharded_one(mesh):
    w = R.standard_normal((5, 3))
    xb, yb = R.standard_normal((32, 5)), R.standard_normal((32, 3))

    def loss(w, x, y):
        return np.mean((np.tanh(x @ w) - y) ** 2)

    grad = reactant.compile(lambda w, x, y: reactant.gradient(loss, w, x, y))
    rep = Replicated(mesh)
    g_sharded = grad(reactant.to_rarray(w, sharding=rep), reactant.to_rarray(xb, sharding=NamedSharding(mesh, ("x",))),
                     reactant.to_rarray(yb, sharding=NamedSharding(mesh, ("x",))))
    g_plain = grad(reactant.to_rarray(w), reactant.to_rarray(xb), reactant.to_rarray(yb))
    assert g_sharded.sharding == rep
    np.testing.assert_allclose(np.asarray(g_sharded), np.asarray(g_plain), rtol=1e-10, atol=1e-12)


def test_data_parallel_training_steps_in_place(mesh):
    """A data-parallel MLP training step, parameters updated in place, over 10 steps."""
    p = {"w1": R.standard_normal((4, 16)) * 0.5, "w2": R.standard_normal((16, 2)) * 0.5}
    xb, yb = R.standard_normal((64, 4)), R.standard_normal((64, 2))

    def loss(p, x, y):
        return np.mean((np.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)

    @reactant.compile
    def train(p, x, y):
        g = reactant.gradient(loss, p, x, y)
        for k in p:
            p[k] -= 0.1 * g[k]
        return loss(p, x, y)

    rp = reactant.to_rarray(p, sharding=Replicated(mesh))
    rx = reactant.to_rarray(xb, sharding=NamedSharding(mesh, ("x",)))
    ry = reactant.to_rarray(yb, sharding=NamedSharding(mesh, ("x",)))
    qp = reactant.to_rarray(p)
    qx, qy = reactant.to_rarray(xb), reactant.to_rarray(yb)
    for _ in range(10):
        l_sharded, l_plain = float(train(rp, rx, ry)), float(train(qp, qx, qy))
        assert np.isclose(l_sharded, l_plain, rtol=1e-10)
    for k in p:
        np.testing.assert_allclose(np.asarray(rp[k]), np.asarray(qp[k]), rtol=1e-10)
        assert rp[k].sharding == Replicated(mesh)


def test_tensor_parallel_mlp_on_a_2d_mesh(mesh2d):
    x = R.standard_normal((8, 6)).astype(np.float32)
    w1, w2 = R.standard_normal((6, 8)).astype(np.float32), R.standard_normal((8, 6)).astype(np.float32)
    f = reactant.compile(lambda x, w1, w2: np.maximum(x @ w1, 0) @ w2)
    out = f(reactant.to_rarray(x, sharding=NamedSharding(mesh2d, ("data",))),
            reactant.to_rarray(w1, sharding=NamedSharding(mesh2d, (None, "model"))),
            reactant.to_rarray(w2, sharding=NamedSharding(mesh2d, ("model",))))
    np.testing.assert_allclose(np.asarray(out), np.maximum(x @ w1, 0) @ w2, rtol=1e-4, atol=1e-4)


def test_row_sharded_heat_stencil_in_a_traced_loop(mesh):
    u0 = R.random((64, 16))

    def heat(u, steps):
        for _ in range(reactant.keep(steps)):
            lap = np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4 * u
            u = u + 0.1 * lap
        return u

    def heat_np(u, steps):
        for _ in range(steps):
            u = u + 0.1 * (np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4 * u)
        return u

    f = reactant.compile(heat)
    u = reactant.to_rarray(u0, sharding=NamedSharding(mesh, ("x",)))
    np.testing.assert_allclose(np.asarray(f(u, 50)), heat_np(u0, 50), rtol=1e-12)
    assert "stablehlo.while" in reactant.code_hlo(f, u, 50)


def test_a_thousand_calls_of_a_collective_program_do_not_deadlock(mesh):
    """XLA's CPU rendezvous aborts past ~100 queued dispatches of a collective program; the
    library syncs periodically, so a user's loop may queue as many as it likes."""
    a = R.standard_normal((8, 8)).astype(np.float32)
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh, (None, "x")))
    f = reactant.compile(lambda x: x.sum(axis=1))
    for _ in range(1000):
        y = f(x)
    np.testing.assert_allclose(np.asarray(y), a.sum(axis=1), rtol=1e-5)


# -- bad input -----------------------------------------------------------------------------------
def test_bad_shardings_are_clear_errors(mesh, mesh2d):
    a = np.zeros((8, 6))
    with pytest.raises(ShardingError, match="axis 'y' is not in the mesh"):
        NamedSharding(mesh, ("y",))
    with pytest.raises(ShardingError, match="used twice"):
        NamedSharding(mesh2d, ("data", ("model", "data")))
    with pytest.raises(ShardingError, match="more than the array's rank 2"):
        reactant.to_rarray(a, sharding=NamedSharding(mesh2d, (None, "model", "data")))
    # (a dimension the mesh does not divide is placed padded: tests/sharding/test_uneven.py)
    np.testing.assert_array_equal(np.asarray(reactant.to_rarray(a, sharding=NamedSharding(mesh, (None, "x")))), a)
    with pytest.raises(ShardingError, match="needs 16 devices"):
        make_mesh((16,), ("x",))
    with pytest.raises(ShardingError, match="axis names"):
        Mesh(np.array(mesh.devices), ("x", "y"))


def test_arguments_on_two_meshes_or_a_single_device_are_errors(mesh, mesh2d):
    f = reactant.compile(lambda a, b: a + b)
    x = reactant.to_rarray(np.ones((8, 2)), sharding=NamedSharding(mesh, ("x",)))
    y = reactant.to_rarray(np.ones((8, 2)), sharding=NamedSharding(mesh2d, ("data",)))
    with pytest.raises(ShardingError, match="2 different meshes"):
        f(x, y)
    with pytest.raises(ShardingError, match="single device"):
        f(x, reactant.to_rarray(np.ones((8, 2))))
    assert f.compile_count == 0


def test_jax_meshes_and_shardings_are_accepted(mesh):
    import jax

    jmesh = jax.sharding.Mesh(np.array(mesh.devices), ("x",))
    s = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("x"))
    x = reactant.to_rarray(np.arange(16.0).reshape(8, 2), sharding=s)
    assert x.sharding == NamedSharding(mesh, ("x",))
    assert NamedSharding(jmesh, ("x",)) == x.sharding


def test_a_mesh_over_two_platforms_is_an_error():
    class OtherDevice:  # stands for an accelerator next to the CPU devices
        id, platform = 1000, "gpu"

    cpu = reactant.devices()[0]
    with pytest.raises(ShardingError, match="devices of one platform, got \\['cpu', 'gpu'\\]"):
        Mesh(np.array([cpu, OtherDevice()], dtype=object), ("x",))


def test_cost_analysis_is_per_device(mesh):
    a, b = np.ones((64, 32), np.float32), np.ones((32, 16), np.float32)
    f = reactant.compile(lambda a, b: a @ b)
    one = reactant.cost_analysis(f, reactant.to_rarray(a), reactant.to_rarray(b))
    rows = reactant.cost_analysis(f, reactant.to_rarray(a, sharding=NamedSharding(mesh, ("x",))),
                                  reactant.to_rarray(b, sharding=Replicated(mesh)))
    assert one["flops"] == 2 * 64 * 32 * 16 and rows["flops"] == one["flops"] / 8


def test_pad_and_slice_stencil_exchanges_one_row_each_way(mesh):
    # the slice_pad rewrite turns slices of a padded array into pads of slices, which XLA
    # partitions into two one-row halo exchanges (as traced: six larger collective-permutes)
    def step(u):
        p = np.pad(u, 1)
        return u + 0.1 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * u)

    a = R.standard_normal((64, 32)).astype(np.float32)
    u = reactant.to_rarray(a, sharding=NamedSharding(mesh, ("x",)))
    hlo = reactant.code_xla(reactant.compile(step), u)
    permutes = [line for line in hlo.splitlines() if " collective-permute(" in line]
    assert len(permutes) == 2 and all("f32[1,32]" in line for line in permutes)
    traced = reactant.code_xla(reactant.compile(step, optimize="O0"), u)
    assert traced.count(" collective-permute(") > 2
    np.testing.assert_allclose(np.asarray(reactant.compile(step)(u)), step(a), rtol=1e-5, atol=1e-6)


def test_errors_leave_nothing_half_placed(mesh):
    a = R.standard_normal((8, 6))
    with pytest.raises(ShardingError, match="more than the array's rank 2"):  # the second leaf cannot be placed
        reactant.to_rarray({"ok": a, "bad": a}, sharding={"ok": NamedSharding(mesh, ("x",)),
                                                          "bad": NamedSharding(mesh, (None, None, "x"))})
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh, ("x",)))

    def f(x):
        x += 1  # an in-place update of a sharded argument...
        return reactant.sharding.constrain(x, NamedSharding(mesh, (None, None, "x")))  # ...then an error

    cf = reactant.compile(f)
    with pytest.raises(ShardingError, match="more than the array's rank 2"):
        cf(x)
    assert cf.compile_count == 0 and x.sharding == NamedSharding(mesh, ("x",))
    np.testing.assert_array_equal(np.asarray(x), a)  # the caller's array is as it was
