"""The optimizer's command line: ``python -m reactant.optimize``."""

import runpy
import sys

import pytest
from hlo_corpus import corpus_module, corpus_text

from reactant.optimize.cli import main

SLICE_OF_DOT = str(corpus_module("slice_of_dot.fwd"))


def test_module_entry_point(tmp_path, monkeypatch, capsys):
    """``python -m reactant.optimize`` (its __main__ module, run in-process)."""
    out = tmp_path / "out.mlir"
    monkeypatch.setattr(sys, "argv", ["reactant.optimize", SLICE_OF_DOT, "-o", str(out), "-p", "O2", "--stats"])
    with pytest.raises(SystemExit) as e:
        runpy.run_module("reactant.optimize", run_name="__main__")
    assert e.value.code == 0
    r = capsys.readouterr()
    text = out.read_text()
    assert "func.func public @main" in text
    assert "-> tensor<10xf32>" in text and "stablehlo.multiply" in text
    # stats: one line per pass plus a total, with time and op counts
    lines = [ln for ln in r.err.splitlines() if ln.split() and ln.split()[0] in
             ("inline", "canonicalize", "patterns", "cse", "total")]
    assert [ln.split()[0] for ln in lines][-1] == "total"
    assert all(len(ln.split()) == 4 or "skipped" in ln for ln in lines)


def test_output_to_stdout_and_levels(capsys):
    assert main([SLICE_OF_DOT, "-p", "O0"]) == 0
    o0 = capsys.readouterr().out
    assert "stablehlo.slice %4 [0:10]" in o0  # O0 changes nothing
    assert main([SLICE_OF_DOT, "-p", "O1"]) == 0
    o1 = capsys.readouterr().out
    assert "stablehlo.slice %arg2 [0:10]" in o1


def test_explicit_pass_list_and_disable(tmp_path, capsys):
    out = tmp_path / "o.mlir"
    assert main([SLICE_OF_DOT, "-p", "inline,canonicalize,patterns", "-o", str(out),
                 "--disable", "slice_elementwise,slicing"]) == 0
    text = out.read_text()
    assert "stablehlo.add" in text and "tensor<100000xf32>) -> tensor<10xf32>" in text  # not pushed
    # disabling the patterns pass altogether
    assert main([SLICE_OF_DOT, "-p", "O1", "--disable", "patterns", "-o", str(out)]) == 0
    assert "stablehlo.add %2, %cst : tensor<100000xf32>" in out.read_text()


def test_disable_multi_root_base_name():
    from reactant.optimize.cli import expand_disabled

    pats, passes, unknown = expand_disabled(["elementwise_of_pads", "cse", "nope"])
    assert "elementwise_of_pads@add" in pats and "elementwise_of_pads@multiply" in pats
    assert passes == {"cse"} and unknown == ["nope"]


def test_unknown_names_are_errors(capsys):
    with pytest.raises(SystemExit) as e:
        main([SLICE_OF_DOT, "--disable", "no_such_pattern"])
    assert e.value.code == 2
    with pytest.raises(SystemExit):
        main([SLICE_OF_DOT, "-p", "O9"])
    assert main(["/nonexistent/file.mlir"]) == 1


def test_list_patterns(capsys):
    assert main(["--list-patterns"]) == 0
    out = capsys.readouterr().out
    for name in ("slice_dot_general", "while_licm", "scatter_box_to_update_slice", "select_const_pred"):
        assert name in out
    assert "patterns:" in out.splitlines()[-1]
    assert main(["--list-patterns", "--family", "control_flow"]) == 0
    out = capsys.readouterr().out
    assert "while_licm" in out and "slice_dot_general" not in out
    assert main(["--list-passes"]) == 0
    assert "O2:" in capsys.readouterr().out


def test_private_entry_of_enzyme_modules_is_kept(tmp_path):
    """Enzyme-JaX's modules have no public function: their entry is a private function nobody
    calls. The optimizer keeps it (dead-function removal would drop it), still private."""
    text = corpus_text("slice_of_dot.fwd")
    assert text.count("func.func public @main(") == 1 and text.count("func.func") == 1
    src = tmp_path / "private_entry.mlir"
    src.write_text(text.replace("func.func public @main(", "func.func private @main("))
    out = tmp_path / "o.mlir"
    assert main([str(src), "-o", str(out)]) == 0
    text = out.read_text()
    assert "func.func private @main(" in text and "public" not in text
    assert "stablehlo.dot_general" in text and "stablehlo.slice %arg2 [0:10]" in text  # optimized


