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


LOOP = """func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c8 = stablehlo.constant dense<8> : tensor<i32>
  %w:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %p = stablehlo.compare LT, %i, %c8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %n = stablehlo.add %i, %c1 : tensor<i32>
      %s = stablehlo.multiply %v, %v : tensor<4xf32>
      stablehlo.return %n, %s : tensor<i32>, tensor<4xf32>
    }
  %o = stablehlo.subtract %y, %y : tensor<4xf32>
  %o2 = stablehlo.subtract %o, %y : tensor<4xf32>
  return %w#1, %o2 : tensor<4xf32>, tensor<4xf32>
}"""


def _sub_to_add(op, rewriter):
    """subtract -> add (outside the loop: a rewrite that makes the driver sweep again)."""
    with rewriter.ip:
        new = ir.Operation.create("stablehlo.add", results=[op.results[0].type], operands=list(op.operands),
                                  loc=op.location)
    return replace(rewriter, op, new.result)


def _mul_to_add(op, rewriter):
    """multiply -> add (inside the loop's body: changes the loop)."""
    return _sub_to_add(op, rewriter)


def test_a_loop_pattern_that_failed_is_not_tried_again_on_the_loop_as_it_stands():
    seen = []

    def never(op, rewriter):
        seen.append(1)
        return False

    m = parse_module(LOOP)
    with m.context, ir.Location.unknown(m.context):
        apply_patterns(m, [Pattern("never", "test", "stablehlo.while", never),
                           Pattern("sub_to_add", "test", "stablehlo.subtract", _sub_to_add)])
    assert "stablehlo.subtract" not in to_text(m)  # the driver swept more than once ...
    assert len(seen) == 1  # ... and the loop pattern ran once: the loop never changed


def test_a_loop_pattern_is_tried_again_once_the_loop_changed():
    seen = []

    def unless_multiply(op, rewriter):  # fails while the body multiplies; then the loop goes
        body = op.regions[1].blocks[0]
        multiplies = any(o.operation.name == "stablehlo.multiply" for o in body.operations)
        seen.append(multiplies)
        return False if multiplies else replace(rewriter, op, list(op.operands))

    tries = []

    def mul_to_add_later(op, rewriter):  # fires from its second try on: after the loop's first
        tries.append(1)
        return len(tries) > 1 and _mul_to_add(op, rewriter)

    m = parse_module(LOOP)
    with m.context, ir.Location.unknown(m.context):
        apply_patterns(m, [Pattern("unless_multiply", "test", "stablehlo.while", unless_multiply),
                           Pattern("mul_to_add", "test", "stablehlo.multiply", mul_to_add_later),
                           Pattern("sub_to_add", "test", "stablehlo.subtract", _sub_to_add)])
    assert seen[0] is True and seen[-1] is False  # failed on the loop, tried again once it changed
    assert "stablehlo.while" not in to_text(m)


def test_the_patterns_of_one_op_run_in_order_of_benefit_and_stop_at_the_first_rewrite():
    calls = []

    def failing(tag):
        def fn(op, rewriter):
            calls.append(tag)
            return False
        return fn

    def rewriting(op, rewriter):
        calls.append("sub_to_add")
        return _sub_to_add(op, rewriter)

    m = parse_module(LOOP)
    with m.context, ir.Location.unknown(m.context):
        apply_patterns(m, [Pattern("low", "test", "stablehlo.subtract", failing("low"), benefit=1),
                           Pattern("high", "test", "stablehlo.subtract", failing("high"), benefit=5),
                           Pattern("sub_to_add", "test", "stablehlo.subtract", rewriting, benefit=3)])
    assert "stablehlo.subtract" not in to_text(m)
    # each subtract: the benefit-5 pattern, then the rewrite; the benefit-1 one never runs
    assert calls == ["high", "sub_to_add"] * 2


def test_the_patterns_of_one_visit_share_its_memo_and_the_next_visit_starts_afresh():
    from reactant.optimize.patterns._registry import visit_memo

    seen = []

    def first(op, rewriter):
        memo = visit_memo()
        seen.append(("first", dict(memo)))
        memo["fact", op.operation] = len(seen)  # what a later pattern of this visit reads
        return False

    def second(op, rewriter):
        seen.append(("second", visit_memo().get(("fact", op.operation))))
        return False

    m = parse_module(LOOP)  # two subtracts: two visits
    with m.context, ir.Location.unknown(m.context):
        apply_patterns(m, [Pattern("first", "test", "stablehlo.subtract", first, benefit=2),
                           Pattern("second", "test", "stablehlo.subtract", second, benefit=1)])
    assert visit_memo() is None  # (outside a visit)
    assert seen == [("first", {}), ("second", 1), ("first", {}), ("second", 3)]
