"""Automatic sharding (``reactant.compile(..., shard="auto")``, ``to_rarray(x, mesh=mesh)``):
NumPy's results, never more communication than the best hand placement by the same cost
model, hand placements and constraints binding, clear errors for bad options."""

from __future__ import annotations

import numpy as np
import pytest

import reactant
from reactant.sharding import AutoPlaced, CostModel, NamedSharding, ShardingError, constrain, make_mesh
from reactant.sharding.auto import candidate_specs, hlo_collectives, xla_cost

F32 = np.float32
pytestmark = pytest.mark.skipif(len(__import__("jax").devices()) < 8, reason="needs 8 (simulated) devices")

# a machine where sharding pays at these sizes (a narrower search than the default: test time)
CPU = CostModel.simulated_cpu(8, beam=2, verify=2)


# -- workloads (plain NumPy, small) -------------------------------------------------------------
def _mlp_loss(w1, b1, w2, x, y):
    return np.mean((np.tanh(x @ w1 + b1) @ w2 - y) ** 2)


def dp_step(w1, b1, w2, x, y):
    g1, gb, g2 = reactant.gradient(lambda w1, b1, w2: _mlp_loss(w1, b1, w2, x, y), w1, b1, w2, argnums=(0, 1, 2))
    w1 -= 0.05 * g1
    b1 -= 0.05 * gb
    w2 -= 0.05 * g2
    return _mlp_loss(w1, b1, w2, x, y)


def tp_fwd(x, w1, w2):
    return np.maximum(x @ w1, 0) @ w2


def stencil_loop(u):
    for _ in range(4):
        u = u + F32(0.1) * (np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4 * u)
    return u


def reduction(x):
    return x.sum(), x.mean(axis=0), x.var(axis=1)


def matmul_chain(a, b, c):
    return np.tanh(a @ b) @ c


def attention(q, k, v):
    s = np.einsum("bqd,bkd->bqk", q, k) / np.sqrt(F32(q.shape[-1]))
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("bqk,bkd->bqd", p / p.sum(axis=-1, keepdims=True), v)


def _data(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * 0.1).astype(F32) for s in shapes]


# name: (function, input shapes, mesh shape, axis names, hand placements (one spec per input))
WORKLOADS = {
    "dp_mlp": (dp_step, [(64, 128), (128,), (128, 16), (128, 64), (128, 16)], (8,), ("data",),
               [[(), (), (), ("data",), ("data",)], [()] * 5]),
    "tp_mlp": (tp_fwd, [(32, 64), (64, 256), (256, 64)], (2, 4), ("data", "model"),
               [[("data",), (None, "model"), ("model",)], [("data",), (), ()]]),
    "attention": (attention, [(8, 32, 16)] * 3, (8,), ("data",), [[("data",)] * 3, [()] * 3]),
    "stencil_loop": (stencil_loop, [(64, 64)], (8,), ("rows",), [[("rows",)], [(None, "rows")]]),
    "reduction": (reduction, [(128, 64)], (8,), ("rows",), [[("rows",)], [()]]),
    "matmul_chain": (matmul_chain, [(128, 64), (64, 64), (64, 32)], (8,), ("x",),
                     [[("x",), (), ()], [(), (None, "x"), ("x",)], [()] * 3]),
}


def _tree_np(out):
    leaves = out if isinstance(out, tuple) else (out,)
    return [np.asarray(x) for x in leaves]


def _cost(fn, args, mesh, model):
    text = reactant.code_xla(fn, *args)
    return xla_cost(text, reactant.cost_analysis(fn, *args), mesh, model)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_auto_matches_numpy_and_never_sends_more_than_hand(name):
    fn, shapes, mshape, names, hands = WORKLOADS[name]
    mesh = make_mesh(mshape, names)
    data = _data(shapes)
    want = _tree_np(reactant.compile(fn)(*[reactant.to_rarray(a) for a in data]))  # unsharded

    auto = reactant.compile(fn, shard=CPU)
    auto_args = [reactant.to_rarray(a, mesh=mesh) for a in data]
    got = _tree_np(auto(*auto_args))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)
    if name != "dp_mlp":  # (dp_mlp: a gradient step, checked against the unsharded run above)
        for g, w in zip(got, _tree_np(fn(*[a.copy() for a in data]))):  # NumPy itself
            np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5)
    auto_cost = _cost(auto, [reactant.to_rarray(a, mesh=mesh) for a in data], mesh, CPU)

    hand_costs = []
    for specs in hands:
        hand = reactant.compile(fn)
        args = [reactant.to_rarray(a, sharding=NamedSharding(mesh, s)) for a, s in zip(data, specs)]
        hand_costs.append(_cost(hand, args, mesh, CPU))
    best = min(hand_costs, key=lambda c: c.key())
    assert auto_cost.comm_bytes <= best.comm_bytes + 1e-6, (auto_cost, best)
    assert auto_cost.step <= best.step / 0.9, (auto_cost, best)


