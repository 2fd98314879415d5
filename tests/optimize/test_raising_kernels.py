"""Loop raising end to end: NumPy kernels written with Python loops, compiled with their loops
kept as ``stablehlo.while`` (``loops="keep"``), are raised into tensor operations at O2; their
results equal NumPy's and the unraised program's (O0), and gradients through the raised loops
equal the unraised ones and jax.grad of the same algorithm written with whole-array ops.
A loop accumulating a float sum keeps its order (and its loop) unless fast math is on."""

from __future__ import annotations

import importlib.util
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import reactant

jax.config.update("jax_enable_x64", True)

_BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks")


def _benchmark_module(name: str):
    """A module of benchmarks/ (the kernels the benchmarks time are the ones tested here)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(_BENCH, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


doitgen = _benchmark_module("loop_kernels").doitgen
_br = _benchmark_module("bench_raise")
row_map, sum_of_squares = _br.row_map, _br.sum_of_squares


def column_sums_of_exp(x):
    s = np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        s = s + np.exp(x[i])
    return s


def laplacian_1d(x):
    out = np.zeros_like(x)
    for i in range(1, x.shape[0] - 1):
        out[i] = x[i - 1] + x[i + 1] - 2.0 * x[i]
    return out


def outer_rows(x, y):
    out = np.zeros((x.shape[0], x.shape[1], y.shape[1]))
    for i in range(x.shape[0]):
        out[i] = np.outer(x[i], y[i])
    return out


def linear_recurrence(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = 0.5 * y[i - 1] + x[i]
    return y


def moving_sums(x):
    out = np.zeros(x.shape[0] - 2)
    for i in range(x.shape[0] - 2):
        out[i] = np.sum(x[i:i + 3])
    return out


def column_maxima(x):
    m = np.full(x.shape[1], -np.inf)
    for i in range(x.shape[0]):
        m = np.maximum(m, x[i])
    return m


def count_positive(x):
    c = np.zeros((), dtype=np.int64)
    for i in range(x.shape[0]):
        c = c + np.sum(x[i] > 0)
    return c


def reversed_rows(x):
    out = np.zeros_like(x)
    n = x.shape[0]
    for i in range(n):
        out[n - 1 - i] = np.exp(x[n - 1 - i]) * (i + 1)
    return out


def row_cumsums(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = np.cumsum(x[i])
    return out


def row_solves(m, b):
    out = np.zeros_like(b)
    for i in range(m.shape[0]):
        out[i] = np.linalg.solve(m[i], b[i])
    return out


def sorted_rows(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = np.sort(x[i])
    return out


def fill_blocks(x):  # blocks of 4 rows, each from the same block of x (while_block_rows)
    out = np.zeros_like(x)
    for i in range(x.shape[0] // 4):
        blk = x[4 * i:4 * (i + 1)]
        out[4 * i:4 * (i + 1)] = np.sin(blk) * np.cos(blk).sum(axis=1, keepdims=True)
    return out


def column_blocks(x, w):  # blocks of 3 columns scaled in place: reads of the block being written
    x = x.copy()
    for i in range(x.shape[1] // 3):
        x[:, 3 * i:3 * (i + 1)] *= w[i]
    return x


def overlapping_blocks(x):  # block i + 1 overlaps block i: a recurrence
    out = np.zeros(x.shape[0] + 2)
    for i in range(x.shape[0]):
        out[i:i + 3] += x[i]
    return out


def misaligned_blocks(x):  # blocks of 2 from row 1: not a reshape of the array
    out = np.zeros(x.shape[0] + 1)
    for i in range(x.shape[0] // 2):
        out[1 + 2 * i:3 + 2 * i] = x[2 * i:2 * i + 2] * 2.0
    return out


RNG = np.random.default_rng(3)
RAISED = {
    "fill_blocks": (fill_blocks, (RNG.standard_normal((24, 5)),)),
    "column_blocks": (column_blocks, (RNG.standard_normal((4, 12)), RNG.standard_normal((4, 4, 3)))),
    "doitgen": (doitgen, (RNG.standard_normal((4, 3, 8)), RNG.standard_normal((8, 8)))),
    "row_map": (row_map, (RNG.standard_normal((9, 5)), RNG.standard_normal((5, 5)))),
    "column_maxima": (column_maxima, (RNG.standard_normal((6, 3)),)),
    "count_positive": (count_positive, (RNG.standard_normal((7, 4)),)),
    "reversed_rows": (reversed_rows, (RNG.standard_normal((6, 3)),)),
    "laplacian_1d": (laplacian_1d, (RNG.standard_normal(10),)),
    "outer_rows": (outer_rows, (RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2)))),
    "moving_sums": (moving_sums, (RNG.standard_normal(11),)),
    "sorted_rows": (sorted_rows, (RNG.standard_normal((4, 5)),)),
    "row_cumsums": (row_cumsums, (RNG.standard_normal((4, 5)),)),
}
# float sums accumulated by the loop: raised with fast math only (a reduce sums in any order)
FLOAT_SUMS = {
    "sum_of_squares": (sum_of_squares, (RNG.standard_normal((7, 4)),)),
    "column_sums_of_exp": (column_sums_of_exp, (RNG.standard_normal((6, 3)),)),
}
KEPT = {
    "linear_recurrence": (linear_recurrence, (RNG.standard_normal((6, 2)),)),
    "overlapping_blocks": (overlapping_blocks, (RNG.standard_normal(7),)),
    "misaligned_blocks": (misaligned_blocks, (RNG.standard_normal(8),)),
    # a library call (LAPACK) per row: not batched by the loop raising
    "row_solves": (row_solves, (RNG.standard_normal((3, 4, 4)) + 4 * np.eye(4), RNG.standard_normal((3, 4)))),
}


def _hlo(f, args, level):
    c = reactant.compile(f, loops="keep", optimize=level)
    return reactant.code_hlo(c, *[reactant.to_rarray(a) for a in args], optimize=level)


def _run(f, args, level):
    c = reactant.compile(f, loops="keep", optimize=level)
    return np.asarray(c(*[reactant.to_rarray(a) for a in args]))


@pytest.mark.parametrize("name", sorted(RAISED))
def test_loop_is_raised_and_equals_numpy_and_the_unraised_program(name):
    f, args = RAISED[name]
    assert "stablehlo.while" in _hlo(f, args, "O0")
    assert "stablehlo.while" not in _hlo(f, args, "O2")
    want = f(*args)
    got, unraised = _run(f, args, "O2"), _run(f, args, "O0")
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, unraised, rtol=1e-12, atol=1e-12)


def _fast_math_run(f, args):
    """The O2 program of ``f`` (loops kept) optimized with fast math, and its result."""
    import jax as _jax

    import reactant.optimize as ro
    from reactant import runtime
    from reactant.ir.context import parse_module, to_text

    c = reactant.compile(f, loops="keep")
    m = parse_module(reactant.code_hlo(c, *[reactant.to_rarray(a) for a in args], optimize=False))
    with m.context:
        ro.run_pipeline(m, ro.pipeline("O2"), ro.PassOptions(fast_math=True))
    text = to_text(m)
    dev = _jax.devices("cpu")[0]
    exe = runtime.compile_module(text, [dev])
    out = exe.execute_sharded([_jax.device_put(a, dev) for a in args]).disassemble_into_single_device_arrays()
    return text, np.asarray(out[0][0])


@pytest.mark.parametrize("name", sorted(FLOAT_SUMS))
def test_float_sum_loop_keeps_its_order_and_is_raised_with_fast_math(name):
    f, args = FLOAT_SUMS[name]
    assert "stablehlo.while" in _hlo(f, args, "O2")
    np.testing.assert_array_equal(_run(f, args, "O2"), _run(f, args, "O0"))  # the loop's own order
    text, got = _fast_math_run(f, args)
    assert "stablehlo.while" not in text, text
    np.testing.assert_allclose(got, f(*args), rtol=1e-12, atol=1e-12)


def test_doitgen_becomes_one_dot_general():
    f, args = RAISED["doitgen"]
    txt = _hlo(f, args, "O2")
    assert txt.count("stablehlo.dot_general") == 1 and "dynamic_update_slice" not in txt, txt


def test_doitgen_with_the_tracers_own_loop_choice_is_raised():
    """With ``loops="auto"`` the tracer rolls the outer loop and unrolls the inner one (a chain
    of writes into row r per iteration): still raised, and equal to NumPy."""
    args = (RNG.standard_normal((16, 16, 64)), RNG.standard_normal((64, 64)))
    c = reactant.compile(doitgen)
    ra = [reactant.to_rarray(a) for a in args]
    assert "stablehlo.while" in reactant.code_hlo(c, *ra, optimize="O0")
    assert "stablehlo.while" not in reactant.code_hlo(c, *ra)
    np.testing.assert_allclose(np.asarray(c(*ra)), doitgen(*args), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(KEPT))
def test_loop_that_cannot_be_raised_stays_a_loop_with_the_right_result(name):
    f, args = KEPT[name]
    assert "stablehlo.while" in _hlo(f, args, "O2")
    np.testing.assert_allclose(_run(f, args, "O2"), f(*args), rtol=1e-12, atol=1e-12)


def test_raising_can_be_disabled_by_name():
    import reactant.optimize as ro
    from reactant.ir.context import parse_module

    f, args = RAISED["row_map"]
    c = reactant.compile(f, loops="keep")
    text = reactant.code_hlo(c, *[reactant.to_rarray(a) for a in args], optimize=False)
    for disabled, loop_stays in ((frozenset(), False),
                                 (frozenset({"while_raise"}), True)):
        m = parse_module(text)
        with m.context:
            ro.run_pipeline(m, ro.pipeline("O1"), ro.PassOptions(disabled=disabled))
        assert ("stablehlo.while" in str(m)) == loop_stays


# -- gradients through raised loops ------------------------------------------------------------------
def _grad(loss, args, level):
    nums = tuple(range(len(args)))
    c = reactant.compile(lambda *a: reactant.gradient(loss, *a, argnums=nums), loops="keep", optimize=level)
    return [np.asarray(x) for x in c(*[reactant.to_rarray(a) for a in args])]


GRADS = {
    "doitgen": (lambda A, C: np.sum(doitgen(A, C) ** 2),
                lambda A, C: jnp.sum(jnp.einsum("rqs,sp->rqp", A, C) ** 2), RAISED["doitgen"][1]),
    "row_map": (lambda x, w: np.sum(row_map(x, w) ** 2),
                lambda x, w: jnp.sum((jnp.tanh(x @ w) * 2.0 + jnp.sum(x, axis=1, keepdims=True)) ** 2),
                RAISED["row_map"][1]),
    "column_sums_of_exp": (lambda x: np.sum(np.sin(column_sums_of_exp(x))),
                           lambda x: jnp.sum(jnp.sin(jnp.sum(jnp.exp(x), axis=0))), FLOAT_SUMS["column_sums_of_exp"][1]),
    "outer_rows": (lambda x, y: np.sum(np.cos(outer_rows(x, y))),
                   lambda x, y: jnp.sum(jnp.cos(jnp.einsum("ni,nj->nij", x, y))), RAISED["outer_rows"][1]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradient_through_raised_loop_equals_unraised_and_jax(name):
    loss, jloss, args = GRADS[name]
    nums = tuple(range(len(args)))
    c = reactant.compile(lambda *a: reactant.gradient(loss, *a, argnums=nums), loops="keep")
    # (a float sum's loop stays without fast math: its derivative loop is raised)
    assert ("stablehlo.while" in reactant.code_hlo(c, *[reactant.to_rarray(a) for a in args])) \
        == (name in FLOAT_SUMS)
    raised = _grad(loss, args, "O2")
    unraised = _grad(loss, args, "O0")
    want = jax.grad(jloss, argnums=tuple(range(len(args))))(*args)
    for r, u, w in zip(raised, unraised, want):
        np.testing.assert_allclose(r, u, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(r, np.asarray(w), rtol=1e-10, atol=1e-10)


# -- list comprehensions turned into arrays (concat_of_rows_raise) ----------------------------------
def list_of_ratios(x):
    return np.asarray([np.sum(x[i]) / np.max(x[i]) for i in range(x.shape[0])])


def stacked_row_products(x, w):
    return np.stack([np.tanh(x[i] @ w) for i in range(x.shape[0])])


def prefix_sums_list(x):  # slices that grow: not one computation per row
    return np.array([x[:i + 1].sum() for i in range(x.shape[0])])


COMPREHENSIONS = {
    "list_of_ratios": (list_of_ratios, (RNG.standard_normal((9, 7)),), True),
    "stacked_row_products": (stacked_row_products, (RNG.standard_normal((6, 4)), RNG.standard_normal((4, 3))), True),
    "prefix_sums_list": (prefix_sums_list, (RNG.standard_normal(6),), False),
}


@pytest.mark.parametrize("name", sorted(COMPREHENSIONS))
def test_list_comprehension_of_rows_is_one_batched_computation(name):
    f, args, batched = COMPREHENSIONS[name]
    c = reactant.compile(f)
    ra = [reactant.to_rarray(a) for a in args]
    text = reactant.code_hlo(c, *ra)
    assert ("concatenate" not in text and text.count("stablehlo.slice") <= 1) == batched, text
    got = np.asarray(c(*ra))
    np.testing.assert_allclose(got, f(*args), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, np.asarray(reactant.compile(f, optimize="O0")(*ra)), rtol=1e-13, atol=1e-13)
