"""Lists of traced values are arrays: ``np.array``/``np.asarray``/``np.stack``/... and every NumPy
function or ufunc given a (nested) list or tuple holding traced values gives NumPy's shape,
dtype and values inside compiled functions (in every loop mode), and a traced value that NumPy
itself must turn into an array raises an error naming the user's line."""

import inspect
import warnings

import numpy as np
import pytest
from npcheck import assert_same, to_numpy

import reactant

LOOPS = ["auto", "keep", "unroll"]
A = np.arange(24.0).reshape(4, 6)
F = np.arange(24, dtype=np.float32).reshape(4, 6)


def compiled(fn, *args, loops="auto", optimize="O0"):
    out = reactant.compile(fn, loops=loops, optimize=optimize)(*[reactant.to_rarray(a) for a in args])
    return to_numpy(out)


def numpy_answer(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*[np.copy(a) for a in args])


def check(fn, *args, loops="auto", optimize="O0"):
    want = numpy_answer(fn, *args)
    got = compiled(fn, *args, loops=loops, optimize=optimize)
    if isinstance(want, (np.ndarray, np.generic)):  # an array, not a list holding arrays
        assert isinstance(got, np.ndarray), type(got)
    assert_same(got, want)


# -- the issue's cases -------------------------------------------------------------------------------
def rows_as_array_sum(a):
    q = np.asarray([a[0], a[1], a[2], a[3]])
    return q.sum()


def rows_as_array_index(a):
    q = np.asarray([a[0], a[1], a[2], a[3]])
    return q[1, :] + q.shape[0]


def comprehension(icf):
    K, d = 4, 3
    return np.asarray([np.exp(icf[k, :d]) for k in range(K)])


def comprehension_of_sums(x):
    return np.array([x[k].sum() for k in range(x.shape[0])])


@pytest.mark.parametrize("loops", LOOPS)
@pytest.mark.parametrize("fn", [rows_as_array_sum, rows_as_array_index, comprehension, comprehension_of_sums],
                         ids=lambda f: f.__name__)
def test_issue_cases(fn, loops):
    check(fn, A, loops=loops, optimize="O2")


def test_array_of_rows_is_a_traced_array():
    seen = {}

    def f(a):
        q = np.asarray([a[0], a[1]])
        seen.update(type=type(q), shape=q.shape, dtype=q.dtype)
        return q

    compiled(f, A)
    assert seen == {"type": reactant.TracedRArray, "shape": (2, 6), "dtype": np.float64}


# -- lists accumulated in a for loop -----------------------------------------------------------------
def acc_array(x):
    acc = []
    for i in range(4):
        acc.append(x[i] * 2)
    return np.array(acc)


def acc_stack(x):
    acc = []
    for i in range(4):
        acc.append(x[i] * 2)
    return np.stack(acc)


def acc_builtin_sum(x):
    acc = []
    for i in range(4):
        acc.append(x[i] * 2)
    return sum(acc)


def acc_np_sum(x):
    acc = []
    for i in range(4):
        acc.append(x[i] * 2)
    return np.sum(acc, axis=0)


def acc_mean(x):
    acc = []
    for i in range(4):
        acc.append(x[i, 1] * 2)
    return np.mean(acc)


def acc_max(x):
    acc = []
    for i in range(4):
        acc.append(x[i] - i)
    return np.max(acc)


ACCUMULATED = [acc_array, acc_stack, acc_builtin_sum, acc_np_sum, acc_mean, acc_max]


@pytest.mark.parametrize("loops", ["auto", "unroll"])
@pytest.mark.parametrize("fn", ACCUMULATED, ids=lambda f: f.__name__)
def test_list_accumulated_in_a_loop(fn, loops):
    check(fn, A, loops=loops)


def test_list_accumulated_in_a_kept_loop():
    # a forced loop runs the body once: the list holds one value of the body, which is a clear
    # error when used after the loop (unrolled, or loops="auto", it is NumPy's answer)
    with pytest.raises(reactant.EscapedTracerError, match="after the loop body"):
        check(acc_stack, A, loops="keep")


def list_inside_the_body(x):
    s = np.zeros(6)
    for i in range(4):
        pair = np.asarray([x[i], x[i] * 2, np.ones(6)])
        s = s + pair.sum(axis=0)
    return s


