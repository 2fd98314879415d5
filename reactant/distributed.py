"""Multi-process runs: one process per host (or per group of devices), the same script on each.

    import reactant
    reactant.distributed.initialize()          # first, before any array or device is used
    mesh = reactant.sharding.make_mesh((reactant.distributed.process_count() * 4,), ("x",))

``initialize`` starts jax's distributed runtime (a coordination service, which process 0
runs in a child process of its own, and a client in every process; on the CPU, cross-process
collectives go through gloo). Afterwards the
devices of every process form one list (``global_devices()``), meshes span them, and compiled
functions over such a mesh run as one SPMD program on all processes.

Parameters left out are read, in this order, from:

- ``REACTANT_COORDINATOR_ADDRESS`` (``host:port`` of process 0), ``REACTANT_NUM_PROCESSES``,
  ``REACTANT_PROCESS_ID``, ``REACTANT_LOCAL_DEVICE_IDS`` (comma-separated);
- jax's own ``JAX_COORDINATOR_ADDRESS`` and ``JAX_LOCAL_DEVICE_IDS``;
- the cluster environments jax recognises (Slurm, Open MPI, Cloud TPU, ...).

Failure is an error, not a hang. Every process publishes a heartbeat in the coordinator's
key-value store and watches the others'. ``timeout`` (``initialize(timeout=...)``, else
``REACTANT_DISTRIBUTED_TIMEOUT``, else 60 seconds) bounds both waits:

- at ``initialize``, a process that never joins makes the others raise ``DistributedError``
  after ``timeout`` (``initialization_timeout`` overrides it for this wait alone);
- during the run, a process that shows no sign of life for ``timeout`` seconds (it died, or
  its script ended while the others wait for it) makes every other process raise
  ``DistributedError``, naming it, from the compiled call that waits for it in a collective.
  A compiled SPMD program that has collectives waits for its results under this watchdog.

After such an error the run cannot continue (a collective stays stuck inside the runtime):
every process that is still running ends when its script does, with exit status 1, without
jax's shutdown (which would wait for the dead process). At the normal end of a run each
process waits, as jax's shutdown does, until every other one ended too.

Process 0 dying is no different: the coordination service runs in its own child process,
which keeps serving the others for ``2 * timeout + 5`` seconds after process 0's death (so
that they find out and raise), then ends. (Were it inside process 0, jax would terminate
every other process at once when it died: "Terminating process because the JAX distributed
service detected fatal errors".) A process busy in native code that holds the GIL for longer
than ``timeout`` (none of ours does for long) would be taken for dead: raise ``timeout`` for
such programs.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import re
import socket
import sys
import threading
import time
from typing import Any, Callable, Sequence

import numpy as np

from . import _jax_adapter as jx
from .sharding import ShardingError

ENV_COORDINATOR = "REACTANT_COORDINATOR_ADDRESS"
ENV_NUM_PROCESSES = "REACTANT_NUM_PROCESSES"
ENV_PROCESS_ID = "REACTANT_PROCESS_ID"
ENV_LOCAL_DEVICE_IDS = "REACTANT_LOCAL_DEVICE_IDS"
ENV_TIMEOUT = "REACTANT_DISTRIBUTED_TIMEOUT"

DEFAULT_TIMEOUT = 60.0  # seconds to wait for every process to join, and for a silent one
_COST_KEY = "reactant/eqsat_cost_constants"
_ALIVE = "reactant/alive/"  # + process id: its heartbeat (see _Watchdog)


class DistributedError(ShardingError):
    """A process of a multi-process run did not join it, died, or stopped responding; the
    message names it and the timeout."""


_lock = threading.Lock()
_initialized = False


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids: Sequence[int] | int | None = None,
               *, timeout: float | None = None, initialization_timeout: float | None = None) -> None:
    """Join a multi-process run. Call it once, at the top of the script, on every process,
    before any array is created or device listed.

    ``coordinator_address``: ``host:port`` where process 0 serves the coordinator (every
    process passes the same); ``num_processes``: how many processes; ``process_id``: this one's
    index, 0..num_processes-1; ``local_device_ids``: restricts the devices this process uses
    (accelerators). Missing ones come from the environment (see the module docstring).

    ``timeout``: seconds (default: ``REACTANT_DISTRIBUTED_TIMEOUT``, else 60) that every
    process gets to join, and that a process may show no sign of life during the run before
    the others raise ``DistributedError`` naming it instead of waiting forever (in a compiled
    program's collective, say). ``initialization_timeout``: the wait to join alone, if it
    should differ. A coordinator nobody serves, or a process that does not join in time, is
    a ``DistributedError`` (a ``ShardingError``). Raises ``ShardingError`` when called twice
    or after devices were used, leaving nothing started.
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
        timeout = _seconds("timeout", timeout if timeout is not None else _env_float(ENV_TIMEOUT, DEFAULT_TIMEOUT))
        init_timeout = _seconds("initialization_timeout",
                                timeout if initialization_timeout is None else initialization_timeout)
        shutdown = int(max(300, 3 * timeout))  # how long the end of the run waits for every process
        deadline = time.monotonic() + init_timeout
        addr, n, pid, ids = _resolve(coordinator_address, num_processes, process_id, local_device_ids,
                                     init_timeout)
        if pid != 0:  # fail fast, and cleanly, on a coordinator nobody serves
            _wait_for_coordinator(addr, deadline)
        jx.ensure_cpu_collectives()
        remaining = max(1, int(deadline - time.monotonic() + 0.999))
        try:
            # jax's own detection of a dead process terminates the others; ours raises first
            # and names it, so jax's comes only well after (a backstop)
            jx.distributed_connect(addr, n, pid, ids, remaining, heartbeat_timeout=int(3 * timeout + 10),
                                   shutdown_timeout=shutdown, linger=2 * timeout + 5)
        except OSError as e:
            raise DistributedError(f"process 0 of {n}: {e}",
                                   hint="choose a free port for coordinator_address (or, on a slow start, "
                                        f"raise the timeout: {ENV_TIMEOUT} or initialize(timeout=...))") from None
        except Exception as e:  # noqa: BLE001
            jx.distributed_shutdown()
            # (jaxlib's status text is "std::bad_cast" here: see jx.distributed_connect)
            cause = "" if "bad_cast" in str(e) else f"; {type(e).__name__}: {e}"
            raise DistributedError(
                f"process {pid} of {n}: not every process joined the run within {init_timeout:g} s "
                f"(coordinator {addr}{cause})",
                hint=f"start all {n} processes with the same coordinator_address and num_processes={n}, "
                     f"and process ids 0..{n - 1}; a process that failed before initialize shows why in its "
                     f"own output; if they start slowly, raise the timeout ({ENV_TIMEOUT} or "
                     f"initialize(timeout=...))") from None
        try:
            _share_cost_model(pid, init_timeout)
        except Exception as e:  # noqa: BLE001
            jx.distributed_shutdown()
            raise ShardingError(f"process {pid} of {n} could not agree with process 0 on the optimizer's "
                                f"cost model: {type(e).__name__}: {e}") from None
        _start_watchdog(pid, n, timeout, shutdown)
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


def _env_float(name: str, default: float) -> float:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        return float(text)
    except ValueError:
        raise ShardingError(f"environment variable {name} must be a number of seconds, got {text!r}") from None


def _seconds(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not value > 0 or value == float("inf"):
        raise ShardingError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


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
            raise DistributedError(f"the coordinator at {addr} could not be reached within the initialization "
                                   f"timeout: process 0, which serves it, did not join "
                                   f"({type(last).__name__}: {last})",
                                   hint="start process 0 (it serves the coordinator) and check the address and "
                                        f"port, or raise the timeout ({ENV_TIMEOUT} or initialize(timeout=...))")
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


# -- failure detection: heartbeats, guarded waits, exit ----------------------------------------
class _Watchdog:
    """Publishes this process's heartbeat under ``_ALIVE`` (a counter; at the end "exited", or
    "failed " and the failure after one) and judges the other processes' from theirs:

    - a counter that has not moved for ``timeout`` seconds: that process is dead;
    - "failed ...": that process ended after the run failed: this one takes over its failure;
    - "exited": its script ended; it counts as gone once some wait of ours has waited for it
      longer than ``timeout`` (a collective it will never join).

    Only the heartbeat thread judges, right after reading the store: a pause of this thread is
    never mistaken for a pause of a peer."""

    def __init__(self, pid: int, n: int, timeout: float, shutdown_wait: float) -> None:
        self.pid, self.n, self.timeout, self.shutdown_wait = pid, n, timeout, shutdown_wait
        self.interval = min(timeout / 4, 2.0)
        self.cond = threading.Condition()
        self.failure: tuple[list[int], str] | None = None  # (processes, why): sticky
        self.waits: dict[int, float] = {}  # token -> when that wait began
        self.state: str | None = None  # None while running, then "exited" or "failed"
        self.stop = threading.Event()
        start = time.monotonic()
        self.changed = {p: (None, start) for p in range(n) if p != pid}  # last value, when it changed
        self.exited: dict[int, float] = {}
        self.dead: set[int] = set()
        self.values: dict[int, str | None] = {}  # the peers' last published values
        self.thread = threading.Thread(target=self._beat, name="reactant-distributed-heartbeat", daemon=True)
        self.thread.start()

    def _beat(self) -> None:
        count = 0
        while not self.stop.is_set():
            count += 1
            try:
                jx.kv_put(f"{_ALIVE}{self.pid}", self.state or str(count))
                seen = jx.kv_dir(_ALIVE)
            except Exception as e:  # noqa: BLE001 - the coordinator is gone
                self._fail([0], f"the coordination service (started by process 0) stopped answering "
                                f"({type(e).__name__}: {e})")
                return
            self._judge(seen, time.monotonic())
            self.stop.wait(self.interval)

    def publish(self, state: str) -> None:
        """Say this process ended ("exited") or ended after a failure ("failed ..." with it)."""
        self.state = state
        try:
            jx.kv_put(f"{_ALIVE}{self.pid}", state)
        except Exception:  # noqa: BLE001 - the coordinator is gone
            pass

    def _judge(self, seen: dict[str, str], now: float) -> None:
        dead, gone, failed = [], [], None
        with self.cond:
            oldest_wait = min(self.waits.values(), default=None)
        for p, (last, since) in self.changed.items():
            value = self.values[p] = seen.get(f"{_ALIVE}{p}")
            if value is not None and value.startswith("failed"):
                failed = failed or (p, value)
            elif value == "exited":
                self.exited.setdefault(p, now)
                if oldest_wait is not None and now - max(self.exited[p], oldest_wait) > self.timeout:
                    gone.append(p)
            elif value != last:
                self.changed[p] = (value, now)
            elif now - since > self.timeout:
                dead.append(p)
        self.dead.update(dead)
        if dead:
            self._fail(dead, f"{_processes(dead)} stopped responding: no sign of life for more than "
                             f"{self.timeout:g} s (most likely {'they' if len(dead) > 1 else 'it'} died: "
                             f"see {'their' if len(dead) > 1 else 'its'} output)")
        elif gone:
            self._fail(gone, f"{_processes(gone)} ended {'their' if len(gone) > 1 else 'its'} script while "
                             f"this process waited more than {self.timeout:g} s for "
                             f"{'them' if len(gone) > 1 else 'it'} in a collective")
        elif failed:
            p, value = failed
            try:
                processes, why = json.loads(value[len("failed "):])
            except ValueError:
                processes, why = [p], f"process {p} ended after the run failed (see its output)"
            self._fail(list(processes), f"process {p} found that {why}")
        with self.cond:
            self.cond.notify_all()  # (the end of the run waits on what peers publish)

    def ended(self, states: tuple[str, ...]) -> bool:
        """Whether every peer is dead or published a state starting with one of ``states``."""
        return all(p in self.dead or (self.values.get(p) or "").startswith(states) for p in self.changed)

    def _fail(self, processes: list[int], why: str) -> None:
        with self.cond:
            if self.failure is None:
                self.failure = (processes, why)
            self.cond.notify_all()

    def error(self) -> DistributedError | None:
        """The failure as an error raised at the caller's line (None while all is well)."""
        if self.failure is None:
            return None
        why = self.failure[1]
        return DistributedError(
            f"multi-process run failed (this is process {self.pid} of {self.n}): {why}",
            hint=f"every process must make the same compiled calls in the same order; if a process "
                 f"can show no sign of life for longer than {self.timeout:g} s (native code holding the "
                 f"GIL), raise the timeout "
                 f"({ENV_TIMEOUT} or initialize(timeout=...)). The run cannot continue: this process "
                 f"exits with status 1 when its script ends")

    def wait(self, block: Callable[[], None]) -> None:
        """Run ``block`` (waiting for a program) on the waiter thread; return when it is done,
        raise its error, or raise ``DistributedError`` as soon as a peer is found dead."""
        err = self.error()
        if err is not None:
            raise err
        done: list = []
        token = object()
        with self.cond:
            self.waits[id(token)] = time.monotonic()
        _waiter().put((block, done, self.cond))
        try:
            with self.cond:
                while not done and self.failure is None:
                    self.cond.wait(self.interval)
        finally:
            with self.cond:
                self.waits.pop(id(token), None)
        if done and done[0] is None:
            return
        if done and not _COMMUNICATION.search(str(done[0])):
            raise done[0]
        if done:  # a collective failed: when a peer died (gloo may see its connection close
            # first), say which, once the heartbeats tell (in at most ``timeout`` and a beat)
            deadline = time.monotonic() + self.timeout + 2 * self.interval
            with self.cond:
                while self.failure is None and time.monotonic() < deadline:
                    self.cond.wait(self.interval)
            if self.failure is None:
                raise done[0]
            raise self.error() from done[0]
        raise self.error()


_watchdog: _Watchdog | None = None
# errors of a program's cross-process communication (gloo's, XLA's collectives')
_COMMUNICATION = re.compile(r"gloo|connection|collective|rendezvous|peer|socket", re.IGNORECASE)
_WAITS: queue.Queue | None = None


def _waiter() -> queue.Queue:
    """The queue of the one thread that blocks on programs for guarded waits (if a peer dies,
    that thread stays stuck in its collective; the process is then done for anyway)."""
    global _WAITS
    if _WAITS is None:
        _WAITS = queue.Queue()

        def serve(q: queue.Queue) -> None:
            while True:
                block, done, cond = q.get()
                try:
                    block()
                    result = None
                except BaseException as e:  # noqa: BLE001 - handed to the waiting caller
                    result = e
                with cond:
                    done.append(result)
                    cond.notify_all()

        threading.Thread(target=serve, args=(_WAITS,), name="reactant-distributed-waiter", daemon=True).start()
    return _WAITS


def _processes(ps: list[int]) -> str:
    return f"process {ps[0]}" if len(ps) == 1 else "processes " + ", ".join(map(str, ps))


def _start_watchdog(pid: int, n: int, timeout: float, shutdown_wait: float) -> None:
    global _watchdog
    if n > 1:
        _watchdog = _Watchdog(pid, n, timeout, shutdown_wait)
    # registered after jax's own exit handler, so it runs before it (atexit is last-in, first-out)
    atexit.register(_at_exit, pid)


def _at_exit(pid: int) -> None:
    """The end of this process's script. Say so, and wait (heartbeating) until every other
    process ended too, as jax's shutdown would, but watching them: then jax shuts the runtime
    down (a barrier every process reaches at once). If the run failed, before or while
    waiting, say so and end without jax's shutdown, with status 1: it would wait for a dead
    process, or behind a collective stuck forever (the coordination service, in process 0's
    child, serves the others a while longer). At a normal end, process 0 shuts its client
    down (a barrier with the others') and then the service."""
    wd = _watchdog
    if wd is None:  # a run of one process
        if pid == 0:
            jx.distributed_shutdown()
            jx.stop_coordinator()
        return
    if wd.failure is None:
        wd.publish("exited")
        deadline = time.monotonic() + wd.shutdown_wait
        with wd.cond:
            while wd.failure is None and not wd.ended(("exited", "failed")) and time.monotonic() < deadline:
                wd.cond.wait(wd.interval)
        if wd.failure is None:
            wd.stop.set()
            if wd.pid == 0:  # (the others shut down in jax's exit handler: a barrier with this one)
                jx.distributed_shutdown()
                jx.stop_coordinator()
            return
    wd.publish("failed " + json.dumps(wd.failure))
    wd.stop.set()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    os._exit(1)


def guarded_execute(execute: Callable) -> Callable:
    """``execute`` (an executable's ``execute_sharded``) whose results are waited for under
    the watchdog of a multi-process run: a peer that died makes the call raise
    ``DistributedError`` instead of hanging in a collective. Unchanged outside such a run."""
    wd = _watchdog
    if wd is None:
        return execute

    def guarded(bufs: list):
        err = wd.error()  # (a program dispatched after a failure would queue behind a stuck one)
        if err is not None:
            raise err
        return _Guarded(execute(bufs))

    return guarded


class _Guarded:
    """An executable's results whose arrays are ready (or whose wait failed) when handed out."""

    __slots__ = ("_results",)

    def __init__(self, results) -> None:
        self._results = results

    def consume_with_handlers(self, handlers: list) -> list:
        arrays = self._results.consume_with_handlers(handlers)
        wd = _watchdog
        if wd is not None and arrays:
            wd.wait(lambda: [a.block_until_ready() for a in arrays])
        return arrays
