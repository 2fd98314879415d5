"""Indexing vs NumPy: basic, advanced, mixed, masks; writes (x[i] = v, x += v at an index);
traced indices; x.at[...]; np.add.at, take, take_along_axis; errors."""

import numpy as np
import pytest
from npcheck import check

import reactant
from reactant.tracing.errors import IndexError_

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)

STATIC_INDICES = [
    0, -1, (1, 2), (1, 2, 3), (-1, -2, -3), slice(None), slice(1, None), slice(None, None, 2), slice(None, None, -1),
    (slice(None), slice(1, 3)), (Ellipsis, 1), (Ellipsis, slice(None, None, -2)), (None, 1), (1, None, Ellipsis, None),
    (slice(2, 0, -1), slice(None), slice(4, None, -3)), (slice(10, 20),), (slice(-10, 2),),
    np.array([0, 2]), np.array([[0, 1], [2, 0]]), [0, 2, -1], (np.array([0, 2]), np.array([1, 3])),
    (slice(None), np.array([0, 3])), (1, np.array([0, 3])), (np.array([0, 2]), slice(None), np.array([1, 4])),
    (np.array([0, 2]), 1, np.array([1, 4])), (slice(None), np.array([[0], [1]]), np.array([0, 2, 4])),
    (Ellipsis, np.array([1, 1, 0])), (None, np.array([0, 1]), slice(1, 3)), np.array(1),
    X[..., 0] > 20, (X[:, :, 0] > 20,), (1, X[0, :, 0] > 5), (slice(None), slice(None), X[0, 0] > 1),
]


@pytest.mark.parametrize("index", STATIC_INDICES, ids=range(len(STATIC_INDICES)))
def test_getitem_static(index):
    check(lambda a: a[index], X)


@pytest.mark.parametrize("index", STATIC_INDICES, ids=range(len(STATIC_INDICES)))
def test_setitem_static(index):
    target_shape = X[index].shape

    def f(a):
        a[index] = np.arange(int(np.prod(target_shape)), dtype=np.float32).reshape(target_shape) + 100
        return a

    def g(a):
        a[index] = -1.0  # scalar broadcast
        return a

    check(f, X)
    check(g, X)


def test_traced_integer_indices():
    i = np.int32(2)
    j = np.int64(-1)
    idx = np.array([[0, 2], [1, -1]], np.int32)
    check(lambda a, k: a[k], X, i)
    check(lambda a, k, l: a[k, 1:3, l], X, i, j)
    check(lambda a, k: a[k], X, idx)
    check(lambda a, k: a[:, k, 0], X, idx)
    check(lambda a, k, l: a[k, l], X, idx, np.array([1, 2], np.int64))

    def setk(a, k, v):
        a[k] = v
        return a

    check(setk, X, i, np.float32(7.0))
    check(setk, X, j, np.float32(7.0))

    def addk(a, k):
        a[k, 1] += 10
        return a

    check(addk, X, idx)


def test_traced_mask_write_and_where():
    def f(a):
        a[a > 30] = 0.0
        return a

    check(f, X)

    def g(a, m):
        a[m] = -a.max()
        return a

    check(g, X, X > 10)


def test_returning_a_traced_mask_selection_is_a_clear_error():
    x = reactant.to_rarray(X)

    @reactant.compile
    def f(a):
        return a[a > 3]

    with pytest.raises(reactant.IndexError, match="data-dependent shape.*returning it") as e:
        f(x)
    assert "return a[a > 3]" in str(e.value)
    for g in (lambda a: np.concatenate([a[a > 3], a[0]]), lambda a: a[a > 3][0], lambda a: len(a[a > 3]),
              lambda a: a[a > 3] + a[a < 2], lambda a: a[a > 3] + a[0]):
        with pytest.raises(reactant.IndexError, match="data-dependent|different traced masks|meets an array"):
            reactant.compile(g)(x)


