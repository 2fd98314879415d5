"""Each segment saturates with only the rules that can fire on it (patterns made of op
constructors present or created by such rules): fewer rules for simple segments, and exactly
the same optimized modules as with every rule loaded."""

import pytest
from hlo_corpus import MODULES as NAMES
from hlo_corpus import corpus_module

from reactant.optimize import PassOptions, pipeline, run_pipeline
from reactant.optimize.eqsat import driver
from reactant.optimize.eqsat.lang import CTORS
from reactant.optimize.eqsat.rules import _facts_and_actions, all_rules, rules_for
from reactant.ir.context import load, to_text

RANKS = (0, 1, 2, 3, 4)
MODULES = [str(corpus_module(n)) for n in NAMES]


def test_subsets_are_closed_under_what_their_rules_create():
    everything = all_rules(RANKS, False)
    elementwise, rules = rules_for(frozenset({"Leaf", "Bin"}), RANKS, False)
    assert 0 < len(rules) < len(everything) // 4
    assert not {"Dot", "Pad", "Slice", "Transpose"} & elementwise
    reach, mlp_rules = rules_for(frozenset({"Leaf", "Dot", "Bin", "Bcast", "Reduce", "SplatF"}), RANKS, False)
    assert {"Transpose", "Reshape"} <= reach  # created by dot/reduce rules, then rewritten too
    assert len(rules) < len(mlp_rules) < len(everything)
    for rule in mlp_rules:  # every chosen rule's pattern is satisfiable from what is reachable
        facts, _ = _facts_and_actions(rule)
        assert all(c in reach for c in CTORS if f"({c} " in facts)
    full, rules_all = rules_for(frozenset(CTORS), RANKS, False)
    assert rules_all == everything and full == frozenset(CTORS)


def test_rule_parsing_rejects_what_is_not_a_rule():
    with pytest.raises(ValueError):
        _facts_and_actions("(rewrite (Bin x y) (Bin y x))")


@pytest.mark.parametrize("path", [m for m in MODULES if any(
    k in m for k in ("slice_of_dot.fwd", "stencil2d_twice.grad", "transpose_chain.grad", "normalize_vmap.grad",
                     "diagmm_scatter.fwd"))], ids=lambda p: p.split("/")[-1])
def test_same_result_as_with_every_rule(path, monkeypatch):
    # budgets far above what these modules need: no budget may cut a run short, so the two
    # results can only differ by the rules loaded
    options = PassOptions(eqsat_extract_steps=10**7)

    def optimized():
        module = load(path)
        run_pipeline(module, pipeline("O2"), options)
        return to_text(module)

    optimized()  # builds this subset's base e-graph
    with_subsets = optimized()
    everything = frozenset(CTORS)
    monkeypatch.setattr(driver, "rules_for", lambda present, ranks, fm: rules_for(everything, ranks, fm))
    assert optimized() == with_subsets
