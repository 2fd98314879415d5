"""Builds and executes ``tour.ipynb`` (the notebook is committed with its outputs).

Run:  pip install nbclient nbformat ipykernel && python notebooks/make_tour.py
"""

import pathlib

import nbformat
from nbclient import NotebookClient

CELLS = [
    ("md", """# A tour of reactant-py

Plain NumPy code, traced into StableHLO, optimized by our own pass pipeline, differentiated on
the optimized IR and compiled by XLA through PJRT (the CPU client here)."""),
    ("code", """import numpy as np
import reactant

reactant.devices()"""),
    ("md", """## Compile a NumPy function

Arguments moved with `reactant.to_rarray` become traced inputs; the body is not modified."""),
    ("code", """rng = np.random.default_rng(0)
x_np = rng.random((256, 64), dtype=np.float32)
w_np = rng.random((64, 10), dtype=np.float32)
x, w = reactant.to_rarray(x_np), reactant.to_rarray(w_np)

@reactant.compile
def predict(w, x):
    h = np.tanh(x @ w)
    return np.exp(h) / np.exp(h).sum(axis=1, keepdims=True)

p = predict(w, x)
ref = np.exp(np.tanh(x_np @ w_np)) / np.exp(np.tanh(x_np @ w_np)).sum(axis=1, keepdims=True)
print(type(p).__name__, p.shape, p.dtype, "max error vs NumPy:", np.abs(np.asarray(p) - ref).max())"""),
    ("md", "The StableHLO that runs (after the O2 pipeline: patterns and equality saturation):"),
    ("code", """print(reactant.code_hlo(predict, w, x))"""),
    ("md", """## One executable per signature

A new shape or a changed Python scalar compiles again; a repeated call only runs."""),
    ("code", """@reactant.compile
def scale(x, c):
    return x * c

a = reactant.to_rarray(np.arange(4.0, dtype=np.float32))
print(np.asarray(scale(a, 2.0)), np.asarray(scale(a, 2.0)), np.asarray(scale(a, 3.0)))
print("compilations:", scale.compile_count)"""),
    ("md", """## In-place updates reach the caller

`x[...] = v` and `x += v` on an argument update the caller's array (its buffer is donated)."""),
    ("code", """@reactant.compile
def heat_step(u, alpha):
    lap = np.zeros_like(u)
    lap[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    u += alpha * lap

u_np = np.zeros((6, 6), np.float32); u_np[3, 3] = 1.0
u = reactant.to_rarray(u_np)
heat_step(u, 0.1)
print(np.asarray(u).round(3))"""),
    ("md", """## Control flow as ordinary Python

A `for` over a traced step count becomes one `stablehlo.while`; an `if` on a traced value a
`stablehlo.if`."""),
    ("code", """@reactant.compile
def simulate(u, steps):
    for _ in range(steps):
        lap = np.zeros_like(u)
        lap[1:-1] = u[:-2] + u[2:] - 2 * u[1:-1]
        u = u + 0.25 * lap
    if u.max() > 0.5:
        u = u / u.max()
    return u

u0 = np.zeros(32); u0[16] = 1.0
steps = reactant.to_rarray(np.int64(100))
out = simulate(reactant.to_rarray(u0), steps)
text = reactant.code_hlo(simulate, reactant.to_rarray(u0), steps)
print("while ops:", text.count("stablehlo.while"), " if ops:", text.count("stablehlo.if"))
print(np.asarray(out)[12:21].round(4))"""),
    ("md", """## Derivatives of the optimized program

`reactant.autodiff` records an `enzyme.autodiff` op; the optimizer runs first, then the AD pass
expands it, then the optimizer runs again. Checked here against central finite differences."""),
    ("code", """def loss(w, x):
    h = np.tanh(x @ w)
    return (h * h).mean()

w64 = ((w_np - 0.5) * 0.2).astype(np.float64)   # small weights: tanh not saturated
x64 = x_np.astype(np.float64)
dw, dx = reactant.autodiff(reactant.Reverse, loss, reactant.Active(reactant.to_rarray(w64)), reactant.Const(reactant.to_rarray(x64)))
e = np.zeros_like(w64); e[3, 2] = 1e-6
fd = (loss(w64 + e, x64) - loss(w64 - e, x64)) / 2e-6
print("dw[3, 2] reactant:", float(np.asarray(dw)[3, 2]), " finite difference:", fd, " dx:", dx)"""),
    ("md", """The seed case: a normalization that recomputes the norm per element. Optimized before
differentiation, the loop collapses to `x / norm(x)` and the gradient is O(n), not O(n²)."""),
    ("code", """def normalize(x):
    out = np.zeros_like(x)
    for i in range(reactant.keep(x.shape[0])):
        out[i] = x[i] / np.sqrt((x * x).sum())
    return (out * out).sum() + out[0]

xv = reactant.to_rarray(rng.random(1000))
g = reactant.gradient(normalize, xv)
xn = np.asarray(xv); n = np.linalg.norm(xn)
g_ref = (np.eye(1000)[0] - xn[0] * xn / n**2) / n      # d(x0/|x|)/dx; the sum of squares is 1
print("max |gradient - analytic|:", np.abs(np.asarray(g) - g_ref).max())"""),
    ("md", """## The optimizer on any StableHLO module

`reactant.optimize` knows nothing of the tracer: here it rewrites a JAX-lowered module from the
benchmark corpus (a matmul with a diagonal matrix built by scatter becomes a broadcast multiply)."""),
    ("code", """import pathlib
from reactant.ir import context as irc
from reactant.optimize import compile_pipeline, run_pipeline

path = pathlib.Path("../benchmarks/corpus/diagmm_scatter.fwd.mlir")
if path.exists():
    m = irc.load(path)
    body = lambda m: [l.strip() for l in irc.to_text(m).splitlines() if "stablehlo." in l]
    print("ops before:", len(body(m)))
    with m.context:
        run_pipeline(m, compile_pipeline("O2", has_autodiff=False))
    print("ops after: ", len(body(m)))
    print("\\n".join(l[:110] for l in body(m)))
else:
    print("corpus not found at", path)"""),
]


def build() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    for kind, src in CELLS:
        nb.cells.append(nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


if __name__ == "__main__":
    here = pathlib.Path(__file__).parent
    nb = build()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(here)}}).execute()
    nbformat.write(nb, here / "tour.ipynb")
    print("wrote", here / "tour.ipynb")
