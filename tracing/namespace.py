"""The Array API namespace hook: arrays answer ``__array_namespace__()`` with the namespace
that ``reactant`` registers at import (``reactant.numpy``). Tracing cannot import reactant
(layering), so the namespace fills this slot instead."""

from __future__ import annotations

from typing import Any

# Array API versions the registered namespace can present itself as.
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

_namespace: Any = None


def register_array_namespace(namespace: Any) -> None:
    """Called once by ``reactant.numpy`` at import."""
    global _namespace
    _namespace = namespace


def array_namespace(api_version: str | None = None) -> Any:
    """The registered namespace; ``api_version`` must be one it implements (or None)."""
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(f"unsupported Array API version {api_version!r}; supported: {', '.join(API_VERSIONS)}")
    if _namespace is None:
        raise RuntimeError("no Array API namespace registered: import reactant")
    return _namespace


class TracedDevice:
    """The device of a traced value: placement is decided when the compiled function runs,
    so inside a trace every array is on this one placeholder (and ``device=`` arguments that
    receive it are accepted)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "TracedDevice()"


TRACED_DEVICE = TracedDevice()
