"""The one place that touches jax/jaxlib runtime internals (PJRT client, executables, result
handlers, 64-bit scoping). A jax upgrade should only need changes here.

jax is imported on first use, never at ``import reactant`` (it is most of that time): every
function imports what it needs, ``Array``/``DeviceList``/``CompileOptions`` are resolved by the
module ``__getattr__``, and ``is_array`` answers without importing jax. Nothing has to happen
before jax loads except ``TF_CPP_MIN_LOG_LEVEL`` (``reactant/__init__.py``); 64-bit values are
kept by ``x64_scope`` at each use, not by a global setting, and ``XLA_FLAGS`` is read when
the first client starts, as before."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    from jax import Array
    from jaxlib.xla_client import CompileOptions


def __getattr__(name: str):
    """``Array``, ``DeviceList``, ``CompileOptions``: jax's, imported on first access."""
    if name == "Array":
        import jax

        return jax.Array
    if name in ("DeviceList", "CompileOptions"):
        return getattr(_xc(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _xc():
    """jaxlib's runtime bindings, after jax itself (its import sets up the runtime as usual)."""
    import jax  # noqa: F401
    import jaxlib.xla_client as xc

    return xc


def is_array(value: Any) -> bool:
    """Whether ``value`` is a ``jax.Array``, without importing jax: none can exist before it is."""
    if "jax" not in sys.modules:
        return False
    import jax

    return isinstance(value, jax.Array)


def version_key() -> str:
    """Names this runtime in caches of machine measurements (the jax version), without
    importing jax (the installed distribution's version is jax's ``__version__``)."""
    jax = sys.modules.get("jax")
    if jax is not None and hasattr(jax, "__version__"):
        return f"jax{jax.__version__}"
    from importlib.metadata import version

    return f"jax{version('jax')}"


def single_device(sharding):
    """The device of a single-device sharding, else None (public API only)."""
    from jax.sharding import SingleDeviceSharding

    if isinstance(sharding, SingleDeviceSharding):
        return next(iter(sharding.device_set))
    return None


def backend(platform: str | None = None):
    """The PJRT client (the embedded CPU client by default)."""
    import jax.extend

    return jax.extend.backend.get_backend(platform)


def available_platforms() -> list[str]:
    """Platforms jax can initialize here (e.g. ["cpu"]), without raising."""
    import jax.extend

    found = []
    for name in ("cpu", "cuda", "rocm", "tpu"):
        try:
            jax.extend.backend.get_backend(name)
        except RuntimeError:
            continue
        found.append(name)
    return found


def profiler_trace(log_dir: str, perfetto: bool):
    """jax's profiler session writing into ``log_dir`` (public API)."""
    import jax

    return jax.profiler.trace(log_dir, create_perfetto_trace=perfetto)


def trace_annotation(name: str):
    """A named span in the profiler's trace (public API)."""
    import jax

    return jax.profiler.TraceAnnotation(name)


def x64_scope():
    """A scope where jax keeps 64-bit dtypes (device_put would otherwise narrow them)."""
    import jax

    return jax.enable_x64(True)


def device_put(value: np.ndarray, device, *, copy: bool = False) -> Array:
    """A committed single-device buffer holding ``value`` exactly (64-bit dtypes kept).
    ``copy``: never share the host array's memory (on CPU the buffer may otherwise alias it,
    and see later writes to it)."""
    import jax

    if copy:  # (jax's may_alias=False does not stop it for host arrays)
        value = np.array(value, copy=True)
    with x64_scope():
        return jax.device_put(value, device)


def copy_buffer(buf: Array) -> Array:
    """A fresh buffer with the same contents (so donating it cannot invalidate the original)."""
    import jax

    with x64_scope():
        return jax.device_put(buf, buf.sharding, donate=False, may_alias=False)


def result_handler(shape: tuple[int, ...], dtype: np.dtype, placement):
    """A prebuilt handler turning an executable's output (on a device, or sharded over a mesh
    as a jax NamedSharding says) into a jax.Array without checks."""
    import jax.sharding
    from jax.core import ShapedArray
    from jax.sharding import SingleDeviceSharding

    xc = _xc()
    sharding = placement if isinstance(placement, jax.sharding.Sharding) else SingleDeviceSharding(placement)
    return xc.array_result_handler(ShapedArray(shape, dtype), sharding, committed=True, _skip_checks=True)


_JAX_MESHES: dict = {}


def named_sharding(devices: np.ndarray, axis_names: tuple, spec: tuple):
    """The jax NamedSharding of a mesh (devices ndarray, axis names) and a spec (public API)."""
    import jax.sharding

    key = (tuple(d.id for d in devices.flat), devices.shape, axis_names)
    mesh = _JAX_MESHES.get(key)
    if mesh is None:
        mesh = _JAX_MESHES[key] = jax.sharding.Mesh(devices, axis_names)
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*spec))


