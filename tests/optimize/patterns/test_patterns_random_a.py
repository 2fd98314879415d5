"""Randomized differential tests for pattern families A: small random well-typed programs of
elementwise, layout (transpose / reshape / broadcast_in_dim), reduce, dot_general and
diagonal-matrix ops, run before and after all default family-A patterns."""

import numpy as np
import pytest
from _harness import differential, rewrite, to_text, parse

FAMILIES_A = ("algebraic", "constants", "layout", "dot", "reduce")


def _ty(shape, e="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + e + ">"


class Prog:
    def __init__(self, rng):
        self.rng = rng
        self.lines = []
        self.vals = []  # (name, shape)
        self.n = 0
        self.args = []

    def fresh(self):
        self.n += 1
        return f"%v{self.n}"

    def arg(self, shape):
        name = f"%a{len(self.args)}"
        self.args.append((name, shape))
        self.vals.append((name, tuple(shape)))

    def emit(self, line, shape):
        name = self.fresh()
        self.lines.append(f"{name} = {line}")
        self.vals.append((name, tuple(shape)))
        return name

    def pick(self, pred=lambda s: True):
        c = [v for v in self.vals if pred(v[1])]
        return c[self.rng.integers(len(c))] if c else None

    def splat(self, shape, value=None):
        if value is None:
            value = self.rng.choice(["0.0", "-0.0", "1.0", "-1.0", "2.0", "0.5", "3.0"])
        return self.emit(f"stablehlo.constant dense<{value}> : {_ty(shape)}", shape)

    # -- op generators ---------------------------------------------------------------------
    def unary(self):
        x, s = self.pick()
        op = self.rng.choice(["negate", "tanh", "abs", "sine", "floor"])
        self.emit(f"stablehlo.{op} {x} : {_ty(s)}", s)

    def binary(self):
        x, s = self.pick()
        r = self.rng.random()
        if r < 0.4:
            same = self.pick(lambda t: t == s)
            y = same[0]
        elif r < 0.7:
            y = self.splat(s)
        else:
            sc = self.emit(f"stablehlo.constant dense<{self.rng.choice(['1.0', '0.0', '2.0', '-1.0'])}> : tensor<f32>", ())
            y = self.emit(f"stablehlo.broadcast_in_dim {sc}, dims = [] : (tensor<f32>) -> {_ty(s)}", s)
        op = self.rng.choice(["add", "subtract", "multiply", "maximum", "minimum", "divide"])
        if op == "divide":
            y = self.splat(s, self.rng.choice(["2.0", "4.0", "-1.0", "1.0", "3.0"]))
        a, b = (x, y) if self.rng.random() < 0.5 else (y, x)
        self.emit(f"stablehlo.{op} {a}, {b} : {_ty(s)}", s)

    def transpose(self):
        x, s = self.pick(lambda t: len(t) >= 2)
        p = [int(i) for i in self.rng.permutation(len(s))]
        self.emit(f"stablehlo.transpose {x}, dims = {p} : ({_ty(s)}) -> {_ty([s[i] for i in p])}", [s[i] for i in p])

    def reshape(self):
        x, s = self.pick()
        s = list(s)
        r = self.rng.random()
        if r < 0.4 and len(s) < 4:
            i = int(self.rng.integers(len(s) + 1))
            t = s[:i] + [1] + s[i:]
        elif r < 0.7 and 1 in s:
            i = s.index(1)
            t = s[:i] + s[i + 1:]
        else:
            t = [int(np.prod(s))] if s else [1]
        self.emit(f"stablehlo.reshape {x} : ({_ty(s)}) -> {_ty(t)}", t)

    def broadcast(self):
        x, s = self.pick(lambda t: len(t) < 4)
        s = list(s)
        i = int(self.rng.integers(len(s) + 1))
        size = int(self.rng.integers(1, 4))
        t = s[:i] + [size] + s[i:]
        dims = [d if d < i else d + 1 for d in range(len(s))]
        if s and self.rng.random() < 0.3:  # expand a unit dim instead
            ones = [k for k, d in enumerate(s) if d == 1]
            if ones:
                t = list(s)
                t[ones[0]] = 3
                dims = list(range(len(s)))
        self.emit(f"stablehlo.broadcast_in_dim {x}, dims = {dims} : ({_ty(s)}) -> {_ty(t)}", t)

    def reduce(self):
        x, s = self.pick(lambda t: len(t) >= 1)
        k = int(self.rng.integers(1, len(s) + 1))
        dims = sorted(int(d) for d in self.rng.choice(len(s), size=k, replace=False))
        kind, init = (("add", "0.0") if self.rng.random() < 0.6 else ("maximum", "0xFF800000"))
        z = self.emit(f"stablehlo.constant dense<{init}> : tensor<f32>", ())
        t = [d for i, d in enumerate(s) if i not in dims]
        self.emit(f"stablehlo.reduce({x} init: {z}) applies stablehlo.{kind} across dimensions = {dims} : "
                  f"({_ty(s)}, tensor<f32>) -> {_ty(t)}", t)

    def dot(self):
        a, sa = self.pick(lambda t: len(t) >= 1)
        b, sb = self.pick(lambda t: len(t) >= 1)
        pairs = [(i, j) for i in range(len(sa)) for j in range(len(sb)) if sa[i] == sb[j]]
        if not pairs:
            return
        self.rng.shuffle(pairs)
        used_a, used_b, con, bat = set(), set(), [], []
        for i, j in pairs:
            if i in used_a or j in used_b:
                continue
            used_a.add(i)
            used_b.add(j)
            (bat if self.rng.random() < 0.25 else con).append((i, j))
            if self.rng.random() < 0.5:
                break
        lb, rb = [p[0] for p in bat], [p[1] for p in bat]
        lc, rc = [p[0] for p in con], [p[1] for p in con]
        lf = [sa[i] for i in range(len(sa)) if i not in used_a]
        rf = [sb[j] for j in range(len(sb)) if j not in used_b]
        out = [sa[i] for i in lb] + lf + rf
        if len(out) > 4:
            return
        bd = f"batching_dims = {lb} x {rb}, " if bat else ""
        self.emit(f"stablehlo.dot_general {a}, {b}, {bd}contracting_dims = {lc} x {rc} : "
                  f"({_ty(sa)}, {_ty(sb)}) -> {_ty(out)}", out)

    def diag(self):
        v, s = self.pick(lambda t: len(t) == 1 and t[0] > 1)
        n = s[0]
        m, mb = _ty([n, n], "i32"), _ty([n, n], "i1")
        i0 = self.emit(f"stablehlo.iota dim = 0 : {m}", None)
        i1 = self.emit(f"stablehlo.iota dim = 1 : {m}", None)
        self.vals = [x for x in self.vals if x[1] is not None]
        p = self.emit(f"stablehlo.compare EQ, {i0}, {i1}, SIGNED : ({m}, {m}) -> {mb}", None)
        self.vals = [x for x in self.vals if x[1] is not None]
        col = int(self.rng.integers(2))
        t = self.emit(f"stablehlo.broadcast_in_dim {v}, dims = [{col}] : ({_ty(s)}) -> {_ty([n, n])}", [n, n])
        z = self.splat([n, n], "0.0")
        d = self.emit(f"stablehlo.select {p}, {t}, {z} : {mb}, {_ty([n, n])}", [n, n])
        other, so = self.pick(lambda u: n in u and len(u) <= 2)
        j = list(so).index(n)
        out = [n] + [so[k] for k in range(len(so)) if k != j]
        if self.rng.random() < 0.5:
            self.emit(f"stablehlo.dot_general {d}, {other}, contracting_dims = [1] x [{j}] : "
                      f"({_ty([n, n])}, {_ty(so)}) -> {_ty(out)}", out)
        else:
            out = [so[k] for k in range(len(so)) if k != j] + [n]
            self.emit(f"stablehlo.dot_general {other}, {d}, contracting_dims = [{j}] x [0] : "
                      f"({_ty(so)}, {_ty([n, n])}) -> {_ty(out)}", out)

    def text(self, outs):
        args = ", ".join(f"{n}: {_ty(s)}" for n, s in self.args)
        res = ", ".join(_ty(s) for _, s in outs)
        body = "\n  ".join(self.lines)
        ret = ", ".join(n for n, _ in outs)
        return f"func.func @main({args}) -> ({res}) {{\n  {body}\n  return {ret} : {res}\n}}\n"


def random_program(seed: int) -> str:
    rng = np.random.default_rng(seed)
    p = Prog(rng)
    for _ in range(int(rng.integers(1, 4))):
        p.arg([int(d) for d in rng.choice([1, 2, 3, 4], size=int(rng.integers(1, 4)))])
    gens = [p.unary, p.binary, p.binary, p.transpose, p.reshape, p.broadcast, p.reduce, p.dot, p.dot, p.diag]
    for _ in range(int(rng.integers(6, 16))):
        g = gens[int(rng.integers(len(gens)))]
        try:
            g()
        except TypeError:  # pick() found nothing suitable
            pass
    outs = [v for v in p.vals[-3:] if v[1] is not None]
    return p.text(outs)


@pytest.mark.parametrize("seed", range(40))
def test_random_program(seed):
    from reactant.optimize.patterns import PATTERNS

    text = to_text(parse(random_program(seed)))
    pats = [n for n, p in PATTERNS.items() if p.family in FAMILIES_A and not p.fast_math]
    after = rewrite(text, pats)
    # the sign of an exactly-zero sum is not checked: XLA treats a reduce's init as an identity
    # it may apply any number of times, so sum(-0.0, -0.0) may give either zero
    differential(text, after, rtol=1e-4, atol=1e-4, seed=seed, zero_sign=False)