def list_read_inside_the_body(x):
    rows = [x[0], x[1] * 2.0, np.ones(6)]
    s = np.zeros(6)
    for i in range(4):
        s = s + np.stack(rows).sum(axis=0) * x[i] + np.asarray(rows)[1]
    return s


@pytest.mark.parametrize("loops", LOOPS)
@pytest.mark.parametrize("fn", [list_inside_the_body, list_read_inside_the_body], ids=lambda f: f.__name__)
def test_lists_in_loop_bodies(fn, loops):
    check(fn, A, loops=loops)


# -- construction: shapes, dtypes, copies ----------------------------------------------------------
CONSTRUCTION = [
    lambda x: np.array([[x[0, 0], 1.0], [2.0, x[1, 1]]]),
    lambda x: np.array(((x[0, 0], 1.0), [2.0, x[1, 1]])),
    lambda x: np.asarray((x[0], x[1])),
    lambda x: np.array([x[0], np.ones(6), [1, 2, 3, 4, 5, 6]]),
    lambda x: np.array([[x[0]], [np.zeros(6)]]),
    lambda x: np.array([x[0, 0], 1.0]),
    lambda x: np.array([x[0, 0], 1]),
    lambda x: np.array([x[0, 0], True]),
    lambda x: np.array([x[0, 0], np.float32(1)]),
    lambda x: np.array([x[0, 0], np.float64(1)]),
    lambda x: np.array([x[0, 0], 1j]),
    lambda x: np.array([x[0, 0].astype(np.int8), 1]),
    lambda x: np.array([x[0, 0].astype(np.int8), np.int8(1)]),
    lambda x: np.array([x[0, 0] > 3, True]),
    lambda x: np.array([x[0], x[1]], dtype=np.int32),
    lambda x: np.asarray([[x[0, 0]], [2]], dtype=np.float16),
    lambda x: np.array([x[0, 0], x[0, 1]], ndmin=3),
    lambda x: np.array(x[0, 0], ndmin=2),
    lambda x: np.array([x[0, :0], x[1, :0]]),
    lambda x: np.asanyarray([x[0, 0], 2.0]),
    lambda x: np.ascontiguousarray(x[0, 0]),
    lambda x: np.ascontiguousarray([x[0, 0], 2.0]),
    lambda x: np.asfortranarray([[x[0, 0], 2.0]]),
    lambda x: np.array(x, dtype=np.int64),
    lambda x: np.asarray(x, dtype=np.float32),
    lambda x: np.fromiter((x[i, 0] for i in range(4)), np.float64),
    lambda x: np.fromiter((x[i, 0] for i in range(4)), np.int32, count=3),
    lambda x: np.fromiter(iter([1.0, 2.0]), np.float32) + x[0, :2],
    lambda x: np.array([1.0, 2.0]) + x[0, :2],
]


def _label(f):
    return inspect.getsource(f).strip().rstrip(",")[10:60]


@pytest.mark.parametrize("dtype", [np.float32])  # (Python floats with float32: the promotions differ)
@pytest.mark.parametrize("fn", CONSTRUCTION, ids=_label)
def test_construction(fn, dtype):
    check(fn, A.astype(dtype))


def test_array_copies_and_asarray_returns_its_argument():
    def f(x):
        y = np.array(x)
        y[0, 0] = 100.0  # the copy is updated, not x
        z = np.asarray(x)
        w = np.asarray(x, copy=True)
        w[1, 1] = -1.0
        assert z is x and y is not x and w is not x and np.array(x, copy=None) is x
        assert np.asarray(x, dtype=np.float32) is not x
        return x + 0, y, z + 0, w

    x = A.copy()
    got = compiled(f, x)
    assert_same(got, list(numpy_answer(f, x)))


def test_a_returned_list_of_tracers_is_a_list_of_arrays():
    out = reactant.compile(lambda x: [x[0], x[1] * 2])(reactant.to_rarray(A))
    assert isinstance(out, list) and len(out) == 2
    assert_same(to_numpy(out), [A[0], A[1] * 2])


def test_traced_python_scalar_in_a_list():
    f = reactant.compile(lambda x, s: np.array([x[0, 0].astype(np.float32), s]))
    out = f(reactant.to_rarray(F), reactant.to_rarray(2.5, track_numbers=True))
    assert_same(np.asarray(out), np.array([np.float32(0), 2.5]))


