"""The twelve workloads of the shared benchmark set and five model-style workloads of
our own (transformer block, convolution via einsum, LSTM cell, layer norm, softmax
cross-entropy), written twice: in plain NumPy (for reactant) and in jax.numpy (for jax.jit),
with their inputs.

Forward: ``f(*args)``. Gradient: ``value_and_grad`` of ``sum(f(*args) * ct)`` with respect
to every floating-point argument (``ct`` is a fixed random cotangent of f's result), except
``mlp_train_step``, whose gradient program is a value-and-grad of the loss plus an SGD update.
"""

from __future__ import annotations

import math
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


# -- model-style workloads (written for this project; not in the shared benchmark set) ---------------------------
def _layer_norm(xp, x, g, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / xp.sqrt(var + eps) * g + b


def layer_norm_np(x, g, b):
    return _layer_norm(np, x, g, b)


def layer_norm_jnp(x, g, b):
    return _layer_norm(jnp, x, g, b)


def _softmax_xent(xp, logits, labels):
    z = logits - logits.max(axis=-1, keepdims=True)
    logp = z - xp.log(xp.exp(z).sum(axis=-1, keepdims=True))
    return -(logp * labels).sum(axis=-1).mean()


def softmax_xent_np(logits, labels):
    return _softmax_xent(np, logits, labels)


def softmax_xent_jnp(logits, labels):
    return _softmax_xent(jnp, logits, labels)


HEADS = 4


def _transformer_block(xp, x, wq, wk, wv, wo, g1, b1, w1, w2, g2, b2):
    """Pre-norm block: causal multi-head self-attention and a GELU (tanh) MLP, both residual."""
    bsz, seq, dm = x.shape
    dh = dm // HEADS
    h = _layer_norm(xp, x, g1, b1)
    q = (h @ wq).reshape(bsz, seq, HEADS, dh).transpose(0, 2, 1, 3)
    k = (h @ wk).reshape(bsz, seq, HEADS, dh).transpose(0, 2, 1, 3)
    v = (h @ wv).reshape(bsz, seq, HEADS, dh).transpose(0, 2, 1, 3)
    # a Python float: np.sqrt's NumPy float64 would make NumPy (and so reactant) compute the
    # scores and everything after them in float64, where jax stays in float32
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
    mask = np.tril(np.ones((seq, seq), dtype=bool))
    s = xp.where(mask, s, -1e9)
    s = s - s.max(axis=-1, keepdims=True)
    p = xp.exp(s)
    p = p / p.sum(axis=-1, keepdims=True)
    a = (p @ v).transpose(0, 2, 1, 3).reshape(bsz, seq, dm)
    x = x + a @ wo
    h = _layer_norm(xp, x, g2, b2)
    u = h @ w1
    u = 0.5 * u * (1 + xp.tanh(0.7978845608 * (u + 0.044715 * u ** 3)))
    return x + u @ w2


def transformer_block_np(*a):
    return _transformer_block(np, *a)


def transformer_block_jnp(*a):
    return _transformer_block(jnp, *a)


def _transformer_inputs(rng, bsz=4, seq=128, dm=256, hidden=1024):
    def w(a, b):
        return (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)
    ones, zeros = np.ones(dm, np.float32), np.zeros(dm, np.float32)
    return (rng.standard_normal((bsz, seq, dm), dtype=np.float32), w(dm, dm), w(dm, dm), w(dm, dm), w(dm, dm),
            ones, zeros, w(dm, hidden), w(hidden, dm), ones.copy(), zeros.copy())


def _lstm_cell(xp, x, h, c, wx, wh, b):
    z = x @ wx + h @ wh + b
    n = h.shape[-1]
    i, f, g, o = z[:, :n], z[:, n:2 * n], z[:, 2 * n:3 * n], z[:, 3 * n:]

    def sig(t):
        return 1 / (1 + xp.exp(-t))
    c2 = sig(f) * c + sig(i) * xp.tanh(g)
    return sig(o) * xp.tanh(c2) + c2


def lstm_cell_np(*a):
    return _lstm_cell(np, *a)


def lstm_cell_jnp(*a):
    return _lstm_cell(jnp, *a)


def _lstm_inputs(rng, bsz=64, nin=256, n=512):
    return (rng.standard_normal((bsz, nin), dtype=np.float32), rng.standard_normal((bsz, n), dtype=np.float32),
            rng.standard_normal((bsz, n), dtype=np.float32),
            (rng.standard_normal((nin, 4 * n)) / np.sqrt(nin)).astype(np.float32),
            (rng.standard_normal((n, 4 * n)) / np.sqrt(n)).astype(np.float32), np.zeros(4 * n, np.float32))


def _conv_einsum(xp, x, w, b):
    """3x3 'same' convolution (NHWC, HWIO) as an einsum over the nine shifted views, then ReLU."""
    hh, ww = x.shape[1], x.shape[2]
    xpad = xp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    patches = xp.stack([xpad[:, i:i + hh, j:j + ww, :] for i in range(3) for j in range(3)], axis=3)
    y = xp.einsum("bhwkc,kco->bhwo", patches, w.reshape(9, w.shape[2], w.shape[3])) + b
    return xp.maximum(y, 0)


def conv_einsum_np(*a):
    return _conv_einsum(np, *a)


def conv_einsum_jnp(*a):
    return _conv_einsum(jnp, *a)


def _conv_inputs(rng, bsz=8, hw=32, cin=16, cout=32):
    return (rng.standard_normal((bsz, hw, hw, cin), dtype=np.float32),
            (rng.standard_normal((3, 3, cin, cout)) / np.sqrt(9 * cin)).astype(np.float32),
            np.zeros(cout, np.float32))


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
    # five model-style workloads of our own (not in the shared benchmark set). The JAX-lowered modules of
    # every workload here are benchmarks/corpus/, written by benchmarks/make_corpus.py
    Workload("transformer_block", transformer_block_np, transformer_block_jnp, _transformer_inputs,
             tuple(range(11))),
    Workload("conv_einsum", conv_einsum_np, conv_einsum_jnp, _conv_inputs, (0, 1, 2)),
    Workload("lstm_cell", lstm_cell_np, lstm_cell_jnp, _lstm_inputs, (0, 1, 2, 3, 4, 5)),
    Workload("layer_norm", layer_norm_np, layer_norm_jnp,
             lambda r: (r.standard_normal((256, 1024), dtype=np.float32), r.standard_normal(1024, dtype=np.float32),
                        r.standard_normal(1024, dtype=np.float32)), (0, 1, 2)),
    Workload("softmax_xent", softmax_xent_np, softmax_xent_jnp,
             lambda r: (r.standard_normal((512, 1000), dtype=np.float32),
                        np.eye(1000, dtype=np.float32)[r.integers(0, 1000, 512)]), (0,)),
]

OWN = ("transformer_block", "conv_einsum", "lstm_cell", "layer_norm", "softmax_xent")
SHARED = tuple(w.name for w in WORKLOADS if w.name not in OWN)  # the twelve shared benchmark workloads

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
