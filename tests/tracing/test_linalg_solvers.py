"""numpy.linalg decompositions traced (compiled and eager) vs NumPy: values, dtypes and batching
for solve, inv, det, slogdet, cholesky, qr, svd, svdvals, eigh, eigvalsh, eig, eigvals, lstsq,
pinv, matrix_rank, cond, matrix_power, tensorsolve, tensorinv, multi_dot and the norms;
clear errors; LinAlgError eagerly and NaN/inf compiled for singular input; derivatives in
reverse and forward mode against jax.grad / jax.jvp and finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from npcheck import assert_same, check, rand

import reactant
from reactant.optimize.autodiff import ADError
from reactant.tracing.errors import DTypeError, OptionError, ShapeError

FLOATS = ["float32", "float64", "complex64", "complex128"]


def _tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9


def _mat(shape, dtype, seed=0, shift=0.0):
    """Random (batched) matrices; ``shift`` adds a multiple of the identity (well conditioned)."""
    a = rand(np.random.default_rng(seed), shape, dtype)
    if shift:
        a = a + shift * np.eye(shape[-1], dtype=a.dtype)
    return a


def _spd(shape, dtype, seed=0):
    a = _mat(shape, dtype, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


# -- values against NumPy --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_solve_inv_det(dtype):
    a, b, bm = _mat((2, 4, 4), dtype, 0, 6.0), _mat((4,), dtype, 1), _mat((2, 4, 3), dtype, 2)
    t = _tol(dtype)
    check(lambda a, b, bm: (np.linalg.solve(a, b), np.linalg.solve(a, bm), np.linalg.solve(a[0], bm),
                            np.linalg.inv(a), np.linalg.det(a), tuple(np.linalg.slogdet(a))),
          a, b, bm, rtol=t, atol=t)


def test_integer_input_computes_in_float64_and_broadcasts():
    a = np.array([[[4, 1], [2, 3]], [[1, 2], [3, 5]]])
    b = np.array([[1, 2], [3, 4], [5, 6]])[:, None, :, None][..., 0]  # (3, 1, 2): broadcast batch
    check(lambda a, b: (np.linalg.det(a), np.linalg.inv(a), np.linalg.solve(a, b[..., None])), a, b)


def test_det_sign_follows_row_swaps():
    p = np.eye(5)[[3, 0, 4, 1, 2]] * np.array([1.0, -2.0, 3.0, 0.5, 1.5])
    check(lambda a: (np.linalg.det(a), tuple(np.linalg.slogdet(a))), np.stack([p, -p, p @ p]))


@pytest.mark.parametrize("dtype", FLOATS)
def test_cholesky_and_eigh(dtype):
    s, t = _spd((2, 4, 4), dtype), _tol(dtype)
    check(lambda a: (np.linalg.cholesky(a), np.linalg.cholesky(a, upper=True), np.linalg.eigvalsh(a),
                     np.linalg.eigvalsh(a, UPLO="U")), s, rtol=t, atol=t)
    w, v = reactant.compile(np.linalg.eigh)(reactant.to_rarray(s))
    w, v = np.asarray(w), np.asarray(v)
    assert w.dtype == np.linalg.eigh(s)[0].dtype and v.dtype == s.dtype
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s), rtol=t, atol=t)
    np.testing.assert_allclose(s @ v, v * w[..., None, :], rtol=10 * t, atol=10 * t)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5)])
def test_qr_modes(dtype, shape):
    a, t = _mat(shape, dtype), _tol(dtype)
    for mode in ("reduced", "complete"):
        q, r = reactant.compile(lambda x: tuple(np.linalg.qr(x, mode=mode)))(reactant.to_rarray(a))
        q, r = np.asarray(q), np.asarray(r)
        qn, rn = np.linalg.qr(a, mode=mode)
        assert q.shape == qn.shape and r.shape == rn.shape and q.dtype == qn.dtype
        np.testing.assert_allclose(q @ r, a, rtol=10 * t, atol=10 * t)
        np.testing.assert_allclose(np.abs(r), np.abs(rn), rtol=10 * t, atol=10 * t)  # unique up to signs
        np.testing.assert_allclose(np.triu(r), r)
    r_only = np.asarray(reactant.compile(lambda x: np.linalg.qr(x, mode="r"))(reactant.to_rarray(a)))
    np.testing.assert_allclose(np.abs(r_only), np.abs(np.linalg.qr(a, mode="r")), rtol=10 * t, atol=10 * t)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5), (4, 4)])
def test_svd(dtype, shape):
    a, t = _mat(shape, dtype), _tol(dtype)
    check(lambda x: (np.linalg.svd(x, compute_uv=False), np.linalg.svdvals(x), np.linalg.matrix_rank(x),
                     np.linalg.norm(x, 2, axis=(-2, -1)), np.linalg.norm(x, "nuc", axis=(-2, -1)),
                     np.linalg.cond(x)), a, rtol=t, atol=t)
    for full in (True, False):
        u, s, vh = (np.asarray(o) for o in reactant.compile(
            lambda x: tuple(np.linalg.svd(x, full_matrices=full)))(reactant.to_rarray(a)))
        un, sn, vhn = np.linalg.svd(a, full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (un.shape, sn.shape, vhn.shape)
        assert (u.dtype, s.dtype) == (un.dtype, sn.dtype)
        k = min(shape[-2:])
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, rtol=10 * t, atol=10 * t)


def test_svd_hermitian_pinv_rank_lstsq():
    s = _spd((4, 4), "float64") - 6 * np.eye(4)  # indefinite symmetric
    m = _mat((6, 3), "float64", 3)
    b, bm = _mat((6,), "float64", 4), _mat((6, 2), "float64", 5)
    low_rank = m @ _mat((3, 5), "float64", 6)
    check(lambda s, m, b, bm, lr: (np.linalg.svd(s, hermitian=True, compute_uv=False), np.linalg.pinv(m),
                                   np.linalg.pinv(s, hermitian=True), np.linalg.pinv(m, rtol=0.3),
                                   np.linalg.matrix_rank(lr), np.linalg.matrix_rank(lr, tol=1e-3),
                                   np.linalg.lstsq(m, b)[:2], np.linalg.lstsq(m, bm, rcond=None)[:2],
                                   np.linalg.lstsq(lr.T, b[:5])[0]),
          s, m, b, bm, low_rank, rtol=1e-8, atol=1e-8, dtype_exact=False)
    u, sv, vh = (np.asarray(o) for o in reactant.compile(lambda x: tuple(np.linalg.svd(x, hermitian=True)))(
        reactant.to_rarray(s)))
    np.testing.assert_allclose((u * sv) @ vh, s, atol=1e-10)
    x, res, rank, sing = reactant.compile(np.linalg.lstsq)(*reactant.to_rarray((m, b)))
    assert int(np.asarray(rank)) == 3
    np.testing.assert_allclose(np.asarray(sing), np.linalg.svd(m, compute_uv=False))


def test_eig():
    a = _mat((2, 4, 4), "float64", 7)
    w, v = (np.asarray(o) for o in reactant.compile(lambda x: tuple(np.linalg.eig(x)))(reactant.to_rarray(a)))
    assert w.dtype == np.complex128 and v.dtype == np.complex128  # NumPy returns float when all are real
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-10)
    wv = np.asarray(reactant.compile(np.linalg.eigvals)(reactant.to_rarray(a)))
    np.testing.assert_allclose(np.sort_complex(wv), np.sort_complex(np.linalg.eigvals(a)), atol=1e-10)


def test_powers_tensor_equations_chains_and_norms():
    a = _mat((2, 3, 3), "float64", 8, 3.0)
    t4 = _mat((6, 6), "float64", 9, 4.0).reshape(2, 3, 6)
    rhs = _mat((2, 3), "float64", 10)
    chain = [_mat((5,), "float64", 11), _mat((5, 8), "float64", 12), _mat((8, 2), "float64", 13),
             _mat((2,), "float64", 14)]
    x = _mat((3, 4, 5), "float64", 15)
    check(lambda a, t4, rhs, c0, c1, c2, c3, x: (
        np.linalg.matrix_power(a, 0), np.linalg.matrix_power(a, 5), np.linalg.matrix_power(a, -2),
        np.linalg.tensorinv(t4.reshape(6, 2, 3), ind=1), np.linalg.tensorsolve(t4.reshape(2, 3, 2, 3), rhs),
        np.linalg.multi_dot([c0, c1, c2, c3]), np.linalg.multi_dot([c1, c2]), np.linalg.cond(a, 1),
        np.linalg.cond(a, "fro"), np.linalg.cond(a, -np.inf), np.linalg.matrix_norm(x, ord=-2, keepdims=True),
        np.linalg.vector_norm(x, axis=(0, 2), ord=3), np.linalg.vector_norm(x, keepdims=True),
        np.linalg.trace(x), np.linalg.diagonal(x, offset=1), np.linalg.outer(c0, c0[:3]),
        np.linalg.cross(x[..., :3], x[..., 1:4]), np.linalg.matrix_transpose(x), np.linalg.vecdot(x, x)),
        a, t4, rhs, *chain, x, rtol=1e-9, atol=1e-9)


# -- failures: NaN/inf compiled, LinAlgError eager, clear errors -------------------------------------
def test_singular_and_indefinite_input():
    sing, neg = np.ones((3, 3)), -np.eye(3)
    out = np.asarray(reactant.compile(np.linalg.inv)(reactant.to_rarray(sing)))
    assert not np.isfinite(out).all()
    bad = np.asarray(reactant.compile(np.linalg.cholesky)(reactant.to_rarray(neg)))
    assert np.isnan(bad[np.tril_indices(3)]).all()
    assert float(np.asarray(reactant.compile(np.linalg.det)(reactant.to_rarray(sing)))) == 0.0
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        np.linalg.inv(reactant.to_rarray(sing))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        np.linalg.solve(reactant.to_rarray(sing), reactant.to_rarray(np.ones(3)))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        np.linalg.cholesky(reactant.to_rarray(neg))
    eager = np.linalg.inv(reactant.to_rarray(2 * np.eye(3)))  # and a good input works eagerly
    np.testing.assert_allclose(np.asarray(eager), 0.5 * np.eye(3))
    w = np.linalg.eigvalsh(reactant.to_rarray(_spd((3, 3), "float64")))
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(_spd((3, 3), "float64")))


def test_errors_name_the_line_shapes_and_dtypes():
    a = reactant.to_rarray(np.ones((3, 4)))
    with pytest.raises(ShapeError, match=r"square.*float64\[3, 4\]") as e:
        reactant.compile(np.linalg.inv)(a)
    assert "test_linalg_solvers.py" in str(e.value) or "inv" in str(e.value)
    with pytest.raises(ShapeError, match="at least two-dimensional"):
        reactant.compile(lambda x: np.linalg.qr(x))(reactant.to_rarray(np.ones(3)))
    with pytest.raises(DTypeError, match="float16"):
        reactant.compile(np.linalg.det)(reactant.to_rarray(np.ones((2, 2), np.float16)))
    with pytest.raises(OptionError, match="mode"):
        reactant.compile(lambda x: np.linalg.qr(x, mode="economic"))(reactant.to_rarray(np.ones((3, 3))))
    with pytest.raises(OptionError, match="UPLO"):
        reactant.compile(lambda x: np.linalg.eigh(x, UPLO="X"))(reactant.to_rarray(np.eye(3)))
    with pytest.raises(ShapeError, match="do not fit"):
        reactant.compile(np.linalg.solve)(*reactant.to_rarray((np.eye(3), np.ones((2, 2)))))
    with pytest.raises(ValueError, match="both set"):
        reactant.compile(lambda x: np.linalg.pinv(x, rcond=0.1, rtol=0.1))(reactant.to_rarray(np.eye(3)))


def test_optimized_pipeline_keeps_markers_until_xla():
    a, b = _mat((3, 3), "float64", 16, 4.0), _mat((3,), "float64", 17)

    def f(a, b):
        return np.linalg.solve(a @ a.T + np.eye(3), b) * 2.0 + np.linalg.det(a)

    hlo = reactant.code_hlo(f, *reactant.to_rarray((a, b)))
    assert "reactant.linalg.solve" in hlo and "reactant.linalg.lu" in hlo
    assert "lapack" not in hlo  # replaced by the platform's calls only before XLA
    check(f, a, b, optimize="O2")


# -- derivatives ------------------------------------------------------------------------------------
_B = np.random.default_rng(20).standard_normal(4)


# name: (NumPy loss, jax loss, input kind). Eigen- and singular vectors are unique up to sign:
# the losses use sign-free functions of them.
LOSSES = {
    "solve": (lambda a: np.sum(np.sin(np.linalg.solve(a, _B))), lambda a: jnp.sum(jnp.sin(jnp.linalg.solve(a, _B))),
              "square"),
    "solve_matrix": (lambda a: np.sum(np.linalg.solve(a, a[..., :2] * 3.0) ** 2),
                     lambda a: jnp.sum(jnp.linalg.solve(a, a[..., :2] * 3.0) ** 2), "square"),
    "inv": (lambda a: np.sum(np.cos(np.linalg.inv(a))), lambda a: jnp.sum(jnp.cos(jnp.linalg.inv(a))), "square"),
    "det": (lambda a: np.sum(np.linalg.det(a) ** 2), lambda a: jnp.sum(jnp.linalg.det(a) ** 2), "square"),
    "slogdet": (lambda a: np.sum(np.linalg.slogdet(a)[1]), lambda a: jnp.sum(jnp.linalg.slogdet(a)[1]), "square"),
    "matrix_power": (lambda a: np.sum(np.sin(np.linalg.matrix_power(a, -2))),
                     lambda a: jnp.sum(jnp.sin(jnp.linalg.matrix_power(a, -2))), "square"),
    "qr": (lambda a: np.sum(np.sin(np.linalg.qr(a)[0])) + np.sum(np.linalg.qr(a)[1] ** 2),
           lambda a: jnp.sum(jnp.sin(jnp.linalg.qr(a)[0])) + jnp.sum(jnp.linalg.qr(a)[1] ** 2), "tall"),
    "svd_tall": (lambda a: np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[0]) * 1.5)
                 + np.sum(np.sin(np.linalg.svd(a, full_matrices=False)[1]))
                 + np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[2]) ** 3),
                 lambda a: jnp.sum(jnp.abs(jnp.linalg.svd(a, full_matrices=False)[0]) * 1.5)
                 + jnp.sum(jnp.sin(jnp.linalg.svd(a, full_matrices=False)[1]))
                 + jnp.sum(jnp.abs(jnp.linalg.svd(a, full_matrices=False)[2]) ** 3), "tall"),
    "svd_wide": (lambda a: np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[0]) ** 3)
                 + np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[2]) * 2.0),
                 lambda a: jnp.sum(jnp.abs(jnp.linalg.svd(a, full_matrices=False)[0]) ** 3)
                 + jnp.sum(jnp.abs(jnp.linalg.svd(a, full_matrices=False)[2]) * 2.0), "wide"),
    "svdvals": (lambda a: np.sum(np.linalg.svdvals(a) ** 3), lambda a: jnp.sum(jnp.linalg.svdvals(a) ** 3), "wide"),
    "pinv": (lambda a: np.sum(np.sin(np.linalg.pinv(a))), lambda a: jnp.sum(jnp.sin(jnp.linalg.pinv(a))), "tall"),
    "lstsq": (lambda a: np.sum(np.linalg.lstsq(a[0], _B[:3] * 1.0 + a[1, :, 0])[0] ** 2),
              lambda a: jnp.sum(jnp.linalg.lstsq(a[0], _B[:3] * 1.0 + a[1, :, 0])[0] ** 2), "tall3"),
    "norm2": (lambda a: np.sum(np.linalg.norm(a, 2, axis=(-2, -1))), lambda a: jnp.sum(jnp.linalg.norm(a, 2, axis=(-2, -1))),
              "tall"),
    "eigh": (lambda a: np.sum(np.linalg.eigh(a)[0] ** 2) + np.sum(np.abs(np.linalg.eigh(a)[1]) ** 3),
             lambda a: jnp.sum(jnp.linalg.eigh(a)[0] ** 2) + jnp.sum(jnp.abs(jnp.linalg.eigh(a)[1]) ** 3), "sym"),
    "eigvalsh": (lambda a: np.sum(np.sin(np.linalg.eigvalsh(a))), lambda a: jnp.sum(jnp.sin(jnp.linalg.eigvalsh(a))),
                 "sym"),
    "cholesky": (lambda a: np.sum(np.sin(np.linalg.cholesky(a))), lambda a: jnp.sum(jnp.sin(jnp.linalg.cholesky(a))),
                 "sym"),
}


def _input(kind, seed):
    shapes = {"square": (2, 4, 4), "tall": (2, 5, 3), "wide": (2, 3, 5), "tall3": (2, 3, 3), "sym": (2, 4, 4)}
    if kind == "sym":
        return _spd(shapes[kind], "float64", seed)
    x = _mat(shapes[kind], "float64", seed)
    return x + 3.0 * np.eye(x.shape[-2], x.shape[-1]) if kind in ("square", "tall3") else x


def _sym(g):
    return (g + np.swapaxes(g, -1, -2)) / 2


@pytest.mark.parametrize("name", list(LOSSES))
def test_gradients_vs_jax(name):
    """Reverse and forward mode against jax. A symmetric-input function reads one triangle (as
    LAPACK does): its gradient's symmetric part, and its derivative along symmetric directions,
    are jax's (jax symmetrizes its input instead)."""
    f_np, f_jax, kind = LOSSES[name]
    x = _input(kind, 21)
    t = _mat(x.shape, "float64", 22)
    if kind == "sym":
        t = _sym(t)
    with jax.enable_x64(True):  # (one jitted program for both: op-by-op dispatch compiles each op)
        g_ref, (v_ref, jv_ref) = jax.jit(lambda a, b: (jax.grad(f_jax)(a), jax.jvp(f_jax, (a,), (b,))))(x, t)
        g_ref = np.asarray(g_ref)
    # (reverse and forward mode in one compiled program)
    g, (v, jv) = reactant.compile(lambda a, b: (reactant.gradient(f_np, a), reactant.jvp(f_np, (a,), (b,))))(
        *reactant.to_rarray((x, t)))
    g = np.asarray(g)
    if kind == "sym":
        g, g_ref = _sym(g), _sym(g_ref)
    np.testing.assert_allclose(g, g_ref, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(float(np.asarray(v)), float(v_ref), rtol=1e-10)
    np.testing.assert_allclose(float(np.asarray(jv)), float(jv_ref), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("name", ["det", "qr", "eigh", "svd_wide"])
def test_gradients_vs_finite_differences(name):
    """Central differences in every entry (for eigh: of the lower triangle, the part LAPACK reads)."""
    f_np, _, kind = LOSSES[name]
    x = _input(kind, 23)
    g = np.asarray(reactant.compile(lambda a: reactant.gradient(f_np, a))(reactant.to_rarray(x)))
    fd, h = np.zeros_like(x), 1e-6
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        fd[idx] = (f_np(x + e) - f_np(x - e)) / (2 * h)
    if kind == "sym":  # NumPy's eigh reads the lower triangle: the upper one has no influence
        assert np.allclose(fd, np.tril(fd), atol=1e-6)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["complex128"])
def test_complex_solve_gradients_vs_jax(dtype):
    a = _mat((2, 3, 3), dtype, 24, 3.0)

    def f_np(a):
        return np.sum(np.abs(np.linalg.solve(a, a[..., :1])) ** 2) + np.sum(np.real(np.linalg.inv(a)))

    def f_jax(a):
        return jnp.sum(jnp.abs(jnp.linalg.solve(a, a[..., :1])) ** 2) + jnp.sum(jnp.real(jnp.linalg.inv(a)))

    with jax.enable_x64(True):
        ref = np.asarray(jax.grad(f_jax)(a))
    got = np.asarray(reactant.compile(lambda x: reactant.gradient(f_np, x))(reactant.to_rarray(a)))
    np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-9)


