"""Pytrees: flatten/unflatten round trips, and the structural cache key of pytrees of arrays
walks containers in exactly flatten's order (it has its own fast walk for tuples, lists and
dicts)."""

import dataclasses
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

from reactant.tracing.pytree import flatten, register_pytree_node, structure_key, unflatten

Pair = namedtuple("Pair", "a b")


@dataclasses.dataclass
class Box:
    x: object
    y: object


class Node:
    def __init__(self, kids, tag):
        self.kids, self.tag = kids, tag


register_pytree_node(Node, lambda n: (n.kids, n.tag), lambda tag, kids: Node(list(kids), tag))


class Leaf:
    """Stands for a device array."""

    def __init__(self, i):
        self.i = i


TREES = [
    (Leaf(0), Leaf(1)),
    {"z": Leaf(0), "a": [Leaf(1), (Leaf(2), None)], "m": {}},
    [Pair(Leaf(0), {"k": Leaf(1)}), Box(Leaf(2), [Leaf(3)])],
    (Node([Leaf(0), {"b": Leaf(1), "a": Leaf(2)}], "t"), Pair((), [])),
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_structure_key_walks_in_flatten_order(tree):
    leaves, td = flatten(tree, is_leaf=lambda x: isinstance(x, Leaf))
    key, found = [], []
    assert structure_key(tree, (Leaf,), lambda x: ("leaf", x.i), key, found)
    assert [x.i for x in found] == [x.i for x in leaves]
    rebuilt = unflatten(td, leaves)
    key2, _ = [], []
    assert structure_key(rebuilt, (Leaf,), lambda x: ("leaf", x.i), key2, [])
    assert tuple(key) == tuple(key2)  # the same structure gives the same key


def test_structure_key_tells_structures_apart_and_rejects_other_leaves():
    def key_of(tree):
        key = []
        return tuple(key) if structure_key(tree, (Leaf,), lambda x: 0, key, []) else None

    a, b = Leaf(0), Leaf(1)
    keys = [key_of(t) for t in ((a, b), [a, b], ((a,), b), {"x": a, "y": b}, {"y": a, "x": b},
                                Pair(a, b), Box(a, b), (a, None, b))]
    assert None not in keys and len(set(keys)) == len(keys)
    assert key_of((a, 3.0)) is None and key_of({"x": np.ones(2)}) is None
    assert key_of(OrderedDict(x=a)) is None  # not a container flatten knows: a static leaf
