"""Pytrees: nested containers (tuple, list, dict, namedtuple, dataclass, None and registered
types) flattened to a list of leaves plus a hashable structure, and rebuilt from them."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

# type -> (flatten(obj) -> (children, aux), unflatten(aux, children) -> obj)
_NODES: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """Make ``cls`` a container: ``flatten(obj) -> (children, aux)`` with hashable ``aux``,
    ``unflatten(aux, children) -> obj``."""
    _NODES[cls] = (flatten, unflatten)


class TreeDef:
    """Hashable structure of a pytree; ``n`` leaves."""

    __slots__ = ("kind", "aux", "children", "n", "_hash")

    def __init__(self, kind, aux, children: tuple["TreeDef", ...]):
        self.kind = kind
        self.aux = aux
        self.children = children
        self.n = 1 if kind is None else sum(c.n for c in children)
        self._hash = hash((kind, aux, children))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, TreeDef)
            and self._hash == other._hash
            and self.kind == other.kind
            and self.aux == other.aux
            and self.children == other.children
        )

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        name = getattr(self.kind, "__name__", str(self.kind))
        return f"{name}({', '.join(map(repr, self.children))})"


LEAF = TreeDef(None, None, ())


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def _children(obj):
    """(kind, aux, children) if obj is a container, else None."""
    t = type(obj)
    if t is tuple:
        return tuple, None, obj
    if t is list:
        return list, None, obj
    if t is dict:
        return dict, tuple(obj), list(obj.values())  # insertion order, both
    if obj is None:
        return type(None), None, ()
    node = _NODES.get(t)
    if node is not None:
        children, aux = node[0](obj)
        return t, aux, children
    if _is_namedtuple(obj):
        return t, None, tuple(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = tuple(f.name for f in dataclasses.fields(obj))
        return t, names, [getattr(obj, n) for n in names]
    return None


def flatten(obj: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeDef]:
    """Leaves in depth-first order, and the structure."""
    leaves: list = []
    return leaves, _flatten(obj, is_leaf, leaves)


# (Module-level recursion, not a nested closure: a self-referencing closure is a reference
# cycle that would keep the leaves, device buffers included, alive until the next GC.)
def _flatten(o, is_leaf, leaves: list) -> TreeDef:
    if is_leaf is not None and is_leaf(o):
        leaves.append(o)
        return LEAF
    c = _children(o)
    if c is None:
        leaves.append(o)
        return LEAF
    kind, aux, children = c
    return TreeDef(kind, aux, tuple(_flatten(ch, is_leaf, leaves) for ch in children))


def structure_key(obj: Any, leaf_types, leaf_key: Callable, key: list, leaves: list) -> bool:
    """Append to ``key`` a hashable prefix encoding of ``obj``'s structure (kind, aux, arity,
    then the children; ``leaf_key(x)`` for a leaf whose exact type is in ``leaf_types``),
    collecting those leaves in ``flatten`` order. False when ``obj`` holds any other leaf.
    A cheap cache key for pytrees of arrays: it walks containers like ``flatten`` without
    building a ``TreeDef`` (tuples, lists and dicts inline, the other kinds via ``_children``;
    a test checks both orders agree)."""
    t = type(obj)
    if t is tuple or t is list:
        key += (t, None, len(obj))
        children = obj
    elif t is dict:
        key += (dict, tuple(obj), len(obj))
        children = obj.values()
    else:
        c = _children(obj)
        if c is None:
            return False
        kind, aux, children = c
        key += (kind, aux, len(children))
    for x in children:
        if type(x) in leaf_types:
            leaves.append(x)
            key.append(leaf_key(x))
        elif not structure_key(x, leaf_types, leaf_key, key, leaves):
            return False
    return True


def unflatten(tree: TreeDef, leaves) -> Any:
    return _unflatten(tree, iter(leaves))


def _unflatten(t: TreeDef, it):
    if t.kind is None:
        return next(it)
    kids = [_unflatten(c, it) for c in t.children]
    k = t.kind
    if k is tuple:
        return tuple(kids)
    if k is list:
        return kids
    if k is dict:
        return dict(zip(t.aux, kids))
    if k is type(None):
        return None
    node = _NODES.get(k)
    if node is not None:
        return node[1](t.aux, kids)
    if issubclass(k, tuple):  # namedtuple
        return k(*kids)
    obj = object.__new__(k)  # dataclass (frozen ones included)
    for name, v in zip(t.aux, kids):
        object.__setattr__(obj, name, v)
    return obj


def tree_map(f: Callable, obj: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    leaves, tree = flatten(obj, is_leaf)
    return unflatten(tree, [f(x) for x in leaves])


def prefix_leaves(prefix: Any, obj: Any, is_prefix_leaf: Callable[[Any], bool],
                  is_leaf: Callable[[Any], bool] | None = None) -> list:
    """For each leaf of ``obj`` (in flatten order), the entry of ``prefix`` that covers it:
    ``prefix`` has ``obj``'s structure down to its own leaves (``is_prefix_leaf``), each of
    which applies to the whole subtree of ``obj`` below it (JAX's pytree-prefix rule)."""
    if is_prefix_leaf(prefix):
        return [prefix] * len(flatten(obj, is_leaf)[0])
    pc, oc = _children(prefix), _children(obj)
    if pc is None or oc is None or pc[0] is not oc[0] or pc[1] != oc[1] or len(pc[2]) != len(oc[2]):
        raise ValueError(f"{type(prefix).__name__} is not a prefix of the structure of {type(obj).__name__}")
    out: list = []
    for p, o in zip(pc[2], oc[2]):
        out += prefix_leaves(p, o, is_prefix_leaf, is_leaf)
    return out
