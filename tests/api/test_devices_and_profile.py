"""Devices and platforms, compile stages as data, recompile explanations, runtime traces."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import reactant


def test_devices_of_a_platform_and_clear_errors_for_absent_ones():
    cpus = reactant.devices("cpu")
    assert len(cpus) == 8 and all(d.platform == "cpu" for d in cpus)
    assert reactant.devices() == cpus
    for name in ("gpu", "tpu"):
        with pytest.raises(reactant.PlatformError, match=f"no {name} devices.*available: cpu"):
            reactant.devices(name)
    with pytest.raises(reactant.PlatformError, match="not a platform"):
        reactant.devices("xpu")
    with pytest.raises(reactant.PlatformError, match="no device 'cpu:99'"):
        reactant.to_rarray(np.ones(2), device="cpu:99")


def test_compile_on_a_device():
    f = reactant.compile(lambda x, y: x * y + 1, device="cpu:3")
    out = f(np.arange(3.0), 2.0)
    np.testing.assert_array_equal(np.asarray(out), np.arange(3.0) * 2 + 1)
    assert out.device == reactant.devices()[3]
    on3 = reactant.to_rarray(np.ones(3), device="cpu:3")
    np.testing.assert_array_equal(np.asarray(f(on3, 2.0)), np.full(3, 3.0))
    elsewhere = reactant.to_rarray(np.ones(3), device=reactant.devices()[1])
    with pytest.raises(reactant.ArgumentError, match="lives on .*compiled for"):
        f(elsewhere, 2.0)
    with pytest.raises(reactant.PlatformError):
        reactant.compile(lambda x: x, device="gpu")


def test_reactant_platform_environment_variable():
    code = ("import reactant\n"
            "try:\n    reactant.devices()\nexcept reactant.PlatformError as e:\n    print('ERR', str(e).splitlines()[0])\n")
    for value, expect in (("cpu", None), ("tpu", "ERR no tpu devices"), ("nope", "ERR REACTANT_PLATFORM='nope'")):
        env = dict(os.environ, REACTANT_PLATFORM=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        if expect is None:
            assert "ERR" not in out.stdout
        else:
            assert out.stdout.startswith(expect), out.stdout


def test_compile_stats_are_data():
    def layer(x, w):
        return np.tanh(x @ w).sum()

    f = reactant.compile(layer)
    x, w = reactant.to_rarray(np.ones((4, 3))), reactant.to_rarray(np.ones((3, 2)))
    st = f.compile_stats(x, w)
    names = [n for n, _ in st.stages]
    assert names[0] == "trace" and names[-1] == "XLA compile"
    assert any(n.startswith("pass ") for n in names)
    assert all(t >= 0 for _, t in st.stages)
    assert st.total_seconds >= st.seconds("trace") + st.seconds("optimize") + st.seconds("xla") - 1e-9
    assert f.compile_count == 1  # compiled by compile_stats, not run
    f(x, w)
    assert f.compile_count == 1 and f.compile_stats(x, w) is st
    assert "XLA" in str(st)


def test_recompile_explanations(monkeypatch, capfd):
    monkeypatch.setenv("REACTANT_LOG", "recompile")

    def f(x, lr, opts):
        return x * lr * opts["scale"]

    cf = reactant.compile(f)
    x = reactant.to_rarray(np.ones(2))
    cf(x, 0.5, {"scale": 2})
    capfd.readouterr()
    cf(x, 0.25, {"scale": 2})
    cf(reactant.to_rarray(np.ones(3, np.float32)), 0.25, {"scale": 2})
    cf(reactant.to_rarray(np.ones(3, np.float32)), 0.25, {"scale": 2, "bias": 1})
    err = capfd.readouterr().err.splitlines()
    assert "argument 'lr': float 0.5 -> float 0.25" in err[0]
    assert "argument 'x': array float64[2] on device 0 -> array float32[3] on device 0" in err[1]
    assert "pytree structure is new" in err[2]


def test_profile_writes_a_trace_with_the_function_and_its_compile_stages(tmp_path):
    def train_step(x):
        return np.tanh(x @ x).sum()

    f = reactant.compile(train_step)
    x = reactant.to_rarray(np.random.default_rng(0).random((32, 32)))
    with reactant.profile(tmp_path / "prof") as d:
        with reactant.annotate("my step"):
            out = f(x)
            np.asarray(out)
    assert d == str(tmp_path / "prof")
    pbs = list((tmp_path / "prof").rglob("*.xplane.pb"))
    traces = list((tmp_path / "prof").rglob("*.trace.json.gz"))
    assert pbs and traces
    names = {e.get("name", "") for e in json.load(gzip.open(traces[0]))["traceEvents"]}
    assert "my step" in names
    # (the spans carry the qualified name: test_...<locals>.train_step)
    assert any(n.startswith("reactant compile ") and "train_step: pass " in n for n in names)
    assert any("__locals__train_step)" in n for n in names)  # XLA's module is named after it
    np.testing.assert_allclose(np.asarray(out), np.tanh(np.asarray(x) @ np.asarray(x)).sum())
