"""Arrays whose sharded dimension the mesh does not divide (10 rows over 8 devices): placed on
every device of the mesh (padded buffers, ``sharding/uneven.py``), and every program over them
gives NumPy's values. Padding is poisoned with NaN (or the largest integer) where it matters, so
a result that read it would be wrong."""

import re

import numpy as np
import pytest

import reactant
from reactant.sharding import NamedSharding, PartitionSpec as P, Replicated, constrain, make_mesh

R = np.random.default_rng(0)


@pytest.fixture(scope="module")
def mesh():
    return make_mesh((8,), ("x",))


@pytest.fixture(scope="module")
def mesh2d():
    return make_mesh((4, 2), ("x", "y"))


def poisoned(a: np.ndarray, sharding: NamedSharding):
    """``a`` placed by ``sharding`` with its padding filled with NaN (floats) or the largest
    value of its integer dtype, instead of the zeros ``to_rarray`` writes there."""
    from reactant import _jax_adapter as jx

    x = reactant.to_rarray(a, sharding=sharding)
    padded = sharding.padded_shape(a.shape)
    assert padded != a.shape and x.buffer.shape == padded
    fill = np.nan if a.dtype.kind in "fc" else np.iinfo(a.dtype).max
    host = np.full(padded, fill, a.dtype)
    host[tuple(slice(0, n) for n in a.shape)] = a
    x._buf = jx.make_array_from_callback(padded, reactant.runtime.jax_sharding(sharding), host.__getitem__)
    assert np.isnan(np.asarray(x.buffer)).any() if a.dtype.kind == "f" else True
    return x


def spread(x) -> list[int]:
    """Per device (in mesh order), how many elements of ``x`` it holds."""
    return [s.data.size for s in sorted(x.addressable_shards, key=lambda s: s.device.id)]


def collectives(hlo: str) -> int:
    return sum(hlo.count(k) for k in (" all-reduce(", " all-gather(", " collective-permute(", " all-to-all("))


# -- placement -------------------------------------------------------------------------------------
def test_uneven_arrays_are_placed_on_every_device(mesh):
    a = np.arange(10.0)
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh, P("x")))
    assert x.shape == (10,) and x.sharding == NamedSharding(mesh, ("x",)) and x.buffer.shape == (16,)
    assert len(x.buffer.sharding.device_set) == 8
    assert spread(x) == [2, 2, 2, 2, 2, 0, 0, 0]  # blocks of ceil(10 / 8) rows, as XLA lays them out
    shards = sorted(x.addressable_shards, key=lambda s: s.index[0].start)
    np.testing.assert_array_equal(np.concatenate([s.data for s in shards]), a)
    assert all(np.array_equal(s.data, a[s.index]) for s in shards)
    np.testing.assert_array_equal(np.asarray(x), a)
    assert np.asarray(x).shape == (10,) and x.to_numpy().shape == (10,)
    assert "8., 9." in repr(x) and "0." in str(x)


def test_fewer_rows_than_devices_and_two_dimensions(mesh, mesh2d):
    a = R.standard_normal((3, 5))
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh, P("x")))
    assert spread(x) == [5, 5, 5, 0, 0, 0, 0, 0]
    np.testing.assert_array_equal(np.asarray(x), a)
    b = R.standard_normal((10, 7))  # 10 rows over 4, 7 columns over 2
    y = reactant.to_rarray(b, sharding=NamedSharding(mesh2d, P("x", "y")))
    assert y.buffer.shape == (12, 8) and sum(spread(y)) == 70
    np.testing.assert_array_equal(np.asarray(y), b)


def test_jax_shardings_and_resharding(mesh):
    import jax

    a = R.standard_normal((10, 3))
    jmesh = jax.sharding.Mesh(np.array(mesh.devices), ("x",))
    x = reactant.to_rarray(a, sharding=jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("x")))
    assert x.sharding == NamedSharding(mesh, ("x",))
    r = reactant.to_rarray(x, sharding=Replicated(mesh))  # uneven -> replicated -> uneven other axis
    assert r.buffer.shape == (10, 3)
    np.testing.assert_array_equal(np.asarray(r), a)
    c = reactant.to_rarray(r, sharding=NamedSharding(mesh, P(None, "x")))
    assert c.buffer.shape == (10, 8) and spread(c) == [10, 10, 10, 0, 0, 0, 0, 0]
    np.testing.assert_array_equal(np.asarray(c), a)
    one = reactant.to_rarray(x, device=reactant.devices()[0])
    np.testing.assert_array_equal(np.asarray(one), a)
    np.testing.assert_array_equal(np.asarray(constrain(x, NamedSharding(mesh, P(None, "x")))), a)