def device_put_sharded(value, sharding, *, copy: bool = False) -> Array:
    """``value`` (host array or jax Array) placed by a jax sharding, 64-bit dtypes kept
    (``copy``: as for ``device_put``)."""
    import jax

    if copy and isinstance(value, np.ndarray):
        value = np.array(value, copy=True)
    with x64_scope():
        return jax.device_put(value, sharding)


def compile_and_load(client, code: str | bytes, devices: Sequence[Any], options: CompileOptions):
    _assign_devices(options, devices)
    return client.compile_and_load(code, _xc().DeviceList(tuple(devices)), options)


def _assign_devices(options: CompileOptions, devices: Sequence[Any]) -> None:
    # one partition per device, in this order (otherwise PJRT assigns device 0)
    ids = np.asarray([d.id for d in devices], dtype=np.int64).reshape(1, len(devices))
    options.device_assignment = _xc().DeviceAssignment.create(ids)


# -- executables across processes (the persistent compile cache) -------------------------------


def serialize_executable(client, executable) -> bytes:
    """A loaded executable as bytes (``deserialize_executable`` loads it again)."""
    return client.serialize_executable(executable)


def deserialize_executable(client, blob: bytes, devices: Sequence[Any], options: CompileOptions):
    """The executable ``serialize_executable`` gave, loaded on ``devices`` with the options it
    was compiled with. Raises on bytes that are not such an executable (never trust them
    beyond that: loading runs the code they hold)."""
    _assign_devices(options, devices)
    return client.deserialize_executable(blob, _xc().DeviceList(tuple(devices)), options)


def runtime_fingerprint(client) -> dict[str, str]:
    """What a compiled executable depends on besides its program and options: jax, jaxlib,
    the PJRT platform and its version, the XLA flags of the environment."""
    import jax
    import jaxlib

    return {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "platform": client.platform,
            "platform_version": client.platform_version,
            "xla_flags": " ".join(sorted(os.environ.get("XLA_FLAGS", "").split()))}


def optimized_hlo_text(executable) -> str:
    """XLA's optimized HLO of a compiled executable."""
    return "\n".join(m.to_string() for m in executable.hlo_modules())


def cost_analysis(executable) -> dict[str, float]:
    """XLA's cost estimate of a compiled executable (flops, bytes accessed, ...)."""
    return {k: float(v) for k, v in executable.cost_analysis().items()}


def default_compile_options() -> CompileOptions:
    return _xc().CompileOptions()


def block_until_ready(buf: Array) -> None:
    buf.block_until_ready()


def time_programs(progs: dict, rounds: int = 15) -> dict[str, list[float]]:
    """Compile every (StableHLO text, NumPy inputs) program of ``progs`` for the default
    client's first local device, warm each up, then run them round-robin ``rounds`` times;
    returns the seconds of every run per program (for the optimizer's cost-model calibration)."""
    import time

    client = backend()
    dev = client.local_devices()[0]
    exes = {}
    for name, (text, args) in progs.items():
        exe = compile_and_load(client, text, [dev], default_compile_options())
        bufs = [device_put(a, dev) for a in args]
        for _ in range(2):
            for o in exe.execute(bufs):
                o.block_until_ready()
        exes[name] = (exe, bufs)
    times: dict[str, list[float]] = {k: [] for k in exes}
    for _ in range(rounds):
        for name, (exe, bufs) in exes.items():
            t0 = time.perf_counter()
            for o in exe.execute(bufs):
                o.block_until_ready()
            times[name].append(time.perf_counter() - t0)
    return times



