"""matmul/@, dot, einsum, tensordot, outer & co. vs NumPy (shapes, broadcasting, dtypes)."""

import numpy as np
import pytest
from npcheck import check, rand

import reactant

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                 ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (6, 3, 4)), ((2, 1, 2, 3), (5, 3, 2))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "complex64", "bool"])
def test_matmul(shapes, dtype):
    rng = np.random.default_rng(0)
    a, b = rand(rng, shapes[0], dtype), rand(rng, shapes[1], dtype)
    check(lambda x, y: x @ y, a, b, rtol=1e-4)
    check(np.matmul, a, b, rtol=1e-4)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 2, 3), (4, 3, 5)),
                                    ((), (3,)), ((4, 3), ())], ids=str)
def test_dot(shapes):
    rng = np.random.default_rng(1)
    a, b = rand(rng, shapes[0], "float64"), rand(rng, shapes[1], "float64")
    check(np.dot, a, b)
    if a.ndim and b.ndim:
        check(lambda x, y: x.dot(y), a, b)


def test_vdot_inner_outer_kron():
    rng = np.random.default_rng(2)
    a, b = rand(rng, (2, 3), "complex128"), rand(rng, (2, 3), "complex128")
    check(np.vdot, a, b)
    check(np.inner, a, b)
    check(np.outer, a, b)
    check(np.kron, a, rand(rng, (2, 2), "complex128"))
    check(np.kron, rand(rng, (3,), "float64"), rand(rng, (2, 4), "float64"))


@pytest.mark.parametrize("axes", [0, 1, 2, ([1, 0], [0, 1]), (2, 0), ([-1], [0])], ids=str)
def test_tensordot(axes):
    rng = np.random.default_rng(3)
    a = rand(rng, (3, 4, 5), "float64")
    b = rand(rng, (5, 4, 3), "float64")
    if axes == 1 or axes == (2, 0) or axes == ([-1], [0]):
        bb = rand(rng, (5, 2), "float64")
        check(lambda x, y: np.tensordot(x, y, axes), a, bb)
    elif axes == 2:
        check(lambda x, y: np.tensordot(x, y, axes), a, rand(rng, (4, 5, 2), "float64"))
    elif axes == 0:
        check(lambda x, y: np.tensordot(x, y, axes), a[:2, :2, :2], b[:2, :2, :2])
    else:
        check(lambda x, y: np.tensordot(x, y, axes), a, rand(rng, (4, 3, 2), "float64"))


EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("iij->j", [(3, 3, 4)]),
    ("ab,cb,ad->cd", [(3, 4), (5, 4), (3, 2)]),
]


@pytest.mark.parametrize("spec", EINSUMS, ids=lambda s: s[0])
def test_einsum(spec):
    sub, shapes = spec
    rng = np.random.default_rng(4)
    args = [rand(rng, s, "float64") for s in shapes]
    check(lambda *a: np.einsum(sub, *a), *args)


def test_trace_diagonal_norm():
    rng = np.random.default_rng(5)
    a = rand(rng, (4, 5, 3), "float64")
    check(lambda x: (np.trace(x), np.trace(x, 1), np.diagonal(x, -1, 1, 2), np.trace(x, axis1=0, axis2=2)), a)
    v = rand(rng, (7,), "float64")
    m = rand(rng, (3, 4), "float64")
    check(lambda x, y: (np.linalg.norm(x), np.linalg.norm(x, 1), np.linalg.norm(x, np.inf), np.linalg.norm(y),
                        np.linalg.norm(y, axis=1), np.linalg.norm(y, "fro"), np.linalg.norm(y, 1),
                        np.linalg.norm(y, np.inf), np.linalg.norm(x, 3)), v, m)


def test_matmul_shape_mismatch_error_names_shapes_and_line():
    x = reactant.to_rarray(np.ones((256, 64), np.float32))
    w = reactant.to_rarray(np.ones((32, 10), np.float32))

    @reactant.compile
    def f(x, w):
        return np.tanh(x @ w)  # the line the error must name

    with pytest.raises(reactant.ShapeError) as e:
        f(x, w)
    msg = str(e.value)
    assert "(256, 64)" in msg and "(32, 10)" in msg
    assert "test_linalg.py" in msg and "return np.tanh(x @ w)" in msg
    assert f.compile_count == 0


@pytest.mark.parametrize("shapes", [((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((3,), (5, 3, 4)),
                                    ((2, 5, 2, 3), (3,)), ((3, 4), (2, 5, 4, 2))], ids=str)
def test_matmul_with_a_matrix_side_contracts_it_unbroadcast(shapes):
    # a matrix against a batch is contracted as it is: the traced module holds no copy of it
    # per batch element (XLA would materialize them), and values and gradients are NumPy's/jax's
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    f = reactant.compile(lambda x, y: x @ y)
    hlo = reactant.code_hlo(f, reactant.to_rarray(a), reactant.to_rarray(b), optimize=False)
    assert "broadcast_in_dim" not in hlo
    np.testing.assert_allclose(np.asarray(f(reactant.to_rarray(a), reactant.to_rarray(b))), a @ b, rtol=1e-12)
    ct = rng.standard_normal((a @ b).shape)
    g = reactant.compile(lambda x, y: reactant.gradient(lambda x, y: np.sum((x @ y) * ct), x, y, argnums=(0, 1)))
    ga, gb = g(reactant.to_rarray(a), reactant.to_rarray(b))
    jax.config.update("jax_enable_x64", True)
    ja, jb = jax.grad(lambda x, y: jnp.sum((x @ y) * ct), argnums=(0, 1))(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(ga), np.asarray(ja), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), np.asarray(jb), rtol=1e-10, atol=1e-12)
