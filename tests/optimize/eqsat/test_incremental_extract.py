"""The local search prices a candidate switch incrementally (``_base_after_switch`` for the
node costs, ``_FusionState.after_switch`` for the fusion traffic): every price must equal
``dag_cost`` of the switched program, on saturated e-graphs of model-style programs."""

from __future__ import annotations

import os
import random

import pytest

from reactant.ir import context as irc
from reactant.optimize import run_pipeline
from reactant.optimize.eqsat import driver, extract
from reactant.optimize.eqsat.driver import Limits, run_eqsat
from reactant.optimize.eqsat.extract import (_base_after_switch, _FusionState, _references, dag_cost, greedy_dag,
                                             improve)

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks", "corpus")
NAMES = ["layer_norm.grad", "softmax_xent.grad", "lstm_cell.fwd"]


def _graphs(name):
    path = os.path.join(CORPUS, f"{name}.mlir")
    if not os.path.exists(path):
        pytest.skip("corpus not available")
    m = irc.load(path)
    run_pipeline(m, ["inline", "canonicalize", "patterns"])
    out = []
    run_eqsat(m, Limits(), inspect=lambda fz, enc: out.append((fz, [fz.slot_class[s] for s in enc.roots])))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_incremental_switch_price_equals_dag_cost(name, monkeypatch):
    monkeypatch.setattr(driver, "_NO_GAIN", {})
    rng = random.Random(0)
    checked = 0
    for fz, roots in _graphs(name):
        if not fz.mat_cost:
            continue
        choice = greedy_dag(fz)
        cur = dag_cost(fz, choice, roots)
        if cur is None:
            continue
        refs = _references(fz, choice, cur[1], roots)
        pos = {c: k for k, c in enumerate(cur[1])}
        base = sum(fz.node_cost[choice[c]] for c in cur[1])
        fus = _FusionState(fz, choice, cur[1], roots)
        assert base + fus.total == cur[0]
        by_class = fz.nodes_by_class()
        for c in rng.sample(cur[1], min(len(cur[1]), 60)):
            old = choice[c]
            for alt in by_class[c]:
                if alt == old or any(choice[ch] is None for ch in fz.node_children[alt]):
                    continue
                sw = _base_after_switch(fz, choice, refs, pos, base, c, alt)
                choice[c] = alt
                full = dag_cost(fz, choice, roots)
                if sw is None:
                    assert full is None
                else:
                    total = sw[0] + fus.after_switch(choice, c, old, sw[1], sw[2])
                    assert full is not None and full[0] == total
                    assert len(full[1]) == len(cur[1]) + len(sw[1]) - len(sw[2])
                    checked += 1
                choice[c] = old
    assert checked > 20


def test_local_search_checked_in_full_gives_the_same_program(monkeypatch):
    """With every incremental price compared against ``dag_cost`` (REACTANT_EQSAT_CHECK), the
    search runs through without a mismatch and ends where it ends without the check."""
    monkeypatch.setattr(driver, "_NO_GAIN", {})
    for fz, roots in _graphs("softmax_xent.grad"):
        a = greedy_dag(fz)
        b = list(a)
        monkeypatch.setattr(extract, "_CHECK", True)
        ra = improve(fz, a, roots)
        monkeypatch.setattr(extract, "_CHECK", False)
        rb = improve(fz, b, roots)
        assert ra == rb and a == b
