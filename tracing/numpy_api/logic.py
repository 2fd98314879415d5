"""Logic functions (NumPy's "Logic functions" section) that are not ufuncs: array type tests
(iscomplexobj, isrealobj) and whole-array comparisons (isclose, allclose, array_equal). The
element-wise logic ufuncs (isnan, logical_and, ...) are in ufuncs.py."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import is_complex, is_float
from ._registry import implements
from .convert import _promoted, as_traced, broadcast_all


@implements(np.iscomplexobj)
def iscomplexobj(x):
    return is_complex(as_traced(x).dtype)



@implements(np.isrealobj)
def isrealobj(x):
    return not is_complex(as_traced(x).dtype)



@implements(np.isclose)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    (x, y), dt = _promoted(a, b)
    if not (is_float(dt) or is_complex(dt)):
        x, y = ops.convert(x, np.float64), ops.convert(y, np.float64)
    x, y = broadcast_all(x, y)
    diff = np.abs(np.subtract(x, y))
    tol = np.add(atol, np.multiply(rtol, np.abs(y)))
    close = np.logical_or(np.equal(x, y), np.less_equal(diff, tol))
    finite = np.logical_and(np.isfinite(x), np.isfinite(y))
    close = np.logical_or(np.logical_and(close, finite), np.equal(x, y))
    if equal_nan:
        close = np.logical_or(close, np.logical_and(np.isnan(x), np.isnan(y)))
    return close



@implements(np.allclose)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return np.all(isclose(a, b, rtol, atol, equal_nan))



@implements(np.array_equal)
def array_equal(a1, a2, equal_nan=False):
    x, y = as_traced(a1), as_traced(a2)
    if x.shape != y.shape:
        return False
    eq = np.equal(x, y)
    if equal_nan:
        eq = np.logical_or(eq, np.logical_and(np.isnan(x), np.isnan(y)))
    return np.all(eq)
