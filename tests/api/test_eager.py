"""Eager NumPy on ConcreteRArrays outside compiled functions (compiled once per op signature)."""

import numpy as np
import pytest

import reactant
from reactant import eager


def test_eager_arithmetic_and_functions():
    a_np = np.arange(6.0).reshape(2, 3)
    a = reactant.to_rarray(a_np)
    b = reactant.to_rarray(np.ones((2, 3)))
    r = (a + b) * 2 - a / 3
    assert isinstance(r, reactant.ConcreteRArray)
    np.testing.assert_allclose(np.asarray(r), (a_np + 1) * 2 - a_np / 3)
    np.testing.assert_allclose(np.asarray(np.exp(a)), np.exp(a_np))
    np.testing.assert_allclose(float(np.sum(a)), a_np.sum())
    np.testing.assert_allclose(np.asarray(a @ a.T), a_np @ a_np.T)
    np.testing.assert_allclose(np.asarray(a.mean(axis=0)), a_np.mean(axis=0))
    np.testing.assert_allclose(np.asarray(np.concatenate([a, b])), np.concatenate([a_np, np.ones((2, 3))]))
    np.testing.assert_allclose(np.asarray(a[1, ::-1]), a_np[1, ::-1])
    np.testing.assert_allclose(np.asarray(a + np.ones(3)), a_np + 1)
    assert np.shape(a) == (2, 3)
    assert (a > 2).dtype == np.bool_


def test_eager_ops_are_cached():
    a = reactant.to_rarray(np.ones(5, np.float32))
    _ = a * 3.0
    n = eager.cache_size()
    for _ in range(5):
        _ = a * 3.0
    assert eager.cache_size() == n
    _ = a * 4.0  # a new constant: one more executable
    assert eager.cache_size() == n + 1


def test_eager_inplace_and_setitem():
    a = reactant.to_rarray(np.zeros(4))
    a += 1
    a[1:3] = 7.0
    a[0] *= 5
    np.testing.assert_allclose(np.asarray(a), [5.0, 7.0, 7.0, 1.0])
    idx = reactant.to_rarray(np.array([3, 3, 0]))
    np.add.at(a, idx, 1.0)
    np.testing.assert_allclose(np.asarray(a), [6.0, 7.0, 7.0, 3.0])


def test_concrete_arrays_captured_by_a_trace_are_constants():
    c = reactant.to_rarray(np.array([1.0, 2.0, 3.0]))
    f = reactant.compile(lambda x: x * c + c.sum())
    x = reactant.to_rarray(np.ones(3))
    np.testing.assert_allclose(np.asarray(f(x)), [7.0, 8.0, 9.0])


def test_eager_boolean_mask_and_device_number_slices():
    # eagerly the mask's values are known: the selection has a static length
    a_np = np.arange(6.0).reshape(2, 3)
    a = reactant.to_rarray(a_np)
    m = a > 2
    np.testing.assert_array_equal(np.asarray(a[m]), a_np[a_np > 2])
    np.testing.assert_array_equal(np.asarray(a[:, np.array([True, False, True])]), a_np[:, [0, 2]])
    np.testing.assert_array_equal(np.asarray(a[reactant.to_rarray(np.array([False, True]))]), a_np[[1]])
    s = reactant.to_rarray(np.array(5.0))
    assert np.asarray(s[reactant.to_rarray(np.array(True))]).shape == (1,)
    assert np.asarray(s[reactant.to_rarray(np.array(False))]).shape == (0,)
    lo, hi = reactant.to_rarray(np.int64(1)), reactant.to_rarray(np.int64(3))
    np.testing.assert_array_equal(np.asarray(a[0, lo:hi]), a_np[0, 1:3])


# -- out= naming NumPy arrays (``buf[i] *= x`` with a NumPy buf and a device x) -------------------
def test_out_into_numpy_arrays_is_written_as_numpy_does():
    x = np.linspace(-1.0, 1.0, 6)
    X = reactant.to_rarray(x)
    want, got = np.ones((3, 6)), np.ones((3, 6))
    want[1] *= x
    got[1] *= X  # NumPy calls multiply(row, X, out=(row,)) on the row view
    np.testing.assert_array_equal(got, want)

    want, got = np.full(6, 7.0), np.full(6, 7.0)
    np.add(x, 1.0, out=want, where=x > 0)
    r = np.add(X, 1.0, out=got, where=x > 0)
    assert r is got
    np.testing.assert_array_equal(got, want)

    want, got = np.zeros(6), np.zeros(6)
    np.cumsum(x, out=want)
    assert np.cumsum(X, out=got) is got
    np.testing.assert_allclose(got, want)

    q, rem = np.zeros(6), np.zeros(6)
    np.divmod(X, 0.3, out=(q, rem))
    np.testing.assert_allclose(q, np.divmod(x, 0.3)[0])
    np.testing.assert_allclose(rem, np.divmod(x, 0.3)[1])


def test_out_into_a_numpy_array_of_a_narrower_kind_is_numpys_error():
    ib = np.arange(6)
    with pytest.raises(TypeError, match="same_kind"):
        np.multiply(reactant.to_rarray(np.linspace(0.0, 1.0, 6)), 2.5, out=ib)
    np.testing.assert_array_equal(ib, np.arange(6))  # nothing written


def test_setitem_through_a_device_mask_with_one_value_per_true_element():
    x = np.arange(6.0)
    want = x.copy()
    want[want > 2.5] = np.array([10.0, 20.0, 30.0])
    d = reactant.to_rarray(np.arange(6.0))
    d[d > 2.5] = reactant.to_rarray(np.array([10.0, 20.0, 30.0]))
    np.testing.assert_array_equal(np.asarray(d), want)
    d[d > 15.0] = -1.0  # a scalar keeps the masked form
    want[want > 15.0] = -1.0
    np.testing.assert_array_equal(np.asarray(d), want)
    with pytest.raises((ValueError, IndexError)):  # NumPy's error for a wrong count
        d[d > 0.5] = reactant.to_rarray(np.array([1.0, 2.0]))
