"""Python state a compiled function reads without receiving it (globals, closure variables,
attributes, items of lists and dicts, NumPy arrays they hold) is guarded: a call after the
state changed traces again (or, for a large NumPy array, reads it as an input) instead of
reusing a stale constant."""

import functools

import numpy as np
import pytest

import reactant
from reactant import guards

alpha = 0.5
unrelated = 1
CONFIG = {"scale": 2.0, "shift": [1.0, 2.0]}


def _x(n=3):
    return reactant.to_rarray(np.arange(1.0, n + 1))


def scaled(x):
    return x * alpha


def test_a_changed_global_scalar_is_traced_again():
    global alpha
    f = reactant.compile(scaled)
    x = _x()
    try:
        np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 0.5)
        alpha = 2.0
        np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 2.0)
        assert f.compile_count == 2
        alpha = 0.5  # the first program again: found among the kept ones, no new trace
        np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 0.5)
        assert f.compile_count == 2
    finally:
        alpha = 0.5


def test_value_guards_are_type_exact_and_tell_zero_signs_apart():
    global alpha
    f = reactant.compile(scaled)
    x = _x()
    try:
        alpha = 1
        assert np.asarray(f(x)).dtype == np.float64
        alpha = 1.0  # equal, but another type: traced again
        f(x)
        assert f.compile_count == 2
        alpha = 0.0
        f(x)
        alpha = -0.0
        np.testing.assert_array_equal(np.signbit(np.asarray(f(x))), [True] * 3)
        assert f.compile_count == 4
    finally:
        alpha = 0.5


def test_a_closure_variable_changed_by_nonlocal_is_seen():
    k = 3.0

    @reactant.compile
    def f(x):
        return x + k

    def set_k(v):
        nonlocal k
        k = v

    x = _x()
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) + 3.0)
    set_k(10.0)
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) + 10.0)


class Model:
    def __init__(self):
        self.scale = 2.0
        self.bias = [0.0, 1.0, 2.0]
        self.table = {"a": 1.0, "b": 5.0}
        self.W = np.eye(3)

    def forward(self, x):
        return x * self.scale + np.asarray(self.bias)

    def lookup(self, x):
        return x * self.table["b"]

    def project(self, x):
        return self.W @ x


def test_an_attribute_of_the_bound_self_changed():
    m = Model()
    f = reactant.compile(m.forward)
    x = _x()
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 2 + [0, 1, 2])
    m.scale = -1.0
    np.testing.assert_allclose(np.asarray(f(x)), -np.arange(1.0, 4) + [0, 1, 2])


def test_a_decorated_method_guards_its_object():
    class M:
        def __init__(self):
            self.k = 2.0

        @reactant.compile
        def f(self, x):
            return x * self.k

    a, b = M(), M()
    x = _x()
    np.testing.assert_allclose(np.asarray(a.f(x)), np.arange(1.0, 4) * 2)
    b.k = 7.0
    np.testing.assert_allclose(np.asarray(b.f(x)), np.arange(1.0, 4) * 7)
    a.k = 3.0
    np.testing.assert_allclose(np.asarray(a.f(x)), np.arange(1.0, 4) * 3)


def test_list_append_and_a_changed_item():
    m = Model()
    f = reactant.compile(m.forward)
    x = _x()
    f(x)
    m.bias[1] = 10.0
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 2 + [0, 10, 2])

    class Cell:  # state appended between calls, outside the compiled function
        def __init__(self):
            self.h = [0.5]

        def step(self, x):
            return np.tanh(self.h[-1] + x) * len(self.h)

    c = Cell()
    g = reactant.compile(c.step)
    xs = np.arange(1.0, 4)
    for k in range(3):
        np.testing.assert_allclose(np.asarray(g(reactant.to_rarray(xs))), np.tanh(c.h[-1] + xs) * len(c.h))
        c.h.append(float(k))


def test_a_dict_item_changed():
    m = Model()
    f = reactant.compile(m.lookup)
    x = _x()
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 5)
    m.table["b"] = -2.0
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * -2)
    m.table["c"] = 0.0  # an added key: the dict changed, traced again; same result
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * -2)


def test_a_global_dict_read_through_a_helper():
    def helper(x):
        return x * CONFIG["scale"] + CONFIG["shift"][1]

    @reactant.compile
    def f(x):
        return helper(x) - 1.0

    x = _x()
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 2 + 1)
    old = CONFIG["scale"]
    try:
        CONFIG["scale"] = 3.0
        np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 3 + 1)
    finally:
        CONFIG["scale"] = old


def test_a_small_numpy_attribute_mutated_in_place():
    m = Model()
    f = reactant.compile(m.project)
    x = _x()
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4))
    m.W[0, 0] = 5.0
    np.testing.assert_allclose(np.asarray(f(x)), m.W @ np.arange(1.0, 4))
    assert f.compile_count == 2


