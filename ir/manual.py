"""Shardy manual computations (``sdy.manual_computation``, what ``shard_map`` lowers to): their
shardings, and which mesh axes each value of the body varies over.

Inside the body every device holds its own block. A value *varies* over a mesh axis when the
devices along that axis may hold different values of it; it is *invariant* over an axis when
they provably hold the same (an argument not split over the axis, a ``psum`` over it, a
constant). The sharding layer refuses an output declared replicated over an axis it varies
over, and reverse-mode AD sums a cotangent over the axes where an invariant value meets a
varying one (so the adjoint of ``psum`` is a plain broadcast, as in JAX).
"""

from __future__ import annotations

import itertools
import re
from typing import Sequence

import numpy as np
from jaxlib.mlir import ir

from .context import functions
from .opinfo import info
from .regions import callee_name, captured_values, terminator

MANUAL = "sdy.manual_computation"

_DIM = re.compile(r"\{([^{}]*)\}")


def per_value_shardings(op, key: str) -> list[str]:
    """The ``<@mesh, [...]>`` texts of an ``in_shardings``/``out_shardings`` attribute."""
    text = str(op.attributes[key])
    return re.findall(r"<@[\w$.-]+, \[[^\]]*\](?: replicated=\{[^}]*\})?>", text)


def sharding_axes(text: str) -> list[tuple[str, ...]]:
    """Per dimension, the axes a ``<@mesh, [{"x"}, {}]>`` sharding splits it over (a sub-axis
    ``"x":(1)2`` counts as its axis)."""
    dims = re.search(r"\[(.*?)\]", text)
    return [tuple(re.findall(r'"([^"]+)"', d)) for d in _DIM.findall(dims.group(1) if dims else "")]


def has_sub_axes(text: str) -> bool:
    """Whether a sharding splits a dimension over part of an axis (``"x":(1)2``)."""
    return re.search(r'"[^"]+":\(\d+\)\d+', text) is not None


def manual_axes(op) -> tuple[str, ...]:
    return tuple(re.findall(r'"([^"]+)"', str(op.attributes["manual_axes"])))


def mesh_axes(module_op) -> dict[str, int]:
    """Axis name -> size of the module's (first) ``sdy.mesh``."""
    for o in module_op.regions[0].blocks[0].operations:
        if o.operation.name == "sdy.mesh":
            return {n: int(s) for n, s in re.findall(r'"([^"]+)"=(\d+)', str(o.attributes["mesh"]))}
    return {}


def axis_groups(sizes: dict[str, int], axes: Sequence[str]) -> np.ndarray:
    """Device groups (rows of logical ids) that differ only along ``axes``, ordered by the
    coordinates of ``axes`` in the order given (major first)."""
    names = list(sizes)
    ids = np.arange(int(np.prod(list(sizes.values()) or [1]))).reshape([sizes[n] for n in names] or [1])
    rest = [names.index(n) for n in names if n not in axes]
    own = [names.index(a) for a in axes]
    k = int(np.prod([sizes[a] for a in axes])) if axes else 1
    return np.transpose(ids, rest + own).reshape(-1, k)


def group_axes(sizes: dict[str, int], groups: np.ndarray) -> frozenset | None:
    """The axes a collective's replica groups run over, or None if no set of axes gives them."""
    want = sorted(map(tuple, np.sort(np.asarray(groups), axis=1)))
    names = list(sizes)
    for r in range(len(names) + 1):
        for sub in itertools.combinations(names, r):
            if sorted(map(tuple, np.sort(axis_groups(sizes, sub), axis=1))) == want:
                return frozenset(sub)
    return None


def _pairs_axes(sizes: dict[str, int], pairs: np.ndarray) -> frozenset:
    """Axes along which a collective_permute's pairs move data (conservative: every axis on
    which some pair's coordinates differ)."""
    names = list(sizes)
    shape = [sizes[n] for n in names]
    out = set()
    for s, d in np.asarray(pairs).reshape(-1, 2):
        cs, cd = np.unravel_index(int(s), shape), np.unravel_index(int(d), shape)
        out.update(n for n, a, b in zip(names, cs, cd) if a != b)
    return frozenset(out)