def test_device_array_read_inside_the_trace():
    w = reactant.to_rarray(np.arange(6.0))

    def f(a):
        return np.array(w) * a, np.asarray([w, a]), np.sum([w, a], axis=0)

    a = np.full(6, 2.0)
    got = compiled(f, a)
    wn = np.arange(6.0)
    assert_same(got, (wn * a, np.asarray([wn, a]), np.sum([wn, a], axis=0)))
    hlo = reactant.code_hlo(reactant.compile(f), reactant.to_rarray(a))
    assert "%arg1: tensor<6xf64>" in hlo and "5.0" not in hlo  # an input read at every call, not a constant


# -- NumPy functions and ufuncs given lists -----------------------------------------------------------
FUNCTIONS = [
    lambda x: np.exp([x[0, 0], x[1, 1], 0.5]),
    lambda x: np.add([x[0, 0], x[0, 1]], 1.0),
    lambda x: np.add(x[0], [x[1, 1]] * 6),
    lambda x: np.maximum.accumulate([x[0, 3], x[0, 1], x[0, 5]]),
    lambda x: np.add.reduce([x[0], x[1]]),
    lambda x: np.multiply.outer([x[0, 0], x[0, 1]], [1.0, 2.0]),
    lambda x: np.sum([x[0], x[1]], axis=0),
    lambda x: np.sum([x[0], [1.0] * 6]),
    lambda x: np.mean([x[0, 0], x[0, 1], 4]),
    lambda x: np.max([[x[0, 0], x[1, 1]], [2.0, 3.0]], axis=1),
    lambda x: np.dot([x[0, 0], x[0, 1]], [1.0, 2.0]),
    lambda x: np.linalg.norm([x[0, 0], x[0, 1]]),
    lambda x: np.clip([x[0, 0], x[1, 1]], 1.0, 7.0),
    lambda x: np.polyval([x[0, 1], 2.0, x[0, 2]], x[1]),
    lambda x: np.interp(x[0], [0.0, 10.0], [x[1, 1], 1.0]),
    lambda x: np.cumsum([x[0, 1], x[0, 2], 3.0]),
    lambda x: np.where([[True], [False], [True], [True]], x, [x[0, 0], 1, 2, 3, 4, 5]),
    lambda x: np.copy([x[0, 0], 2.0]),
    lambda x: np.shape([x[0], x[1]]),
    lambda x: np.ravel([x[0], x[1]]),
    lambda x: np.atleast_2d([x[0, 0], x[1, 1]]),
    lambda x: np.einsum("i,i->i", [x[0, 0], x[0, 1]], [1.0, 2.0]),
    lambda x: np.meshgrid([x[0, 0], x[0, 1]], [1.0, 2.0, 3.0]),
    lambda x: np.broadcast_arrays([x[0, 0], x[0, 1]], 1.0),
]


@pytest.mark.parametrize("dtype", [np.float32])  # (Python floats with float32: the promotions differ)
@pytest.mark.parametrize("fn", FUNCTIONS, ids=_label)
def test_functions_of_lists(fn, dtype):
    check(fn, A.astype(dtype))


SEQUENCES = [
    lambda x: np.stack([x[0], np.ones(6), [1.0, 2, 3, 4, 5, 6]]),
    lambda x: np.stack([x[0, 0], 1.0]),
    lambda x: np.stack((x[0, 0], np.float32(1))),
    lambda x: np.stack([[x[0, 0], x[0, 1]], (2.0, 3.0)], axis=1),
    lambda x: np.concatenate([x[0], [1.0, 2.0], np.zeros(2, np.float32)]),
    lambda x: np.concatenate(([x[0, 0], 1.0], [2.0])),
    lambda x: np.vstack([[x[0, 0], x[0, 1]], [1.0, 2.0]]),
    lambda x: np.vstack([x[0], np.ones(6)]),
    lambda x: np.hstack([x[0, 0], 1.0]),
    lambda x: np.dstack([x[0], np.ones(6)]),
    lambda x: np.column_stack([x[0], [1.0, 2, 3, 4, 5, 6]]),
    lambda x: np.block([[x[:2, :2], np.zeros((2, 1))], [np.ones((1, 2)), 5.0]]),
    lambda x: np.block([[x[0, 0], 1.0], [2.0, x[1, 1]]]),
    lambda x: np.block([x[0], 3.0]),
    lambda x: np.block(x),
    lambda x: np.lexsort([x[0], [3.0, 2, 1, 0, 5, 4]]),
    lambda x: np.lexsort((x[1], x[0])),
    lambda x: np.select([x > 5, x > 10], [x, 1.0]),
    lambda x: np.select([x[0] > 5, [True, False] * 3], [x[0], [1.0] * 6], default=x[1, 1]),
    lambda x: np.piecewise(x[0], [x[0] < 3, x[0] >= 3], [lambda v: v * 2, 1.0]),
]


