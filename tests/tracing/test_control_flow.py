"""Control flow: reactant.cond/switch/while_loop/fori_loop/scan and ordinary Python
if/while/for on traced values, against plain Python/NumPy execution; errors; gradients
through each construct against jax.grad of the lax equivalent."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from npcheck import check

import reactant

RNG = np.random.default_rng(0)


def hlo(f, *args):
    return reactant.code_hlo(reactant.compile(f), *reactant.to_rarray(args), optimize=False)


# -- explicit API -----------------------------------------------------------------------------------
@pytest.mark.parametrize("shift", [-10.0, 10.0])
def test_cond(shift):
    x = RNG.standard_normal(5) + shift

    def f(a):
        return reactant.cond(a.sum() > 0, lambda v: np.sin(v) * 2, lambda v: v - 1.0, a)

    check(f, x)
    assert "stablehlo.if" in hlo(f, x)


def test_cond_pytree_operands_and_results():
    def f(a, b):
        return reactant.cond(a[0] > b[0], lambda p: {"s": p[0] + p[1], "d": (p[0] - p[1],)},
                             lambda p: {"s": p[0] * p[1], "d": (p[1],)}, (a, b))

    for _ in range(2):
        check(f, RNG.standard_normal(3), RNG.standard_normal(3))


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 7])
def test_switch(k):
    x = RNG.standard_normal(4)

    def f(a, i):
        return reactant.switch(i, [lambda v: v + 1, lambda v: v * 2, lambda v: -v], a)

    want = [x + 1, x * 2, -x][int(np.clip(k, 0, 2))]
    got = np.asarray(reactant.compile(f)(*reactant.to_rarray((x, np.int32(k)))))
    np.testing.assert_allclose(got, want)


def test_while_loop_and_fori_loop_and_scan():
    x = RNG.standard_normal(3)

    def f(a):
        s, n = reactant.while_loop(lambda c: c[0].sum() < 100, lambda c: (c[0] * 2 + 1, c[1] + 1), (a, 0))
        f_ = reactant.fori_loop(0, 10, lambda i, c: c + i * a, np.zeros(3))
        carry, ys = reactant.scan(lambda c, v: (c + v, c * v), 0.0, a)
        return s, n, f_, carry, ys

    def ref(a):
        s, n = a, 0
        while s.sum() < 100:
            s, n = s * 2 + 1, n + 1
        f_ = np.zeros(3)
        for i in range(10):
            f_ = f_ + i * a
        c, ys = 0.0, []
        for v in a:
            ys.append(c * v)
            c = c + v
        return s, n, f_, c, np.array(ys)

    got = [np.asarray(o) for o in reactant.compile(f)(reactant.to_rarray(x))]
    for g, w in zip(got, ref(x)):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_explicit_api_outside_trace_runs_python():
    assert reactant.cond(True, lambda: 1, lambda: 2) == 1
    assert reactant.fori_loop(0, 4, lambda i, c: c + i, 0) == 6
    assert reactant.while_loop(lambda c: c < 5, lambda c: c + 2, 0) == 6


# -- Python statements ------------------------------------------------------------------------------
def branchy(x, t):
    if x.sum() > t:
        y = np.sin(x)
        z = 2.0
    elif x.max() > 0.5:
        y = np.cos(x)
        z = 3.0
    else:
        y = x * 0
        z = -1.0
    return y * z


@pytest.mark.parametrize("t", [-3.0, 0.0, 3.0])
def test_python_if_elif_else(t):
    for _ in range(3):
        check(branchy, RNG.standard_normal(4), t)
    assert "stablehlo.if" in hlo(branchy, RNG.standard_normal(4), t)


def nested_loops(x, n):
    acc = np.zeros_like(x)
    i = 0
    while i < n:
        for j in range(3):
            if x[j % x.shape[0]] > 0:  # a branch on a traced scalar inside loops
                acc = acc + x * j
            else:
                acc = acc - 1.0
        i += 1
    return acc, i


def test_nested_loops_and_branches():
    x = RNG.standard_normal(4)
    check(nested_loops, x, np.int32(3))
    text = hlo(nested_loops, x, np.int32(3))
    assert "stablehlo.while" in text and "stablehlo.if" in text


def for_traced_bound(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i % 4] * i
    for i in range(1, n, 2):
        s = s - i
    for i in range(n, 0, -3):
        s = s + 0.5 * i
    return s


@pytest.mark.parametrize("n", [0, 1, 5, 8])
def test_for_range_with_traced_bounds(n):
    check(for_traced_bound, RNG.standard_normal(4), np.int32(n))


@pytest.mark.parametrize("bounds", [(0, 6, 1), (2, 9, 1), (1, 10, 3), (9, -1, -2), (5, 5, 1), (7, 2, 1)])
@pytest.mark.parametrize("mode", ["keep", "auto", "unroll"])
def test_kept_static_range_index_and_last_value(bounds, mode):
    """A kept loop over constant bounds: the trip count is a constant and the index is the
    counter with only the terms it needs (no ``* 1``, no ``+ 0``); the index in the body, the
    writes it addresses and its value after the loop are NumPy's, zero-trip loops included."""
    start, stop, step = bounds

    def f(x, out):
        i = -7
        for i in range(start, stop, step):
            out[i] = x[i] * 2.0 + i
        return out.sum() + i

    x, out = RNG.standard_normal(12), np.zeros(12)
    want_out = out.copy()
    want = f(x, want_out)
    cf = reactant.compile(f, loops=mode)
    dev = reactant.to_rarray(out)
    got = cf(reactant.to_rarray(x), dev)
    np.testing.assert_allclose(np.asarray(got), want)
    np.testing.assert_allclose(np.asarray(dev), want_out)
    if mode == "keep" and len(range(start, stop, step)):
        text = reactant.code_hlo(cf, reactant.to_rarray(x), reactant.to_rarray(out), optimize=False)
        assert "stablehlo.maximum" not in text and "stablehlo.divide" not in text  # (the trip count)
        counter_ops = [line for line in text.splitlines() if line.rstrip().endswith(": tensor<i32>")]
        assert not any("stablehlo.multiply" in line for line in counter_ops) or step != 1
        assert any("stablehlo.multiply" in line for line in counter_ops) or step == 1