def collective_axes(op, sizes: dict[str, int]) -> frozenset:
    """The mesh axes a collective op communicates over (all of them when unknown)."""
    from .build import collective_groups

    groups = collective_groups(op)
    if op.name == "stablehlo.collective_permute":
        return _pairs_axes(sizes, groups)
    axes = group_axes(sizes, groups)
    return frozenset(sizes) if axes is None else axes


def _callee(call):
    """The ``func.func`` a ``func.call`` names, found in the enclosing module."""
    top = call
    while top.parent is not None:
        top = top.parent
    return functions(top).get(callee_name(call))


def varying(body: ir.Block, arg_vary: Sequence[frozenset], sizes: dict[str, int]) -> dict:
    """Value -> the set of manual axes it varies over, for every value of ``body`` (nested
    regions included), given the arguments' sets."""
    vary: dict = {}
    everything = frozenset(sizes)
    for a, s in zip(body.arguments, arg_vary):
        vary[a] = frozenset(s)

    def of(v) -> frozenset:
        return vary.get(v, frozenset())  # values from outside the body: constants of the caller

    def block(blk: ir.Block) -> None:
        for op in blk.operations:
            op = op.operation
            name = op.name
            ins = frozenset().union(*(of(v) for v in op.operands)) if len(op.operands) else frozenset()
            if info(name).collective:
                # JAX's rule: a psum is invariant over its axes, an all_gather (or a broadcast
                # from one device) varies as its operand, the other collectives vary over theirs
                if name in ("stablehlo.all_gather", "stablehlo.collective_broadcast"):
                    out = ins
                else:
                    axes = collective_axes(op, sizes)
                    out = ins - axes if name == "stablehlo.all_reduce" else ins | axes
            elif name in ("stablehlo.partition_id", "stablehlo.replica_id"):
                out = everything
            elif name == "func.call" and _callee(op) is not None:
                fb = _callee(op).regions[0].blocks[0]
                sub = varying(fb, [of(v) for v in op.operands], sizes)
                for r, v in zip(op.results, terminator(fb).operands):
                    vary[r] = sub.get(v, frozenset())
                continue
            elif len(op.regions):
                out = ins | frozenset().union(*(of(v) for v in captured_values(op)))
                # region arguments take the operands' sets; iterate loops to a fixed point
                for _ in range(len(sizes) + 2):
                    for reg in op.regions:
                        for b in reg.blocks:
                            for a in b.arguments:
                                vary[a] = out
                            block(b)
                    rets = frozenset().union(*(of(v) for reg in op.regions for b in reg.blocks
                                               for v in terminator(b).operands))
                    if rets <= out:
                        break
                    out = out | rets
            else:
                out = ins
            for r in op.results:
                vary[r] = out

    block(body)
    return vary


def _sharding_text(s) -> str:
    text = str(s)
    return text[len("#sdy.sharding"):] if text.startswith("#sdy.sharding<") else text


def create_manual(operands: Sequence[ir.Value], result_types: Sequence[ir.Type], in_shardings: Sequence,
                  out_shardings: Sequence, axes: Sequence[str], block_types: Sequence[ir.Type], *,
                  loc: ir.Location | None = None, ip: ir.InsertionPoint | None = None) -> tuple:
    """A ``sdy.manual_computation`` (shardings as ``#sdy.sharding`` attributes or their
    ``<@mesh, [...]>`` texts) and its empty body block of ``block_types``."""
    attrs = {
        "in_shardings": ir.Attribute.parse(
            "#sdy.sharding_per_value<[" + ", ".join(map(_sharding_text, in_shardings)) + "]>"),
        "out_shardings": ir.Attribute.parse(
            "#sdy.sharding_per_value<[" + ", ".join(map(_sharding_text, out_shardings)) + "]>"),
        "manual_axes": ir.Attribute.parse("#sdy<manual_axes{" + ", ".join(f'"{a}"' for a in axes) + "}>"),
    }
    op = ir.Operation.create(MANUAL, results=list(result_types), operands=list(operands), attributes=attrs,
                             regions=1, loc=loc, ip=ip)
    return op, ir.Block.create_at_start(op.regions[0], list(block_types))
