"""User functions behind ``functools.wraps`` decorators (a timer, a validator, a scaling
wrapper), written as NumPy users write them: arguments updated in place through views, the
decorated helper called from a loop. The wrapper's own code runs, in every loop mode and
optimization level."""

import functools

import numpy as np
import pytest

from .inplace_check import MODES, check


def scaled(factor):
    def deco(f):
        @functools.wraps(f)
        def wrapper(x, *rest):
            out = f(x, *rest)
            if x.ndim == 1:  # (control flow of the wrapper's own)
                out = out * factor
            return out
        return wrapper
    return deco


@scaled(0.5)
def smooth_row(row):
    return np.convolve(row, np.array([0.25, 0.5, 0.25]), mode="same") + np.tanh(row)


def smooth_rows_in_place(A, out):  # rows written through a view of the argument
    view = out[:, ::2]
    for i in range(A.shape[0]):
        view[i] = smooth_row(A[i, ::2])
    A[0] -= out[0].sum()


@pytest.mark.parametrize("loops,level", MODES)
def test_a_wrapped_helper_keeps_its_wrapper_in_every_mode(loops, level):
    rng = np.random.default_rng(11)
    check(smooth_rows_in_place, rng.standard_normal((4, 10)), np.zeros((4, 10)), loops=loops, optimize=level)