def test_unsupported_derivatives_are_clear_errors():
    z = reactant.to_rarray(_mat((4, 3), "float64", 25))
    with pytest.raises(ADError, match="full_matrices=False"):
        reactant.compile(lambda x: reactant.gradient(lambda y: np.sum(np.linalg.svd(y)[0]), x))(z)
    w = reactant.to_rarray(_mat((3, 4), "float64", 26))
    with pytest.raises(ADError, match="at least as many rows"):
        reactant.compile(lambda x: reactant.gradient(lambda y: np.sum(np.linalg.qr(y)[1]), x))(w)
    with pytest.raises(ADError, match="eigenvectors of numpy.linalg.eig"):
        reactant.compile(lambda x: reactant.gradient(lambda y: np.sum(np.abs(np.linalg.eig(y)[1])), x))(
            reactant.to_rarray(_mat((3, 3), "float64", 27)))
    assert_same(np.asarray(reactant.compile(np.linalg.det)(reactant.to_rarray(np.eye(2) * 3))), np.float64(9.0))


def test_solve_on_a_cholesky_factor_becomes_a_triangular_solve():
    """Pattern ``solve_triangular_factor``: same values at O0 (general LU solve) and O2 (one
    triangular solve per right-hand side), and the same gradient."""
    k, y = _spd((5, 5), "float64", 30), _mat((5,), "float64", 31)

    def f(k, y):
        chol = np.linalg.cholesky(k)
        return np.linalg.solve(chol, y), np.linalg.solve(chol.T, y[:, None] * 2.0)

    for level in ("O0", "O2"):
        check(f, k, y, optimize=level)
    o0 = reactant.code_hlo(f, *reactant.to_rarray((k, y)), optimize="O0")
    o2 = reactant.code_hlo(f, *reactant.to_rarray((k, y)), optimize="O2")
    assert o0.count("reactant.linalg.solve") == 2 and "stablehlo.triangular_solve" not in o0
    assert "reactant.linalg" not in o2 and o2.count("stablehlo.triangular_solve") == 2

    def loss(k):
        a, b = f(k, y)
        return np.sum(a ** 2) + np.sum(np.sin(b))

    def jloss(k):
        chol = jnp.linalg.cholesky(k)
        a = jax.scipy.linalg.solve_triangular(chol, y, lower=True)
        b = jax.scipy.linalg.solve_triangular(chol.T, y[:, None] * 2.0, lower=False)
        return jnp.sum(a ** 2) + jnp.sum(jnp.sin(b))

    with jax.enable_x64(True):
        ref = np.asarray(jax.grad(jloss)(k))
    for level in ("O0", "O2"):
        g = np.asarray(reactant.compile(lambda x: reactant.gradient(loss, x), optimize=level)(reactant.to_rarray(k)))
        np.testing.assert_allclose(_sym(g), _sym(ref), rtol=1e-8, atol=1e-10)


