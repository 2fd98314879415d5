"""@reactant.compile: pytree arguments and results, the cache (hits and recompiles), static
values, track_numbers, in-place updates written back, and donation."""

import dataclasses
import itertools
from collections import namedtuple

import numpy as np
import pytest

import reactant

State = namedtuple("State", "pos vel")


@dataclasses.dataclass
class Model:
    w: object
    b: object
    act: str = "tanh"


def test_pytree_arguments_and_results():
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 2)), rng.standard_normal(2)
    x = rng.standard_normal((4, 3))
    m = reactant.to_rarray(Model(w, b))
    st = reactant.to_rarray(State(np.ones(3), np.zeros(3)))

    @reactant.compile
    def f(model, data, state, *, scale):
        h = data["x"] @ model.w + model.b
        h = np.tanh(h) if model.act == "tanh" else h
        return {"h": h * scale, "pair": (h.sum(), [state.pos + state.vel]), "static": model.act,
                "state": State(state.pos * 2, state.vel)}

    out = f(m, {"x": reactant.to_rarray(x)}, st, scale=2.0)
    want = np.tanh(x @ w + b) * 2.0
    np.testing.assert_allclose(np.asarray(out["h"]), want)
    np.testing.assert_allclose(float(out["pair"][0]), np.tanh(x @ w + b).sum())
    assert isinstance(out["pair"][0], reactant.ConcreteRNumber)
    assert isinstance(out["pair"][1], list)
    assert out["static"] == "tanh"
    assert isinstance(out["state"], State)
    np.testing.assert_allclose(np.asarray(out["state"].pos), 2 * np.ones(3))
    assert out["state"].vel is st.vel  # an input returned unchanged is the caller's own object


def test_cache_hits_and_recompiles():
    # (an iterator: a list appended to would be Python state the trace reads and changes, so
    # every call would be traced again, as a list's length is guarded: see test_guards)
    traces = itertools.count()

    @reactant.compile
    def f(x, k):
        next(traces)  # runs only while tracing
        return x * k

    a = reactant.to_rarray(np.ones(3, np.float32))
    b = reactant.to_rarray(np.full(3, 2.0, np.float32))
    np.testing.assert_allclose(np.asarray(f(a, 2.0)), 2.0)
    np.testing.assert_allclose(np.asarray(f(b, 2.0)), 4.0)  # same signature: cache hit
    assert f.compile_count == 1 and next(traces) == 1
    np.testing.assert_allclose(np.asarray(f(a, 3.0)), 3.0)  # changed Python scalar: recompile
    assert f.compile_count == 2
    f(reactant.to_rarray(np.ones(4, np.float32)), 3.0)  # new shape
    f(reactant.to_rarray(np.ones(3, np.float64)), 3.0)  # new dtype
    f(a, 3)  # int vs float constant: different key
    f(a, np.float32(3.0))  # NumPy scalar: keyed by type and value
    assert f.compile_count == 6
    for _ in range(3):
        f(a, 3.0)
        f(b, 2.0)
    assert f.compile_count == 6 and next(traces) == 7  # (one next() above)


def test_static_values_in_key_exactly():
    f = reactant.compile(lambda x, s: x * s)
    a = reactant.to_rarray(np.ones(2))
    assert np.asarray(f(a, 0.0))[0] == 0.0 and not np.signbit(np.asarray(f(a, 0.0))[0])
    assert np.signbit(np.asarray(f(a, -0.0))[0])  # -0.0 is not the cached 0.0
    assert np.isnan(np.asarray(f(a, float("nan")))[0])
    c1, c2 = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_allclose(np.asarray(f(a, c1)), c1)
    np.testing.assert_allclose(np.asarray(f(a, c2)), c2)  # NumPy constants keyed by content


