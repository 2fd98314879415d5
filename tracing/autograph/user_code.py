"""Which functions are the user's own code, converted (where their source is): not library
code, nor generators or coroutines; and a function's own source text (``function_source``)."""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import sys
import textwrap
import types

import numpy as np

from ..aliases import is_reactant as _is_reactant

# NumPy, the standard library, the installed packages and reactant.tracing itself (this file's
# parent folder)
_SKIP_DIRS = tuple({os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (np, os, ast)}
                   | {sys.prefix + os.sep + "lib", os.path.dirname(os.path.dirname(__file__)) + os.sep})


def _convertible(fn) -> bool:
    if not isinstance(fn, types.FunctionType):
        return False
    code = fn.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return False
    f = os.path.abspath(code.co_filename)
    if f.startswith("<") or "site-packages" in f or f.startswith(_SKIP_DIRS) or _is_reactant(f):
        return False
    return True


_SOURCES: dict = {}  # code object -> its function's source text
_SOURCES_MAX = 4096  # (converted functions make code objects at run time: bounded)


def function_source(fn) -> str:
    """The source of the function ``fn`` itself (a ``def``, from its first decorator line; a
    ``functools.wraps`` wrapper's own); raises as ``inspect.getsource`` does when there is none.
    Read once per code object, from the lines of the file that its code and nested code cover (``inspect`` tokenizes
    the file from the ``def`` on to find the block's end: 0.7-1 ms a function); when those
    lines do not parse on their own (a statement without code on its last lines, such as a
    closing bracket), from ``inspect``."""
    code = fn.__code__
    got = _SOURCES.get(code)
    if got is None:
        # (of the code object: ``inspect.getsource(fn)`` follows ``__wrapped__`` and gives a
        # ``functools.wraps`` wrapper the source of the function it wraps)
        got = _covered_lines(fn) or inspect.getsource(code)
        if len(_SOURCES) >= _SOURCES_MAX:
            _SOURCES.clear()
        _SOURCES[code] = got
    return got


def _covered_lines(fn) -> str | None:
    code = fn.__code__
    linecache.checkcache(code.co_filename)  # (a file changed since it was read: read again, as inspect does)
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    first = code.co_firstlineno
    if not lines or not 0 < first <= len(lines):
        return None
    last, todo = first, [code]
    while todo:
        c = todo.pop()
        last = max([last] + [ln for _, _, ln in c.co_lines() if ln is not None])
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    text = "".join(lines[first - 1:last])
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return None
    # (one def, as the code object says: its name and last line)
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) \
            or tree.body[0].name != code.co_name:
        return None
    return text
