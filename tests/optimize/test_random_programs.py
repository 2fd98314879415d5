"""Property test: random well-typed StableHLO programs give the same results at O0 and O2.

Programs are built from elementwise ops, broadcast_in_dim, reshape, transpose, slice,
concatenate, pad, reduce, dot_general, compare/select, constants and counted while loops
(row maps, one-hot sums, recurrences, pass-through and invariant values) on small f32 tensors;
each is verified, optimized at O2, compiled through PJRT before and after, and run on the
same random inputs.
"""

from __future__ import annotations

import math
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reactant.optimize import pipeline, run_pipeline
from reactant.ir.context import parse_module, to_text
import pytest

pytestmark = pytest.mark.slow  # a hypothesis search: the long-form tier (REACTANT_SLOW=1)

UNARY = ["negate", "abs", "tanh", "sine", "cosine", "exponential", "floor", "sign", "logistic"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum"]
DIRS = ["EQ", "NE", "LT", "LE", "GT", "GE"]
LEVEL = os.environ.get("REACTANT_RANDOM_LEVEL", "O2")  # e.g. O1 to test the patterns alone


def ttype(shape, et="f32"):
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{et}>"


class Gen:
    """Builds one random program; ``draw`` is hypothesis' draw function."""

    def __init__(self, draw):
        self.draw = draw
        self.lines: list[str] = []
        self.args: list[tuple[str, tuple]] = []
        self.pool: list[tuple[str, tuple]] = []  # f32 values
        self.n = 0

    # -- helpers ---------------------------------------------------------------------------
    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def i(self, lo, hi) -> int:
        return self.draw(st.integers(lo, hi))

    def choice(self, xs):
        return xs[self.draw(st.integers(0, len(xs) - 1))]

    def shape(self, max_rank=3):
        r = self.i(0, max_rank)
        return tuple(self.i(1, 4) for _ in range(r))

    def arg(self, shape):
        name = f"%a{len(self.args)}"
        self.args.append((name, shape))
        self.pool.append((name, shape))
        return name

    def emit(self, text, shape):
        v = self.fresh()
        self.lines.append(f"    {v} = {text}")
        self.pool.append((v, shape))
        return v, shape

    def pick(self, pred=lambda s: True):
        """A pool value satisfying ``pred``, preferring recent ones (deeper programs)."""
        cands = [p for p in self.pool if pred(p[1])]
        if not cands:
            return None
        if len(cands) > 3 and self.i(0, 1):
            cands = cands[-3:]
        return self.choice(cands)

    def const(self, shape):
        val = self.choice([0.0, 1.0, -1.0, 0.5, 2.0, 3.0])
        return self.emit(f"stablehlo.constant dense<{val!r}> : {ttype(shape)}", shape)

    def value_of_shape(self, shape):
        same = [p for p in self.pool if p[1] == shape]
        if same and self.i(0, 3):
            return self.choice(same)[0]
        if self.i(0, 1):
            return self.arg(shape)
        return self.const(shape)[0]

    # -- ops ---------------------------------------------------------------------------------
    def op_unary(self):
        x, s = self.pick()
        return self.emit(f"stablehlo.{self.choice(UNARY)} {x} : {ttype(s)}", s)

    def op_binary(self):
        x, s = self.pick()
        y = self.value_of_shape(s)
        return self.emit(f"stablehlo.{self.choice(BINARY)} {x}, {y} : {ttype(s)}", s)

    def op_select(self):
        x, s = self.pick()
        y = self.value_of_shape(s)
        a = self.value_of_shape(s)
        b = self.value_of_shape(s)
        p = self.fresh()
        self.lines.append(f"    {p} = stablehlo.compare {self.choice(DIRS)}, {x}, {y} : "
                          f"({ttype(s)}, {ttype(s)}) -> {ttype(s, 'i1')}")
        return self.emit(f"stablehlo.select {p}, {a}, {b} : {ttype(s, 'i1')}, {ttype(s)}", s)

    def op_broadcast(self):
        x, s = self.pick(lambda s: len(s) <= 2)
        extra = self.i(0, 2)
        rank = len(s) + extra
        dims = sorted(self.draw(st.permutations(list(range(rank))))[:len(s)])
        out = [self.i(1, 3) for _ in range(rank)]
        for k, d in enumerate(dims):
            out[d] = s[k] if s[k] != 1 or self.i(0, 1) else self.i(1, 3)
        out = tuple(out)
        return self.emit(f"stablehlo.broadcast_in_dim {x}, dims = {list(dims)} : ({ttype(s)}) -> {ttype(out)}",
                         out)

    def op_reshape(self):
        x, s = self.pick()
        n = math.prod(s)
        out = []
        rest = n
        while rest > 1 and len(out) < 3:
            divs = [d for d in range(2, rest + 1) if rest % d == 0]
            d = self.choice(divs)
            out.append(d)
            rest //= d
        if rest > 1:
            out.append(rest)
        if self.i(0, 1):
            out.insert(self.i(0, len(out)), 1)
        out = tuple(out)
        return self.emit(f"stablehlo.reshape {x} : ({ttype(s)}) -> {ttype(out)}", out)

    def op_transpose(self):
        x, s = self.pick(lambda s: len(s) >= 2)
        perm = list(self.draw(st.permutations(list(range(len(s))))))
        out = tuple(s[p] for p in perm)
        return self.emit(f"stablehlo.transpose {x}, dims = {perm} : ({ttype(s)}) -> {ttype(out)}", out)

    def op_slice(self):
        x, s = self.pick(lambda s: len(s) >= 1)
        parts, out = [], []
        for n in s:
            a = self.i(0, n - 1)
            b = self.i(a + 1, n)
            t = self.i(1, 2)
            parts.append(f"{a}:{b}" + (f":{t}" if t != 1 else ""))
            out.append(-(-(b - a) // t))
        out = tuple(out)
        return self.emit(f"stablehlo.slice {x} [{', '.join(parts)}] : ({ttype(s)}) -> {ttype(out)}", out)

    def op_concat(self):
        x, s = self.pick(lambda s: len(s) >= 1)
        d = self.i(0, len(s) - 1)
        s2 = list(s)
        s2[d] = self.i(1, 3)
        s2 = tuple(s2)
        y = self.value_of_shape(s2)
        out = list(s)
        out[d] += s2[d]
        out = tuple(out)
        first, second = (x, y) if self.i(0, 1) else (y, x)
        ts = (ttype(s), ttype(s2)) if first == x else (ttype(s2), ttype(s))
        return self.emit(f"stablehlo.concatenate {first}, {second}, dim = {d} : ({ts[0]}, {ts[1]}) -> {ttype(out)}",
                         out)

    def op_pad(self):
        x, s = self.pick(lambda s: len(s) >= 1)
        lo, hi, it, out = [], [], [], []
        for n in s:
            i = self.i(0, 1)
            full = n + max(n - 1, 0) * i
            a = self.i(-1 if full > 1 else 0, 2)
            b = self.i(-1 if full + a > 1 else 0, 2)
            lo.append(a)
            hi.append(b)
            it.append(i)
            out.append(full + a + b)
        out = tuple(out)
        pv = self.const(())[0]
        return self.emit(f"stablehlo.pad {x}, {pv}, low = {lo}, high = {hi}, interior = {it} : "
                         f"({ttype(s)}, tensor<f32>) -> {ttype(out)}", out)

    def op_reduce(self):
        x, s = self.pick(lambda s: len(s) >= 1)
        dims = sorted(set(self.draw(st.lists(st.integers(0, len(s) - 1), min_size=1, max_size=len(s)))))
        out = tuple(n for k, n in enumerate(s) if k not in dims)
        kind = self.choice(["add", "maximum"])
        # the init must be the reducer's identity (XLA may apply it any number of times)
        init = self.emit("stablehlo.constant dense<0.0> : tensor<f32>", ())[0] if kind == "add" else \
            self.emit("stablehlo.constant dense<0xFF800000> : tensor<f32>", ())[0]
        return self.emit(f"stablehlo.reduce({x} init: {init}) applies stablehlo.{kind} across dimensions = "
                         f"{dims} : ({ttype(s)}, tensor<f32>) -> {ttype(out)}", out)

    def op_dot(self):
        x, s = self.pick(lambda s: len(s) >= 1)
        k = self.i(1, len(s))
        lhs_c = sorted(self.draw(st.permutations(list(range(len(s)))))[:k])
        free_r = tuple(self.i(1, 3) for _ in range(self.i(0, 1)))
        rs = tuple(s[d] for d in lhs_c) + free_r
        y = self.value_of_shape(rs)
        rhs_c = list(range(len(lhs_c)))
        out = tuple(n for d, n in enumerate(s) if d not in lhs_c) + free_r
        return self.emit(f"stablehlo.dot_general {x}, {y}, contracting_dims = {lhs_c} x {rhs_c} : "
                         f"({ttype(s)}, {ttype(rs)}) -> {ttype(out)}", out)

    def op_iota(self):
        s = self.shape()
        if not s:
            s = (self.i(1, 4),)
        d = self.i(0, len(s) - 1)
        v = self.fresh()
        self.lines.append(f"    {v} = stablehlo.iota dim = {d} : {ttype(s, 'i32')}")
        return self.emit(f"stablehlo.convert {v} : ({ttype(s, 'i32')}) -> {ttype(s)}", s)


    def op_loop(self):
        """A counted while loop over the rows of a pool value x (i = 0..n-1): a map writing
        f(x[j]) into row j (j = i or n-1-i), a sum of one-hot rows, a plain recurrence,
        a pass-through argument and loop-invariant work."""
        x, s = self.pick(lambda s: len(s) >= 1)
        n, row = s[0], s[1:]
        rt = ttype(s)
        slice_t = ttype((1,) + row)
        y, ys = self.pick()
        yt = ttype(ys)
        c0 = self.fresh()
        self.lines.append(f"    {c0} = stablehlo.constant dense<0> : tensor<i32>")
        z = self.const(s)[0]
        z2 = self.emit(f"stablehlo.constant dense<0.0> : {rt}", s)[0]
        it, am, asum, ast, ap = (self.fresh() for _ in range(5))
        res = self.fresh()
        body = []
        b = body.append
        f = self.fresh
        nn, p, j, k0, r, fr, um, oh, sm, inv, st, one, it1 = (f() for _ in range(13))
        reverse = self.i(0, 1)
        b(f"      {k0} = stablehlo.constant dense<0> : tensor<i32>")
        if reverse:
            nm1 = f()
            b(f"      {nm1} = stablehlo.constant dense<{n - 1}> : tensor<i32>")
            b(f"      {j} = stablehlo.subtract {nm1}, {it} : tensor<i32>")
        else:
            b(f"      {j} = stablehlo.add {it}, {k0} : tensor<i32>")
        idx = ", ".join([j] + [k0] * len(row))
        idx_t = ", ".join(["tensor<i32>"] * (1 + len(row)))
        sizes = [1] + list(row)
        b(f"      {r} = stablehlo.dynamic_slice {x}, {idx}, sizes = {sizes} : ({rt}, {idx_t}) -> {slice_t}")
        b(f"      {fr} = stablehlo.{self.choice(UNARY)} {r} : {slice_t}")
        b(f"      {um} = stablehlo.dynamic_update_slice {am}, {fr}, {idx} : ({rt}, {slice_t}, {idx_t}) -> {rt}")
        b(f"      {oh} = stablehlo.dynamic_update_slice {z2}, {fr}, {idx} : ({rt}, {slice_t}, {idx_t}) -> {rt}")
        b(f"      {sm} = stablehlo.add {asum}, {oh} : {rt}")
        b(f"      {inv} = stablehlo.{self.choice(UNARY)} {ap} : {yt}")
        b(f"      {st} = stablehlo.{self.choice(BINARY)} {ast}, {inv} : {yt}")
        b(f"      {one} = stablehlo.constant dense<1> : tensor<i32>")
        b(f"      {it1} = stablehlo.add {it}, {one} : tensor<i32>")
        types = f"tensor<i32>, {rt}, {rt}, {yt}, {yt}"
        b(f"      stablehlo.return {it1}, {um}, {sm}, {st}, {ap} : {types}")
        self.lines.append(f"    {res}:5 = stablehlo.while({it} = {c0}, {am} = {z}, {asum} = {z2}, {ast} = {y}, {ap} = {y}) : {types}")
        self.lines.append("    cond {")
        self.lines.append(f"      {nn} = stablehlo.constant dense<{n}> : tensor<i32>")
        self.lines.append(f"      {p} = stablehlo.compare LT, {it}, {nn}, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>")
        self.lines.append(f"      stablehlo.return {p} : tensor<i1>")
        self.lines.append("    } do {")
        self.lines.extend(body)
        self.lines.append("    }")
        outs = [(f"{res}#1", s), (f"{res}#2", s), (f"{res}#3", ys), (f"{res}#4", ys)]
        for o in outs:
            if self.i(0, 2):
                self.pool.append(o)
        return outs[0]

    OPS = ["op_unary", "op_binary", "op_select", "op_broadcast", "op_reshape", "op_transpose",
           "op_slice", "op_concat", "op_pad", "op_reduce", "op_dot", "op_iota", "op_loop"]

    def program(self) -> str:
        self.arg(self.shape())
        for _ in range(self.i(5, 14)):
            name = self.choice(self.OPS)
            try:
                getattr(self, name)()
            except TypeError:  # pick() found no candidate of the needed rank
                continue
        outs = [self.pool[-1]]
        if len(self.pool) > 2 and self.i(0, 1):
            outs.append(self.choice(self.pool[:-1]))
        args = ", ".join(f"{n}: {ttype(s)}" for n, s in self.args)
        rets = ", ".join(ttype(s) for _, s in outs)
        body = "\n".join(self.lines)
        return (f"func.func @main({args}) -> ({rets}) {{\n{body}\n"
                f"    return {', '.join(n for n, _ in outs)} : {rets}\n}}")


@st.composite
def programs(draw):
    g = Gen(draw)
    return g.program(), [s for _, s in g.args]


def _run(text, inputs):
    import jax
    import jax.extend  # noqa: F401
    import jaxlib.xla_client as xc

    b = jax.extend.backend.get_backend()
    dev = b.devices()[0]
    exe = b.compile_and_load(text, xc.DeviceList((dev,)), xc.CompileOptions())
    return [np.asarray(o) for o in exe.execute([jax.device_put(x, dev) for x in inputs])]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          derandomize=True)
@given(programs())
def test_random_program_o0_equals_o2(prog):
    text, shapes = prog
    module = parse_module(text)
    assert module.operation.verify(), text
    src = to_text(module)
    run_pipeline(module, pipeline(LEVEL))
    opt = to_text(module)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ref = _run(src, inputs)
    got = _run(opt, inputs)
    assert len(ref) == len(got)
    for a, b in zip(ref, got):
        assert a.shape == b.shape and a.dtype == b.dtype, (src, opt)
        scale = float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0)) or 1.0
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5 * scale,
                                   err_msg=f"\n--- O0 ---\n{src}\n--- O2 ---\n{opt}")