def test_a_large_numpy_array_is_an_input_not_a_constant():
    m = Model()
    m.W = np.linspace(0.0, 1.0, 200 * 200).reshape(200, 200)  # 320 KB
    f = reactant.compile(m.project)
    xs = np.arange(200.0)
    x = reactant.to_rarray(xs)
    np.testing.assert_allclose(np.asarray(f(x)), m.W @ xs)
    m.W[3] = 7.0  # in place: read at the next call, no new trace
    np.testing.assert_allclose(np.asarray(f(x)), m.W @ xs)
    assert f.compile_count == 1
    m.W = m.W * 2  # another array: traced again, the same program (no XLA compile)
    np.testing.assert_allclose(np.asarray(f(x)), m.W @ xs)
    assert f.compile_count == 2 and f.xla_compile_count == 1
    assert "dense<" not in f.lower(x).text()


def test_a_large_numpy_array_used_on_the_host_is_guarded_by_contents():
    big = np.ones(20000)

    @reactant.compile
    def f(x):
        return x * big.sum()  # a host reduction: no input can carry it

    x = _x()
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 20000)
    big[0] = 5.0
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 20004)


def test_a_view_of_a_large_array_is_an_input():
    m = Model()
    m.W = np.arange(40000.0).reshape(200, 200) / 40000
    f = reactant.compile(lambda x: m.W.T[:3] @ x)
    xs = np.arange(200.0)
    x = reactant.to_rarray(xs)
    np.testing.assert_allclose(np.asarray(f(x)), m.W.T[:3] @ xs)
    m.W[:, 1] = -1.0
    np.testing.assert_allclose(np.asarray(f(x)), m.W.T[:3] @ xs)
    assert f.compile_count == 1


def test_modules_functions_and_unrelated_globals_do_not_retrace():
    global unrelated

    def f(x):
        return np.sin(scaled(x))

    g = reactant.compile(f)
    x = _x()
    g(x)
    unrelated = 2
    np.zeros(3)  # NumPy's module state is not guarded either
    g(x)
    assert g.compile_count == 1
    entry = g._cache[next(iter(g._cache))]
    labels = [r.label for r in entry.guards.reads]
    assert "alpha" in labels and "np" not in labels and "unrelated" not in labels


def test_a_retrace_with_the_same_program_reuses_the_executable():
    cfg = {"n": 3}

    @reactant.compile
    def f(x):
        return x * 2.0 + len(cfg)

    x = _x()
    f(x)
    cfg["m"] = 4  # the dict changed, its length too: traced again
    f(x)
    cfg.pop("m")
    cfg["k"] = 5  # changed again, the program is the same as the second
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 2 + 2)
    assert f.compile_count == 3 and f.xla_compile_count == 2


def test_the_programs_kept_per_signature_are_bounded(monkeypatch):
    monkeypatch.setattr(guards, "MAX_PER_SIGNATURE", 3)
    state = {"k": 0.0}
    f = reactant.compile(lambda x: x + state["k"])
    x = _x()
    with pytest.warns(RuntimeWarning, match="traced again and again"):
        for k in range(6):
            state["k"] = float(k)
            np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) + k)
    entry, n = f._cache[next(iter(f._cache))], 0
    while entry is not None:
        entry, n = entry.next, n + 1
    assert n == 3
    state["k"] = 0.0  # dropped: traced again
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4))
    assert f.compile_count == 7


def test_an_error_during_a_retrace_leaves_the_cache_as_it_was():
    state = {"ok": True}

    @reactant.compile
    def f(x):
        if not state["ok"]:
            raise RuntimeError("bad state")
        return x + 1.0

    x = _x()
    f(x)
    before = dict(f._cache)
    state["ok"] = False
    with pytest.raises(RuntimeError, match="bad state"):
        f(x)
    assert dict(f._cache) == before and f.compile_count == 1
    state["ok"] = True
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) + 1)
    assert f.compile_count == 1


def test_reading_and_updating_state_traces_every_call_like_numpy():
    class Counter:
        def __init__(self):
            self.count = 0

        def step(self, x):
            self.count += 1
            return x * self.count

    c = Counter()
    f = reactant.compile(c.step)
    x = _x()
    for k in range(1, 4):
        np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * k)
    assert c.count == 3


def test_partial_arguments_and_static_objects_are_roots():
    class Cfg:
        scale = 2.0

    cfg = Cfg()

    def f(c, x):
        return x * c.scale

    g = reactant.compile(functools.partial(f, cfg))
    h = reactant.compile(f)
    x = _x()
    g(x), h(cfg, x)
    cfg.scale = 4.0
    np.testing.assert_allclose(np.asarray(g(x)), np.arange(1.0, 4) * 4)
    np.testing.assert_allclose(np.asarray(h(cfg, x)), np.arange(1.0, 4) * 4)