# -- multi-process (jax's distributed runtime) ------------------------------------------------


def backends_initialized() -> bool:
    """Whether a PJRT client exists already (then the distributed runtime can no longer start)."""
    from jax._src import xla_bridge

    return xla_bridge.backends_are_initialized()


def detect_cluster(coordinator_address, num_processes, process_id, local_device_ids, timeout: int) -> tuple:
    """Fill the unset ones of the four parameters from a cluster environment jax recognises
    (Slurm, Open MPI, Cloud TPU, ...); unchanged when none is found."""
    from jax._src import clusters

    return tuple(clusters.ClusterEnv.auto_detect_unset_distributed_params(
        coordinator_address, num_processes, process_id, local_device_ids, None, timeout))


def ensure_cpu_collectives() -> None:
    """Cross-process collectives on the CPU go through gloo unless another implementation was chosen."""
    import jax

    if jax.config.jax_cpu_collectives_implementation in (None, "", "none"):
        jax.config.update("jax_cpu_collectives_implementation", "gloo")


def distributed_initialize(coordinator_address: str, num_processes: int, process_id: int,
                           local_device_ids, timeout: int) -> None:
    """jax's distributed runtime with every parameter given (no detection of its own)."""
    import jax

    jax.distributed.initialize(coordinator_address=coordinator_address, num_processes=num_processes,
                               process_id=process_id, local_device_ids=local_device_ids,
                               cluster_detection_method="deactivate", initialization_timeout=timeout)


def distributed_is_initialized() -> bool:
    import jax

    return jax.distributed.is_initialized()


def distributed_shutdown() -> None:
    """Stop jax's distributed runtime, each part even when another fails (a client whose
    connection failed reports that on shutdown): the point is to leave nothing behind."""
    from jax._src import distributed

    state = distributed.global_state
    for name in ("preemption_sync_manager", "client", "service"):  # jax's shutdown order
        part = getattr(state, name)
        if part is not None:
            try:
                part.shutdown()
            except Exception:  # noqa: BLE001
                pass
            setattr(state, name, None)


def kv_set(key: str, value: str) -> None:
    """Publish ``value`` under ``key`` in the coordinator's key-value store."""
    from jax._src import distributed

    distributed.global_state.client.key_value_set(key, value)


def kv_get(key: str, timeout_s: float) -> str:
    """The value under ``key`` in the coordinator's store, waiting for it up to ``timeout_s``."""
    from jax._src import distributed

    return distributed.global_state.client.blocking_key_value_get(key, int(timeout_s * 1000))


def process_index() -> int:
    import jax

    return jax.process_index()


def process_count() -> int:
    import jax

    return jax.process_count()


def global_devices() -> list:
    import jax

    return list(jax.devices())


def local_devices() -> list:
    import jax

    return list(jax.local_devices())


def make_array_from_callback(shape: tuple, sharding, callback) -> Array:
    """A global array whose addressable shards are ``callback(index)`` (64-bit dtypes kept)."""
    import jax

    with x64_scope():
        return jax.make_array_from_callback(shape, sharding, callback)


# -- reactant.export: portable StableHLO and jax.export ----------------------------------------


def portable_artifact(module, target: str) -> bytes:
    """``module`` as a StableHLO portable artifact (VHLO bytecode) readable by StableHLO
    ``target`` and newer, Shardy (``sdy``) ops and attributes kept: jax's own export
    serializer. (The public ``stablehlo.serialize_portable_artifact`` converts the module in
    place and rejects ``sdy`` ops; the ``_str`` form parses without the sdy dialect.)"""
    from jax._src.lib import _jax

    return _jax.mlir.serialize_portable_artifact(module, target, True)


