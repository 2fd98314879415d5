"""One process of the two-process tests (run by test_multiprocess.py, never collected by
pytest): ``python mp_worker.py SCENARIO PORT PROCESS_ID``. It prints one JSON line of results
prefixed with ``RESULT``; the parent compares the processes' lines with NumPy."""

import json
import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"  # before jax loads

import numpy as np  # noqa: E402

import reactant  # noqa: E402
from reactant.sharding import NamedSharding, Replicated, make_mesh  # noqa: E402

R = np.random.default_rng(0)  # the same global arrays on every process


def spmd(port: int, pid: int) -> dict:
    from reactant.optimize.eqsat import cost

    if pid == 1:  # as if calibrated differently: initialize must replace this by process 0's
        cost.set_constants({"flop": 1, "kernel": 1})
    reactant.distributed.initialize(f"127.0.0.1:{port}", 2, pid, initialization_timeout=60)
    out: dict = {"cost_constants": cost.constants(),
                 "process_index": reactant.distributed.process_index(),
                 "process_count": reactant.distributed.process_count(),
                 "global_devices": len(reactant.distributed.global_devices()),
                 "local_devices": len(reactant.distributed.local_devices())}
    mesh = make_mesh((8,), ("x",))
    rows = NamedSharding(mesh, ("x",))

    # a sharded reduction: the column sums of a row-sharded array
    a = R.standard_normal((16, 3))
    x = reactant.to_rarray(a, sharding=rows)
    shards = x.addressable_shards
    out["local_shards"] = sorted([s.index[0].start, s.index[0].stop] for s in shards)
    out["local_shards_match"] = all(np.array_equal(s.data, a[s.index]) for s in shards)
    try:
        np.asarray(x)
        out["asarray"] = "no error"
    except reactant.ShardingError as e:
        out["asarray"] = str(e)
    colsum = reactant.compile(lambda x: x.sum(axis=0))(x)
    out["colsum"] = np.asarray(colsum).tolist()  # replicated: readable on every process
    out["colsum_replicated"] = colsum.sharding == Replicated(mesh)
    y = reactant.compile(lambda x: np.sin(x) * 2)(x)  # stays row-sharded
    out["y_sharding"] = repr(y.sharding.spec)
    out["y_gathered"] = reactant.distributed.gather(y).tolist()
    e = np.exp(x) + 1  # eager operations run SPMD too
    out["eager_sharding"] = repr(e.sharding.spec)
    out["eager_gathered"] = reactant.distributed.gather(e).tolist()
    cols = reactant.to_rarray(x, sharding=NamedSharding(make_mesh((2, 4), ("a", "b")), (None, None)))
    out["resharded_replicated"] = np.asarray(cols).tolist()
    f = reactant.compile(lambda x: x.sum())
    for _ in range(100):  # queued collective programs: synced periodically, no deadlock
        total = f(x)
    out["total"] = float(total)

    # a data-parallel gradient step: batch sharded on "data", parameters replicated
    w = R.standard_normal((5, 3))
    xb, yb = R.standard_normal((32, 5)), R.standard_normal((32, 3))

    def loss(w, x, y):
        return np.mean((np.tanh(x @ w) - y) ** 2)

    @reactant.compile
    def step(w, x, y):
        w -= 0.1 * reactant.gradient(loss, w, x, y)
        return loss(w, x, y)

    dmesh = make_mesh((8,), ("data",))
    rw = reactant.to_rarray(w, sharding=Replicated(dmesh))
    rx, ry = (reactant.to_rarray(v, sharding=NamedSharding(dmesh, ("data",))) for v in (xb, yb))
    losses = [float(step(rw, rx, ry)) for _ in range(3)]
    out["losses"] = losses
    out["w"] = np.asarray(rw).tolist()
    return out


def errors(port: int, pid: int) -> dict:
    """Failed starts leave nothing behind: after them, a start from the environment works once."""

    out: dict = {}

    def message(**kwargs) -> str:
        try:
            reactant.distributed.initialize(**kwargs)
        except reactant.ShardingError as e:
            return str(e)
        return "no error"

    out["missing"] = message()
    out["bad_id"] = message(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=2)
    # nobody serves this port: process 1 cannot reach a coordinator
    out["unreachable"] = message(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=1,
                                 initialization_timeout=2)
    try:
        reactant.distributed.initialize(f"127.0.0.1:{port}", 2, 1, timeout=1)
    except reactant.distributed.DistributedError:
        out["unreachable_is_distributed_error"] = True
    out["bad_timeout"] = message(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=1,
                                 timeout=-1)
    os.environ["REACTANT_DISTRIBUTED_TIMEOUT"] = "soon"
    out["bad_env_timeout"] = message(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=1)
    del os.environ["REACTANT_DISTRIBUTED_TIMEOUT"]
    out["initialized_after_failures"] = reactant.distributed.is_initialized()
    os.environ.update({"REACTANT_COORDINATOR_ADDRESS": f"127.0.0.1:{port}", "REACTANT_NUM_PROCESSES": "1",
                       "REACTANT_PROCESS_ID": "0"})
    out["from_env"] = message()
    out["twice"] = message()
    out["process_count"] = reactant.distributed.process_count()
    out["works"] = float(reactant.compile(lambda x: x.sum())(reactant.to_rarray(np.arange(4.0))))
    return out


def main() -> None:
    scenario, port, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    result = {"spmd": spmd, "errors": errors}[scenario](port, pid)
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