def test_complex_hermitian_eigh_derivatives_vs_jax():
    """Hermitian input: the gradient's Hermitian part and the derivative along Hermitian
    directions are jax's (the gradient itself lives on the lower triangle LAPACK reads)."""
    h = _spd((2, 4, 4), "complex128", 32)
    t = _mat((2, 4, 4), "complex128", 33)
    t = (t + np.conj(np.swapaxes(t, -1, -2))) / 2

    def f_np(a):
        w, v = np.linalg.eigh(a)
        return np.sum(w ** 3) + np.sum(np.abs(v) ** 4)

    def f_jax(a):
        w, v = jnp.linalg.eigh(a)
        return jnp.sum(w ** 3) + jnp.sum(jnp.abs(v) ** 4)

    def herm(g):
        return (g + np.conj(np.swapaxes(g, -1, -2))) / 2

    with jax.enable_x64(True):
        ref = np.asarray(jax.grad(f_jax)(h))
        _, jv_ref = jax.jvp(f_jax, (h,), (t,))
    g = np.asarray(reactant.compile(lambda a: reactant.gradient(f_np, a))(reactant.to_rarray(h)))
    np.testing.assert_allclose(herm(g), herm(ref), rtol=1e-8, atol=1e-8)
    assert np.allclose(np.triu(g, 1), 0)
    _, jv = reactant.compile(lambda a, b: reactant.jvp(f_np, (a,), (b,)))(*reactant.to_rarray((h, t)))
    np.testing.assert_allclose(float(np.asarray(jv)), float(jv_ref), rtol=1e-9)


