"""reduce / accumulate / reduceat / at for every binary ufunc with a traced implementation,
against NumPy (including NumPy's refusals)."""

import numpy as np
import pytest

import reactant
from reactant.tracing.numpy_api import FUNCTIONS

BINARY = sorted((f for f in FUNCTIONS if isinstance(f, np.ufunc) and f.nin == 2 and f.nout == 1
                 and f not in (np.matmul, np.vecdot)), key=lambda f: f.__name__)


def _inputs(uf):
    if "dd->d" in uf.types:
        return np.array([[1.5, 0.75, 2.0, 1.25], [0.5, 1.75, 1.0, 1.5], [2.0, 0.25, 1.5, 0.5]])
    if "ll->l" in uf.types:
        return np.array([[3, 1, 2, 5], [4, 2, 1, 1], [1, 3, 2, 2]])
    return np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])




@pytest.mark.parametrize("uf", BINARY, ids=lambda f: f.__name__)
def test_fold_methods_match_numpy(uf):
    x = _inputs(uf)

    def f(a):
        y = a.copy()
        uf.at(y, [0, 0, 2], a[1, 0])
        return uf.reduce(a, axis=0), uf.accumulate(a, axis=1), uf.reduceat(a, [0, 2], axis=1), y

    try:
        with np.errstate(all="ignore"):
            want = f(x)
    except (TypeError, ValueError):  # NumPy refuses: so must the trace
        with pytest.raises(Exception):
            reactant.compile(f)(reactant.to_rarray(x))
        return
    got = reactant.compile(f)(reactant.to_rarray(x))
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape, (uf.__name__, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-12, equal_nan=True, err_msg=uf.__name__)


def test_long_folds_run_as_loops():
    x = np.linspace(1.0, 2.0, 64)
    f = reactant.compile(lambda a: (np.subtract.reduce(a), np.divide.accumulate(a)))
    r, acc = f(reactant.to_rarray(x))
    np.testing.assert_allclose(float(r), np.subtract.reduce(x))
    np.testing.assert_allclose(np.asarray(acc), np.divide.accumulate(x), rtol=1e-12)
    assert "stablehlo.while" in reactant.code_hlo(f, reactant.to_rarray(x))