@pytest.mark.parametrize("n", [0, 1, 4])
def test_loop_target_after_a_traced_range_that_may_not_run(n):
    """``for i in range(n)`` with a traced ``n``: after it, ``i`` is the last index, or the
    value it had before when the loop ran no iteration (as Python leaves it)."""
    def f(x, n):
        i = 7
        for i in range(n):
            x = x + i
        j = np.int32(-2)
        for j in range(2, n):
            x = x * 2.0
        return x * 10.0 + i + 100.0 * j

    check(f, RNG.standard_normal(3), np.int32(n))


def test_for_range_static_is_unrolled_or_kept():
    def f(x):
        for i in range(4):
            x = x * 1.5 + i
        return x

    x = RNG.standard_normal(3)
    check(f, x)
    assert "stablehlo.while" not in hlo(f, x)
    kept = reactant.compile(f, loops="keep")
    assert "stablehlo.while" in reactant.code_hlo(kept, reactant.to_rarray(x), optimize=False)
    np.testing.assert_allclose(np.asarray(kept(reactant.to_rarray(x))), f(x))

    def g(x):
        for i in range(reactant.keep(4)):
            x = x * 1.5 + i
        return x

    assert "stablehlo.while" in hlo(g, x)
    check(g, x)


def test_loop_with_pytree_carry_and_inplace_updates():
    def f(x):
        state = {"pos": x, "hist": np.zeros((3, x.shape[0]))}
        k = 0
        while state["pos"].sum() < 50:
            state = {"pos": state["pos"] * 2 + 1, "hist": state["hist"]}
            state["hist"][k % 3] = state["pos"]
            k += 1
        return state["pos"], state["hist"], k

    check(f, np.abs(RNG.standard_normal(3)))