# -- programs ---------------------------------------------------------------------------------------
def test_elementwise_keeps_every_device_and_needs_no_collective(mesh):
    a = R.standard_normal(10)
    x = poisoned(a, NamedSharding(mesh, P("x")))
    f = reactant.compile(lambda x: np.sin(x) * 2 + x)
    y = f(x)
    np.testing.assert_allclose(np.asarray(y), np.sin(a) * 2 + a, rtol=1e-14)
    assert y.shape == (10,) and y.sharding == NamedSharding(mesh, ("x",)) and spread(y) == [2] * 5 + [0] * 3
    hlo = reactant.code_xla(f, x)
    assert collectives(hlo) == 0
    # every device runs on a block of 2: XLA did not move the argument to fewer devices
    assert re.search(r"entry_computation_layout=\{\(f64\[2\]", hlo), hlo[:300]


@pytest.mark.parametrize("n", [10, 3, 13])
def test_reductions_over_the_uneven_axis_ignore_the_padding(mesh, n):
    a = -np.abs(R.standard_normal((n, 4))) - 1  # negative: a padding zero would win a max
    x = poisoned(a, NamedSharding(mesh, P("x")))
    f = reactant.compile(lambda x: (x.sum(), x.sum(axis=0), x.mean(axis=0), x.max(axis=0), x.min(),
                                    np.argmax(x, axis=0), np.argmin(x), x.prod(axis=0), x.std(axis=0),
                                    np.sort(x, axis=0)))
    want = (a.sum(), a.sum(axis=0), a.mean(axis=0), a.max(axis=0), a.min(), np.argmax(a, axis=0),
            np.argmin(a), a.prod(axis=0), a.std(axis=0), np.sort(a, axis=0))
    for got, w in zip(f(x), want):
        assert np.asarray(got).shape == np.shape(w)
        np.testing.assert_allclose(np.asarray(got), w, rtol=1e-12)


def test_integer_reductions_and_argmax(mesh):
    a = R.integers(-50, 0, (11, 3)).astype(np.int32)
    x = poisoned(a, NamedSharding(mesh, P("x")))  # padding: the largest int32
    f = reactant.compile(lambda x: (x.max(axis=0), np.argmax(x, axis=0), x.sum(axis=0), np.argmax(x), (x > -10).sum()))
    for got, w in zip(f(x), (a.max(axis=0), np.argmax(a, axis=0), a.sum(axis=0), np.argmax(a), (a > -10).sum())):
        np.testing.assert_array_equal(np.asarray(got), w)


def test_matmul_over_an_uneven_sharded_dimension(mesh, mesh2d):
    a, b = R.standard_normal((6, 10)), R.standard_normal((10, 5))
    # the contraction runs over the uneven dimension: NaN padding must not reach the sum
    x, y = poisoned(a, NamedSharding(mesh, P(None, "x"))), poisoned(b, NamedSharding(mesh, P("x")))
    f = reactant.compile(lambda x, y: x @ y)
    np.testing.assert_allclose(np.asarray(f(x, y)), a @ b, rtol=1e-12)
    c = R.standard_normal((10, 6))  # uneven rows of the result
    z = poisoned(c, NamedSharding(mesh2d, P("x", "y")))
    w = reactant.to_rarray(a, sharding=NamedSharding(mesh2d, P("y", None)))
    g = reactant.compile(lambda z, w: (z @ w, w @ z))
    got = g(z, w)
    np.testing.assert_allclose(np.asarray(got[0]), c @ a, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(got[1]), a @ c, rtol=1e-12)


def test_cumsum_reverse_slices_and_concatenate_along_the_uneven_axis(mesh):
    a = R.standard_normal((10, 3))
    x = poisoned(a, NamedSharding(mesh, P("x")))
    f = reactant.compile(lambda x: (np.cumsum(x, axis=0), x[::-1], x[3:9], x[1::3], x[-1],
                                    np.concatenate([x, x[:5]], axis=0), np.roll(x, 3, axis=0),
                                    np.diff(x, axis=0), np.pad(x, ((2, 1), (0, 0))), x.T @ x))
    want = (np.cumsum(a, axis=0), a[::-1], a[3:9], a[1::3], a[-1], np.concatenate([a, a[:5]], axis=0),
            np.roll(a, 3, axis=0), np.diff(a, axis=0), np.pad(a, ((2, 1), (0, 0))), a.T @ a)
    for got, w in zip(f(x), want):
        assert got.shape == w.shape
        np.testing.assert_allclose(np.asarray(got), w, rtol=1e-12, atol=1e-12)


