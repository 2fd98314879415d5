"""Which functions are the user's own code, converted (where their source is): not library
code, nor generators or coroutines."""

from __future__ import annotations

import ast
import inspect
import os
import sys
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
