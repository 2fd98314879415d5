"""Bad input gets a clear error naming the user's line, shapes and dtypes, with a hint, and
leaves no state behind (cache, the caller's arrays)."""

import numpy as np
import pytest

import reactant


def _arrays():
    return reactant.to_rarray(np.ones((4, 3), np.float32)), reactant.to_rarray(np.ones((5, 2), np.float32))


def test_shape_mismatch_in_elementwise_op():
    x, y = _arrays()

    @reactant.compile
    def f(a, b):
        a += 1  # a pending in-place update that must not be written back
        return a + b  # line under test

    with pytest.raises(reactant.ShapeError) as e:
        f(x, y)
    msg = str(e.value)
    assert "(4, 3)" in msg and "(5, 2)" in msg and "broadcast" in msg
    assert "test_errors.py" in msg and "return a + b  # line under test" in msg
    assert f.compile_count == 0 and not f._cache
    np.testing.assert_array_equal(np.asarray(x), np.ones((4, 3)))  # caller's array untouched


@pytest.mark.parametrize("what,fn", [
    ("float32[]", lambda a: bool(a[0, 0])),
    ("float32[]", lambda a: float(a.sum())),
    ("float32[]", lambda a: int(a[0, 0])),
    ("float32[]", lambda a: [a for _ in range(3) if a[0, 0]]),
])
def test_python_control_flow_on_traced_values(what, fn):
    x, _ = _arrays()
    f = reactant.compile(fn)
    with pytest.raises(reactant.ConcretizationError) as e:
        f(x)
    msg = str(e.value)
    assert "traced" in msg and what in msg
    assert "reactant.cond" in msg and "track_numbers" in msg  # the hint
    assert "test_errors.py" in msg
    assert f.compile_count == 0


def test_unsupported_numpy_function_is_named():
    x, _ = _arrays()

    @reactant.compile
    def f(a):
        return np.roots(a)

    with pytest.raises(reactant.UnsupportedError, match=r"numpy\.roots has no traced implementation") as e:
        f(x)
    assert "return np.roots(a)" in str(e.value)


def test_unsupported_dtype_in_trace():
    x, _ = _arrays()
    f = reactant.compile(lambda a: a.astype(np.str_))
    with pytest.raises(reactant.DTypeError, match="unsupported dtype"):
        f(x)
    g = reactant.compile(lambda a: np.sqrt(a.astype(np.int32) > 0) if False else np.bitwise_and(a, 1))
    with pytest.raises(TypeError, match="bitwise_and"):
        g(x)


def test_non_array_argument_that_cannot_be_a_constant():
    x, _ = _arrays()
    f = reactant.compile(lambda a, opts: a * opts["k"][0])
    with pytest.raises(reactant.ArgumentError, match="cannot be passed to a compiled function"):
        f(x, {"k": [set([1])]})
    assert f.compile_count == 0


def test_object_array_from_host_list_in_trace():
    x, _ = _arrays()

    @reactant.compile
    def f(a):
        return a * np.array(["a", "b", "c"])

    with pytest.raises(reactant.ReactantError):
        f(x)


@pytest.mark.parametrize("fn", [np.nonzero, np.unique, np.argwhere, np.flatnonzero])
def test_data_dependent_shape_functions(fn):
    x, _ = _arrays()
    f = reactant.compile(lambda a: fn(a))
    with pytest.raises(reactant.IndexError, match="depends on the data"):
        f(x)


def test_arrays_on_different_devices():
    d = reactant.devices()
    a = reactant.to_rarray(np.ones(2), device=d[0])
    b = reactant.to_rarray(np.ones(2), device=d[1])
    with pytest.raises(reactant.ArgumentError, match="different devices"):
        reactant.compile(lambda p, q: p + q)(a, b)


def test_error_leaves_cache_usable():
    x, y = _arrays()
    f = reactant.compile(lambda a, b: a @ b)
    with pytest.raises(reactant.ShapeError, match="not aligned"):
        f(x, y)
    z = reactant.to_rarray(np.ones((3, 2), np.float32))
    np.testing.assert_allclose(np.asarray(f(x, z)), np.full((4, 2), 3.0))
    assert f.compile_count == 1


def test_function_without_source_fails_with_a_note_saying_why():
    # a function typed at the prompt (here: compiled from a string) has no source to convert: a
    # write of a traced value into a NumPy array then fails in NumPy, and the error says why
    ns = {"np": np}
    exec(compile("def f(x):\n    out = np.zeros(4)\n    out[1] = x[0]\n    return out\n", "<stdin>", "exec"), ns)
    with pytest.raises(ValueError) as e:
        reactant.compile(ns["f"])(reactant.to_rarray(np.ones(4)))
    notes = "".join(getattr(e.value, "__notes__", []))
    assert "reactant ran f as written" in notes and "define the function in a file" in notes