def test_in_place_parameters_keep_the_chosen_sharding_and_compile_once():
    fn, shapes, mshape, names, _ = WORKLOADS["dp_mlp"]
    mesh = make_mesh(mshape, names)
    data = _data(shapes, seed=1)
    ref = [reactant.to_rarray(a) for a in data]
    f_ref = reactant.compile(fn)
    args = [reactant.to_rarray(a, mesh=mesh) for a in data]
    f = reactant.compile(fn, shard=CPU)
    for _ in range(3):
        lr, la = f_ref(*ref), f(*args)
        np.testing.assert_allclose(float(la), float(lr), rtol=1e-5)
    for a, r in zip(args, ref):  # the parameters were updated in place, as NumPy would
        np.testing.assert_allclose(np.asarray(a), np.asarray(r), rtol=1e-5, atol=1e-6)
    assert f.compile_count == 1
    assert all(isinstance(a._sig.placement, AutoPlaced) for a in args)


def test_hand_placements_and_constraints_are_binding():
    mesh = make_mesh((8,), ("x",))
    a, b = _data([(64, 32), (32, 16)], seed=2)

    def f(a, b):
        h = constrain(np.tanh(a @ b), NamedSharding(mesh, (None, "x")))
        return h * 2

    xa = reactant.to_rarray(a, sharding=NamedSharding(mesh, (None, "x")))  # by hand: kept
    xb = reactant.to_rarray(b, mesh=mesh)
    cf = reactant.compile(f, shard=CPU)
    out = cf(xa, xb)
    np.testing.assert_allclose(np.asarray(out), np.tanh(a @ b) * 2, rtol=2e-5, atol=1e-6)
    assert xa.sharding == NamedSharding(mesh, (None, "x"))
    text = cf.lower(xa, xb).text()
    assert 'sdy.sharding_constraint' in text and '[{}, {"x"}]' in text
    entry = cf._state.entry_for((xa, xb), {})
    param = str(entry.exe.get_parameter_shardings()[0])  # the hand placement, not a choice
    assert "tile_assignment_dimensions: 1\ntile_assignment_dimensions: 8" in param


def test_to_rarray_mesh_with_default_compile_and_numpy_arguments():
    mesh = make_mesh((4, 2), ("a", "b"))
    x, w = _data([(16, 8), (8, 8)], seed=3)
    xr = reactant.to_rarray(x, mesh=mesh)
    assert isinstance(xr._sig.placement, AutoPlaced)
    np.testing.assert_array_equal(np.asarray(xr), x)

    @reactant.compile
    def g(x, w):
        return np.sin(x @ w).sum(axis=0)

    np.testing.assert_allclose(np.asarray(g(xr, w)), np.sin(x @ w).sum(axis=0), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(g(xr, w)), np.sin(x @ w).sum(axis=0), rtol=2e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(xr), x)  # moved, not changed

    h = reactant.compile(lambda x, w: x @ w + 1, shard="auto", mesh=mesh)  # NumPy arguments, chosen
    np.testing.assert_allclose(np.asarray(h(x, w)), x @ w + 1, rtol=2e-5, atol=1e-6)
    m = reactant.compile(lambda x, w: x @ w + 1, shard="manual", mesh=mesh)  # replicated
    out = m(x, w)
    np.testing.assert_allclose(np.asarray(out), x @ w + 1, rtol=2e-5, atol=1e-6)


def test_bad_options_are_clear_errors():
    mesh = make_mesh((8,), ("x",))
    with pytest.raises(ShardingError, match="shard= must be"):
        reactant.compile(lambda x: x, shard="fastest")
    with pytest.raises(ShardingError, match="shard= must be"):
        reactant.compile(lambda x: x, shard=True)
    with pytest.raises(ShardingError, match="link"):
        CostModel(link=-1.0)
    with pytest.raises(ShardingError, match="axis_bandwidth names axis 'y'"):
        reactant.compile(lambda x: x, shard=CostModel(axis_bandwidth={"y": 1e9}), mesh=mesh)
    with pytest.raises(ShardingError, match="not both"):
        reactant.to_rarray(np.ones((8, 2)), mesh=mesh, sharding=NamedSharding(mesh, ("x",)))
    with pytest.raises(ShardingError, match="needs a mesh"):
        reactant.compile(lambda x: x + 1, shard="auto")(reactant.to_rarray(np.ones(4)))
    held = reactant.to_rarray(np.ones((8, 2), F32), mesh=mesh)
    with pytest.raises(ShardingError, match="without receiving it"):
        reactant.compile(lambda y: y + held)(reactant.to_rarray(np.ones((8, 2), F32), mesh=mesh))
    other = make_mesh((4,), ("y",))
    with pytest.raises(ShardingError, match="different meshes"):
        reactant.compile(lambda x, y: x + y)(reactant.to_rarray(np.ones(8), mesh=mesh),
                                             reactant.to_rarray(np.ones(8), mesh=other))


def test_candidates_and_byte_model():
    mesh = make_mesh((2, 4), ("a", "b"))
    c = candidate_specs((8, 6), mesh)
    assert () in c and ("a",) in c and ("b",) in c and (("a", "b"),) in c and ("b", "a") in c
    assert (None, "b") not in c and ("a", "b") not in c  # 6 is not divisible by 4
    hlo = ("%ar = f32[256]{0} all-reduce(f32[256]{0} %x), replica_groups=[2,4]<=[8], to_apply=%add\n"
           "%cp = f32[1,64]{1,0} collective-permute(f32[1,64]{1,0} %y), source_target_pairs={{0,1}}\n")
    got = hlo_collectives(hlo, 8)
    assert got == [("all-reduce", 2 * 3 / 4 * 1024, 4), ("collective-permute", 256, 8)]
