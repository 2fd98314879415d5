"""Helpers for tests: run a function through @reactant.compile and compare with NumPy."""

from __future__ import annotations

import warnings

import numpy as np

import reactant


def run(fn, *args, optimize="O0", **kwargs):
    """Compile ``fn`` and call it on device copies of ``args``; NumPy results back."""
    cf = reactant.compile(fn, optimize=optimize)
    out = cf(*reactant.to_rarray(args), **kwargs)
    return to_numpy(out)


def to_numpy(out):
    if isinstance(out, reactant.ConcreteRArray):
        return np.asarray(out)
    if isinstance(out, (tuple, list)):
        return type(out)(to_numpy(o) for o in out)
    if isinstance(out, dict):
        return {k: to_numpy(v) for k, v in out.items()}
    return out


def reference(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)


def check(fn, *args, rtol=None, atol=None, dtype_exact=True, optimize="O0", **kwargs):
    """fn traced == fn on NumPy, values and dtypes."""
    want = reference(fn, *args, **kwargs)
    got = run(fn, *args, optimize=optimize, **kwargs)
    assert_same(got, want, rtol=rtol, atol=atol, dtype_exact=dtype_exact)
    return got


def assert_same(got, want, rtol=None, atol=None, dtype_exact=True):
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), (got, want)
        for k in want:
            assert_same(got[k], want[k], rtol, atol, dtype_exact)
        return
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol, atol, dtype_exact)
        return
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    if dtype_exact:
        assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    if rtol is None:
        rtol = _default_rtol(want.dtype)
    if atol is None:
        atol = rtol
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def _default_rtol(dt):
    if dt == np.float16 or str(dt) == "bfloat16":
        return 2e-2
    if dt in (np.float32, np.complex64):
        return 2e-5
    return 1e-11


def rand(rng, shape, dtype, *, low=-3.0, high=3.0, positive=False):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if (positive or dt.kind == "u") else -20
        return rng.integers(lo if not positive else 1, 20, size=shape).astype(dt)
    if dt.kind == "c":
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dt)
    lo = 0.1 if positive else low
    return rng.uniform(lo, high, shape).astype(dt)
