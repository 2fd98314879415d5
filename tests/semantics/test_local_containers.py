"""NumPy arrays made in the traced code, held in local dicts, lists and objects, updated in
place with traced values (``params["w"] -= lr * g``, ``s.w -= g``, an optimizer object's
``self.m[k] *= beta``): NumPy's answer in every loop mode. Where another place still holds the
array NumPy updates (a second name, a tuple, a dict entry), a clear error naming the line;
never the old values silently (CPython does not track a dict of arrays for the garbage
collector, so such a dict is found by searching the traced code's variables)."""

from __future__ import annotations

import numpy as np
import pytest

import reactant
from reactant.tracing.errors import ConcretizationError, EscapedTracerError

from .inplace_check import check

MODES = [(loops, opt) for loops in ("auto", "keep", "unroll") for opt in ("O0", "O2")]


class Box:
    pass


def dict_item(x):
    params = {"w": np.zeros(4), "b": np.ones(4)}
    params["w"] -= 0.5 * x
    params["b"] *= x
    return params["w"] + params["b"]


def list_item(x):
    layers = [np.zeros(4), np.ones(4)]
    layers[1] += x
    return layers[0] - layers[1]


def attribute(x):
    s = Box()
    s.w = np.zeros(4)
    s.w -= 0.5 * x
    return s.w


class Momentum:
    """An optimizer written for NumPy: velocity per parameter in a dict, updated in place."""

    def __init__(self, lr, beta):
        self.lr, self.beta, self.velocity = lr, beta, {}

    def __call__(self, params, grads):
        for name in sorted(params):
            if name not in self.velocity:
                self.velocity[name] = np.zeros_like(params[name])
            self.velocity[name] *= self.beta
            self.velocity[name] -= self.lr * grads[name]
            params[name] += self.velocity[name]


def train(X, y):
    params = {"w": np.zeros(X.shape[1]), "b": np.zeros(1)}
    opt = Momentum(0.1, 0.9)
    for _ in range(6):
        err = X @ params["w"] + params["b"][0] - y
        grads = {"w": X.T @ err / len(y), "b": np.array([err.mean()])}
        opt(params, grads)
    return params["w"], params["b"]


def element_of_dict_item(x):
    d = {"a": np.zeros(4)}
    d["a"][0] = x[1]
    d["a"][1:] += x[1:] * 2.0
    return d["a"]


class Recorder:
    """Fills its own buffer row by row (``self.buf[i] = ...``)."""

    def __init__(self, n):
        self.buf = np.zeros(n)

    def run(self, x):
        for i in range(x.shape[0]):
            self.buf[i] = x[i] * 2.0 - 1.0
        return self.buf


def object_buffer(x):
    return Recorder(4).run(x)


@pytest.mark.parametrize("loops,optimize", MODES)
def test_container_items_and_attributes_updated_in_place(loops, optimize):
    x = np.array([1.0, -2.0, 0.5, 3.0])
    for fn in (dict_item, list_item, attribute, element_of_dict_item):
        check(fn, x, loops=loops, optimize=optimize)
    if loops == "keep":  # (a kept loop does not carry an object's attribute yet: the clear error)
        with pytest.raises(EscapedTracerError):
            check(object_buffer, x, loops=loops, optimize=optimize)
    else:
        check(object_buffer, x, loops=loops, optimize=optimize)


