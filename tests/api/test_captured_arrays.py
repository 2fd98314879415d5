"""Device arrays a compiled function reads without receiving them (globals, closures,
attributes) are implicit inputs: read at every call, never baked in as constants."""

import numpy as np

import reactant
from reactant.sharding import NamedSharding, Replicated, make_mesh

W = reactant.to_rarray(np.linspace(0.0, 1.0, 512 * 64).reshape(512, 64))


def uses_global(x):
    return x @ W.T


def test_a_global_device_array_is_an_input_not_a_constant():
    x = reactant.to_rarray(np.ones((3, 64)))
    text = reactant.code_hlo(uses_global, x)
    assert "tensor<512x64xf64>" in text.split("->")[0] and "dense<" not in text  # an argument of @main
    np.testing.assert_allclose(np.asarray(reactant.compile(uses_global)(x)), np.ones((3, 64)) @ np.asarray(W).T)


def test_in_place_updates_and_rebinding_are_seen():
    global W
    old = W
    try:
        x = reactant.to_rarray(np.ones((2, 64)))
        f = reactant.compile(uses_global)
        f(x)

        @reactant.compile
        def scale(w):
            w *= 2.0

        scale(W)  # updated in place: the next call reads the new values, no new trace
        np.testing.assert_allclose(np.asarray(f(x)), np.ones((2, 64)) @ np.asarray(W).T)
        assert f.compile_count == 1
        W = reactant.to_rarray(np.full((512, 64), 3.0))  # rebound: traced again
        np.testing.assert_allclose(np.asarray(f(x)), np.full((2, 512), 192.0))
        assert f.compile_count == 2
    finally:
        W = old


def test_closures_attributes_loops_helpers_and_gradients():
    b = reactant.to_rarray(np.array([1.0, 2.0, 3.0]))

    class Model:
        def __init__(self):
            self.w = reactant.to_rarray(np.array([0.5, -1.0, 2.0]))

    m = Model()

    def helper(v):  # called twice: traced once as a function, the captures outlined into it
        return v * m.w

    def f(x):
        y = helper(x) + helper(x * 2)
        for _ in range(reactant.keep(3)):
            y = y + b
        return np.sum(y ** 2)

    x = np.array([1.0, -1.0, 0.5])
    w, bb = np.asarray(m.w), np.asarray(b)
    want = np.sum((3 * x * w + 3 * bb) ** 2)
    rx = reactant.to_rarray(x)
    np.testing.assert_allclose(float(reactant.compile(f)(rx)), want)
    g = reactant.compile(lambda x: reactant.gradient(f, x))(rx)
    np.testing.assert_allclose(np.asarray(g), 2 * (3 * x * w + 3 * bb) * 3 * w)


def test_captured_arrays_on_a_mesh():
    mesh = make_mesh((8,), ("x",))
    table = reactant.to_rarray(np.arange(16.0), sharding=NamedSharding(mesh, ("x",)))
    x = reactant.to_rarray(np.ones(16), sharding=Replicated(mesh))
    out = reactant.compile(lambda x: x * table)(x)
    np.testing.assert_allclose(np.asarray(out), np.arange(16.0))


# -- captured device arrays updated in place by the traced code ------------------------------------
class _Model:
    def __init__(self, w):
        self.w = w

    def step(self, x):
        self.w *= 0.5
        self.w[0] = self.w[0] + x[1]
        if x[0] > 0.5:  # a traced if updating the state
            self.w[1] = -1.0
        return np.sum(self.w * x)


def test_state_updated_in_place_is_written_back_into_the_same_device_array():
    import pytest

    for loops in ("auto", "keep", "unroll"):
        ref, dev = _Model(np.ones(4)), _Model(reactant.to_rarray(np.ones(4)))
        alias = dev.w
        step = reactant.compile(dev.step, loops=loops)
        for x in (np.linspace(0.0, 1.0, 4), np.linspace(1.0, 0.0, 4), np.linspace(0.2, 0.9, 4)):
            want = ref.step(x.copy())
            got = step(reactant.to_rarray(x))
            assert float(got) == pytest.approx(want, rel=1e-12)
            np.testing.assert_allclose(np.asarray(dev.w), ref.w, rtol=1e-12)
            assert dev.w is alias  # the same object, as NumPy's in-place update
        assert step.compile_count == 1  # the state's identity did not change: no retrace


G = reactant.to_rarray(np.zeros(5))


def _fill_global(x):
    for i in range(reactant.keep(4)):  # a kept loop updating a global device array
        G[i] = x[i] * 2.0
    G[4] += 1.0
    return G.sum()


def test_a_global_device_array_updated_in_a_kept_loop():
    G[...] = 0.0
    x = np.linspace(0.0, 1.0, 5)
    f = reactant.compile(_fill_global)
    np.testing.assert_allclose(float(f(reactant.to_rarray(x))), np.sum(x[:4] * 2.0) + 1.0)
    np.testing.assert_allclose(np.asarray(G), np.r_[x[:4] * 2.0, 1.0])
    f(reactant.to_rarray(x))
    assert float(np.asarray(G)[4]) == 2.0


def test_a_view_of_a_captured_device_array_refuses_writes():
    import pytest

    base = reactant.to_rarray(np.arange(6.0))
    view = base[1:4]

    def f(x):
        view[0] = x[0]
        return x.sum()

    with pytest.raises(reactant.ArgumentError, match="view of a device array"):
        reactant.compile(f)(reactant.to_rarray(np.ones(3)))
    np.testing.assert_array_equal(np.asarray(base), np.arange(6.0))
