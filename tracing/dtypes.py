"""The dtypes a traced value may have, and NumPy 2 type promotion for traced values
(the NumPy <-> MLIR element type mapping is ``reactant.ir.types``).

Promotion follows NumPy exactly by asking NumPy: ``ufunc.resolve_dtypes`` gives the loop
dtypes a ufunc would use, with Python scalars passed as their *type* (NEP 50 weak scalars).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ..ir.types import bfloat16

# Every dtype a traced value may have. float64/int64/complex128 are native in XLA on CPU.
SUPPORTED = tuple(
    np.dtype(d)
    for d in (
        np.bool_, np.int8, np.int16, np.int32, np.int64,
        np.uint8, np.uint16, np.uint32, np.uint64,
        np.float16, ml_dtypes.bfloat16, np.float32, np.float64,
        np.complex64, np.complex128,
    )
)
_SUPPORTED_SET = frozenset(SUPPORTED)


def is_supported(dtype: Any) -> bool:
    try:
        return np.dtype(dtype) in _SUPPORTED_SET
    except TypeError:
        return False


def canonical(dtype: Any) -> np.dtype:
    """``np.dtype(dtype)``; raises TypeError for dtypes XLA cannot hold (object, str, datetime...)."""
    from .errors import DTypeError

    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise DTypeError(f"{dtype!r} is not a dtype", hint=_dtype_hint()) from e
    if dt not in _SUPPORTED_SET:
        raise DTypeError(f"unsupported dtype {dt}", hint=_dtype_hint())
    return dt


def _dtype_hint() -> str:
    return "supported dtypes: " + ", ".join(str(d) for d in SUPPORTED)


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype == bfloat16


def is_complex(dtype: np.dtype) -> bool:
    return dtype.kind == "c"


def real_dtype(dtype: np.dtype) -> np.dtype:
    """float32 for complex64, float64 for complex128, the dtype itself otherwise."""
    if dtype.kind == "c":
        return np.dtype(f"f{dtype.itemsize // 2}")
    return dtype


_PY_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
              complex: np.dtype(np.complex128)}


def resolve_ufunc(ufunc: np.ufunc, operand_dtypes: list) -> tuple[np.dtype, ...]:
    """The (inputs..., outputs...) loop dtypes NumPy would pick for ``ufunc`` on these operands.

    ``operand_dtypes`` holds np.dtype objects for arrays and the Python types
    ``bool``/``int``/``float``/``complex`` for weakly typed Python scalars.
    """
    sig = tuple(operand_dtypes) + (None,) * ufunc.nout
    try:
        loop = tuple(np.dtype(d) for d in ufunc.resolve_dtypes(sig))
        if not any(d == object for d in loop):
            return loop
        # only Python scalars (``i < 3`` on a traced Python int): NumPy picks its object loop for
        # unbounded Python ints; the scalars' own dtypes (int64, float64...) are what a trace has
        concrete = [_PY_DTYPES.get(d, d) for d in operand_dtypes]
        return tuple(np.dtype(d) for d in ufunc.resolve_dtypes(tuple(concrete) + (None,) * ufunc.nout))
    except TypeError:  # no loop for these dtypes (UFuncTypeError), or no common dtype
        pass
    # resolve_dtypes fails for some (dtype, python-scalar) pairs on extension dtypes such as
    # bfloat16: decide on the common dtype first, then ask again with concrete dtypes.
    try:
        common = result_type(*operand_dtypes)
        return tuple(np.dtype(d) for d in ufunc.resolve_dtypes((common,) * ufunc.nin + (None,) * ufunc.nout))
    except TypeError:  # the ufunc has no loop for these operands: callers raise a DTypeError
        return None


def result_type(*dtypes: Any) -> np.dtype:
    """``np.result_type`` with Python scalar types treated as weak (NEP 50)."""
    args = []
    for d in dtypes:
        if d is bool:
            args.append(False)
        elif d is int:
            args.append(0)
        elif d is float:
            args.append(0.0)
        elif d is complex:
            args.append(0j)
        else:
            args.append(np.dtype(d))
    return np.result_type(*args)