def test_track_numbers_makes_scalars_runtime_inputs():
    f = reactant.compile(lambda x, s: x * s, track_numbers=True)
    a = reactant.to_rarray(np.ones(3, np.float32))
    for s in (1.0, 2.5, -4.0):
        out = f(a, s)
        np.testing.assert_allclose(np.asarray(out), s)
        assert out.dtype == np.float32  # a tracked Python float stays weakly typed (NEP 50)
    assert f.compile_count == 1
    g = reactant.compile(lambda x, s: x * s)
    n = reactant.to_rarray(2.0, track_numbers=True)
    for v in (2.0, 5.0):
        n = reactant.to_rarray(v, track_numbers=True)
        np.testing.assert_allclose(np.asarray(g(a, n)), v)
    assert g.compile_count == 1


def test_inplace_updates_are_written_back():
    @reactant.compile
    def step(x, v, dt):
        x += v * dt
        v[0] = 0.0
        return (x * x).sum()

    x = reactant.to_rarray(np.arange(4.0))
    v = reactant.to_rarray(np.ones(4))
    e = step(x, v, 0.5)
    np.testing.assert_allclose(np.asarray(x), np.arange(4.0) + 0.5)
    np.testing.assert_allclose(np.asarray(v), [0.0, 1.0, 1.0, 1.0])
    np.testing.assert_allclose(float(e), ((np.arange(4.0) + 0.5) ** 2).sum())
    step(x, v, 0.5)
    np.testing.assert_allclose(np.asarray(x), np.arange(4.0) + [0.5, 1.0, 1.0, 1.0])
    assert step.compile_count == 1
    assert "tf.aliasing_output" in reactant.code_hlo(step, x, v, 0.5)


def test_updated_argument_passed_twice():
    @reactant.compile
    def f(a, b):
        a += 1
        return b * 1

    x = reactant.to_rarray(np.zeros(3))
    out = f(x, x)  # one array under two names: b sees the update through a, as in NumPy
    ref_x = np.zeros(3)
    ref = f.fn(ref_x, ref_x)
    np.testing.assert_allclose(np.asarray(x), ref_x)
    np.testing.assert_allclose(np.asarray(out), ref)
    np.testing.assert_allclose(np.asarray(out), 1.0)


def test_function_returning_its_mutated_input():
    @reactant.compile
    def f(a):
        a[1:] = 5.0
        return a

    x = reactant.to_rarray(np.zeros(3))
    y = f(x)
    assert y is x
    np.testing.assert_allclose(np.asarray(x), [0.0, 5.0, 5.0])


def test_options_methods_nesting_and_kwargs():
    inner = reactant.compile(lambda x: np.sin(x))

    @reactant.compile(optimize="O1")
    def outer(x, *, k=2):
        return inner(x) * k  # a compiled function called inside a trace is traced inline

    a = reactant.to_rarray(np.linspace(0, 1, 5))
    np.testing.assert_allclose(np.asarray(outer(a)), 2 * np.sin(np.linspace(0, 1, 5)))
    np.testing.assert_allclose(np.asarray(outer(a, k=3)), 3 * np.sin(np.linspace(0, 1, 5)))
    assert inner.compile_count == 0 and outer.compile_count == 2

    class Layer:
        def __init__(self, s):
            self.s = s

        @reactant.compile
        def __call__(self, x):
            return x * self.s

        def __hash__(self):
            return hash(self.s)

        def __eq__(self, other):
            return isinstance(other, Layer) and other.s == self.s

    np.testing.assert_allclose(np.asarray(Layer(3.0)(a)), 3 * np.linspace(0, 1, 5))


def test_no_array_arguments_and_constant_results():
    f = reactant.compile(lambda n: np.arange(n) * 2.0)
    np.testing.assert_allclose(np.asarray(f(4)), np.arange(4) * 2.0)
    g = reactant.compile(lambda x: (x.shape, 3, None))
    assert g(reactant.to_rarray(np.ones((2, 5)))) == ((2, 5), 3, None)