def test_while_with_outer_mutation():
    def f(x):
        out = np.zeros_like(x)
        i = 0
        while out.sum() < x.sum() * 3:
            out[i % 3] += x[i % 3] + 1
            i += 1
        return out

    check(f, np.abs(RNG.standard_normal(3)))


def test_carry_dtype_promotion_of_python_numbers():
    def f(x):
        s = 0  # a Python int that becomes float32 in the body
        for i in range(reactant.keep(3)):
            s = s + x[i]
        return s

    check(f, RNG.standard_normal(4).astype(np.float32))


def test_helper_functions_are_converted():
    def helper(v, c):
        if v.sum() > c:
            return_value = v * 2
        else:
            return_value = v / 2
        return return_value

    def f(x):
        return helper(x, 0.0) + helper(x, 100.0)

    check(f, RNG.standard_normal(3))


# -- errors -----------------------------------------------------------------------------------------
def test_variable_defined_in_one_branch_only():
    def f(x):
        if x.sum() > 0:
            y = x * 2
        return y

    with pytest.raises(reactant.ReactantError, match="'y' is assigned only in the true branch") as e:
        reactant.compile(f)(reactant.to_rarray(np.ones(2)))
    assert "test_control_flow.py" in str(e.value)


def test_branch_type_mismatch_names_both_lines():
    def f(x):
        if x.sum() > 0:
            y = x.astype(np.float32)
        else:
            y = x
        return y

    with pytest.raises(reactant.ShapeError) as e:
        reactant.compile(f)(reactant.to_rarray(np.ones(2)))
    msg = str(e.value)
    assert "float32[2]" in msg and "float64[2]" in msg
    line = f.__code__.co_firstlineno
    assert f"test_control_flow.py:{line + 1}" in msg and f"test_control_flow.py:{line + 4}" in msg


def test_loop_carry_shape_change_is_an_error():
    def f(x):
        i = 0
        while i < x.shape[0] + x.sum():
            x = np.concatenate([x, x])
            i += 1
        return x

    with pytest.raises(reactant.ReactantError):
        reactant.compile(f)(reactant.to_rarray(np.ones(2)))


def test_return_break_inside_traced_constructs_are_clear_errors():
    def r(x):
        for _ in range(3):  # a return inside a for loop is lifted to a flag: NumPy's answer
            if x.sum() > 0:
                return x
        return -x

    for v in (np.ones(2), -np.ones(2)):
        np.testing.assert_array_equal(np.asarray(reactant.compile(r)(reactant.to_rarray(v))), r(v))

    def f(x):
        while x.sum() < 10:  # a return inside a while stays a return
            x = x + 1
            if x[0] > 5:
                return x
        return -x

    with pytest.raises(reactant.ConcretizationError, match="while loop containing return") as e:
        reactant.compile(f)(reactant.to_rarray(np.ones(2)))
    assert f"test_control_flow.py:{f.__code__.co_firstlineno + 1}" in str(e.value)

    def g(x):
        while x.sum() < 10:
            x = x + 1
            if x[0] > 5:
                break
        return x

    with pytest.raises(reactant.ConcretizationError, match="while loop containing break"):
        reactant.compile(g)(reactant.to_rarray(np.ones(2)))

    def h(x):  # the same constructs on concrete values keep Python semantics
        for i in range(10):
            if i == 3:
                break
        return x * i

    np.testing.assert_allclose(np.asarray(reactant.compile(h)(reactant.to_rarray(np.ones(2)))), 3.0)


