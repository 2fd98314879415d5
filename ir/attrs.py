"""Attributes: building the ones StableHLO ops take, reading them back, and constants
(``DenseElementsAttr``) in both directions, exactly for every element type we handle.

Pitfall (jaxlib 0.10): reading the ``value`` attribute of a complex-typed constant raises
TypeError (the bindings cannot downcast it), and touching it through a NamedAttribute aborts
the process; ``read_constant`` and friends therefore never read complex constants.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from .types import bfloat16, element_type, is_complex_type, np_dtype, ranked, tensor_type
from .values import defining_op


# -- simple attributes ------------------------------------------------------------------------
def i64_array(values: Sequence[int]) -> ir.Attribute:
    """``array<i64: ...>`` (DenseI64ArrayAttr: permutations, dimensions, slice bounds)."""
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def i64_attr(v: int) -> ir.Attribute:
    """An ``i64`` IntegerAttr (``dimension``, ``iota_dimension``...)."""
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(v))


def bool_attr(v: bool) -> ir.Attribute:
    return ir.BoolAttr.get(bool(v))


def i64_list(attr: ir.Attribute | None) -> list[int]:
    """The integers of an ``array<i64>`` or a dense integer elements attribute ([] for None)."""
    if attr is None:
        return []
    if isinstance(attr, ir.DenseI64ArrayAttr):
        return list(attr)
    if isinstance(attr, ir.DenseIntElementsAttr):
        return [int(x) for x in attr]
    return list(ir.DenseI64ArrayAttr(attr))


def int_attr_value(attr: ir.Attribute) -> int:
    return ir.IntegerAttr(attr).value


def copy_attrs(op) -> dict:
    """The op's attributes as a dict name -> Attribute (not for complex constants: see the
    module docstring)."""
    attrs = op.attributes
    return {n: attrs[n] for n in attrs}


def padding_attr(padding: Sequence[tuple[int, int]]) -> ir.Attribute:
    """The ``padding`` attribute of reduce_window / convolution: an (n, 2) i64 tensor."""
    return ir.DenseIntElementsAttr.get(np.asarray(padding, dtype=np.int64).reshape(len(padding), 2))


def compare_parts(op) -> tuple[str, str | None]:
    """(direction, compare_type or None) of a ``stablehlo.compare``, e.g. ("LT", "SIGNED")."""
    direction = hlo.ComparisonDirectionAttr(op.attributes["comparison_direction"]).value
    ct = None
    if "compare_type" in op.attributes:
        ct = hlo.ComparisonTypeAttr(op.attributes["compare_type"]).value
    return direction, ct


def compare_attrs(direction: str, compare_type: str | None = None) -> dict:
    """The attributes of a ``stablehlo.compare``."""
    attrs = {"comparison_direction": hlo.ComparisonDirectionAttr.get(direction)}
    if compare_type is not None:
        attrs["compare_type"] = hlo.ComparisonTypeAttr.get(compare_type)
    return attrs


# -- constants: NumPy -> attribute -------------------------------------------------------------
def _uniform(flat: np.ndarray) -> bool:
    """All elements have the same bits (so -0.0 differs from 0.0, NaN payloads are kept)."""
    b = flat.view(np.uint8).reshape(flat.size, flat.dtype.itemsize)
    return bool((b == b[0]).all())


def dense_attr(array, type_: ir.RankedTensorType | None = None) -> ir.DenseElementsAttr:
    """A DenseElementsAttr holding ``array`` (a splat when all elements have the same bits).

    ``type_`` gives the tensor type (``array`` is converted to its element's dtype and
    broadcast to its shape); without it the type follows the array's dtype and shape."""
    if type_ is None:
        array = np.asarray(array)
        type_ = ranked(array.shape, element_type(array.dtype))
    et = type_.element_type
    dt = np_dtype(et)
    if dt is None:
        raise TypeError(f"cannot build a constant of element type {et}")
    shape = list(type_.shape)
    arr = np.asarray(array)
    if arr.dtype != dt:
        arr = arr.astype(dt)
    flat = np.ascontiguousarray(arr).reshape(-1)
    if flat.size > 1 and _uniform(flat):
        flat = flat[:1]
    if dt.kind == "b":
        return ir.DenseElementsAttr.get(flat, shape=shape)  # i1 inferred from bool
    if dt == bfloat16:
        flat = flat.view(np.uint16)
    elif dt.kind == "c":
        flat = flat.view(np.float32 if dt.itemsize == 8 else np.float64)
    elif dt.kind == "u":
        flat = flat.view(f"i{dt.itemsize}")
    return ir.DenseElementsAttr.get(flat, type=et, shape=shape)


def splat_attr(value, type_: ir.RankedTensorType) -> ir.DenseElementsAttr:
    """A splat DenseElementsAttr of ``type_`` filled with the Python scalar ``value``."""
    return dense_attr(np.asarray(value), type_) if is_complex_type(type_.element_type) else \
        ir.DenseElementsAttr.get_splat(type_, _scalar_attr(value, type_.element_type))


def _scalar_attr(value, et: ir.Type) -> ir.Attribute:
    if isinstance(et, ir.IntegerType):
        return ir.BoolAttr.get(bool(value)) if et.width == 1 else ir.IntegerAttr.get(et, int(value))
    return ir.FloatAttr.get(et, float(value))


