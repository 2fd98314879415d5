"""The PJRT runtime: clients per platform, devices, placement keys, and compiling StableHLO to
executables.

The platform used when none is named is ``REACTANT_PLATFORM`` (``cpu``, ``gpu``, ``cuda``,
``rocm`` or ``tpu``) if set, else the CPU client embedded in jaxlib. A platform the machine does
not have is a ``PlatformError`` naming the platforms it has."""

from __future__ import annotations

import functools
import os
from typing import Any

from . import _jax_adapter as jx
from .sharding import NamedSharding, as_sharding
from .optimize.eqsat import cost as _eqsat_cost
from .tracing.errors import PlatformError

# the optimizer's cost model is calibrated by running programs: through this runtime
_eqsat_cost.register_program_timer(jx.time_programs, jx.version_key())

PLATFORMS = ("cpu", "gpu", "cuda", "rocm", "tpu")


def default_platform() -> str:
    """``REACTANT_PLATFORM`` or ``"cpu"``."""
    name = os.environ.get("REACTANT_PLATFORM", "").strip().lower() or "cpu"
    if name not in PLATFORMS:
        raise PlatformError(f"REACTANT_PLATFORM={name!r} is not a platform",
                            hint=f"use one of {', '.join(PLATFORMS)}")
    return name


@functools.lru_cache(maxsize=None)
def _client(platform: str):
    try:
        return jx.backend(platform)
    except RuntimeError as e:  # jax: "Unknown backend ..." / "Backend ... failed to initialize"
        raise PlatformError(
            f"no {platform} devices on this machine (available: {', '.join(jx.available_platforms()) or 'none'})",
            hint="for NVIDIA GPUs install the CUDA plugin: pip install -e \".[cuda]\"; "
            "see the README's 'Devices and platforms'" if platform in ("gpu", "cuda") else None,
        ) from e


def client(platform: str | None = None):
    """The PJRT client for ``platform`` (default: ``default_platform()``)."""
    name = (platform or default_platform()).lower()
    if name not in PLATFORMS:
        raise PlatformError(f"{platform!r} is not a platform", hint=f"use one of {', '.join(PLATFORMS)}")
    return _client(name)


def devices(platform: str | None = None) -> list:
    """The devices of ``platform`` (``"cpu"``, ``"gpu"``, ``"tpu"``; default: the default
    platform): those of every process after ``reactant.distributed.initialize`` (like
    ``jax.devices()``). A platform this machine lacks is a ``PlatformError``."""
    return list(client(platform).devices())


def local_devices(platform: str | None = None) -> list:
    """The devices this process drives (all of them in a single-process run)."""
    return list(client(platform).local_devices())


def default_device():
    """Where arrays go when no device or sharding is given: this process's first device."""
    return local_devices()[0]


def resolve_device(device) -> Any:
    """A device given as a device object, a platform name (its first local device) or
    ``"platform:index"``; None stays None."""
    if device is None or not isinstance(device, str):
        return device
    name, _, index = device.partition(":")
    devs = local_devices(name)
    try:
        return devs[int(index or 0)]
    except (ValueError, IndexError):
        raise PlatformError(f"no device {device!r}: {name} has {len(devs)} local device(s)") from None


def sharding_key(sharding) -> Any:
    """Where a buffer lives: a device id, or a ``reactant.sharding.NamedSharding`` (hashable)."""
    dev = jx.single_device(sharding)
    return as_sharding(sharding) if dev is None else dev.id


def jax_sharding(s: NamedSharding):
    """The jax sharding that places buffers as ``s`` says."""
    return jx.named_sharding(s.mesh.devices, s.mesh.axis_names, s.spec)


def compile_module(code: str | bytes, devices_: list, *, num_partitions: int = 1):
    """Compile StableHLO (text or bytecode) for ``devices_`` (all of one platform) into a
    loaded executable, with those devices' client."""
    return jx.compile_and_load(devices_[0].client, code, devices_, _compile_options(num_partitions))


def _compile_options(num_partitions: int):
    opts = jx.default_compile_options()
    if num_partitions > 1:
        opts.num_replicas = 1
        opts.num_partitions = num_partitions
        opts.executable_build_options.use_spmd_partitioning = True
        opts.executable_build_options.use_shardy_partitioner = True
    return opts


# -- executables across processes (the persistent compile cache, cache.py) ---------------------
def serialize_executable(exe, devices_: list) -> bytes:
    """An executable ``compile_module`` gave for ``devices_``, as bytes for ``load_executable``
    (in this or another process)."""
    return jx.serialize_executable(devices_[0].client, exe)


def load_executable(blob: bytes, devices_: list, *, num_partitions: int = 1):
    """The executable ``serialize_executable`` gave, loaded for ``devices_`` with the arguments
    ``compile_module`` was given; raises when ``blob`` is not one."""
    return jx.deserialize_executable(devices_[0].client, blob, devices_, _compile_options(num_partitions))
