"""A fast sample of ``reactant.numpy`` (the Array API namespace) against NumPy, eagerly on
device arrays and inside compiled functions. The full standard test suite runs in
``benchmarks/array_api_conformance.sh`` (see docs/array_api.md)."""

import inspect

import numpy as np
import pytest

import reactant
import reactant.numpy as xp


def _close(got, want):
    got_np = np.asarray(got)
    assert got_np.dtype == np.asarray(want).dtype, (got_np.dtype, np.asarray(want).dtype)
    np.testing.assert_allclose(got_np, want, rtol=1e-6, atol=1e-12)


def test_namespace_of_device_and_traced_arrays():
    x = xp.asarray([1.0, 2.0])
    assert isinstance(x, reactant.ConcreteRArray)
    assert x.__array_namespace__() is xp
    assert x.__array_namespace__(api_version="2023.12") is xp
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="1999.01")
    seen = []

    @reactant.compile
    def f(t):
        seen.append(t.__array_namespace__())
        return t

    f(x)
    assert seen == [xp]
    assert xp.__array_api_version__ == "2024.12"


def test_dtypes_and_inspection():
    assert xp.asarray([1, 2]).dtype == xp.int64
    assert xp.asarray(1.5).dtype == xp.float64
    assert xp.asarray(True).dtype == xp.bool
    assert xp.result_type(xp.int8, xp.int16) == xp.int16
    assert xp.result_type(xp.asarray([1], dtype=xp.uint8), 3) == xp.uint8
    assert xp.can_cast(xp.int8, xp.int32) and not xp.can_cast(xp.float64, xp.float32)
    assert not xp.can_cast(xp.bool, xp.int8)
    assert xp.isdtype(xp.uint16, "integral") and not xp.isdtype(xp.float32, ("bool", "integral"))
    fi = xp.finfo(xp.complex64)
    assert type(fi.eps) is float and fi.dtype == xp.float32 and fi.bits == 32
    assert xp.iinfo(xp.asarray([1], dtype=xp.int16)).max == 32767
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["indexing"] == xp.int64
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert info.default_device() in info.devices()
    with pytest.raises(TypeError):
        xp.astype(xp.asarray([1j]), xp.float64)
    # beyond the standard: the half-precision dtypes device arrays hold
    assert xp.zeros(2, dtype=np.float16).dtype == np.float16 and xp.isdtype(np.float16, "real floating")
    with pytest.raises(TypeError):
        xp.asarray(["text"])


def test_signatures_follow_the_standard():
    assert str(inspect.signature(xp.add)) == "(x1, x2, /)"
    assert list(inspect.signature(xp.sort).parameters) == ["x", "axis", "descending", "stable"]
    assert "ord" in inspect.signature(xp.linalg.vector_norm).parameters


def test_creation_eager_and_traced():
    _close(xp.arange(1, 7, 2), np.arange(1, 7, 2))
    _close(xp.full((2, 2), 3), np.full((2, 2), 3))
    _close(xp.eye(3, 4, k=1, dtype=xp.float32), np.eye(3, 4, k=1, dtype=np.float32))
    _close(xp.linspace(0, 1, 5, endpoint=False), np.linspace(0, 1, 5, endpoint=False))
    a, b = xp.meshgrid(xp.arange(2), xp.arange(3))
    A, B = np.meshgrid(np.arange(2), np.arange(3))
    _close(a, A), _close(b, B)
    assert isinstance(xp.zeros(3), reactant.ConcreteRArray)

    @reactant.compile
    def f(x):
        return x + xp.ones(x.shape, dtype=x.dtype) + xp.full_like(x, 2.0), xp.asarray([1.0, 2.0])

    r, c = f(xp.zeros((2,)))
    _close(r, np.full(2, 3.0)), _close(c, np.array([1.0, 2.0]))


def test_asarray_copy_semantics():
    x = xp.asarray([1, 2, 3])
    assert xp.asarray(x) is x
    y = xp.asarray(x, copy=True)
    y[0] = 10
    assert int(x[0]) == 1 and int(y[0]) == 10
    with pytest.raises(ValueError):
        xp.asarray(np.ones(2), copy=False)


