"""The ``reroll`` pass: long runs of identical straight-line blocks become one
``stablehlo.while``; the program computes the same values before and after."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import reactant
from reactant.ir.context import parse_module, to_text
from reactant.optimize import PassOptions, pipeline, run_pipeline

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
from bench_compile_scale import _np_program  # noqa: E402


def _run_text(text, inputs):
    import jax
    import jax.extend  # noqa: F401
    import jaxlib.xla_client as xc

    b = jax.extend.backend.get_backend()
    dev = b.devices()[0]
    exe = b.compile_and_load(text, xc.DeviceList((dev,)), xc.CompileOptions())
    return [np.asarray(o) for o in exe.execute([jax.device_put(x, dev) for x in inputs])]


def _rerolled(text: str, options: PassOptions | None = None) -> str:
    m = parse_module(text)
    run_pipeline(m, ["reroll"], options)
    return to_text(m)


def _same_results(src: str, shapes, rtol=1e-5):
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    out = _rerolled(src)
    for a, b in zip(_run_text(src, inputs), _run_text(out, inputs)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-6)
    return out


# -- traced programs (benchmarks/bench_compile_scale.py) -----------------------------------------
@pytest.mark.parametrize("name,reps", [("stencil", 64), ("loop_kernel", 8), ("chain", 64)])
def test_unrolled_benchmark_programs_roll(name, reps):
    f, args = _np_program(name, reps)
    rargs = [reactant.to_rarray(a) for a in args]
    rolled = reactant.code_hlo(reactant.compile(f, loops="unroll"), *rargs, optimize=["inline", "reroll"])
    assert rolled.count("stablehlo.while") == 1
    # (NumPy's values: XLA compiling the unrolled program for a reference costs seconds)
    ref = f(*[np.array(a, copy=True) for a in args])
    got = reactant.compile(f, loops="unroll", optimize=["inline", "reroll"])(*[reactant.to_rarray(a) for a in args])
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-10, atol=1e-10)
    # the O2 pipeline rolls too, and computes the same
    o2 = reactant.compile(f, loops="unroll", optimize="O2")(*[reactant.to_rarray(a) for a in args])
    np.testing.assert_allclose(np.asarray(o2), ref, rtol=1e-10, atol=1e-10)


def test_disabled_by_option():
    f, args = _np_program("stencil", 64)
    text = reactant.code_hlo(reactant.compile(f, loops="unroll"), reactant.to_rarray(args[0]), optimize=False)
    assert "stablehlo.while" not in _rerolled(text, PassOptions(disabled={"reroll"}))
    assert "stablehlo.while" in _rerolled(text)
    assert "reroll" in pipeline("O2") and "reroll" in pipeline("O1") and "reroll" in pipeline("O3")


def test_gradient_through_rolled_loop():
    import jax
    import jax.numpy as jnp

    def loss_np(x, w):
        for _ in range(120):
            x = np.tanh(x * w) + 0.5 * x
        return np.sum(x * x)

    def loss_jnp(x, w):
        for _ in range(120):
            x = jnp.tanh(x * w) + 0.5 * x
        return jnp.sum(x * x)

    def g(x, w):
        return reactant.gradient(loss_np, x, w, argnums=(0, 1))

    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(6) * 0.5, rng.standard_normal(6) * 0.5
    cf = reactant.compile(g, loops="unroll", optimize="O2")
    hlo = reactant.code_hlo(cf, reactant.to_rarray(x), reactant.to_rarray(w))
    assert "stablehlo.while" in hlo
    gx, gw = cf(reactant.to_rarray(x), reactant.to_rarray(w))
    jax.config.update("jax_enable_x64", True)  # as the AD tests do
    jx, jw = jax.grad(loss_jnp, argnums=(0, 1))(jnp.asarray(x, jnp.float64), jnp.asarray(w, jnp.float64))
    jx, jw = np.asarray(jx), np.asarray(jw)
    np.testing.assert_allclose(np.asarray(gx), jx, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(np.asarray(gw), jw, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["mlp_stacked", "mlp_grad"])
def test_deep_mlp_gradient_rolled_matches_jax(name):
    import jax
    import jax.numpy as jnp

    reps = 150  # 750-1500 ops: enough to roll (120 are not)
    f, args = _np_program(name, reps)
    cf = reactant.compile(f, loops="unroll", optimize="O2")
    hlo = reactant.code_hlo(cf, *[reactant.to_rarray(a) for a in args])
    # the stacked weights roll into a forward and a reverse loop; per-layer weights stay unrolled
    # (stacking them would cost XLA one kernel per gradient output)
    assert (hlo.count("stablehlo.while") >= 2) == (name == "mlp_stacked")
    got = cf(*[reactant.to_rarray(a) for a in args])
    jax.config.update("jax_enable_x64", True)

    def loss(ws, x):
        for k in range(reps):
            x = jnp.tanh(x @ ws[k])
        return jnp.sum(x * x)
    ws = args[0] if name == "mlp_stacked" else [jnp.asarray(w) for w in args[0]]
    want = jax.grad(loss)(ws, jnp.asarray(args[1]))
    if name == "mlp_stacked":
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-12)
    else:
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-12)


# -- hand-written programs ----------------------------------------------------------------------
T = "tensor<4xf32>"


def _program(reps: int, block, *, prefix=(), results=("x",), nargs=2) -> str:
    """A @main over ``nargs`` tensor<4xf32> arguments %a0.. whose body is ``prefix`` then
    ``reps`` blocks; ``block(k, env)`` returns lines and updates ``env`` (name -> SSA value)."""
    env = {"x": "%a0", "w": "%a1", "xp": "%a0"}
    lines = list(prefix)
    for k in range(reps):
        lines += block(k, env)
    ret = ", ".join(env[r] for r in results)
    args = ", ".join(f"%a{i}: {T}" for i in range(nargs))
    body = "\n    ".join(lines)
    return (f"func.func public @main({args}) -> ({', '.join([T] * len(results))}) {{\n    {body}\n"
            f"    return {ret} : {', '.join([T] * len(results))}\n}}")


def _unary_chain(k: int, src: str, n: int, ops=("sine",)) -> tuple[list[str], str]:
    """``n`` unary ops ``%t{k}_i`` (cycling through ``ops``) applied in turn to ``src``:
    (their lines, the last value)."""
    lines, t = [], src
    for i in range(n):
        lines.append(f"%t{k}_{i} = stablehlo.{ops[i % len(ops)]} {t} : {T}")
        t = f"%t{k}_{i}"
    return lines, t


_ZERO = "%z = stablehlo.constant dense<0.0> : tensor<f32>"


def _reduce_block(k: int, env: dict, src: str, src_type: str, combiner: str) -> list[str]:
    """A block adding ``reduce(src)`` (init ``%z``, see ``_ZERO``) to a chain of 12 sines of x."""
    out = [f"%r{k} = stablehlo.reduce({src} init: %z) applies {combiner} across dimensions = [0] "
           f": ({src_type}, tensor<f32>) -> tensor<f32>",
           f"%b{k} = stablehlo.broadcast_in_dim %r{k}, dims = [] : (tensor<f32>) -> {T}"]
    chain, t = _unary_chain(k, env["x"], 12)
    out += chain + [f"%x{k} = stablehlo.add {t}, %b{k} : {T}"]
    env["x"] = f"%x{k}"
    return out


def _chain_block(length: int, *, const=lambda k: 0.5, two_back=False, use_w=True):
    def block(k, env):
        x = env["x"]
        out = []
        c = f"%c{k}"
        out.append(f"{c} = stablehlo.constant dense<{const(k)!r}> : {T}")
        t = x
        for i in range(length):
            n = f"%t{k}_{i}"
            op = ("stablehlo.sine", "stablehlo.tanh", "stablehlo.cosine")[i % 3]
            out.append(f"{n} = {op} {t} : {T}")
            t = n
        m = f"%m{k}"
        src = env["xp"] if two_back else x
        out.append(f"{m} = stablehlo.multiply {src}, {c} : {T}")
        y = f"%y{k}"
        out.append(f"{y} = stablehlo.add {t}, {m} : {T}")
        if use_w:
            z = f"%z{k}"
            out.append(f"{z} = stablehlo.multiply {y}, %a1 : {T}")
            y = z
        env["xp"], env["x"] = x, y
        env["last_t"] = t
        return out
    return block


def test_chain_with_invariant_rolls():
    text = _program(40, _chain_block(12))
    out = _same_results(text, [(4,), (4,)])
    assert out.count("stablehlo.while") == 1


def test_value_of_last_block_used_after_run():
    # %t of the last block is not carried: that block stays unrolled, the rest is rolled
    def block(k, env):
        out = _chain_block(12)(k, env)
        env["t"] = env["last_t"]
        return out
    text = _program(40, block, results=("x", "t"))
    out = _same_results(text, [(4,), (4,)])
    assert out.count("stablehlo.while") == 1


def test_invariant_defined_before_run():
    prefix = [f"%cc = stablehlo.constant dense<0.25> : {T}", f"%ww = stablehlo.multiply %a1, %cc : {T}"]

    def block(k, env):
        x = env["x"]
        out = [f"%s{k} = stablehlo.sine {x} : {T}"]
        for i in range(14):
            out.append(f"%u{k}_{i} = stablehlo.multiply {'%s' + str(k) if i == 0 else f'%u{k}_{i - 1}'}, %ww : {T}")
        out.append(f"%x{k} = stablehlo.add %u{k}_13, {x} : {T}")
        env["x"] = f"%x{k}"
        return out
    text = _program(40, block, prefix=prefix)
    out = _same_results(text, [(4,), (4,)])
    assert out.count("stablehlo.while") == 1


def test_value_used_two_blocks_later_does_not_roll():
    # block k reads u of block k-2 at the same place in the block (2 blocks back whatever the
    # block boundary); 24 blocks of 30 ops (at twice the period: 12 blocks, too few)
    def block(k, env):
        u_prev2 = env.get("u1", "%a1")
        out = [f"%u{k} = stablehlo.add {u_prev2}, {env['x']} : {T}"]
        t = f"%u{k}"
        for i in range(28):
            op = ("stablehlo.sine", "stablehlo.tanh", "stablehlo.cosine")[i % 3]
            out.append(f"%t{k}_{i} = {op} {t} : {T}")
            t = f"%t{k}_{i}"
        out.append(f"%x{k} = stablehlo.multiply {t}, {env['x']} : {T}")
        env["u1"], env["x"] = env.get("u0", "%a1"), f"%x{k}"
        env["u0"] = f"%u{k}"
        return out
    text = _program(24, block)
    assert "stablehlo.while" not in _same_results(text, [(4,), (4,)])
    # the same blocks reading u of block k-1 roll
    def block1(k, env):
        out = block(k, env)
        env["u1"] = env["u0"]
        return out
    assert "stablehlo.while" in _same_results(_program(24, block1), [(4,), (4,)])


def test_blocks_differing_in_a_small_constant_read_it_from_a_table():
    text = _program(40, _chain_block(12, const=lambda k: 0.5 + 0.01 * k))
    out = _same_results(text, [(4,), (4,)], rtol=1e-6)
    assert out.count("stablehlo.while") == 1
    # the 40 blocks' constants, one row each (the first block reads the arguments where the
    # others read the values carried from the block before: it is the loop's first step too)
    assert "tensor<40x4xf32>" in out
    assert "stablehlo.dynamic_slice" in out


def test_blocks_differing_in_a_large_constant_do_not_roll():
    big = "tensor<300xf32>"

    def block(k, env):
        const = f"%c{k} = stablehlo.constant dense<{0.5 + 0.01 * k!r}> : {big}"
        return [const] + _reduce_block(k, env, f"%c{k}", big, "stablehlo.add")
    text = _program(40, block, prefix=[_ZERO])
    assert "stablehlo.while" not in _same_results(text, [(4,), (4,)])


def test_blocks_reading_one_argument_each_stack_them():
    def block(k, env):
        x = env["x"]
        out = []
        chain, t = _unary_chain(k, x, 14, ("sine", "tanh"))
        out += chain
        out.append(f"%x{k} = stablehlo.multiply {t}, %a{1 + k % 20} : {T}")
        env["x"] = f"%x{k}"
        return out
    text = _program(40, block, nargs=21)
    out = _same_results(text, [(4,)] * 21)
    assert out.count("stablehlo.while") == 1 and "stablehlo.concatenate" in out


def _slicing_block(row):
    tab = "tensor<200x4xf32>"

    def block(k, env):
        x, r = env["x"], row(k)
        out = [f"%s{k} = stablehlo.slice %a1 [{r}:{r + 1}, 0:4] : ({tab}) -> tensor<1x4xf32>",
               f"%q{k} = stablehlo.slice %a1 [{2 * r + 1}:{2 * r + 2}, 0:4:2] : ({tab}) -> tensor<1x2xf32>",
               f"%r{k} = stablehlo.reshape %s{k} : (tensor<1x4xf32>) -> {T}",
               f"%u{k} = stablehlo.reshape %q{k} : (tensor<1x2xf32>) -> tensor<2xf32>",
               f"%v{k} = stablehlo.concatenate %u{k}, %u{k}, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> {T}"]
        chain, t = _unary_chain(k, x, 10, ("sine", "tanh"))
        out += chain
        out.append(f"%w{k} = stablehlo.multiply {t}, %r{k} : {T}")
        out.append(f"%x{k} = stablehlo.add %w{k}, %v{k} : {T}")
        env["x"] = f"%x{k}"
        return out
    return block


def test_blocks_slicing_at_moving_offsets_roll():
    # block k reads rows k and 2k+1 of a table: offsets affine in k (a strided slice too)
    text = _program(40, _slicing_block(lambda k: k)).replace(f"%a1: {T}", "%a1: tensor<200x4xf32>")
    out = _same_results(text, [(4,), (200, 4)])
    assert out.count("stablehlo.while") == 1 and "stablehlo.dynamic_slice" in out
    # offsets that jump (k * k mod 97) are not affine: not rolled
    jump = _program(40, _slicing_block(lambda k: k * k % 97)).replace(f"%a1: {T}", "%a1: tensor<200x4xf32>")
    assert "stablehlo.while" not in _same_results(jump, [(4,), (200, 4)])


def test_block_reading_a_value_of_a_block_three_back_computes_the_same():
    # block k reads block k-3's result: outside the two blocks a match compares, inside the
    # run: a rolled loop cannot read it, whatever the codes say
    def block(k, env):
        hist = env.setdefault("hist", ["%a0", "%a0", "%a0"])
        out = [f"%s{k} = stablehlo.add {env['x']}, {hist[-3]} : {T}"]
        chain, t = _unary_chain(k, f"%s{k}", 14, ("sine", "tanh"))
        out += chain
        env["x"] = t
        hist.append(t)
        return out
    _same_results(_program(40, block), [(4,), (4,)])


def test_blocks_differing_in_an_attribute_do_not_roll():
    def block(k, env):
        x = env["x"]
        out = [f"%s{k} = stablehlo.slice {x} [{k % 2}:{k % 2 + 2}] : ({T}) -> tensor<2xf32>",
               f"%p{k} = stablehlo.constant dense<0.0> : tensor<f32>",
               f"%q{k} = stablehlo.pad %s{k}, %p{k}, low = [{k % 3}], high = [{2 - k % 3}], interior = [0] "
               f": (tensor<2xf32>, tensor<f32>) -> {T}"]
        t = f"%q{k}"
        for i in range(12):
            out.append(f"%v{k}_{i} = stablehlo.tanh {t} : {T}")
            t = f"%v{k}_{i}"
        out.append(f"%x{k} = stablehlo.add {t}, {x} : {T}")
        env["x"] = f"%x{k}"
        return out
    # periods 2 and 3 combine to a period of 6 blocks: 40 blocks are fewer than 16 of those
    text = _program(40, block)
    assert "stablehlo.while" not in _same_results(text, [(4,), (4,)])


def test_blocks_with_a_reduction_roll():
    # the traced NumPy program: each step normalizes by a norm (a stablehlo.reduce per block)
    def f(x):
        for k in range(60):
            x = np.tanh(x * 1.5) + 0.1 * x
            x = x / np.sqrt(np.sum(x * x))
        return x
    x = np.random.default_rng(0).standard_normal(16)
    cf = reactant.compile(f, loops="unroll", optimize=["inline", "reroll"])
    hlo = reactant.code_hlo(cf, reactant.to_rarray(x))
    # (the last block, whose value is returned, may stay after the loop)
    assert hlo.count("stablehlo.while") == 1 and hlo.count("stablehlo.reduce") <= 2
    ref = reactant.compile(f, loops="unroll", optimize="O0")(reactant.to_rarray(x))
    np.testing.assert_allclose(np.asarray(cf(reactant.to_rarray(x))), np.asarray(ref), rtol=1e-12, atol=1e-14)
    want = x.copy()
    for _ in range(60):
        want = np.tanh(want * 1.5) + 0.1 * want
        want = want / np.sqrt(np.sum(want * want))
    np.testing.assert_allclose(np.asarray(ref), want, rtol=1e-10)


def test_reductions_with_different_combiners_do_not_match():
    def block(k, env):
        return _reduce_block(k, env, env["x"], T, "stablehlo.add" if k % 2 else "stablehlo.maximum")
    text = _program(20, block, prefix=[_ZERO])
    # period 2 blocks (add, max): 10 repeats of 30 ops are too few; with period 1 they differ
    assert "stablehlo.while" not in _same_results(text, [(4,), (4,)])
    # 60 blocks: rolled with the two combiners kept apart (double blocks)
    text = _program(60, block, prefix=[_ZERO])
    out = _same_results(text, [(4,), (4,)])
    assert out.count("stablehlo.while") == 1
    body = out.split("stablehlo.while")[1]
    assert "stablehlo.maximum" in body and "stablehlo.add" in body


def test_too_few_repetitions_do_not_roll():
    text = _program(10, _chain_block(40))
    assert "stablehlo.while" not in _same_results(text, [(4,), (4,)])


def test_complex_constants_roll():
    # reading a complex constant's value attribute aborts the process: compared by text
    ct = "tensor<2xcomplex<f32>>"
    lines, prev = [], "%a0"
    for k in range(40):
        lines.append(f"%c{k} = stablehlo.constant dense<(1.0,0.5)> : {ct}")
        for i in range(14):
            lines.append(f"%v{k}_{i} = stablehlo.multiply {prev}, %c{k} : {ct}")
            prev = f"%v{k}_{i}"
    body = "\n    ".join(lines)
    text = f"func.func public @main(%a0: {ct}) -> {ct} {{\n    {body}\n    return {prev} : {ct}\n}}"
    out = _rerolled(text)
    assert out.count("stablehlo.while") == 1
    x = (np.random.default_rng(0).standard_normal(2) * 0.1).astype(np.complex64)
    np.testing.assert_allclose(_run_text(out, [x])[0], _run_text(text, [x])[0], rtol=1e-4)


# -- lists appended in unrolled loops; blocks heavy for XLA -----------------------------------------
def _rnn(xs, Wx, Wh, b):
    h = np.zeros(Wh.shape[0])
    hist = []
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh + b)
        hist.append(h)
    return np.stack(hist), h


def _rnn_args():
    rng = np.random.default_rng(3)
    return [rng.standard_normal((16, 8)), 0.4 * rng.standard_normal((8, 16)), 0.3 * rng.standard_normal((16, 16)),
            0.1 * rng.standard_normal(16)]


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_a_list_appended_in_an_unrolled_loop_rolls_with_its_rows_collected(level):
    # 16 steps of 11 ops, two of them dots: too few ops to roll by count, heavy enough for XLA
    # (each dot compiles as a kernel of its own); the history rows are written into an output
    # the loop carries, and np.stack of the list reads it whole
    args = _rnn_args()
    cf = reactant.compile(_rnn, loops="unroll", optimize=level)
    dev = [reactant.to_rarray(a) for a in args]
    hlo = reactant.code_hlo(cf, *dev)
    assert hlo.count("stablehlo.while") == 1 and "stablehlo.dynamic_update_slice" in hlo
    got, want = cf(*dev), _rnn(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)


def _two_states(xs, W, U):
    # an LSTM-like pair of states, both starting as np.zeros (two constants of one type and
    # value; each first read by an op on traced values, as in the later steps)
    h, c = np.zeros(W.shape[1]), np.zeros(W.shape[1])
    hist = []
    for x in xs:
        c = c + np.tanh(x @ W + h @ U)
        h = np.tanh(c) * 0.9
        hist.append(h)
    return np.stack(hist), h, c


@pytest.mark.parametrize("prog", ["rnn", "two_states"])
def test_states_starting_as_constants_roll_every_step(prog):
    # the initial state is a constant op inside the first step only: moved above the run, the
    # first step is block 0 of the loop like the others (no peeled step before the loop, no
    # dot left outside it)
    rng = np.random.default_rng(7)
    if prog == "rnn":
        fn, args = _rnn, _rnn_args()
    else:
        fn, args = _two_states, [rng.standard_normal((16, 6)), 0.4 * rng.standard_normal((6, 8)),
                                 0.3 * rng.standard_normal((8, 8))]
    cf = reactant.compile(fn, loops="unroll", optimize="O2")
    dev = [reactant.to_rarray(a) for a in args]
    hlo = reactant.code_hlo(cf, *dev)
    assert hlo.count("stablehlo.while") == 1
    body = hlo[hlo.index("stablehlo.while"):]
    assert hlo.count("stablehlo.dot_general") == body.count("stablehlo.dot_general") == 2, hlo
    for g, w in zip(cf(*dev), fn(*args)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)


def _zeros_state_in_place(xs, Wh, out):
    """As NumPy users write it: a state made with np.zeros, updated in place, each step written
    into a row of an argument (the steps roll from the first: it reads the zeros)."""
    h = np.zeros(Wh.shape[0])
    for t in range(xs.shape[0]):
        h[:] = np.tanh(xs[t] + h @ Wh)
        out[t] = h


@pytest.mark.parametrize("loops,level", [(lp, o) for lp in ("auto", "keep", "unroll") for o in ("O0", "O1", "O2")])
def test_a_zeros_state_updated_in_place_in_every_mode(loops, level):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "semantics"))
    from inplace_check import check

    rng = np.random.default_rng(9)
    args = [rng.standard_normal((24, 8)), 0.3 * rng.standard_normal((8, 8)), np.zeros((24, 8))]
    check(_zeros_state_in_place, *args, loops=loops, optimize=level)
    if loops == "unroll" and level != "O0":  # all 24 steps in the loop: one product in the module
        hlo = reactant.code_hlo(reactant.compile(_zeros_state_in_place, loops=loops, optimize=level),
                                *[reactant.to_rarray(a) for a in args])
        assert hlo.count("stablehlo.while") == 1 and hlo.count("stablehlo.dot_general") == 1, hlo


def _reset_midway(xs, Wx, Wh, b):
    # the state starts as zeros and is reset to zeros halfway: the steps reading the constant
    # are not the steps reading the carried state (two runs of 20 steps, each rolled)
    h = np.zeros(Wh.shape[0])
    hist = []
    for t, x in enumerate(xs):
        if t == len(xs) // 2:
            h = np.zeros(Wh.shape[0])
        h = np.tanh(x @ Wx + h @ Wh + b)
        hist.append(h)
    return np.stack(hist), h


@pytest.mark.parametrize("loops,level", [(lp, o) for lp in ("auto", "unroll") for o in ("O0", "O1", "O2")])
def test_a_state_reset_midway_keeps_numpys_values(loops, level):
    args = _rnn_args()
    args[0] = np.random.default_rng(8).standard_normal((40, 8))
    cf = reactant.compile(_reset_midway, loops=loops, optimize=level)
    dev = [reactant.to_rarray(a) for a in args]
    for g, w in zip(cf(*dev), _reset_midway(*args)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)
    if loops == "unroll" and level == "O2":
        assert reactant.code_hlo(cf, *dev).count("stablehlo.while") == 2


def test_list_rows_read_one_by_one_give_numpys_values():
    # rows read on their own (not through a concatenation) are not collected: whatever rolls,
    # the values are NumPy's
    def f(xs, W):
        h = np.zeros(W.shape[1])
        hist = []
        for x in xs:
            h = np.tanh(x @ W + 0.5 * np.sum(h))
            hist.append(h)
        return hist[0] * 2.0 + hist[7] - hist[-1], np.concatenate(hist[3:9])

    rng = np.random.default_rng(4)
    args = [rng.standard_normal((24, 6)), 0.3 * rng.standard_normal((6, 5))]
    for level in ("O0", "O2"):
        got = reactant.compile(f, loops="unroll", optimize=level)(*[reactant.to_rarray(a) for a in args])
        for g, w in zip(got, f(*args)):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("heavy", [True, False])
def test_blocks_weigh_what_xla_compiles(heavy):
    # 32 steps of 2-3 ops: 100 ops do not roll as elementwise ops; as matrix-vector products
    # (a kernel each for XLA) they do
    def f(x, W):
        for _ in range(32):
            x = np.tanh(W @ x) if heavy else np.tanh(x * 0.5 + 0.1)
        return x

    rng = np.random.default_rng(5)
    args = [rng.standard_normal(12), 0.3 * rng.standard_normal((12, 12))]
    cf = reactant.compile(f, loops="unroll", optimize="O2")
    dev = [reactant.to_rarray(a) for a in args]
    assert ("stablehlo.while" in reactant.code_hlo(cf, *dev)) == heavy
    np.testing.assert_allclose(np.asarray(cf(*dev)), f(*args), rtol=1e-12, atol=1e-12)


def _rnn_into(xs, Wh, h, out):
    """As NumPy users write it: the state updated in place, each step's copy appended, the
    history stacked into an argument and part of it corrected through a view."""
    hist = []
    for t in range(xs.shape[0]):
        h[:] = np.tanh(xs[t] + h @ Wh)
        hist.append(h.copy())
    out[...] = np.stack(hist)
    tail = out[1:, :4]
    tail -= 0.5 * np.stack(hist)[:-1, :4]


@pytest.mark.parametrize("loops,level", [(lp, o) for lp in ("auto", "keep", "unroll") for o in ("O0", "O1", "O2")])
def test_history_of_an_in_place_state_written_into_an_argument_in_every_mode(loops, level):
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "semantics"))
    from inplace_check import check

    rng = np.random.default_rng(6)
    args = [rng.standard_normal((32, 8)), 0.3 * rng.standard_normal((8, 8)), np.zeros(8), np.zeros((32, 8))]
    try:
        check(_rnn_into, *args, loops=loops, optimize=level)
    except reactant.ReactantError as e:  # a list appended in a loop kept as a loop: the clear error
        assert loops == "keep" and "test_reroll.py" in str(e), e
        return
    if loops == "unroll" and level != "O0":  # the history rolls back into a loop, its rows collected
        dev = [reactant.to_rarray(a) for a in args]
        hlo = reactant.code_hlo(reactant.compile(_rnn_into, loops=loops, optimize=level), *dev)
        assert "stablehlo.while" in hlo and "dynamic_update_slice" in hlo
