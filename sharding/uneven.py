"""Arrays whose sharded dimensions the mesh does not divide ("uneven" shardings).

A dimension of size ``n`` split over ``k`` devices is stored padded to ``ceil(n / k) * k``:
every device holds a block of ``ceil(n / k)`` elements, the last blocks partly or wholly
padding. That is exactly the layout XLA's SPMD partitioner gives an uneven value inside a
program, so the device buffers of a padded array are what a partitioned program reads.

A program's interface (``@main``'s arguments and results) must still be divisible: given an
uneven argument, XLA's Shardy import replaces its sharding by one over fewer devices (10
elements on 8 devices become 2 blocks of 5: the program would then read the padded buffers
wrongly). So ``pad_interface`` gives ``@main`` the padded types, slices each uneven argument to
its logical shape at the entry and pads each uneven result before the return; in between XLA
partitions the logical (uneven) shapes itself, masking the padding in reductions. The padding's
contents are never read: buffers may hold anything there.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from jaxlib.mlir import ir

from ..ir import build as B
from ..ir.context import function_type, main_func
from ..ir.manual import mesh_axes, sharding_axes
from ..ir.types import element_type_of, ranked


def padded_dims(shape: Sequence[int], parts: Sequence[int]) -> tuple[int, ...]:
    """``shape`` with each dimension rounded up to a multiple of its number of ``parts``."""
    return tuple(int(math.ceil(n / k) * k) if k > 1 else int(n) for n, k in zip(shape, parts))


def logical_index(index: tuple, shape: Sequence[int]) -> tuple:
    """A shard's index (a tuple of slices into the padded array) clipped to the logical
    ``shape``: the part of the shard that holds data (possibly empty)."""
    out = []
    for s, n in zip(index, shape):
        start = 0 if s.start is None else min(s.start, n)
        stop = n if s.stop is None else min(s.stop, n)
        out.append(slice(start, max(start, stop), s.step))
    return tuple(out) + tuple(index[len(shape):])


def _parts(text: str, sizes: dict[str, int], rank: int) -> list[int]:
    axes = sharding_axes(text)
    parts = [int(np.prod([sizes.get(a, 1) for a in ax])) if ax else 1 for ax in axes]
    return (parts + [1] * rank)[:rank]


def _attr_dicts(fn, key: str, n: int) -> list[dict]:
    if key not in fn.attributes:
        return [{} for _ in range(n)]
    out = []
    for a in ir.ArrayAttr(fn.attributes[key]):
        d = ir.DictAttr(a)
        out.append({d[i].name: d[i].attr for i in range(len(d))})
    return out


def pad_interface(module: ir.Module | ir.Operation) -> bool:
    """Give ``@main`` padded argument and result types where its ``sdy.sharding`` does not
    divide a dimension (see the module docstring); returns whether anything changed. Run it
    on the final module: idempotent (a padded interface is divisible)."""
    op = module.operation if isinstance(module, ir.Module) else module
    sizes = mesh_axes(op)
    if not sizes:
        return False
    with op.context, ir.Location.unknown(op.context):
        return _pad_interface(module, sizes)


def _pad_interface(module, sizes: dict[str, int]) -> bool:
    fn = main_func(module)
    ft = function_type(fn)
    ins, outs = list(ft.inputs), list(ft.results)
    arg_attrs = _attr_dicts(fn, "arg_attrs", len(ins))
    res_attrs = _attr_dicts(fn, "res_attrs", len(outs))
    new_ins, new_outs = list(ins), list(outs)
    for i, (t, d) in enumerate(zip(ins, arg_attrs)):
        if "sdy.sharding" in d:
            new_ins[i] = _padded_type(t, str(d["sdy.sharding"]), sizes)
    for j, (t, d) in enumerate(zip(outs, res_attrs)):
        if "sdy.sharding" in d:
            new_outs[j] = _padded_type(t, str(d["sdy.sharding"]), sizes)
    if new_ins == ins and new_outs == outs:
        return False
    block = fn.regions[0].blocks[0]
    for i, (old, new) in enumerate(zip(ins, new_ins)):
        if old == new:
            continue
        arg = block.arguments[i]
        arg.set_type(new)
        # every use reads the logical part; the slice itself reads the padded argument
        first = block.operations[0] if len(block.operations) else None
        ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(block)
        logical = ir.RankedTensorType(old).shape
        view = B.slice(arg, [0] * len(logical), logical, ip=ip)
        arg.replace_all_uses_with(view)
        view.owner.operands[0] = arg
    ret = block.operations[len(block.operations) - 1]
    for j, (old, new) in enumerate(zip(outs, new_outs)):
        if old == new:
            continue
        v = ret.operands[j]
        shape = ir.RankedTensorType(old).shape
        high = [p - n for p, n in zip(ir.RankedTensorType(new).shape, shape)]
        zero = B.zeros(ranked([], element_type_of(v)), ip=ir.InsertionPoint(ret))
        ret.operands[j] = B.pad(v, zero, [0] * len(shape), high, ip=ir.InsertionPoint(ret))
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(new_ins, new_outs))
    # an in-place update aliases an argument's buffer to a result's: only when their
    # (padded) types still agree (donation is an optimization; dropping it is safe)
    changed = False
    for i, d in enumerate(arg_attrs):
        if "tf.aliasing_output" in d:
            j = ir.IntegerAttr(d["tf.aliasing_output"]).value
            if new_ins[i] != new_outs[j]:
                del d["tf.aliasing_output"]
                changed = True
    if changed:
        fn.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in arg_attrs])
    return True


def is_uneven(shape: Sequence[int], sharding_text: str, sizes: dict[str, int]) -> bool:
    """Whether the ``#sdy.sharding`` (text) leaves a dimension of ``shape`` not divisible."""
    return list(padded_dims(shape, _parts(sharding_text, sizes, len(shape)))) != list(shape)


def _padded_type(t: ir.Type, sharding_text: str, sizes: dict[str, int]) -> ir.Type:
    rt = ir.RankedTensorType(t)
    shape = list(rt.shape)
    padded = padded_dims(shape, _parts(sharding_text, sizes, len(shape)))
    if list(padded) == shape:
        return t
    return ir.RankedTensorType.get(list(padded), rt.element_type)