@pytest.mark.parametrize("loops,optimize", MODES)
def test_optimizer_object_with_a_velocity_dict(loops, optimize):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((16, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.25
    if loops != "keep":
        check(train, X, y, loops=loops, optimize=optimize)
        return
    # a loop kept as a loop does not carry dict items yet: the clear error, naming the line
    with pytest.raises(EscapedTracerError, match="kept in a list or attribute") as e:
        check(train, X, y, loops=loops, optimize=optimize)
    # (names where the kept value was made and the loop it escaped from)
    assert "test_local_containers.py:57" in str(e.value) and "loop body at" in str(e.value)
    assert "params[name] += self.velocity[name]" in open(__file__).read().splitlines()[56]


# -- another place still holds the array: refused, naming the line ---------------------------------
def second_name_via_dict(x):
    p = {"w": np.zeros(4)}
    v = p["w"]
    v -= 0.5 * x  # NumPy: p["w"] changes too
    return p["w"]


def held_by_a_tuple(x):
    w = np.zeros(4)
    t = (w, 1)
    w -= x
    return t[0]


def element_write_via_dict(x):
    p = {"w": np.zeros(4)}
    v = p["w"]
    v[0] = x[1]
    return p["w"]


def item_also_named(x):
    w = np.zeros(4)
    p = {"w": w}
    p["w"] -= 0.5 * x
    return w


def object_attribute_named(x):
    s = Box()
    s.w = np.zeros(4)
    v = s.w
    v += x
    return s.w


def element_of_item_also_named(x):
    w = np.zeros(4)
    d = {"a": w}
    d["a"][0] = x[1]
    return w


def list_and_dict_share_it(x):
    buf = np.zeros(4)
    d, rows = {"a": buf}, [1.0, buf]
    buf[2] = x[0]
    buf *= x  # NumPy: d["a"] and rows[1] are buf
    rows[1][0] = 5.0  # (through the list, then read through the dict)
    return d["a"] + rows[1]


def namespace_field(x):
    import types

    hold = types.SimpleNamespace(w=np.zeros(4))
    w = hold.w
    w *= np.maximum(x, 0.1)
    w += 1.0
    return hold.w + 0.0, w


_G: dict = {}


def held_by_a_global_dict(x):
    w = np.zeros(4)
    _G["w"] = w
    w -= x
    return _G["w"] * 2.0


def out_into_a_held_array(x):
    cache = {"y": np.zeros(4)}
    y = cache["y"]
    np.multiply(x, 3.0, out=y)
    return cache["y"]


# items and attributes holding the array take the traced array too: NumPy's values
@pytest.mark.parametrize("loops,optimize", MODES)
def test_items_and_attributes_holding_the_written_array_see_the_update(loops, optimize):
    x = np.array([1.0, -2.0, 0.5, 3.0])
    for fn in (second_name_via_dict, element_write_via_dict, object_attribute_named, list_and_dict_share_it,
               namespace_field, out_into_a_held_array, held_by_a_global_dict):
        check(fn, x, loops=loops, optimize=optimize)
    assert np.allclose(np.asarray(_G["w"]), -x)  # (the global dict's item: the array NumPy would leave)


# another *name* (or a tuple) still holds the array: refused, naming the line
@pytest.mark.parametrize("fn,where", [(held_by_a_tuple, "w -= x"),
                                      (element_of_item_also_named, 'd["a"][0] = x[1]'),
                                      (item_also_named, 'p["w"] -= 0.5 * x')])
@pytest.mark.parametrize("loops", ["auto", "keep"])
def test_a_second_holder_is_a_clear_error(fn, where, loops):
    with pytest.raises(ConcretizationError) as e:
        reactant.compile(fn, loops=loops)(reactant.to_rarray(np.arange(4.0)))
    text = str(e.value)
    assert "also reachable as" in text and where in text, text


def test_updates_in_a_kept_loop_reach_the_dict():
    def f(x):
        acc = {"s": np.zeros(4)}
        for i in range(40):
            acc["s"] += x * i
        return acc["s"]

    for loops in ("auto", "keep", "unroll"):
        check(f, np.array([1.0, 2.0, 3.0, 4.0]), loops=loops)


# -- a loop first traced as a while and then unrolled leaves no trace in Python objects -------------
class EMA:
    """A filter holding its state, updated by a method the loop body calls."""

    def __init__(self, alpha):
        self.alpha, self.value, self.history = alpha, None, []

    def update(self, x):
        if self.value is None:
            self.value = x.copy()
        else:
            self.value = self.alpha * x + (1 - self.alpha) * self.value
        self.history.append(self.value)
        return self.value


def ema_filter(sig):
    ema = EMA(0.1)
    out = np.empty_like(sig)
    for t in range(sig.shape[0]):
        out[t] = ema.update(sig[t])
    return out, np.stack(ema.history[-3:])


@pytest.mark.parametrize("loops,optimize", MODES)
def test_state_written_by_an_abandoned_loop_attempt_is_put_back(loops, optimize):
    sig = np.random.default_rng(0).standard_normal((40, 3))
    if loops == "keep":  # (a kept loop cannot carry the object's attribute: the clear error)
        with pytest.raises(EscapedTracerError):
            check(ema_filter, sig, loops=loops, optimize=optimize)
        return
    check(ema_filter, sig, loops=loops, optimize=optimize)


# -- dtypes as NumPy keeps them ----------------------------------------------------------------------
def inplace_keeps_dtype(x):
    w = np.zeros(4, np.float32)
    w += x * 0.5  # float64 into float32, in place: stays float32
    d = {"w": np.zeros(4, np.float32)}
    d["w"] -= x
    return w, d["w"]


def loop_index_is_a_python_int(x):
    acc = np.zeros(4, np.float32)
    for i in range(40):
        acc = acc + x * i  # i promotes like a Python int: float32 stays float32
    return acc, i  # and is an int64 when it is a value of its own


@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
def test_dtypes_of_in_place_updates_and_loop_indices(loops):
    x = np.array([1.0, 2.0, -1.0, 0.5], np.float32)
    check(inplace_keeps_dtype, np.arange(4.0), loops=loops)
    check(loop_index_is_a_python_int, x, loops=loops, rtol=1e-6)

    def int_plus_float(x):
        w = np.zeros(4, np.int64)
        w += x * 0.5  # NumPy: UFuncTypeError (same_kind casting)
        return w

    with pytest.raises(Exception, match="same_kind"):
        int_plus_float(np.arange(4.0))
    with pytest.raises(reactant.ReactantError, match="same_kind"):
        reactant.compile(int_plus_float, loops=loops)(reactant.to_rarray(np.arange(4.0)))


# -- loop nests updating arguments in place; rows kept in a list -------------------------------------
def sweep_in_place(u, f):
    """Gauss-Seidel sweeps written for NumPy: a nest of range loops updating an argument through
    scalar writes and a row view, returning nothing."""
    n = u.shape[0]
    for _ in range(2):
        for i in range(1, n - 1):
            row = u[i]
            for j in range(1, n - 1):
                row[j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + row[j - 1] + row[j + 1] - f[i, j])


def _keep(rows, row):
    rows.append(row)
    return len(rows)


def rows_kept_in_a_list(x, out):
    """Each iteration updates an argument in place and keeps the row it made in a list through a
    helper (read after the loop; the loop's source shows no append): a kept loop cannot carry the
    list, the clear error; auto mode finds the kept rows when it tries the loop as a while, and
    unrolls."""
    seen = []
    n = 0
    for i in range(x.shape[0]):
        out[i] = np.tanh(x[i]) * 2.0
        n = _keep(seen, out[i] + 1.0)
    return np.stack(seen[-3:]).sum(axis=0), n


@pytest.mark.parametrize("loops,optimize", MODES)
def test_loop_nest_updating_arguments_in_place(loops, optimize):
    rng = np.random.default_rng(5)
    n = 7 if loops == "unroll" else 12  # (unrolled, every point is its own ops: a smaller grid)
    check(sweep_in_place, rng.standard_normal((n, n)), rng.standard_normal((n, n)), loops=loops, optimize=optimize)


@pytest.mark.parametrize("loops,optimize", MODES)
def test_rows_kept_in_a_list_by_a_loop_updating_an_argument(loops, optimize):
    x = np.random.default_rng(6).standard_normal((40, 3))
    out = np.zeros((40, 3))
    if loops == "keep":
        with pytest.raises(EscapedTracerError, match="kept in a list or attribute"):
            check(rows_kept_in_a_list, x, out, loops=loops, optimize=optimize)
        return
    check(rows_kept_in_a_list, x, out, loops=loops, optimize=optimize)


# -- the array a dict item holds, updated by a loop through another name ---------------------------
def loop_updates_a_held_array(x):
    d = {"a": np.zeros(4)}
    a = d["a"]
    for i in range(40):
        a += x * i
    return d["a"]


def traced_while_updates_a_held_array(x):
    d = {"a": np.zeros(4)}
    a = d["a"]
    k = x[0] * 0
    while k < 3:
        a += x
        k = k + 1
    return d["a"]


@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
def test_a_loop_updating_an_array_held_elsewhere_is_numpys_answer_or_a_clear_error(loops):
    # unrolled, the dict item takes the traced array; a loop's result would not reach it (the
    # body may have updated the array in place): the clear error, never the old values. (Both
    # returned all zeros, silently, in a kept loop and a traced while.)
    x = np.array([1.0, -2.0, 0.5, 3.0])
    if loops == "keep":
        with pytest.raises(ConcretizationError, match=r"also reachable as \"d\['a'\]\""):
            check(loop_updates_a_held_array, x, loops=loops)
    else:
        check(loop_updates_a_held_array, x, loops=loops)
    with pytest.raises(ConcretizationError, match=r"also reachable as \"d\['a'\]\""):
        check(traced_while_updates_a_held_array, x, loops=loops)


# -- NumPy arrays changed in place with NumPy values by a loop body kept as a loop ------------------
def kept_loop_changes_an_attribute_array(x):
    import types

    hold = types.SimpleNamespace(w=np.zeros(4))
    for i in range(7):
        hold.w += np.sin(np.linspace(2.0, 1.5, 4)) * -0.5  # (no traced value: NumPy does it)
    return hold.w + x


def kept_loop_changes_a_dict_item_element(x):
    d = {"w": np.zeros(4)}
    for i in range(7):
        d["w"][1] += 1.0
    return d["w"] + x


class Buffer:
    def __init__(self):
        self.data = np.zeros(3)

    def fill(self, x):
        for i in range(reactant.keep(5)):
            self.data[0] += 1.0
        return x + self.data[0]


@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
def test_loop_body_changing_a_numpy_array_in_place_is_numpys_answer_or_a_clear_error(loops):
    # traced once as a loop, the body's NumPy update would happen once instead of 7 times (it
    # did, silently, in keep mode): unrolled it is NumPy's answer; kept, the array becomes a
    # traced array at the write, which the loop cannot carry in a dict or an attribute: the
    # clear error naming the lines
    x = np.array([1.0, -2.0, 0.5, 3.0])
    for fn in (kept_loop_changes_an_attribute_array, kept_loop_changes_a_dict_item_element):
        if loops == "keep":
            with pytest.raises((ConcretizationError, EscapedTracerError)):
                check(fn, x, loops=loops)
        else:
            check(fn, x, loops=loops)
    # the user's own array (Python state): updated through its handle at every iteration, as
    # NumPy does, and written back after the call
    b, ref = Buffer(), Buffer()
    got = np.asarray(reactant.compile(b.fill, loops=loops)(reactant.to_rarray(x)))
    np.testing.assert_array_equal(got, ref.fill(x))
    np.testing.assert_array_equal(np.asarray(b.data), ref.data)


def branch_writes_constants_into_a_local_array(x):
    w = np.zeros(4)
    if x[0] > 0.5:
        w[1] = 2.0
    else:
        w[2] = 3.0
        w += 1.0
    return w + x


@pytest.mark.parametrize("loops,optimize", MODES)
def test_branch_writing_numpy_values_into_a_numpy_array_follows_the_condition(loops, optimize):
    # both branches are traced: a write of host values into the NumPy array used to happen in
    # both (silently [0, 3, 5, 3] + x), it is now a traced write each branch makes
    for x0 in (1.0, 0.0):
        check(branch_writes_constants_into_a_local_array, np.array([x0, -2.0, 0.5, 3.0]), loops=loops,
              optimize=optimize)


def branch_out_and_at_into_a_local_array(x):
    w = np.zeros(4)
    if x[0] > 0.5:
        np.add(w, 1.0, out=w)  # host values into a NumPy array, on one side of the condition
    else:
        np.add.at(w, [1, 1], 2.0)
    return w + x


@pytest.mark.parametrize("loops", ["auto", "keep"])
def test_out_and_ufunc_at_with_host_values_in_a_branch_follow_the_condition(loops):
    for x0 in (1.0, 0.0):  # (both used to happen at trace time, whichever side ran)
        check(branch_out_and_at_into_a_local_array, np.array([x0, -2.0, 0.5, 3.0]), loops=loops)


def fill_in_a_branch(x):
    w = np.zeros(4)
    if x[0] > 0.5:
        w.fill(2.0)
    return w + x


def copyto_in_a_loop(x):
    w = np.zeros(4)
    for i in range(40):
        np.copyto(w, 3.0)
    return w + x


@pytest.mark.parametrize("loops", ["auto", "keep"])
def test_inplace_numpy_calls_on_a_numpy_array_in_a_branch_or_kept_loop_are_a_clear_error(loops):
    # (they ran at trace time, in both branches / once: silently wrong); auto mode unrolls the loop
    x = np.array([1.0, -2.0, 0.5, 3.0])
    with pytest.raises(ConcretizationError, match="ndarray.fill changes a NumPy array in place"):
        check(fill_in_a_branch, x, loops=loops)
    if loops == "keep":
        with pytest.raises(ConcretizationError, match="numpy.copyto changes a NumPy array in place"):
            check(copyto_in_a_loop, x, loops=loops)
    else:
        check(copyto_in_a_loop, x, loops=loops)
