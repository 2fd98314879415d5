"""Property-based: random small programs (elementwise math, data movement, reductions, a loop
or a branch) differentiated by the pass in both modes agree with JAX and finite differences."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from adtest_util import check_function, jnp
from jax import lax
import pytest

pytestmark = pytest.mark.slow  # a hypothesis search: the long-form tier (REACTANT_SLOW=1)

UNARY = [jnp.sin, jnp.tanh, lambda x: jnp.exp(0.3 * x), lambda x: x * x, lambda x: jnp.log1p(x * x),
         lambda x: jnp.sqrt(x * x + 1.0), jnp.flip, lambda x: jnp.roll(x, 1), lambda x: jnp.cumsum(x) * 0.3,
         lambda x: jnp.sort(x), lambda x: x - jnp.max(x)]
BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.maximum, lambda a, b: a * jnp.sum(b) * 0.2,
          lambda a, b: jnp.concatenate([a[:3], b[3:]]), lambda a, b: a / (1.0 + b * b)]


def make_program(steps, control):
    def f(x, y):
        vals = [x, y]
        for kind, i, j in steps:
            a, b = vals[i % len(vals)], vals[j % len(vals)]
            vals.append(UNARY[kind % len(UNARY)](a) if kind < 100 else BINARY[kind % len(BINARY)](a, b))
        out = vals[-1]
        if control == 1:
            out = lax.fori_loop(0, 3, lambda k, c: jnp.tanh(c * vals[0] + 0.1 * k), out)
        elif control == 2:
            out = lax.cond(jnp.sum(vals[1]) > 0, lambda: jnp.sin(out) * vals[0], lambda: out * out)
        return jnp.sum(out * vals[-2])

    return f


step = st.tuples(st.one_of(st.integers(0, len(UNARY) - 1), st.integers(100, 100 + len(BINARY) - 1)),
                 st.integers(0, 20), st.integers(0, 20))


@settings(max_examples=12, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=6), control=st.integers(0, 2), seed=st.integers(0, 1000))
def test_random_programs(steps, control, seed):
    r = np.random.default_rng(seed)
    x, y = r.standard_normal(6), r.standard_normal(6)
    check_function(make_program(steps, control), [x, y], rtol=1e-8, atol=1e-10, fd_rtol=1e-4, fd_atol=1e-6)
