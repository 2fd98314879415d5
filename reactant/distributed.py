"""Multi-process runs: one process per host (or per group of devices), the same script on each.

    import reactant
    reactant.distributed.initialize()          # first, before any array or device is used
    mesh = reactant.sharding.make_mesh((reactant.distributed.process_count() * 4,), ("x",))

``initialize`` starts jax's distributed runtime (a coordinator service in process 0, a client
in every process; on the CPU, cross-process collectives go through gloo). Afterwards the
devices of every process form one list (``global_devices()``), meshes span them, and compiled
functions over such a mesh run as one SPMD program on all processes.

Parameters left out are read, in this order, from:

- ``REACTANT_COORDINATOR_ADDRESS`` (``host:port`` of process 0), ``REACTANT_NUM_PROCESSES``,
  ``REACTANT_PROCESS_ID``, ``REACTANT_LOCAL_DEVICE_IDS`` (comma-separated);
- jax's own ``JAX_COORDINATOR_ADDRESS`` and ``JAX_LOCAL_DEVICE_IDS``;
- the cluster environments jax recognises (Slurm, Open MPI, Cloud TPU, ...).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from typing import Any, Sequence

import numpy as np

from . import _jax_adapter as jx
from .sharding import ShardingError

ENV_COORDINATOR = "REACTANT_COORDINATOR_ADDRESS"
ENV_NUM_PROCESSES = "REACTANT_NUM_PROCESSES"
ENV_PROCESS_ID = "REACTANT_PROCESS_ID"
ENV_LOCAL_DEVICE_IDS = "REACTANT_LOCAL_DEVICE_IDS"

DEFAULT_TIMEOUT = 60.0  # seconds to reach the coordinator and wait for every process
_COST_KEY = "reactant/eqsat_cost_constants"

_lock = threading.Lock()
_initialized = False


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids: Sequence[int] | int | None = None,
               *, initialization_timeout: float = DEFAULT_TIMEOUT) -> None:
    """Join a multi-process run. Call it once, at the top of the script, on every process,
    before any array is created or device listed.

    ``coordinator_address``: ``host:port`` where process 0 serves the coordinator (every
    process passes the same); ``num_processes``: how many processes; ``process_id``: this one's
    index, 0..num_processes-1; ``local_device_ids``: restricts the devices this process uses
    (accelerators). Missing ones come from the environment (see the module docstring).
    ``initialization_timeout``: seconds to reach the coordinator and for every process to
    join; past it a ``ShardingError`` (an unreachable coordinator) is raised rather than
    waiting forever. Raises ``ShardingError`` when called twice or after devices were used,
    leaving nothing started.
    """
    global _initialized
    with _lock:
        if _initialized or jx.distributed_is_initialized():
            raise ShardingError("reactant.distributed.initialize was already called in this process",
                                hint="call it once, at the top of the script")
        if jx.backends_initialized():
            raise ShardingError(
                "reactant.distributed.initialize must come before any device is used: this process "
                "already created its devices (an array was moved, a device listed or a function run)",
                hint="call it first thing in the script, before to_rarray, make_mesh or reactant.devices()")
        if not initialization_timeout or initialization_timeout <= 0:
            raise ShardingError(f"initialization_timeout must be a positive number of seconds, "
                                f"got {initialization_timeout!r}")
        deadline = time.monotonic() + initialization_timeout
        addr, n, pid, ids = _resolve(coordinator_address, num_processes, process_id, local_device_ids,
                                     initialization_timeout)
        if pid != 0:  # fail fast, and cleanly, on a coordinator nobody serves
            _wait_for_coordinator(addr, deadline)
        jx.ensure_cpu_collectives()
        remaining = max(1, int(deadline - time.monotonic() + 0.999))
        try:
            jx.distributed_initialize(addr, n, pid, ids, remaining)
        except Exception as e:  # noqa: BLE001
            jx.distributed_shutdown()
            raise ShardingError(f"could not start the distributed runtime (coordinator {addr}, process "
                                f"{pid} of {n}): {type(e).__name__}: {e}") from None
        try:
            _share_cost_model(pid, initialization_timeout)
        except Exception as e:  # noqa: BLE001
            jx.distributed_shutdown()
            raise ShardingError(f"process {pid} of {n} could not agree with process 0 on the optimizer's "
                                f"cost model: {type(e).__name__}: {e}") from None
        _initialized = True


def is_initialized() -> bool:
    """Whether this process joined a multi-process run (through us or ``jax.distributed``)."""
    return _initialized or jx.distributed_is_initialized()


def process_index() -> int:
    """This process's index (0 in a single-process run)."""
    return jx.process_index()


def process_count() -> int:
    """The number of processes (1 in a single-process run)."""
    return jx.process_count()


def global_devices() -> list:
    """The devices of every process, in the order meshes use them (process 0's first)."""
    return jx.global_devices()


