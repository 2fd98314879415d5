"""The source converter rebuilds functions from their source text: nested lambdas keep their
own columns, and defaults/annotations are the ones evaluated where the function was defined."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import reactant

X = np.arange(6.0).reshape(2, 3)


def test_lambda_inside_a_converted_lambda():
    # the inner lambda's source is found by column: it must be read from the file's columns
    f = lambda x: reactant.vmap(lambda a, p=2: a ** p)(x)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(reactant.compile(f)(X)), X ** 2)
    g = lambda x: (lambda y: np.sin(y) * 2)(x) + (lambda z: z[0])(x)  # noqa: E731
    np.testing.assert_allclose(np.asarray(reactant.compile(g)(X)), g(X), rtol=1e-13)


def _def_with_loop_default(x):
    out = x * 0
    for i in range(3):
        def g(a, k=i):  # the default is the loop's i at definition time
            return a * k + x[0]
        out = out + g(x)
    return out


def _def_with_annotation(x):
    def g(a: "NotDefinedAnywhere", *, k: int = 2) -> "AlsoUndefined":  # noqa: F821
        return a * k if a[0] > -1 else a
    return g(x)


@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
def test_nested_def_defaults_are_the_definition_time_values(loops):
    x = np.arange(3.0)
    np.testing.assert_array_equal(np.asarray(reactant.compile(_def_with_loop_default, loops=loops)(x)),
                                  _def_with_loop_default(x))
    np.testing.assert_array_equal(np.asarray(reactant.compile(_def_with_annotation, loops=loops)(x)),
                                  _def_with_annotation(x))


def test_a_called_function_is_converted_once(monkeypatch):
    # a user function called from the compiled one is converted, and the converted function is
    # what the trace of the call runs: it is not converted (its source read and rewritten) again
    from reactant.tracing.autograph import converter

    calls = []
    real = converter._convert
    monkeypatch.setattr(converter, "_convert", lambda fn: calls.append(fn.__qualname__) or real(fn))

    def helper_once(x):
        for i in range(3):
            x = x * 2.0 if i else x + 1.0
        return x

    def outer_once(x):
        return helper_once(x) + helper_once(x * 3.0)

    x = np.arange(4.0)
    np.testing.assert_allclose(np.asarray(reactant.compile(outer_once)(reactant.to_rarray(x))), outer_once(x))
    assert sorted(calls) == sorted(["test_a_called_function_is_converted_once.<locals>.outer_once",
                                    "test_a_called_function_is_converted_once.<locals>.helper_once"]), calls


def _twice(f):
    @functools.wraps(f)
    def wrapper(*a):
        out = f(*a)
        if a[0].shape[0] > 2:  # (Python control flow in the wrapper: it is converted too)
            out = out * 2.0
        return out
    return wrapper


@_twice
def _decorated(x):
    return np.sin(x) + 1.0


def _closing_bracket_last(x):
    return np.stack([
        x * 2.0,
        x + 1.0,
    ]
    )


def test_functools_wraps_wrappers_keep_their_own_code():
    # the wrapper is converted from its own source, not from the function it wraps (which
    # ``inspect.getsource`` gives it through ``__wrapped__``: the doubling was dropped)
    def main(x):
        return _decorated(x) + _closing_bracket_last(x).sum(axis=0)

    x = np.arange(4.0)
    for loops in ("auto", "keep", "unroll"):
        np.testing.assert_allclose(np.asarray(reactant.compile(main, loops=loops)(reactant.to_rarray(x))), main(x),
                                   rtol=1e-14)


def test_a_reloaded_module_is_converted_from_its_new_source(tmp_path, monkeypatch):
    import importlib
    import os
    import sys
    import time

    path = tmp_path / "reloaded_kernel_mod.py"

    def write(text, stamp):
        path.write_text(text)
        os.utime(path, (stamp, stamp))  # (a different modification time: the file changed)

    write("import numpy as np\ndef f(x):\n    if x.shape[0] > 1:\n        x = np.sin(x)\n    return x * 2.0\n", time.time())
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("reloaded_kernel_mod")
    x = np.arange(3.0)
    np.testing.assert_allclose(np.asarray(reactant.compile(mod.f)(reactant.to_rarray(x))), mod.f(x), rtol=1e-14)
    write("import numpy as np\ndef f(x):\n    if x.shape[0] > 1:\n        x = np.cos(x)\n    return x * 3.0\n",
          time.time() + 10)
    mod = importlib.reload(mod)
    try:
        np.testing.assert_allclose(np.asarray(reactant.compile(mod.f)(reactant.to_rarray(x))), mod.f(x), rtol=1e-14)
    finally:
        sys.modules.pop("reloaded_kernel_mod", None)
