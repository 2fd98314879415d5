"""Seeded random NumPy programs, as source text, for differential testing.

``generate(seed)`` gives a ``Program``: the source of a module with ``import numpy as np`` and
a function ``prog(...)`` (or a class ``Model`` whose method ``step`` reads and updates its own
state across calls), the specs of its arguments, and the features it mixes. The same seed
always gives the same program and the same inputs (``Program.inputs``).

The features are the constructs where a tracing frontend most easily departs from NumPy:
``for i in range(n)`` loops whose unrolled size straddles ``loop_rolling.ROLL_MIN_OPS`` (trip
counts 1..70, bodies of 1..20 operations), triangular nested loops, slices bounded by loop
indices, ``if``/``elif``/``else`` and ``while`` on array values, in-place stores into
arguments, locals and views, augmented and overlapping slice assignments, reads right after
writes, lists built in loops, reductions, dot products of slices, early returns, a helper that
updates its argument in place, and objects with state.

Values stay well-conditioned so that float64 results agree to rtol=atol=1e-9: loop-carried
values are contracted (``s = 0.5 * s + tanh(...)``), multiplications are by bounded factors,
square roots and divisions are guarded (``sqrt(abs(v) + 1)``, ``v / (1 + o * o)``).
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

try:  # the threshold the trip counts straddle (a fallback keeps the generator importable alone)
    from reactant.tracing.loop_rolling import ROLL_MIN_OPS
except ImportError:  # pragma: no cover
    ROLL_MIN_OPS = 1000

PROFILES = ("small", "full")


@dataclass(frozen=True)
class ArgSpec:
    """One array argument: its name, shape and dtype name."""

    name: str
    shape: tuple[int, ...]
    dtype: str  # "float64" or "int64"


@dataclass
class Program:
    """A generated program: its source and how to call it.

    ``kind == "function"``: call ``prog(*inputs())``. ``kind == "class"``: build
    ``Model(*init_values())`` and call its ``step`` ``calls`` times, the k-th time on
    ``inputs(k)``. ``grad``: returns one float scalar from float arguments and stores into
    nothing, so its gradient can be checked against finite differences."""

    seed: int
    source: str
    args: list[ArgSpec]
    features: list[str]
    kind: str = "function"
    grad: bool = False
    init: list[ArgSpec] = field(default_factory=list)
    calls: int = 1
    profile: str = "full"

    def inputs(self, call: int = 0) -> list[np.ndarray]:
        """The arguments of the ``call``-th call (fresh arrays, deterministic in the seed)."""
        rng = np.random.default_rng([self.seed, call])
        return [_draw(rng, a) for a in self.args]

    def init_values(self) -> list[np.ndarray]:
        """The constructor arguments of a class program."""
        rng = np.random.default_rng([self.seed, 1000])
        return [_draw(rng, a) for a in self.init]


def _draw(rng: np.random.Generator, spec: ArgSpec) -> np.ndarray:
    if spec.dtype == "int64":
        return rng.integers(-5, 6, size=spec.shape).astype(np.int64)
    return rng.standard_normal(spec.shape)


# -- generation ------------------------------------------------------------------------------
# features that neither store into an array nor return anything but floats: gradient programs
PURE_FEATURES = ("loop", "triangular", "index_slice", "if", "while", "list", "reduce", "dot",
                 "negidx", "early_return")
ALL_FEATURES = PURE_FEATURES + ("store_arg_loop", "store_arg", "store_local", "view", "aug_slice",
                                "read_after_write", "helper", "int", "stencil", "stateful_helper",
                                "container")

_CONSTS = ("0.5", "0.25", "0.75", "1.5", "-0.5", "2.0", "0.1", "-1.25", "0.3", "0.9", "-0.8", "1.1")


class _EdgeRandom(random.Random):
    """The small profile's integers: mostly at the ends of their ranges (boundaries find bugs;
    fewer distinct indices and lengths let eager runs share their compiled operations)."""

    def randrange(self, start, stop=None, step=1):
        if stop is None:
            start, stop = 0, start
        if step == 1 and stop - start > 2 and self.random() < 0.7:
            return start if self.random() < 0.5 else stop - 1
        return super().randrange(start, stop, step)


class _Gen:
    """Builds one program: emits lines, tracks the values in scope and the results."""

    def __init__(self, seed: int, profile: str, kind: str, grad: bool):
        self.small = profile == "small"
        self.r = _EdgeRandom(seed) if self.small else random.Random(seed)
        self.kind = kind
        self.grad = grad
        self.lines: list[str] = []
        self.ind = 2 if kind == "class" else 1
        self.count = 0
        self.vars: dict[str, tuple[tuple[int, ...], str]] = {}  # readable values: shape, kind
        self.results: list[str] = []  # values folded into what the program returns
        self.helpers: list[str] = []  # module-level helper functions
        self.early = False
        r = self.r
        if self.small:  # few shapes: eager runs share their compiled operations across programs
            self.n, self.m, self.k = r.choice((5, 8)), r.choice((3, 4)), r.choice((4, 5))
        else:
            self.n, self.m, self.k = r.randint(4, 16), r.randint(3, 10), r.randint(3, 10)
        self.args = [ArgSpec("x", (self.n,), "float64"), ArgSpec("A", (self.m, self.k), "float64")]
        self.out = self.iv = self.u = None
        if not grad and r.random() < 0.4:
            self.out = "out"
            self.args.append(ArgSpec("out", (self.n,), "float64"))
        if not grad and r.random() < 0.35:
            self.p = 4 if self.small else r.randint(3, 8)
            self.iv = "iv"
            self.args.append(ArgSpec("iv", (self.p,), "int64"))
        if not grad and r.random() < 0.3:
            self.q = 8 if self.small else r.randint(6, 16)
            self.u = "u"
            self.args.append(ArgSpec("u", (self.q,), "float64"))
        self.vars["x"] = ((self.n,), "f")
        self.vars["A"] = ((self.m, self.k), "f")
        if self.out:
            self.vars["out"] = ((self.n,), "f")
        if self.u:
            self.vars["u"] = ((self.q,), "f")

    # emitting ----------------------------------------------------------------------------------
    def emit(self, line: str) -> None:
        self.lines.append("    " * self.ind + line)

    @contextmanager
    def block(self, header: str):
        self.emit(header)
        self.ind += 1
        yield
        self.ind -= 1

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def define(self, name: str, shape: tuple[int, ...], kind: str = "f", result: bool = True) -> None:
        self.vars[name] = (shape, kind)
        if result:
            self.results.append(name)

    # random pieces ------------------------------------------------------------------------------
    def c(self) -> str:
        return self.r.choice(_CONSTS)

    def trip(self) -> int:
        """A trip count: small, medium or large (with the body sizes, across ROLL_MIN_OPS)."""
        r = self.r
        if self.small:  # a large trip count now and then (with a large body: across the threshold)
            return r.choice([r.randint(1, 4)] * 5 + [r.randint(5, 12)] * 3 + [r.randint(13, 40)])
        return r.choice([r.randint(1, 5), r.randint(6, 24), r.randint(25, 70)])

    def body_ops(self) -> int:
        r = self.r
        return r.choice([r.randint(1, 3), r.randint(3, 6 if self.small else 20)])

    def fvec(self, L: int) -> str:
        """An expression of a float vector of length L (reads only)."""
        r, n, m, k = self.r, self.n, self.m, self.k
        cands = []
        if n >= L:
            a = r.randint(0, n - L)
            cands.append("x" if L == n else f"x[{a}:{a + L}]" if a else f"x[:{L}]")
        if k >= L:
            cands.append(f"A[{r.randrange(m)}, :{L}]" if L < k else f"A[{r.randrange(m)}]")
        if m >= L:
            cands.append(f"A[:{L}, {r.randrange(k)}]" if L < m else f"A[:, {r.randrange(k)}]")
        if self.out and n >= L:
            cands.append(f"out[:{L}]" if L < n else "out")
        if self.u and self.q >= L:
            cands.append(f"u[{self.q - L}:]" if L < self.q else "u")
        cands += [v for v, (shape, kind) in self.vars.items() if shape == (L,) and kind == "f" and v not in ("x", "A", "out", "u")]
        if self.kind == "class" and L == n:
            cands += ["self.total", "self.w"]
        if not cands or r.random() < 0.1:
            return f"np.linspace({self.c()}, {self.c()}, {L})"
        return r.choice(cands)

    def fscal(self) -> str:
        """An expression of a float scalar (reads only)."""
        r = self.r
        cands = [f"x[{r.randrange(self.n)}]", f"A[{r.randrange(self.m)}, {r.randrange(self.k)}]",
                 f"np.sum(x[:{r.randint(1, self.n)}])"]
        cands += [v for v, (shape, kind) in self.vars.items() if shape == () and kind == "f"]
        return r.choice(cands)

    def chain(self, e: str, L: int | None, ops: int) -> str:
        """``e`` (a float vector of length L, or a scalar for L None) through ``ops`` bounded
        elementwise operations (nesting kept shallow: every third one starts a new line)."""
        r = self.r
        other = (lambda: self.fvec(L)) if L is not None else self.fscal
        for step in range(ops):
            if step and step % 3 == 0:
                t = self.fresh("t")
                self.emit(f"{t} = {e}")
                e = t
            pick = r.randrange(15)
            if pick == 0:
                e = f"np.sin({e})"
            elif pick == 1:
                e = f"np.cos({e})"
            elif pick == 2:
                e = f"np.tanh({e})"
            elif pick == 3:
                e = f"({e}) * {r.choice(['0.5', '0.75', '-0.9', '0.25', '1.0'])}"
            elif pick == 4:
                e = f"({e}) + {self.c()}"
            elif pick == 5:
                e = f"({e}) - {other()}"
            elif pick == 6:
                e = f"({e}) * np.tanh({other()})"
            elif pick == 7:
                e = f"np.sqrt(np.abs({e}) + 1.0)"
            elif pick == 8:
                o = other()
                e = f"({e}) / (1.0 + {o} * {o})"
            elif pick == 9:
                e = f"np.maximum({e}, {self.c()})"
            elif pick == 10:
                e = f"np.minimum({e}, {self.c()})"
            elif pick == 11:
                e = f"np.clip({e}, -1.5, 1.5)"
            elif pick == 12:
                e = f"np.exp(-np.abs({e}))"
            elif pick == 13:
                e = f"np.abs({e})"
            else:
                e = f"({e}) + {other()} * 0.5"
        return e

    def cond(self) -> str:
        """A condition on array values (a traced ``if`` when compiled)."""
        r = self.r
        pick = r.randrange(6)
        if pick == 0:
            return f"x[{r.randrange(self.n)}] > {r.choice(['0.1', '-0.2', '0.35', '0.0'])}"
        if pick == 1:
            return f"A[{r.randrange(self.m)}, {r.randrange(self.k)}] < {r.choice(['0.15', '-0.3', '0.6'])}"
        if pick == 2:
            return f"np.sum(x[:{r.randint(1, self.n)}]) > {r.choice(['0.05', '-0.4', '0.7'])}"
        if pick == 3 and self.iv:
            return f"iv[{r.randrange(self.p)}] > {r.randint(-2, 2)}"
        if pick == 4:
            return f"x[{r.randrange(self.n)}] > A[{r.randrange(self.m)}, {r.randrange(self.k)}]"
        return f"np.max(A[{r.randrange(self.m)}]) > {r.choice(['0.5', '1.0', '0.2'])}"

    def lvec(self, i: str, L: int) -> str:
        """A float vector of length L read at a position depending on the loop index ``i``."""
        r, n, m, k = self.r, self.n, self.m, self.k
        cands = [f"x[{i} % {n}] * {self.fvec(L)}"]
        if k >= L:
            cands.append(f"A[{i} % {m}, :{L}]" if L < k else f"A[{i} % {m}]")
        if n > L:
            w = n - L + 1
            cands.append(f"x[{i} % {w}:{i} % {w} + {L}]")
        cands.append(f"{self.fvec(L)} * ({i} * 0.1)")
        return r.choice(cands)

    # features -----------------------------------------------------------------------------------
    def f_loop(self) -> None:
        """A loop-carried vector through a body of 1..20 ops, trip count 1..70."""
        r = self.r
        L = r.randint(1, min(self.n, self.k))
        s, T, B = self.fresh("s"), self.trip(), self.body_ops()
        self.emit(f"{s} = np.zeros({L})" if r.random() < 0.5 else f"{s} = {self.fvec(L)} * 0.0")
        with self.block(f"for i in range({T}):"):
            e = self.chain(self.lvec("i", L), L, B)
            if r.random() < 0.3:  # the carried value inside the body: contracted
                self.emit(f"{s} = 0.5 * {s} + 0.5 * np.tanh({e} + {s})")
            else:
                self.emit(f"{s} = {r.choice(['0.5', '0.9', '-0.5'])} * {s} + np.tanh({e})")
        self.define(s, (L,))

    def f_triangular(self) -> None:
        """Nested ``for j in range(i)`` loops, slices bounded by the indices."""
        r = self.r
        q = min(self.m, self.k, self.n)
        pick = r.randrange(4 if not self.grad else 2)
        t = self.fresh("tri")
        if pick == 0:
            self.emit(f"{t} = x[0] * 0.0")
            with self.block(f"for i in range({q}):"):
                with self.block("for j in range(i):"):
                    self.emit(f"{t} = {t} + A[i, j] * x[j] - 0.25 * A[j, i]")
            self.define(t, ())
        elif pick == 1:
            self.emit(f"{t} = np.zeros({q})")
            with self.block(f"for i in range(1, {q}):"):
                self.emit(f"{t} = {t} + np.dot(A[i, :i], x[:i]) * {r.choice(['0.5', '1.0', '-0.3'])}")
            self.define(t, (q,))
        elif pick == 2:  # stores into the argument
            with self.block(f"for i in range({q}):"):
                with self.block("for j in range(i):"):
                    self.emit(f"A[i, j] -= {r.choice(['0.5', '0.25'])} * A[j, i] * {r.choice(['x[j]', '1.0', 'x[i]'])}")
            self.emit(f"{t} = np.sum(A[:{q}, :{q}])")
            self.define(t, ())
        else:  # a local lower-triangular matrix
            self.emit(f"{t} = np.zeros(({q}, {q}))")
            with self.block(f"for i in range({q}):"):
                with self.block("for j in range(i + 1):"):
                    self.emit(f"{t}[i, j] = A[i, j] + x[j] * {self.c()}")
            self.define(t, (q, q))

    def f_index_slice(self) -> None:
        """Slices whose bounds are loop indices: ``x[i:i+3]`` (shorter at the end), ``A[i, :i]``."""
        r = self.r
        s = self.fresh("sl")
        T = r.randint(1, self.n)
        self.emit(f"{s} = x[0] * 0.0")
        w = r.randint(1, 4)
        with self.block(f"for i in range({T}):"):
            pick = r.randrange(3)
            if pick == 0:
                self.emit(f"{s} = {s} + np.sum(x[i:i + {w}]) * {self.c()}")
            elif pick == 1:
                self.emit(f"{s} = {s} + np.sum(A[i % {self.m}, :i % {self.k}])")
            else:
                self.emit(f"{s} = 0.5 * {s} + np.max(x[:i + 1]) - np.min(x[i:])")
        self.define(s, ())

    def f_if(self) -> None:
        """``if``/``elif``/``else`` on array values, at the top level or inside a loop."""
        r = self.r
        L = r.randint(1, self.n)
        y = self.fresh("y")
        pick = r.randrange(4)
        if pick == 0:
            with self.block(f"if {self.cond()}:"):
                self.emit(f"{y} = {self.chain(self.fvec(L), L, r.randint(1, 3))}")
            if r.random() < 0.5:
                with self.block(f"elif {self.cond()}:"):
                    self.emit(f"{y} = {self.chain(self.fvec(L), L, r.randint(1, 3))}")
            with self.block("else:"):
                self.emit(f"{y} = {self.chain(self.fvec(L), L, r.randint(1, 3))}")
        elif pick == 1:  # assigned in one branch only, defined before
            self.emit(f"{y} = {self.fvec(L)} * 1.0")
            with self.block(f"if {self.cond()}:"):
                self.emit(f"{y} = {y} * {self.c()} + 1.0")
        elif pick == 2 or self.grad:  # inside a loop, on a value at the loop index
            self.emit(f"{y} = np.zeros({L})")
            with self.block(f"for i in range({self.trip()}):"):
                with self.block(f"if x[i % {self.n}] > {r.choice(['0.0', '0.3', '-0.2'])}:"):
                    self.emit(f"{y} = 0.5 * {y} + np.tanh({self.lvec('i', L)})")
                with self.block("else:"):
                    self.emit(f"{y} = 0.5 * {y} - {self.c()}")
        elif r.random() < 0.5:  # a store into an argument in a branch
            tgt = self.out or "x"
            a = r.randrange(self.n)
            with self.block(f"if {self.cond()}:"):
                self.emit(f"{tgt}[{a}] = {self.c()}")
            with self.block("else:"):
                self.emit(f"{tgt}[{a}] += {self.fscal()}")
            self.emit(f"{y} = {tgt}[:{L}] * 1.0")
        else:  # host values written into a NumPy array made here, on one side of the condition
            self.emit(f"{y} = np.zeros({L})")
            with self.block(f"if {self.cond()}:"):
                self.emit(f"{y}[{r.randrange(L)}] = {self.c()}")
            with self.block("else:"):
                self.emit(f"{y}[{r.randrange(L)}] += {self.c()}")
                if r.random() < 0.5:
                    self.emit(f"{y} *= {self.c()}")
        self.define(y, (L,))

    def f_while(self) -> None:
        """``while`` on array values: a traced counter or a data-dependent bound."""
        r = self.r
        pick = r.randrange(3 if not self.grad else 2)
        if pick == 0:
            kk, w = self.fresh("k"), self.fresh("w")
            L = r.randint(1, self.n)
            self.emit(f"{kk} = x[0] * 0")
            self.emit(f"{w} = {self.fvec(L)} * 1.0")
            with self.block(f"while {kk} < {r.randint(1, 8)}:"):
                self.emit(f"{w} = 0.5 * {w} + np.tanh({self.chain(self.fvec(L), L, r.randint(1, 4))})")
                self.emit(f"{kk} = {kk} + 1")
            self.define(w, (L,))
            self.define(kk, ())
        elif pick == 1:
            t, c = self.fresh("t"), self.fresh("cnt")
            self.emit(f"{t} = np.abs(x[{r.randrange(self.n)}])")
            self.emit(f"{c} = {t} * 0.0")
            with self.block(f"while {t} < {r.choice(['2.0', '3.5', '1.0'])}:"):
                self.emit(f"{t} = {t} + 0.5 + np.abs(x[{r.randrange(self.n)}])")
                self.emit(f"{c} = {c} + 1.0")
            self.define(t, ())
            self.define(c, ())
        else:  # a store into an argument inside the while
            kk = self.fresh("k")
            tgt = self.out or "x"
            self.emit(f"{kk} = x[0] * 0")
            with self.block(f"while {kk} < {r.randint(1, 5)}:"):
                self.emit(f"{tgt}[{r.randrange(self.n)}] += {self.c()}")
                self.emit(f"{kk} = {kk} + 1")
            self.define(kk, ())

    def f_list_recurrence(self, a: str) -> None:
        """``h`` from the last ``h`` (with a reduction, as a matrix-vector step has), appended each
        step; the list stacked, concatenated, made an array or read item by item."""
        r = self.r
        L, T = r.randint(1, self.n), self.trip()
        rows, h = self.fresh("hist"), self.fresh("h")
        self.emit(f"{rows} = []")
        self.emit(f"{h} = {self.fvec(L)} * 1.0")
        with self.block(f"for i in range({T}):"):
            self.emit(f"{h} = np.tanh({self.chain(h, L, r.randint(1, 2))} + {self.c()} * np.mean({h}))")
            self.emit(f"{rows}.append({h})")
        form = r.randrange(4)
        if form == 0:
            self.emit(f"{a} = np.stack({rows}).sum(axis=0)")
        elif form == 1:
            self.emit(f"{a} = np.concatenate({rows})[-{L}:] - np.concatenate({rows})[:{L}]")
        elif form == 2:
            self.emit(f"{a} = np.array({rows})[::-1].mean(axis=0)")
        else:
            self.emit(f"{a} = {rows}[0] * {self.c()} + {rows}[-1]")
        self.define(a, (L,))

    def f_list(self) -> None:
        """Lists built in loops or comprehensions, turned into arrays."""
        r = self.r
        a = self.fresh("arr")
        pick = r.randrange(6)
        if pick == 5:  # a recurrence appending each state (an RNN's history), read back after the loop
            self.f_list_recurrence(a)
        elif pick == 0:
            acc, T = self.fresh("acc"), self.trip()
            self.emit(f"{acc} = []")
            with self.block(f"for i in range({T}):"):
                self.emit(f"{acc}.append({self.chain(f'x[i % {self.n}]', None, r.randint(1, 3))})")
            self.emit(f"{a} = np.array({acc})")
            self.define(a, (T,))
        elif pick == 1:
            rows = self.fresh("rows")
            self.emit(f"{rows} = []")
            with self.block(f"for i in range({self.m}):"):
                self.emit(f"{rows}.append(A[i] * {self.c()} + x[i % {self.n}])")
            self.emit(f"{a} = np.stack({rows})")
            self.define(a, (self.m, self.k))
        elif pick == 2:
            L = r.randint(1, self.n)
            self.emit(f"{a} = np.asarray([x[i] * {self.c()} + i for i in range({L})])")
            self.define(a, (L,))
        elif pick == 3:
            self.emit(f"{a} = np.array([np.sum(A[i]) for i in range({self.m})])")
            self.define(a, (self.m,))
        else:
            L = r.randint(1, min(self.n, self.k))
            self.emit(f"{a} = np.stack([{self.fvec(L)}, {self.fvec(L)}, x[:{L}] * 2.0])")
            self.define(a, (3, L))

    def f_reduce(self) -> None:
        r = self.r
        v = self.fresh("red")
        pick = r.randrange(9 if not self.grad else 8)
        forms = [
            (f"np.sum(A, axis=0)", (self.k,)), (f"A.mean(axis=1)", (self.m,)), ("np.max(x)", ()),
            ("x.min() + np.mean(A)", ()), (f"np.prod(np.tanh(x[:{min(4, self.n)}]))", ()),
            (f"np.cumsum(x[:{r.randint(1, self.n)}])", None), ("A.max(axis=0) - A.min(axis=0)", (self.k,)),
            ("np.std(x) + np.var(A[0])", ()), ("np.argmax(x) + np.argmin(A[0])", ("int",)),
        ]
        e, shape = forms[pick]
        if shape is None:
            shape = (int(e.split(":")[1].split("]")[0]),)
        if shape == ("int",):
            self.emit(f"{v} = {e}")
            self.define(v, (), "i")
            return
        self.emit(f"{v} = {e}")
        self.define(v, shape)

    def f_dot(self) -> None:
        r = self.r
        v = self.fresh("dot")
        L = r.randint(1, min(self.n, self.k))
        pick = r.randrange(5)
        if pick == 0:
            self.emit(f"{v} = np.dot(A[{r.randrange(self.m)}, :{L}], x[:{L}])")
            self.define(v, ())
        elif pick == 1:
            a = r.randint(1, self.m)
            self.emit(f"{v} = A[:{a}, :{L}] @ x[:{L}]")
            self.define(v, (a,))
        elif pick == 2:
            self.emit(f"{v} = np.dot(A, A.T) * 0.5")
            self.define(v, (self.m, self.m))
        elif pick == 3 and self.n >= self.m:
            self.emit(f"{v} = A.T @ x[:{self.m}]")
            self.define(v, (self.k,))
        else:
            self.emit(f"{v} = np.outer(x[:{L}], A[0, :{L}])")
            self.define(v, (L, L))

    def f_negidx(self) -> None:
        s = self.fresh("ng")
        self.emit(f"{s} = x[-1] + A[-1, -2]")
        with self.block(f"for i in range({self.trip()}):"):
            self.emit(f"{s} = 0.5 * {s} + x[-(i % {self.n}) - 1] * A[-1 - i % {self.m}, -1]")
        self.define(s, ())

    def f_store_arg_loop(self) -> None:
        """A loop storing into an argument at the loop index."""
        r = self.r
        T, B = self.trip(), self.body_ops()
        tgt = self.out or "x"
        pick = r.randrange(3)
        with self.block(f"for i in range({T}):"):
            e = self.chain(f"x[(i + {r.randrange(self.n)}) % {self.n}] + A[i % {self.m}, (i + 1) % {self.k}]", None, B)
            if pick == 0:
                self.emit(f"{tgt}[i % {self.n}] = {e}")
            elif pick == 1:
                self.emit(f"{tgt}[i % {self.n}] += 0.1 * np.tanh({e})")
            else:
                col = r.randrange(self.k)
                self.emit(f"A[i % {self.m}, {col}] -= 0.5 * A[(i + 1) % {self.m}, {col}] * np.tanh({e})")

    def f_store_arg(self) -> None:
        """Straight-line stores into arguments: whole, ellipsis, strided, masked, fancy."""
        r = self.r
        n, m, k = self.n, self.m, self.k
        forms = [
            f"x += {self.chain(self.fvec(n), n, r.randint(1, 3))}",
            f"x[...] *= {self.c()}",
            f"x[::2] *= -1.0",
            f"A[{r.randrange(m)}] = np.tanh(A[{r.randrange(m)}])",
            f"x[x > {self.c()}] = {self.c()}",
            f"x[[0, 2]] += 1.0",
            f"A[:, {r.randrange(k)}] = x[:{m}]" if n >= m else f"A[0, :{min(n, k)}] = x[:{min(n, k)}]",
            f"A[A < 0.0] *= 0.5",
        ]
        if self.out:
            forms.append(f"out[:] = {self.chain(self.fvec(n), n, r.randint(1, 3))}")
            forms.append(f"out[{r.randrange(n)}] = np.sum(A)")
        self.emit(r.choice(forms))

    def f_stencil(self) -> None:
        """A time loop rewriting a window of an argument from its neighbours."""
        r = self.r
        tgt = self.u or "x"
        with self.block(f"for i in range({self.trip()}):"):
            if r.random() < 0.5:
                self.emit(f"{tgt}[1:-1] = 0.5 * ({tgt}[:-2] + {tgt}[2:])")
            else:
                self.emit(f"{tgt}[1:-1] += 0.25 * ({tgt}[:-2] - 2.0 * {tgt}[1:-1] + {tgt}[2:])")

    def f_store_local(self) -> None:
        """A local buffer filled element by element (or a copy written into)."""
        r = self.r
        b = self.fresh("buf")
        pick = r.randrange(4)
        if pick == 3:  # blocks of s elements, each from the same block of x (a loop over tiles)
            s_ = r.choice((2, 3)) if self.n >= 4 else 1
            self.emit(f"{b} = np.zeros({self.n})")
            with self.block(f"for i in range({self.n // s_}):"):
                blk = f"x[{s_} * i:{s_} * (i + 1)]"
                self.emit(f"{b}[{s_} * i:{s_} * (i + 1)] = {self.chain(blk, None, r.randint(1, 3))}")
            if r.random() < 0.5:  # and an argument's blocks scaled in place
                with self.block(f"for i in range({self.m // 2}):"):
                    self.emit(f"A[2 * i:2 * i + 2] *= {self.c()}")
            self.define(b, (self.n,))
        elif pick == 0:
            L = r.randint(1, self.n)
            self.emit(f"{b} = np.zeros({L})")
            with self.block(f"for i in range({L}):"):
                self.emit(f"{b}[i] = {self.chain(f'x[i] * {self.c()}', None, r.randint(1, 4))} + i")
            self.define(b, (L,))
        elif pick == 1:
            self.emit(f"{b} = x.copy()")
            self.emit(f"{b}[{r.randrange(self.n)}] = {self.c()}")
            self.emit(f"{b}[1:] += {b}[:-1]")
            self.define(b, (self.n,))
        else:
            self.emit(f"{b} = np.ones(({self.m}, {self.k}))")
            with self.block(f"for i in range({self.m}):"):
                self.emit(f"{b}[i, i % {self.k}] = A[i, 0] * 2.0")
                self.emit(f"{b}[i] *= x[i % {self.n}]")
            self.define(b, (self.m, self.k))

    def f_view(self) -> None:
        """Writes through views (and through copies, which must not reach the original)."""
        r = self.r
        n, m, k = self.n, self.m, self.k
        v = self.fresh("v")
        pick = r.randrange(12)
        a = r.randrange(n - 2)
        if pick == 0:
            self.emit(f"{v} = x[{a}:{a + 2}]")
            self.emit(f"{v}[:] = {self.c()}")
            self.define(v, (2,))
        elif pick == 1:
            self.emit(f"{v} = A[{r.randrange(m)}]")
            self.emit(f"{v} *= 2.0")
            self.define(v, (k,))
        elif pick == 2:
            self.emit(f"A.T[{r.randrange(k)}, {r.randrange(m)}] = -7.0")
        elif pick == 3:
            with self.block("for row in A:"):
                self.emit("row += 1.0")
        elif pick == 4:  # an alias read after the original changes
            self.emit(f"{v} = x[:2]")
            self.emit(f"x[0] = 50.0")
            self.define(v, (2,))
        elif pick == 5:
            self.emit(f"{v} = A.reshape(-1)")
            self.emit(f"{v}[{r.randrange(m * k)}] = 1.0")
        elif pick == 6:  # fancy indexing copies
            self.emit(f"{v} = x[[0, 2]]")
            self.emit(f"{v}[0] = 99.0")
            self.define(v, (2,))
        elif pick == 7:
            c = r.randrange(k)
            self.emit(f"{v} = A[:, {c}]")
            self.emit(f"A[{r.randrange(m)}, {c}] = 3.0")
            self.define(v, (m,))
        elif pick == 8:
            self.emit(f"{v} = A[1:, :2]")
            self.emit(f"{v} += 1.0")
            self.define(v, (m - 1, 2))
        elif pick == 9:
            self.emit(f"{v} = x[::-1]")
            self.emit(f"{v}[0] = 0.0")
            self.define(v, (n,))
        elif pick == 10:  # a view of a local
            b = self.fresh("buf")
            self.emit(f"{b} = np.ones({n})")
            self.emit(f"{v} = {b}[1:]")
            self.emit(f"{v} *= 3.0")
            self.define(b, (n,))
        else:  # a view updated in a loop
            with self.block(f"for i in range({m}):"):
                self.emit(f"{v} = A[i]")
                self.emit(f"{v} += x[i % {n}]")

    def f_aug_slice(self) -> None:
        """Augmented slice assignment, some with the operands overlapping the target."""
        r = self.r
        n, m, k = self.n, self.m, self.k
        L = r.randint(1, min(n, k))
        a = r.randint(0, m - 1)
        forms = [
            f"A[{a}:{min(m, a + 2)}, :{L}] += x[:{L}]",
            "x[1:-1] -= 0.5 * x[:-2]",
            "x[1:] += x[:-1]",
            f"A[:, :{min(k, 3)}] *= {self.c()}",
            f"x[{n - 3}:] -= A[0, :3]" if k >= 3 else "x[-1:] -= A[0, :1]",
        ]
        if self.out:
            forms.append(f"out[:{L}] -= A[{a}, :{L}]")
        self.emit(r.choice(forms))

    def f_container(self) -> None:
        """Arrays made here, held in a dict, a list or an object and updated in place there
        (``params["w"] -= lr * g``), sometimes in a loop; now and then through a second name,
        which NumPy updates too (the item or attribute takes the traced array; through a loop
        kept as a loop: the clear error)."""
        r = self.r
        L = r.randint(1, self.n)
        h = self.fresh("hold")
        form = r.randrange(3)
        if form == 0:
            self.emit(f'{h} = {{"w": np.zeros({L}), "b": np.ones({L})}}')
            slot = f'{h}["{r.choice("wb")}"]'
        elif form == 1:
            self.emit(f"{h} = [np.zeros({L}), np.full({L}, {self.c()})]")
            slot = f"{h}[{r.randrange(2)}]"
        else:
            self.emit(f"{h} = types.SimpleNamespace(w=np.zeros({L}))")
            slot = f"{h}.w"
        op = r.choice(["+=", "-=", "*="])
        if r.random() < 0.15:  # a second name for the array
            alias = self.fresh("al")
            self.emit(f"{alias} = {slot}")
            if r.random() < 0.5:
                self.emit(f"{alias} {op} {self.chain(self.fvec(L), L, r.randint(1, 2))}")
            else:  # updated through it in a loop (reactant: NumPy's answer unrolled, else the clear error)
                with self.block(f"for i in range({self.trip()}):"):
                    self.emit(f"{alias} {op} {self.chain(self.fvec(L), L, r.randint(1, 2))} * {self.c()}")
        elif r.random() < 0.5:
            with self.block(f"for i in range({self.trip()}):"):
                self.emit(f"{slot} {op} {self.chain(self.fvec(L), L, r.randint(1, 3))} * {self.c()}")
        else:
            self.emit(f"{slot} {op} {self.chain(self.fvec(L), L, r.randint(1, 3))}")
        v = self.fresh("cv")
        self.emit(f"{v} = {slot} + 0.0")
        self.define(v, (L,))

    def f_read_after_write(self) -> None:
        r = self.r
        t = self.fresh("rw")
        a, b = r.randrange(self.n), r.randrange(self.n)
        if r.random() < 0.5:
            self.emit(f"x[{a}] = x[{b}] + {self.c()}")
            self.emit(f"{t} = x[{a}] * 3.0 + x[{b}]")
        else:
            row = r.randrange(self.m)
            self.emit(f"A[{row}, {r.randrange(self.k)}] = x[{a}]")
            self.emit(f"{t} = np.sum(A[{row}])")
        self.define(t, ())

    def f_helper(self) -> None:
        """A helper defined in the same source that updates its argument in place."""
        r = self.r
        name = self.fresh("helper")
        body = r.choice([
            ["v[0] = v[0] + c", "v *= 0.5", "return np.sum(v)"],
            ["v[1:] = v[1:] * c", "return v[0] + v[-1]"],
            ["v += c", "v[v > 1.0] = 1.0", "return np.max(v)"],
        ])
        self.helpers.append(f"def {name}(v, c):\n" + "".join(f"    {line}\n" for line in body))
        h = self.fresh("h")
        pick = r.randrange(4)
        if pick == 0:
            self.emit(f"{h} = {name}({self.out or 'x'}, {self.c()})")
        elif pick == 1:
            a = r.randrange(self.n - 2)
            self.emit(f"{h} = {name}(x[{a}:{a + 3}], {self.c()})")
        elif pick == 2:
            b = self.fresh("buf")
            self.emit(f"{b} = x * 1.0")
            self.emit(f"{h} = {name}({b}, {self.c()})")
            self.define(b, (self.n,))
        else:
            self.emit(f"{h} = x[0] * 0.0")
            with self.block(f"for i in range({self.trip()}):"):
                self.emit(f"{h} = {h} + {name}(A[i % {self.m}], 0.1)")
        self.define(h, ())

    def f_stateful_helper(self) -> None:
        """A helper called twice, with the state it reads changed in between or changed by it:
        a method reading its object's attribute, a function reading a global list, a method
        appending to its object's list (a replayed first trace would be wrong); or state a
        method changes across a loop (``_state_in_attributes``, ``_python_counter``)."""
        r = self.r
        n = self.n
        h = self.fresh("sh")
        pick = r.randrange(7)
        if pick >= 5:
            return self._state_in_attributes(h, pick == 5)
        if pick >= 3:
            return self._python_counter(h, pick == 3)
        if pick == 0:
            cls, obj = self.fresh("Scaler"), self.fresh("sc")
            self.helpers.append(f"class {cls}:\n    def __init__(self, s):\n        self.s = s\n\n"
                                f"    def apply(self, v):\n        return v * self.s + 1.0\n")
            self.emit(f"{obj} = {cls}({self.c()})")
            self.emit(f"{h} = {obj}.apply({self.fvec(n)})")
            self.emit(f"{obj}.s = " + r.choice([f"{obj}.s * 2.0", f"x[{r.randrange(n)}]", f"np.tanh({obj}.s)"]))
            self.emit(f"{h} = {h} + {obj}.apply(x)")
            self.define(h, (n,))
        elif pick == 1:
            g, fn = self.fresh("COEF").upper(), self.fresh("scaled")
            self.helpers.append(f"{g} = [1.0]\n\n\ndef {fn}(v):\n    return v * {g}[0]\n")
            self.emit(f"{h} = {fn}(x)")
            self.emit(f"{g}[0] = {self.c()}")
            self.emit(f"{h} = {h} + {fn}(x * 0.5)")
            self.emit(f"{g}[0] = 1.0")
            self.define(h, (n,))
        else:
            cls, obj = self.fresh("Acc"), self.fresh("acc")
            self.helpers.append(f"class {cls}:\n    def __init__(self):\n        self.items = []\n\n"
                                f"    def add(self, v):\n        self.items.append(np.tanh(v))\n"
                                f"        return len(self.items)\n")
            self.emit(f"{obj} = {cls}()")
            self.emit(f"{obj}.add(x)")
            self.emit(f"{obj}.add({self.fvec(n)})")
            self.emit(f"{h} = np.array({obj}.items).sum(axis=0) * {obj}.add(x[::-1])")
            self.define(h, (n,))

    def _state_in_attributes(self, h: str, used: bool) -> None:
        """An object keeping arrays in attributes across a loop (an EMA with a first-iteration
        flag, in-place or rebinding updates, a velocity starting as 0.0); ``used``: the method's
        result is used, else the call is a statement."""
        r, n = self.r, self.n
        cls, obj = self.fresh("Stateful"), self.fresh("st")
        flag = r.random() < 0.5
        start = r.choice(["np.zeros(n)", "0.0", "np.ones(n) * 0.5"])
        update = r.choice(["self.value = self.value * {a} + v * {b}",
                           "self.value *= {a}\n        self.value += v * {b}",
                           "self.value = np.tanh(self.value) * {a} + v * {b}"]).format(a=self.c(), b=self.c())
        body = (f"        if not self.ready:\n            self.value = v * 1.0\n            self.ready = True\n"
                f"        else:\n            " + update.replace("\n        ", "\n            ") + "\n") if flag \
            else f"        {update}\n"
        self.helpers.append(f"class {cls}:\n    def __init__(self, n):\n        self.value = {start}\n"
                            f"        self.ready = False\n\n    def update(self, v):\n{body}"
                            f"        return self.value\n")
        self.emit(f"{obj} = {cls}({n})")
        self.emit(f"{h} = {self.fvec(n)} * 1.0")
        with self.block(f"for i in range({self.trip()}):"):
            if used:
                self.emit(f"{h} = {obj}.update({h} * {self.c()} + x) + i * 0.01")
            else:  # the returned value unused: the call is a statement
                self.emit(f"{obj}.update(x * {self.c()} + i * 0.1)")
        self.emit(f"{h} = {h} + {obj}.value")
        self.define(h, (n,))

    def _python_counter(self, h: str, in_loop: bool) -> None:
        """A Python counter and a list of floats updated by a method, in a loop or a traced if."""
        r, n = self.r, self.n
        cls, obj = self.fresh("Counter"), self.fresh("cn")
        self.helpers.append(f"class {cls}:\n    def __init__(self):\n        self.n = 0\n        self.log = []\n\n"
                            f"    def step(self, v):\n        self.n += 1\n        self.log.append(self.n * 0.5)\n"
                            f"        return v * {self.c()} + 0.1\n")
        self.emit(f"{obj} = {cls}()")
        self.emit(f"{h} = {self.fvec(n)} * 1.0")
        if in_loop:
            with self.block(f"for i in range({self.trip()}):"):
                self.emit(f"{h} = {obj}.step({h})")
        else:
            with self.block(f"if x[{r.randrange(n)}] > {self.c()}:"):
                self.emit(f"{h} = {obj}.step(x)")
        self.emit(f"{h} = {h} + {obj}.n + sum({obj}.log)")
        self.define(h, (n,))

    def f_int(self) -> None:
        """int64 arrays: floor division and remainder, traced indices, int-float mixes."""
        r = self.r
        if not self.iv:
            return self.f_reduce()
        p, n = self.p, self.n
        v = self.fresh("iv")
        pick = r.randrange(7)
        if pick == 0:
            self.emit(f"{v} = np.sum(iv * 2) + iv[{r.randrange(p)}] // 3 - iv[{r.randrange(p)}] % 4")
            self.define(v, (), "i")
        elif pick == 1:
            self.emit(f"iv[{r.randrange(p)}] += 2")
            self.emit(f"{v} = x[iv[{r.randrange(p)}] % {n}]")
            self.define(v, ())
        elif pick == 2:
            self.emit(f"{v} = np.where(iv > 0, iv, -iv) + iv // 2")
            self.define(v, (p,), "i")
        elif pick == 3:
            L = min(p, n)
            self.emit(f"{v} = x[:{L}] * iv[:{L}]")
            self.define(v, (L,))
        elif pick == 4:
            self.emit(f"{v} = 0")
            with self.block(f"for i in range({self.trip()}):"):
                self.emit(f"{v} = {v} + iv[i % {p}]")
            self.define(v, (), "i")
        elif pick == 5:
            self.emit("iv[iv < 0] = 0")
            self.emit(f"{v} = np.cumsum(iv)")
            self.define(v, (p,), "i")
        else:
            self.emit(f"{v} = iv * 1.5 - x[:{min(p, n)}].sum()")
            self.define(v, (p,))

    # the class's own state ----------------------------------------------------------------------
    def f_state(self) -> None:
        r = self.r
        n = self.n
        pick = r.randrange(5)
        if pick == 0:
            self.emit(f"self.total += {self.fvec(n)}")
        elif pick == 1:
            self.emit(f"self.total = 0.9 * self.total + np.tanh({self.fvec(n)})")
        elif pick == 2:
            a = r.randrange(n)
            self.emit(f"self.total[{a}] = self.total[{a}] + x[{r.randrange(n)}]")
        elif pick == 3:
            self.emit("self.w *= 0.5")
        else:
            self.emit("self.count += 1")
            self.emit(f"self.total += self.count * 0.1")

    # assembling ---------------------------------------------------------------------------------
    def early_return(self, ret_now: str) -> None:
        """``if cond: return ...`` with the structure of the final return."""
        if self.r.random() < 0.2:  # inside a loop
            with self.block(f"for i in range({self.r.randint(1, 6)}):"):
                with self.block(f"if x[i % {self.n}] > {self.r.choice(['1.0', '1.5'])}:"):
                    self.emit(f"return {ret_now}")
        else:
            with self.block(f"if {self.cond()}:"):
                self.emit(f"return {ret_now}")

    def fold(self, names: list[str]) -> str:
        """A float scalar from every value in ``names``."""
        terms = [f"np.sum({v}) * {self.r.choice(['1.0', '0.5', '-0.25'])}" for v in names]
        return " + ".join(["0.0"] + terms)


def generate(seed: int, profile: str = "full", kind: str | None = None) -> Program:
    """The program of ``seed``: several features, each chosen by the seeded RNG.
    ``profile="small"`` keeps shapes, trip counts and bodies smaller (the CI part);
    ``kind`` forces ``"function"``, ``"class"`` or ``"grad"`` (a gradient-checkable function)."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}")
    pick = random.Random(f"kind-{seed}").random()
    if kind is None:
        kind = "grad" if pick < 0.2 else "class" if pick < 0.35 else "function"
    grad = kind == "grad"
    g = _Gen(seed, profile, "class" if kind == "class" else "function", grad)
    r = g.r
    pool = PURE_FEATURES if grad else ALL_FEATURES
    nfeat = r.randint(2, 3) if g.small else r.randint(3, 7)
    chosen = [r.choice(pool) for _ in range(nfeat)]
    features = list(chosen)
    early_at = chosen.index("early_return") if "early_return" in chosen else -1
    chosen = [f for f in chosen if f != "early_return"]
    # what is returned: one scalar, (scalar, a vector like x), or (scalar, the last value); an
    # early return has the structure of the final one
    ret = "scalar" if grad else r.choice(["vec", "vec", "scalar"] + ([] if early_at >= 0 else ["last"]))
    early_done = early_at < 0

    def emit_early():
        now = g.fold(g.results)
        g.early_return(f"{now}, x * 2.0" if ret == "vec" else now)

    if kind == "class":
        g.f_state()
    for pos, feat in enumerate(chosen):
        if pos == early_at and pos > 0:
            emit_early()
            early_done = True
        getattr(g, f"f_{feat}")()
        if kind == "class" and r.random() < 0.3:
            g.f_state()
    if not early_done:
        emit_early()
    if kind == "class":
        g.results.append("self.total")
    g.emit(f"total = {g.fold(g.results)}")
    if ret == "vec":
        direct = r.choice(["x", "x + 0.0"] + [v for v in g.results if g.vars.get(v, ((), "f")) == ((g.n,), "f")])
        g.emit(f"return total, {direct}")
    elif ret == "last" and g.results:
        last = g.results[-1]
        g.emit(f"return total, {last}" if last != "self.total" else "return total, self.total * 1.0")
    else:
        g.emit("return total")
    return _assemble(seed, g, kind, features, profile)


def _assemble(seed: int, g: _Gen, kind: str, chosen: list[str], profile: str) -> Program:
    head = "import types\n\nimport numpy as np\n\n\n" + "".join(h + "\n\n" for h in g.helpers)
    argnames = ", ".join(a.name for a in g.args)
    body = "\n".join(g.lines) + "\n"
    if kind == "class":
        init = ("class Model:\n"
                "    def __init__(self, w):\n"
                f"        self.total = np.zeros({g.n})\n"
                "        self.w = w\n"
                "        self.count = 0\n\n"
                f"    def step(self, {argnames}):\n")
        source = head + init + body
        r = random.Random(f"calls-{seed}")
        return Program(seed, source, g.args, chosen, "class", False, [ArgSpec("w", (g.n,), "float64")],
                       r.randint(2, 3), profile)
    source = head + f"def prog({argnames}):\n" + body
    return Program(seed, source, g.args, chosen, "function", kind == "grad", [], 1, profile)
