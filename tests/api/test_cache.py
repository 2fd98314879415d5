"""The persistent compile cache (reactant/cache.py): a program compiled in one process is loaded
in the next without running the optimizer or XLA, with the values NumPy gives; anything that
changes the program misses; broken entries are recompiled; concurrent writers and the size
bound leave a valid directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import reactant
import reactant.compiler as compiler
from reactant import cache, runtime
from reactant.optimize.eqsat import cost as eqsat_cost

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.delenv("REACTANT_CACHE_DIR", raising=False)
    monkeypatch.delenv("REACTANT_CACHE_MAX_BYTES", raising=False)
    monkeypatch.setattr(reactant.config, "cache_dir", str(d))
    compiler._EXECUTABLES.clear()  # (as in a new process: no executable compiled before)
    return d


def _delta(fn):
    before = dict(cache.stats)
    out = fn()
    return out, {k: cache.stats[k] - before[k] for k in before if cache.stats[k] != before[k]}


def _entries(d) -> list:
    return sorted(p for p in os.listdir(d) if p.endswith(".rxc")) if os.path.isdir(d) else []


def _loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def _grad(w, x):
    return reactant.gradient(_loss, w, x)


def _grad_numpy(w, x):
    t = np.tanh(x @ w)
    return x.T @ (2 * t * (1 - t * t))


RNG = np.random.default_rng(0)
W, X = RNG.standard_normal((6, 3)), RNG.standard_normal((5, 6))


# -- in one process: a new compiled function of the same program reads the entry ---------------
def test_off_by_default(tmp_path, monkeypatch):
    monkeypatch.delenv("REACTANT_CACHE_DIR", raising=False)
    assert reactant.config.cache_dir is None and reactant.config.effective_cache_dir() is None
    _, n = _delta(lambda: reactant.compile(_grad)(reactant.to_rarray(W), reactant.to_rarray(X)))
    assert n == {}
    monkeypatch.setenv("REACTANT_CACHE_DIR", str(tmp_path / "env"))
    assert reactant.config.effective_cache_dir() == str(tmp_path / "env")
    monkeypatch.setattr(reactant.config, "cache_dir", False)  # off whatever the environment says
    assert reactant.config.effective_cache_dir() is None


def test_settings_are_checked():
    with pytest.raises(AttributeError, match="no setting 'cache_dri'"):
        reactant.config.cache_dri = "/x"
    with pytest.raises(TypeError, match="cache_max_bytes"):
        reactant.config.cache_max_bytes = -1
    with pytest.raises(TypeError, match="cache_dir"):
        reactant.config.cache_dir = 3
    assert reactant.config.cache_max_bytes is None and reactant.config.cache_dir is None


def test_bad_size_in_the_environment_is_an_error(cache_dir, monkeypatch):
    monkeypatch.setenv("REACTANT_CACHE_MAX_BYTES", "lots")
    with pytest.raises(ValueError, match="REACTANT_CACHE_MAX_BYTES"):
        reactant.compile(lambda x: x + 1)(reactant.to_rarray(X))


def test_hit_skips_the_optimizer_and_xla(cache_dir, monkeypatch):
    w, x = reactant.to_rarray(W), reactant.to_rarray(X)
    f = reactant.compile(_grad)
    y, n = _delta(lambda: f(w, x))
    assert n == {"misses": 1, "writes": 1} and f.xla_compile_count == 1
    assert len(_entries(cache_dir)) == 1

    def boom(*a, **k):
        raise AssertionError("the optimizer or XLA ran on a cache hit")

    monkeypatch.setattr(compiler, "run_pipeline", boom)
    monkeypatch.setattr(runtime, "compile_module", boom)
    g = reactant.compile(_grad)  # a new function: nothing in memory
    z, n = _delta(lambda: g(w, x))
    assert n == {"hits": 1} and g.compile_count == 1 and g.xla_compile_count == 0
    np.testing.assert_allclose(np.asarray(z), _grad_numpy(W, X), rtol=1e-10)
    np.testing.assert_array_equal(np.asarray(z), np.asarray(y))


def test_changed_options_and_shapes_miss(cache_dir):
    w, x = reactant.to_rarray(W), reactant.to_rarray(X)
    reactant.compile(_grad)(w, x)
    for f, args in [(reactant.compile(_grad, optimize="O1"), (w, x)),
                    (reactant.compile(_grad, donate=False), (w, x)),
                    (reactant.compile(_grad, ad_checkpoint="sqrt"), (w, x)),
                    (reactant.compile(_grad), (reactant.to_rarray(W[:4]), reactant.to_rarray(X[:, :4]))),
                    (reactant.compile(_grad), (reactant.to_rarray(W.astype(np.float32)),
                                               reactant.to_rarray(X.astype(np.float32))))]:
        y, n = _delta(lambda: f(*args))
        assert n == {"misses": 1, "writes": 1}, f.options
        a, b = (np.asarray(v) for v in args)
        np.testing.assert_allclose(np.asarray(y), _grad_numpy(a, b), rtol=1e-5)
    assert len(_entries(cache_dir)) == 6
    _, n = _delta(lambda: reactant.compile(_grad, optimize="O1")(w, x))  # each one is kept
    assert n == {"hits": 1}


def test_cost_constants_are_part_of_the_key(cache_dir):
    x = reactant.to_rarray(X)
    prog = lambda x: np.tanh(x @ x.T).sum(axis=0)  # noqa: E731
    reactant.compile(prog)(x)
    try:
        eqsat_cost.set_constants({"kernel": 7 * eqsat_cost.DEFAULTS["kernel"]})
        _, n = _delta(lambda: reactant.compile(prog)(x))
        assert n == {"misses": 1, "writes": 1}
    finally:
        eqsat_cost.set_constants(None)
    _, n = _delta(lambda: reactant.compile(prog, optimize="O1")(x))  # no saturation: constants not read
    assert n == {"misses": 1, "writes": 1}


SCALE = 2.0


def _scaled(x):
    return np.sin(x) * SCALE


def test_a_hit_still_traces_python_state_and_updates_in_place(cache_dir, monkeypatch):
    x = reactant.to_rarray(X)
    reactant.compile(_scaled)(x)
    f = reactant.compile(_scaled)
    y, n = _delta(lambda: f(x))
    assert n == {"hits": 1}
    np.testing.assert_allclose(np.asarray(y), np.sin(X) * 2.0)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 3.0)  # the guard of the hit's trace sees it
    y, n = _delta(lambda: f(x))
    assert n == {"misses": 1, "writes": 1}
    np.testing.assert_allclose(np.asarray(y), np.sin(X) * 3.0)

    def bump(a, b):  # in-place update of an argument, donated, on a hit
        a += b
        return a.sum()

    a = reactant.to_rarray(X.copy())
    reactant.compile(bump)(a, x)
    g = reactant.compile(bump)
    s, n = _delta(lambda: g(a, x))
    assert n == {"hits": 1}
    np.testing.assert_allclose(np.asarray(a), X * 3)
    np.testing.assert_allclose(np.asarray(s), (X * 3).sum())


# -- broken entries ------------------------------------------------------------------------------
def _one_entry(cache_dir):
    (name,) = _entries(cache_dir)
    return os.path.join(cache_dir, name)


@pytest.mark.parametrize("damage", ["truncate", "flip", "foreign", "undeserializable", "garbage"])
def test_broken_entry_is_compiled_again(cache_dir, damage, monkeypatch, capsys):
    w, x = reactant.to_rarray(W), reactant.to_rarray(X)
    reactant.compile(_grad)(w, x)
    path = _one_entry(cache_dir)
    data = open(path, "rb").read()
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data = data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:]
    elif damage in ("foreign", "undeserializable"):  # whole, checksummed entries
        meta, bc, blob = cache._decode(data, os.path.basename(path)[:-4],
                                       cache._fingerprint(runtime.default_device().client))
        if damage == "foreign":
            meta["fingerprint"] = dict(meta["fingerprint"], jaxlib="0.0.1")
        else:
            blob = b"\x08\x01" + bytes(range(256)) * 8
        data = cache._encode(meta, bc, blob)
    else:
        data = b"hello" * 50
    with open(path, "wb") as f:
        f.write(data)
    monkeypatch.setenv("REACTANT_LOG", "cache")
    y, n = _delta(lambda: reactant.compile(_grad)(w, x))
    assert n == {"misses": 1, "rejected": 1, "writes": 1}
    np.testing.assert_allclose(np.asarray(y), _grad_numpy(W, X), rtol=1e-10)
    assert f"ignored entry {path}" in capsys.readouterr().err
    _, n = _delta(lambda: reactant.compile(_grad)(w, x))  # rewritten whole
    assert n == {"hits": 1}


def test_unwritable_directory_warns_once_and_goes_on(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setattr(reactant.config, "cache_dir", str(blocker / "cache"))  # (a file cannot hold a dir)
    x = reactant.to_rarray(X)
    with pytest.warns(RuntimeWarning, match="cannot be written"):
        y, n = _delta(lambda: reactant.compile(lambda x: np.cos(x) + 1)(x))
    assert n == {"misses": 1, "write_errors": 1}
    np.testing.assert_allclose(np.asarray(y), np.cos(X) + 1)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per directory
        y = reactant.compile(lambda x: np.cos(x) + 2)(x)
    np.testing.assert_allclose(np.asarray(y), np.cos(X) + 2)


# -- size bound --------------------------------------------------------------------------------
def test_size_bound_evicts_the_least_recently_used(cache_dir, monkeypatch):
    x = reactant.to_rarray(X)
    # (programs that differ in a constant only: entries of about one size)
    progs = [lambda x: np.sin(x) + 1, lambda x: np.sin(x) + 2, lambda x: np.sin(x) + 3]
    sizes = {}
    for p in progs[:2]:
        before = set(_entries(cache_dir))
        reactant.compile(p)(x)
        (new,) = set(_entries(cache_dir)) - before
        sizes[p] = os.path.getsize(os.path.join(cache_dir, new))
        os.utime(os.path.join(cache_dir, new), (1e9 + len(sizes), 1e9 + len(sizes)))  # (distinct mtimes)
    # a hit makes progs[0]'s entry the most recently used: progs[1]'s goes first
    _, n = _delta(lambda: reactant.compile(progs[0])(x))
    assert n == {"hits": 1}
    bound = max(sizes.values()) * 2 + 64
    monkeypatch.setattr(reactant.config, "cache_max_bytes", bound)
    _, n = _delta(lambda: reactant.compile(progs[2])(x))
    assert n == {"misses": 1, "writes": 1, "evicted": 1}
    total = sum(os.path.getsize(os.path.join(cache_dir, e)) for e in _entries(cache_dir))
    assert total <= bound and len(_entries(cache_dir)) == 2
    for p, evicted in ((progs[0], False), (progs[1], True)):
        _, n = _delta(lambda: reactant.compile(p)(x))
        assert ("hits" in n) != evicted, n


def test_entry_larger_than_the_bound_is_not_written(cache_dir, monkeypatch):
    monkeypatch.setattr(reactant.config, "cache_max_bytes", 100)
    y, n = _delta(lambda: reactant.compile(lambda x: np.sin(x) * 7)(reactant.to_rarray(X)))
    assert n == {"misses": 1} and _entries(cache_dir) == []
    np.testing.assert_allclose(np.asarray(y), np.sin(X) * 7)


# -- other processes -----------------------------------------------------------------------------
CHILD = textwrap.dedent(r"""
    import json, os, sys
    import numpy as np, reactant
    import reactant.compiler as compiler, reactant.runtime as runtime
    from reactant.sharding import NamedSharding, make_mesh

    if os.environ.get("EXPECT_HIT") == "1":  # the optimizer and XLA must not run
        def boom(*a, **k):
            if reactant.cache._software()["sources"] != os.environ["SOURCES"]:
                print(json.dumps({"sources_changed": True}))  # (someone edited reactant meanwhile)
                os._exit(0)
            raise AssertionError("the optimizer or XLA ran on a cache hit")
        compiler.run_pipeline = boom
        runtime.compile_module = boom

    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)

    @reactant.compile
    def grad(w, x):
        return reactant.gradient(loss, w, x)

    @reactant.compile
    def step(a, b):  # over a mesh of 8 devices
        return np.tanh(a @ b) + a.sum(axis=0)

    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((6, 3)), rng.standard_normal((5, 6))
    g = np.asarray(grad(reactant.to_rarray(w), reactant.to_rarray(x)))
    mesh = make_mesh((8,), ("d",))
    a, b = rng.standard_normal((16, 8)), rng.standard_normal((8, 8))
    s = step(reactant.to_rarray(a, sharding=NamedSharding(mesh, ("d",))),
             reactant.to_rarray(b, sharding=NamedSharding(mesh, ())))
    t = np.tanh(x @ w)
    print(json.dumps({
        "grad_err": float(np.abs(g - x.T @ (2 * t * (1 - t * t))).max()),
        "step_err": float(np.abs(np.asarray(s) - (np.tanh(a @ b) + a.sum(axis=0))).max()),
        "step_spec": list(s.sharding.spec),
        "stats": reactant.cache.stats,
        "xla": grad.xla_compile_count + step.xla_compile_count,
        "sources": reactant.cache._software()["sources"],
    }))
