"""Regions and blocks: walking nested ops, the values a region captures from outside, cloning
ops with their regions under a value mapping, inlining function bodies and calls, and
comparing regions for equivalence."""

from __future__ import annotations

from typing import Callable, Sequence

from jaxlib.mlir import ir

from .attrs import copy_attrs

TERMINATORS = ("func.return", "stablehlo.return", "sdy.return")


def single_block(region: ir.Region) -> ir.Block | None:
    """The region's block when it has exactly one."""
    blocks = list(region.blocks)
    return blocks[0] if len(blocks) == 1 else None


def terminator(block: ir.Block):
    """The block's last op (its terminator), or None for an empty block."""
    ops = block.operations
    # (indexed from the end: listing a loop body's ops to take its last costs ~0.1 ms)
    return ops[-1] if len(ops) else None


def block_ops(block: ir.Block) -> list:
    """The ops of a block without its terminator (func.return / stablehlo.return)."""
    ops = list(block.operations)
    if ops and ops[-1].operation.name in TERMINATORS:
        ops = ops[:-1]
    return ops


def walk_nested(op, fn: Callable) -> None:
    """Call ``fn(nested_op)`` for every op nested in ``op``'s regions (pre-order, not op)."""
    for region in op.regions:
        for block in region.blocks:
            for o in block.operations:
                fn(o)
                if len(o.regions):
                    walk_nested(o, fn)


def defined_inside(op) -> set:
    """Values defined in the regions of ``op``: block arguments and results of nested ops."""
    out = set()

    def visit(o):
        out.update(o.results)
        for region in o.regions:
            for b in region.blocks:
                out.update(b.arguments)

    for region in op.regions:
        for b in region.blocks:
            out.update(b.arguments)
    walk_nested(op, visit)
    return out


def captured_values(op) -> list:
    """Values used inside ``op``'s regions but defined outside ``op``, in first-use order."""
    if not len(op.regions):
        return []
    inside = defined_inside(op)
    seen: dict = {}

    def visit(o):
        for v in o.operands:
            if v not in inside and v not in seen:
                seen[v] = None

    walk_nested(op, visit)
    return list(seen)


def replace_uses_within(op, old: ir.Value, new: ir.Value) -> None:
    """Replace the uses of ``old`` by ``new`` in ``op`` and every op nested in it."""

    def visit(o):
        for i, v in enumerate(o.operands):
            if v == old:
                o.operands[i] = new
        return ir.WalkResult.ADVANCE

    op.operation.walk(visit)


def clone_op(op, get: Callable[[ir.Value], ir.Value], caps: list | None = None) -> ir.Operation:
    """A copy of ``op`` at the ambient insertion point, every operand ``v`` (also those captured
    inside its regions; ``caps`` when already known) replaced by ``get(v)``. Attributes and
    location kept. ``get`` is called before the copy is made (it may emit ops the copy uses)."""
    op = op.operation
    operands = [get(v) for v in op.operands]
    capmap = {v: get(v) for v in (captured_values(op) if caps is None else caps)} if len(op.regions) else {}
    new = op.clone()
    for i, v in enumerate(operands):
        new.operands[i] = v
    if capmap:
        def fix(o):
            o = o.operation
            for i, v in enumerate(o.operands):
                nv = capmap.get(v)
                if nv is not None:
                    o.operands[i] = nv

        walk_nested(new, fix)
    return new


def clone_block(block: ir.Block, operands: Sequence[ir.Value], ip: ir.InsertionPoint) -> list:
    """Copy the ops of ``block`` at ``ip`` with its arguments bound to ``operands``; returns
    the values its terminator returns."""
    mapping = dict(zip(block.arguments, operands))

    def remap(o):
        for i, v in enumerate(o.operands):
            new = mapping.get(v)
            if new is not None:
                o.operands[i] = new
        return ir.WalkResult.ADVANCE

    for op in block.operations:
        if op.operation.name in TERMINATORS:
            return [mapping.get(v, v) for v in op.operands]
        new = op.operation.clone(ip=ip)
        new.walk(remap)  # operands from the block (nested regions included) -> the caller's
        mapping.update(zip(op.results, new.results))
    return []


def callee_name(call) -> str:
    """The symbol a ``func.call`` calls."""
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def inline_call(call, callee) -> None:
    """Replace ``call`` by a copy of ``callee``'s single-block body."""
    results = clone_block(callee.regions[0].blocks[0], list(call.operands), ir.InsertionPoint(call))
    for old, new in zip(call.results, results):
        old.replace_all_uses_with(new)
    call.erase()


def attrs_equal(a, b) -> bool:
    return copy_attrs(a) == copy_attrs(b)


def regions_equivalent(ra: ir.Region, rb: ir.Region, mapping: dict | None = None) -> bool:
    """Two regions compute the same thing: same ops, attributes and types, operands equal up
    to the correspondence of values defined inside them."""
    mapping = {} if mapping is None else mapping
    ba, bb = list(ra.blocks), list(rb.blocks)
    if len(ba) != len(bb):
        return False
    for x, y in zip(ba, bb):
        if len(x.arguments) != len(y.arguments):
            return False
        for p, q in zip(x.arguments, y.arguments):
            if p.type != q.type:
                return False
            mapping[p] = q
    for x, y in zip(ba, bb):
        ox, oy = list(x.operations), list(y.operations)
        if len(ox) != len(oy):
            return False
        for a, b in zip(ox, oy):
            if a.operation.name != b.operation.name or len(a.operands) != len(b.operands) \
                    or len(a.results) != len(b.results) or len(a.regions) != len(b.regions):
                return False
            for p, q in zip(a.operands, b.operands):
                if mapping.get(p, p) != q:
                    return False
            for p, q in zip(a.results, b.results):
                if p.type != q.type:
                    return False
            if not attrs_equal(a, b):
                return False
            for p, q in zip(a.regions, b.regions):
                if not regions_equivalent(p, q, mapping):
                    return False
            for p, q in zip(a.results, b.results):
                mapping[p] = q
    return True
