"""Every corpus module (the twelve shared workloads in ``benchmarks/corpus``, written by
``benchmarks/make_corpus.py``; forward and gradient) still verifies and computes the same
results after the pattern families A (algebraic, constants, layout, dot, reduce; default,
non-fast-math patterns), run on random inputs of the modules' own shapes.

The modules are inlined first (MLIR's inline pass cannot inline func.call in this jaxlib
build; the harness has a small inliner), so the patterns see across JAX's helper functions
(``_diag``, ``_where``, ``norm``, ``closed_call``).
"""

import numpy as np
import pytest
from _harness import (assert_same_results, draw, execute, inline_calls, main_arg_types, main_body,
                      parse, rewrite, to_text)
from hlo_corpus import MODULES, corpus_text

FAMILIES_A = ("algebraic", "constants", "layout", "dot", "reduce")


def _patterns(fast_math=False):
    from reactant.optimize.patterns import PATTERNS

    return [n for n, p in PATTERNS.items() if p.family in FAMILIES_A and (fast_math or not p.fast_math)]


def _inputs(text, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dt in main_arg_types(text):
        if np.dtype(dt).kind in "iu":  # segment ids, indices: keep them in range of any axis
            out.append(rng.integers(0, 10, size=shape).astype(dt))
        else:
            out.append(draw(rng, shape, dt, "normal"))
    return out


def _op_count(text):
    return sum(1 for ln in main_body(text).splitlines() if "stablehlo." in ln and "=" in ln)


@pytest.mark.parametrize("name", MODULES)
def test_corpus_module_same_results(name):
    before = to_text(inline_calls(parse(corpus_text(name))))
    after = rewrite(before, _patterns())
    assert _op_count(after) <= _op_count(before), (before, after)
    args = _inputs(before)
    want, got = execute(before, args), execute(after, args)
    # reassociated float sums over up to 1e6 elements: compare relative to each result's scale
    for w, g in zip(want, got):
        scale = float(np.max(np.abs(w))) if w.size and np.isfinite(w).all() else 1.0
        assert_same_results([w], [g], rtol=2e-3, atol=2e-4 * max(scale, 1.0), what=name)


@pytest.mark.parametrize("name", ["diagmm.fwd", "diagmm_scatter.fwd", "diagmm.grad"])
def test_corpus_diagmm_is_no_longer_cubic(name):
    """The headline cases: no n×n×n product is left in either diagmm workload's forward
    pass, nor in the select-form gradient."""
    before = to_text(inline_calls(parse(corpus_text(name))))
    after = main_body(rewrite(before, _patterns()))
    assert "dot_general" not in after, (name, after)


@pytest.mark.parametrize("name", MODULES)
def test_corpus_fixpoint_and_fast_math_verify(name):
    """Termination: with every registered pattern (families A and B, fast-math ones too) the
    driver reaches a fixpoint (a second run changes nothing) and the module verifies."""
    from reactant.optimize.patterns import PATTERNS

    before = to_text(inline_calls(parse(corpus_text(name))))
    once = rewrite(before, list(PATTERNS), max_iterations=64)
    twice = rewrite(once, list(PATTERNS), max_iterations=64)
    assert once == twice