def jax_exported(fun_name: str, args_sample, in_specs: Sequence[tuple], out_sample, out_specs: Sequence[tuple],
                 artifact: bytes, platform: str):
    """A ``jax.export.Exported`` around a portable artifact whose ``@main`` takes the leaves of
    ``args_sample`` (an ``(args, kwargs)`` pytree) as ``in_specs`` (shape, dtype) and returns
    the leaves of ``out_sample`` as ``out_specs``; one device, no shardings, no VJP. The
    constructor is public, but fields starting with ``_`` are jax's "do not rely" ones: kept here."""
    from jax import export, tree_util
    from jax.core import ShapedArray

    n, m = len(in_specs), len(out_specs)
    return export.Exported(
        fun_name=fun_name, in_tree=tree_util.tree_structure(args_sample),
        in_avals=tuple(ShapedArray(tuple(s), np.dtype(d)) for s, d in in_specs),
        out_tree=tree_util.tree_structure(out_sample),
        out_avals=tuple(ShapedArray(tuple(s), np.dtype(d)) for s, d in out_specs),
        _has_named_shardings=False, _in_named_shardings=(None,) * n, _out_named_shardings=(None,) * m,
        in_shardings_hlo=(None,) * n, out_shardings_hlo=(None,) * m, nr_devices=1, platforms=(platform,),
        ordered_effects=(), unordered_effects=(), disabled_safety_checks=(), mlir_module_serialized=artifact,
        calling_convention_version=10, module_kept_var_idx=tuple(range(n)), uses_global_constants=False,
        _get_vjp=None)


def tree_leaves(tree) -> list:
    """jax's leaves of a pytree (its own order: dict keys sorted)."""
    import jax

    return jax.tree_util.tree_leaves(tree)


def x64_enabled() -> bool:
    import jax

    return bool(jax.config.jax_enable_x64)


def memory_per_device(executable) -> float:
    """Bytes one device holds while the executable runs (arguments, outputs not aliased to
    them, temporaries), from XLA's memory analysis; 0 when the backend has none."""
    try:
        m = executable.get_compiled_memory_stats()
    except Exception:  # noqa: BLE001 - not every backend reports it
        return 0.0
    return float(m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes
                 + m.temp_size_in_bytes)


# -- multi-process failure detection (reactant.distributed) ------------------------------------


def distributed_connect(coordinator_address: str, num_processes: int, process_id: int, local_device_ids,
                        init_timeout: int, heartbeat_timeout: int, shutdown_timeout: int,
                        linger: float) -> None:
    """Start jax's distributed runtime like ``jax.distributed.initialize`` (a coordination
    service started by process 0, a client everywhere, installed as jax's own so devices and
    gloo use it), but with a failed start raising instead of terminating the process.

    The service runs in a process of its own (``start_coordinator``): when it runs inside
    process 0, the death of process 0 makes jax terminate every other process at once (their
    clients lose the service), before they can raise an error of their own.

    jax's client terminates the process (``LOG(QFATAL)``) when it cannot register within
    ``init_timeout``, unless it was given a ``missed_heartbeat_callback``. jaxlib 0.10.2 cannot
    call a Python callback with the error status (``std::bad_cast``): then ``connect()``
    raises ``RuntimeError`` instead, which is what we want here. A later error of the client
    (the service gone) still terminates the process, as jax's default does (but with "terminate
    called after throwing an instance of 'std::bad_cast'" for a message): the service's own
    process is there to keep that from happening."""
    import jax
    from jax._src import distributed
    from jax._src.lib import _jax

    state = distributed.global_state
    if state.client is not None or state.service is not None:
        raise RuntimeError("jax's distributed runtime is already running")
    port = coordinator_address.rsplit(":", 1)[1]
    if process_id == 0:
        start_coordinator(os.environ.get("JAX_COORDINATOR_BIND_ADDRESS", f"[::]:{port}"), num_processes,
                          heartbeat_timeout, init_timeout, shutdown_timeout, linger, init_timeout)
    client = _jax.get_distributed_runtime_client(
        coordinator_address, process_id, init_timeout=init_timeout, heartbeat_timeout=heartbeat_timeout,
        shutdown_timeout=shutdown_timeout, use_compression=True, missed_heartbeat_callback=_no_abort)
    try:
        client.connect()
    except BaseException:
        try:
            client.shutdown()
        except Exception:  # noqa: BLE001 - a client in error reports it again here
            pass
        stop_coordinator()
        raise
    if local_device_ids:
        visible = ",".join(str(i) for i in local_device_ids)
        jax.config.update("jax_cuda_visible_devices", visible)
        jax.config.update("jax_rocm_visible_devices", visible)
    state.coordinator_address, state.process_id, state.num_processes = coordinator_address, process_id, num_processes
    state.client = client