SAMPLE = [
    ("add", lambda m, a, b: m.add(a, b), lambda a, b: a + b),
    ("atan2", lambda m, a, b: m.atan2(a, b), np.arctan2),
    ("pow scalar", lambda m, a, b: m.pow(a, 2), lambda a, b: a ** 2),
    ("floor float", lambda m, a, b: m.floor(a), np.floor),
    ("clip", lambda m, a, b: m.clip(a, min=-0.5, max=0.5), lambda a, b: np.clip(a, -0.5, 0.5)),
    ("sum axis", lambda m, a, b: m.sum(a, axis=(0,), keepdims=True), lambda a, b: a.sum(0, keepdims=True)),
    ("var correction", lambda m, a, b: m.var(a, correction=1), lambda a, b: a.var(ddof=1)),
    ("cumulative_sum", lambda m, a, b: m.cumulative_sum(a, axis=1, include_initial=True),
     lambda a, b: np.concatenate([np.zeros((3, 1)), np.cumsum(a, 1)], 1)),
    ("permute_dims", lambda m, a, b: m.permute_dims(a, (-1, 0)), lambda a, b: a.T),
    ("concat None", lambda m, a, b: m.concat([a, b], axis=None), lambda a, b: np.concatenate([a.ravel(), b.ravel()])),
    ("matrix_transpose", lambda m, a, b: m.matrix_transpose(a), lambda a, b: a.T),
    ("vecdot", lambda m, a, b: m.vecdot(a, b), lambda a, b: (a * b).sum(-1)),
    ("sort descending", lambda m, a, b: m.sort(a, axis=0, descending=True), lambda a, b: -np.sort(-a, axis=0)),
    ("where", lambda m, a, b: m.where(a > 0, a, 0.0), lambda a, b: np.where(a > 0, a, 0.0)),
    ("vector_norm", lambda m, a, b: m.linalg.vector_norm(a, axis=1, ord=3), lambda a, b: np.linalg.norm(a, 3, axis=1)),
    ("matrix_norm inf", lambda m, a, b: m.linalg.matrix_norm(a, ord=m.inf), lambda a, b: np.linalg.norm(a, np.inf)),
    ("fft", lambda m, a, b: m.fft.rfft(a, axis=0), lambda a, b: np.fft.rfft(a, axis=0)),
    ("unstack", lambda m, a, b: m.unstack(a, axis=1)[2], lambda a, b: a[:, 2]),
]


@pytest.mark.parametrize("name,ours,ref", SAMPLE, ids=[s[0] for s in SAMPLE])
def test_sample_eager_and_compiled(name, ours, ref):
    rng = np.random.default_rng(1)
    a_np, b_np = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    want = ref(a_np, b_np)
    a, b = xp.asarray(a_np), xp.asarray(b_np)
    _close(ours(xp, a, b), want)

    @reactant.compile
    def f(a, b):
        return ours(a.__array_namespace__(), a, b)

    _close(f(a, b), want)


def test_integer_rounding_keeps_dtype_and_argsort_is_stable():
    x = xp.asarray([3, 1, 3, 2], dtype=xp.int16)
    assert xp.round(x).dtype == xp.int16 and xp.ceil(x).dtype == xp.int16
    _close(xp.argsort(x, descending=True), np.array([0, 2, 3, 1]))
    _close(xp.argsort(x), np.array([1, 3, 0, 2]))


def test_data_dependent_functions_eager_only():
    x = xp.asarray([[0, 2], [3, 0]])
    rows, cols = xp.nonzero(x)
    _close(rows, np.array([0, 1])), _close(cols, np.array([1, 0]))
    u = xp.unique_inverse(xp.asarray([2.0, 1.0, 2.0]))
    _close(u.values, np.array([1.0, 2.0])), _close(u.inverse_indices, np.array([1, 0, 1]))

    @reactant.compile
    def f(x):
        return xp.unique_values(x)

    with pytest.raises(reactant.UnsupportedError, match="depends on the values"):
        f(x)


def test_device_and_dlpack():
    x = xp.asarray([1.0, 2.0])
    dev = xp.__array_namespace_info__().devices()[1]
    y = x.to_device(dev)
    assert y.device == dev and xp.zeros(2, device=dev).device == dev
    np.testing.assert_array_equal(np.from_dlpack(x), [1.0, 2.0])
    _close(xp.from_dlpack(np.arange(3.0)), np.arange(3.0))
    assert x.__dlpack_device__()[0] == 1  # kDLCPU
    with pytest.raises(ValueError):
        xp.asarray([1, 2]).mT