M = np.array([[1.5, -2.0, 3.0, 0.0], [-4.0, 5.0, -6.5, 2.0], [0.5, -0.25, 7.0, -1.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_traced_mask_selections_compute_where_the_mask_holds(dtype):
    a = (M * 4).astype(dtype)

    def writes(x):
        y = np.zeros_like(x)
        y[x > 0] = x[x > 0] * 2 + 1  # the selected values, written back
        x[x < 0] += 3
        x[x > 100] -= 1  # selects nothing
        return x, y

    check(writes, a)

    def reductions(x):
        s = x[x > 0]
        return (s.sum(), np.sum(x[x < 0]), s.max(), np.min(s), s.mean(), (s * s).std(), x[x > 0].var(ddof=1),
                s.prod(), np.any(x[x < -100]), np.all(s > 0), np.count_nonzero(x[x != 0]))

    check(reductions, a, rtol=1e-5 if dtype == np.float32 else None)
    rows = reactant.compile(lambda x: x[x[:, 0] > 0].sum())(reactant.to_rarray(a))  # a mask of the leading dim
    np.testing.assert_allclose(np.asarray(rows), a[a[:, 0] > 0].sum())


def test_reductions_over_the_selected_rows():
    # k-means: centers[j] = X[labels == j].mean(axis=0): one value per column, a static shape
    X = np.arange(24.0).reshape(8, 3) - 7.0
    labels = np.array([0, 1, 2, 1, 0, 0, 2, 1])

    def centers(X, labels):
        s = X[labels == 1]
        return (np.stack([X[labels == j].mean(axis=0) for j in range(3)]), s.sum(axis=0), s.max(0),
                s.var(axis=0, ddof=1), s.std(0), np.min(s, axis=-2), s.sum(axis=(0, 1)),
                s.sum(axis=0, keepdims=True), s.any(axis=0), s.mean())

    check(centers, X, labels)
    cube = np.arange(60.0).reshape(3, 4, 5)
    check(lambda c: (c[c[:, :, 0] > 10].sum(axis=0), c[c[:, 0, 0] > 10].mean(axis=(0, 2))), cube)

    def per_row(X, labels):
        return X[labels == 1].sum(axis=1)  # one value per selected row: as long as the selection

    with pytest.raises(IndexError_, match=r"traced mask bool\[8\] .*over axis 1"):
        reactant.compile(per_row)(reactant.to_rarray(X), reactant.to_rarray(labels))


def test_max_of_an_empty_float_selection_is_nan():
    out = reactant.compile(lambda x: x[x > 100].max())(reactant.to_rarray(M))
    assert np.isnan(float(out))  # NumPy raises; compiled code cannot


def test_putmask_place_put():
    def f(x):
        y, z, w = x.copy(), x.copy(), x.copy()
        np.putmask(y, y < 0, [10.0, 20.0, 30.0])
        np.place(z, z > 1, [-1.0, -2.0])
        np.put(w, [0, 5, -1], [9.0, 8.0, 7.0])
        return y, z, w

    check(f, M)
    check(lambda x: (np.put(x, [1, 14], [5.0, 6.0], mode="wrap"), x)[1], M)


@pytest.mark.parametrize("index,axis_size", [((3,), 3), ((0, 4), 4), ((0, 0, -6), 5), ((np.array([0, 3]),), 3)])
def test_static_out_of_range_is_a_clear_error(index, axis_size):
    x = reactant.to_rarray(X)

    @reactant.compile
    def f(a):
        return a[index]

    with pytest.raises(reactant.IndexError, match=f"out of bounds for axis .* with size {axis_size}") as e:
        f(x)
    assert "test_indexing.py" in str(e.value)
    with pytest.raises(IndexError):
        X[index]


def test_too_many_indices():
    x = reactant.to_rarray(X)
    with pytest.raises(reactant.IndexError, match="too many indices"):
        reactant.compile(lambda a: a[0, 0, 0, 0])(x)


def test_at_functional_updates():
    idx = np.array([0, 1, 0, 2])
    v = np.array([1.0, 2.0, 3.0, 4.0], np.float32)

    @reactant.compile
    def f(a, w):
        return (a.at[idx].add(w[:, None, None]), a.at[idx].set(w[:, None, None]), a.at[0, 1].multiply(3.0),
                a.at[:, 0].min(10.0), a.at[1].max(30.0), a.at[2, 3].get(), a)

    out = [np.asarray(o) for o in f(reactant.to_rarray(X), reactant.to_rarray(v))]
    want = [X.copy() for _ in range(5)]
    np.add.at(want[0], idx, v[:, None, None])
    want[1][idx] = v[:, None, None]  # duplicates: XLA may apply either write; index 0 gets 1.0 or 3.0
    want[2][0, 1] *= 3.0
    want[3][:, 0] = np.minimum(want[3][:, 0], 10.0)
    want[4][1] = np.maximum(want[4][1], 30.0)
    np.testing.assert_allclose(out[0], want[0])
    np.testing.assert_allclose(out[1][1:], want[1][1:])
    assert np.allclose(out[1][0], 1.0) or np.allclose(out[1][0], 3.0)
    for k in (2, 3, 4):
        np.testing.assert_allclose(out[k], want[k])
    np.testing.assert_allclose(out[5], X[2, 3])
    np.testing.assert_allclose(out[6], X)  # functional: the input is unchanged


def test_ufunc_at_and_segment_sum():
    ids = np.array([0, 2, 2, 1, 0, 2], np.int32)
    vals = np.arange(6, dtype=np.float64)

    def seg(v, i):
        out = np.zeros_like(v, shape=(3,))
        np.add.at(out, i, v)
        return out

    check(seg, vals, ids)


@pytest.mark.parametrize("low", [-5, 0], ids=["negative", "nonnegative"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_traced_indices_and_their_gradient_need_no_bounds_mask(dtype, low):
    """Traced ids in [-n, n) wrap like NumPy (ids known non-negative need no wrap); NumPy
    indexing promises in-range indices (reactant.indices_in_bounds on the scatter, stripped
    before XLA), so the gradient of the scatter-add (a gather) carries no out-of-bounds mask."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(3)
    ids = rng.integers(low, 5, 40).astype(dtype)
    x = rng.standard_normal(40)
    ct = rng.standard_normal(5)

    def seg(x, i, ct):
        out = np.zeros_like(x, shape=(5,))
        np.add.at(out, i, x * x)
        return (out * ct).sum()

    check(seg, x, ids, ct)
    args = [reactant.to_rarray(a) for a in (x, ids, ct)]
    g = reactant.gradient(seg, *args)
    with jax.enable_x64(True):
        want = jax.grad(lambda x: (jnp.zeros(5, x.dtype).at[ids].add(x * x) * ct).sum())(x)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12)

    grad_fn = reactant.compile(lambda *a: reactant.gradient(seg, *a))
    text = reactant.code_hlo(grad_fn, *args)
    assert "stablehlo.gather" in text and "stablehlo.compare" not in text, text
    assert ("remainder" in text) == (low < 0)
    assert "indices_in_bounds" not in reactant.code_xla(grad_fn, *args)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_nonnegative_index_arrays_need_no_wrap(dtype):
    """An integer array moved from the host holding no negative value is known non-negative:
    indexing with it emits no negative-index wrap. One with negatives, or one updated on the
    device since, gets the wrap (another cache entry), and every result matches NumPy."""
    rng = np.random.default_rng(5)
    x_np = rng.standard_normal(7)
    ids_np = rng.integers(0, 7, 12).astype(dtype)
    x, ids = reactant.to_rarray(x_np), reactant.to_rarray(ids_np)

    def seg(x, i):
        out = np.zeros_like(x, shape=(7,))
        np.add.at(out, i, x[i] * 2)
        return out

    f = reactant.compile(seg)
    want = seg(x_np, ids_np)
    np.testing.assert_allclose(np.asarray(f(x, ids)), want)
    assert "remainder" not in reactant.code_hlo(f, x, ids)
    neg = reactant.to_rarray(ids_np - 7)  # the same places, counted from the end
    np.testing.assert_allclose(np.asarray(f(x, neg)), want)
    assert "remainder" in reactant.code_hlo(f, x, neg)
    assert f.compile_count == 2

    @reactant.compile
    def shift(i):
        i -= 7

    shift(ids)  # now negative on the device: its sign is unknown again
    np.testing.assert_allclose(np.asarray(ids), ids_np - 7)
    np.testing.assert_allclose(np.asarray(f(x, ids)), want)
    assert f.compile_count == 2  # the same entry as `neg`
    # what carries the fact: host NumPy data and copies of known arrays, not scalars or jax arrays
    assert reactant.to_rarray(reactant.to_rarray(ids_np))._sig[4]
    assert not reactant.to_rarray(np.int32(3))._sig[4]
    assert not reactant.to_rarray(np.array([0.5]))._sig[4]
    import jax

    assert not reactant.ConcreteRArray(jax.numpy.asarray(ids_np))._sig[4]


def test_take_and_take_along_axis():
    idx = np.array([[0, 2], [1, 1]])
    check(lambda a: (np.take(a, [0, 2], axis=1), np.take(a, idx), np.take(a, 7), np.take(a, [-1, 9], mode="wrap"),
                     np.take(a, [10, -2], axis=2, mode="clip")), X)
    order = np.argsort(X[:, :, 0] % 7, axis=1)
    check(lambda a, o: np.take_along_axis(a[:, :, 0], o, axis=1), X, order)

    def put(a, o):
        b = a[:, :, 0]
        np.put_along_axis(b, o, 0.0, axis=1)
        return b

    check(put, X, order)


def test_item_assignment_of_rows_in_a_loop():
    def f(a):
        out = np.zeros_like(a)
        for i in range(a.shape[0]):
            out[i] = a[i] * (i + 1)
        return out

    check(f, X)


def test_gradients_through_traced_mask_selections():
    def loss(x):
        y = np.zeros_like(x)
        y[x > 0] = x[x > 0] ** 2  # selected values written back
        return y.sum() + x[x < 0].sum() * 3 + x[x > 1].mean()

    g = reactant.compile(lambda x: reactant.gradient(loss, x))(reactant.to_rarray(M))
    want = np.where(M > 0, 2 * M, 0) + np.where(M < 0, 3.0, 0) + np.where(M > 1, 1 / np.sum(M > 1), 0)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12)
