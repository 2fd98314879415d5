"""The PJRT runtime: client, devices, placement keys, and compiling StableHLO to executables."""

from __future__ import annotations

import functools
from typing import Any

from . import _jax_adapter as jx
from .optimize.eqsat import cost as _eqsat_cost

# the optimizer's cost model is calibrated by running programs: through this runtime
_eqsat_cost.register_program_timer(jx.time_programs, jx.version_key())


@functools.lru_cache(maxsize=None)
def client(platform: str | None = None):
    """The PJRT client for ``platform`` (default: jax's default backend, the CPU here)."""
    return jx.backend(platform)


def devices(platform: str | None = None) -> list:
    """Devices of the default (CPU) client."""
    return list(client(platform).devices())


def default_device():
    return devices()[0]


def sharding_key(sharding) -> Any:
    """A hashable description of where a buffer lives (device id, or the sharding itself)."""
    dev = jx.single_device(sharding)
    return sharding if dev is None else dev.id


def compile_module(code: str | bytes, devices_: list, *, num_partitions: int = 1):
    """Compile StableHLO (text or bytecode) for ``devices_`` into a loaded executable."""
    opts = jx.default_compile_options()
    if num_partitions > 1:
        opts.num_replicas = 1
        opts.num_partitions = num_partitions
        opts.executable_build_options.use_spmd_partitioning = True
        opts.executable_build_options.use_shardy_partitioner = True
    return jx.compile_and_load(client(), code, devices_, opts)
