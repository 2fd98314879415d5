"""The base of the errors reactant raises for bad input, naming the user's source line, and the
frame finder that locates that line (shared by the tracer and the sharding layer).

Every error message has three parts: what went wrong (with shapes and dtypes), where in the
user's code (file, line and the source text), and a hint. The location is the innermost
frame that is not inside reactant itself or NumPy's Python wrappers.
"""

from __future__ import annotations

import linecache
import os
import sys
from types import FrameType

import numpy as np

_LAYERS = ("reactant", "reactant.tracing", "reactant.optimize", "reactant.sharding", "reactant.ir",
           "reactant.tracing.numpy_api")
_package_dirs: list = []  # (reactant's folders, once every layer is imported)
_own_dirs: tuple[str, ...] | None = None


def package_dirs() -> tuple[str, ...]:
    """The folders of reactant's own layers (each ending in the path separator); final, and
    remembered, once every layer is imported."""
    if _package_dirs:
        return _package_dirs[0]
    dirs = {os.path.dirname(os.path.abspath(__file__))}
    mods = [sys.modules.get(name) for name in _LAYERS]
    for mod in mods:
        if mod is not None and getattr(mod, "__file__", None):
            dirs.add(os.path.dirname(os.path.abspath(mod.__file__)))
    out = tuple(d + os.sep for d in sorted(dirs))
    if all(m is not None for m in mods):
        _package_dirs.append(out)
    return out


def package_complete() -> bool:
    """Whether every layer is imported (``package_dirs`` is final)."""
    package_dirs()
    return bool(_package_dirs)


def _own() -> tuple[str, ...]:
    """Folders whose frames are ours (or NumPy's dispatch wrappers), never the user's."""
    global _own_dirs
    if _own_dirs is None:
        dirs = package_dirs() + (os.path.dirname(os.path.abspath(np.__file__)) + os.sep,)
        if not package_complete():  # not final until the package is imported
            return dirs
        _own_dirs = dirs
    return _own_dirs


_own_cache: dict[str, bool] = {}


def _is_own(filename: str) -> bool:
    r = _own_cache.get(filename)
    if r is None:
        r = filename.startswith(_own()) or filename.startswith("<frozen") or filename.endswith(
            ("contextlib.py", "functools.py"))
        if _own_dirs is not None:  # memoized once the package's folders are final
            _own_cache[filename] = r
    return r


def user_frame(start: FrameType | None = None) -> FrameType | None:
    """The innermost frame of user code (outside reactant and NumPy)."""
    f = start if start is not None else sys._getframe(1)
    while f is not None:
        if not _is_own(_abs(f.f_code.co_filename)):
            return f
        f = f.f_back
    return None


def _abs(filename: str, cache: dict = {}) -> str:
    r = cache.get(filename)
    if r is None:
        r = cache[filename] = os.path.abspath(filename)
    return r


_user_file: dict = {}  # code object -> its absolute file name, or None for our own code
_USER_FILE_MAX = 4096  # (converted functions make code objects at run time: bounded)


def user_location() -> tuple[str, int] | None:
    """(file, line) of the innermost user frame, or None. Called for every op a trace makes:
    the file of a code object is looked up once."""
    f = sys._getframe(1)
    known = _user_file
    while f is not None:
        code = f.f_code
        fn = known.get(code, False)
        if fn is False:
            fn = _abs(code.co_filename)
            if _is_own(fn):
                fn = None
            if _own_dirs is not None:  # (final once the package's folders are)
                if len(known) >= _USER_FILE_MAX:
                    known.clear()
                known[code] = fn
        if fn is not None:
            return fn, f.f_lineno
        f = f.f_back
    return None


def format_location(loc: tuple[str, int] | None) -> str:
    if loc is None:
        return ""
    file, line = loc
    src = linecache.getline(file, line).strip()
    return f"  at {file}:{line}" + (f"\n    {src}" if src else "")


class ReactantError(Exception):
    """Base of the errors reactant raises for bad input; the message names the user's line."""

    def __init__(self, message: str, *, hint: str | None = None, location=None):
        self.message = message
        self.hint = hint
        self.location = location if location is not None else user_location()
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [self.message]
        where = format_location(self.location)
        if where:
            parts.append(where)
        if self.hint:
            parts.append(f"  hint: {self.hint}")
        return "\n".join(parts)


def describe(x) -> str:
    """Short 'shape dtype' text for error messages."""
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", None)
    if shape is None:
        return f"{type(x).__name__} {x!r}"
    return f"{dtype}{list(shape)}"
