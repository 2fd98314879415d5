"""Process-wide settings: ``reactant.config.<name> = value``.

``cache_dir``: where ``reactant.compile`` keeps compiled programs across processes (the
persistent compile cache, ``reactant/cache.py``). ``None`` (the default) takes the environment
variable ``REACTANT_CACHE_DIR``; the cache is off when that is unset or empty, as JAX's is
off until ``jax_compilation_cache_dir`` is set. A path turns it on for that directory;
``False`` turns it off whatever the environment says.

``cache_max_bytes``: the size bound of that directory; past it the least recently used
entries are deleted. ``None`` takes ``REACTANT_CACHE_MAX_BYTES``, else 1 GiB.

Assignments are checked: a wrong type or an unknown name is an error at once (a misspelt
setting would otherwise be silently ignored).
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

DEFAULT_CACHE_MAX_BYTES = 1 << 30

cache_dir: str | os.PathLike | bool | None = None
cache_max_bytes: int | None = None


def _check_cache_dir(value: Any) -> Any:
    if value is None or value is False:
        return value
    if isinstance(value, (str, os.PathLike)) and os.fspath(value):
        return value
    raise TypeError(f"reactant.config.cache_dir must be a directory path, None (use REACTANT_CACHE_DIR) "
                    f"or False (off), got {value!r}")


def _check_max_bytes(value: Any) -> Any:
    if value is None:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise TypeError(f"reactant.config.cache_max_bytes must be a positive int or None, got {value!r}")
    return value


_CHECKS = {"cache_dir": _check_cache_dir, "cache_max_bytes": _check_max_bytes}


def effective_cache_dir() -> str | None:
    """The persistent cache's directory now (setting, then environment), or None when off."""
    value = cache_dir
    if value is False:
        return None
    if value is None:
        value = os.environ.get("REACTANT_CACHE_DIR", "")
    return os.path.abspath(os.path.expanduser(os.fspath(value))) if value else None


def effective_cache_max_bytes() -> int:
    """The persistent cache's size bound now (setting, then environment, then 1 GiB)."""
    if cache_max_bytes is not None:
        return cache_max_bytes
    text = os.environ.get("REACTANT_CACHE_MAX_BYTES", "")
    if not text:
        return DEFAULT_CACHE_MAX_BYTES
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"environment variable REACTANT_CACHE_MAX_BYTES must be a positive integer, got {text!r}")
    return value


class _ConfigModule(types.ModuleType):
    """This module, with its assignments checked."""

    def __setattr__(self, name: str, value: Any) -> None:
        check = _CHECKS.get(name)
        if check is None and not (name.startswith("__") and name.endswith("__")):  # (import machinery)
            raise AttributeError(f"reactant.config has no setting {name!r} (settings: {', '.join(sorted(_CHECKS))})")
        super().__setattr__(name, value if check is None else check(value))


sys.modules[__name__].__class__ = _ConfigModule