def test_stdin_input(monkeypatch, capsys):
    import io

    text = open(SLICE_OF_DOT).read()

    class FakeStdin:
        buffer = io.BytesIO(text.encode())

    monkeypatch.setattr(sys, "stdin", FakeStdin())
    assert main(["-", "-p", "O1"]) == 0
    assert "stablehlo.slice %arg2 [0:10]" in capsys.readouterr().out


def test_failing_pass_is_reported_without_traceback(capsys):
    from reactant.optimize.passes import PASSES, register_pass

    if "test_cli_failing_pass" not in PASSES:
        @register_pass("test_cli_failing_pass")
        def _fail(module, options):
            raise RuntimeError("boom")

    assert main([SLICE_OF_DOT, "-p", "inline,test_cli_failing_pass"]) == 1
    err = capsys.readouterr().err
    assert "test_cli_failing_pass" in err and "boom" in err and "Traceback" not in err


def test_idempotent_pass_is_skipped_only_while_the_module_is_unchanged():
    """O2's second pattern pass is skipped when equality saturation kept the program, and
    runs when a pass in between changed it; results are the same either way."""
    from reactant.ir import context as irc
    from reactant.optimize import PASSES, PassStat, run_pipeline

    text = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %z = stablehlo.constant dense<1.0> : tensor<4xf32>
      %x = stablehlo.multiply %a, %z : tensor<4xf32>
      return %x : tensor<4xf32>
    }"""
    from reactant.optimize.passes import IDEMPOTENT

    def touch(module, options):  # claims a change without making one
        return None

    def keep(module, options):
        return False

    def run(names):
        m = irc.parse_module(text)
        stats: list[PassStat] = []
        run_pipeline(m, names, stats=stats)
        return [s.skipped for s in stats], irc.to_text(m)

    PASSES.update(test_touch=touch, test_keep=keep)
    try:
        skipped, out_keep = run(["patterns", "test_keep", "patterns"])
        assert skipped == [False, False, True]
        skipped, out_touch = run(["patterns", "test_touch", "patterns"])
        assert skipped == [False, False, False]
    finally:  # leave the registry as it was
        del PASSES["test_touch"], PASSES["test_keep"]
    assert "patterns" in IDEMPOTENT
    assert out_keep == out_touch and "stablehlo.multiply" not in out_keep


def test_a_pipeline_run_in_parts_skips_idempotent_passes_as_one_run(monkeypatch, capsys):
    """A compile runs its pipeline in parts (speculation runs the rest on a copy): the clean
    set carried between the parts skips the second pattern pass after a saturation that kept
    the program, on the program and on the copy, as one run does."""
    import numpy as np

    import reactant
    from reactant.ir import context as irc
    from reactant.optimize import PassStat, run_pipeline

    text = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %z = stablehlo.constant dense<1.0> : tensor<4xf32>
      %x = stablehlo.multiply %a, %z : tensor<4xf32>
      return %x : tensor<4xf32>
    }"""
    m = irc.parse_module(text)
    clean: set[str] = set()
    run_pipeline(m, ["canonicalize", "patterns"], clean=clean)
    assert "patterns" in clean
    stats: list[PassStat] = []
    run_pipeline(m, ["eqsat", "patterns", "cse"], clean=clean, stats=stats)
    assert [s.skipped for s in stats] == [False, True, False]
    # the compiler: one pattern pass before saturation, none after, and NumPy's values
    monkeypatch.setenv("REACTANT_LOG", "1")

    def f(x, w):
        return np.tanh(x @ w).sum(axis=0)

    x, w = np.arange(64.0).reshape(8, 8) / 64, np.eye(8)
    out = reactant.compile(f, optimize="O2")(reactant.to_rarray(x), reactant.to_rarray(w))
    np.testing.assert_allclose(np.asarray(out), f(x, w))
    log = capsys.readouterr().err
    assert log.count(": pass patterns ") == 1 and ": pass eqsat " in log, log
