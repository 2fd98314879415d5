"""The twelve benchmark workloads of ../shared/bench/README.md, written twice: in plain NumPy
(for reactant) and in jax.numpy (for jax.jit), with their inputs.

Forward: ``f(*args)``. Gradient: ``value_and_grad`` of ``sum(f(*args) * ct)`` with respect
to every floating-point argument (``ct`` is a fixed random cotangent of f's result), except
``mlp_train_step``, whose gradient program is a value-and-grad of the loss plus an SGD update.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np


@dataclass
class Workload:
    name: str
    np_fn: Callable
    jnp_fn: Callable
    make: Callable[[np.random.Generator], tuple]  # -> args (float32 unless integer data)
    diff: tuple[int, ...]  # arguments differentiated in the gradient program
    loops: str = "unroll"  # reactant.compile(loops=...) for the NumPy version
    np_grad: Callable | None = None  # custom gradient programs (mlp)
    jnp_grad: Callable | None = None
    notes: str = ""
    sizes: dict = field(default_factory=dict)


# -- diagonal matmul -------------------------------------------------------------------------------
def diagmm_np(v, a, x):
    return ((np.diag(v) @ a + x.T) ** 2).sum()


def diagmm_jnp(v, a, x):
    return ((jnp.diag(v) @ a + x.T) ** 2).sum()


def diagmm_scatter_np(v, a, x):
    n = v.shape[0]
    d = np.zeros_like(a)  # *_like so that the traced v can be written into it
    i = np.arange(n)
    d[i, i] = v
    return ((d @ a + x.T) ** 2).sum()


def diagmm_scatter_jnp(v, a, x):
    n = v.shape[0]
    i = jnp.arange(n)
    d = jnp.zeros((n, n), v.dtype).at[i, i].set(v)
    return ((d @ a + x.T) ** 2).sum()


def _diagmm_inputs(rng, n=1024):
    return (rng.standard_normal(n, dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32),
            rng.standard_normal((n, n), dtype=np.float32))


# -- normalization -----------------------------------------------------------------------------------
def normalize_vec_np(x):
    return x / np.sqrt(np.sum(x * x))


def normalize_vec_jnp(x):
    return x / jnp.sqrt(jnp.sum(x * x))


def normalize_vmap_np(x):
    # vmap(i -> x[i] / norm(x)): every element gathered and divided by the norm
    idx = np.arange(x.shape[0])
    return np.take(x, idx) / np.linalg.norm(x)


def normalize_vmap_jnp(x):
    return jax.vmap(lambda i: x[i] / jnp.linalg.norm(x))(jnp.arange(x.shape[0]))


def normalize_loop_np(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):  # the norm is recomputed in every iteration
        out[i] = x[i] / np.sqrt(np.sum(x * x))
    return out


def normalize_loop_jnp(x):
    def body(i, out):
        return out.at[i].set(x[i] / jnp.sqrt(jnp.sum(x * x)))

    return jax.lax.fori_loop(0, x.shape[0], body, jnp.zeros_like(x))


# -- transposes and matmuls --------------------------------------------------------------------------
def transpose_matmul_np(a, b, c):
    return (a @ b).T @ c


def transpose_matmul_jnp(a, b, c):
    return (a @ b).T @ c


def transpose_chain_np(a, b, c):
    return ((a.T @ b.T).T @ c.T).T + (c.T @ (b @ a).T).T + (a.T @ b).T.T


def transpose_chain_jnp(a, b, c):
    return ((a.T @ b.T).T @ c.T).T + (c.T @ (b @ a).T).T + (a.T @ b).T.T


def slice_of_dot_np(x, y, z):
    return (np.dot(x, y) * z + 4)[0:10]


def slice_of_dot_jnp(x, y, z):
    return (jnp.dot(x, y) * z + 4)[0:10]


# -- stencils ----------------------------------------------------------------------------------------
def _d2(x):
    return x[:-2] - 2 * x[1:-1] + x[2:]


def stencil1d_twice_np(x):
    return _d2(_d2(x))


def stencil1d_twice_jnp(x):
    return _d2(_d2(x))


def _lap(x):
    return x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] - 4 * x[1:-1, 1:-1]


def stencil2d_twice_np(x):
    return _lap(_lap(x))


def stencil2d_twice_jnp(x):
    return _lap(_lap(x))


# -- MLP training step ---------------------------------------------------------------------------------
def _mlp_loss(xp, p, x, y):
    """Softmax cross-entropy of a 3-layer ReLU MLP; ``xp`` is numpy or jax.numpy."""
    h = xp.maximum(x @ p["W1"] + p["b1"], 0)
    h = xp.maximum(h @ p["W2"] + p["b2"], 0)
    logits = h @ p["W3"] + p["b3"]
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - xp.log(xp.exp(z).sum(axis=1, keepdims=True))
    return -(logp * y).sum() / x.shape[0]


def mlp_train_step_np(p, x, y):
    return _mlp_loss(np, p, x, y)


def mlp_train_step_jnp(p, x, y):
    return _mlp_loss(jnp, p, x, y)


LR = 0.01


def mlp_grad_np(p, x, y):
    import reactant

    loss, g = reactant.value_and_gradient(mlp_train_step_np, p, x, y)
    return loss, {k: p[k] - LR * g[k] for k in p}


def mlp_grad_jnp(p, x, y):
    loss, g = jax.value_and_grad(mlp_train_step_jnp)(p, x, y)
    return loss, {k: p[k] - LR * g[k] for k in p}


def _mlp_inputs(rng):
    sizes = (784, 512, 512, 10)
    p = {}
    for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]), 1):
        p[f"W{k}"] = (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)
        p[f"b{k}"] = np.zeros(b, np.float32)
    x = rng.standard_normal((128, 784), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    return p, x, y


# -- segment sum -----------------------------------------------------------------------------------
NBINS = 10_000


def scatter_sum_np(x, w, ids):
    out = np.zeros_like(x, shape=(NBINS,))
    np.add.at(out, ids, x * w)
    return out


def scatter_sum_jnp(x, w, ids):
    return jax.ops.segment_sum(x * w, ids, NBINS)


def _scatter_inputs(rng, n=1_000_000):
    return (rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32),
            rng.integers(0, NBINS, n).astype(np.int32))


WORKLOADS = [
    Workload("diagmm", diagmm_np, diagmm_jnp, _diagmm_inputs, (0, 1, 2)),
    Workload("diagmm_scatter", diagmm_scatter_np, diagmm_scatter_jnp, _diagmm_inputs, (0, 1, 2)),
    Workload("normalize_vec", normalize_vec_np, normalize_vec_jnp,
             lambda r: (r.standard_normal(1_000_000, dtype=np.float32),), (0,)),
    Workload("normalize_vmap", normalize_vmap_np, normalize_vmap_jnp,
             lambda r: (r.standard_normal(1_000_000, dtype=np.float32),), (0,)),
    Workload("normalize_loop", normalize_loop_np, normalize_loop_jnp,
             lambda r: (r.standard_normal(10_000, dtype=np.float32),), (0,), loops="keep"),
    Workload("transpose_matmul", transpose_matmul_np, transpose_matmul_jnp,
             lambda r: tuple(r.standard_normal((512, 512), dtype=np.float32) for _ in range(3)), (0, 1, 2)),
    Workload("transpose_chain", transpose_chain_np, transpose_chain_jnp,
             lambda r: tuple(r.standard_normal((512, 512), dtype=np.float32) for _ in range(3)), (0, 1, 2)),
    Workload("slice_of_dot", slice_of_dot_np, slice_of_dot_jnp,
             lambda r: tuple(r.standard_normal(100_000, dtype=np.float32) for _ in range(3)), (0, 1, 2)),
    Workload("stencil1d_twice", stencil1d_twice_np, stencil1d_twice_jnp,
             lambda r: (r.standard_normal((2048, 2048), dtype=np.float32),), (0,)),
    Workload("stencil2d_twice", stencil2d_twice_np, stencil2d_twice_jnp,
             lambda r: (r.standard_normal((2048, 2048), dtype=np.float32),), (0,)),
    Workload("mlp_train_step", mlp_train_step_np, mlp_train_step_jnp, _mlp_inputs, (0,),
             np_grad=mlp_grad_np, jnp_grad=mlp_grad_jnp),
    Workload("scatter_sum", scatter_sum_np, scatter_sum_jnp, _scatter_inputs, (0, 1)),
]

BY_NAME = {w.name: w for w in WORKLOADS}


def grad_programs(w: Workload, ct_shape: tuple, ct_dtype):
    """(numpy_version, jax_version) of the gradient program; both take (*args, ct)."""
    import reactant

    if w.np_grad is not None:
        return w.np_grad, w.jnp_grad
    argnums = w.diff

    def np_loss(*a):
        *args, ct = a
        return (w.np_fn(*args) * ct).sum()

    def jnp_loss(*a):
        *args, ct = a
        return (w.jnp_fn(*args) * ct).sum()

    def np_grad(*a):
        return reactant.value_and_gradient(np_loss, *a, argnums=argnums)

    def jnp_grad(*a):
        return jax.value_and_grad(jnp_loss, argnums=argnums)(*a)

    return np_grad, jnp_grad