# -- gradients through control flow --------------------------------------------------------------------
def _grad_check(f_np, f_jax, *args, tol=1e-9):
    g = reactant.compile(lambda *a: reactant.gradient(f_np, *a))(*reactant.to_rarray(args))
    with jax.enable_x64(True):
        ref = jax.grad(f_jax)(*args)
    np.testing.assert_allclose(np.asarray(g), np.asarray(ref), rtol=tol, atol=tol)


@pytest.mark.parametrize("shift", [-5.0, 5.0])
def test_grad_through_if(shift):
    x = RNG.standard_normal(4) + shift

    def f(a):
        if a.sum() > 0:
            y = np.sin(a) * a
        else:
            y = np.exp(a)
        return y.sum()

    _grad_check(f, lambda a: jax.lax.cond(a.sum() > 0, lambda v: (jnp.sin(v) * v).sum(),
                                          lambda v: jnp.exp(v).sum(), a), x)


def test_grad_through_switch():
    x = RNG.standard_normal(3)
    _grad_check(lambda a: reactant.switch(1, [np.sum, lambda v: (v ** 3).sum()], a),
                lambda a: jax.lax.switch(1, [jnp.sum, lambda v: (v ** 3).sum()], a), x)


def test_grad_through_fori_and_while():
    x = RNG.standard_normal(3)

    def f(a):
        s = a
        for i in range(reactant.keep(5)):
            s = np.sin(s) * 1.1 + a * i
        return (s ** 2).sum()

    def fj(a):
        return (jax.lax.fori_loop(0, 5, lambda i, s: jnp.sin(s) * 1.1 + a * i, a) ** 2).sum()

    _grad_check(f, fj, x)


def test_grad_through_scan():
    x = RNG.standard_normal(5)

    def f(a):
        c, ys = reactant.scan(lambda c, v: (c * np.cos(v) + v, c * v), 1.0, a)
        return c + ys.sum()

    def fj(a):
        c, ys = jax.lax.scan(lambda c, v: (c * jnp.cos(v) + v, c * v), 1.0, a)
        return c + ys.sum()

    _grad_check(f, fj, x)


def _chain(x, k):
    s = x.sum()
    if s > 5:
        return x - k
    elif s > 1:
        y = x * 10
        if s > 1.4:
            return y + 1
    else:
        return -x
    return y


@pytest.mark.parametrize("v", [[0.5, 1.0], [0.2, 0.3], [3.0, 4.0], [0.6, 0.6]])
def test_early_returns_from_ifs_on_traced_values(v):
    a = np.array(v)
    f = reactant.compile(_chain)
    np.testing.assert_allclose(np.asarray(f(reactant.to_rarray(a), 1)), _chain(a, 1))
    assert f.compile_count == 1


def test_early_return_on_a_concrete_test_keeps_python_semantics():
    def f(x, flag):
        if flag:
            return x * 2
        if x.shape[0] > 5:
            return None  # a path that returns nothing, taken only on the host
        return x + 1

    x = reactant.to_rarray(np.arange(3.0))
    np.testing.assert_allclose(np.asarray(reactant.compile(f)(x, True)), [0, 2, 4])
    np.testing.assert_allclose(np.asarray(reactant.compile(f)(x, False)), [1, 2, 3])


def test_an_early_return_without_a_value_on_every_path_is_a_clear_error():
    def f(x):
        if x.sum() > 1:
            return x

    with pytest.raises(reactant.ReactantError, match="branches return different structures"):
        reactant.compile(f)(reactant.to_rarray(np.ones(3)))


def test_converted_functions_read_rebound_closure_variables():
    def make():
        k = 1.0

        def f(x):
            if x.sum() > 0:  # converted (control flow), cached per function
                return np.sin(x) * k
            return x

        def set_k(v):
            nonlocal k
            k = v

        return f, set_k

    f, set_k = make()
    x = reactant.to_rarray(np.ones(3))
    a = np.asarray(reactant.compile(f)(x))
    set_k(5.0)
    np.testing.assert_allclose(np.asarray(reactant.compile(f)(x)), 5 * a)