_C_LOSSES = {  # complex input: JAX's convention for complex gradients
    "qr": (lambda a: np.sum(np.abs(np.linalg.qr(a)[0]) ** 3) + np.sum(np.abs(np.linalg.qr(a)[1]) ** 2 * np.arange(3)),
           lambda a: jnp.sum(jnp.abs(jnp.linalg.qr(a)[0]) ** 3)
           + jnp.sum(jnp.abs(jnp.linalg.qr(a)[1]) ** 2 * jnp.arange(3)), (2, 5, 3)),
    "svd_tall": (lambda a: np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[0]) ** 3)
                 + np.sum(np.sin(np.linalg.svd(a, full_matrices=False)[1]))
                 + np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[2]) ** 4),
                 lambda a: jnp.sum(jnp.abs(jnp.linalg.svd(a, full_matrices=False)[0]) ** 3)
                 + jnp.sum(jnp.sin(jnp.linalg.svd(a, full_matrices=False)[1]))
                 + jnp.sum(jnp.abs(jnp.linalg.svd(a, full_matrices=False)[2]) ** 4), (2, 5, 3)),
    "svd_wide": (lambda a: np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[0]) ** 3)
                 + np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[2]) ** 4),
                 lambda a: jnp.sum(jnp.abs(jnp.linalg.svd(a, full_matrices=False)[0]) ** 3)
                 + jnp.sum(jnp.abs(jnp.linalg.svd(a, full_matrices=False)[2]) ** 4), (2, 3, 5)),
    "svdvals": (lambda a: np.sum(np.linalg.svdvals(a) ** 3), lambda a: jnp.sum(jnp.linalg.svdvals(a) ** 3), (2, 4, 4)),
}


