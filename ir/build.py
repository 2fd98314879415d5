"""Builders of StableHLO (and CHLO) ops on ``ir.Value``s: one function per op, its result type
computed by the op's shape rule (``reactant.ir.shapes``), never by MLIR inference.

Every builder takes keyword-only ``loc`` and ``ip`` (``None``: the ambient ``ir.Location``
and ``ir.InsertionPoint``, as inside ``with rewriter.ip:`` in a rewrite pattern) and returns
the result value. Builders of data-movement ops return their operand unchanged when the op
would be an identity (a reshape to the same shape, an identity permutation, a full slice,
zero padding, a single-operand concatenate, a reduction over no dimension), so callers never
emit no-op ops.

Ops with a region take its ``Body``: an op name (a reduction's combiner) or a callable that
builds the block's ops; the tracer passes callables that trace the user's Python body.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from . import decompositions as D
from . import shapes
from .attrs import bool_attr, compare_attrs, dense_attr, i64_array, i64_attr, padding_attr, splat_attr
from .types import (complex_part_type, element_type, element_type_of, from_element_type, i1,
                    is_any_float_type, is_complex_type, ranked, shape_of, tensor_type)

Loc = ir.Location | None
IP = ir.InsertionPoint | None


# -- generic -----------------------------------------------------------------------------------
def create(name: str, operands: Sequence[ir.Value], result_types: Sequence[ir.Type],
           attributes: dict | None = None, *, regions: int = 0, loc: Loc = None, ip: IP = None) -> ir.Operation:
    """``ir.Operation.create`` (2-3x faster than the generated builders)."""
    return ir.Operation.create(name, results=list(result_types), operands=list(operands),
                               attributes=attributes or None, regions=regions, loc=loc, ip=ip)


def op1(name: str, operands: Sequence[ir.Value], result_type: ir.Type, attributes: dict | None = None,
        *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """A one-result op with an explicit result type; returns the result."""
    return create(name, operands, [result_type], attributes, loc=loc, ip=ip).result


def elementwise(name: str, operands: Sequence[ir.Value], *, elem: ir.Type | None = None,
                loc: Loc = None, ip: IP = None) -> ir.Value:
    """An elementwise op: the first operand's shape, its element type unless ``elem``."""
    t = tensor_type(operands[0])
    rt = t if elem is None else ranked(t.shape, elem)
    return op1(name, operands, rt, loc=loc, ip=ip)


# a region's body: an op name (a reduction's combiner: result i combines block arguments i and
# n + i, n half their number) or a callable that builds the block's ops and returns the values
# the block returns
Body = str | Callable[[ir.Block], Sequence[ir.Value]]


def region_body(region: ir.Region, arg_types: Sequence[ir.Type], body: Body, *, loc: Loc = None) -> ir.Block:
    """Fill ``region`` with one block of arguments ``arg_types`` ending in ``stablehlo.return``
    of what ``body`` gives (a callable ``body(block)`` runs with the block's end as the ambient
    insertion point)."""
    blk = ir.Block.create_at_start(region, list(arg_types))
    with ir.InsertionPoint(blk):
        if isinstance(body, str):
            n = len(arg_types) // 2
            outs = [op1(body, [blk.arguments[i], blk.arguments[n + i]], arg_types[i], loc=loc) for i in range(n)]
        else:
            outs = list(body(blk))
        create("stablehlo.return", outs, [], loc=loc)
    return blk


def scalar_body(region: ir.Region, elem: ir.Type, name: str, n: int = 1, *, loc: Loc = None) -> ir.Block:
    """Fill ``region`` with the body of a reduction over ``n`` operands combining each pair of
    scalars with op ``name`` (``reduce``, ``reduce_window``, ``scatter``...)."""
    return region_body(region, [ranked([], elem)] * (2 * n), name, loc=loc)


