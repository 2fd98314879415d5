"""np.lib.stride_tricks.as_strided and sliding_window_view on traced arrays (O0 and O2) and on
device arrays eagerly, against NumPy; bad strides are a clear error, views are read-only."""

import numpy as np
import pytest
from npcheck import assert_same, check
from numpy.lib.stride_tricks import as_strided, sliding_window_view

import reactant
from reactant.tracing.errors import ShapeError, UnsupportedError

LEVELS = ["O0", "O2"]
X = np.arange(12.0)
M = np.arange(24, dtype=np.int32).reshape(4, 6)


@pytest.mark.parametrize("opt", LEVELS)
def test_as_strided_views_of_a_vector(opt):
    check(lambda a: (as_strided(a, (10, 3), (8, 8)),  # sliding windows
                     np.lib.stride_tricks.as_strided(a, (4, 3), (24, 8)),  # a reshape
                     as_strided(a, (3, 4), (8, 24)),  # a transpose
                     as_strided(a, (5,), (16,)),  # every other element
                     as_strided(a, (3, 3), (0, 8)),  # a broadcast row
                     as_strided(a, (2, 2, 3), (48, 24, 8)), as_strided(a), as_strided(a, (0, 3), (8, 8)),
                     as_strided(a[4:], (4,), (8,)), as_strided(a, (1, 3), (-8, 8)),
                     as_strided(a, (10, 3), (a.strides[0], a.strides[0])).sum(axis=1)), X, optimize=opt)


@pytest.mark.parametrize("opt", LEVELS)
def test_as_strided_views_of_a_matrix(opt):
    check(lambda a: (as_strided(a, (3, 5, 2, 2), a.strides + a.strides),  # 2-d windows
                     as_strided(a, (6, 4), (a.itemsize, a.strides[0])),
                     as_strided(a, (4,), (a.strides[0] + a.itemsize,)),  # the diagonal
                     as_strided(a, shape=(2, 6)), as_strided(a[1:], (2, 2), (4, 4)),
                     as_strided(a, (3,), (0,))), M, optimize=opt)


P = np.arange(4 * 8 * 8, dtype=np.float32).reshape(4, 8, 8)


def _blocks(a):  # (C, H/2, W/2, 2, 2): the windows of a 2x2 pooling layer
    sc, sh, sw = a.strides
    return as_strided(a, (4, 4, 4, 2, 2), (sc, 2 * sh, 2 * sw, sh, sw))


@pytest.mark.parametrize("opt", LEVELS)
def test_non_overlapping_views_are_data_movement(opt):
    # dims that nest without overlap: a reshape, slice and transpose of the buffer, no gather
    k = P.itemsize
    views = lambda a: (_blocks(a), _blocks(a).max(axis=(3, 4)),  # noqa: E731
                       as_strided(a, (4, 4, 8), (256, 64, 4)),  # every other row
                       as_strided(a, (2, 4, 4), (512, 32 * k, 2 * k)),  # every other row and column
                       as_strided(a, (3, 5), (7 * k, k)),  # rows of 5 with gaps
                       as_strided(a, (5, 3), (k, 7 * k)),  # the same, transposed
                       as_strided(a, (3, 2), (100 * k, k)))  # the last block runs past the end
    check(views, P, optimize=opt)
    text = reactant.code_hlo(reactant.compile(views, optimize=opt), reactant.to_rarray(P))
    assert "gather" not in text
    # overlapping windows are still one gather
    windows = reactant.compile(lambda a: as_strided(a, (8, 3), (k, k)) * 1, optimize=opt)
    assert "gather" in reactant.code_hlo(windows, reactant.to_rarray(P))


@pytest.mark.parametrize("opt", LEVELS)
def test_sliding_window_view(opt):
    check(lambda a: (sliding_window_view(a, (2, 3)), sliding_window_view(a, 3, axis=1),
                     sliding_window_view(a, (2, 2), axis=(0, 0)), sliding_window_view(a, 2, axis=-2),
                     sliding_window_view(a, (4, 6)), sliding_window_view(a, 3, axis=1).max(axis=-1)), M, optimize=opt)
    check(lambda a: (sliding_window_view(a, 4), sliding_window_view(a, 4).mean(axis=-1), sliding_window_view(a, 1),
                     sliding_window_view(a, 12), sliding_window_view(a, 0)), X, optimize=opt)


def test_strides_property_is_c_contiguous():
    got = reactant.compile(lambda a, b: (np.zeros(a.strides), np.zeros(b.strides)))(*reactant.to_rarray((X, M)))
    assert got[0].shape == X.strides and got[1].shape == M.strides
    assert reactant.to_rarray(M).strides == M.strides


