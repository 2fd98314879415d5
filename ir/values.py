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


def same_computation(a: ir.Value, b: ir.Value, depth: int = 6) -> bool:
    """Whether ``a`` and ``b`` are the same value or computed alike: ops of one name and
    attributes, without regions, on operands that are (recursively, up to ``depth``) the same."""
    if a == b:
        return True
    if depth == 0 or a.type != b.type:
        return False
    oa, ob = defining_op(a), defining_op(b)
    if oa is None or ob is None:
        return False
    oa, ob = oa.operation, ob.operation
    if oa.name != ob.name or len(oa.regions) or len(ob.regions) or len(oa.operands) != len(ob.operands):
        return False
    if list(oa.results).index(a) != list(ob.results).index(b):
        return False
    attrs = lambda o: sorted((k, str(o.attributes[k])) for k in o.attributes)  # noqa: E731
    if attrs(oa) != attrs(ob):
        return False
    return all(same_computation(x, y, depth - 1) for x, y in zip(oa.operands, ob.operands))