@pytest.mark.parametrize("name", list(_C_LOSSES))
def test_complex_qr_svd_derivatives_vs_jax(name):
    f_np, f_jax, shape = _C_LOSSES[name]
    x, t = _mat(shape, "complex128", 34), _mat(shape, "complex128", 35)
    with jax.enable_x64(True):
        ref = np.asarray(jax.grad(f_jax)(x))
        _, jv_ref = jax.jvp(f_jax, (x,), (t,))
    g = np.asarray(reactant.compile(lambda a: reactant.gradient(f_np, a))(reactant.to_rarray(x)))
    np.testing.assert_allclose(g, ref, rtol=1e-8, atol=1e-10)
    _, jv = reactant.compile(lambda a, b: reactant.jvp(f_np, (a,), (b,)))(*reactant.to_rarray((x, t)))
    np.testing.assert_allclose(float(np.asarray(jv)), float(jv_ref), rtol=1e-9)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eigenvalue_derivatives_vs_jax(dtype):
    x, t = _mat((2, 4, 4), dtype, 36), _mat((2, 4, 4), dtype, 37)

    def f_np(a):
        w = np.linalg.eigvals(a)
        return np.sum(np.abs(w) ** 2) + np.sum(np.real(w) ** 3) + np.sum(np.abs(np.linalg.eig(a)[0]))

    def f_jax(a):
        w = jnp.linalg.eigvals(a)
        return jnp.sum(jnp.abs(w) ** 2) + jnp.sum(jnp.real(w) ** 3) + jnp.sum(jnp.abs(w))

    with jax.enable_x64(True):
        ref = np.asarray(jax.grad(f_jax)(x))
        _, jv_ref = jax.jvp(f_jax, (x,), (t,))
    g = np.asarray(reactant.compile(lambda a: reactant.gradient(f_np, a))(reactant.to_rarray(x)))
    assert g.dtype == x.dtype
    np.testing.assert_allclose(g, ref, rtol=1e-8, atol=1e-10)
    _, jv = reactant.compile(lambda a, b: reactant.jvp(f_np, (a,), (b,)))(*reactant.to_rarray((x, t)))
    np.testing.assert_allclose(float(np.asarray(jv)), float(jv_ref), rtol=1e-9)


