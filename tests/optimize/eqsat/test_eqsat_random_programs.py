"""Random well-typed programs of modelled ops (hypothesis): after eqsat every e-class is
consistent under the NumPy interpreter, and PJRT gives the original's results. This is the
soundness net for the rules: a rule that unions non-equivalent terms fails here."""

import numpy as np
from eqsat_util import eqsat_and_check
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reactant.optimize.eqsat import Limits
import pytest

pytestmark = pytest.mark.slow  # a hypothesis search: the long-form tier (REACTANT_SLOW=1)


def _t(shape) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


class _Prog:
    def __init__(self):
        self.lines: list[str] = []
        self.vals: list[tuple[str, tuple]] = []
        self.n = 0

    def new(self, shape) -> str:
        self.n += 1
        name = f"%v{self.n}"
        self.vals.append((name, tuple(shape)))
        return name


@st.composite
def programs(draw):
    p = _Prog()
    nargs = draw(st.integers(2, 3))
    args = []
    for i in range(nargs):
        shape = tuple(draw(st.lists(st.integers(2, 5), min_size=1, max_size=3)))
        args.append((f"%a{i}", shape))
        p.vals.append((f"%a{i}", shape))
    zero = "%zero"
    p.lines.append(f"{zero} = stablehlo.constant dense<0.0> : tensor<f32>")
    for _ in range(draw(st.integers(3, 10))):
        kind = draw(st.sampled_from(["bin", "un", "transpose", "slice", "bcast", "reshape", "dot", "reduce",
                                     "pad", "concat", "const", "mulpad"]))
        x, xs = draw(st.sampled_from(p.vals))
        r = len(xs)
        if r == 0 and kind in ("transpose", "slice", "reduce", "pad", "concat", "mulpad"):
            continue
        if kind == "bin":
            same = [v for v in p.vals if v[1] == xs]
            y, _ = draw(st.sampled_from(same))
            op = draw(st.sampled_from(["add", "subtract", "multiply", "maximum"]))
            out = p.new(xs)
            p.lines.append(f"{out} = stablehlo.{op} {x}, {y} : {_t(xs)}")
        elif kind == "un":
            op = draw(st.sampled_from(["negate", "tanh", "abs"]))
            out = p.new(xs)
            p.lines.append(f"{out} = stablehlo.{op} {x} : {_t(xs)}")
        elif kind == "transpose":
            perm = draw(st.permutations(list(range(r))))
            ys = tuple(xs[i] for i in perm)
            out = p.new(ys)
            p.lines.append(f"{out} = stablehlo.transpose {x}, dims = [{', '.join(map(str, perm))}] : ({_t(xs)}) -> {_t(ys)}")
        elif kind == "slice":
            st_, li, sd, ys = [], [], [], []
            for d in xs:
                a = draw(st.integers(0, d - 1))
                b = draw(st.integers(a + 1, d))
                s = draw(st.integers(1, 2))
                st_.append(a), li.append(b), sd.append(s), ys.append((b - a + s - 1) // s)
            out = p.new(ys)
            spec = ", ".join(f"{a}:{b}:{s}" for a, b, s in zip(st_, li, sd))
            p.lines.append(f"{out} = stablehlo.slice {x} [{spec}] : ({_t(xs)}) -> {_t(ys)}")
        elif kind == "bcast" and r < 3:
            pos = draw(st.integers(0, r))
            newd = draw(st.integers(2, 4))
            ys = xs[:pos] + (newd,) + xs[pos:]
            dims = [i for i in range(pos)] + [i + 1 for i in range(pos, r)]
            out = p.new(ys)
            p.lines.append(f"{out} = stablehlo.broadcast_in_dim {x}, dims = [{', '.join(map(str, dims))}] : ({_t(xs)}) -> {_t(ys)}")
        elif kind == "reshape":
            ys = (int(np.prod(xs)),) if r > 1 else (1,) + xs
            out = p.new(ys)
            p.lines.append(f"{out} = stablehlo.reshape {x} : ({_t(xs)}) -> {_t(ys)}")
        elif kind == "dot" and r == 2:
            cands = [v for v in p.vals if len(v[1]) == 2 and set(v[1]) & set(xs)]
            if not cands:
                continue
            y, ys_ = draw(st.sampled_from(cands))
            pairs = [(i, j) for i in range(2) for j in range(2) if xs[i] == ys_[j]]
            ci, cj = draw(st.sampled_from(pairs))
            out_shape = (xs[1 - ci], ys_[1 - cj])
            out = p.new(out_shape)
            p.lines.append(f"{out} = stablehlo.dot_general {x}, {y}, contracting_dims = [{ci}] x [{cj}] : "
                           f"({_t(xs)}, {_t(ys_)}) -> {_t(out_shape)}")
        elif kind == "reduce":
            dims = sorted(draw(st.sets(st.integers(0, r - 1), min_size=1, max_size=r)))
            ys = tuple(d for i, d in enumerate(xs) if i not in dims)
            out = p.new(ys)
            p.lines.append(f"{out} = stablehlo.reduce({x} init: {zero}) applies stablehlo.add across dimensions = "
                           f"[{', '.join(map(str, dims))}] : ({_t(xs)}, tensor<f32>) -> {_t(ys)}")
        elif kind == "pad":
            lo = [draw(st.integers(0, 2)) for _ in xs]
            hi = [draw(st.integers(0, 2)) for _ in xs]
            ys = tuple(d + a + b for d, a, b in zip(xs, lo, hi))
            out = p.new(ys)
            p.lines.append(f"{out} = stablehlo.pad {x}, {zero}, low = [{', '.join(map(str, lo))}], high = "
                           f"[{', '.join(map(str, hi))}], interior = [{', '.join('0' for _ in xs)}] : "
                           f"({_t(xs)}, tensor<f32>) -> {_t(ys)}")
        elif kind == "mulpad":
            # multiply a zero-padded value by another value of the padded shape
            lo = [draw(st.integers(0, 2)) for _ in xs]
            ys = tuple(d + a for d, a in zip(xs, lo))
            pad = p.new(ys)
            p.lines.append(f"{pad} = stablehlo.pad {x}, {zero}, low = [{', '.join(map(str, lo))}], high = "
                           f"[{', '.join('0' for _ in xs)}], interior = [{', '.join('0' for _ in xs)}] : "
                           f"({_t(xs)}, tensor<f32>) -> {_t(ys)}")
            same = [v for v in p.vals if v[1] == ys]
            y, _ = draw(st.sampled_from(same))
            out = p.new(ys)
            p.lines.append(f"{out} = stablehlo.multiply {pad}, {y} : {_t(ys)}")
        elif kind == "concat":
            d = draw(st.integers(0, r - 1))
            cands = [v for v in p.vals if len(v[1]) == r and all(a == b for i, (a, b) in enumerate(zip(v[1], xs)) if i != d)]
            y, ys_ = draw(st.sampled_from(cands))
            zs = tuple(a + b if i == d else a for i, (a, b) in enumerate(zip(xs, ys_)))
            out = p.new(zs)
            p.lines.append(f"{out} = stablehlo.concatenate {x}, {y}, dim = {d} : ({_t(xs)}, {_t(ys_)}) -> {_t(zs)}")
        elif kind == "const":
            c = draw(st.sampled_from(["1.0", "0.0", "2.0"]))
            op = draw(st.sampled_from(["multiply", "add"]))
            cn = p.new(xs)
            p.lines.append(f"{cn} = stablehlo.constant dense<{c}> : {_t(xs)}")
            out = p.new(xs)
            p.lines.append(f"{out} = stablehlo.{op} {x}, {cn} : {_t(xs)}")
    outs = [v for v in p.vals[nargs:] if not v[0].startswith("%zero")][-2:] or [p.vals[0]]
    sig = ", ".join(f"{a}: {_t(s)}" for a, s in args)
    ret = ", ".join(_t(s) for _, s in outs)
    body = "\n  ".join(p.lines + [f"return {', '.join(o for o, _ in outs)} : {ret}"])
    return f"func.func public @main({sig}) -> ({ret}) {{\n  {body}\n}}"


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_programs_stay_equivalent(text):
    eqsat_and_check(text, limits=Limits(iterations=6), rtol=1e-4, pre=())


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_programs_round_trip(text):
    eqsat_and_check(text, limits=Limits(rewrite=False), rtol=1e-6, pre=())
