"""Loops over plain ints: the automatic choice between one stablehlo.while and unrolling, slices
with traced bounds inside rolled loops, and gradients through them."""

from __future__ import annotations

import importlib.util
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import reactant
from reactant.tracing.errors import ReactantError

jax.config.update("jax_enable_x64", True)
RNG = np.random.default_rng(7)


def _run(f, *args, loops="auto", **kw):
    c = reactant.compile(f, loops=loops, **kw)
    return c(*[reactant.to_rarray(a) if isinstance(a, np.ndarray) else a for a in args])


def _hlo(f, *args, loops="auto"):
    c = reactant.compile(f, loops=loops)
    return reactant.code_hlo(c, *[reactant.to_rarray(a) if isinstance(a, np.ndarray) else a for a in args],
                             optimize=False)


def _decisions(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if ": loop at " in line]


# -- textbook kernels (the benchmark's: benchmarks/loop_kernels.py) ---------------------------------
_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "loop_kernels.py")
_spec = importlib.util.spec_from_file_location("loop_kernels", _PATH)
_lk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_lk)
trisolve, lu_dots, lu_outer, cholesky = _lk.trisolve, _lk.lu_dots, _lk.lu_outer, _lk.cholesky


def gauss_seidel(A, T):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = (A[i - 1, j] + A[i, j - 1] + A[i, j] + A[i, j + 1] + A[i + 1, j]) / 5.0
    return A


def jacobi(A, T):
    B = A.copy()
    for t in range(T):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return A


