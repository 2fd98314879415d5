"""Speculative XLA compile (reactant/speculation.py): the copy finished without the last
equality-saturation pass is compiled in the background and used only when the saturated
program is byte-identical."""

from __future__ import annotations

import numpy as np
import pytest

import reactant
import reactant.compiler as compiler
from reactant import speculation as S


def _counts(fn):
    before = dict(S.stats)
    out = fn()
    return out, {k: S.stats[k] - before[k] for k in before}


def test_program_saturation_leaves_alone_uses_the_background_executable():
    rng = np.random.default_rng(0)
    a, x = rng.standard_normal((64, 64)), rng.standard_normal(64)
    f = reactant.compile(lambda a, x: np.tanh(a @ x).sum())
    y, n = _counts(lambda: f(reactant.to_rarray(a), reactant.to_rarray(x)))
    assert n == {"hits": 1, "misses": 0}
    np.testing.assert_allclose(np.asarray(y), np.tanh(a @ x).sum(), rtol=1e-12)


def test_program_saturation_rewrites_is_compiled_again():
    # (A @ B) @ x: equality saturation reassociates to A @ (B @ x) (a fast-math rewrite: it
    # changes rounding, and Inf/NaN cases), so the copy differs
    rng = np.random.default_rng(1)
    # (256: large enough for saturation to pay for itself over the calls the optimizer assumes)
    a, b, x = rng.standard_normal((256, 256)), rng.standard_normal((256, 256)), rng.standard_normal(256)
    exact = reactant.compile(lambda a, b, x: (a @ b) @ x)
    assert "tensor<256x256xf64>) -> tensor<256x256xf64>" in reactant.code_hlo(exact, *reactant.to_rarray((a, b, x)))
    f = reactant.compile(lambda a, b, x: (a @ b) @ x, fast_math=True)
    args = reactant.to_rarray((a, b, x))
    y, n = _counts(lambda: f(*args))
    assert n == {"hits": 0, "misses": 1}
    np.testing.assert_allclose(np.asarray(y), (a @ b) @ x, rtol=1e-10)
    assert "tensor<256x256xf64>) -> tensor<256x256xf64>" not in reactant.code_hlo(f, *args)  # no matrix product left


def test_sharded_program_uses_the_background_executable():
    from reactant.sharding import NamedSharding, make_mesh

    mesh = make_mesh((8,), ("d",))
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((64, 16)), rng.standard_normal((16, 16))
    f = reactant.compile(lambda x, w: np.tanh(x @ w).sum(axis=1))
    rx = reactant.to_rarray(x, sharding=NamedSharding(mesh, ("d",)))
    rw = reactant.to_rarray(w, sharding=NamedSharding(mesh, ()))
    y, n = _counts(lambda: f(rx, rw))
    assert n == {"hits": 1, "misses": 0}
    np.testing.assert_allclose(np.asarray(y), np.tanh(x @ w).sum(axis=1), rtol=1e-12)
    assert y.sharding.spec[0] == "d"


def test_large_programs_are_not_forked(monkeypatch):
    monkeypatch.setattr(compiler, "_SPECULATE_MAX_OPS", 3)
    x = np.arange(6.0)
    f = reactant.compile(lambda x: np.sin(x) @ np.cos(x))
    y, n = _counts(lambda: f(reactant.to_rarray(x)))
    assert n == {"hits": 0, "misses": 0}
    np.testing.assert_allclose(float(np.asarray(y)), np.sin(x) @ np.cos(x), rtol=1e-12)


def test_levels_without_saturation_are_not_forked():
    x = np.arange(6.0)
    f = reactant.compile(lambda x: np.sin(x) @ np.cos(x), optimize="O1")
    _, n = _counts(lambda: f(reactant.to_rarray(x)))
    assert n == {"hits": 0, "misses": 0}


def test_speculation_object():
    s = S.Speculation(b"abc", lambda bc: ("exe", bc))
    assert s.take(b"abd") is None  # another program: not used
    s = S.Speculation(b"abc", lambda bc: ("exe", bc))
    assert s.take(b"abc") == ("exe", b"abc")

    def boom(bc):
        raise RuntimeError("compile failed")
    s = S.Speculation(b"abc", boom)
    assert s.take(b"abc") is None  # the caller compiles itself and reports the error


def test_background_compiles_reuse_an_idle_worker_thread():
    """A compile runs on a kept worker thread (starting a thread per compile costs as much as a
    small program's saturation); compiles at the same time get a worker each, and a failed
    compile leaves its worker usable."""
    import threading

    where = []
    s = S.Speculation(b"a", lambda bc: where.append(threading.current_thread()) or bc)
    assert s.take(b"a") == b"a"
    s = S.Speculation(b"b", lambda bc: where.append(threading.current_thread()) or bc)
    assert s.take(b"b") == b"b"
    assert where[0] is where[1] and where[0] is not threading.current_thread()

    def boom(bc):
        where.append(threading.current_thread())
        raise RuntimeError("compile failed")
    assert S.Speculation(b"c", boom).take(b"c") is None
    assert S.Speculation(b"d", lambda bc: where.append(threading.current_thread()) or bc).take(b"d") == b"d"
    assert where[2] is where[0] and where[3] is where[0]

    gate = threading.Event()  # (the first compile holds its worker until released)
    slow = S.Speculation(b"e", lambda bc: where.append(threading.current_thread()) or gate.wait() and bc)
    other = S.Speculation(b"f", lambda bc: where.append(threading.current_thread()) or bc)
    assert other.take(b"f") == b"f" and where[5] is not where[4]
    gate.set()
    assert slow.take(b"e") == b"e"


def test_error_of_the_program_is_reported_once_not_from_the_thread():
    # an out_shardings on an unsharded program: the program's own finalization raises
    x = np.arange(4.0)
    f = reactant.compile(lambda x: np.sin(x) @ x, out_shardings=object())
    with pytest.raises(reactant.ShardingError, match="out_shardings is for programs over a mesh"):
        f(reactant.to_rarray(x))


def test_verbose_log_says_when_the_background_executable_is_used(capsys):
    x = np.arange(6.0)
    f = reactant.compile(lambda a, x: np.tanh(a @ x).sum(), verbose=True)
    f(reactant.to_rarray(np.ones((6, 6))), reactant.to_rarray(x))
    err = capsys.readouterr().err
    assert "XLA compile" in err and "compiled during equality saturation" in err
