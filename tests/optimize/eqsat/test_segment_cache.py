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
    report = run_eqsat(m, Limits(gainful_kinds=None))
    cached = [s for s in report.segments if s.cached]
    fresh = [s for s in report.segments if not s.cached]
    assert len(cached) >= 5 and fresh, [(s.ops, s.cached) for s in report.segments]
    assert all(s.nodes_end > 0 for s in cached)  # still counted against the pass budget

    monkeypatch.setattr(driver, "_NO_GAIN", _Forgetful())
    m2 = _prepared()
    report2 = run_eqsat(m2, Limits(gainful_kinds=None))
    assert not any(s.cached for s in report2.segments)
    assert to_text(m) == to_text(m2)
    assert [s.nodes_end for s in report.segments] == [s.nodes_end for s in report2.segments]


def _slice_dot(x, w):
    y = x[1:] * 2.0 + x[:-1]
    return np.dot(y.reshape(3, 5), w[:5]).sum()


def test_segments_without_a_gainful_op_are_not_saturated():
    # the stencil is slices and elementwise algebra: nothing the rules can gain on by default
    m = _prepared()
    report = run_eqsat(m, Limits())
    assert report.segments == [] and report.not_gainful >= 1
    # a product makes its segment worth saturating; the result is unchanged either way
    x, w = reactant.to_rarray(np.linspace(0.0, 1.0, 16)), reactant.to_rarray(np.linspace(1.0, 2.0, 20).reshape(5, 4))
    text = reactant.code_hlo(reactant.compile(_slice_dot), x, w, optimize=False)
    m = parse_module(text)
    run_pipeline(m, ["inline", "canonicalize", "patterns"])
    report = run_eqsat(m, Limits())
    assert report.segments and report.segments[0].nodes_end > 0
    got = reactant.compile(_slice_dot, optimize="O2")(x, w)
    np.testing.assert_allclose(np.asarray(got), _slice_dot(np.asarray(x), np.asarray(w)), rtol=1e-12)
