"""Segments saturated without a gain are remembered by encoding: an unrolled program's
repeated segments are not saturated again, with the same result as saturating each."""

from __future__ import annotations

import numpy as np

import reactant
from reactant.ir.context import parse_module, to_text
from reactant.optimize import run_pipeline
from reactant.optimize.eqsat import driver
from reactant.optimize.eqsat.driver import Limits, run_eqsat


def _stencil(x):
    for _ in range(12):
        x = x.copy()
        x[1:-1] = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
    return x


class _Forgetful(dict):
    def __setitem__(self, key, value):
        pass


def _prepared():
    x = reactant.to_rarray(np.linspace(0.0, 1.0, 64))
    text = reactant.code_hlo(reactant.compile(_stencil, loops="unroll"), x, optimize=False)
    m = parse_module(text)
    run_pipeline(m, ["inline", "canonicalize", "patterns"])
    return m


def test_repeated_segments_are_not_saturated_again(monkeypatch):
    monkeypatch.setattr(driver, "_NO_GAIN", {})
    m = _prepared()
    report = run_eqsat(m, Limits())
    cached = [s for s in report.segments if s.cached]
    fresh = [s for s in report.segments if not s.cached]
    assert len(cached) >= 5 and fresh, [(s.ops, s.cached) for s in report.segments]
    assert all(s.nodes_end > 0 for s in cached)  # still counted against the pass budget

    monkeypatch.setattr(driver, "_NO_GAIN", _Forgetful())
    m2 = _prepared()
    report2 = run_eqsat(m2, Limits())
    assert not any(s.cached for s in report2.segments)
    assert to_text(m) == to_text(m2)
    assert [s.nodes_end for s in report.segments] == [s.nodes_end for s in report2.segments]
