"""run_pipeline lets no invalid module reach a pass: its input and the output of every pass that
may have changed the module are verified, and a failure is an InvalidModuleError naming the pass
that would have run and the one that produced the module."""

import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from reactant.ir.context import make_context, parse_module
from reactant.optimize import PASSES, InvalidModuleError, pipeline, run_pipeline

SRC = """
func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<3xf32>
  return %0 : tensor<3xf32>
}"""


def _main_block(m):
    return m.body.operations[0].regions[0].blocks[0]


def test_operand_from_another_module_is_refused_before_any_pass():
    ctx = make_context()
    a, b = parse_module(SRC, ctx), parse_module(SRC, ctx)
    foreign = _main_block(a).operations[0].result
    blk = _main_block(b)
    ret = blk.operations[1]
    with ctx, ir.Location.unknown(ctx), ir.InsertionPoint(ret):
        bad = hlo.add(foreign, blk.arguments[0])
    ret.operands[0] = bad
    try:
        with pytest.raises(InvalidModuleError) as e:
            run_pipeline(b, pipeline("O2"))
    finally:  # undo the cross-module use: MLIR aborts when a value with uses is destroyed
        ret.operands[0] = blk.operations[0].result
        bad.owner.erase()
    msg = str(e.value)
    assert "given to the optimizer" in msg and "before pass 'inline'" in msg
    assert "value defined outside the module" in msg and "test_pass_verification.py" in msg


def _corrupt(module, options):
    """A broken pass: drops @main's terminator."""
    _main_block(module).operations[1].erase()


@pytest.fixture
def corrupt_pass():
    PASSES["test_corrupt"] = _corrupt
    yield "test_corrupt"
    del PASSES["test_corrupt"]


@pytest.mark.parametrize("after,where", [(["inline"], "before pass 'inline'"), ([], "at the end of the pipeline")])
def test_invalid_output_of_a_pass_names_it_and_the_next(corrupt_pass, after, where):
    ran = []
    PASSES["test_record"] = lambda m, o: ran.append(True)
    try:
        with pytest.raises(InvalidModuleError) as e:
            run_pipeline(parse_module(SRC), ["cse", corrupt_pass] + after + ["test_record"][:len(after)])
    finally:
        del PASSES["test_record"]
    msg = str(e.value)
    assert "the output of pass 'test_corrupt'" in msg and where in msg and "bug in pass 'test_corrupt'" in msg
    assert not ran  # nothing ran on the invalid module


def test_valid_modules_pass_unchanged():
    m = parse_module(SRC)
    run_pipeline(m, pipeline("O2"))
    assert "stablehlo.add" in str(m)