def test_compiling_in_another_thread_after_the_main_thread():
    """The optimizer's e-graphs are per thread (egglog's must not cross threads): a compile in
    a worker thread after one in the main thread works and gives the right result."""
    import threading

    x_np = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    w_np = np.ones((4, 2), np.float32)

    def f(x, w):
        return (x @ w).T.sum(axis=0)

    want = f(x_np, w_np)
    x, w = reactant.to_rarray(x_np), reactant.to_rarray(w_np)
    np.testing.assert_allclose(np.asarray(reactant.compile(f)(x, w)), want)
    out, err = [], []

    def worker():
        try:
            out.append(np.asarray(reactant.compile(lambda a, b: f(a, b) * 2)(x, w)))
        except BaseException as e:  # a panic in egglog is a BaseException
            err.append(e)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert not err, err
    np.testing.assert_allclose(out[0], want * 2)


@pytest.mark.parametrize("arity", [0, 1, 2, 3, 4, 5])
def test_cached_positional_calls_of_every_arity(arity):
    """The hot path unpacks small arities by hand: each must key on every argument's
    signature, pass every buffer in order and give fresh results on every call."""
    rng = np.random.default_rng(arity)
    f = reactant.compile(lambda *xs: sum((i + 1.0) * x for i, x in enumerate(xs)) + np.float32(1.0))
    want_fn = lambda *xs: sum((i + 1.0) * x for i, x in enumerate(xs)) + 1.0  # noqa: E731
    for _ in range(3):  # the first call compiles, the others hit the cache
        xs_np = [rng.standard_normal(3).astype(np.float32) for _ in range(arity)]
        out = f(*reactant.to_rarray(xs_np))
        np.testing.assert_allclose(np.asarray(out), want_fn(*xs_np), rtol=1e-5, atol=1e-5)
    assert f.compile_count == 1
    if arity >= 2:  # a different dtype in the last position is another signature
        xs = reactant.to_rarray([np.ones(3, np.float32)] * (arity - 1) + [np.ones(3, np.float64)])
        assert np.asarray(f(*xs)).dtype == np.float64
        assert f.compile_count == 2


def test_cached_calls_with_structured_results_and_inputs_returned():
    f = reactant.compile(lambda a, b: (a + b, [a], {"d": b - a}))
    a, b = reactant.to_rarray(np.ones(2)), reactant.to_rarray(np.arange(2.0))
    for _ in range(3):
        s, (same,), d = f(a, b)
        np.testing.assert_allclose(np.asarray(s), [1.0, 2.0])
        np.testing.assert_allclose(np.asarray(d["d"]), [-1.0, 0.0])
        assert same is a
    assert f.compile_count == 1


def test_repeated_inplace_updates_without_donation_are_written_back():
    @reactant.compile(donate=False)
    def bump(x):
        x += 1.0

    x = reactant.to_rarray(np.zeros(3))
    for k in range(1, 4):
        assert bump(x) is None
        np.testing.assert_allclose(np.asarray(x), k)  # every cached call writes back
    assert bump.compile_count == 1
    assert "tf.aliasing_output" not in reactant.code_hlo(bump, x)


def test_compiled_function_called_in_a_trace_after_being_cached():
    inner = reactant.compile(lambda x: np.sin(x) * 2)
    a = reactant.to_rarray(np.linspace(0, 1, 5))
    inner(a)  # cached for this signature
    outer = reactant.compile(lambda x: inner(x) + 1)
    np.testing.assert_allclose(np.asarray(outer(a)), np.sin(np.linspace(0, 1, 5)) * 2 + 1)
    assert inner.compile_count == 1  # traced inline inside outer, not run as its executable
    assert "sine" in reactant.code_hlo(outer, a)


