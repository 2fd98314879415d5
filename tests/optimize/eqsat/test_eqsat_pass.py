"""Where equality saturation runs in a compile: after AD expansion only at a named level (it
prices the primal alone before), as given in an explicit pass list."""

from __future__ import annotations

import numpy as np

import reactant
from reactant.optimize import compile_pipeline


def test_named_levels_saturate_after_autodiff_only():
    for level, name in (("O2", "eqsat"), ("O3", "eqsat_o3")):
        names = compile_pipeline(level, has_autodiff=True)
        ad = names.index("autodiff")
        assert name not in names[:ad] and name in names[ad:]
        assert "patterns" in names[:ad]  # the greedy rewrites still run on the primal
        # without AD markers the level runs once, saturation included
        assert name in compile_pipeline(level, has_autodiff=False)


def test_explicit_pass_list_runs_on_both_sides():
    names = compile_pipeline(["inline", "eqsat"], has_autodiff=True)
    assert names == ["inline", "eqsat", "autodiff", "inline", "eqsat"]


def test_gradient_of_a_normalization_matches_jax():
    import jax
    import jax.numpy as jnp

    def f(x, ct):
        return np.sum(x / np.sqrt(np.sum(x * x)) * ct)

    def fj(x, ct):
        return jnp.sum(x / jnp.sqrt(jnp.sum(x * x)) * ct)

    rng = np.random.default_rng(0)
    x, ct = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    g = reactant.compile(lambda x, ct: reactant.gradient(f, x, ct), optimize="O2")
    got = np.asarray(g(reactant.to_rarray(x), reactant.to_rarray(ct)))
    want = np.asarray(jax.grad(fj)(jnp.asarray(x), jnp.asarray(ct)))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
