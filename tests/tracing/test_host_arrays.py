"""NumPy arrays created inside a compiled function that meet traced values: written with a
traced value or index, updated in place, given as out=, indexed by a traced index. Each
kernel runs unmodified and equals NumPy."""

import numpy as np
import pytest
from npcheck import check

import reactant

X = np.arange(12.0).reshape(4, 3) / 7
IDX = np.array([2, 0, 1])


def fill_rows(x):
    out = np.empty((4, 3))
    for i in range(4):
        out[i] = np.sin(x[i])
    return out


def zeros_accumulate(x):
    c = np.zeros((4, 3))
    c += x * 2
    c[1:3] -= x[0]
    return c


def one_hot(x, idx):
    return np.eye(3)[idx] @ x.T


def table_lookup(x, idx):
    table = np.arange(10.0) * 3
    return table[idx] + x[0]


def slices_and_items(x):
    out = np.zeros(5)
    out[1:3] = x[1:3, 0]
    out[0] += x[0, 1]
    out[-1] = x.sum()
    return out


def out_argument(x):
    out = np.zeros((4, 3))
    np.add(x, 1.0, out=out)
    np.multiply(out, out, out=out)
    return out


def mask_and_kept_loop(x):
    out = np.zeros((4, 3))
    out[x > 0.5] = 1.0
    acc = np.zeros(3)
    for i in range(reactant.keep(4)):  # carried through a stablehlo.while
        acc = acc + x[i]
    return out, acc


def host_only_stays_host(x):
    h = np.zeros(3)
    h[0] = 5.0  # no traced value: stays a NumPy array (concrete)
    n = int(h.sum())
    return x[:n - 2] * h[0]


@pytest.mark.parametrize("fn", [fill_rows, zeros_accumulate, slices_and_items, out_argument, mask_and_kept_loop,
                                host_only_stays_host])
def test_kernels_on_host_arrays(fn):
    check(fn, X)


@pytest.mark.parametrize("fn", [one_hot, table_lookup])
def test_host_arrays_indexed_by_traced_indices(fn):
    check(fn, X, IDX)


def test_gradient_through_a_filled_host_array():
    def loss(x):
        out = np.zeros((4, 3))
        for i in range(4):
            out[i] = np.sin(x[i]) * (i + 1)
        return np.sum(out ** 2)

    g = reactant.compile(lambda x: reactant.gradient(loss, x))(reactant.to_rarray(X))
    want = 2 * np.sin(X) * np.cos(X) * (np.arange(1, 5)[:, None] ** 2)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12)


def test_aliased_host_arrays_are_refused_or_follow_the_update():
    def view(x):
        out = np.zeros((4, 3))
        row = out[0]  # a view: NumPy would update out through it
        row[:] = x[0]
        return out

    def listed(x):
        out = np.zeros(3)
        keep = [out]
        out[0] = x[0, 0]
        return keep[0]

    with pytest.raises(reactant.ConcretizationError, match="a view of another"):
        reactant.compile(view)(reactant.to_rarray(X))
    check(listed, X)  # (the list's item takes the traced array too, as it holds NumPy's one array)

    def in_a_dict(x):
        d = {"a": np.zeros(3)}
        d["a"][0] = x[0, 0]  # rebound inside the dict (nothing else holds the array)
        return d["a"]

    check(in_a_dict, X)

    def from_a_call(x):
        bufs = [np.zeros(3)]
        (lambda: bufs[0])()[0] = x[0, 0]  # a place that cannot be rebound
        return bufs[0]

    with pytest.raises(reactant.ConcretizationError, match="reached through an expression"):
        reactant.compile(from_a_call)(reactant.to_rarray(X))

    def traced_in_a_dict(x):  # a traced array in a container is updated as before
        d = {"a": np.zeros_like(x[0])}
        d["a"][0] = x[0, 0]
        return d["a"]

    check(traced_in_a_dict, X)


def test_tuple_assignments_into_host_arrays():
    def borders(u):
        new = np.zeros(u.shape)
        new[0], new[-1], k = u[0], u[-1] * 2, 3
        new[1:-1] = u[1:-1] * k
        return new

    check(borders, X)
    with pytest.raises(ValueError, match="too many values to unpack"):
        reactant.compile(lambda u: (lambda a: a)(None) or _unpack_too_many(u))(reactant.to_rarray(X))


def _unpack_too_many(u):
    out = np.zeros(3)
    out[0], out[1] = u[0, 0], u[0, 1], u[0, 2]
    return out


@pytest.mark.parametrize("name,fn", [
    ("sum", lambda x, y: np.sum(x, axis=0, out=y)),
    ("mean", lambda x, y: np.mean(x, axis=0, out=y)),
    ("max", lambda x, y: np.max(x, axis=0, out=y)),
    ("cumsum", lambda x, y: np.cumsum(x, axis=0, out=y)),
    ("clip", lambda x, y: np.clip(x, 0.2, 0.9, out=y)),
    ("add.reduce", lambda x, y: np.add.reduce(x, axis=0, out=y)),
    ("matmul", lambda x, y: np.matmul(x.T, x, out=y)),
])
def test_out_is_written_for_every_function(name, fn):
    shapes = {"cumsum": (4, 3), "clip": (4, 3), "matmul": (3, 3)}
    shape = shapes.get(name, (3,))

    def on_traced_out(x):  # a traced out: updated in place, and returned by the call
        y = np.zeros_like(x, shape=shape)
        r = fn(x, y)
        return y, r

    check(on_traced_out, X)


def test_numpy_out_arrays_written_by_name():
    def f(x):
        s, c, m = np.zeros(3), np.zeros((4, 3)), np.zeros((3, 3))
        np.sum(x, axis=0, out=s)  # NumPy arrays given as out= by name: rebound to the results
        np.clip(x, 0.2, 0.9, out=c)
        np.matmul(x.T, x, out=m)
        return s, c, m

    check(f, X)

    def through_a_helper(x):  # the helper's out= cannot rebind the caller's name: a clear error
        y = np.zeros(3)
        (lambda a, b: np.sum(a, axis=0, out=b))(x, y)
        return y

    with pytest.raises(reactant.UnsupportedError, match="out= must be a traced array"):
        reactant.compile(through_a_helper)(reactant.to_rarray(X))


def test_subscripts_in_converted_code_keep_python_semantics():
    def f(x):
        slice = 2  # a user name shadowing the builtin the transform uses
        d = {"k": x[1:3]}
        s = "abc"[1:]
        return d["k"] * slice * len(s), x[::-1][0]

    check(f, np.arange(5.0))
