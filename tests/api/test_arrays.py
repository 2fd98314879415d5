"""to_rarray over pytrees, ConcreteRArray/ConcreteRNumber attributes and host conversion."""

import dataclasses
from collections import namedtuple

import jax
import ml_dtypes
import numpy as np
import pytest

import reactant

Pair = namedtuple("Pair", "a b")


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: np.ndarray
    name: str = "layer"


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "int64", "uint8", "uint32", "float16", "float32",
                                   "float64", "complex64", "complex128", ml_dtypes.bfloat16])
def test_roundtrip_dtypes(dtype):
    x = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    r = reactant.to_rarray(x)
    assert isinstance(r, reactant.ConcreteRArray)
    assert r.shape == (2, 3) and r.dtype == np.dtype(dtype) and r.ndim == 2 and r.size == 6
    np.testing.assert_array_equal(np.asarray(r), x)
    np.testing.assert_array_equal(r.to_numpy(), x)
    assert r.to_numpy().flags.writeable
    assert r.device == reactant.devices()[0]


def test_pytrees_keep_structure():
    tree = {"p": Params(np.ones((2, 2)), np.zeros(2)), "pair": Pair(np.arange(3), [np.float32(1.5), 2.0]),
            "none": None, "tup": (np.eye(2), "tag", 3)}
    r = reactant.to_rarray(tree)
    assert isinstance(r["p"], Params) and r["p"].name == "layer"
    assert isinstance(r["p"].w, reactant.ConcreteRArray)
    assert isinstance(r["pair"], Pair) and isinstance(r["pair"].a, reactant.ConcreteRArray)
    assert isinstance(r["pair"].b[0], reactant.ConcreteRNumber)  # NumPy scalars become numbers
    assert r["pair"].b[1] == 2.0  # Python scalars stay static unless tracked
    assert r["none"] is None and r["tup"][1] == "tag" and r["tup"][2] == 3
    t = reactant.to_rarray(tree, track_numbers=True)
    assert isinstance(t["pair"].b[1], reactant.ConcreteRNumber) and isinstance(t["tup"][2], reactant.ConcreteRNumber)
    assert float(t["pair"].b[1]) == 2.0 and int(t["tup"][2]) == 3


def test_numbers_and_printing():
    n = reactant.to_rarray(3.5, track_numbers=True)
    assert isinstance(n, reactant.ConcreteRNumber) and n.shape == () and float(n) == 3.5
    assert n.dtype == np.float64
    x = reactant.to_rarray(np.array([[1.0, 2.0]], np.float32))
    assert "ConcreteRArray" in repr(x) and "1." in repr(x) and "float32" in repr(x)
    assert str(x) == str(np.array([[1.0, 2.0]], np.float32))
    assert x.tolist() == [[1.0, 2.0]]


def test_dlpack_and_jax_interop():
    x = reactant.to_rarray(np.arange(4.0, dtype=np.float32))
    y = np.from_dlpack(x)
    np.testing.assert_array_equal(y, np.arange(4.0))
    j = jax.numpy.asarray(x.buffer)
    np.testing.assert_array_equal(np.asarray(j), np.arange(4.0))
    # to_rarray of a jax array copies: later donation cannot invalidate the caller's array
    a = jax.numpy.arange(3.0)
    r = reactant.to_rarray(a)
    assert r.buffer is not a


def test_devices_and_explicit_device():
    devs = reactant.devices()
    assert len(devs) == 8 and devs[0].platform == "cpu"
    x = reactant.to_rarray(np.ones(3), device=devs[3])
    assert x.device == devs[3]
    f = reactant.compile(lambda a: a * 2)
    y = f(x)
    assert y.device == devs[3]
    np.testing.assert_array_equal(np.asarray(y), 2 * np.ones(3))


def test_unsupported_dtype_is_a_clear_error():
    with pytest.raises(reactant.DTypeError, match="unsupported dtype"):
        reactant.to_rarray(np.array(["a", "b"]))
    with pytest.raises(reactant.ReactantError):
        reactant.to_rarray(np.array([object(), 1], dtype=object))
