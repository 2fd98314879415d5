"""Multi-process runs: two processes of 4 simulated CPU devices each join through
``reactant.distributed.initialize`` (a coordinator on 127.0.0.1, gloo collectives) and run
SPMD programs over one mesh of all 8 devices. Each process is a subprocess running
``mp_worker.py``; its results come back as one JSON line and are compared with NumPy."""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import reactant

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mp_worker.py")
TIMEOUT = 120  # seconds for a whole group of processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_processes(scenario: str, n: int) -> list[dict]:
    """Start ``n`` worker processes of ``scenario``; their results, or a failure carrying their
    stderr (all are killed on timeout)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if k != "XLA_FLAGS" and not k.startswith(("REACTANT_COORDINATOR", "REACTANT_NUM_PROC",
                                                     "REACTANT_PROCESS_ID", "JAX_COORDINATOR"))}
    env["REACTANT_EQSAT_CALIBRATE"] = "0"  # the default cost constants: no calibration run
    procs = [subprocess.Popen([sys.executable, WORKER, scenario, str(port), str(i)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(n)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=TIMEOUT))
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        errs = [p.communicate()[1] for p in procs]
        pytest.fail(f"{scenario}: processes did not finish within {TIMEOUT} s\n"
                    + "\n".join(f"--- process {i} stderr:\n{e[-3000:]}" for i, e in enumerate(errs)))
    results = []
    for i, (p, (out, err)) in enumerate(zip(procs, outs)):
        lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
        if p.returncode != 0 or not lines:
            pytest.fail(f"{scenario}: process {i} exited with {p.returncode}\n--- stderr:\n{err[-3000:]}")
        results.append(json.loads(lines[-1][len("RESULT "):]))
    return results


@pytest.fixture(scope="module")
def spmd():
    return run_processes("spmd", 2)


def test_two_processes_form_one_mesh(spmd):
    for pid, r in enumerate(spmd):
        assert (r["process_index"], r["process_count"]) == (pid, 2)
        assert (r["global_devices"], r["local_devices"]) == (8, 4)
        # rows 0-7 live on process 0's devices, 8-15 on process 1's: only those are placed
        assert r["local_shards"] == [[8 * pid + 2 * k, 8 * pid + 2 * k + 2] for k in range(4)]
        assert r["local_shards_match"]
    # the optimizer must make the same program everywhere: process 0's cost constants win
    from reactant.optimize.eqsat.cost import DEFAULTS

    assert spmd[0]["cost_constants"] == spmd[1]["cost_constants"] == DEFAULTS


def inputs():
    """The worker's arrays (the same generator, drawn in the same order)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 3))
    w = rng.standard_normal((5, 3))
    xb, yb = rng.standard_normal((32, 5)), rng.standard_normal((32, 3))
    return a, w, xb, yb


def test_sharded_reduction_and_elementwise_results(spmd):
    a = inputs()[0]
    for r in spmd:
        np.testing.assert_allclose(r["colsum"], a.sum(axis=0), rtol=1e-12)
        assert r["colsum_replicated"]
        assert r["y_sharding"] == "('x',)"
        np.testing.assert_allclose(r["y_gathered"], np.sin(a) * 2, rtol=1e-12)
        assert r["eager_sharding"] == "('x',)"
        np.testing.assert_allclose(r["eager_gathered"], np.exp(a) + 1, rtol=1e-12)
        np.testing.assert_allclose(r["resharded_replicated"], a)
        np.testing.assert_allclose(r["total"], a.sum(), rtol=1e-12)
    assert spmd[0]["colsum"] == spmd[1]["colsum"] and spmd[0]["total"] == spmd[1]["total"]


def test_data_parallel_gradient_steps_equal_numpy(spmd):
    _, w, xb, yb = inputs()
    losses = []
    for _ in range(3):
        t = np.tanh(xb @ w)
        w = w - 0.1 * (2.0 / t.size) * xb.T @ ((t - yb) * (1 - t ** 2))
        losses.append(np.mean((np.tanh(xb @ w) - yb) ** 2))
    for r in spmd:
        np.testing.assert_allclose(r["losses"], losses, rtol=1e-10)
        np.testing.assert_allclose(r["w"], w, rtol=1e-10)
    assert spmd[0]["losses"] == spmd[1]["losses"] and spmd[0]["w"] == spmd[1]["w"]


def test_reading_an_array_split_over_processes_is_a_clear_error(spmd):
    for r in spmd:
        assert "sharded over devices of several processes" in r["asarray"]
        assert "addressable_shards" in r["asarray"] and "replicate it first" in r["asarray"]


@pytest.mark.slow  # (waits out an unreachable coordinator's timeout)
def test_failed_starts_leave_nothing_behind_and_a_second_start_is_an_error():
    (r,) = run_processes("errors", 1)
    assert "needs coordinator_address, num_processes, process_id" in r["missing"]
    assert "REACTANT_COORDINATOR_ADDRESS" in r["missing"]
    assert "process_id must be an integer in 0..1, got 2" in r["bad_id"]
    assert "could not be reached within the initialization timeout" in r["unreachable"]
    assert "process 0, which serves it, did not join" in r["unreachable"]
    assert r["unreachable_is_distributed_error"]
    assert "timeout must be a positive number of seconds, got -1" in r["bad_timeout"]
    assert "REACTANT_DISTRIBUTED_TIMEOUT must be a number of seconds, got 'soon'" in r["bad_env_timeout"]
    assert not r["initialized_after_failures"]
    assert r["from_env"] == "no error" and r["process_count"] == 1
    assert "already called" in r["twice"]
    assert r["works"] == 6.0


def test_initialize_after_devices_were_used_is_an_error():
    reactant.to_rarray(np.ones(2))  # this process has created its devices
    with pytest.raises(reactant.ShardingError, match="must come before any device is used"):
        reactant.distributed.initialize("127.0.0.1:1", 1, 0)
    assert not reactant.distributed.is_initialized()
