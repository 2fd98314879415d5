"""Shape manipulation vs NumPy: reshape/transpose/axes moves, joins, splits, pad, flip, roll,
tile/repeat, triangles, diagonals, where/clip/round/sort, creation functions."""

import numpy as np
import pytest
from npcheck import check, rand

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("fn", [
    lambda a: a.reshape(6, 4), lambda a: a.reshape(-1), lambda a: np.reshape(a, (4, -1)), lambda a: a.reshape((2, 12)),
    lambda a: a.T, lambda a: a.transpose(1, 0, 2), lambda a: np.transpose(a, (2, 0, 1)), lambda a: a.mT,
    lambda a: np.swapaxes(a, 0, -1), lambda a: np.moveaxis(a, 0, -1), lambda a: np.moveaxis(a, [0, 1], [-1, -2]),
    lambda a: np.rollaxis(a, 2), lambda a: np.expand_dims(a, 1), lambda a: np.expand_dims(a, (0, -1)),
    lambda a: np.squeeze(a[:, :1]), lambda a: np.squeeze(a[:1], axis=0), lambda a: a.ravel(), lambda a: a.flatten(),
    lambda a: np.ravel(a, order="F"), lambda a: np.broadcast_to(a[:, :1], (2, 3, 4)), lambda a: np.atleast_3d(a[0, 0]),
    lambda a: np.atleast_2d(a[0, 0]), lambda a: np.atleast_1d(a[0, 0, 0]),
    lambda a: np.broadcast_arrays(a, a[0, :, :1]),
], ids=lambda f: f.__code__.co_firstlineno)
def test_reshape_family(fn):
    check(fn, X)


@pytest.mark.parametrize("fn", [
    lambda a, b: np.concatenate([a, b]), lambda a, b: np.concatenate([a, b], axis=-1),
    lambda a, b: np.concatenate([a, b], axis=None), lambda a, b: np.stack([a, b]), lambda a, b: np.stack([a, b], -1),
    lambda a, b: np.vstack([a, b]), lambda a, b: np.hstack([a, b]), lambda a, b: np.dstack([a, b]),
    lambda a, b: np.column_stack([a[:, 0], b[:, 1]]), lambda a, b: np.append(a, b), lambda a, b: np.append(a, b, 0),
    lambda a, b: np.concat((a, b), axis=1),
], ids=lambda f: f.__code__.co_firstlineno)
def test_joins(fn):
    rng = np.random.default_rng(0)
    check(fn, rand(rng, (3, 4), "float32"), rand(rng, (3, 4), "float32"))


def test_join_promotes_dtypes():
    check(lambda a, b: np.concatenate([a, b]), np.ones(3, np.int32), np.ones(2, np.float32))


@pytest.mark.parametrize("fn", [
    lambda a: np.split(a, 2), lambda a: np.split(a, [1, 3], axis=1), lambda a: np.array_split(a, 3, axis=1),
    lambda a: np.hsplit(a, 2), lambda a: np.vsplit(a, [1]), lambda a: np.split(a, [-1], axis=1),
], ids=lambda f: f.__code__.co_firstlineno)
def test_splits(fn):
    check(fn, np.arange(16.0).reshape(4, 4))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("width", [1, ((1, 2), (0, 3)), ((2, 1),)])
def test_pad(mode, width):
    x = np.arange(12.0).reshape(3, 4)
    check(lambda a: np.pad(a, width, mode=mode), x)


def test_pad_constant_values():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    check(lambda a: np.pad(a, 1, constant_values=7), x)
    check(lambda a: np.pad(a, ((1, 0), (2, 1)), constant_values=((1, 2), (3, 4))), x)


@pytest.mark.parametrize("fn", [
    lambda a: np.flip(a), lambda a: np.flip(a, 1), lambda a: np.fliplr(a), lambda a: np.flipud(a),
    lambda a: np.roll(a, 2), lambda a: np.roll(a, -1, axis=1), lambda a: np.roll(a, (1, 2), axis=(0, 1)),
    lambda a: np.rot90(a), lambda a: np.rot90(a, 2), lambda a: np.rot90(a, -1),
    lambda a: np.repeat(a, 2), lambda a: np.repeat(a, 3, axis=1), lambda a: np.repeat(a, [1, 0, 2], axis=0),
    lambda a: np.tile(a, 2), lambda a: np.tile(a, (2, 1, 2)),
    lambda a: np.tril(a), lambda a: np.triu(a, 1), lambda a: np.tril(a, -1), lambda a: np.diag(a), lambda a: np.diag(a, 1),
    lambda a: np.diag(a[0]), lambda a: np.diag(a[0], -2), lambda a: np.diag(a[0], 1), lambda a: np.diagflat(a[:2, :2]),
], ids=lambda f: f.__code__.co_firstlineno)
def test_flip_roll_tile_tri(fn):
    check(fn, np.arange(12.0).reshape(3, 4))


