"""numpy.fft traced (compiled and eager) vs NumPy: values and dtypes for every transform with
n/s, axes and norm, fftfreq/rfftfreq/fftshift/ifftshift, clear errors, and derivatives
(reverse and forward mode) against jax.grad / jax.jvp of the jax.numpy.fft equivalents."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from npcheck import assert_same, check, rand

import reactant
from reactant.tracing.errors import ConcretizationError, DTypeError, OptionError

ALL = ["float32", "float64", "complex64", "complex128"]
REAL = ["float32", "float64"]
NORMS = [None, "backward", "ortho", "forward"]


def _tol(dtype):
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def _x(shape, dtype, seed=0):
    return rand(np.random.default_rng(seed), shape, dtype)


# -- 1-D complex transforms ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL + ["int32"])
@pytest.mark.parametrize("func", [np.fft.fft, np.fft.ifft])
def test_fft_ifft(func, dtype):
    x, t = _x((3, 6), dtype), _tol(dtype if dtype != "int32" else "float64")
    check(lambda a: (func(a), func(a, n=4), func(a, n=9), func(a, axis=0), func(a, 5, 0, "ortho"),
                     func(a, norm="forward"), func(a, norm="backward")), x, rtol=t, atol=t)


# -- real-to-complex ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", REAL + ["int64"])
@pytest.mark.parametrize("func", [np.fft.rfft, np.fft.ihfft])
def test_rfft_ihfft(func, dtype):
    x, t = _x((4, 7), dtype), _tol(dtype if dtype != "int64" else "float64")
    check(lambda a: tuple(func(a, n=n, axis=ax, norm=nm) for n in (None, 4, 5, 10) for ax in (-1, 0)
                          for nm in (None, "ortho", "forward")), x, rtol=t, atol=t)


# -- complex-to-real: even and odd output lengths ---------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("func", [np.fft.irfft, np.fft.hfft])
def test_irfft_hfft(func, dtype):
    # a spectrum that is not Hermitian-consistent: the imaginary parts NumPy ignores must be
    # ignored here too
    x, t = _x((3, 5), dtype), _tol(dtype)
    check(lambda a: tuple(func(a, n=n, axis=ax, norm=nm) for n in (None, 7, 8, 3, 12) for ax in (-1, 0)
                          for nm in (None, "ortho", "forward")), x, rtol=t, atol=t)


# -- 2-D and n-D ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
def test_fft2_fftn(dtype):
    x, t = _x((3, 4, 5), dtype), _tol(dtype)
    F = np.fft
    check(lambda a: (F.fft2(a), F.ifft2(a), F.fftn(a), F.ifftn(a), F.fft2(a, s=(2, 7)),
                     F.fft2(a, axes=(0, 2)), F.fft2(a, axes=(2, 0), norm="ortho"),
                     F.ifft2(a, s=(6, 3), axes=(1, 0), norm="forward"), F.fftn(a, axes=(1,)),
                     F.fftn(a, s=(4, 3), axes=(0, 1)), F.ifftn(a, s=(2, -1, 8), axes=(0, 1, 2), norm="ortho"),
                     F.fftn(a, axes=(2, 2)), F.ifftn(a, s=(4, 6), axes=(0, 0))), x, rtol=t, atol=t)


@pytest.mark.parametrize("dtype", REAL)
def test_rfft2_rfftn(dtype):
    x, t = _x((4, 3, 6), dtype), _tol(dtype)
    F = np.fft
    check(lambda a: (F.rfft2(a), F.rfftn(a), F.rfftn(a, axes=(2, 0)), F.rfftn(a, axes=(1,), norm="ortho"),
                     F.rfft2(a, s=(5, 5), axes=(0, 1)), F.rfftn(a, s=(2, 3, 7), axes=(1, 0, 2), norm="forward"),
                     F.rfftn(a, axes=(1, 2, 1))), x, rtol=t, atol=t)


@pytest.mark.parametrize("dtype", ALL)
def test_irfft2_irfftn(dtype):
    x, t = _x((4, 3, 5), dtype), _tol(dtype)
    F = np.fft
    check(lambda a: (F.irfft2(a), F.irfftn(a), F.irfftn(a, axes=(2, 0)), F.irfftn(a, s=(4, 9), axes=(0, 1)),
                     F.irfft2(a, s=(3, 8), axes=(2, 1), norm="ortho"),
                     F.irfftn(a, s=(5, 2, 7), axes=(1, 2, 0), norm="forward"), F.irfftn(a, s=(-1, 3), axes=(0, 2)),
                     F.irfftn(a, axes=(0, 1, 0))), x, rtol=t, atol=t)


def test_more_than_three_axes():
    """stablehlo.fft does at most 3 trailing dims: 4 and 5 axes are split."""
    x, z = _x((2, 3, 2, 4, 5), "float64"), _x((3, 2, 2, 3, 4), "complex128")
    F = np.fft
    check(lambda a: (F.fftn(a), F.ifftn(a, norm="ortho"), F.rfftn(a), F.rfftn(a, axes=(4, 0, 2, 1)),
                     F.fftn(a, s=(3, 2, 5, 2), axes=(3, 0, 1, 4))), x, rtol=1e-10, atol=1e-10)
    check(lambda a: (F.irfftn(a), F.irfftn(a, s=(2, 3, 4, 7), axes=(1, 3, 0, 4)), F.ifftn(a, axes=(4, 3, 2, 1))),
          z, rtol=1e-10, atol=1e-10)


def test_optimized_and_small_dtypes():
    """O2 keeps the transforms; float16/int/bool promote as NumPy 2 does (float16 -> complex64,
    irfft of float16 -> float16)."""
    x = _x((4, 6), "float32")
    check(lambda a: (np.fft.rfft(np.fft.fft(a).real * 2), np.fft.irfft2(np.fft.rfft2(a), s=(4, 6))), x,
          optimize="O2")
    h = _x((4, 6), "float16")
    check(lambda a: (np.fft.fft(a), np.fft.rfft(a), np.fft.irfft(a), np.fft.hfft(a), np.fft.rfftn(a)), h,
          rtol=2e-3, atol=2e-3)
    for dt in ("int8", "uint16", "bool"):
        check(lambda a: (np.fft.fft(a), np.fft.rfft(a), np.fft.irfft(a), np.fft.fftn(a)), _x((3, 4), dt))


def test_eager():
    """Outside compiled functions np.fft on device arrays runs eagerly."""
    x, z = _x((3, 8), "float32"), _x((2, 5), "complex128")
    xr, zr = reactant.to_rarray(x), reactant.to_rarray(z)
    for got, want in [(np.fft.rfft(xr, norm="ortho"), np.fft.rfft(x, norm="ortho")),
                      (np.fft.fft2(xr, s=(4, 4)), np.fft.fft2(x, s=(4, 4))),
                      (np.fft.irfft(zr, n=7), np.fft.irfft(z, n=7)),
                      (np.fft.ihfft(xr, axis=0), np.fft.ihfft(x, axis=0)),
                      (np.fft.fftshift(xr), np.fft.fftshift(x))]:
        assert isinstance(got, reactant.ConcreteRArray)
        assert_same(np.asarray(got), want, rtol=1e-4, atol=1e-4)


# -- frequencies and shifts -----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5,), (4, 7), (2, 3, 6)])
def test_shifts(shape):
    x = _x(shape, "float32")
    F = np.fft
    check(lambda a: (F.fftshift(a), F.ifftshift(a), F.fftshift(a, axes=0), F.ifftshift(a, axes=-1),
                     F.fftshift(a, axes=tuple(range(a.ndim))[::-1]), F.ifftshift(F.fftshift(a))), x)


def test_fftfreq_in_compiled_code():
    x = _x((8,), "float64")
    F = np.fft
    check(lambda a: (a * F.fftfreq(8), a * F.fftfreq(8, d=0.25), a[:5] * F.rfftfreq(8, 0.1),
                     a[:7] + F.fftfreq(7, 2.0), a[:4] + F.rfftfreq(7),
                     F.fftshift(F.fftfreq(8)) * a, F.ifftshift(a) - F.ifftshift(F.fftfreq(8, 3.0))), x)
    # a traced spacing d (a runtime number): NumPy's own fftfreq computes with it
    f = reactant.compile(lambda a, d: (F.fftfreq(8, d) * a, F.rfftfreq(8, d)), track_numbers=True)
    got = f(reactant.to_rarray(x), 0.5)
    assert_same(np.asarray(got[0]), F.fftfreq(8, 0.5) * x)
    assert_same(np.asarray(got[1]), F.rfftfreq(8, 0.5))
    got = f(reactant.to_rarray(x), 0.2)
    assert_same(np.asarray(got[1]), F.rfftfreq(8, 0.2))
    assert f.compile_count == 1


# -- errors -----------------------------------------------------------------------------------------
def test_errors_name_the_line():
    x = reactant.to_rarray(_x((4, 6), "float32"))
    z = reactant.to_rarray(_x((4, 6), "complex64"))
    with pytest.raises(DTypeError, match="rfft needs a real input") as e:
        reactant.compile(lambda a: np.fft.rfft(a))(z)
    assert "np.fft.rfft(a)" in str(e.value) and isinstance(e.value, TypeError)
    with pytest.raises(OptionError, match="invalid norm value 'bad'") as e:
        reactant.compile(lambda a: np.fft.fft(a, norm="bad"))(x)
    assert "test_fft.py" in str(e.value) and isinstance(e.value, ValueError)
    with pytest.raises(OptionError, match=r"invalid number of FFT data points \(0\)"):
        reactant.compile(lambda a: np.fft.fft(a, n=0))(x)
    with pytest.raises(OptionError, match=r"\(0\)"):
        reactant.compile(lambda a: np.fft.irfft(a[:, :1]))(z)
    with pytest.raises(OptionError, match="different lengths"):
        reactant.compile(lambda a: np.fft.fftn(a, s=(2, 3), axes=(0,)))(x)
    with pytest.raises(reactant.IndexError, match="out of bounds"):
        reactant.compile(lambda a: np.fft.fft(a, axis=2))(x)
    with pytest.raises(ConcretizationError, match="n is a traced value"):
        reactant.compile(lambda a, n: np.fft.fft(a, n=n), track_numbers=True)(x, 4)


def test_deprecated_s_without_axes_matches_numpy():
    x = _x((3, 4, 5), "float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        check(lambda a: (np.fft.fftn(a, s=(3, 6)), np.fft.irfftn(a, s=(2, None))), x)


# -- derivatives ------------------------------------------------------------------------------------
_W = np.random.default_rng(7).standard_normal(16)

# real-valued losses: (NumPy version, jax version, input shape); w breaks symmetries
LOSSES = {
    "rfft": (lambda a: np.sum(np.abs(np.fft.rfft(a * a, n=10, norm="ortho")) ** 2 * _W[:6]),
             lambda a: jnp.sum(jnp.abs(jnp.fft.rfft(a * a, n=10, norm="ortho")) ** 2 * _W[:6]), (3, 8)),
    "irfft_even": (lambda a: np.sum(np.fft.irfft(np.fft.rfft(a) * np.arange(1.0, 6.0), n=8) ** 3 * _W[:8]),
                   lambda a: jnp.sum(jnp.fft.irfft(jnp.fft.rfft(a) * jnp.arange(1.0, 6.0), n=8) ** 3 * _W[:8]),
                   (2, 8)),
    "irfft_odd": (lambda a: np.sum(np.sin(np.fft.irfft(a + 1j * a[::-1], n=9, axis=0, norm="forward")) * _W[:3]),
                  lambda a: jnp.sum(jnp.sin(jnp.fft.irfft(a + 1j * a[::-1], n=9, axis=0, norm="forward")) * _W[:3]),
                  (5, 3)),
    "fft": (lambda a: np.sum(np.real(np.fft.fft(a, n=7) * np.conj(np.fft.fft(a * _W[:6], n=7)))),
            lambda a: jnp.sum(jnp.real(jnp.fft.fft(a, n=7) * jnp.conj(jnp.fft.fft(a * _W[:6], n=7)))), (2, 6)),
    "ifft": (lambda a: np.sum(np.imag(np.fft.ifft(np.exp(1j * a), axis=0, norm="ortho")) * _W[:4]),
             lambda a: jnp.sum(jnp.imag(jnp.fft.ifft(jnp.exp(1j * a), axis=0, norm="ortho")) * _W[:4]), (3, 4)),
    "fft2": (lambda a: np.sum(np.abs(np.fft.fft2(np.tanh(a), s=(2, 5))) * _W[:5]),
             lambda a: jnp.sum(jnp.abs(jnp.fft.fft2(jnp.tanh(a), s=(2, 5))) * _W[:5]), (3, 4)),
    "rfftn": (lambda a: np.sum(np.abs(np.fft.rfftn(a, axes=(2, 0, 1))) ** 2 * _W[:3]),
              lambda a: jnp.sum(jnp.abs(jnp.fft.rfftn(a, axes=(2, 0, 1))) ** 2 * _W[:3]), (2, 4, 3)),
    "irfftn": (lambda a: np.sum(np.fft.irfftn(a * 1j + a ** 2, s=(3, 6), axes=(0, 1), norm="ortho") * _W[:6]),
               lambda a: jnp.sum(jnp.fft.irfftn(a * 1j + a ** 2, s=(3, 6), axes=(0, 1), norm="ortho") * _W[:6]),
               (3, 4)),
    "hfft_ihfft": (lambda a: np.sum(np.fft.hfft(a, n=6) ** 2 * _W[:6]) + np.sum(np.abs(np.fft.ihfft(a, n=3)) * _W[:2]),
                   lambda a: jnp.sum(jnp.fft.hfft(a, n=6) ** 2 * _W[:6]) + jnp.sum(jnp.abs(jnp.fft.ihfft(a, n=3)) * _W[:2]),
                   (2, 4)),
    "fftn_4axes": (lambda a: np.sum(np.real(np.fft.fftn(a)) * np.imag(np.fft.ifftn(a * a)) * _W[:3]),
                   lambda a: jnp.sum(jnp.real(jnp.fft.fftn(a)) * jnp.imag(jnp.fft.ifftn(a * a)) * _W[:3]), (2, 3, 2, 3)),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_gradients_vs_jax(name):
    f_np, f_jax, shape = LOSSES[name]
    x = _x(shape, "float64", seed=3)
    t = _x(shape, "float64", seed=4)
    with jax.enable_x64(True):  # (one jitted program for both: op-by-op dispatch compiles each op)
        g_ref, (v_ref, jv_ref) = jax.jit(lambda a, b: (jax.grad(f_jax)(a), jax.jvp(f_jax, (a,), (b,))))(x, t)
    # (reverse and forward mode in one compiled program)
    g, (v, jv) = reactant.compile(lambda a, b: (reactant.gradient(f_np, a), reactant.jvp(f_np, (a,), (b,))))(
        *reactant.to_rarray((x, t)))
    np.testing.assert_allclose(np.asarray(g), np.asarray(g_ref), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(float(np.asarray(v)), float(v_ref), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(float(np.asarray(jv)), float(jv_ref), rtol=1e-9, atol=1e-9)


def test_gradient_complex_input_and_eager():
    """A complex input follows JAX's convention for complex gradients; the eager gradient
    (outside compiled code) agrees."""
    def f_np(z):
        return np.sum(np.abs(np.fft.fft(z * z, norm="forward")) ** 2) + np.sum(np.real(np.fft.ifft2(z)) * _W[:5])

    def f_jax(z):
        return jnp.sum(jnp.abs(jnp.fft.fft(z * z, norm="forward")) ** 2) + jnp.sum(jnp.real(jnp.fft.ifft2(z)) * _W[:5])

    z = _x((3, 5), "complex128", seed=5)
    with jax.enable_x64(True):
        ref = jax.grad(f_jax)(z)
    got = reactant.gradient(f_np, reactant.to_rarray(z))
    np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-9, atol=1e-9)
    x = _x((4, 6), "float32", seed=6)
    got = reactant.gradient(lambda a: np.sum(np.fft.irfft(np.fft.rfft(a) * 2.0, n=6) ** 2), reactant.to_rarray(x))
    np.testing.assert_allclose(np.asarray(got), 8 * x, rtol=1e-4, atol=1e-4)  # irfft(rfft(a)) == a
