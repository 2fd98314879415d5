"""Navigating the def-use graph: defining ops, uses, and where a value is defined relative to
an op's regions."""

from __future__ import annotations

from jaxlib.mlir import ir


def defining_op(v: ir.Value):
    """The op that produces ``v`` (an OpView), or None for a block argument."""
    owner = v.owner
    return None if isinstance(owner, ir.Block) else owner


def def_of(v: ir.Value, name: str):
    """The defining op of ``v`` if it is ``stablehlo.<name>``, else None."""
    op = defining_op(v)
    if op is not None and op.operation.name == "stablehlo." + name:
        return op
    return None


def op_name(v: ir.Value) -> str | None:
    """Name of the op defining ``v`` (None for a block argument)."""
    op = defining_op(v)
    return None if op is None else op.operation.name


def user_ops(v: ir.Value) -> list:
    """The ops using ``v`` (one entry per use)."""
    return [u.owner for u in v.uses]


def has_one_use(v: ir.Value) -> bool:
    it = iter(v.uses)
    return next(it, None) is not None and next(it, None) is None


def parent_op_of(v: ir.Value):
    """The op whose region holds the definition of ``v`` (its block's owner), or None at the
    top level."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return owner.owner
    return owner.operation.parent


def is_within(v: ir.Value, op) -> bool:
    """``v`` is defined inside the regions of ``op`` (at any depth)."""
    target = op.operation
    cur = parent_op_of(v)
    while cur is not None:
        cur = cur.operation
        if cur == target:
            return True
        cur = cur.parent
    return False


def is_defined_outside(v: ir.Value, op) -> bool:
    """``v`` is defined outside ``op``'s regions (so it is invariant with respect to them)."""
    return not is_within(v, op)