def test_cached_calls_with_containers_of_arrays():
    """Plain containers (dict, list, tuple, namedtuple, None, keyword arguments) take a keyed
    fast path on repeated calls: every call must see its own values, in its own order."""
    rng = np.random.default_rng(3)

    @reactant.compile
    def f(p, xs, st, none, *, scale):
        assert none is None
        return p["w"] * xs[0] + p["b"] - xs[1] * st.vel + scale

    def want(p, xs, st, scale):
        return p["w"] * xs[0] + p["b"] - xs[1] * st.vel + scale

    for k in range(3):
        p = {"w": rng.standard_normal(3), "b": rng.standard_normal(3)}
        xs = [rng.standard_normal(3), rng.standard_normal(3)]
        st = State(rng.standard_normal(3), rng.standard_normal(3))
        s = reactant.to_rarray(rng.standard_normal(3))
        out = f(reactant.to_rarray(p), reactant.to_rarray(xs), reactant.to_rarray(st), None, scale=s)
        np.testing.assert_allclose(np.asarray(out), want(p, xs, st, np.asarray(s)))
    assert f.compile_count == 1
    # the same keys inserted in another order: another structure, the right values
    p = {"b": rng.standard_normal(3), "w": rng.standard_normal(3)}
    out = f(reactant.to_rarray(p), reactant.to_rarray(xs), reactant.to_rarray(st), None, scale=s)
    np.testing.assert_allclose(np.asarray(out), want(p, xs, st, np.asarray(s)))
    # a changed static leaf inside a container is not a plain container: recompiled
    g = reactant.compile(lambda d: d["x"] * d["k"])
    x = reactant.to_rarray(np.ones(2))
    assert float(g({"x": x, "k": 2.0})[0]) == 2.0 and float(g({"x": x, "k": 3.0})[0]) == 3.0
    assert g.compile_count == 2


def test_repeated_inplace_updates_through_a_dict_are_written_back():
    @reactant.compile
    def step(state):
        state["x"] += state["v"]
        return state["x"].sum()

    st = reactant.to_rarray({"x": np.zeros(3), "v": np.ones(3)})
    for k in range(1, 4):
        assert float(step(st)) == 3.0 * k
        np.testing.assert_allclose(np.asarray(st["x"]), k)
    assert step.compile_count == 1


def test_compiled_function_looks_like_the_function():
    import inspect
    import pickle

    def scale(x, k: float = 2.0):
        """Scale x."""
        return x * k

    f = reactant.compile(scale)
    assert isinstance(f, reactant.CompiledFunction) and f.fn is scale
    assert f.__name__ == "scale" and f.__doc__ == "Scale x." and f.__wrapped__ is scale
    assert str(inspect.signature(f)) == "(x, k: float = 2.0)"
    assert repr(f).startswith("<reactant.compile '") and "scale'>" in repr(f)
    assert f.compile_count == 0 and f.options.optimize == "O2"
    np.testing.assert_allclose(np.asarray(f(reactant.to_rarray(np.ones(2)))), 2.0)
    assert f.compile_count == 1
    assert "stablehlo.multiply" in f.lower(reactant.to_rarray(np.ones(2)), 3.0).text()
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(f)


def test_caches_stay_within_their_bounds(monkeypatch):
    """Past a bound the oldest entries go; results stay right and a dropped signature compiles
    again when it comes back."""
    from reactant import arrays, compiler

    monkeypatch.setattr(compiler, "CACHE_MAX", 3)
    monkeypatch.setattr(compiler, "FAST_MAX", 2)
    monkeypatch.setattr(arrays, "SIG_IDS_MAX", 4)
    monkeypatch.setattr(arrays, "_SIG_IDS", {})  # signatures earlier tests interned would never be re-inserted
    f = reactant.compile(lambda x: x * 2 + 1)
    for rep in range(2):
        for n in range(1, 7):
            x = np.arange(n, dtype=np.float32)
            np.testing.assert_array_equal(np.asarray(f(reactant.to_rarray(x))), x * 2 + 1)
            st = f._state
            assert len(st._cache) <= 3 and len(st._fast) <= 2 and len(st._fast_trees) <= 2
            assert len(arrays._SIG_IDS) <= 4
    assert f.compile_count == 12  # every signature dropped before it came back: compiled twice
    assert len({reactant.to_rarray(np.zeros(k))._sid for k in range(1, 9)}) == 8  # ids never reused