@pytest.mark.parametrize("dtype", [np.float32])
@pytest.mark.parametrize("fn", SEQUENCES, ids=_label)
def test_sequences_of_arrays(fn, dtype):
    check(fn, A.astype(dtype))


def test_lists_of_traced_indices():
    def f(x):
        i, j = x[0, 1].astype(np.int64), x[0, 3].astype(np.int64)
        y = np.zeros_like(x[0])
        np.add.at(y, [i, j, i], 1.0)
        return y, x[[i, 2]], x[1, [j, i]], np.take(x[2], [i, j])

    check(f, A)


def test_gradient_through_a_list():
    def f(x):
        return np.sum(np.asarray([x[0] * 2.0, x[1], 3.0]) ** 2)

    x = np.array([1.0, 3.0])
    g = reactant.compile(lambda a: reactant.gradient(f, a))(reactant.to_rarray(x))
    np.testing.assert_allclose(np.asarray(g), [8.0, 6.0])


def test_eager_lists_of_device_arrays():
    a = reactant.to_rarray(A)
    np.testing.assert_array_equal(np.asarray([a[0], a[1]]), A[:2])
    np.testing.assert_array_equal(np.asarray(np.stack([a[0], a[1]])), A[:2])


# -- errors --------------------------------------------------------------------------------------------
def test_ragged_list_is_a_shape_error():
    def f(a):
        return np.asarray([a[0], a[1, :3]])

    with pytest.raises(ValueError):
        numpy_answer(f, A)
    with pytest.raises(reactant.ShapeError, match=r"different shapes: \(6,\), \(3,\)") as e:
        compiled(f, A)
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}" in str(e.value)


def test_copy_false_needs_a_copy():
    with pytest.raises(ValueError):
        np.array([np.float64(1)], copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        compiled(lambda a: np.array([a[0], a[1]], copy=False), A)
    with pytest.raises(ValueError, match="copy=False"):
        compiled(lambda a: np.array(a, dtype=np.float32, copy=False), A)


def test_strings_do_not_mix_with_traced_values():
    with pytest.raises(reactant.ArgumentError, match="str"):
        compiled(lambda a: np.asarray([a[0, 0], "x"]), A)


def test_numpy_array_operator_with_a_list_names_the_line():
    def f(a):
        return np.ones(2) * [a[0, 0], a[0, 1]]

    with pytest.raises(reactant.ConcretizationError, match="cannot convert traced float64") as e:
        compiled(f, A)
    msg = str(e.value)
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}" in msg
    assert "np.asarray" in msg and "hint" in msg


def test_code_that_is_not_converted_gets_an_error_not_an_object_array():
    ns = {"np": np}
    exec(compile("def lib(a):\n    return np.asarray([a[0], a[1]]).sum()\n", "<library>", "exec"), ns)

    with pytest.raises(reactant.ConcretizationError, match="cannot convert traced float64\\[6\\] to a NumPy array"):
        reactant.compile(lambda a: ns["lib"](a))(reactant.to_rarray(A))


def test_returning_an_object_array_of_tracers_is_an_error():
    def f(a):
        out = np.empty(2, dtype=object)
        out.fill(a[0])
        return out

    with pytest.raises(reactant.ConcretizationError, match="object array holding traced values"):
        compiled(f, A)


def test_code_that_is_not_converted_gets_lists_as_arrays_where_numpy_dispatches():
    # NumPy dispatches on the visible traced argument; the list beside it is an array too
    ns = {"np": np}
    exec(compile("def lib(a):\n    return np.clip([a[0, 0], a[1, 1], 9.0], a[0, 2], 8.0), "
                 "np.where(a[0] > 2, [a[1, 0]] * 6, 0.0)\n", "<library>", "exec"), ns)
    got = to_numpy(reactant.compile(lambda a: ns["lib"](a))(reactant.to_rarray(F)))
    assert_same(list(got), list(ns["lib"](F)))