""")


def _child(tmp_path, cache_dir, expect_hit=False, wait=True, sources=""):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = dict(os.environ, REACTANT_CACHE_DIR=str(cache_dir), EXPECT_HIT="1" if expect_hit else "0", SOURCES=sources,
               PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("REACTANT_LOG", None)
    p = subprocess.Popen([sys.executable, str(script)], env=env, cwd=str(tmp_path), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    return _result(p) if wait else p


def _result(p) -> dict:
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def _check_values(r):
    assert r["grad_err"] < 1e-10 and r["step_err"] < 1e-10
    assert r["step_spec"][0] == "d"


def test_new_process_hits_after_concurrent_writers(tmp_path):
    d = tmp_path / "cache"
    procs = [_child(tmp_path, d, wait=False) for _ in range(2)]  # two writers on an empty directory
    writers = [_result(p) for p in procs]
    for r in writers:
        _check_values(r)
        assert r["stats"]["rejected"] == 0 and r["stats"]["misses"] + r["stats"]["hits"] == 2
    assert sum(r["stats"]["writes"] for r in writers) >= 2
    assert writers[0]["step_spec"] == writers[1]["step_spec"]
    names = os.listdir(d)
    assert len(names) == 2 and all(n.endswith(".rxc") for n in names)  # no temporary file left
    later = _child(tmp_path, d, expect_hit=True, sources=writers[0]["sources"])  # no optimizer, no XLA
    if later.get("sources_changed"):  # a new key, rightly: only in a checkout being edited meanwhile
        pytest.skip("reactant's sources changed while the test ran")
    _check_values(later)
    assert later["stats"]["hits"] == 2 and later["stats"]["misses"] == 0 and later["xla"] == 0
    assert later["step_spec"] == writers[0]["step_spec"]
