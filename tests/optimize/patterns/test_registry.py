"""The greedy driver: a pattern's exception names the pattern; hitting the driver's caps is
not an error (the module stays valid and equal in value)."""

import pytest
from jaxlib.mlir import ir

from reactant.ir.context import parse_module, to_text
from reactant.optimize.patterns._registry import Pattern, PatternError, apply_patterns, replace

TEXT = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""


def _swap(op, rewriter):
    """add(x, y) -> add(y, x): never reaches a fixpoint."""
    with rewriter.ip:
        new = ir.Operation.create("stablehlo.add", results=[op.results[0].type],
                                  operands=[op.operands[1], op.operands[0]], loc=op.location)
    return replace(rewriter, op, new.result)


def _boom(op, rewriter):
    raise ValueError("boom")


def test_driver_caps_are_not_an_error():
    m = parse_module(TEXT)
    apply_patterns(m, [Pattern("swap", "test", "stablehlo.add", _swap)], max_iterations=3, max_rewrites=50)
    m.operation.verify()
    assert "stablehlo.add %arg" in to_text(m)


def test_a_failing_pattern_is_named():
    m = parse_module(TEXT)
    with pytest.raises(PatternError, match="'boom_pattern' failed on stablehlo.add") as e:
        apply_patterns(m, [Pattern("boom_pattern", "test", "stablehlo.add", _boom)])
    assert isinstance(e.value.__cause__, ValueError)