def test_where_select_clip_round():
    rng = np.random.default_rng(1)
    x = rand(rng, (3, 4), "float64")
    i = rng.integers(-5, 5, (3, 4)).astype(np.int32)
    check(lambda a, b: (np.where(a > 0, a, b), np.where(b > 0, 1.5, b), np.where(a > 0, a, 0)), x, i)
    check(lambda a: (np.clip(a, -1, 1), a.clip(0), np.clip(a, None, 0.5), np.round(a), np.round(a, 2), np.around(a, 1),
                     np.fix(a), a.round(1)), x)
    check(lambda a: np.select([a < -1, a > 1], [a * 2, a * 3], default=0.0), x)
    check(lambda b: (np.clip(b, -2, 2), np.round(b, -1)), i)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_argsort(dtype, axis):
    x = rand(np.random.default_rng(2), (4, 5), dtype)
    x[0, 0] = x[0, 1]
    check(lambda a: (np.sort(a, axis=axis), np.argsort(a, axis=axis, kind="stable")), x)


def test_sort_nan_last_and_median_quantile():
    x = np.array([[3.0, np.nan, 1.0, 2.0], [0.5, -1.0, 4.0, 2.0]])
    check(lambda a: np.sort(a, axis=1), x)
    y = rand(np.random.default_rng(3), (5, 6), "float64")
    check(lambda a: (np.median(a), np.median(a, axis=0), np.quantile(a, 0.3, axis=1), np.percentile(a, [10, 90]),
                     np.median(a, axis=1, keepdims=True)), y)


def test_searchsorted_isclose_misc():
    a = np.array([1.0, 2.0, 2.0, 5.0])
    v = np.array([0.0, 2.0, 3.0, 6.0])
    check(lambda x, y: (np.searchsorted(x, y), np.searchsorted(x, y, side="right")), a, v)
    b = a + np.array([0, 1e-9, 1e-3, 0])
    check(lambda x, y: (np.isclose(x, y), np.allclose(x, y), np.array_equal(x, x), np.count_nonzero(x > 1)), a, b)
    c = np.array([1 + 2j, -1j, 3.0])
    check(lambda z: (np.real(z), np.imag(z), np.angle(z), np.conj(z), z.real, z.imag, np.abs(z)), c)
    check(lambda z: np.nan_to_num(z), np.array([np.nan, np.inf, -np.inf, 1.0]))
    check(lambda p, q: np.cross(p, q), np.arange(6.0).reshape(2, 3), np.ones((2, 3)))


def test_creation_inside_trace():
    x = rand(np.random.default_rng(4), (2, 3), "float32")
    check(lambda a: (np.zeros_like(a), np.ones_like(a, dtype=np.int32), np.full_like(a, 7.5), np.empty_like(a).shape,
                     np.zeros((2, 2)) + a[:, :2], np.arange(3) * a, np.eye(3)[:2] @ a.T, np.full_like(a, a[0, 0])), x)
    s = np.float32(0.5)
    check(lambda a, b: (np.linspace(a, b, 5), np.linspace(a, b, 4, endpoint=False)), s, np.float32(2.0))
    check(lambda a: np.linspace(a[0], a[1], 3, axis=1), x)
    check(lambda a, b: np.meshgrid(a, b), np.arange(3.0), np.arange(2.0))
    check(lambda a, b: np.meshgrid(a, b, indexing="ij", sparse=True), np.arange(3.0), np.arange(2.0))


def test_asarray_of_mixed_lists():
    rng = np.random.default_rng(5)
    x = rand(rng, (3,), "float32")

    def f(a):
        s = a.sum()
        v = np.asarray([s, 2.0, a[0]])  # traced and plain values mixed
        w = np.array([[a[0], 1.0], [2.0, a[2]]])
        m = np.stack([a, a * 2, np.ones(3, np.float32)])
        return v * 2, w @ a[:2], m, np.asarray([a, a])

    check(f, x)