# -- constants ---------------------------------------------------------------------------------
def constant(array, type_: ir.RankedTensorType | None = None, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """A ``stablehlo.constant`` holding ``array`` (converted to ``type_``'s element type and
    shape when given; a splat when all elements are equal)."""
    attr = dense_attr(array, type_)
    return op1("stablehlo.constant", [], attr.type, {"value": attr}, loc=loc, ip=ip)


def full(value, type_: ir.Type, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """A splat constant of tensor type ``type_`` filled with the Python scalar ``value``."""
    t = tensor_type(type_)
    return op1("stablehlo.constant", [], t, {"value": splat_attr(value, t)}, loc=loc, ip=ip)


def zeros(type_: ir.Type, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    return full(0, type_, loc=loc, ip=ip)


def full_like(v: ir.Value, value, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    return full(value, v.type, loc=loc, ip=ip)


def zeros_like(v: ir.Value, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    return full(0, v.type, loc=loc, ip=ip)


def scalar(value, elem: ir.Type, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """A rank-0 constant of element type ``elem``."""
    return full(value, ranked([], elem), loc=loc, ip=ip)


def iota(type_: ir.Type, dim: int, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """0, 1, 2... along ``dim`` of ``type_``."""
    return op1("stablehlo.iota", [], type_, {"iota_dimension": i64_attr(dim)}, loc=loc, ip=ip)


# -- elementwise -------------------------------------------------------------------------------
def _named(build, name: str, doc: str = ""):
    """``build`` (a lambda over operand values, ``loc`` and ``ip``) named and typed as op ``name``'s builder."""
    build.__name__ = name.split(".")[1]
    build.__doc__ = f"``{name}``{doc}."
    operands = build.__code__.co_varnames[:build.__code__.co_argcount]
    build.__annotations__ = {**{a: ir.Value for a in operands}, "loc": Loc, "ip": IP, "return": ir.Value}
    return build


def _unary(name: str):
    return _named(lambda x, *, loc=None, ip=None: elementwise(name, [x], loc=loc, ip=ip), name)


def _binary(name: str):
    return _named(lambda x, y, *, loc=None, ip=None: elementwise(name, [x, y], loc=loc, ip=ip), name)


def _predicate(name: str):
    return _named(lambda x, *, loc=None, ip=None: elementwise(name, [x], elem=i1(), loc=loc, ip=ip), name,
                  " (an i1 per element)")


add = _binary("stablehlo.add")
subtract = _binary("stablehlo.subtract")
multiply = _binary("stablehlo.multiply")
divide = _binary("stablehlo.divide")
remainder = _binary("stablehlo.remainder")
maximum = _binary("stablehlo.maximum")
minimum = _binary("stablehlo.minimum")
power = _binary("stablehlo.power")
atan2 = _binary("stablehlo.atan2")
and_ = _binary("stablehlo.and")
or_ = _binary("stablehlo.or")
xor = _binary("stablehlo.xor")
negate = _unary("stablehlo.negate")
exponential = _unary("stablehlo.exponential")
exponential_minus_one = _unary("stablehlo.exponential_minus_one")
log = _unary("stablehlo.log")
log_plus_one = _unary("stablehlo.log_plus_one")
sqrt = _unary("stablehlo.sqrt")
rsqrt = _unary("stablehlo.rsqrt")
cbrt = _unary("stablehlo.cbrt")
sine = _unary("stablehlo.sine")
cosine = _unary("stablehlo.cosine")
tan = _unary("stablehlo.tan")
tanh = _unary("stablehlo.tanh")
logistic = _unary("stablehlo.logistic")
sign = _unary("stablehlo.sign")
floor = _unary("stablehlo.floor")
ceil = _unary("stablehlo.ceil")
round_nearest_even = _unary("stablehlo.round_nearest_even")
round_nearest_afz = _unary("stablehlo.round_nearest_afz")
not_ = _unary("stablehlo.not")
popcnt = _unary("stablehlo.popcnt")
count_leading_zeros = _unary("stablehlo.count_leading_zeros")
shift_left = _binary("stablehlo.shift_left")
shift_right_arithmetic = _binary("stablehlo.shift_right_arithmetic")
shift_right_logical = _binary("stablehlo.shift_right_logical")

# CHLO: ops XLA expands into StableHLO when it compiles (the special functions)
sinh = _unary("chlo.sinh")
cosh = _unary("chlo.cosh")
asin = _unary("chlo.asin")
acos = _unary("chlo.acos")
atan = _unary("chlo.atan")
asinh = _unary("chlo.asinh")
acosh = _unary("chlo.acosh")
atanh = _unary("chlo.atanh")
erf = _unary("chlo.erf")
erfc = _unary("chlo.erfc")
erf_inv = _unary("chlo.erf_inv")
lgamma = _unary("chlo.lgamma")
digamma = _unary("chlo.digamma")
conj = _unary("chlo.conj")
next_after = _binary("chlo.next_after")
polygamma = _binary("chlo.polygamma")
zeta = _binary("chlo.zeta")


is_finite = _predicate("stablehlo.is_finite")
is_inf = _predicate("chlo.is_inf")
is_pos_inf = _predicate("chlo.is_pos_inf")
is_neg_inf = _predicate("chlo.is_neg_inf")


def abs(x: ir.Value, *, loc: Loc = None, ip: IP = None) -> ir.Value:  # noqa: A001
    """``stablehlo.abs`` (of a complex value: its real magnitude)."""
    et = element_type_of(x)
    return elementwise("stablehlo.abs", [x], elem=complex_part_type(et) if is_complex_type(et) else None,
                       loc=loc, ip=ip)


def real(x: ir.Value, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """``stablehlo.real`` (a real value is its own real part)."""
    et = element_type_of(x)
    if not is_complex_type(et):
        return x
    return elementwise("stablehlo.real", [x], elem=complex_part_type(et), loc=loc, ip=ip)


def imag(x: ir.Value, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    return elementwise("stablehlo.imag", [x], elem=complex_part_type(element_type_of(x)), loc=loc, ip=ip)


def complex_(re: ir.Value, im: ir.Value, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    return elementwise("stablehlo.complex", [re, im], elem=ir.ComplexType.get(element_type_of(re)),
                       loc=loc, ip=ip)


def default_compare_type(elem: ir.Type) -> str:
    """The ``compare_type`` StableHLO gives an element type: FLOAT, UNSIGNED (bool too) or SIGNED."""
    if is_any_float_type(elem) or is_complex_type(elem):
        return "FLOAT"
    if isinstance(elem, ir.IntegerType) and (elem.is_unsigned or elem.width == 1):
        return "UNSIGNED"
    return "SIGNED"


_DEFAULT = object()


def compare(x: ir.Value, y: ir.Value, direction: str, compare_type=_DEFAULT, *,
            loc: Loc = None, ip: IP = None) -> ir.Value:
    """``stablehlo.compare`` (i1 result). ``compare_type`` defaults to the element type's;
    ``None`` leaves the attribute out."""
    if compare_type is _DEFAULT:
        compare_type = default_compare_type(element_type_of(x))
    return op1("stablehlo.compare", [x, y], ranked(shape_of(x), i1()), compare_attrs(direction, compare_type),
               loc=loc, ip=ip)


def select(pred: ir.Value, on_true: ir.Value, on_false: ir.Value, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    return op1("stablehlo.select", [pred, on_true, on_false], on_true.type, loc=loc, ip=ip)


def clamp(lo: ir.Value, x: ir.Value, hi: ir.Value, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    return op1("stablehlo.clamp", [lo, x, hi], x.type, loc=loc, ip=ip)


def convert(x: ir.Value, elem: ir.Type, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """``stablehlo.convert`` to element type ``elem`` (``x`` itself if it has it already)."""
    if element_type_of(x) == elem:
        return x
    return elementwise("stablehlo.convert", [x], elem=elem, loc=loc, ip=ip)


def bitcast_convert(x: ir.Value, elem: ir.Type, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """``stablehlo.bitcast_convert`` to an element type of the same width (same shape)."""
    return elementwise("stablehlo.bitcast_convert", [x], elem=elem, loc=loc, ip=ip)


# -- data movement -----------------------------------------------------------------------------
def broadcast_in_dim(x: ir.Value, shape: Sequence[int], dims: Sequence[int], *,
                     loc: Loc = None, ip: IP = None) -> ir.Value:
    """Operand dim i goes to result dim ``dims[i]`` of ``shape``."""
    shape = [int(s) for s in shape]
    dims = [int(d) for d in dims]
    if list(shape_of(x)) == shape and dims == list(range(len(shape))):
        return x
    return op1("stablehlo.broadcast_in_dim", [x], ranked(shape, element_type_of(x)),
               {"broadcast_dimensions": i64_array(dims)}, loc=loc, ip=ip)


def broadcast_to(x: ir.Value, type_or_shape, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """A rank-0 (or same-rank) ``x`` broadcast to a shape (or a tensor type's shape)."""
    shape = list(tensor_type(type_or_shape).shape) if isinstance(type_or_shape, ir.Type) else list(type_or_shape)
    r = len(shape_of(x))
    return broadcast_in_dim(x, shape, [] if r == 0 else list(range(r)), loc=loc, ip=ip)


def reshape(x: ir.Value, shape: Sequence[int], *, loc: Loc = None, ip: IP = None) -> ir.Value:
    shape = [int(s) for s in shape]
    if list(shape_of(x)) == shape:
        return x
    return op1("stablehlo.reshape", [x], ranked(shape, element_type_of(x)), loc=loc, ip=ip)


def transpose(x: ir.Value, perm: Sequence[int], *, loc: Loc = None, ip: IP = None) -> ir.Value:
    perm = [int(p) for p in perm]
    if perm == list(range(len(perm))):
        return x
    return op1("stablehlo.transpose", [x], ranked(shapes.transpose(shape_of(x), perm), element_type_of(x)),
               {"permutation": i64_array(perm)}, loc=loc, ip=ip)


def inverse_permutation(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[int(p)] = i
    return inv


def slice(x: ir.Value, start: Sequence[int], limit: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """``stablehlo.slice`` with static bounds (limit exclusive)."""
    shape = shape_of(x)
    strides = [1] * len(shape) if strides is None else [int(t) for t in strides]
    start, limit = [int(s) for s in start], [int(e) for e in limit]
    out = shapes.slice(shape, start, limit, strides)
    if out == shape and not any(start):
        return x
    return op1("stablehlo.slice", [x], ranked(out, element_type_of(x)),
               {"start_indices": i64_array(start), "limit_indices": i64_array(limit),
                "strides": i64_array(strides)}, loc=loc, ip=ip)


def slice_in_dim(x: ir.Value, start: int, limit: int, dim: int, stride: int = 1, *,
                 loc: Loc = None, ip: IP = None) -> ir.Value:
    """A slice along one dimension."""
    s = shape_of(x)
    st, lm, sd = [0] * len(s), list(s), [1] * len(s)
    st[dim], lm[dim], sd[dim] = start, limit, stride
    return slice(x, st, lm, sd, loc=loc, ip=ip)


def dynamic_slice(x: ir.Value, starts: Sequence[ir.Value], sizes: Sequence[int], *,
                  loc: Loc = None, ip: IP = None) -> ir.Value:
    """Slice of ``sizes`` at scalar integer ``starts`` (clamped into range)."""
    return op1("stablehlo.dynamic_slice", [x, *starts], ranked(sizes, element_type_of(x)),
               {"slice_sizes": i64_array(sizes)}, loc=loc, ip=ip)


def dynamic_update_slice(x: ir.Value, update: ir.Value, starts: Sequence[ir.Value], *,
                         loc: Loc = None, ip: IP = None) -> ir.Value:
    return op1("stablehlo.dynamic_update_slice", [x, update, *starts], x.type, loc=loc, ip=ip)


def pad(x: ir.Value, padding_value: ir.Value, low: Sequence[int], high: Sequence[int],
        interior: Sequence[int] | None = None, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """``stablehlo.pad`` (negative low/high crop)."""
    interior = [0] * len(low) if interior is None else [int(i) for i in interior]
    low, high = [int(p) for p in low], [int(p) for p in high]
    if not any(low) and not any(high) and not any(interior):
        return x
    return op1("stablehlo.pad", [x, padding_value],
               ranked(shapes.pad(shape_of(x), low, high, interior), element_type_of(x)),
               {"edge_padding_low": i64_array(low), "edge_padding_high": i64_array(high),
                "interior_padding": i64_array(interior)}, loc=loc, ip=ip)


def concatenate(xs: Sequence[ir.Value], dim: int, *, loc: Loc = None, ip: IP = None) -> ir.Value:
    xs = list(xs)
    if len(xs) == 1:
        return xs[0]
    out = shapes.concatenate([shape_of(x) for x in xs], dim)
    return op1("stablehlo.concatenate", xs, ranked(out, element_type_of(xs[0])), {"dimension": i64_attr(dim)},
               loc=loc, ip=ip)


def reverse(x: ir.Value, dims: Sequence[int], *, loc: Loc = None, ip: IP = None) -> ir.Value:
    if not len(dims):
        return x
    return op1("stablehlo.reverse", [x], x.type, {"dimensions": i64_array(dims)}, loc=loc, ip=ip)


# -- reductions and contractions ---------------------------------------------------------------
def _scalars(xs: Sequence[ir.Value]) -> list[ir.Type]:
    """The rank-0 types of the elements of ``xs`` (a region's arguments)."""
    return [ranked([], element_type_of(x)) for x in xs]


def variadic_reduce(xs: Sequence[ir.Value], inits: Sequence[ir.Value], dims: Sequence[int], body: Body, *,
                    loc: Loc = None, ip: IP = None) -> list[ir.Value]:
    """``stablehlo.reduce`` of same-shaped ``xs`` over ``dims`` (none: still an op, since the
    body combines every element with the init values); the body combines scalars
    ``(acc..., x...)`` into new accumulators."""
    dims = sorted(int(d) for d in dims)
    shape = shapes.reduce(shape_of(xs[0]), dims)
    op = create("stablehlo.reduce", [*xs, *inits], [ranked(shape, element_type_of(x)) for x in xs],
                {"dimensions": i64_array(dims)}, regions=1, loc=loc, ip=ip)
    scal = _scalars(xs)
    region_body(op.regions[0], scal + scal, body, loc=loc)
    return list(op.results)


def reduce(x: ir.Value, init: ir.Value, dims: Sequence[int], kind: str = "stablehlo.add", *,
           loc: Loc = None, ip: IP = None) -> ir.Value:
    """A single-input ``stablehlo.reduce`` of ``x`` over ``dims`` whose body is op ``kind``
    (``init`` its identity: over no dims, ``x`` itself)."""
    dims = sorted(int(d) for d in dims)
    if not dims:
        return x
    return variadic_reduce([x], [init], dims, kind, loc=loc, ip=ip)[0]


def reduce_sum(x: ir.Value, dims: Sequence[int], *, loc: Loc = None, ip: IP = None) -> ir.Value:
    dims = list(dims)
    if not dims:
        return x
    return reduce(x, scalar(0, element_type_of(x), loc=loc, ip=ip), dims, "stablehlo.add", loc=loc, ip=ip)


def reduce_window_attrs(window: Sequence[int], strides: Sequence[int], padding: Sequence[tuple[int, int]],
                        base_dilations: Sequence[int], window_dilations: Sequence[int]) -> dict:
    return {"window_dimensions": i64_array(window), "window_strides": i64_array(strides),
            "base_dilations": i64_array(base_dilations), "window_dilations": i64_array(window_dilations),
            "padding": padding_attr(padding)}


def variadic_reduce_window(xs: Sequence[ir.Value], inits: Sequence[ir.Value], window: Sequence[int],
                           strides: Sequence[int], base_dilations: Sequence[int], window_dilations: Sequence[int],
                           padding: Sequence[tuple[int, int]], body: Body, *,
                           loc: Loc = None, ip: IP = None) -> list[ir.Value]:
    """``stablehlo.reduce_window`` of same-shaped ``xs``: a reduction (the body, as for
    ``variadic_reduce``) over every strided, dilated, padded window."""
    out = shapes.reduce_window(shape_of(xs[0]), window, strides, padding, base_dilations, window_dilations)
    op = create("stablehlo.reduce_window", [*xs, *inits], [ranked(out, element_type_of(x)) for x in xs],
                reduce_window_attrs(window, strides, padding, base_dilations, window_dilations), regions=1,
                loc=loc, ip=ip)
    scal = _scalars(xs)
    region_body(op.regions[0], scal + scal, body, loc=loc)
    return list(op.results)


def reduce_window(x: ir.Value, init: ir.Value, window: Sequence[int], strides: Sequence[int],
                  base_dilations: Sequence[int], window_dilations: Sequence[int],
                  padding: Sequence[tuple[int, int]], kind: str = "stablehlo.add", *,
                  loc: Loc = None, ip: IP = None) -> ir.Value:
    """A single-input ``stablehlo.reduce_window`` whose body is op ``kind``."""
    return variadic_reduce_window([x], [init], window, strides, base_dilations, window_dilations, padding, kind,
                                  loc=loc, ip=ip)[0]


def sort(xs: Sequence[ir.Value], dim: int, comparator: Body, *, stable: bool = True,
         loc: Loc = None, ip: IP = None) -> list[ir.Value]:
    """``stablehlo.sort`` of same-shaped ``xs`` along ``dim``; the comparator's block takes two
    scalars per operand ``(a0, b0, a1, b1...)`` and returns an i1: whether a goes before b."""
    op = create("stablehlo.sort", xs, [x.type for x in xs],
                {"dimension": i64_attr(dim), "is_stable": bool_attr(stable)}, regions=1, loc=loc, ip=ip)
    region_body(op.regions[0], [t for t in _scalars(xs) for _ in range(2)], comparator, loc=loc)
    return list(op.results)


def dot_dimension_numbers(lb: Sequence[int], rb: Sequence[int], lc: Sequence[int], rc: Sequence[int]):
    return hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[int(d) for d in lb], rhs_batching_dimensions=[int(d) for d in rb],
        lhs_contracting_dimensions=[int(d) for d in lc], rhs_contracting_dimensions=[int(d) for d in rc])


def dot_dims(op) -> tuple[list[int], list[int], list[int], list[int]]:
    """(lhs_batch, rhs_batch, lhs_contracting, rhs_contracting) of a ``stablehlo.dot_general``."""
    dn = hlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    return (list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions),
            list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions))


def dot_general(lhs: ir.Value, rhs: ir.Value, lb: Sequence[int], rb: Sequence[int], lc: Sequence[int],
                rc: Sequence[int], *, result_type: ir.Type | None = None, elem: ir.Type | None = None,
                like=None, precision=None, loc: Loc = None, ip: IP = None) -> ir.Value:
    """``stablehlo.dot_general``. The result type is computed (element type ``elem``, default
    the lhs's) unless ``result_type``; ``like`` (a dot_general op) lends its precision config
    and algorithm, ``precision`` sets a precision config (an attribute, or the name of one
    precision for both operands: ``"HIGHEST"``)."""
    if result_type is None:
        out = shapes.dot_general(shape_of(lhs), shape_of(rhs), lb, rb, lc, rc)
        result_type = ranked(out, elem or element_type_of(lhs))
    attrs = {"dot_dimension_numbers": dot_dimension_numbers(lb, rb, lc, rc)}
    if like is not None:
        for k in ("precision_config", "algorithm"):
            if k in like.attributes:
                attrs[k] = like.attributes[k]
    if isinstance(precision, str):
        p = hlo.PrecisionAttr.get(precision)
        precision = ir.ArrayAttr.get([p, p])
    if precision is not None:
        attrs["precision_config"] = precision
    return op1("stablehlo.dot_general", [lhs, rhs], result_type, attrs, loc=loc, ip=ip)


# -- gather and scatter ------------------------------------------------------------------------
def gather_dimension_numbers(*, offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim,
                             operand_batching_dims=(), start_indices_batching_dims=()):
    return hlo.GatherDimensionNumbers.get(
        offset_dims=list(offset_dims), collapsed_slice_dims=list(collapsed_slice_dims),
        operand_batching_dims=list(operand_batching_dims),
        start_indices_batching_dims=list(start_indices_batching_dims),
        start_index_map=list(start_index_map), index_vector_dim=int(index_vector_dim))


def scatter_dimension_numbers(*, update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
                              index_vector_dim, input_batching_dims=(), scatter_indices_batching_dims=()):
    return hlo.ScatterDimensionNumbers.get(
        update_window_dims=list(update_window_dims), inserted_window_dims=list(inserted_window_dims),
        input_batching_dims=list(input_batching_dims),
        scatter_indices_batching_dims=list(scatter_indices_batching_dims),
        scattered_dims_to_operand_dims=list(scatter_dims_to_operand_dims), index_vector_dim=int(index_vector_dim))


def gather(operand: ir.Value, indices: ir.Value, *, offset_dims, collapsed_slice_dims, start_index_map,
           index_vector_dim: int, slice_sizes, operand_batching_dims=(), start_indices_batching_dims=(),
           indices_are_sorted: bool = False, loc: Loc = None, ip: IP = None) -> ir.Value:
    """``stablehlo.gather``: slices of ``slice_sizes`` starting at each index vector."""
    out = shapes.gather(shape_of(operand), shape_of(indices), list(offset_dims), list(collapsed_slice_dims),
                        list(operand_batching_dims), index_vector_dim, list(slice_sizes))
    dn = gather_dimension_numbers(offset_dims=offset_dims, collapsed_slice_dims=collapsed_slice_dims,
                                  start_index_map=start_index_map, index_vector_dim=index_vector_dim,
                                  operand_batching_dims=operand_batching_dims,
                                  start_indices_batching_dims=start_indices_batching_dims)
    return op1("stablehlo.gather", [operand, indices], ranked(out, element_type_of(operand)),
               {"dimension_numbers": dn, "slice_sizes": i64_array(slice_sizes),
                "indices_are_sorted": bool_attr(indices_are_sorted)}, loc=loc, ip=ip)


def scatter(operand: ir.Value, indices: ir.Value, updates: ir.Value, *, update_window_dims,
            inserted_window_dims, scatter_dims_to_operand_dims, index_vector_dim: int,
            input_batching_dims=(), scatter_indices_batching_dims=(), combiner: Body | None = "stablehlo.add",
            indices_are_sorted: bool = False, unique_indices: bool = False, extra_attributes: dict | None = None,
            loc: Loc = None, ip: IP = None) -> ir.Value:
    """``stablehlo.scatter`` of one operand whose update region combines old and new (block
    arguments ``(old, new)``) with ``combiner`` (``None``: the new value replaces the old)."""
    dn = scatter_dimension_numbers(update_window_dims=update_window_dims,
                                   inserted_window_dims=inserted_window_dims,
                                   scatter_dims_to_operand_dims=scatter_dims_to_operand_dims,
                                   index_vector_dim=index_vector_dim, input_batching_dims=input_batching_dims,
                                   scatter_indices_batching_dims=scatter_indices_batching_dims)
    attrs = {"scatter_dimension_numbers": dn, "indices_are_sorted": bool_attr(indices_are_sorted),
             "unique_indices": bool_attr(unique_indices), **(extra_attributes or {})}
    op = create("stablehlo.scatter", [operand, indices, updates], [operand.type], attrs, regions=1, loc=loc, ip=ip)
    region_body(op.regions[0], _scalars([operand]) * 2, _overwrite if combiner is None else combiner, loc=loc)
    return op.result


def _overwrite(block: ir.Block) -> list[ir.Value]:
    return [block.arguments[1]]


def triangular_solve(a: ir.Value, b: ir.Value, *, left_side: bool, lower: bool, unit_diagonal: bool = False,
                     transpose_a: str = "NO_TRANSPOSE", loc: Loc = None, ip: IP = None) -> ir.Value:
    return op1("stablehlo.triangular_solve", [a, b], b.type,
               {"left_side": bool_attr(left_side), "lower": bool_attr(lower),
                "unit_diagonal": bool_attr(unit_diagonal), "transpose_a": hlo.TransposeAttr.get(transpose_a)},
               loc=loc, ip=ip)


def cholesky(a: ir.Value, *, lower: bool = True, loc: Loc = None, ip: IP = None) -> ir.Value:
    """``stablehlo.cholesky`` of (a batch of) positive definite matrices (NaN where it fails)."""
    return op1("stablehlo.cholesky", [a], a.type, {"lower": bool_attr(lower)}, loc=loc, ip=ip)


def decomposition(kind: str, operands: Sequence[ir.Value], options: dict, *,
                  loc: Loc = None, ip: IP = None) -> list[ir.Value]:
    """The marker ``stablehlo.custom_call @reactant.linalg.<kind>`` of a matrix decomposition
    (``reactant.ir.decompositions``: its shape rule and attributes)."""
    specs = D.result_specs(kind, [(shape_of(x), from_element_type(element_type_of(x))) for x in operands], options)
    types = [ranked(shape, element_type(dt)) for shape, dt in specs]
    return list(create("stablehlo.custom_call", operands, types, D.attributes(kind, options), loc=loc, ip=ip).results)


def rng_bit_generator(state: ir.Value, shape: Sequence[int], elem: ir.Type, algorithm: str = "THREE_FRY", *,
                      loc: Loc = None, ip: IP = None) -> tuple[ir.Value, ir.Value]:
    """``stablehlo.rng_bit_generator``: (the advanced state, random bits of ``shape`` and
    unsigned integer type ``elem``); the same state always gives the same bits."""
    op = create("stablehlo.rng_bit_generator", [state], [state.type, ranked(shape, elem)],
                {"rng_algorithm": ir.Attribute.parse(f"#stablehlo<rng_algorithm {algorithm}>")}, loc=loc, ip=ip)
    return op.results[0], op.results[1]


def fft(x: ir.Value, fft_type: str, lengths: Sequence[int], *, loc: Loc = None, ip: IP = None) -> ir.Value:
    """``stablehlo.fft`` over the last ``len(lengths)`` (1 to 3) dims: FFT/IFFT complex to complex,
    RFFT real to complex, IRFFT complex to real."""
    et = element_type_of(x)
    if fft_type == "RFFT":
        et = ir.ComplexType.get(et)
    elif fft_type == "IRFFT":
        et = complex_part_type(et)
    return op1("stablehlo.fft", [x], ranked(shapes.fft(shape_of(x), fft_type, lengths), et),
               {"fft_type": hlo.FftTypeAttr.get(fft_type), "fft_length": i64_array(lengths)}, loc=loc, ip=ip)


# -- collectives (SPMD: groups and pairs name logical device ids, i.e. partitions) -------------------
def _groups_attr(groups) -> ir.Attribute:
    g = np.asarray(groups, dtype=np.int64)
    return dense_attr(g, ir.RankedTensorType.get(list(g.shape), ir.IntegerType.get_signless(64)))


def _channel(handle: int) -> ir.Attribute:
    # type 1: DEVICE_TO_DEVICE; a channel makes the ids partition (not replica) ids
    return ir.Attribute.parse(f"#stablehlo.channel_handle<handle = {int(handle)}, type = 1>")


def all_reduce(x: ir.Value, groups, kind: str = "stablehlo.add", *, channel: int = 1,
               loc: Loc = None, ip: IP = None) -> ir.Value:
    """``x`` combined with op ``kind`` over the devices of each group."""
    op = create("stablehlo.all_reduce", [x], [x.type],
                {"replica_groups": _groups_attr(groups), "channel_handle": _channel(channel),
                 "use_global_device_ids": ir.UnitAttr.get()}, regions=1, loc=loc, ip=ip)
    scalar_body(op.regions[0], element_type_of(x), kind, loc=loc)
    return op.result


def all_gather(x: ir.Value, dim: int, groups, *, channel: int = 1, loc: Loc = None, ip: IP = None) -> ir.Value:
    """The blocks of a group's devices concatenated along ``dim`` (in group order)."""
    t = tensor_type(x)
    shape = shapes.all_gather(t.shape, dim, len(groups[0]))
    return op1("stablehlo.all_gather", [x], ranked(shape, t.element_type),
               {"all_gather_dim": i64_attr(dim), "replica_groups": _groups_attr(groups),
                "channel_handle": _channel(channel), "use_global_device_ids": ir.UnitAttr.get()}, loc=loc, ip=ip)


def reduce_scatter(x: ir.Value, dim: int, groups, kind: str = "stablehlo.add", *, channel: int = 1,
                   loc: Loc = None, ip: IP = None) -> ir.Value:
    """``x`` combined over a group's devices, device k keeping block k along ``dim``."""
    t = tensor_type(x)
    shape = shapes.reduce_scatter(t.shape, dim, len(groups[0]))
    op = create("stablehlo.reduce_scatter", [x], [ranked(shape, t.element_type)],
                {"scatter_dimension": i64_attr(dim), "replica_groups": _groups_attr(groups),
                 "channel_handle": _channel(channel), "use_global_device_ids": ir.UnitAttr.get()},
                regions=1, loc=loc, ip=ip)
    scalar_body(op.regions[0], t.element_type, kind, loc=loc)
    return op.result


def collective_permute(x: ir.Value, pairs, *, channel: int = 1, loc: Loc = None, ip: IP = None) -> ir.Value:
    """Device ``dst`` receives ``x`` of device ``src`` for each (src, dst) pair; zeros where
    no pair targets a device."""
    return op1("stablehlo.collective_permute", [x], x.type,
               {"source_target_pairs": _groups_attr(np.asarray(pairs, dtype=np.int64).reshape(-1, 2)),
                "channel_handle": _channel(channel)}, loc=loc, ip=ip)


def all_to_all(x: ir.Value, split_dim: int, concat_dim: int, groups, *, channel: int = 1,
               loc: Loc = None, ip: IP = None) -> ir.Value:
    """Block k of ``split_dim`` goes to the group's k-th device, which concatenates what it
    receives along ``concat_dim`` (in group order)."""
    t = tensor_type(x)
    n = len(groups[0])
    shape = shapes.all_to_all(t.shape, split_dim, concat_dim, n)
    return op1("stablehlo.all_to_all", [x], ranked(shape, t.element_type),
               {"split_dimension": i64_attr(split_dim), "concat_dimension": i64_attr(concat_dim),
                "split_count": i64_attr(n), "replica_groups": _groups_attr(groups),
                "channel_handle": _channel(channel)}, loc=loc, ip=ip)


def partition_id(*, loc: Loc = None, ip: IP = None) -> ir.Value:
    """This device's logical id (``ui32``)."""
    return op1("stablehlo.partition_id", [], ranked([], ir.IntegerType.get_unsigned(32)), loc=loc, ip=ip)


def collective_groups(op: ir.Operation) -> np.ndarray:
    """The ``replica_groups`` (or ``source_target_pairs``) of a collective op, as an array."""
    key = "source_target_pairs" if op.name == "stablehlo.collective_permute" else "replica_groups"
    attr = ir.DenseIntElementsAttr(op.attributes[key])
    shape = tuple(ir.RankedTensorType(attr.type).shape)
    return np.array([attr[i] for i in range(len(attr))], dtype=np.int64).reshape(shape)