def test_iterating_a_list_of_objects():
    class Layer:
        def __init__(self, w):
            self.w = w

    layers = [Layer(1.0), Layer(2.0)]

    @reactant.compile
    def f(x):
        for layer in layers:
            x = x * layer.w
        return x

    x = _x()
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 2)
    layers[1].w = 5.0
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 5)
    layers.append(Layer(3.0))
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 15)


def test_the_guard_check_is_compiled_and_says_what_changed(capsys, monkeypatch):
    global alpha
    monkeypatch.setenv("REACTANT_LOG", "recompile")
    f = reactant.compile(scaled)
    x = _x()
    try:
        f(x)
        alpha = 4.0
        f(x)
    finally:
        alpha = 0.5
    err = capsys.readouterr().err
    assert "traced again: alpha changed: 0.5 -> 4.0" in err
    assert "XLA compile" not in err  # only the topic asked for


def test_a_signature_traced_again_and_again_warns_once(monkeypatch):
    monkeypatch.setattr(guards, "MAX_PER_SIGNATURE", 2)
    seen = []

    @reactant.compile
    def f(x):
        seen.append(1)  # reads the list (its length is guarded) and changes it
        return x + 1.0

    x = _x()
    with pytest.warns(RuntimeWarning, match="traced again and again.*seen"):
        for _ in range(4):
            np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) + 1)
    assert len(seen) == 4 and f.compile_count == 4 and f.xla_compile_count == 1


def test_a_compiled_function_called_in_a_trace_guards_what_it_reads():
    global alpha
    inner = reactant.compile(scaled)
    outer = reactant.compile(lambda x: inner(x) + 1.0)
    x = _x()
    try:
        np.testing.assert_allclose(np.asarray(outer(x)), np.arange(1.0, 4) * 0.5 + 1)
        alpha = 3.0
        np.testing.assert_allclose(np.asarray(outer(x)), np.arange(1.0, 4) * 3 + 1)
    finally:
        alpha = 0.5


def test_a_list_bound_by_partial_is_guarded():
    weights = [1.0, 2.0]
    f = reactant.compile(functools.partial(lambda w, x: x * w[1], weights))
    x = _x()
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 2)
    weights[1] = 5.0
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 5)


def test_a_traced_value_stored_in_state_is_its_value_when_read_again():
    class Cell:
        def __init__(self, h0):
            self.h = [h0]

        def step(self, x):
            h = np.tanh(self.h[-1] + x)
            self.h.append(h)  # a traced value kept in Python state: the call leaves its value
            return h

    c = Cell(np.zeros(3))
    f = reactant.compile(c.step)
    x = _x()
    np.testing.assert_allclose(np.asarray(f(x)), np.tanh(np.arange(1.0, 4)))
    # the list changed: traced again, reading the value the first call left
    np.testing.assert_allclose(np.asarray(f(x)), np.tanh(np.tanh(np.arange(1.0, 4)) + np.arange(1.0, 4)))
    assert len(c.h) == 3


def test_a_method_replaced_on_the_object_is_seen():
    class M:
        def scale(self, x):
            return x * 2.0

        def run(self, x):
            return self.scale(x) + 1.0

    m = M()
    f = reactant.compile(m.run)
    x = _x()
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 2 + 1)
    assert f(x) is not None and f.compile_count == 1  # a fresh bound method each time: same guard
    m.scale = lambda x: x * 10.0
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(1.0, 4) * 10 + 1)


W_BIG = np.linspace(-1.0, 1.0, 128 * 128).reshape(128, 128)  # 128 KiB


def _loss(v):
    for _ in range(reactant.keep(3)):
        v = np.tanh(W_BIG @ v)
    return np.sum(v ** 2)


def _loss_grad_numpy(v, w):
    vs = [v]
    for _ in range(3):
        vs.append(np.tanh(w @ vs[-1]))
    g = 2 * vs[-1]
    for k in range(3, 0, -1):
        g = w.T @ (g * (1 - vs[k] ** 2))
    return g


def test_state_read_by_a_function_that_autodiff_traces():
    g = reactant.compile(lambda v: reactant.gradient(_loss, v))
    v0 = np.linspace(0.0, 0.5, 128)
    v = reactant.to_rarray(v0)
    old = W_BIG.copy()
    try:
        np.testing.assert_allclose(np.asarray(g(v)), _loss_grad_numpy(v0, W_BIG), rtol=1e-10)
        W_BIG[:] = old * 0.5  # in place: an input of the program, no new trace
        np.testing.assert_allclose(np.asarray(g(v)), _loss_grad_numpy(v0, W_BIG), rtol=1e-10)
        assert g.compile_count == 1
    finally:
        W_BIG[:] = old