def test_eager_cache_is_bounded(monkeypatch):
    from reactant import eager

    monkeypatch.setattr(eager, "EAGER_MAX", 2)
    monkeypatch.setattr(eager, "_cache", type(eager._cache)())  # (earlier tests in this process filled it)
    x = reactant.to_rarray(np.array([0.5, 2.0]))
    for fn in (np.sin, np.cos, np.exp, np.log, np.sqrt):
        np.testing.assert_allclose(np.asarray(fn(x)), fn(np.array([0.5, 2.0])))
        assert len(eager._cache) <= 2


def test_threads_calling_one_function_with_many_signatures():
    """Compiles and cache inserts from several threads at once: every result right."""
    import threading

    f = reactant.compile(lambda x: np.cumsum(x) - x)
    errors = []

    def work(k):
        try:
            for n in range(1, 6):
                x = np.arange(n + k, dtype=np.float64)
                np.testing.assert_allclose(np.asarray(f(reactant.to_rarray(x))), np.cumsum(x) - x)
        except Exception as e:  # collected and re-raised in the main thread
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert len(f._state._cache) == len({n + k for k in range(4) for n in range(1, 6)})


def test_verbose_compilation_reports_every_stage(capsys, monkeypatch):
    x = reactant.to_rarray(np.ones((8, 8)))
    reactant.compile(lambda a: np.tanh(a @ a).sum(), verbose=True)(x)
    err = capsys.readouterr().err
    assert "trace" in err and "pass patterns" in err and "XLA compile" in err and "compiled in" in err
    monkeypatch.setenv("REACTANT_LOG", "1")
    reactant.compile(lambda a: a * 2)(x)
    assert "pass cse" in capsys.readouterr().err
    monkeypatch.delenv("REACTANT_LOG")
    reactant.compile(lambda a: a * 3)(x)
    assert capsys.readouterr().err == ""  # quiet by default


def test_one_watch_thread_reports_every_slow_compilation_and_none_that_ended(capsys, monkeypatch):
    import threading
    import time

    from reactant import progress

    monkeypatch.setattr(progress, "SLOW_SECONDS", 0.05)
    done = progress.CompileProgress("finished_kernel", verbose=False)
    done.close()  # ended before its deadline: never reported
    slow = [progress.CompileProgress(f"slow_kernel{i}", verbose=False) for i in range(3)]
    seen = ""
    for _ in range(400):  # (until the reports are out, at most 20 s on a loaded machine)
        seen += capsys.readouterr().err
        if all(f"compiling slow_kernel{i} has taken" in seen for i in range(3)):
            break
        time.sleep(0.05)
    for p in slow:
        p.close()
    assert all(f"compiling slow_kernel{i} has taken" in seen for i in range(3)), seen
    assert "finished_kernel" not in seen
    assert sum(t.name == "reactant-compile-watch" for t in threading.enumerate()) == 1


def test_a_slow_first_call_says_what_it_is_doing(capsys, monkeypatch):
    from reactant import progress

    stages = []
    monkeypatch.setattr(progress.CompileProgress, "enter", lambda self, stage: stages.append(stage) or
                        setattr(self, "stage", stage))
    reactant.compile(lambda a: np.sin(a) + 1)(reactant.to_rarray(np.ones(4)))
    assert "pass patterns" in stages and stages[-1] == "XLA compile"  # the stage a report would name
    p = progress.CompileProgress("kernel", verbose=False)
    p.close()  # (no timer left running)
    p.stage = "pass eqsat"
    p._slow()  # what the timer prints after SLOW_SECONDS
    assert "compiling kernel has taken 5 s so far; now: pass eqsat" in capsys.readouterr().err
