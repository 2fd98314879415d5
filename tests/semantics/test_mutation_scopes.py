"""In-place updates reach arrays wherever the caller can see them: closure arrays, arrays in
containers and on objects, globals (which keep their binding), inside kept loops too."""

import numpy as np
import pytest

import reactant
from .inplace_check import MODES, check

SEEN = {}


def store_into_global_dict(x):
    SEEN["t"] = 1  # a global: item assignment must not make the name local
    return x * 2.0


def test_item_assignment_into_a_global_dict():
    SEEN.clear()
    check(store_into_global_dict, np.ones(3))
    assert SEEN == {"t": 1}


def closure_array_written_in_a_kept_loop(x):
    acc = x * 0.0

    def add_row(i):
        acc[i] = acc[i] + x[i] * 2.0  # the enclosing function's array

    for i in range(x.shape[0]):
        add_row(i)
    return acc


def arrays_in_containers(A, out):
    bag = {"rows": [A[0], A[1]], "out": out}
    for i in range(30):
        bag["out"][i % 4] += bag["rows"][i % 2][0]
    bag["rows"][1][:] = -1.0  # a view kept in a list: writes reach A


class Holder:
    def __init__(self, a):
        self.a = a


def array_on_object(x):
    h = Holder(x)
    for i in range(40):
        h.a[i % 3] = h.a[i % 3] * 0.5 + 1.0


@pytest.mark.parametrize("loops,opt", MODES)
@pytest.mark.parametrize("fn,make", [
    (closure_array_written_in_a_kept_loop, lambda r: [r.random(40)]),
    (arrays_in_containers, lambda r: [r.random((2, 3)), np.zeros(4)]),
    (array_on_object, lambda r: [r.random(3)]),
], ids=["closure", "containers", "object"])
def test_updates_reach_every_reference(fn, make, loops, opt):
    if fn is arrays_in_containers and loops == "keep":  # a list indexed by the loop index
        with pytest.raises(reactant.ConcretizationError, match="Python index"):
            check(fn, *make(np.random.default_rng(2)), loops=loops, optimize=opt)
        return
    check(fn, *make(np.random.default_rng(2)), loops=loops, optimize=opt)
