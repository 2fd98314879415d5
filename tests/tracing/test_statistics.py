"""Statistics and numerics (cov, corrcoef, histogram, histogram2d, bincount, digitize, interp,
trapezoid, polyval, gradient), traced vs NumPy: values, dtypes, errors, and derivatives against
jax.grad of the jax.numpy equivalents."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from npcheck import check, rand

import reactant
from reactant.tracing.errors import IndexError_, ShapeError, UnsupportedError

FLOATS = ["float32", "float64"]
RNG = np.random.default_rng(0)


def _tol(dtype):
    return 1e-4 if np.dtype(dtype) == np.float32 else 1e-10


# -- cov / corrcoef ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
@pytest.mark.parametrize("shape", [(3, 6), (1, 5), (6,), (4, 2)])
@pytest.mark.parametrize("rowvar", [True, False])
def test_cov(dtype, shape, rowvar):
    x = rand(np.random.default_rng(1), shape, dtype)
    check(lambda a: np.cov(a, rowvar=rowvar), x, rtol=1e-9, atol=1e-9)
    check(lambda a: np.cov(a, rowvar=rowvar, bias=True), x, rtol=1e-9, atol=1e-9)
    check(lambda a: np.cov(a, rowvar=rowvar, ddof=0), x, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cov_y_weights_dtype(dtype):
    rng = np.random.default_rng(2)
    x, y = rand(rng, (2, 6), dtype), rand(rng, (6,), dtype)
    fw, aw = np.array([1, 2, 1, 3, 1, 2]), rng.uniform(0.1, 1.0, 6)
    check(lambda a, b: np.cov(a, b), x, y, rtol=1e-9)
    check(lambda a, b: np.cov(a, b, rowvar=False), x.T.copy(), y, rtol=1e-9)
    check(lambda a: np.cov(a, fweights=fw), x, rtol=1e-9)
    check(lambda a: np.cov(a, aweights=aw), x, rtol=1e-9)
    check(lambda a, f, w: np.cov(a, fweights=f, aweights=w, ddof=2), x, fw, aw, rtol=1e-9)
    check(lambda a, w: np.cov(a, aweights=w, bias=True), x, aw, rtol=1e-9)
    check(lambda a: np.cov(a, dtype=np.float32), x, rtol=1e-5)


def test_cov_complex_and_empty():
    z = rand(np.random.default_rng(3), (2, 5), "complex64")
    check(lambda a: np.cov(a), z, rtol=1e-6)
    check(lambda a: np.cov(a), np.zeros((0, 4), np.float32))


def test_cov_errors():
    with pytest.raises(ShapeError, match="more than 2 dimensions"):
        reactant.compile(np.cov)(reactant.to_rarray(np.ones((2, 2, 2))))
    with pytest.raises(ShapeError, match="observations"):
        reactant.compile(np.cov)(*reactant.to_rarray((np.ones((2, 3)), np.ones((2, 4)))))


@pytest.mark.parametrize("dtype", FLOATS + ["int64"])
@pytest.mark.parametrize("shape", [(3, 8), (8,), (2, 5)])
def test_corrcoef(dtype, shape):
    x = rand(np.random.default_rng(4), shape, dtype)
    check(np.corrcoef, x, rtol=1e-9, atol=1e-9)
    check(lambda a: np.corrcoef(a, rowvar=False), x, rtol=1e-9, atol=1e-9)
    if len(shape) == 1:
        check(lambda a, b: np.corrcoef(a, b), x, x[::-1].copy(), rtol=1e-9, atol=1e-9)


def test_corrcoef_constant_row_and_complex():
    x = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]])
    check(np.corrcoef, x)  # NaNs for the constant variable
    check(np.corrcoef, x[0])
    check(np.corrcoef, rand(np.random.default_rng(5), (2, 6), "complex128"))


# -- histogram ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS + ["int32", "int64"])
@pytest.mark.parametrize("shape", [(40,), (5, 7), (0,), ()])
def test_histogram_count_bins(dtype, shape):
    x = rand(np.random.default_rng(6), shape, dtype, low=-4, high=4)
    check(lambda a: np.histogram(a, 6, range=(-3, 3)), x)
    check(lambda a: np.histogram(a, 5, range=(-3.0, 4)), x)
    check(lambda a: np.histogram(a, 1, range=(2, 2)), x)  # empty range widens by 0.5


@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
def test_histogram_edges_weights_density(dtype):
    rng = np.random.default_rng(7)
    x = rand(rng, (50,), dtype, low=-4, high=4)
    x[:3] = [-2, 0, 3]  # values exactly on edges, incl. the (closed) last one
    edges = np.array([-2.0, -1.0, 0.0, 0.5, 3.0])
    w32, w64, wi = rng.uniform(0, 2, 50).astype(np.float32), rng.uniform(0, 2, 50), rng.integers(0, 5, 50)
    check(lambda a: np.histogram(a, edges), x)
    check(lambda a: np.histogram(a, edges.astype(np.int32)), x)
    check(lambda a, w: np.histogram(a, edges, weights=w), x, w32, rtol=1e-5)
    check(lambda a, w: np.histogram(a, 7, range=(-3, 3), weights=w), x, w64)
    check(lambda a, w: np.histogram(a, edges, weights=w), x, wi)
    check(lambda a: np.histogram(a, edges, density=True), x)
    check(lambda a, w: np.histogram(a, 4, range=(-4, 4), weights=w, density=True), x, w32, rtol=1e-5)


def test_histogram_traced_edges_and_nan():
    x = np.array([0.1, np.nan, 0.5, 1.0, 2.5, -1.0, np.inf])
    e = np.array([0.0, 0.5, 1.0, 2.5])
    check(lambda a, b: np.histogram(a, b), x, e)
    check(lambda a: np.histogram(a, e), x)


def test_histogram_errors():
    f = reactant.compile(lambda a: np.histogram(a, 5))  # edges from the data (tested elsewhere)
    np.testing.assert_array_equal(np.asarray(f(reactant.to_rarray(np.ones(4)))[0]), np.histogram(np.ones(4), 5)[0])
    with pytest.raises(UnsupportedError, match="static"):
        reactant.compile(lambda a: np.histogram(a, "auto"))(reactant.to_rarray(np.ones(4)))
    with pytest.raises(ShapeError, match="monotonically"):
        reactant.compile(lambda a: np.histogram(a, [0, 2, 1]))(reactant.to_rarray(np.ones(4)))
    with pytest.raises(ShapeError, match="weights"):
        reactant.compile(lambda a: np.histogram(a, 3, range=(0, 1), weights=np.ones(3)))(reactant.to_rarray(np.ones(4)))


@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
def test_histogram2d(dtype):
    rng = np.random.default_rng(8)
    x, y = rand(rng, (60,), dtype, low=-3, high=3), rand(rng, (60,), dtype, low=-3, high=3)
    w = rng.uniform(0, 1, 60)
    rg = [[-2, 2], [-3, 3]]
    check(lambda a, b: np.histogram2d(a, b, 4, range=rg), x, y)
    check(lambda a, b: np.histogram2d(a, b, [3, 5], range=rg), x, y)
    check(lambda a, b: np.histogram2d(a, b, [3, [-3, 0, 1, 3]], range=rg, density=True), x, y)
    check(lambda a, b: np.histogram2d(a, b, [-2, -1, 0, 2, 3]), x, y)
    check(lambda a, b, c: np.histogram2d(a, b, 3, range=rg, weights=c), x, y, w)
    check(lambda a, b, c: np.histogram2d(a, b, 3, range=rg, weights=c, density=True), x, y, w)
    check(lambda a, b: np.histogram2d(a, b, 2, range=[[0, 1], [0, 1]]), x[:0], y[:0])


def test_histogram2d_errors():
    with pytest.raises(UnsupportedError, match="range="):
        reactant.compile(lambda a: np.histogram2d(a, a, 3))(reactant.to_rarray(np.ones(4)))


# -- bincount / digitize ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("n", [0, 1, 30])
def test_bincount(dtype, n):
    rng = np.random.default_rng(9)
    x = rng.integers(0, 2 if dtype == "bool" else 8, n).astype(dtype)
    check(lambda a: np.bincount(a, minlength=8), x)
    check(lambda a: np.bincount(a, minlength=12), x)
    w = rng.uniform(-1, 1, n).astype(np.float32)
    check(lambda a, b: np.bincount(a, b, minlength=9), x, w)
    check(lambda a, b: np.bincount(a, weights=b, minlength=9), x, w.astype(np.int32))


def test_bincount_static_and_empty():
    check(lambda a: np.bincount(np.array([0, 3, 3]), weights=a), np.ones(3, np.float32))
    check(lambda a: np.bincount(a), np.zeros(0, np.int64))  # empty: length 0 is static


def test_bincount_errors():
    f = reactant.compile(lambda a: np.bincount(a))
    with pytest.raises(IndexError_, match="minlength=") as e:
        f(reactant.to_rarray(np.array([1, 2])))
    assert "out of range and undefined" in str(e.value)
    with pytest.raises(TypeError, match="non-integer"):
        reactant.compile(lambda a: np.bincount(a, minlength=3))(reactant.to_rarray(np.ones(2)))
    with pytest.raises(ShapeError, match="1-d"):
        reactant.compile(lambda a: np.bincount(a, minlength=3))(reactant.to_rarray(np.ones((2, 2), np.int32)))


@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
@pytest.mark.parametrize("shape", [(20,), (3, 4), (), (0,)])
@pytest.mark.parametrize("right", [False, True])
def test_digitize(dtype, shape, right):
    x = rand(np.random.default_rng(10), shape, dtype, low=-3, high=3)
    up, down = np.array([-2.0, -1.0, 0.0, 0.0, 1.0, 2.0]), np.array([2, 1, 0, -1])
    if x.size:
        x.flat[0] = 0  # on an edge
    check(lambda a: np.digitize(a, up, right=right), x)
    check(lambda a: np.digitize(a, down, right=right), x)
    check(lambda a, b: np.digitize(a, b, right=right), x, up)  # traced bins, increasing
    check(lambda a, b: np.digitize(a, b, right=right), x, down.astype(dtype))  # traced, decreasing
    check(lambda a: np.digitize(a, [1.5], right=right), x)


def test_digitize_nan_and_errors():
    x = np.array([np.nan, -np.inf, np.inf, 0.5])
    check(lambda a: (np.digitize(a, [0.0, 1.0]), np.digitize(a, [1.0, 0.0])), x)
    with pytest.raises(ShapeError, match="monotonically"):
        reactant.compile(lambda a: np.digitize(a, [0, 2, 1]))(reactant.to_rarray(x))


# -- interp / trapezoid / polyval -------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
@pytest.mark.parametrize("shape", [(25,), (4, 3), (), (0,)])
def test_interp(dtype, shape):
    rng = np.random.default_rng(11)
    x = rand(rng, shape, dtype, low=-4, high=4)
    xp = np.array([-3.0, -1.0, 0.0, 0.5, 2.0, 3.0]).astype(dtype if dtype != "int32" else "float64")
    fp = rand(rng, (6,), dtype)
    if x.size:
        x.flat[0] = xp[2]
    check(lambda a, b, c: np.interp(a, b, c), x, xp, fp)
    check(lambda a, b, c: np.interp(a, b, c, left=-10.0, right=10.0), x, xp, fp)
    check(lambda a: np.interp(a, xp, fp), x)
    check(lambda a: np.interp(a, [1.0], [5.0]), x)


def test_interp_complex_nan_and_errors():
    x = np.array([np.nan, 0.25, 1.0, 7.0])
    check(lambda a: np.interp(a, [0.0, 0.5, 1.0], [1 + 1j, 2j, 3.0]), x)
    check(lambda a: np.interp(a, [0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 5.0, 6.0]), x)  # a vertical step
    with pytest.raises(ShapeError, match="same length"):
        reactant.compile(lambda a: np.interp(a, [0.0, 1.0], [1.0]))(reactant.to_rarray(x))
    with pytest.raises(ShapeError, match="period"):
        reactant.compile(lambda a: np.interp(a, [0.0, 1.0], [1.0, 2.0], period=0))(reactant.to_rarray(x))


@pytest.mark.parametrize("period", [360.0, -360.0, 11])
def test_interp_period(period):
    rng = np.random.default_rng(15)
    x = rng.uniform(-720, 720, 30)
    xp = np.array([190.0, -190.0, 350.0, -350.0, 10.0])
    fp = rng.standard_normal(5)
    check(lambda a, b, c: np.interp(a, b, c, period=period), x, xp, fp)
    check(lambda a: np.interp(a, xp, fp + 1j, period=period), x)


@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
def test_trapezoid(dtype, axis):
    rng = np.random.default_rng(12)
    y = rand(rng, (4, 5), dtype)
    n = y.shape[axis]
    xs = np.cumsum(rng.uniform(0.1, 1, n))
    check(lambda a: np.trapezoid(a, axis=axis), y, rtol=_tol(dtype))
    check(lambda a: np.trapezoid(a, dx=0.25, axis=axis), y, rtol=_tol(dtype))
    check(lambda a, b: np.trapezoid(a, b, axis=axis), y, xs, rtol=_tol(dtype))
    check(lambda a, b: np.trapezoid(a, x=b, axis=axis), y, np.broadcast_to(np.expand_dims(xs, 1 - axis % 2),
                                                                           y.shape).copy(), rtol=_tol(dtype))


def test_trapezoid_small():
    check(np.trapezoid, np.zeros(0, np.float32))
    check(np.trapezoid, np.ones(1))
    check(lambda a: np.trapezoid(a, x=np.array([0, 1, 3])), np.array([1, 2, 3], np.int32))


@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
@pytest.mark.parametrize("shape", [(7,), (2, 3), ()])
def test_polyval(dtype, shape):
    rng = np.random.default_rng(13)
    x = rand(rng, shape, dtype, low=-2, high=2)
    p = rand(rng, (4,), dtype)
    check(np.polyval, p, x, rtol=_tol(dtype))
    check(lambda a: np.polyval([1.0, -2.0, 0.5], a), x, rtol=_tol(dtype))
    check(lambda a: np.polyval(a, 1.5), p, rtol=_tol(dtype))
    check(lambda a: np.polyval(np.array([], dtype), a), x)


# -- gradient ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient(dtype, edge_order):
    rng = np.random.default_rng(14)
    f = rand(rng, (5, 6), dtype)
    tol = _tol(dtype)
    check(lambda a: np.gradient(a, edge_order=edge_order), f, rtol=tol, atol=tol)
    check(lambda a: np.gradient(a, 0.5, edge_order=edge_order), f, rtol=tol, atol=tol)
    check(lambda a: np.gradient(a, 2.0, 0.3, edge_order=edge_order), f, rtol=tol, atol=tol)
    check(lambda a: np.gradient(a, axis=-1, edge_order=edge_order), f, rtol=tol, atol=tol)
    check(lambda a: np.gradient(a, 3.0, axis=(-2,), edge_order=edge_order), f, rtol=tol, atol=tol)
    xs, ys = np.cumsum(rng.uniform(0.1, 1, 5)), np.arange(6) * 2  # uneven, and even integer coordinates
    check(lambda a: np.gradient(a, xs, ys, edge_order=edge_order), f, rtol=tol, atol=tol)
    check(lambda a, b: np.gradient(a, b, axis=0, edge_order=edge_order), f, xs, rtol=tol, atol=tol)
    check(lambda a: np.gradient(a, edge_order=edge_order), f[0], rtol=tol, atol=tol)


def test_gradient_errors():
    with pytest.raises(ShapeError, match="too small"):
        reactant.compile(lambda a: np.gradient(a, edge_order=2))(reactant.to_rarray(np.ones(2)))
    with pytest.raises(ShapeError, match="do not match"):
        reactant.compile(lambda a: np.gradient(a, np.arange(3.0)))(reactant.to_rarray(np.ones(4)))


# -- derivatives ------------------------------------------------------------------------------
def _grad_check(f_np, f_jax, *args, argnums=0, tol=1e-9):
    g = reactant.compile(lambda *a: reactant.gradient(f_np, *a, argnums=argnums))(*reactant.to_rarray(args))
    with jax.enable_x64(True):
        ref = jax.grad(f_jax, argnums=argnums)(*args)
    np.testing.assert_allclose(np.asarray(g), np.asarray(ref), rtol=tol, atol=tol)


def test_grad_cov_corrcoef():
    x = RNG.standard_normal((3, 6))
    c = RNG.standard_normal((3, 3))
    _grad_check(lambda a: np.sum(np.cov(a) * c), lambda a: jnp.sum(jnp.cov(a) * c), x)
    _grad_check(lambda a: np.sum(np.cov(a, rowvar=False, bias=True) ** 2),
                lambda a: jnp.sum(jnp.cov(a, rowvar=False, bias=True) ** 2), x)
    _grad_check(lambda a: np.sum(np.corrcoef(a) * c), lambda a: jnp.sum(jnp.corrcoef(a) * c), x)


def test_grad_interp():
    x = RNG.uniform(-1, 4, 10)
    xp, fp = np.array([0.0, 1.0, 2.5, 3.0]), RNG.standard_normal(4)
    f_np = lambda a, b: np.sum(np.interp(a, xp, b) ** 2)  # noqa: E731
    f_jax = lambda a, b: jnp.sum(jnp.interp(a, xp, b) ** 2)  # noqa: E731
    _grad_check(f_np, f_jax, x, fp, argnums=0)
    _grad_check(f_np, f_jax, x, fp, argnums=1)


def test_grad_trapezoid_polyval_gradient():
    y, xs = RNG.standard_normal((4, 5)), np.cumsum(RNG.uniform(0.1, 1, 5))
    _grad_check(lambda a: np.sum(np.trapezoid(a, xs) ** 2), lambda a: jnp.sum(jnp.trapezoid(a, xs) ** 2), y)
    _grad_check(lambda b: np.sum(np.trapezoid(y, b)), lambda b: jnp.sum(jnp.trapezoid(y, b)), xs)
    p, x = RNG.standard_normal(4), RNG.standard_normal(6)
    _grad_check(lambda a, b: np.sum(np.polyval(a, b)), lambda a, b: jnp.sum(jnp.polyval(a, b)), p, x, argnums=0)
    _grad_check(lambda a, b: np.sum(np.polyval(a, b)), lambda a, b: jnp.sum(jnp.polyval(a, b)), p, x, argnums=1)
    w = RNG.standard_normal((4, 5))
    _grad_check(lambda a: np.sum(np.gradient(a, 0.5, axis=1) * w),
                lambda a: jnp.sum(jnp.gradient(a, 0.5, axis=1) * w), y)
    _grad_check(lambda a: np.sum(np.gradient(a, xs, axis=-1) * w),
                lambda a: jnp.sum(jnp.gradient(a, xs, axis=-1) * w), y)
