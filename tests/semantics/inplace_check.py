"""Run a NumPy function in NumPy and in reactant, compare the result AND the final state of
every argument (NumPy users update arguments in place and return nothing)."""

from __future__ import annotations

import numpy as np

import reactant

MODES = [(loops, opt) for loops in ("auto", "keep", "unroll") for opt in ("O0", "O1", "O2")]


def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [leaf for v in x for leaf in _leaves(v)]
    return [x]


def check(fn, *args, loops="auto", optimize="O2", eager=False, rtol=1e-10, atol=1e-12):
    """``fn(*args)`` in NumPy vs compiled with ``loops``/``optimize`` (or eagerly on device
    arrays): same return value (shape, dtype, values) and same final arguments (dtype and values)."""
    ref_args = [np.array(a, copy=True) for a in args]
    expected = fn(*ref_args)
    dev = [reactant.to_rarray(np.array(a, copy=True)) for a in args]
    got = fn(*dev) if eager else reactant.compile(fn, loops=loops, optimize=optimize)(*dev)
    for k, (r, d) in enumerate(zip(ref_args, dev)):
        assert np.asarray(d).dtype == r.dtype, (k, np.asarray(d).dtype, r.dtype)
        np.testing.assert_allclose(np.asarray(d), r, rtol=rtol, atol=atol,
                                   err_msg=f"argument {k} after the call ({loops}, {optimize}, eager={eager})")
    e_leaves, g_leaves = _leaves(expected), _leaves(got)
    assert len(e_leaves) == len(g_leaves), (expected, got)
    for e, g in zip(e_leaves, g_leaves):
        if e is None:
            assert g is None, g
            continue
        g = np.asarray(g)
        assert np.shape(g) == np.shape(e), (np.shape(g), np.shape(e))
        assert np.asarray(e).dtype == g.dtype, (np.asarray(e).dtype, g.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"result ({loops}, {optimize})")
    return got