def local_devices() -> list:
    """The devices of this process."""
    return jx.local_devices()


def gather(x: Any) -> np.ndarray:
    """The whole value of a device array on the host, also when it is sharded over several
    processes (then a program with collectives replicates it first: every process must call
    ``gather`` on it, in the same order as its other compiled calls)."""
    from .arrays import ConcreteRArray
    from .sharding import NamedSharding

    if not isinstance(x, ConcreteRArray):
        raise ShardingError(f"gather takes a device array, got {type(x).__name__}")
    placement = x._sig.placement
    if isinstance(placement, NamedSharding) and not (x._buf.is_fully_addressable or x._buf.is_fully_replicated):
        x = _replicator(placement.mesh)(x)
    return x.to_numpy()


_REPLICATORS: dict = {}


def _replicator(mesh):
    """A compiled identity whose result is replicated over ``mesh`` (one per mesh)."""
    from .compiler import compile as _compile
    from .sharding import Replicated

    f = _REPLICATORS.get(mesh)
    if f is None:
        # np.copy: a new result (an argument returned as is would come back as the argument itself)
        f = _REPLICATORS[mesh] = _compile(np.copy, optimize="O0", out_shardings=Replicated(mesh))
    return f


# -- helpers ----------------------------------------------------------------------------------
def _resolve(addr, n, pid, ids, timeout: float) -> tuple:
    """The four parameters from the arguments, the environment, or a detected cluster."""
    env = os.environ
    addr = addr or env.get(ENV_COORDINATOR) or env.get("JAX_COORDINATOR_ADDRESS") or None
    n = n if n is not None else _env_int(ENV_NUM_PROCESSES)
    pid = pid if pid is not None else _env_int(ENV_PROCESS_ID)
    if isinstance(ids, int):
        ids = [ids]
    if ids is None:
        text = env.get(ENV_LOCAL_DEVICE_IDS) or env.get("JAX_LOCAL_DEVICE_IDS")
        ids = _int_list(text, ENV_LOCAL_DEVICE_IDS) if text else None
    if None in (addr, n, pid):
        addr, n, pid, ids = jx.detect_cluster(addr, n, pid, ids, int(timeout))
    missing = [name for name, v in (("coordinator_address", addr), ("num_processes", n),
                                    ("process_id", pid)) if v is None]
    if missing:
        raise ShardingError(
            f"reactant.distributed.initialize needs {', '.join(missing)}: not given, not in the environment "
            f"and no cluster (Slurm, Open MPI, TPU) detected",
            hint=f"pass them, or set {ENV_COORDINATOR}=host:port, {ENV_NUM_PROCESSES} and {ENV_PROCESS_ID}")
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ShardingError(f"num_processes must be a positive integer, got {n!r}")
    if not isinstance(pid, (int, np.integer)) or not 0 <= pid < n:
        raise ShardingError(f"process_id must be an integer in 0..{n - 1}, got {pid!r}")
    host, _, port = str(addr).rpartition(":")
    if not host or not port.isdigit():
        raise ShardingError(f"coordinator_address must be 'host:port', got {addr!r}")
    return str(addr), int(n), int(pid), None if ids is None else [int(i) for i in ids]


def _env_int(name: str) -> int | None:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return None
    try:
        return int(text)
    except ValueError:
        raise ShardingError(f"environment variable {name} must be an integer, got {text!r}") from None


def _int_list(text: str, name: str) -> list[int]:
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise ShardingError(f"{name} must be comma-separated integers, got {text!r}") from None


def _wait_for_coordinator(addr: str, deadline: float) -> None:
    """Until ``deadline``, try to open a TCP connection to the coordinator (process 0 may
    start later than this one). jax's own client would abort the whole process on failure."""
    host, _, port = addr.rpartition(":")
    host = host.strip("[]")
    last: Exception | None = None
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=max(0.1, min(2.0, deadline - time.monotonic()))):
                return
        except OSError as e:
            last = e
        if time.monotonic() >= deadline:
            raise ShardingError(f"the coordinator at {addr} could not be reached within the initialization "
                                f"timeout ({type(last).__name__}: {last})",
                                hint="start process 0 (it serves the coordinator) and check the address and "
                                     "port, or raise initialization_timeout")
        time.sleep(0.1)


def _share_cost_model(pid: int, timeout: float) -> None:
    """Every process must compile the same program: the optimizer's choices depend on cost
    constants calibrated per machine, so all processes take process 0's."""
    from .optimize.eqsat import cost

    if jx.process_count() <= 1:
        return
    if pid == 0:
        jx.kv_set(_COST_KEY, json.dumps(cost.constants(), sort_keys=True))
    else:
        cost.set_constants(json.loads(jx.kv_get(_COST_KEY, timeout)))
