"""Data types of the namespace and the Array API data type functions (``astype``,
``can_cast``, ``finfo``, ``iinfo``, ``isdtype``, ``result_type``).

Dtypes are ``numpy.dtype`` instances: they are what ``x.dtype`` of our arrays returns, so
``x.dtype == reactant.numpy.float32`` holds and both hash alike (usable as dict keys).
Promotion is NumPy 2's, which agrees with the standard's table wherever the standard
specifies a result (within one kind; Python scalars weak).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any, Callable, Union

import numpy as np

from ..tracing.dtypes import is_float, is_supported
from ._base import Array, is_array, to_array, tracing

bool = np.dtype(np.bool_)  # noqa: A001 - the standard's name
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float32, float64 = np.dtype(np.float32), np.dtype(np.float64)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

DType = np.dtype
SIGNED = (int8, int16, int32, int64)
UNSIGNED = (uint8, uint16, uint32, uint64)
REAL_FLOATING = (float32, float64)
COMPLEX_FLOATING = (complex64, complex128)
ALL_DTYPES = (bool,) + SIGNED + UNSIGNED + REAL_FLOATING + COMPLEX_FLOATING
_ALL_SET = frozenset(ALL_DTYPES)

# kind name of isdtype -> whether a dtype is of that kind (float16/bfloat16 are real floating)
KINDS: dict[str, Callable[[np.dtype], builtins.bool]] = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": is_float,
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iuc" or is_float(d),
}

_PY_SCALARS = (type(True), int, float, complex)


def as_dtype(dtype: Any) -> np.dtype:
    """``dtype`` as a ``numpy.dtype`` that device arrays can hold: the standard's 13, and also
    float16/bfloat16, which reactant supports beyond the standard (``TypeError`` otherwise)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{dtype!r} is not a data type") from None
    if dt not in _ALL_SET and not is_supported(dt):
        raise TypeError(f"{dt} is not a data type of device arrays (the Array API's: "
                        f"{', '.join(d.name for d in ALL_DTYPES)})")
    return dt


def _dtype_of(x: Any) -> Any:
    """What promotion sees for an argument: arrays by their dtype, Python scalars as
    themselves (weak), dtypes as themselves."""
    if is_array(x) or isinstance(x, np.ndarray):
        return x.dtype
    if type(x) in _PY_SCALARS:
        return x  # NumPy treats a Python scalar value (not its type) as weak
    return as_dtype(x)


def result_type(*arrays_and_dtypes: Union[Array, np.dtype, int, float, complex]) -> np.dtype:
    """The dtype the standard's promotion gives for these arrays, dtypes and Python scalars."""
    if not arrays_and_dtypes:
        raise ValueError("result_type needs at least one array or dtype")
    args = [_dtype_of(a) for a in arrays_and_dtypes]
    if all(type(a) in _PY_SCALARS for a in args):
        raise ValueError("result_type needs at least one array or dtype besides Python scalars")
    # NumPy's result_type folds weak Python scalars in one at a time, as the standard does
    return as_dtype(np.result_type(*args))


def can_cast(from_: Union[np.dtype, Array], to: np.dtype, /) -> type(True):
    """Whether ``from_`` casts to ``to`` without losing values (NumPy's "safe" casting, which
    contains every cast the standard's promotion table implies); bool casts only to bool (the
    standard promotes it with no numeric dtype), complex never to real."""
    src = from_.dtype if is_array(from_) else as_dtype(from_)
    dst = as_dtype(to)
    if (src == bool) != (dst == bool) or (src.kind == "c" and dst.kind != "c"):
        return False
    return builtins.bool(np.can_cast(src, dst, casting="safe"))


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 - the standard's name for what finfo returns
    """Machine limits of a floating dtype, as Python numbers."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801
    """Limits of an integer dtype, as Python ints."""

    bits: int
    max: int
    min: int
    dtype: np.dtype


def _dtype_arg(type_: Any) -> np.dtype:
    return type_.dtype if is_array(type_) else as_dtype(type_)


def finfo(type: Union[np.dtype, Array], /) -> finfo_object:  # noqa: A002
    """Limits of a floating dtype (complex: of its real part)."""
    dt = _dtype_arg(type)
    if dt.kind not in "fc":
        raise ValueError(f"finfo needs a floating dtype, got {dt}")
    info = np.finfo(dt)
    return finfo_object(int(info.bits), float(info.eps), float(info.max), float(info.min),
                        float(info.smallest_normal), np.dtype(info.dtype))


def iinfo(type: Union[np.dtype, Array], /) -> iinfo_object:  # noqa: A002
    """Limits of an integer dtype."""
    dt = _dtype_arg(type)
    if dt.kind not in "iu":
        raise ValueError(f"iinfo needs an integer dtype, got {dt}")
    info = np.iinfo(dt)
    return iinfo_object(int(info.bits), int(info.max), int(info.min), dt)


def isdtype(dtype: np.dtype, kind: Union[np.dtype, str, tuple]) -> type(True):
    """Whether ``dtype`` is ``kind``: a dtype, a kind name (``"integral"``...), or a tuple."""
    dtype = as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in KINDS:
            raise ValueError(f"unknown dtype kind {kind!r}; one of {', '.join(KINDS)}")
        return KINDS[kind](dtype)
    return dtype == as_dtype(kind)


def astype(x: Array, dtype: np.dtype, /, *, copy: type(True) = True, device=None) -> Array:
    """``x`` converted to ``dtype``; with ``copy=False`` the same array when nothing changes.
    Complex to real is refused (the standard leaves it out; NumPy would drop the imaginary
    part)."""
    dtype = as_dtype(dtype)
    if x.dtype.kind == "c" and dtype.kind != "c":
        raise TypeError(f"astype from {x.dtype} to {dtype} would drop the imaginary part; take real() first")
    if device is not None and not tracing():
        x = x.to_device(device)
    if x.dtype == dtype:
        return np.copy(x) if copy else x
    return to_array(np.astype(x, dtype))