def test_empty_matrices_and_vecdot_dtypes():
    e, eb = np.ones((0, 0)), np.ones((2, 0, 0))
    check(lambda a, b: (np.linalg.inv(a), np.linalg.det(a), np.linalg.solve(a, np.ones((0, 3))), np.linalg.inv(b),
                        np.linalg.det(b)), e, eb)
    u = np.arange(12, dtype=np.uint8).reshape(3, 4)
    check(lambda x: (np.vecdot(x, x), np.linalg.vecdot(x, x)), u)


def test_values_only_decompositions_reuse_the_ones_with_vectors():
    """The gradient of svdvals/eigvals needs the vectors: the compiled program then computes one
    SVD and one eigendecomposition, not two each (pattern decomposition_reuse)."""
    x = _mat((2, 6, 4), "float64", 38)

    def f(a):
        return reactant.gradient(lambda y: np.sum(np.linalg.svdvals(y) ** 3)
                                 + np.sum(np.abs(np.linalg.eigvals(y[..., :4, :]))), a)

    hlo = reactant.code_hlo(f, reactant.to_rarray(x))
    assert hlo.count("reactant.linalg.svd") == 1 and hlo.count("reactant.linalg.eig") == 1
    with jax.enable_x64(True):
        ref = jax.grad(lambda y: jnp.sum(jnp.linalg.svdvals(y) ** 3)
                       + jnp.sum(jnp.abs(jnp.linalg.eigvals(y[..., :4, :]))))(x)
    np.testing.assert_allclose(np.asarray(reactant.compile(f)(reactant.to_rarray(x))), np.asarray(ref),
                               rtol=1e-8, atol=1e-10)
