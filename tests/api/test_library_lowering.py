"""The last step before XLA: decomposition markers and LAPACK-typed ``cholesky`` /
``triangular_solve`` ops are replaced by the platform's library calls (jax's own lowering).
Every option of the two StableHLO ops gives the same values as XLA's own expansion of them."""

import itertools

import jax
import jax.extend
import jaxlib.xla_client as xc
import numpy as np
import pytest
from jax import lax

from reactant.decompositions import lower_decompositions
from reactant.ir.context import parse_module, to_text

R = np.random.default_rng(0)


def _stablehlo_text(f, *args) -> str:
    """``f`` lowered for TPU, where jax emits the StableHLO ops instead of LAPACK calls."""
    with jax.enable_x64(True):
        return jax.jit(f).trace(*args).lower(lowering_platforms=("tpu",)).as_text()


def _run(text: str, *args):
    with jax.enable_x64(True):
        be = jax.extend.backend.get_backend()
        dev = be.devices()[0]
        exe = be.compile_and_load(text, xc.DeviceList((dev,)), xc.CompileOptions())
        return [np.asarray(o) for o in exe.execute([jax.device_put(a, dev) for a in args])]


def _both(f, *args):
    text = _stablehlo_text(f, *args)
    m = parse_module(text)
    replaced = lower_decompositions(m)
    lowered = to_text(m)
    assert replaced >= 1 and "lapack_" in lowered and "stablehlo.triangular_solve" not in lowered \
        and "stablehlo.cholesky" not in lowered
    return _run(text, *args), _run(lowered, *args)


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
@pytest.mark.parametrize("left,lower,trans,unit",
                         [c for c in itertools.product((True, False), (True, False), ("N", "T", "C"), (False, True))])
def test_triangular_solve_options(left, lower, trans, unit, dtype):
    a = (R.standard_normal((2, 3, 3)) + 4 * np.eye(3)).astype(dtype)
    b = R.standard_normal((2, 3, 4) if left else (2, 4, 3)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * R.standard_normal(a.shape) * 0.3
        b = b + 1j * R.standard_normal(b.shape)
    if trans == "C" and np.dtype(dtype).kind != "c":
        pytest.skip("the adjoint of a real matrix is its transpose")

    def f(a, b):
        return lax.linalg.triangular_solve(a, b, left_side=left, lower=lower, transpose_a=trans != "N",
                                           conjugate_a=trans == "C", unit_diagonal=unit)
    xla, lapack = _both(f, a, b)
    tol = 1e-4 if dtype == "float32" else 1e-11
    np.testing.assert_allclose(lapack[0], xla[0], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
def test_cholesky_reads_the_lower_triangle(dtype):
    x = R.standard_normal((2, 4, 4)).astype(dtype)
    s = (x @ np.conj(np.swapaxes(x, -1, -2)) + 4 * np.eye(4)).astype(dtype)
    s = s + np.triu(R.standard_normal((4, 4)), 1).astype(dtype)  # garbage in the unread triangle
    xla, lapack = _both(lambda a: lax.linalg.cholesky(a, symmetrize_input=False), s)
    tol = 1e-4 if dtype == "complex64" else 1e-11
    np.testing.assert_allclose(np.tril(lapack[0]), np.tril(xla[0]), rtol=tol, atol=tol)


def test_module_without_library_ops_is_untouched():
    text = _stablehlo_text(lambda a: a * 2.0, np.ones(3))
    m = parse_module(text)
    assert lower_decompositions(m) == 0 and to_text(m) == to_text(parse_module(text))
