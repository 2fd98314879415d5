"""One process of the four-process tests (run by test_process_failure.py and
test_four_processes.py, never collected by pytest): ``python mp4_worker.py SCENARIO PORT
PROCESS_ID``. Four processes of two simulated CPU devices each. It prints one JSON line of
results prefixed with ``RESULT``; the parent checks them. ``MP4_VICTIM`` names the process
that dies in the failure scenarios (default 3)."""

import json
import os
import signal
import sys
import time

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"  # before jax loads

import numpy as np  # noqa: E402

import reactant  # noqa: E402
from reactant.sharding import NamedSharding, Replicated, make_mesh  # noqa: E402

N = 4
FAIL_TIMEOUT = 4.0  # seconds: short, so the failure tests end soon
VICTIM = int(os.environ.get("MP4_VICTIM", "3"))  # the process that dies


def error_text(e: BaseException) -> dict:
    return {"type": type(e).__name__, "message": str(e),
            "is_distributed_error": isinstance(e, reactant.distributed.DistributedError)}


def never_joins(port: int, pid: int) -> dict:
    """Process 3 dies before it joins: the others' initialize raises."""
    if pid == VICTIM:
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        reactant.distributed.initialize(f"127.0.0.1:{port}", N, pid, timeout=FAIL_TIMEOUT)
    except Exception as e:  # noqa: BLE001
        return {"error": error_text(e), "initialized": reactant.distributed.is_initialized()}
    return {"error": None}


def dies_in_collective(port: int, pid: int) -> dict:
    """All four join and run a program with an all-reduce; then process 3 dies while the
    others wait for it in the next call of that program."""
    os.environ["REACTANT_DISTRIBUTED_TIMEOUT"] = str(FAIL_TIMEOUT)  # (the variable, this time)
    # (joining gets longer: four processes start slowly on a busy machine)
    reactant.distributed.initialize(f"127.0.0.1:{port}", N, pid, initialization_timeout=60)
    mesh = make_mesh((2 * N,), ("x",))
    x = reactant.to_rarray(np.arange(16.0), sharding=NamedSharding(mesh, ("x",)))
    total = reactant.compile(lambda x: x.sum())
    out: dict = {"first": float(total(x))}
    if pid == VICTIM:
        if pid == 0:  # the coordination service's own process must end too, later: say which
            from reactant import _jax_adapter

            print(f"COORDINATOR {_jax_adapter._COORDINATOR[0].pid}", flush=True)
        time.sleep(1.0)  # the others are in the collective by now
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        out["second"] = float(total(x))
    except Exception as e:  # noqa: BLE001
        out["error"] = error_text(e)
    try:  # the run is over: later calls fail at once
        total(x)
        out["after"] = "no error"
    except Exception as e:  # noqa: BLE001
        out["after"] = error_text(e)
    return out


def ends_early(port: int, pid: int) -> dict:
    """Process 3's script ends (normally) while the others wait for it in a collective."""
    reactant.distributed.initialize(f"127.0.0.1:{port}", N, pid, timeout=FAIL_TIMEOUT, initialization_timeout=60)
    mesh = make_mesh((2 * N,), ("x",))
    x = reactant.to_rarray(np.arange(16.0), sharding=NamedSharding(mesh, ("x",)))
    total = reactant.compile(lambda x: x.sum())
    out: dict = {"first": float(total(x))}
    if pid != VICTIM:
        try:
            out["second"] = float(total(x))
        except Exception as e:  # noqa: BLE001
            out["error"] = error_text(e)
    return out


# -- a data-parallel + tensor-parallel training step (test_four_processes.py) ------------------
def mlp(port: int, pid: int) -> dict:
    """``mlp_model.step`` over one mesh of all 8 devices (2 per process): the batch split over
    "data", the hidden dimension over "model"."""
    import mlp_model as m

    reactant.distributed.initialize(f"127.0.0.1:{port}", N, pid, timeout=60)
    mesh = make_mesh(m.MESH_SHAPE, m.AXES)
    params, x, y = m.data()
    params = [reactant.to_rarray(v, sharding=NamedSharding(mesh, s)) for v, s in zip(params, m.PARAM_SPECS)]
    rx, ry = (reactant.to_rarray(v, sharding=NamedSharding(mesh, m.BATCH_SPEC)) for v in (x, y))
    step = reactant.compile(m.step)
    out: dict = {"process_count": reactant.distributed.process_count(),
                 "global_devices": len(reactant.distributed.global_devices()), "losses": [], "grads": []}
    for _ in range(m.STEPS):
        loss, grads = step(*params, rx, ry)
        out["losses"].append(float(loss))
        out["grads"].append([reactant.distributed.gather(g).tolist() for g in grads])
    out["params"] = [reactant.distributed.gather(p).tolist() for p in params]
    # the parameters stay split over "model", over the devices of all processes: this process
    # holds w1's columns of its own devices only
    out["w1_spec"] = repr(params[0].sharding.spec)
    out["w1_local_columns"] = sorted({(s.index[1].start, s.index[1].stop) for s in params[0].addressable_shards})
    out["x_local_rows"] = sorted({(s.index[0].start, s.index[0].stop) for s in rx.addressable_shards})
    out["loss_replicated"] = loss.sharding == Replicated(mesh)
    if pid == 0:  # the coordination service's process: it must end with the run
        from reactant import _jax_adapter

        out["coordinator_pid"] = _jax_adapter._COORDINATOR[0].pid
    return out


def main() -> None:
    scenario, port, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    result = {"never_joins": never_joins, "dies_in_collective": dies_in_collective,
              "ends_early": ends_early, "mlp": mlp}[scenario](port, pid)
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
