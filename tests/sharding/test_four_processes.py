"""Four processes of two simulated CPU devices each run one data-parallel + tensor-parallel
training step over a mesh of all 8 devices (``mlp_model.step``: a 2-layer MLP, the batch
split over "data" (2), the hidden dimension over "model" (4), gradients by reverse mode, an
SGD update of the parameters in place), three times. Its losses, gradients and updated
parameters equal the same program run in one process without sharding, jax.grad, and central
finite differences."""

import os

import jax
import mlp_model as m
import numpy as np
import pytest
from mp_procs import run_group, wait_gone

import reactant

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mp4_worker.py")
RTOL, ATOL = 1e-10, 1e-12


@pytest.fixture(scope="module")
def runs():
    ended = run_group(WORKER, "mlp", 4, 180)
    for i, e in enumerate(ended):
        assert e.returncode == 0 and e.result is not None, f"process {i}:\n{e.output}"
    return [e.result for e in ended]


@pytest.fixture(scope="module")
def single_process():
    """The same step, compiled in this process on one device, no sharding."""
    params, x, y = m.data()
    params = [reactant.to_rarray(p) for p in params]
    rx, ry = reactant.to_rarray(x), reactant.to_rarray(y)
    step = reactant.compile(m.step)
    losses, grads = [], []
    for _ in range(m.STEPS):
        loss, g = step(*params, rx, ry)
        losses.append(float(loss))
        grads.append([np.asarray(v) for v in g])
    return losses, grads, [np.asarray(p) for p in params]


def jax_reference():
    """Losses, gradients (jax.grad) and parameters of the same SGD steps, in float64."""
    with jax.enable_x64(True):
        import jax.numpy as jnp

        def loss(params, x, y):
            w1, b1, w2, b2 = params
            return jnp.mean((jnp.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)

        params, x, y = m.data()
        params = tuple(jnp.asarray(p) for p in params)
        losses, grads = [], []
        for _ in range(m.STEPS):
            value, g = jax.value_and_grad(loss)(params, x, y)
            losses.append(float(value))
            grads.append([np.asarray(v) for v in g])
            params = tuple(p - m.LR * d for p, d in zip(params, g))
        return losses, grads, [np.asarray(p) for p in params]


def test_four_processes_form_one_mesh_of_eight_devices(runs):
    for pid, r in enumerate(runs):
        assert (r["process_count"], r["global_devices"]) == (4, 8)
        # mesh (2, 4) over devices in process order: process p holds data row p // 2 and the
        # two "model" columns of its own devices; w1 stays split over "model"
        assert r["w1_spec"] == "(None, 'model')"
        k = (pid % 2) * 2
        assert r["w1_local_columns"] == [[2 * k, 2 * k + 2], [2 * k + 2, 2 * k + 4]]
        assert r["x_local_rows"] == [[8 * (pid // 2), 8 * (pid // 2) + 8]]
        assert r["loss_replicated"]
    # the coordination service's process (process 0's child) ended with the run
    assert wait_gone(runs[0]["coordinator_pid"], 60)


def _assert_runs_equal(runs, losses, grads, params) -> None:
    """Every process's losses, gradients and updated parameters equal the reference's."""
    for r in runs:
        np.testing.assert_allclose(r["losses"], losses, rtol=RTOL, atol=ATOL)
        for got, want in zip(r["grads"], grads):
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)
        for p, w in zip(r["params"], params):
            np.testing.assert_allclose(p, w, rtol=RTOL, atol=ATOL)


def test_training_steps_equal_one_process_without_sharding(runs, single_process):
    _assert_runs_equal(runs, *single_process)
    # and every process got the very same numbers
    assert all(r["losses"] == runs[0]["losses"] and r["params"] == runs[0]["params"] for r in runs)


def test_gradients_and_updates_equal_jax_grad(runs):
    losses, grads, params = jax_reference()
    assert losses[-1] < losses[0]  # (the steps do train)
    _assert_runs_equal(runs, losses, grads, params)


def test_first_gradient_equals_central_finite_differences(runs):
    params, x, y = m.data()
    eps = 1e-6
    for k, p in enumerate(params):
        fd = np.zeros_like(p)
        for i in np.ndindex(p.shape):
            hi, lo = [q.copy() for q in params], [q.copy() for q in params]
            hi[k][i] += eps
            lo[k][i] -= eps
            fd[i] = (m.loss(*hi, x, y) - m.loss(*lo, x, y)) / (2 * eps)
        np.testing.assert_allclose(runs[0]["grads"][0][k], fd, rtol=1e-6, atol=1e-9)
