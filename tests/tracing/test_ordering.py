"""ufunc outer/reduceat, partition, lexsort, fixed-size unique/nonzero, piecewise, convolve and
correlate, traced vs NumPy (values and dtypes); errors; gradients against jax.grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from npcheck import check, rand, run

import reactant
from reactant.tracing.numpy_api import ordering

DTYPES = ["float32", "float64", "int32", "int64"]
RNG = np.random.default_rng(0)


# -- ufunc.outer ------------------------------------------------------------------------------
@pytest.mark.parametrize("ufunc", [np.add, np.subtract, np.multiply, np.maximum, np.power, np.arctan2,
                                   np.greater, np.logical_and, np.hypot, np.floor_divide])
@pytest.mark.parametrize("dtype", DTYPES)
def test_outer(ufunc, dtype):
    if ufunc in (np.arctan2, np.hypot) and dtype.startswith("int"):
        dtype = "float64"
    x = rand(RNG, (3,), dtype, positive=ufunc is np.power)
    y = rand(RNG, (2, 4), dtype, positive=ufunc in (np.power, np.floor_divide))
    if ufunc is np.power and dtype.startswith("int"):
        y = y % 3
    check(lambda a, b: ufunc.outer(a, b), x, y, rtol=1e-5)
    check(lambda a, b: ufunc.outer(b, a), x, y, rtol=1e-5)


def test_outer_mixed_and_scalar():
    x = np.arange(4, dtype=np.int32)
    y = np.linspace(0, 1, 3, dtype=np.float32)
    check(lambda a, b: np.multiply.outer(a, b), x, y)
    check(lambda a: np.add.outer(a, 2), x)
    check(lambda a: np.add.outer(a, np.ones((2, 1), np.int64)), x)
    check(lambda a: np.divmod.outer(a, np.array([1, 3])), x)


def test_every_binary_ufunc_has_outer():
    from reactant.tracing.numpy_api import FUNCTIONS, UFUNC_METHODS

    missing = [f.__name__ for f in FUNCTIONS
               if isinstance(f, np.ufunc) and f.nin == 2 and (f, "outer") not in UFUNC_METHODS]
    assert missing == []


# -- ufunc.reduceat ---------------------------------------------------------------------------
@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_reduceat(ufunc, dtype, axis):
    x = rand(RNG, (8, 6), dtype, low=0.5, high=1.5)
    idx = [0, 4, 1, 5, 5] if axis == 0 else [0, 2, 2, 5, 3]
    check(lambda a: ufunc.reduceat(a, idx, axis=axis), x, rtol=1e-5)


@pytest.mark.parametrize("ufunc", [np.logical_and, np.logical_or, np.bitwise_or, np.bitwise_xor])
def test_reduceat_logical(ufunc):
    x = RNG.integers(0, 3, (7, 3)).astype(np.int32)
    check(lambda a: ufunc.reduceat(a, [0, 3, 2, 6]), x)
    check(lambda a: ufunc.reduceat(a != 0, [1, 5]), x)


def test_reduceat_dtype_and_empty_indices():
    x = np.arange(8, dtype=np.int32)
    check(lambda a: np.add.reduceat(a, [0, 4], dtype=np.float32), x)
    check(lambda a: np.add.reduceat(a, np.array([], dtype=np.int64)), x)


def test_reduceat_errors():
    x = np.arange(8.0)
    with pytest.raises(IndexError, match=r"index 8 out-of-bounds in add.reduceat \[0, 8\)"):
        run(lambda a: np.add.reduceat(a, [0, 8]), x)
    with pytest.raises(IndexError, match="index -1 out-of-bounds"):
        run(lambda a: np.maximum.reduceat(a, [-1]), x)
    with pytest.raises(NotImplementedError, match="static indices"):
        run(lambda a, i: np.add.reduceat(a, i), x, np.array([0, 2]))


def test_ufunc_at_exists():
    x = np.zeros(5)

    def f(a):
        np.add.at(a, np.array([0, 0, 3]), 1.0)
        return a

    check(f, x)


@pytest.mark.parametrize("ufunc", [np.subtract, np.true_divide, np.fmax, np.fmin])
def test_ufunc_at_more(ufunc):
    x = np.array([1.0, np.nan, 3.0, 4.0, 5.0])

    def f(a, v):
        ufunc.at(a, np.array([0, 0, 1, 4]), v)
        return a

    check(f, x, np.array([2.0, -1.0, 0.5, 4.0]))


@pytest.mark.parametrize("ufunc", [np.bitwise_and, np.bitwise_or, np.bitwise_xor])
def test_ufunc_at_bitwise(ufunc):
    def f(a):
        ufunc.at(a, [1, 1, 3], np.array([6, 3, 5], np.int32))
        return a

    check(f, np.arange(5, dtype=np.int32) + 9)


# -- partition / argpartition -----------------------------------------------------------------
def _assert_partitioned(out, a, kths, axis):
    """NumPy's contract: out[k] is the k-th smallest; smaller-or-equal before, larger-or-equal
    after; out is a permutation of a along axis."""
    srt = np.sort(a, axis=axis)
    o = np.moveaxis(out, axis, -1)
    s = np.moveaxis(srt, axis, -1)
    np.testing.assert_array_equal(np.sort(o, axis=-1), s)
    for k in np.atleast_1d(kths):
        k = int(k) % o.shape[-1]
        np.testing.assert_array_equal(o[..., k], s[..., k])
        assert np.all(o[..., :k] <= o[..., k:k + 1]) and np.all(o[..., k + 1:] >= o[..., k:k + 1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, -1, None])
@pytest.mark.parametrize("kth", [0, 3, -1, (1, 4)])
def test_partition(dtype, axis, kth):
    a = rand(RNG, (5, 6), dtype)
    a[0, :2] = a[1, :2]  # ties
    got = run(lambda x: np.partition(x, kth, axis=axis), a)
    want = np.partition(a, kth, axis=axis)
    assert got.dtype == want.dtype and got.shape == want.shape
    flat = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else axis
    _assert_partitioned(got, flat, kth, ax)
    idx = run(lambda x: np.argpartition(x, kth, axis=axis), a)
    assert idx.dtype == np.argpartition(a, kth, axis=axis).dtype
    _assert_partitioned(np.take_along_axis(flat, idx, axis=ax), flat, kth, ax)


def test_partition_nan_last():
    a = np.array([3.0, np.nan, 1.0, 2.0])
    got = run(lambda x: np.partition(x, 2), a)
    np.testing.assert_array_equal(got[:3], [1.0, 2.0, 3.0])
    assert np.isnan(got[3])


def test_partition_errors():
    with pytest.raises(ValueError, match=r"kth\(=5\) out of bounds \(5\)"):
        run(lambda x: np.partition(x, 5), np.arange(5.0))
    with pytest.raises(ValueError, match=r"kth\(=-6\) out of bounds"):
        run(lambda x: np.argpartition(x, [0, -6]), np.arange(5.0))


# -- lexsort ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_lexsort(dtype):
    k1 = rand(RNG, (12,), dtype) // 2
    k2 = RNG.integers(0, 3, 12).astype(np.int32)
    check(lambda a, b: np.lexsort((a, b)), k1, k2)
    check(lambda a, b: np.lexsort((b, a)), k1, k2)
    check(lambda a: np.lexsort((a,)), k1)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_lexsort_2d_and_stacked(axis):
    keys = RNG.integers(0, 3, (3, 4, 5)).astype(np.float64)
    keys[0, 0, 0] = np.nan
    check(lambda k: np.lexsort(k, axis=axis), keys)
    check(lambda a, b: np.lexsort((a, b), axis=axis), keys[0], keys[1])


def test_lexsort_errors():
    with pytest.raises(TypeError, match="need sequence of keys with len > 0"):
        run(lambda a: np.lexsort(np.zeros((0, 3)) + a[:0, None]), np.zeros(3))
    with pytest.raises(ValueError, match="same shape"):
        run(lambda a, b: np.lexsort((a, b)), np.zeros(3), np.zeros(4))


# -- fixed-size unique / nonzero / argwhere ---------------------------------------------------------
def _pad(v, size, fill):
    v = np.asarray(v)[:size]
    return np.concatenate([v, np.full(size - len(v), fill, v.dtype)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [1, 4, 9])
def test_unique_size(dtype, size):
    a = rand(RNG, (3, 3), dtype) // 2
    u, i, inv, c = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    got = run(lambda x: ordering.unique(x, size=size, return_index=True, return_inverse=True,
                                        return_counts=True), a)
    np.testing.assert_array_equal(got[0], _pad(u, size, u[0]))
    np.testing.assert_array_equal(got[1], _pad(i, size, 0))
    np.testing.assert_array_equal(got[2], inv)
    np.testing.assert_array_equal(got[3], _pad(c, size, 0))
    assert [g.dtype for g in got] == [u.dtype, i.dtype, inv.dtype, c.dtype]
    got = run(lambda x: ordering.unique(x, size=size, fill_value=-7), a)
    np.testing.assert_array_equal(got, _pad(u, size, -7))


def test_unique_nan_and_empty():
    a = np.array([np.nan, 1.0, np.nan, 0.0])
    np.testing.assert_array_equal(run(lambda x: ordering.unique(x, size=3), a), np.unique(a))
    np.testing.assert_array_equal(run(lambda x: ordering.unique(x, size=4, equal_nan=False), a),
                                  np.unique(a, equal_nan=False))
    np.testing.assert_array_equal(run(lambda x: ordering.unique(x[:0], size=2, fill_value=5.0), a), [5.0, 5.0])


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 2)])
@pytest.mark.parametrize("dtype", DTYPES + ["bool"])
def test_nonzero_argwhere_size(shape, dtype):
    a = rand(RNG, shape, dtype)
    if dtype != "bool":
        a[a > 0.5 * a.max()] = 0
    n = np.count_nonzero(a)
    for size in (0, n, n + 3, max(n - 2, 0)):
        # (the three in one program: one compile per size)
        nz, got, flat = run(lambda x: (ordering.nonzero(x, size=size), ordering.argwhere(x, size=size, fill_value=-1),
                                       ordering.flatnonzero(x, size=size, fill_value=99)), a)
        for g, w in zip(nz, np.nonzero(a)):
            np.testing.assert_array_equal(g, _pad(w, size, 0))
            assert g.dtype == w.dtype
        want = np.argwhere(a)[:size]
        want = np.concatenate([want, np.full((size - len(want), a.ndim), -1)])
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.argwhere(a).dtype and got.shape == (size, a.ndim)
        np.testing.assert_array_equal(flat, _pad(np.flatnonzero(a), size, 99))


def test_nonzero_fill_per_dim_and_0d():
    a = np.eye(3)
    got = run(lambda x: ordering.nonzero(x, size=5, fill_value=(-1, -2)), a)
    np.testing.assert_array_equal(got[0], [0, 1, 2, -1, -1])
    np.testing.assert_array_equal(got[1], [0, 1, 2, -2, -2])
    got = run(lambda x: ordering.argwhere(x[0, 0], size=2), a)
    assert got.shape == (2, 0)
    np.testing.assert_array_equal(run(lambda x: ordering.nonzero(x[:0], size=2), a), ([0, 0], [0, 0]))
    np.testing.assert_array_equal(run(lambda x: ordering.argwhere(x[:0], size=2, fill_value=3), a), [[3, 3]] * 2)
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        run(lambda x: ordering.nonzero(x[0, 0], size=2), a)


@pytest.mark.parametrize("fn", [np.unique, np.nonzero, np.argwhere, np.flatnonzero])
def test_data_dependent_without_size(fn):
    with pytest.raises(IndexError, match=f"numpy.{fn.__name__} returns an array whose shape depends on the data"):
        run(fn, np.arange(3.0))


def test_size_errors():
    with pytest.raises(TypeError, match="must be an integer"):
        run(lambda x: ordering.unique(x, size="a"), np.arange(3.0))
    with pytest.raises(TypeError, match="non-negative"):
        run(lambda x: ordering.nonzero(x, size=-1), np.arange(3.0))


# -- piecewise --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (7,), (3, 4)])
def test_piecewise(dtype, shape):
    x = rand(RNG, shape, dtype)
    check(lambda a: np.piecewise(a, [a < 0, a >= 0], [lambda t: -t, lambda t: t * 2]), x)
    check(lambda a: np.piecewise(a, [a < -1, a > 1], [np.square, 3]), x, rtol=1e-6)  # otherwise 0
    check(lambda a: np.piecewise(a, [a < -1, a > 1], [np.square, 3, lambda t: t + 1]), x, rtol=1e-6)
    if x.ndim <= 1:  # NumPy reads a 2-d condition array as a stack of conditions
        check(lambda a: np.piecewise(a, a > 0, [1, 0]), x)
    else:
        check(lambda a: np.piecewise(a, np.stack([a > 0, a < -1]), [1, 2]), x)


def test_piecewise_overlap_args_and_float_funcs():
    x = np.linspace(-2, 2, 9)
    # later conditions win where they overlap; extra args and kwargs are passed on
    check(lambda a: np.piecewise(a, [a < 1, a > -1], [lambda t, k, s=1: t * k * s, 5.0], 3, s=2), x)
    xi = np.arange(-3, 4, dtype=np.int32)  # float results cast to x's dtype
    check(lambda a: np.piecewise(a, [a < 0], [lambda t: t * 1.5, np.sqrt]), xi)


def test_piecewise_error():
    with pytest.raises(ValueError, match=r"with 2 condition\(s\), either 2 or 3 functions are expected"):
        run(lambda a: np.piecewise(a, [a < 0, a > 0], [1]), np.arange(3.0))


# -- convolve / correlate ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES + ["complex64", "bool"])
@pytest.mark.parametrize("n,m", [(7, 3), (6, 4), (3, 6), (2, 5), (4, 4), (1, 1), (5, 1), (1, 4), (40, 35), (3, 40)])
def test_convolve_correlate(dtype, n, m):
    # (kernels up to 32 long: windows from slices; longer: a gather)
    a, v = rand(RNG, (n,), dtype), rand(RNG, (m,), dtype)
    tol = 1e-5 if dtype in ("float32", "complex64") else None
    # every mode of both in one program (one compile per case)
    check(lambda x, y: tuple(f(x, y, mode) for mode in ("full", "same", "valid") for f in (np.convolve, np.correlate)),
          a, v, rtol=tol)


def test_convolve_mixed_dtypes_and_defaults():
    a = np.arange(5, dtype=np.int32)
    v = np.array([0.5, -1.0], np.float32)
    check(lambda x, y: (np.convolve(x, y), np.correlate(x, y)), a, v)
    check(lambda x: np.convolve(x, [1, 2, 3]), a)
    check(lambda x: np.convolve(x[0], x), a)  # 0-d is read as length 1, as in NumPy
    c = (RNG.standard_normal(4) + 1j * RNG.standard_normal(4)).astype(np.complex128)
    check(lambda x, y: np.correlate(x, y, "full"), c, c[::-1].copy())  # conjugates v


def test_convolve_errors():
    with pytest.raises(ValueError, match="v cannot be empty"):
        run(lambda x: np.convolve(x, x[:0]), np.arange(3.0))
    with pytest.raises(ValueError, match="a cannot be empty"):
        run(lambda x: np.correlate(x[:0], x), np.arange(3.0))
    with pytest.raises(ValueError, match="1-d arrays"):
        run(lambda x: np.convolve(x, x), np.ones((2, 2)))
    with pytest.raises(TypeError, match="mode must be 'full', 'same' or 'valid'"):
        run(lambda x: np.convolve(x, x, "wrap"), np.arange(3.0))


# -- gradients --------------------------------------------------------------------------------
def _grad_check(f_np, f_jax, *args, tol=1e-9):
    g = reactant.compile(lambda *a: reactant.gradient(f_np, *a))(*reactant.to_rarray(args))
    with jax.enable_x64(True):
        ref = jax.grad(f_jax, argnums=tuple(range(len(args))))(*args)
    g = g if isinstance(g, (tuple, list)) else (g,)
    for a, b in zip(g, ref):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", [(6, 3), (3, 5), (50, 40)])  # (40 taps: a loop over them)
def test_grad_convolve_correlate(mode, n, m):
    a, v = RNG.standard_normal(n), RNG.standard_normal(m)
    w = RNG.standard_normal(len(np.convolve(a, v, mode)))
    wc = RNG.standard_normal(len(np.correlate(a, v, mode)))
    _grad_check(lambda x, y: np.sum(np.convolve(x, y, mode) * w),
                lambda x, y: jnp.sum(jnp.convolve(x, y, mode) * w), a, v)
    _grad_check(lambda x, y: np.sum(np.sin(np.correlate(x, y, mode)) * wc),
                lambda x, y: jnp.sum(jnp.sin(jnp.correlate(x, y, mode)) * wc), a, v)


def test_grad_piecewise_and_outer():
    x = np.linspace(-2, 2, 7) + 0.1
    y = RNG.standard_normal(4)
    _grad_check(lambda a: np.sum(np.piecewise(a, [a < 0, a > 1], [np.sin, lambda t: t ** 3, lambda t: 2 * t])),
                lambda a: jnp.sum(jnp.piecewise(a, [a < 0, a > 1], [jnp.sin, lambda t: t ** 3, lambda t: 2 * t])), x)
    _grad_check(lambda a, b: np.sum(np.sin(np.multiply.outer(a, b))),
                lambda a, b: jnp.sum(jnp.sin(jnp.outer(a, b))), x, y)
    _grad_check(lambda a, b: np.sum(np.subtract.outer(a, b) ** 2),
                lambda a, b: jnp.sum(jnp.subtract.outer(a, b) ** 2) if hasattr(jnp.subtract, "outer")
                else jnp.sum((a[:, None] - b[None, :]) ** 2), x, y)


def test_size_keyword_and_lists_of_keys_through_numpy_itself():
    # NumPy's own signatures refuse size= and hide a list's traced keys from dispatch: the
    # compiled function's source transform routes both to the traced implementations
    def f(a, b):
        return (np.unique(a, size=4, fill_value=-1.0), np.nonzero(a > 1.5, size=3)[0],
                np.argwhere(a > 1.5, size=2), np.lexsort([a, b]))

    a, b = np.array([3.0, 1.0, 2.0, 3.0]), np.array([1.0, 1.0, 0.0, 0.0])
    u, nz, aw, ls = reactant.compile(f)(reactant.to_rarray(a), reactant.to_rarray(b))
    np.testing.assert_array_equal(np.asarray(u), [1.0, 2.0, 3.0, -1.0])
    np.testing.assert_array_equal(np.asarray(nz), [0, 2, 3])
    np.testing.assert_array_equal(np.asarray(aw), [[0], [2]])
    np.testing.assert_array_equal(np.asarray(ls), np.lexsort([a, b]))


def _smooth_rows_into(sig, k, out):
    """As NumPy users write it: each row of an argument filled from a strided view of another,
    one row corrected in place through a view."""
    for i in range(out.shape[0]):
        out[i] = np.convolve(sig[i, ::2], k, mode="same")
    head = out[0, :3]
    head -= np.correlate(sig[0, :8], k, mode="valid")[:3]


@pytest.mark.parametrize("loops,level", [(lp, o) for lp in ("auto", "keep", "unroll") for o in ("O0", "O2")])
def test_convolve_rows_of_an_argument_from_views_in_every_mode(loops, level):
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "semantics"))
    from inplace_check import check

    sig = RNG.standard_normal((4, 80))
    for k in (np.array([0.25, 0.5, 0.25]), RNG.standard_normal(35)):  # slices / gather windows
        check(_smooth_rows_into, sig, k, np.zeros((4, 40)), loops=loops, optimize=level)


def test_a_short_kernel_is_a_sum_of_shifted_slices():
    # (not a product of a window matrix: on 2^20 float64 samples XLA ran that 13x slower than
    # NumPy, the fused sum faster than NumPy)
    f = reactant.compile(lambda x, w: np.convolve(x, w, mode="same"))
    x, w = reactant.to_rarray(np.arange(50.0)), reactant.to_rarray(np.array([0.25, 0.5, 0.25]))
    text = reactant.code_hlo(f, x, w, optimize=False)
    assert "dot_general" not in text and "gather" not in text and text.count("stablehlo.multiply") == 3, text
    np.testing.assert_allclose(np.asarray(f(x, w)), np.convolve(np.arange(50.0), [0.25, 0.5, 0.25], mode="same"))


def test_a_long_kernel_is_a_loop_over_its_taps():
    # (not a gathered (n + m) x m window table: 2^20 samples x 64 taps took 8.6 s to compile and
    # ran 14x slower than NumPy)
    f = reactant.compile(lambda x, w: np.convolve(x, w, mode="valid"))
    x, w = np.arange(300.0), np.linspace(-1.0, 1.0, 40)
    text = reactant.code_hlo(f, reactant.to_rarray(x), reactant.to_rarray(w), optimize=False)
    assert "stablehlo.while" in text and "gather" not in text and "dot_general" not in text, text
    np.testing.assert_allclose(np.asarray(f(reactant.to_rarray(x), reactant.to_rarray(w))),
                               np.convolve(x, w, mode="valid"), rtol=1e-12)
