"""NumPy arrays passed to a compiled function are inputs (one program per shape and dtype, not
per value), and what the function writes into them reaches the caller's array as in NumPy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import reactant


def _inplace(a, b):
    b[:] = a * 2
    b[0] += 1
    return a.sum()


def test_numpy_arguments_are_inputs_and_written_back():
    f = reactant.compile(_inplace)
    for k in range(4):
        a = np.arange(3.0) + k
        b, ref_b = np.zeros(3), np.zeros(3)
        out = f(a, b)
        ref = _inplace(a.copy(), ref_b)
        np.testing.assert_array_equal(np.asarray(out), ref)
        np.testing.assert_array_equal(b, ref_b)
    assert f.compile_count == 1  # new values, same shapes: one program


def test_numpy_argument_dtype_and_shape_compile_apart():
    f = reactant.compile(lambda x: x * 2)
    r32 = f(np.ones(3, np.float32))
    r64 = f(np.ones(4))
    assert np.asarray(r32).dtype == np.float32 and np.asarray(r64).shape == (4,)
    assert f.compile_count == 2


def test_numpy_view_argument_written_back_into_its_base():
    def scale(v):
        v *= 3

    base = np.arange(8.0)
    ref = base.copy()
    scale(ref[2:5])
    reactant.compile(scale)(base[2:5])
    np.testing.assert_array_equal(base, ref)


def test_the_same_array_twice_is_one_array():
    def g(a, b):
        a += 1
        return b.sum()  # NumPy: b is a, so it sees the update

    f = reactant.compile(g)
    x = np.arange(3.0)
    ref_x = np.arange(3.0)
    ref = g(ref_x, ref_x)
    out = f(x, x)
    assert float(np.asarray(out)) == ref
    np.testing.assert_array_equal(x, ref_x)
    # device arrays too, and the program for two distinct arrays is not reused for it
    xr, yr = reactant.to_rarray(np.arange(3.0)), reactant.to_rarray(np.arange(3.0))
    assert float(np.asarray(f(xr, yr))) == 3.0
    assert float(np.asarray(f(xr, xr))) == 9.0  # xr: [2, 3, 4] after the second update
    assert float(np.asarray(f(yr, xr))) == 9.0
    np.testing.assert_array_equal(np.asarray(yr), [1.0, 2.0, 3.0])


def test_read_only_argument_written_is_refused_before_anything_runs():
    f = reactant.compile(_inplace)
    a = np.arange(3.0)
    b = np.zeros(3)
    b.flags.writeable = False
    with pytest.raises(reactant.ReadOnlyError, match="read-only"):
        f(a, b)
    np.testing.assert_array_equal(b, np.zeros(3))
    # reading a read-only array is fine
    assert float(np.asarray(reactant.compile(lambda x: x.sum())(b))) == 0.0


def test_overlapping_numpy_arguments_are_a_clear_error():
    f = reactant.compile(_inplace)
    x = np.arange(6.0)
    before = x.copy()
    with pytest.raises(reactant.ArgumentError, match="share memory"):
        f(x[:3], x[2:5])
    np.testing.assert_array_equal(x, before)
    # overlapping arguments only read: NumPy's answer
    g = reactant.compile(lambda a, b: a[1:] * b[:-1])
    np.testing.assert_array_equal(np.asarray(g(x[:4], x[2:6])), x[1:4] * x[2:5])


def test_numpy_arguments_next_to_sharded_arrays_are_replicated():
    mesh = reactant.sharding.Mesh(np.array(reactant.devices()[:4]), ("d",))
    xs = reactant.to_rarray(np.arange(8.0), sharding=reactant.sharding.NamedSharding(mesh, reactant.sharding.PartitionSpec("d")))
    w = np.arange(8.0) * 0.5
    out = reactant.compile(lambda x, w: x * w)(xs, w)
    np.testing.assert_array_equal(np.asarray(out), np.arange(8.0) * w)


def test_changing_python_scalar_warns_once_naming_the_argument():
    def f(x, lr):
        return x * lr

    cf = reactant.compile(f)
    x = reactant.to_rarray(np.ones(2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(8):
            np.testing.assert_array_equal(np.asarray(cf(x, 0.1 * k)), np.ones(2) * 0.1 * k)
    msgs = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(msgs) == 1 and "'lr'" in msgs[0] and "track_numbers" in msgs[0]
    assert caught[0].filename == __file__
    tracked = reactant.compile(f, track_numbers=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in range(8):
            tracked(x, 0.1 * k)
    assert tracked.compile_count == 1


def _smooth_rows(A, out):
    # as NumPy users write it: update arguments in place, through views, return nothing
    for i in range(1, A.shape[0] - 1):
        row = out[i]
        row[:] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
    out[0] = A[0]
    out[-1] = A[-1]
    A[:, 0] *= -1.0


@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
@pytest.mark.parametrize("level", ["O0", "O2"])
def test_numpy_user_kernel_called_with_numpy_arrays(loops, level):
    rng = np.random.default_rng(3)
    A0 = rng.standard_normal((40, 5))
    A, out = A0.copy(), np.zeros((40, 5))
    ref_A, ref_out = A0.copy(), np.zeros((40, 5))
    assert _smooth_rows(ref_A, ref_out) is None
    res = reactant.compile(_smooth_rows, loops=loops, optimize=level)(A, out)
    assert res is None
    np.testing.assert_allclose(out, ref_out, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(A, ref_A)
