"""reactant.random draws the same values whatever the mesh: element i of a draw is a pure
function of (generator state, i), so a sharded draw on 1, 2, 4 or 8 devices or a 2x4 mesh is
bit-identical to the unsharded one, and each device computes only its own block (no
collective in the partitioned program)."""

import re

import numpy as np
import pytest

import reactant
from reactant.random import default_rng, threefry2x32
from reactant.sharding import NamedSharding, PartitionSpec as P, Replicated, constrain, make_mesh

SHAPES = {"normal": (10, 6), "uniform": (16, 8), "integers": (10, 6), "float32": (16, 6), "scalar": ()}
MESHES = [((1,), ("x",), P("x")), ((2,), ("x",), P("x")), ((4,), ("x",), P("x")), ((8,), ("x",), P("x")),
          ((2, 4), ("a", "b"), P("a", "b")), ((2, 4), ("a", "b"), P(None, ("b", "a")))]


def draws(g, place=lambda v: v):
    """One draw of each kind, each passed through ``place`` (a sharding constraint)."""
    return {"normal": place(g.normal(1.0, 2.0, SHAPES["normal"])),
            "uniform": place(g.uniform(-1.0, 3.0, SHAPES["uniform"])),
            "integers": place(g.integers(-5, 1000, SHAPES["integers"])),
            "float32": place(g.standard_normal(SHAPES["float32"], dtype=np.float32)),
            "scalar": g.random()}


@pytest.fixture(scope="module")
def unsharded():
    g = default_rng(123)
    return {k: np.asarray(v) for k, v in reactant.compile(draws)(g).items()}


@pytest.mark.parametrize("mesh_shape,names,spec", MESHES, ids=["1", "2", "4", "8", "2x4", "2x4-cols"])
def test_sharded_draws_are_bit_identical_on_every_mesh(unsharded, mesh_shape, names, spec):
    mesh = make_mesh(mesh_shape, names)
    s = NamedSharding(mesh, spec)
    g = default_rng(123, sharding=Replicated(mesh))
    f = reactant.compile(lambda g: draws(g, lambda v: constrain(v, s)))
    got = f(g)
    for k, want in unsharded.items():
        np.testing.assert_array_equal(np.asarray(got[k]), want, err_msg=k)  # bit for bit
        if k != "scalar" and mesh.size > 1:
            assert got[k].sharding == NamedSharding(mesh, spec), k  # sharded, not gathered
    hlo = reactant.code_xla(f, default_rng(123, sharding=Replicated(mesh)))
    for op in ("all-gather", "all-reduce", "collective-permute", "all-to-all", "reduce-scatter"):
        assert f" {op}(" not in hlo, op
    if mesh.size == 8 and spec == P("x"):
        # each device generates its own block only: no value of the global draw's shape
        shapes = set(re.findall(r"\b[fsu]\d+\[([\d,]+)\]", hlo))
        assert "16,8" not in shapes and "2,8" in shapes, shapes


def test_the_generator_advances_the_same_way_on_every_mesh():
    states = []
    for shape in [(2,), (8,)]:
        mesh = make_mesh(shape, ("x",))
        g = default_rng(9, sharding=Replicated(mesh))
        s = NamedSharding(mesh, P("x"))
        f = reactant.compile(lambda g, s=s: constrain(g.standard_normal(12), s))
        first, second = np.asarray(f(g)), np.asarray(f(g))
        assert not np.array_equal(first, second)
        states.append((first, second, np.asarray(g.state)))
    one = default_rng(9)
    np.testing.assert_array_equal(np.asarray(one.standard_normal(12)), states[0][0])
    np.testing.assert_array_equal(np.asarray(one.standard_normal(12)), states[0][1])
    for a, b in zip(states[0], states[1]):
        np.testing.assert_array_equal(a, b)


def test_bits_are_threefry_of_the_global_index():
    # Threefry-2x32 known-answer vectors (Random123's kat_vectors)
    u32 = np.uint32
    for key, ctr, want in [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
                           ((0xFFFFFFFF,) * 2, (0xFFFFFFFF,) * 2, (0x1CB996FC, 0xBB002BE7)),
                           ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]:
        with np.errstate(over="ignore"):
            got = threefry2x32(u32(key[0]), u32(key[1]), np.array([ctr[0]], u32), np.array([ctr[1]], u32))
        assert (int(got[0][0]), int(got[1][0])) == want
    # a draw's element i is threefry(draw key, i): the first rows of a larger draw are a
    # smaller draw, whatever the shape around them
    big = np.asarray(default_rng(4).integers(0, 2 ** 62, (6, 5)))
    small = np.asarray(default_rng(4).integers(0, 2 ** 62, 12))
    np.testing.assert_array_equal(big.ravel()[:12], small)
    g = default_rng(4)
    # the draw key: two words of the state's own Threefry (stablehlo.rng_bit_generator)
    from reactant.tracing import ops
    from reactant.tracing.numpy_api.convert import as_traced

    probe = reactant.compile(lambda st: ops.rng_bit_generator(as_traced(st), (2,), np.uint32)[1])
    dk = np.asarray(probe(g.state))
    with np.errstate(over="ignore"):
        i = np.arange(12, dtype=np.uint64)
        b0, b1 = threefry2x32(dk[0], dk[1], (i & np.uint64(0xFFFFFFFF)).astype(u32), (i >> np.uint64(32)).astype(u32))
    bits = (b1.astype(np.uint64) << np.uint64(32)) | b0.astype(np.uint64)
    np.testing.assert_array_equal(np.asarray(g.random(12)), (bits >> np.uint64(11)).astype(np.float64) / 2.0 ** 53)
    probe_next = np.asarray(probe(g.state))
    with np.errstate(over="ignore"):
        c0, _ = threefry2x32(probe_next[0], probe_next[1], (i & np.uint64(0xFFFFFFFF)).astype(u32),
                             (i >> np.uint64(32)).astype(u32))
    f32 = (c0 >> u32(8)).astype(np.float32) * np.float32(2.0 ** -24)
    np.testing.assert_array_equal(np.asarray(g.random(12, dtype=np.float32)), f32)