def _spd(n, dtype=np.float64):
    M = RNG.standard_normal((n, n))
    return (M @ M.T + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", ["trisolve", "lu_dots", "lu_outer", "cholesky"])
def test_textbook_kernels_roll_and_match_unrolled(kernel, dtype, capsys):
    f = globals()[kernel]
    tol = 1e-4 if dtype == np.float32 else 1e-11
    for n, check_unrolled in [(24, False), (8, True)]:  # unrolling the large ones is what is slow
        A = _spd(n, dtype)
        args = (np.tril(A), RNG.standard_normal(n).astype(dtype)) if kernel == "trisolve" else (A,)
        rolled = np.asarray(_run(f, *args, verbose=True))
        dec = _decisions(capsys)
        ref = f(*[a.copy() for a in args])
        np.testing.assert_allclose(rolled, ref, rtol=tol, atol=tol)
        assert rolled.dtype == ref.dtype
        if check_unrolled:
            unrolled = np.asarray(_run(f, *args, loops="unroll"))
            np.testing.assert_allclose(rolled, unrolled, rtol=tol, atol=tol)
        else:
            assert dec and "kept as stablehlo.while" in dec[-1], dec
            assert "stablehlo.while" in _hlo(f, *args)


def test_nested_loops_roll_at_every_level(capsys):
    A = RNG.standard_normal((20, 20))
    got = np.asarray(_run(gauss_seidel, A, 3, verbose=True))
    np.testing.assert_allclose(got, gauss_seidel(A.copy(), 3), rtol=1e-12)
    dec = _decisions(capsys)
    # the time loop is small once its body is a loop: unrolled; the two sweeps stay loops
    assert sum("kept" in d for d in dec) >= 2 and any("below" in d for d in dec), dec
    hlo = _hlo(gauss_seidel, A, 3)
    assert hlo.count("stablehlo.while") >= 2


def test_time_loop_over_whole_array_updates_rolls():
    A = RNG.standard_normal((30, 30))
    hlo = _hlo(jacobi, A, 100)
    assert hlo.count("stablehlo.while") == 1
    np.testing.assert_allclose(np.asarray(_run(jacobi, A, 100)), jacobi(A.copy(), 100), rtol=1e-12)


# -- the decision ---------------------------------------------------------------------------------------
def test_small_loops_unroll(capsys):
    def f(x):
        for i in range(3):
            x = x * 2.0 + i
        return x

    x = RNG.standard_normal(4)
    np.testing.assert_allclose(np.asarray(_run(f, x, verbose=True)), f(x.copy()))
    dec = _decisions(capsys)
    assert "below" in dec[0] and "unrolled" in dec[0]
    assert "stablehlo.while" not in _hlo(f, x)


def doitgen_rows(A, C):  # PolyBench's doitgen, written in place: a small nest of row products
    for r in range(A.shape[0]):
        for q in range(A.shape[1]):
            A[r, q, :] = A[r, q, :] @ C


@pytest.mark.parametrize("optimize", ["O0", "O1", "O2"])
def test_small_loops_with_independent_iterations_stay_loops_and_raise(optimize, capsys):
    # small (6 x 6 x 22 ops < ROLL_MIN_OPS): unrolled before; its rows are independent, so with the
    # patterns on it stays a loop and becomes one dot_general (at O0 it is still unrolled)
    A, C = RNG.standard_normal((3, 6, 5)), RNG.standard_normal((5, 5))
    a = reactant.to_rarray(A)
    f = reactant.compile(doitgen_rows, optimize=optimize, verbose=True)
    assert f(a, reactant.to_rarray(C)) is None
    ref = A.copy()
    doitgen_rows(ref, C)
    np.testing.assert_allclose(np.asarray(a), ref, rtol=1e-12, atol=1e-12)
    inner = [d for d in _decisions(capsys) if ":" + str(doitgen_rows.__code__.co_firstlineno + 2) + " " in d]
    assert inner, "no decision reported for the inner loop"
    if optimize == "O0":  # (no patterns: not raised; unrolled, XLA would compile its 6 row writes one by one)
        assert all("small, but unrolled its 6 in-place updates" in d for d in inner), inner
        return
    assert all("small, but its iterations become tensor operations" in d for d in inner), inner
    text = reactant.code_hlo(f, a, reactant.to_rarray(C))
    assert "stablehlo.while" not in text and text.count("stablehlo.dot_general") == 1, text


@pytest.mark.parametrize("n, kept", [(4, False), (6, True)])
def test_small_loop_with_a_recurrence_unrolls_unless_it_updates_in_place_often(n, kept, capsys):
    # each row reads the previous one: not independent. Unrolled, XLA compiles each in-place
    # update on its own (20-30 ms apiece): from ROLL_MAX_UPDATES of them the loop stays a loop
    def f(x, out):
        for i in range(1, x.shape[0]):
            out[i] = out[i - 1] * 0.5 + x[i]

    x, out = RNG.standard_normal(n), np.zeros(n)
    o = reactant.to_rarray(out)
    reactant.compile(f, verbose=True)(reactant.to_rarray(x), o)
    ref = out.copy()
    f(x, ref)
    np.testing.assert_allclose(np.asarray(o), ref, rtol=1e-14)
    dec = _decisions(capsys)
    if kept:
        assert dec and f"kept as stablehlo.while ({n - 1} iterations" in dec[0] \
            and f"its {n - 1} in-place updates and inner loops would each be compiled on their own" in dec[0], dec
    else:
        assert dec and "below" in dec[0] and "unrolled" in dec[0], dec


def test_a_small_loop_running_a_loop_each_iteration_stays_a_loop(capsys):
    # the inner sweep is a recurrence kept as a loop; unrolling the outer one would make XLA
    # compile 5 copies of it
    def f(A):
        for i in range(1, 6):
            for j in range(1, A.shape[1]):
                A[i, j] = A[i, j - 1] * 0.5 + A[i - 1, j]

    A = RNG.standard_normal((6, 40))
    a = reactant.to_rarray(A)
    reactant.compile(f, verbose=True)(a)
    ref = A.copy()
    f(ref)
    np.testing.assert_allclose(np.asarray(a), ref, rtol=1e-13)
    outer = [d for d in _decisions(capsys) if f":{f.__code__.co_firstlineno + 1} " in d]
    assert outer and "kept as stablehlo.while (5 iterations" in outer[-1] \
        and "its 5 in-place updates and inner loops" in outer[-1], outer


def test_list_append_unrolls_and_names_the_statement(capsys):
    def f(x):
        rows = []
        for i in range(x.shape[0]):
            rows.append(np.sin(x[i]) * 2.0 + x[i] ** 2 - np.cos(x[i]))
        return np.stack(rows)

    x = RNG.standard_normal((200, 3))
    np.testing.assert_allclose(np.asarray(_run(f, x, verbose=True)), f(x), rtol=1e-12)
    dec = _decisions(capsys)
    assert "rows.append" in dec[0] and "unrolled" in dec[0]


def test_index_needed_as_python_int_unrolls(capsys):
    def f(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            out[i] = np.sum(np.ones(i + 1)) * x[i]  # np.ones needs a Python int
        return out

    x = RNG.standard_normal(120)
    np.testing.assert_allclose(np.asarray(_run(f, x, verbose=True)), f(x), rtol=1e-12)
    dec = _decisions(capsys)
    assert "needs the index as a Python int" in dec[0]


def test_python_counter_stays_python_int(capsys):
    def f(x):
        k = 0
        for i in range(x.shape[0]):
            k += 1
            x = x * 1.001 + np.sin(x)
        return x + np.zeros(k)  # k must still be a Python int here

    x = RNG.standard_normal(300)
    np.testing.assert_allclose(np.asarray(_run(f, x, verbose=True)), f(x.copy()), rtol=1e-12)
    assert "stay a Python/NumPy value" in _decisions(capsys)[0]


def test_python_accumulator_of_traced_values_rolls(capsys):
    def f(x):
        s = 0.0
        for i in range(x.shape[0]):
            s = s + np.sin(x[i]).sum()
        return s

    x = RNG.standard_normal((300, 5))
    np.testing.assert_allclose(np.asarray(_run(f, x, verbose=True)), f(x), rtol=1e-12)
    assert "kept" in _decisions(capsys)[0]


def test_loop_variable_after_the_loop_is_a_python_int():
    def f(x):
        for i in range(x.shape[0]):
            x = x * 1.5 - np.tanh(x) * 0.5 + np.exp(-x * x)
        return np.zeros(i + 1) + x[:3].sum()  # noqa: B023

    x = RNG.standard_normal(400)
    got = np.asarray(_run(f, x))
    assert got.shape == (400,)
    np.testing.assert_allclose(got, f(x.copy()), rtol=1e-12)


def test_variable_first_assigned_in_the_body_and_read_after_is_carried(capsys):
    # a constant range runs at least once and the body binds 'last' on every path: it is carried
    # from the first iteration on (no iteration peeled, one copy of the body)
    def f(x):
        acc = np.zeros_like(x[0])
        for i in range(x.shape[0]):
            last = np.tanh(x[i]) * 2.0 + 1.0
            acc = acc + last * last
        return acc + last  # noqa: F821 - defined by the loop

    x = RNG.standard_normal((300, 4))
    np.testing.assert_allclose(np.asarray(_run(f, x, verbose=True)), f(x), rtol=1e-12)
    dec = _decisions(capsys)[0]
    assert "kept as stablehlo.while (300 iterations" in dec and "peeled" not in dec, dec
    assert _hlo(f, x).count("stablehlo.tanh") == 1


def test_variable_bound_on_some_paths_only_is_a_clear_error():
    # bound only where a traced condition holds: after a kept loop it could be unbound, so the
    # loop is unrolled, and unrolled the traced branch leaves it unbound: the clear error
    def f(x):
        for i in range(x.shape[0]):
            if np.sum(x[i]) > -100.0:
                last = x[i] * 2.0
        return last  # noqa: F821 - defined by the loop

    x = RNG.standard_normal((300, 4))
    with pytest.raises(reactant.ReactantError, match="'last' is assigned only in the true branch"):
        _run(f, x)


def test_small_loop_of_reductions_stays_a_loop(capsys):
    # k-means' steps: each a few reductions (kernels of their own for XLA); unrolled, 5 x 2 of
    # them to trace, optimize and compile one by one: kept (the labels, first assigned in the
    # body, carried out of it)
    def f(X, C):
        C = C.copy()
        for _ in range(5):
            d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
            labels = d.argmin(axis=1)
            C = 0.5 * C + 0.25 * d[:3].sum(axis=1)[:, None]
        return C, labels

    X, C = RNG.standard_normal((12, 2)), RNG.standard_normal((3, 2))
    got = _run(f, X, C, verbose=True)
    for g, w in zip(got, f(X, C)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)
    dec = _decisions(capsys)[0]
    assert "kept as stablehlo.while (5 iterations" in dec and "reductions and products" in dec, dec


def test_forcing_either_way():
    def f(x):
        for i in range(reactant.unroll(x.shape[0])):
            x = x * 1.01 + np.sin(x) * 0.1 + np.cos(x) * 0.1 + np.tanh(x) * 0.1
        return x

    x = RNG.standard_normal(500)
    assert "stablehlo.while" not in _hlo(f, x)
    np.testing.assert_allclose(np.asarray(_run(f, x)), f(x.copy()), rtol=1e-12)

    def g(x):
        for i in range(reactant.keep(2)):
            x = x + i
        return x

    assert "stablehlo.while" in _hlo(g, x)
    assert "stablehlo.while" in _hlo(g, x, loops="unroll")  # reactant.keep wins over loops="unroll"

    def h(x):
        for i in range(x.shape[0]):
            x = x * 1.01 + np.sin(x) * 0.1 + np.cos(x) * 0.1 + np.tanh(x) * 0.1
        return x

    assert "stablehlo.while" in _hlo(h, x)
    assert "stablehlo.while" not in _hlo(h, x, loops="unroll")


def test_keep_with_a_body_needing_a_python_int_is_a_clear_error():
    def f(x):
        out = np.zeros_like(x)
        for i in range(reactant.keep(x.shape[0])):
            out[i] = x[i] * float(i)
        return out

    with pytest.raises(ReactantError, match="traced"):
        _run(f, RNG.standard_normal(10))


def test_discarded_attempt_leaves_no_trace():
    """A loop tried as a while and then unrolled gives the module unrolling gives."""
    def f(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            out[i] = np.sum(np.ones(i + 1)) * x[i]
        return out

    x = RNG.standard_normal(30)
    assert _hlo(f, x) == _hlo(f, x, loops="unroll")


# -- slices with traced bounds ----------------------------------------------------------------------------
def _prefix_stats(x):
    n = x.shape[0]
    out = np.zeros((n, 4))
    for i in range(1, n):
        out[i, 0] = x[:i].sum()
        out[i, 1] = x[:i].max()
        out[i, 2] = np.mean(x[i:])
        out[i, 3] = np.sum(np.abs(x[-i:]) * 2.0 + 1.0)
    return out


def test_window_reductions_match_numpy():
    x = RNG.standard_normal(40)
    got = np.asarray(_run(_prefix_stats, x, loops="keep"))
    np.testing.assert_allclose(got, _prefix_stats(x), rtol=1e-12)


def test_window_products_transposes_and_writes():
    def f(A):
        n = A.shape[0]
        out = np.zeros_like(A)
        for i in range(1, n):
            v = A[:i, :i].T @ A[:i, i]  # 2-D window transposed times a 1-D window
            out[:i, i] = v * 0.5 + A[i, :i]
            out[i, :i] += np.outer(A[i, :i], A[:i, 0]).sum(axis=1)
        return out

    A = RNG.standard_normal((16, 16))
    got = np.asarray(_run(f, A, loops="keep"))
    np.testing.assert_allclose(got, f(A), rtol=1e-10, atol=1e-12)


def test_window_meeting_a_fixed_size_array_is_a_clear_error_when_kept():
    def f(x, w):
        out = np.zeros_like(x)
        for i in range(reactant.keep(x.shape[0])):
            out[i] = np.sum(x[:i] * w)
        return out

    with pytest.raises(ReactantError, match="traced bound"):
        _run(f, RNG.standard_normal(8), RNG.standard_normal(8))


def test_window_meeting_a_fixed_size_array_unrolls_in_auto_mode():
    def f(x, w):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            out[i] = np.sum(x[:i] * w[:i]) + np.sum(x * w) * i
        return out

    x, w = RNG.standard_normal(64), RNG.standard_normal(64)
    np.testing.assert_allclose(np.asarray(_run(f, x, w)), f(x, w), rtol=1e-10)


# -- traced ifs inside kept loops keep their writes (regression) ---------------------------------------
def test_in_place_write_in_a_traced_branch_inside_a_loop():
    def f(A):
        L = np.zeros_like(A)
        for i in range(reactant.keep(4)):
            if i == 2:
                L[i, i] = A[i, i] + 1
            else:
                L[i, i] = A[i, i]
        return L

    A = np.arange(16.0).reshape(4, 4)
    np.testing.assert_array_equal(np.asarray(_run(f, A)), f(A))


# -- gradients through rolled loops -----------------------------------------------------------------------
def test_gradient_through_rolled_triangular_solve_matches_jax():
    def loss(L, b):
        return np.sum(trisolve(L, b) ** 2)

    def jloss(L, b):
        x = jnp.zeros_like(b)
        for i in range(b.shape[0]):
            x = x.at[i].set((b[i] - L[i, :i] @ x[:i]) / L[i, i])
        return jnp.sum(x ** 2)

    n = 16
    L = np.tril(RNG.standard_normal((n, n))) + n * np.eye(n)
    b = RNG.standard_normal(n)
    gl, gb = _run(lambda L, b: reactant.gradient(loss, L, b, argnums=(0, 1)), L, b)
    jl, jb = jax.jit(jax.grad(jloss, argnums=(0, 1)))(L, b)  # (one compile, not one per slice shape)
    np.testing.assert_allclose(np.asarray(gl), jl, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(np.asarray(gb), jb, rtol=1e-9, atol=1e-14)


def test_gradient_through_nested_rolled_cholesky_matches_finite_differences():
    def loss(A):
        return np.sum(np.sin(cholesky(A)))

    n = 10
    A = _spd(n)
    g = np.asarray(_run(lambda A: reactant.gradient(loss, A), A))
    eps = 1e-6
    for (r, c) in [(3, 1), (7, 7), (9, 4)]:
        E = np.zeros_like(A)
        E[r, c] = eps
        fd = (loss(A + E) - loss(A - E)) / (2 * eps)
        np.testing.assert_allclose(g[r, c], fd, rtol=1e-6, atol=1e-9)


def test_inner_loop_trip_bound_from_the_outer_counter():
    """``for j in range(i + 1)`` inside a loop over ``i < n``: at most n iterations (what reverse
    mode allocates for the inner loop's tape)."""
    from reactant.ir.context import parse_module
    from reactant.ir.loops import analyze

    n = 9
    text = _hlo(cholesky, _spd(n))
    m = parse_module(text)
    whiles = []

    def visit(op):
        if op.operation.name == "stablehlo.while":
            whiles.append(op)
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    visit(o)

    visit(m.operation)
    infos = [analyze(w) for w in whiles]
    assert sorted(((i.trip_count or -1), i.trip_bound) for i in infos) == [(-1, n), (n, n)]


def test_reversed_window_levinson_durbin_rolls(capsys):
    levinson = _lk.levinson
    r = RNG.uniform(0.0, 0.1, 48)
    np.testing.assert_allclose(np.asarray(_run(levinson, r, verbose=True)), levinson(r), rtol=1e-11)
    assert "kept" in _decisions(capsys)[0]


def test_checkpointed_gradient_through_rolled_loops_equals_the_taped_one():
    def loss(L, b):
        return np.sum(np.cos(trisolve(L, b)))

    n = 20
    L = np.tril(RNG.standard_normal((n, n))) + n * np.eye(n)
    b = RNG.standard_normal(n)
    g = lambda L, b: reactant.gradient(loss, L, b, argnums=(0, 1))  # noqa: E731
    taped = _run(g, L, b)
    ckpt = _run(g, L, b, ad_checkpoint="sqrt")
    for a, c in zip(taped, ckpt):
        np.testing.assert_allclose(np.asarray(c), np.asarray(a), rtol=1e-12, atol=1e-15)
    eps = 1e-6
    E = np.zeros_like(b)
    E[5] = eps
    fd = (loss(L, b + E) - loss(L, b - E)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(ckpt[1])[5], fd, rtol=1e-6, atol=1e-8)  # (FD error ~1e-10)


def test_slices_of_constant_length_within_bounds_keep_a_static_size(capsys):
    def stencil(x, w):
        out = np.zeros_like(x)
        for i in range(1, x.shape[0] - 1):
            out[i] = np.sum(x[i - 1:i + 2] * w)  # meets a size-3 array: needs the static size
        return out

    def past_the_end(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            out[i] = np.sum(x[i:i + 3])  # shorter at the end, as in NumPy
        return out

    x, w = RNG.standard_normal(300), np.array([1.0, -2.0, 1.0])
    np.testing.assert_allclose(np.asarray(_run(stencil, x, w, verbose=True)), stencil(x, w), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(_run(past_the_end, x, verbose=True)), past_the_end(x), rtol=1e-12)
    dec = _decisions(capsys)
    assert len(dec) == 2 and all("kept" in d for d in dec), dec
    assert "stablehlo.pad" not in _hlo(stencil, x, w)  # a plain dynamic_slice of size 3


def test_affine_forms_and_ranges():
    from reactant.ir.context import parse_module
    from reactant.ir.loops import affine_form, int_range

    m = parse_module("""
    func.func @f(%i: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
      %c1 = stablehlo.constant dense<1> : tensor<i32>
      %c32 = stablehlo.constant dense<32> : tensor<i32>
      %a = stablehlo.multiply %i, %c32 : tensor<i32>
      %b0 = stablehlo.add %i, %c1 : tensor<i32>
      %b = stablehlo.multiply %b0, %c32 : tensor<i32>
      return %a, %b : tensor<i32>, tensor<i32>
    }""")
    fn = m.body.operations[0]
    ret = fn.regions[0].blocks[0].operations[5]
    a, b = ret.operands
    i = fn.regions[0].blocks[0].arguments[0]
    fa, fb = affine_form(a), affine_form(b)
    assert fa == ({i: 32}, 0) and fb == ({i: 32}, 32)
    assert int_range(b, env={i: (0, 3)}) == (32, 128)
    assert int_range(b) is None


def test_windows_at_traced_offsets_meet_shifted_ones():
    def f(x):
        n = x.shape[0]
        out = np.zeros((n, n))
        for i in range(n):
            out[i, i:] = x[i:][::-1] * 2.0 + x[i:]  # reversed (moved to the front) meets in-place
            out[i, :i] = x[:i] * x[:i]
        return out

    x = RNG.standard_normal(12)
    np.testing.assert_allclose(np.asarray(_run(f, x, loops="keep")), f(x), rtol=1e-12)


def test_gradient_through_rolled_outer_product_lu():
    def loss(A):
        return np.sum(np.sin(lu_outer(A)))

    A = _spd(9)
    g = np.asarray(_run(lambda A: reactant.gradient(loss, A), A))
    eps = 1e-6
    for (r, c) in [(0, 0), (4, 2), (8, 7)]:
        E = np.zeros_like(A)
        E[r, c] = eps
        np.testing.assert_allclose(g[r, c], (loss(A + E) - loss(A - E)) / (2 * eps), rtol=1e-6, atol=1e-9)


# -- in-place updates stay in place in XLA's program ----------------------------------------------------
def _while_bodies(hlo: str) -> list[str]:
    """The text of every computation XLA runs as a while body."""
    import re

    comps, name, cur = {}, None, []
    for line in hlo.splitlines():
        m = re.match(r"^%?([\w.\-]+) .*\{$", line) if not line.startswith(" ") else None
        if m:
            name, cur = m.group(1), []
            comps[name] = cur
        elif name is not None:
            cur.append(line)
    bodies = re.findall(r"body=%?([\w.\-]+)", hlo)
    return ["\n".join(comps.get(b, [])) for b in bodies]


@pytest.mark.parametrize("kernel", ["jacobi", "cholesky"])
def test_rolled_loops_update_their_arrays_in_place(kernel):
    n = 32
    args = (RNG.standard_normal((n, n)), 60) if kernel == "jacobi" else (_spd(n),)
    f = reactant.compile(globals()[kernel])
    rargs = [reactant.to_rarray(a) if isinstance(a, np.ndarray) else a for a in args]
    f(*rargs)
    bodies = _while_bodies(reactant.code_xla(f, *rargs))
    assert bodies
    for body in bodies:  # no copy of a whole n x n array per iteration
        assert f"f64[{n},{n}]{{1,0}} copy(" not in body, body


# -- for x in <array> ------------------------------------------------------------------------------
_CRC_TABLE = np.array([(lambda c: [c := (0xEDB88320 ^ (c >> 1)) if c & 1 else c >> 1 for _ in range(8)][-1])(i)
                       for i in range(256)], np.uint32)


def crc32_bytes(data):  # a byte-wise CRC over a traced array: every byte depends on the last
    crc = np.uint32(0xFFFFFFFF)
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ np.uint32(0xFFFFFFFF)


@pytest.mark.parametrize("optimize", ["O0", "O2"])
@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
def test_iterating_over_a_traced_array_matches_numpy_in_every_mode(loops, optimize, capsys):
    import zlib

    data = RNG.integers(0, 256, 96).astype(np.uint8)
    got = _run(crc32_bytes, data, loops=loops, optimize=optimize, verbose=True)
    assert int(np.asarray(got)) == crc32_bytes(data) == zlib.crc32(data.tobytes())
    dec = _decisions(capsys)
    if loops == "auto":  # the long byte loop stays a loop, as for i in range(len(data)) would
        assert len(dec) == 1 and "kept as stablehlo.while (96 iterations" in dec[0]
        assert _hlo(crc32_bytes, data).count("stablehlo.while") == 1
    else:  # "keep" / "unroll" iterate in Python, as before
        assert not dec


@pytest.mark.parametrize("optimize", ["O0", "O1", "O2"])
@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
def test_rows_of_an_argument_updated_through_the_loop_variable(loops, optimize):
    def scale_rows(A, w):  # each row is a view: NumPy writes into A
        for row in A:
            row *= w
            row -= row.mean()

    A, w = RNG.standard_normal((40, 6)), RNG.standard_normal(6)
    a = reactant.to_rarray(A.copy())
    reactant.compile(scale_rows, loops=loops, optimize=optimize)(a, reactant.to_rarray(w))
    want = A.copy()
    scale_rows(want, w)
    np.testing.assert_allclose(np.asarray(a), want, rtol=1e-12)


@pytest.mark.parametrize("loops", ["auto", "unroll"])
def test_loop_variable_after_iterating_is_the_last_row_or_the_earlier_value(loops):
    def f(X, E):
        x = np.float64(-1.0)
        for x in E:  # E is empty: x keeps its value
            pass
        total = np.zeros(X.shape[1])
        for row in X:
            total = total * 0.5 + row
        return total, row * 2.0, x

    X, E = RNG.standard_normal((30, 4)), np.zeros((0, 3))
    got = _run(f, X, E, loops=loops)
    for g, w in zip(got, f(X, E)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)


def test_iterating_over_python_containers_is_python_iteration():
    def f(x, ws):
        out = []
        for w in ws:  # a list of traced arrays, then of floats
            x = x * w
            out.append(x.sum())
        for s in (1.0, 2.0):
            x = x + s
        return np.stack(out), x

    x, ws = RNG.standard_normal(5), [RNG.standard_normal(5) for _ in range(12)]
    got = reactant.compile(f)(reactant.to_rarray(x), [reactant.to_rarray(w) for w in ws])
    for g, w in zip(got, f(x, ws)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)


STEPS = 0


def loops_rebinding_a_global_and_a_nonlocal(x):
    global STEPS
    seen = 0

    def scale(v):
        nonlocal seen
        for w in (0.5, 2.0, 3.0):  # a Python tuple: Python's iteration, in converted code
            seen += 1
            v = v * w
        return v

    for w in [1.0, 2.0]:
        STEPS += 1
        x = scale(x) + w
    return x * seen


def test_names_declared_global_or_nonlocal_are_rebound_by_converted_loops():
    global STEPS
    x = RNG.standard_normal(3)
    STEPS = 0
    want = loops_rebinding_a_global_and_a_nonlocal(x.copy())
    assert STEPS == 2
    STEPS = 0
    got = _run(loops_rebinding_a_global_and_a_nonlocal, x)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    assert STEPS == 2


def dct_into(x, out):  # a DCT-II written with loops, into an argument: its basis is a table
    N = len(x)
    for k in range(N):
        s = 0.0
        for n in range(N):
            s += x[n] * np.cos(np.pi * k * (2 * n + 1) / (2 * N))
        out[k] = s * (np.sqrt(1.0 / N) if k == 0 else np.sqrt(2.0 / N))


@pytest.mark.parametrize("optimize", ["O0", "O1", "O2"])
@pytest.mark.parametrize("loops", ["auto", "keep", "unroll"])
def test_a_transform_written_with_loops_into_an_argument_matches_numpy(loops, optimize):
    x = RNG.standard_normal(16)
    want = np.zeros(16)
    dct_into(x, want)
    out = reactant.to_rarray(np.zeros(16))
    reactant.compile(dct_into, loops=loops, optimize=optimize)(reactant.to_rarray(x), out)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-12, atol=1e-13)
    if loops == "auto" and optimize == "O2":  # the cosines are a table: no cosine is left
        c = reactant.compile(dct_into)
        text = c.lower(reactant.to_rarray(x), reactant.to_rarray(np.zeros(16))).text()
        assert "stablehlo.cosine" not in text
