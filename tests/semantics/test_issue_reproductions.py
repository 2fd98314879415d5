"""The reproductions of silent wrong answers (in-place updates in kept loops, traced while
and if, views, Cholesky in place), in every loop mode and at O0/O1/O2."""

import numpy as np
import pytest

from .inplace_check import MODES, check

rng = np.random.default_rng(0)


def col_double(A, out):  # a 64-row loop is kept: out used to stay all zeros
    for i in range(A.shape[0]):
        out[i] = A[i, 0] * 2.0


def heat(u):  # a plain time loop over an argument
    for t in range(69):
        u[1:-1] = 0.25 + 0.5 * u[1:-1]


def traced_while(x, out):
    k = x[0] * 0
    while k < 5:
        out[0] = out[0] + x[1]
        k = k + 1


def traced_if(x, out):
    if x[0] > 0:
        out[1] = 7.0
    else:
        out[1] = -7.0


def traced_if_then_write(x, out):
    if x[0] > 0:
        out[1] = 7.0
    else:
        out[1] = -7.0
    out[0] = out[1] * 2


def chol(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def view_write(x):
    w = x[1:3]
    w[:] = 0
    return x.sum()


def _spd(n):
    m = rng.random((n, n))
    return m @ m.T + n * np.eye(n)


CASES = {
    "col_double": (col_double, lambda: [rng.random((64, 64)), np.zeros(64)]),
    "heat": (heat, lambda: [rng.random(20)]),
    "traced_while": (traced_while, lambda: [rng.random(3), rng.random(3)]),
    "traced_if_pos": (traced_if, lambda: [np.array([1.0, 2.0, 3.0]), np.zeros(3)]),
    "traced_if_neg": (traced_if, lambda: [np.array([-1.0, 2.0, 3.0]), np.zeros(3)]),
    "traced_if_then_write": (traced_if_then_write, lambda: [np.array([-1.0, 2.0, 3.0]), np.zeros(3)]),
    "chol": (chol, lambda: [_spd(5)]),
    "view_write": (view_write, lambda: [rng.random(5)]),
}


@pytest.mark.parametrize("loops,opt", MODES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_reproduction(case, loops, opt):
    fn, make = CASES[case]
    check(fn, *make(), loops=loops, optimize=opt)
