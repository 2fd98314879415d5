"""``__array_namespace_info__()``: what the namespace supports (capabilities, devices,
default and available dtypes)."""

from __future__ import annotations

from typing import Any, Optional, Union

from .. import runtime
from ._dtypes import ALL_DTYPES, KINDS, complex128, float64, int64


class Info:
    """The inspection object of the standard."""

    __module__ = "reactant.numpy"

    def capabilities(self) -> dict[str, Any]:
        """Boolean-mask indexing and data-dependent shapes work eagerly (inside compiled
        functions both need static sizes; see docs/array_api.md)."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self):
        """The device arrays are created on when ``device=`` is not given."""
        return runtime.default_device()

    def devices(self) -> list:
        """The devices arrays can be placed on (``reactant.devices()``)."""
        return list(runtime.devices())

    def default_dtypes(self, *, device=None) -> dict[str, Any]:
        """The dtypes creation functions and indexing use by default."""
        return {"real floating": float64, "complex floating": complex128, "integral": int64, "indexing": int64}

    def dtypes(self, *, device=None, kind: Optional[Union[str, tuple[str, ...]]] = None) -> dict[str, Any]:
        """The supported dtypes by name, optionally only those of ``kind`` (a kind name of
        ``isdtype`` or a tuple of them)."""
        if kind is None:
            chosen = ALL_DTYPES
        else:
            kinds = (kind,) if isinstance(kind, str) else tuple(kind)
            for k in kinds:
                if k not in KINDS:
                    raise ValueError(f"unknown dtype kind {k!r}; one of {', '.join(KINDS)}")
            chosen = [d for d in ALL_DTYPES if any(KINDS[k](d) for k in kinds)]
        return {d.name: d for d in chosen}


def __array_namespace_info__() -> Info:
    """The namespace's inspection object."""
    return Info()
