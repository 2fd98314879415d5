"""The PJRT runtime: client, devices, placement keys, and compiling StableHLO to executables."""

from __future__ import annotations

import functools
from typing import Any

from . import _jax_adapter as jx
from .sharding import NamedSharding, as_sharding
from .optimize.eqsat import cost as _eqsat_cost

# the optimizer's cost model is calibrated by running programs: through this runtime
_eqsat_cost.register_program_timer(jx.time_programs, jx.version_key())


@functools.lru_cache(maxsize=None)
def client(platform: str | None = None):
    """The PJRT client for ``platform`` (default: jax's default backend, the CPU here)."""
    return jx.backend(platform)


def devices(platform: str | None = None) -> list:
    """Devices of the default (CPU) client: those of every process after
    ``reactant.distributed.initialize`` (like ``jax.devices()``)."""
    return list(client(platform).devices())


def local_devices(platform: str | None = None) -> list:
    """The devices this process drives (all of them in a single-process run)."""
    return list(client(platform).local_devices())


def default_device():
    """Where arrays go when no device or sharding is given: this process's first device."""
    return local_devices()[0]


def sharding_key(sharding) -> Any:
    """Where a buffer lives: a device id, or a ``reactant.sharding.NamedSharding`` (hashable)."""
    dev = jx.single_device(sharding)
    return as_sharding(sharding) if dev is None else dev.id


def jax_sharding(s: NamedSharding):
    """The jax sharding that places buffers as ``s`` says."""
    return jx.named_sharding(s.mesh.devices, s.mesh.axis_names, s.spec)


def compile_module(code: str | bytes, devices_: list, *, num_partitions: int = 1):
    """Compile StableHLO (text or bytecode) for ``devices_`` into a loaded executable."""
    opts = jx.default_compile_options()
    if num_partitions > 1:
        opts.num_replicas = 1
        opts.num_partitions = num_partitions
        opts.executable_build_options.use_spmd_partitioning = True
        opts.executable_build_options.use_shardy_partitioner = True
    return jx.compile_and_load(client(), code, devices_, opts)
