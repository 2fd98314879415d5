"""Element types and tensor types: NumPy dtypes <-> MLIR element types, and reading the
shape and element type of values.

The mapping covers every dtype a StableHLO program of ours may hold: bool (i1), signed and
unsigned integers of 8-64 bits, float16, bfloat16, float32, float64, complex64 and
complex128. Element types with no NumPy dtype (f8 variants, index, odd integer widths) map
to None.
"""

from __future__ import annotations

from typing import Sequence

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

bfloat16 = np.dtype(ml_dtypes.bfloat16)

_FLOAT_TYPES = (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)


# -- NumPy dtype <-> MLIR element type --------------------------------------------------------
def element_type(dtype: np.dtype) -> ir.Type:
    """The MLIR element type of a NumPy dtype (needs an active ir.Context)."""
    dtype = np.dtype(dtype)
    k, size = dtype.kind, dtype.itemsize
    if k == "b":
        return ir.IntegerType.get_signless(1)
    if k == "i":
        return ir.IntegerType.get_signless(8 * size)
    if k == "u":
        return ir.IntegerType.get_unsigned(8 * size)
    if dtype == bfloat16:
        return ir.BF16Type.get()
    if k == "f" and size in (2, 4, 8):
        return {2: ir.F16Type, 4: ir.F32Type, 8: ir.F64Type}[size].get()
    if k == "c":
        return ir.ComplexType.get(element_type(np.dtype(f"f{size // 2}")))
    raise TypeError(f"no MLIR type for dtype {dtype}")


def np_dtype(t: ir.Type) -> np.dtype | None:
    """The NumPy dtype of an MLIR element type, or None where NumPy has none."""
    if isinstance(t, ir.IntegerType):
        w = t.width
        if w == 1:
            return np.dtype(np.bool_)
        if w not in (8, 16, 32, 64):
            return None
        return np.dtype(f"{'u' if t.is_unsigned else 'i'}{w // 8}")
    if isinstance(t, ir.BF16Type):
        return bfloat16
    if isinstance(t, (ir.F16Type, ir.F32Type, ir.F64Type)):
        return np.dtype(f"f{t.width // 8}")
    if isinstance(t, ir.ComplexType):
        part = np_dtype(t.element_type)
        if part is None or part == bfloat16 or part.kind != "f" or part.itemsize < 4:
            return None
        return np.dtype(f"c{2 * part.itemsize}")
    return None


def from_element_type(t: ir.Type) -> np.dtype:
    """``np_dtype`` that raises TypeError where NumPy has no dtype."""
    dt = np_dtype(t)
    if dt is None:
        raise TypeError(f"no NumPy dtype for MLIR type {t}")
    return dt


# -- element type predicates ------------------------------------------------------------------
def is_float_type(t: ir.Type) -> bool:
    """float16, bfloat16, float32 or float64: the IEEE float types NumPy has (rewrites that
    reason about NaN, infinities and signed zeros are checked on these only)."""
    return isinstance(t, _FLOAT_TYPES)


def is_any_float_type(t: ir.Type) -> bool:
    """Any real floating-point element type, the f8 variants included."""
    return isinstance(t, ir.FloatType) and not isinstance(t, ir.ComplexType)


def is_complex_type(t: ir.Type) -> bool:
    return isinstance(t, ir.ComplexType)


def is_integer_type(t: ir.Type) -> bool:
    """Integers of any width and signedness, bool (i1) included."""
    return isinstance(t, ir.IntegerType)


def is_inexact_type(t: ir.Type) -> bool:
    """Any float (f8 included) or complex: the element types that carry derivatives."""
    return is_any_float_type(t) or is_complex_type(t)


def complex_part_type(t: ir.Type) -> ir.Type:
    """The real element type of a complex element type."""
    return ir.ComplexType(t).element_type


def i1() -> ir.Type:
    return ir.IntegerType.get_signless(1)


def i32() -> ir.Type:
    return ir.IntegerType.get_signless(32)


def i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


# -- tensor types and values ------------------------------------------------------------------
def ranked(shape: Sequence[int], elem: ir.Type) -> ir.RankedTensorType:
    """``tensor<shape x elem>``."""
    return ir.RankedTensorType.get([int(s) for s in shape], elem)


def tensor_type(v: ir.Value | ir.Type) -> ir.RankedTensorType:
    """The ranked tensor type of a value (or a type viewed as one)."""
    t = v if isinstance(v, ir.Type) else v.type
    # (types come downcast: casting again costs as much as reading the type)
    return t if type(t) is ir.RankedTensorType else ir.RankedTensorType(t)


def shape_of(v: ir.Value | ir.Type) -> tuple[int, ...]:
    return tuple(tensor_type(v).shape)


def rank_of(v: ir.Value | ir.Type) -> int:
    return tensor_type(v).rank


def element_type_of(v: ir.Value | ir.Type) -> ir.Type:
    return tensor_type(v).element_type


def spec_of(t: ir.Type) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of a ranked tensor type (TypeError where NumPy has no dtype)."""
    rt = ir.RankedTensorType(t)
    return tuple(rt.shape), from_element_type(rt.element_type)


def like(v: ir.Value | ir.Type, shape: Sequence[int] | None = None,
         elem: ir.Type | None = None) -> ir.RankedTensorType:
    """``v``'s tensor type with the shape and/or element type replaced."""
    t = tensor_type(v)
    return ranked(t.shape if shape is None else shape, t.element_type if elem is None else elem)


def num_elements(v: ir.Value | ir.Type) -> int:
    n = 1
    for d in tensor_type(v).shape:
        n *= d
    return n


def is_ranked_tensor(t: ir.Type) -> bool:
    """A ranked tensor type (not a token, tuple or unranked tensor); types come downcast."""
    return isinstance(t, ir.RankedTensorType)


def is_inexact_tensor(t: ir.Type) -> bool:
    """A ranked tensor of float or complex elements (those carry derivatives; integers,
    booleans and tokens do not)."""
    return isinstance(t, ir.RankedTensorType) and is_inexact_type(t.element_type)


_NAMED = {"i1": np.dtype(np.bool_), "f16": np.dtype(np.float16), "bf16": bfloat16, "f32": np.dtype(np.float32),
          "f64": np.dtype(np.float64), "complex<f32>": np.dtype(np.complex64),
          "complex<f64>": np.dtype(np.complex128)}
_NAMED.update({f"{p}{w}": np.dtype(f"{k}{w // 8}") for w in (8, 16, 32, 64) for p, k in (("i", "i"), ("ui", "u"))})


def dtype_from_name(name: str) -> np.dtype | None:
    """The NumPy dtype of an element type written as MLIR prints it (``"f32"``, ``"ui8"``,
    ``"i1"``...), or None; for code that holds types as text (the e-graph language)."""
    return _NAMED.get(name)
