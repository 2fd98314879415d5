"""The local search ranks a candidate switch incrementally (``_base_after_switch`` for the
node costs, ``_FusionState.after_switch`` for the local fusion traffic): every price must equal
the same model evaluated afresh on the switched program (and the node costs ``dag_cost``'s
walk), on saturated e-graphs of model-style programs; a switch is kept only when the whole
model (``dag_cost``) agrees."""

from __future__ import annotations

import random

import pytest
from hlo_corpus import corpus_module

from reactant.ir import context as irc
from reactant.optimize import run_pipeline
from reactant.optimize.eqsat import driver, extract
from reactant.optimize.eqsat.driver import Limits, run_eqsat
from reactant.optimize.eqsat.extract import (_base_after_switch, _FusionState, _references, dag_cost, greedy_dag,
                                             improve)

NAMES = ["layer_norm.grad", "softmax_xent.grad", "lstm_cell.fwd"]


def _graphs(name):
    m = irc.load(str(corpus_module(name)))
    run_pipeline(m, ["inline", "canonicalize", "patterns"])
    out = []
    run_eqsat(m, Limits(), inspect=lambda fz, enc: out.append((fz, [fz.slot_class[s] for s in enc.roots])))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_incremental_switch_price_equals_a_fresh_evaluation(name, monkeypatch):
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
                    total = fus.after_switch(choice, c, old, sw[1], sw[2])
                    assert full is not None and sw[0] == sum(fz.node_cost[choice[x]] for x in full[1])
                    assert total == _FusionState(fz, choice, full[1], roots).total
                    assert len(full[1]) == len(cur[1]) + len(sw[1]) - len(sw[2])
                    checked += 1
                choice[c] = old
    assert checked > 20


def test_local_search_checked_in_full_gives_the_same_program(monkeypatch):
    """With every incremental price compared against a fresh evaluation (REACTANT_EQSAT_CHECK),
    the search runs through without a mismatch and ends where it ends without the check."""
    monkeypatch.setattr(driver, "_NO_GAIN", {})
    for fz, roots in _graphs("softmax_xent.grad"):
        a = greedy_dag(fz)
        b = list(a)
        monkeypatch.setattr(extract, "_CHECK", True)
        ra = improve(fz, a, roots)
        monkeypatch.setattr(extract, "_CHECK", False)
        rb = improve(fz, b, roots)
        assert ra == rb and a == b


@pytest.mark.parametrize("name", NAMES)
def test_local_search_never_ends_costlier_by_the_whole_model(name, monkeypatch):
    """The local model only ranks switches: what the search keeps is no costlier, by
    ``dag_cost``, than where it started, and its reported cost is ``dag_cost``'s."""
    monkeypatch.setattr(driver, "_NO_GAIN", {})
    for fz, roots in _graphs(name):
        choice = greedy_dag(fz)
        start = dag_cost(fz, choice, roots)
        if start is None:
            continue
        end = improve(fz, choice, roots)
        assert end is not None and end[0] <= start[0]
        assert dag_cost(fz, choice, roots)[0] == end[0]


def _greedy_reference(fz, free=None):
    """``greedy_dag`` without its bound (every node's set is built): the same choice."""
    from collections import deque

    n, nodes = fz.n_classes, fz.nodes
    best_total, best_node, best_set = [float("inf")] * n, [None] * n, [None] * n
    for c, i in (free or {}).items():
        best_total[c], best_node[c], best_set[c] = 0, i, {}
    parents = [[] for _ in range(n)]
    for i, nd in enumerate(nodes):
        for ch in set(nd.children):
            parents[ch].append(i)
    queue = deque(i for i, nd in enumerate(nodes) if not nd.children)
    queued = set(queue)
    steps, limit = 0, 50 * max(1, len(nodes))
    while queue and steps < limit:
        steps += 1
        i = queue.popleft()
        queued.discard(i)
        nd = nodes[i]
        chs = set(nd.children)
        if any(best_node[c] is None for c in chs):
            continue
        s = {}
        if chs:
            order = sorted(chs, key=lambda c: len(best_set[c]), reverse=True)
            s = dict(best_set[order[0]])
            for c in order[1:]:
                s.update(best_set[c])
            if nd.cls in s:
                continue
        total = sum(s.values()) + nd.cost
        if total < best_total[nd.cls] and not (free and nd.cls in free):
            s[nd.cls] = nd.cost
            best_total[nd.cls], best_node[nd.cls], best_set[nd.cls] = total, i, s
            for p in parents[nd.cls]:
                if p not in queued:
                    queued.add(p)
                    queue.append(p)
    return best_node


@pytest.mark.parametrize("name", NAMES)
def test_bounded_greedy_gives_the_reference_choice(name, monkeypatch):
    monkeypatch.setattr(driver, "_NO_GAIN", {})
    for fz, roots in _graphs(name):
        choice = greedy_dag(fz)
        assert choice == _greedy_reference(fz)
        free = {c: choice[c] for c in roots if choice[c] is not None}
        assert greedy_dag(fz, free=free) == _greedy_reference(fz, free=free)
