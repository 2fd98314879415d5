"""The two-layer MLP of the four-process training test (a helper module, not a test): its
data, loss and SGD step, shared by the workers (mp4_worker.py) and the test's single-process
references (test_four_processes.py)."""

import numpy as np

import reactant

STEPS, LR = 3, 0.2
B, D_IN, HIDDEN, D_OUT = 16, 6, 8, 3
# the batch over "data" (2), the hidden dimension over "model" (4): w1's columns, b1, w2's rows
MESH_SHAPE, AXES = (2, 4), ("data", "model")
PARAM_SPECS = ((None, "model"), ("model",), ("model", None), (None,))
BATCH_SPEC = ("data", None)


def data() -> tuple:
    """(w1, b1, w2, b2), x, y: the same on every process and in the test."""
    rng = np.random.default_rng(7)
    params = (rng.standard_normal((D_IN, HIDDEN)) / np.sqrt(D_IN), 0.1 * rng.standard_normal(HIDDEN),
              rng.standard_normal((HIDDEN, D_OUT)) / np.sqrt(HIDDEN), 0.1 * rng.standard_normal(D_OUT))
    return params, rng.standard_normal((B, D_IN)), rng.standard_normal((B, D_OUT))


def loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2 + b2 - y) ** 2)


def step(w1, b1, w2, b2, x, y):
    """One SGD step, the parameters updated in place; returns the loss before the step and
    the gradients."""
    value, grads = reactant.value_and_gradient(loss, w1, b1, w2, b2, x, y, argnums=(0, 1, 2, 3))
    for p, g in zip((w1, b1, w2, b2), grads):
        p -= LR * g
    return value, grads
