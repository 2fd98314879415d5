"""code_hlo / code_xla / REACTANT_DUMP_IR."""

import os

import numpy as np

import reactant


def _setup():
    x = reactant.to_rarray(np.ones((8, 4), np.float32))
    w = reactant.to_rarray(np.ones((4, 2), np.float32))

    @reactant.compile
    def f(w, x):
        h = np.tanh(x @ w)
        return np.exp(h) / np.exp(h).sum(axis=1, keepdims=True)

    return f, w, x


def test_code_hlo_and_code_xla():
    f, w, x = _setup()
    raw = reactant.code_hlo(f, w, x, optimize=False)
    assert "func.func public @main(%arg0: tensor<4x2xf32>, %arg1: tensor<8x4xf32>)" in raw
    assert raw.count("stablehlo.exponential") == 2  # as traced
    opt = reactant.code_hlo(f, w, x)
    assert opt.count("stablehlo.exponential") == 1  # CSE'd by the pipeline
    assert "stablehlo.dot_general" in opt and "stablehlo.tanh" in opt
    xla = reactant.code_xla(f, w, x)
    assert "HloModule" in xla and "tanh" in xla
    assert f.compile_count == 0  # inspection does not fill the call cache
    # plain functions work too
    assert "stablehlo.sine" in reactant.code_hlo(lambda a: np.sin(a), x)


def test_locations_point_at_user_lines():
    f, w, x = _setup()
    prog = f.lower(w, x, optimize=False)
    text = prog.module.operation.get_asm(enable_debug_info=True)
    assert "test_inspect.py" in text


def test_dump_ir_after_every_pass(tmp_path, monkeypatch):
    monkeypatch.setenv("REACTANT_DUMP_IR", str(tmp_path))
    f, w, x = _setup()
    f(w, x)
    names = sorted(os.listdir(tmp_path))
    assert any(n.endswith("_00_input.mlir") for n in names)
    assert any(n.endswith("_canonicalize.mlir") for n in names)
    assert all(open(tmp_path / n).read().startswith("module") for n in names)
