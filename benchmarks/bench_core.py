"""Core runtime benchmarks against jax.jit (issue: core tracer):

(a) per-call overhead of a cached call on a tiny function;
(b) first-call time (trace + optimize + compile) of an MLP forward pass;
(c) steady-state run time of that MLP forward pass.

Run:  python benchmarks/bench_core.py
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from harness import fmt_time, measure, print_table  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import reactant  # noqa: E402


def mlp_np(params, x):
    (w1, b1), (w2, b2), (w3, b3) = params
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    logits = h @ w3 + b3
    z = logits - logits.max(axis=1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)


def mlp_jnp(params, x):
    (w1, b1), (w2, b2), (w3, b3) = params
    h = jnp.maximum(x @ w1 + b1, 0)
    h = jnp.maximum(h @ w2 + b2, 0)
    logits = h @ w3 + b3
    z = logits - logits.max(axis=1, keepdims=True)
    return jnp.exp(z) / jnp.exp(z).sum(axis=1, keepdims=True)


def mlp_params(rng, sizes=(784, 512, 512, 10)):
    return [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), np.zeros(b, np.float32))
            for a, b in zip(sizes[:-1], sizes[1:])]


def overhead():
    a_np = np.arange(4, dtype=np.float32)
    ra, rb = reactant.to_rarray(a_np), reactant.to_rarray(a_np + 1)
    ja, jb = jax.device_put(a_np), jax.device_put(a_np + 1)
    rf = reactant.compile(lambda x, y: x + y)
    jf = jax.jit(lambda x, y: x + y)
    rf(ra, rb).block_until_ready()
    jf(ja, jb).block_until_ready()
    dispatch = measure("tiny add f32[4], dispatch only",
                       {"reactant": lambda: rf(ra, rb), "jax.jit": lambda: jf(ja, jb)}, rounds=21, inner=5000)
    synced = measure("tiny add f32[4], + block_until_ready",
                     {"reactant": lambda: rf(ra, rb).block_until_ready(),
                      "jax.jit": lambda: jf(ja, jb).block_until_ready()}, rounds=21, inner=2000)
    # a dict of parameters and an input: the usual shape of a training-step call
    rng = np.random.default_rng(0)
    params = {k: rng.standard_normal(4).astype(np.float32) for k in ("W1", "b1", "W2", "b2", "W3", "b3")}
    x_np = rng.standard_normal(4).astype(np.float32)

    def layer(p, x):
        return p["W1"] * x + p["b1"] + p["W2"] * x + p["b2"] + p["W3"] * x + p["b3"]

    rp, rx = reactant.to_rarray(params), reactant.to_rarray(x_np)
    jp, jx = jax.device_put(params), jax.device_put(x_np)
    rg, jg = reactant.compile(layer), jax.jit(layer)
    np.testing.assert_allclose(np.asarray(rg(rp, rx)), np.asarray(jg(jp, jx)), rtol=1e-6)
    tree = measure("dict of 6 params + x, dispatch only",
                   {"reactant": lambda: rg(rp, rx), "jax.jit": lambda: jg(jp, jx)}, rounds=21, inner=3000)
    # Python state read by the function (a global, attributes of an object): guarded by
    # reactant (checked before every cached call), frozen at trace time by jax.jit
    state = _State()

    def stateful(x, y):
        return (x + y) * state.scale + state.shift * SHIFT

    rs, js = reactant.compile(stateful), jax.jit(stateful)
    np.testing.assert_allclose(np.asarray(rs(ra, rb)), np.asarray(js(ja, jb)))
    guarded = measure("tiny add reading 3 Python values (guarded), dispatch only",
                      {"reactant": lambda: rs(ra, rb), "jax.jit": lambda: js(ja, jb)}, rounds=21, inner=5000)
    return [dispatch, synced, tree, guarded]


SHIFT = 2.0


class _State:
    def __init__(self):
        self.scale, self.shift = 1.5, 0.25


def first_call(rounds=7):
    rng = np.random.default_rng(0)
    params = mlp_params(rng)
    x = rng.standard_normal((128, 784), dtype=np.float32)
    rp, rx = reactant.to_rarray(params), reactant.to_rarray(x)
    jp, jx = jax.device_put(params), jax.device_put(x)
    times = {"reactant": [], "jax.jit": []}
    for r in range(rounds):
        order = ["reactant", "jax.jit"] if r % 2 == 0 else ["jax.jit", "reactant"]
        for k in order:
            if k == "reactant":
                f = reactant.compile(lambda p, a: mlp_np(p, a))  # a fresh function: no cache
                t0 = time.perf_counter()
                f(rp, rx).block_until_ready()
            else:
                g = jax.jit(lambda p, a: mlp_jnp(p, a))
                t0 = time.perf_counter()
                g(jp, jx).block_until_ready()
            times[k].append(time.perf_counter() - t0)
    from harness import Result

    res = Result("MLP 784-512-512-10 b128 forward: first call", times)
    return [res]


def steady():
    rng = np.random.default_rng(1)
    params = mlp_params(rng)
    x = rng.standard_normal((128, 784), dtype=np.float32)
    rp, rx = reactant.to_rarray(params), reactant.to_rarray(x)
    jp, jx = jax.device_put(params), jax.device_put(x)
    rf = reactant.compile(mlp_np)
    jf = jax.jit(mlp_jnp)
    np.testing.assert_allclose(np.asarray(rf(rp, rx)), np.asarray(jf(jp, jx)), rtol=1e-4, atol=1e-6)
    return [measure("MLP 784-512-512-10 b128 forward: steady",
                    {"reactant": lambda: rf(rp, rx).block_until_ready(),
                     "jax.jit": lambda: jf(jp, jx).block_until_ready()}, rounds=21)]


def main():
    print(f"jax {jax.__version__}, devices: {jax.devices()[0].platform} x{len(jax.devices())}")
    rows = overhead()
    print_table(rows, base="jax.jit", title="(a) per-call overhead of a cached call")
    rows = first_call()
    print_table(rows, base="jax.jit", title="(b) first call: trace + optimize + compile + run")
    rows = steady()
    print_table(rows, base="jax.jit", title="(c) steady-state run time")
    _ = fmt_time


if __name__ == "__main__":
    main()
