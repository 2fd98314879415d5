"""Views as NumPy defines them: writes through a view reach the base and every other view;
a view read after its base was written sees the new values; copies break the alias;
read-only views refuse writes. Compiled (every loop mode, O0/O2) and checked against NumPy."""

import numpy as np
import pytest

import reactant
from .inplace_check import MODES as ALL_MODES
from .inplace_check import check

MODES = [("auto", "O2"), ("keep", "O0"), ("unroll", "O2"), ("auto", "O0")]


def slice_zero(x):
    w = x[1:3]
    w[:] = 0
    return x.sum()


def rows_doubled(A):
    for row in A:
        row *= 2


def transpose_write(A):
    A.T[0, 1] = -7


def reshape_write(x):
    x.reshape(2, 2)[0, 0] = 100


def view_sees_later_write(x):
    y = x[:2]
    x[0] = 50
    return y


def copy_breaks_alias(x):
    y = x[:2].copy()
    x[0] = 50
    z = x.astype(x.dtype)
    z[1] = -1
    f = x.flatten()
    f[2] = -2
    return y, z, f


def view_of_view(A):
    r = A[1]
    s = r[::2]
    s += 10
    A[1, 0] = 5
    return s, r


def int_and_slice(A):
    A[2, 1:3] = 9
    c = A[:, 0]
    c[...] = -c
    return A[0]


def swap_move(A):
    B = np.swapaxes(A, 0, 1)
    B[0] += 1
    C = np.moveaxis(A, 0, -1)
    C[1, 0] = 3
    return B.sum(), C


def reshape_copy_of_noncontiguous(A):
    v = A[:, :2].reshape(-1)  # NumPy copies here: writes don't reach A
    v[0] = 1000
    w = A[:2].reshape(-1)  # a view
    w[1] = -1000
    return v


def ravel_rules(A):
    r = A.ravel()  # contiguous: view
    r[0] = 7
    t = A.T.ravel()  # not contiguous: copy
    t[1] = 8
    return t


def flips(x):
    f = np.flip(x)
    f[0] = 11
    u = x[::-1]
    u[1] = 12
    return f


def split_views(x):
    a, b = np.split(x, 2)
    a[0] = 1
    b += 100


def squeeze_expand(A):
    s = np.expand_dims(A, 0)
    s[0, 0, 0] = 4
    q = np.squeeze(s)
    q[1, 1] = 5
    at = np.atleast_2d(A[0])
    at[0, 2] = 6


def views_in_kept_loop(A, out):
    for i in range(A.shape[0]):
        row = A[i]
        row[:] = row * 2 + i
        o = out[i:i + 1]
        o[0] = row.sum()


def out_into_view(A, b):
    np.add(A[0], b, out=A[1])
    np.multiply(A[2], 2.0, out=A[2])


def helper_writes(v):
    v[0] = -1.0


def view_to_helper(A):
    for i in range(A.shape[0]):
        helper_writes(A[i])


def traced_if_on_view(x):
    w = x[2:]
    if x[0] > 0.5:
        w[0] = 1.0
    else:
        w[1] = 2.0
    return w


def while_on_view(x):
    w = x[1:]
    k = x[0] * 0
    while k < 3:
        w[0] = w[0] + 1.0
        k = k + 1


CASES = {
    "slice_zero": (slice_zero, lambda r: [r.random(5)]),
    "rows_doubled": (rows_doubled, lambda r: [r.random((3, 4))]),
    "transpose_write": (transpose_write, lambda r: [r.random((3, 4))]),
    "reshape_write": (reshape_write, lambda r: [r.random(4)]),
    "view_sees_later_write": (view_sees_later_write, lambda r: [r.random(4)]),
    "copy_breaks_alias": (copy_breaks_alias, lambda r: [r.random(4)]),
    "view_of_view": (view_of_view, lambda r: [r.random((3, 6))]),
    "int_and_slice": (int_and_slice, lambda r: [r.random((4, 4))]),
    "swap_move": (swap_move, lambda r: [r.random((2, 3, 4))]),
    "reshape_copy_of_noncontiguous": (reshape_copy_of_noncontiguous, lambda r: [r.random((3, 4))]),
    "ravel_rules": (ravel_rules, lambda r: [r.random((3, 4))]),
    "flips": (flips, lambda r: [r.random(5)]),
    "split_views": (split_views, lambda r: [r.random(6)]),
    "squeeze_expand": (squeeze_expand, lambda r: [r.random((3, 4))]),
    "views_in_kept_loop": (views_in_kept_loop, lambda r: [r.random((40, 8)), np.zeros(40)]),
    "out_into_view": (out_into_view, lambda r: [r.random((3, 4)), r.random(4)]),
    "view_to_helper": (view_to_helper, lambda r: [r.random((30, 3))]),
    "traced_if_on_view": (traced_if_on_view, lambda r: [r.random(5)]),
    "while_on_view": (while_on_view, lambda r: [r.random(4)]),
}