def test_bad_strides_are_clear_errors():
    x = reactant.to_rarray(X)
    with pytest.raises(UnsupportedError, match="not a multiple of its itemsize"):
        reactant.compile(lambda a: as_strided(a, (10, 3), (8, 12)))(x)
    with pytest.raises(ShapeError, match="outside its 12 elements"):
        reactant.compile(lambda a: as_strided(a, (11, 3), (8, 8)))(x)
    with pytest.raises(ShapeError, match="outside its 12 elements"):
        reactant.compile(lambda a: as_strided(a, (3,), (-8,)))(x)
    with pytest.raises(ShapeError, match="mismatch in length"):
        reactant.compile(lambda a: as_strided(a, (3, 3), (8,)))(x)
    with pytest.raises(ValueError, match="window shape cannot be larger"):
        reactant.compile(lambda a: sliding_window_view(a, 13))(x)
    with pytest.raises(ValueError, match="matching length"):
        reactant.compile(lambda a: sliding_window_view(a, (2, 2), axis=0))(x)


def _write_item(a):
    v = sliding_window_view(a, 3)
    v[0, 0] = 5.0
    return v


def _write_inplace(a):
    v = as_strided(a, (4, 3), (24, 8), writeable=True)
    v += 1
    return v


def _write_out(a):
    v = as_strided(a, (4, 3), (24, 8))
    np.add(v, 1, out=v)
    return v


@pytest.mark.parametrize("fn", [_write_item, _write_inplace, _write_out], ids=["setitem", "inplace", "out"])
def test_views_are_read_only(fn):
    with pytest.raises(UnsupportedError, match="read-only"):
        reactant.compile(fn)(reactant.to_rarray(X))


def test_copy_of_a_view_is_writable():
    def f(a):
        v = np.copy(sliding_window_view(a, 3))
        v[0, 0] = -1.0
        return v

    want = sliding_window_view(X, 3).copy()
    want[0, 0] = -1.0
    check(f, X)
    np.testing.assert_array_equal(np.asarray(reactant.compile(f)(reactant.to_rarray(X))), want)


def test_unconverted_code_and_host_arrays():
    # control_flow=False: the function is not converted; the guard on as_strided routes it
    f = lambda a: np.lib.stride_tricks.as_strided(a, (10, 3), (8, 8)).sum(axis=1)  # noqa: E731
    got = reactant.compile(f, control_flow=False)(reactant.to_rarray(X))
    np.testing.assert_array_equal(np.asarray(got), f(X))
    # NumPy arrays inside a trace, and outside one, keep NumPy's own (writeable) views
    g = reactant.compile(lambda a: a + as_strided(np.arange(4.0), (3, 2), (8, 8)))
    got = g(reactant.to_rarray(np.ones((3, 2))))
    np.testing.assert_array_equal(np.asarray(got), 1 + as_strided(np.arange(4.0), (3, 2), (8, 8)))
    assert np.lib.stride_tricks.as_strided(X.copy(), (2, 2), (8, 8)).flags.writeable


def test_eager_on_device_arrays():
    r = reactant.to_rarray(X)
    assert_same(np.asarray(sliding_window_view(r, 4)), sliding_window_view(X, 4))
    assert_same(np.asarray(sliding_window_view(reactant.to_rarray(M), 2, axis=0)), sliding_window_view(M, 2, axis=0))
    # as_strided is not dispatched by NumPy: a device array is read to the host, NumPy's view of it
    assert_same(as_strided(r, (10, 3), (8, 8)), as_strided(X, (10, 3), (8, 8)))


def _pool_into(x, out):  # written as a NumPy user writes it: the result into an argument
    sc, sh, sw = x.strides
    for c in range(x.shape[0]):
        win = as_strided(x[c], (4, 4, 2, 2), (2 * sh, 2 * sw, sh, sw))
        out[c] = win.max(axis=(2, 3))


@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
@pytest.mark.parametrize("opt", LEVELS)
def test_pooling_into_an_argument_in_every_mode(loops, opt):
    want_out, got_out = np.zeros((4, 4, 4), np.float32), reactant.to_rarray(np.zeros((4, 4, 4), np.float32))
    x = P.copy()
    _pool_into(x, want_out)
    rx = reactant.to_rarray(P.copy())
    assert reactant.compile(_pool_into, loops=loops, optimize=opt)(rx, got_out) is None
    np.testing.assert_array_equal(np.asarray(got_out), want_out)
    np.testing.assert_array_equal(np.asarray(rx), P)  # the viewed array is unchanged