# -- constants: attribute -> NumPy -------------------------------------------------------------
def _constant_attr(v: ir.Value) -> ir.DenseElementsAttr | None:
    """The dense ``value`` attribute of a ``stablehlo.constant`` defining ``v`` (None for
    anything else, complex constants included: see the module docstring)."""
    op = defining_op(v)
    if op is None or op.operation.name != "stablehlo.constant":
        return None
    if is_complex_type(tensor_type(v).element_type):
        return None
    attr = op.attributes["value"]
    return attr if isinstance(attr, ir.DenseElementsAttr) else None


def same_constant(a: ir.Value, b: ir.Value) -> bool:
    """``a`` and ``b`` are constants with equal values (False when unknown, e.g. complex)."""
    x, y = _constant_attr(a), _constant_attr(b)
    return x is not None and y is not None and x == y


def is_splat_constant(v: ir.Value) -> bool:
    attr = _constant_attr(v)
    return attr is not None and attr.is_splat


def splat_value(v: ir.Value):
    """The Python scalar (bool, int or float) of a splat ``stablehlo.constant``, or None."""
    attr = _constant_attr(v)
    if attr is None or not attr.is_splat:
        return None
    s = attr.get_splat_value()  # bindings downcast: FloatAttr / IntegerAttr / BoolAttr
    if isinstance(s, (ir.FloatAttr, ir.IntegerAttr, ir.BoolAttr)):
        return s.value
    return None


def read_constant(v: ir.Value, max_elements: int | None = None) -> np.ndarray | None:
    """The value of a ``stablehlo.constant`` as a NumPy array of the element's dtype, or None
    (not a constant, an element type NumPy lacks, complex, a non-splat bfloat16 constant, or a
    non-splat bigger than ``max_elements``). A splat is returned as a read-only broadcast view (not materialized)."""
    attr = _constant_attr(v)
    if attr is None:
        return None
    tt = ir.RankedTensorType(attr.type)
    dt = np_dtype(tt.element_type)
    if dt is None:
        return None
    shape = tuple(tt.shape)
    if attr.is_splat:
        s = attr.get_splat_value()
        if not isinstance(s, (ir.FloatAttr, ir.IntegerAttr, ir.BoolAttr)):
            return None
        return np.broadcast_to(np.asarray(s.value).astype(dt), shape)
    if max_elements is not None and math.prod(shape) > max_elements:
        return None
    if dt == bfloat16:  # neither the buffer protocol nor the element accessors know bf16
        return None
    return np.array(attr).astype(dt, copy=False).reshape(shape)


def scalar_value(v: ir.Value):
    """The Python scalar ``v`` is filled with, when ``v`` is a splat constant, possibly seen
    through ``broadcast_in_dim`` / ``reshape`` / ``transpose`` (which keep a splat a splat)."""
    for _ in range(8):
        s = splat_value(v)
        if s is not None:
            return s
        op = defining_op(v)
        if op is None or op.operation.name not in (
                "stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.transpose"):
            return None
        v = op.operands[0]
    return None


def is_splat(v: ir.Value, value) -> bool:
    """``v`` is a splat constant equal to ``value`` (same sign for a float zero)."""
    s = splat_value(v)
    return s is not None and s == value and not (isinstance(s, float) and np.signbit(s) != np.signbit(value))


def is_scalar_value(v: ir.Value, value) -> bool:
    """``v`` is everywhere ``value`` (same sign for a float zero, NaN matches NaN); sees
    through broadcasts."""
    return scalar_matches(scalar_value(v), value)


def scalar_matches(s, value) -> bool:
    """The scalar ``s`` (None: unknown) is ``value``, as ``is_scalar_value`` compares."""
    if s is None:
        return False
    if isinstance(s, float) or isinstance(value, float):
        s, value = float(s), float(value)
        if np.isnan(value):
            return bool(np.isnan(s))
        return s == value and bool(np.signbit(s)) == bool(np.signbit(value))
    return s == value


def all_ones_value(et: ir.Type):
    """The all-bits-set value of an integer element type (True, -1 or the unsigned max)."""
    w = ir.IntegerType(et).width
    if w == 1:
        return True
    return (1 << w) - 1 if ir.IntegerType(et).is_unsigned else -1


def top_level_groups(text: str, open_ch: str, close_ch: str, quote: str | None = None) -> list[str]:
    """The top-level bracketed parts of ``text`` (an attribute's or a command's text), in
    order: ``"<a<b>> x <c>"`` with ``<``/``>`` gives ``["<a<b>>", "<c>"]``. Brackets inside
    ``quote`` characters do not count; a close with nothing open is passed over."""
    parts, depth, start, quoted = [], 0, 0, False
    for i, ch in enumerate(text):
        if quote is not None and ch == quote:
            quoted = not quoted
        elif quoted:
            continue
        elif ch == open_ch:
            if depth == 0:
                start = i
            depth += 1
        elif ch == close_ch and depth > 0:
            depth -= 1
            if depth == 0:
                parts.append(text[start:i + 1])
    return parts