@pytest.mark.parametrize("loops,opt", MODES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_view_semantics(case, loops, opt):
    fn, make = CASES[case]
    check(fn, *make(np.random.default_rng(1)), loops=loops, optimize=opt)


@pytest.mark.parametrize("make", [lambda A: np.diagonal(A), lambda A: np.broadcast_to(A[0], (2, 4)),
                                  lambda A: A.diagonal()])
def test_read_only_views_refuse_writes(make):
    def f(A):
        d = make(A)
        d[0] = 1.0

    with pytest.raises(ValueError, match="read-only"):
        f(np.random.rand(4, 4))  # NumPy refuses too
    with pytest.raises(ValueError, match="read-only"):
        reactant.compile(f)(reactant.to_rarray(np.random.rand(4, 4)))


def test_read_only_view_follows_its_base():
    def f(A):
        d = np.diagonal(A)
        A[1, 1] = 100.0
        return d * 1.0

    check(f, np.random.rand(3, 3))


@pytest.mark.parametrize("case", sorted(CASES))
def test_view_semantics_eager(case):
    """The same programs run eagerly on device arrays (each NumPy call compiled on its own)."""
    fn, make = CASES[case]
    args = make(np.random.default_rng(1))
    if case == "views_in_kept_loop":  # (40 rows keep the loop when traced; eagerly every row's
        args = [a[:6] for a in args]  # ops compile again for its index: 6 rows say as much)
    check(fn, *args, eager=True)


def lu_outer_views(A):
    n = A.shape[0]
    for i in range(n):
        col = A[i + 1:, i]  # bounds follow the loop index: a window of run-time length
        col /= A[i, i]
        trailing = A[i + 1:, i + 1:]
        trailing -= np.outer(col, A[i, i + 1:])


def prefix_views(y, r):
    for k in range(1, y.shape[0]):
        yk = y[:k]
        yk += r[k] * 0.1
        yk[...] = yk * 0.5
    z = y[3:]
    y[5] = -1.0  # the window follows a later write to its base
    return z


@pytest.mark.parametrize("loops,opt", MODES)
@pytest.mark.parametrize("fn,make", [
    (lu_outer_views, lambda r: [r.random((20, 20)) + 20 * np.eye(20)]),
    (prefix_views, lambda r: [np.zeros(20), np.arange(20.0)]),
], ids=["lu_outer_views", "prefix_views"])
def test_views_with_loop_bounds_write_through(fn, make, loops, opt):
    check(fn, *make(np.random.default_rng(3)), loops=loops, optimize=opt)


# -- small loops the optimizer raises while tracing (the trace continues from the raised ops) ----
def _rows_through_views(A, B, out):
    top = A[:4]  # a view made before the loop
    for i in range(8):  # small, rows written at distinct rows: raised while tracing
        A[i] = B[i] * 2.0 + A[i]
    s = top.sum()  # the view reads the loop's writes
    A[0] += 1.0  # a write after the loop, into the raised value
    col = A[:, 1]
    for r in range(4):  # nested small loops writing an argument through a strided view
        for q in range(3):
            out[r, q, :] = out[r, q, :] @ B[:3, :3] + col[r]
    return s + out.sum()


def _raised_in_each_copy_of_an_unrolled_loop(x, y):
    for k in range(3):  # unrolled; each copy holds the small raised loop
        for i in range(6):
            y[i] = x[i] * (k + 1)
        x[:] = np.sqrt(np.abs(y)) + x
    return x.sum()


@pytest.mark.parametrize("loops,optimize", ALL_MODES)
def test_views_and_writes_around_a_small_loop_raised_while_tracing(loops, optimize):
    rng = np.random.default_rng(12)
    check(_rows_through_views, rng.standard_normal((8, 3)), rng.standard_normal((8, 3)),
          rng.standard_normal((4, 3, 3)), loops=loops, optimize=optimize)
    check(_raised_in_each_copy_of_an_unrolled_loop, rng.standard_normal(6), rng.standard_normal(6),
          loops=loops, optimize=optimize)