def test_in_place_updates_of_an_uneven_argument_write_back(mesh):
    a = R.standard_normal((10, 3))
    s = NamedSharding(mesh, P("x"))
    x = poisoned(a, s)

    @reactant.compile
    def step(x, y):
        x[...] += y
        x[2:7] *= 3.0
        x[9] = -1.0

    want = a.copy()
    y = reactant.to_rarray(np.ones((10, 3)), sharding=s)
    for _ in range(3):  # the written-back buffer is the next call's argument
        step(x, y)
        want += 1
        want[2:7] *= 3.0
        want[9] = -1.0
        np.testing.assert_allclose(np.asarray(x), want, rtol=1e-12)
        assert x.shape == (10, 3) and x.sharding == s and x.buffer.shape == (16, 3)
    assert step.compile_count == 1
    # the argument's sharding is kept even where propagation would pick another one
    @reactant.compile
    def g(x):
        x[...] = constrain(x.sum(axis=1, keepdims=True) + x, Replicated(mesh))

    g(x)
    want = want.sum(axis=1, keepdims=True) + want
    np.testing.assert_allclose(np.asarray(x), want, rtol=1e-12)
    assert x.sharding == s and x.buffer.shape == (16, 3) and len(x.buffer.sharding.device_set) == 8
    step(x, y)  # the buffer written back is still what the first program reads
    want += 1
    want[2:7] *= 3.0
    want[9] = -1.0
    np.testing.assert_allclose(np.asarray(x), want, rtol=1e-12)


def test_two_dimensional_mesh_with_one_uneven_axis(mesh2d):
    a = R.standard_normal((10, 6))  # 10 rows over x=4 (uneven), 6 columns over y=2 (even)
    x = poisoned(a, NamedSharding(mesh2d, P("x", "y")))
    f = reactant.compile(lambda x: (np.tanh(x), x.sum(axis=0), x.sum(axis=1), x.max(), np.argmax(x, axis=0),
                                    np.cumsum(x, axis=0)[::-1], x @ x.T))
    want = (np.tanh(a), a.sum(axis=0), a.sum(axis=1), a.max(), np.argmax(a, axis=0),
            np.cumsum(a, axis=0)[::-1], a @ a.T)
    got = f(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)
    assert got[0].sharding == NamedSharding(mesh2d, ("x", "y")) and sum(spread(got[0])) == 60


def test_constrain_on_an_uneven_dimension(mesh, mesh2d):
    a = R.standard_normal((10, 5))
    x = reactant.to_rarray(a, sharding=Replicated(mesh))
    f = reactant.compile(lambda x: constrain(x * 2, NamedSharding(mesh, P("x"))))
    y = f(x)
    np.testing.assert_allclose(np.asarray(y), a * 2, rtol=1e-14)
    assert y.sharding == NamedSharding(mesh, ("x",)) and spread(y) == [10] * 5 + [0] * 3
    g = reactant.compile(lambda x: constrain(x, NamedSharding(mesh, P(None, "x"))).sum(axis=1))
    np.testing.assert_allclose(np.asarray(g(x)), a.sum(axis=1), rtol=1e-12)
    z = reactant.to_rarray(a, sharding=Replicated(mesh2d))
    h = reactant.compile(lambda z: constrain(z + 1, NamedSharding(mesh2d, P("x", "y"))).mean())
    np.testing.assert_allclose(np.asarray(h(z)), (a + 1).mean(), rtol=1e-12)


def test_out_shardings_may_be_uneven(mesh):
    a = R.standard_normal((12, 2))
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh, P("x")))  # 12 rows over 8: uneven too
    f = reactant.compile(lambda x: x[:9] + 1, out_shardings=NamedSharding(mesh, P("x")))
    y = f(x)
    assert y.shape == (9, 2) and y.sharding == NamedSharding(mesh, ("x",)) and y.buffer.shape == (16, 2)
    np.testing.assert_allclose(np.asarray(y), a[:9] + 1, rtol=1e-14)


def test_results_feed_the_next_program_and_eager_numpy(mesh):
    a = R.standard_normal(10)
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh, P("x")))
    y = reactant.compile(lambda x: np.exp(x))(x)  # its padding is whatever XLA left there
    z = reactant.compile(lambda y: (y.sum(), np.max(-y), y[::-1] - 1))(y)
    np.testing.assert_allclose(np.asarray(z[0]), np.exp(a).sum(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(z[1]), np.max(-np.exp(a)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(z[2]), np.exp(a)[::-1] - 1, rtol=1e-12)
    # eager NumPy on the device arrays (each operation a small compiled program)
    np.testing.assert_allclose(np.asarray(x + 1), a + 1, rtol=1e-14)
    np.testing.assert_allclose(float(np.sum(x)), a.sum(), rtol=1e-12)
    assert float(x[9]) == a[9]
    np.testing.assert_array_equal(np.asarray(x[7:]), a[7:])
    v = x[2:5]  # an eager view: writes go through to the padded base, and back
    v[...] = -1.0
    x += 1.0
    want = a.copy()
    want[2:5] = -1.0
    want += 1.0
    np.testing.assert_array_equal(np.asarray(x), want)
    np.testing.assert_array_equal(np.asarray(v), want[2:5])
    assert x.sharding == NamedSharding(mesh, ("x",)) and x.buffer.shape == (16,)