_COORDINATOR: list = []  # the service's process (process 0 only)
_SERVE = ("import importlib.util as u, sys; s = u.spec_from_file_location('reactant_coordinator', sys.argv[1]); "
          "m = u.module_from_spec(s); s.loader.exec_module(m); m._serve_coordinator(sys.argv[2:])")


def start_coordinator(bind: str, num_processes: int, heartbeat_timeout: int, register_timeout: int,
                      shutdown_timeout: int, linger: float, wait: float) -> None:
    """Start jax's coordination service in a child process, serving on ``bind``; return once
    it serves (raise ``OSError`` if it cannot within ``wait`` seconds). It ends when
    ``stop_coordinator`` says so; if this process dies instead, it serves the others for
    ``linger`` more seconds (so that they find out and end with an error of their own)."""
    import select
    import subprocess

    args = [bind, num_processes, heartbeat_timeout, register_timeout, shutdown_timeout, linger]
    # (the adapter file itself, without the reactant package: a light process; its log is not
    # process 0's output, which would otherwise stay open for as long as it serves)
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, os.path.abspath(__file__), *map(str, args)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    _COORDINATOR.append(proc)
    ready, _, _ = select.select([proc.stdout], [], [], wait)
    line = proc.stdout.readline().strip() if ready else ""
    if line != "ready":
        stop_coordinator()
        raise OSError(f"could not serve the coordinator on {bind}: "
                      + (line.removeprefix("error ") or f"no answer within {wait:g} s"))


def stop_coordinator() -> None:
    """End the service started by ``start_coordinator`` (after every client shut down)."""
    while _COORDINATOR:
        proc = _COORDINATOR.pop()
        try:
            proc.stdin.write("bye\n")
            proc.stdin.close()
            proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - it ended already, or does not answer
            proc.kill()
            proc.wait()


def _serve_coordinator(argv: list[str]) -> None:
    """The service's process: serve until told "bye"; when process 0's end of the pipe closes
    without it (process 0 died), serve ``linger`` seconds more."""
    import time

    from jax._src.lib import _jax

    bind, n, heartbeat, register, shutdown, linger = argv[0], *map(int, argv[1:5]), float(argv[5])
    try:
        service = _jax.get_distributed_runtime_service(bind, n, heartbeat_timeout=heartbeat,
                                                       cluster_register_timeout=register, shutdown_timeout=shutdown)
    except Exception as e:  # noqa: BLE001 - e.g. the port is taken
        print(f"error {e}", flush=True)
        return
    print("ready", flush=True)
    if sys.stdin.readline() != "bye\n":
        time.sleep(linger)
    service.shutdown()


def _no_abort(*_args) -> None:
    """Stands for jax's default missed-heartbeat callback (which terminates the process); see
    ``distributed_connect``."""


def kv_put(key: str, value: str) -> None:
    """Set ``key`` in the coordinator's key-value store, replacing an earlier value."""
    from jax._src import distributed

    distributed.global_state.client.key_value_set(key, value, allow_overwrite=True)


def kv_dir(prefix: str) -> dict[str, str]:
    """Every key under ``prefix`` in the coordinator's store, with its value (no waiting)."""
    from jax._src import distributed

    return dict(distributed.global_state.client.key_value_dir_get(prefix))
