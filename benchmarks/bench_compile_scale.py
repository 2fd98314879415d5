"""First-call cost against program size: time and peak memory of every compilation stage for
programs of about 10^3, 10^4 and 10^5 traced ops, next to ``jax.jit`` of the jax.numpy
version (trace + lowering, XLA compile), with the fitted exponent of each stage's time against
op count (1.0: linear).

Programs (each written once for NumPy and once for jax.numpy, sized by a repeat count):
- ``stencil``: an unrolled 1-D three-point stencil time loop (slices and elementwise ops);
- ``chain``: a long chain of elementwise ops and small matrix products;
- ``mlp_grad``: the gradient of a deep MLP whose layers' weights are separate arrays (forward,
  AD, optimizer on the derivative; one output array per layer);
- ``mlp_stacked``: the same MLP with its weights stacked in one array, layer ``k`` reading ``W[k]``;
- ``loop_kernel``: a Gauss-Seidel sweep over a small grid, unrolled (scalar indexing).

Loops are forced to unroll (``loops="unroll"``) so that the program has the stated size. Our XLA
stage is the time waited for XLA after the optimizer: on programs of up to 2,000 ops XLA's
compile overlaps the last equality-saturation pass (``reactant/speculation.py``). Every
configuration runs in its own process (peak RSS per configuration, a time limit).

    python benchmarks/bench_compile_scale.py [--sizes 1e3,1e4,1e5] [--level O2] [--timeout 600]
    python benchmarks/bench_compile_scale.py --smoke      # 10^3 ops only, a few seconds
    python benchmarks/bench_compile_scale.py --sizes 1e5 --jax-max-ops 1e4   # ours only at 10^5
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# ops per repeat of each program's unit (measured on the traced module; used to size them)
PROGRAMS = ("stencil", "chain", "mlp_grad", "mlp_stacked", "loop_kernel")


def _np_program(name: str, reps: int):
    import numpy as np

    if name == "stencil":
        def f(x):
            for _ in range(reps):
                x = x.copy()
                x[1:-1] = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
            return x
        return f, (np.random.default_rng(0).standard_normal(256),)
    if name == "chain":
        def f(x, w):
            for k in range(reps):
                x = np.tanh(x @ w) * 0.5 + x * (0.1 + 1e-6 * k)
            return x
        r = np.random.default_rng(0)
        return f, (r.standard_normal((8, 16)), r.standard_normal((16, 16)) * 0.2)
    if name == "mlp_grad":
        import reactant

        def loss(ws, x):
            for w in ws:
                x = np.tanh(x @ w)
            return np.sum(x * x)

        def f(ws, x):
            return reactant.gradient(loss, ws, x)
        r = np.random.default_rng(0)
        return f, ([r.standard_normal((16, 16)) * 0.3 for _ in range(reps)], r.standard_normal((4, 16)))
    if name == "mlp_stacked":
        import reactant

        def loss(W, x):
            for k in range(reps):
                x = np.tanh(x @ W[k])
            return np.sum(x * x)

        def f(W, x):
            return reactant.gradient(loss, W, x)
        r = np.random.default_rng(0)
        return f, (r.standard_normal((reps, 16, 16)) * 0.3, r.standard_normal((4, 16)))
    if name == "loop_kernel":
        n = 8

        def f(A):
            for _ in range(reps):
                for i in range(1, n - 1):
                    for j in range(1, n - 1):
                        A[i, j] = (A[i - 1, j] + A[i, j - 1] + A[i, j] + A[i, j + 1] + A[i + 1, j]) * 0.2
            return A
        return f, (np.random.default_rng(0).standard_normal((n, n)),)
    raise KeyError(name)


def _jax_program(name: str, reps: int):
    import jax
    import jax.numpy as jnp

    if name == "stencil":
        def f(x):
            for _ in range(reps):
                x = x.at[1:-1].set(0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:])
            return x
    elif name == "chain":
        def f(x, w):
            for k in range(reps):
                x = jnp.tanh(x @ w) * 0.5 + x * (0.1 + 1e-6 * k)
            return x
    elif name == "mlp_grad":
        def loss(ws, x):
            for w in ws:
                x = jnp.tanh(x @ w)
            return jnp.sum(x * x)

        f = jax.grad(loss)
    elif name == "mlp_stacked":
        def loss(W, x):
            for k in range(reps):
                x = jnp.tanh(x @ W[k])
            return jnp.sum(x * x)

        f = jax.grad(loss)
    elif name == "loop_kernel":
        n = 8

        def f(A):
            for _ in range(reps):
                for i in range(1, n - 1):
                    for j in range(1, n - 1):
                        A = A.at[i, j].set((A[i - 1, j] + A[i, j - 1] + A[i, j] + A[i, j + 1] + A[i + 1, j]) * 0.2)
            return A
    return f


_UNIT_OPS = {"stencil": 16, "chain": 9, "mlp_grad": 2.2, "mlp_stacked": 4.2, "loop_kernel": 720}


def _reps(name: str, ops: int) -> int:
    return max(1, round(ops / _UNIT_OPS[name]))


_STAGE = re.compile(r"reactant: [^:]+: (trace|pass \w+|XLA compile) ([0-9.]+) ms(?:, (\d+)(?: -> (\d+))? ops)?")


def child_reactant(name: str, reps: int, level: str) -> dict:
    import io
    import contextlib
    import numpy as np

    import reactant

    f, args = _np_program(name, reps)
    cf = reactant.compile(f, optimize=level, loops="unroll", verbose=True)
    rargs = [[reactant.to_rarray(a) for a in x] if isinstance(x, list) else reactant.to_rarray(x) for x in args]
    err = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stderr(err):
        out = cf(*rargs)
    total = time.perf_counter() - t0
    stages: dict[str, float] = {}
    traced_ops = None
    for line in err.getvalue().splitlines():
        m = _STAGE.search(line)
        if not m:
            continue
        stage = m.group(1).replace("pass ", "")
        stages[stage] = stages.get(stage, 0.0) + float(m.group(2)) / 1e3
        if stage == "trace":
            traced_ops = int(m.group(3))
    leaves = out if isinstance(out, (list, tuple)) else [out]
    ok = all(np.all(np.isfinite(np.asarray(v))) for v in leaves)
    return {"total": total, "stages": stages, "ops": traced_ops, "ok": bool(ok),
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def child_jax(name: str, reps: int) -> dict:
    import jax

    jax.config.update("jax_enable_x64", True)
    _, args = _np_program(name, reps) if name not in ("mlp_grad", "mlp_stacked") else (None, None)
    if name in ("mlp_grad", "mlp_stacked"):  # without importing reactant
        import numpy as np

        r = np.random.default_rng(0)
        ws = [r.standard_normal((16, 16)) * 0.3 for _ in range(reps)] if name == "mlp_grad" else \
            r.standard_normal((reps, 16, 16)) * 0.3
        args = (ws, r.standard_normal((4, 16)))
    f = _jax_program(name, reps)
    t0 = time.perf_counter()
    lowered = jax.jit(f).lower(*args)
    t1 = time.perf_counter()
    exe = lowered.compile()
    t2 = time.perf_counter()
    jax.block_until_ready(exe(*args))
    t3 = time.perf_counter()
    return {"total": t3 - t0, "stages": {"trace+lower": t1 - t0, "XLA compile": t2 - t1},
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _run(args: list[str], timeout: float) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child"] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:100]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def _fit(xs, ys) -> float | None:
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x and y and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e3,1e4,1e5")
    ap.add_argument("--level", default="O2")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--only", default="")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--child", nargs="+")
    ap.add_argument("--jax-max-ops", type=float, default=float("inf"),
                    help="skip jax.jit above this many ops (its 10^5-op compiles take 5-20+ minutes each)")
    a = ap.parse_args()
    if a.child:
        kind, name, reps = a.child[0], a.child[1], int(a.child[2])
        res = child_reactant(name, reps, a.child[3]) if kind == "reactant" else child_jax(name, reps)
        print(json.dumps(res))
        return
    sizes = [1000] if a.smoke else [int(float(s)) for s in a.sizes.split(",")]
    names = [n for n in PROGRAMS if not a.only or n in a.only.split(",")]
    print(f"level {a.level}; times in seconds; peak RSS in MB")
    print("| program | target ops | traced ops | reactant total | stages (trace / passes / eqsat / autodiff / XLA) "
          "| RSS | jax total (lower / XLA) | jax RSS | total / jax |")
    print("|---|---|---|---|---|---|---|---|---|")
    fits: dict = {}
    for name in names:
        for size in sizes:
            reps = _reps(name, size)
            r = _run(["reactant", name, str(reps), a.level], a.timeout)
            j = _run(["jax", name, str(reps)], a.timeout) if size <= a.jax_max_ops else {"skipped": True}
            if "stages" not in r:
                print(f"| {name} | {size} | - | {r} | | | | | |", flush=True)
                continue
            st = r["stages"]
            passes = sum(v for k, v in st.items() if k not in ("trace", "XLA compile", "eqsat", "eqsat_o3",
                                                                  "autodiff"))
            eq = st.get("eqsat", 0.0) + st.get("eqsat_o3", 0.0)
            ad = st.get("autodiff", 0.0)
            for k, v in (("trace", st.get("trace", 0.0)), ("passes", passes), ("eqsat", eq), ("autodiff", ad),
                         ("XLA", st.get("XLA compile", 0.0)), ("total", r["total"])):
                fits.setdefault((name, k), []).append((r["ops"], v))
            jt = j.get("stages", {})
            ratio = f"{r['total'] / j['total']:.2f}" if "total" in j else "-"
            jcell = (f"{j['total']:.2f} ({jt.get('trace+lower', 0):.2f} / {jt.get('XLA compile', 0):.2f})"
                     if "total" in j else ("not run" if j.get("skipped") else str(j)))
            print(f"| {name} | {size} | {r['ops']} | {r['total']:.2f} | {st.get('trace', 0):.2f} / {passes:.2f} / "
                  f"{eq:.2f} / {ad:.2f} / {st.get('XLA compile', 0):.2f} | {r['rss_mb']:.0f} | {jcell} | "
                  f"{j.get('rss_mb', 0):.0f} | {ratio} |", flush=True)
    if len(sizes) > 1:
        print("\nfitted exponent of time against traced ops (1.0 = linear):")
        for name in names:
            cells = []
            for k in ("trace", "passes", "eqsat", "autodiff", "XLA", "total"):
                pts = fits.get((name, k), [])
                e = _fit([p[0] for p in pts], [p[1] for p in pts])
                cells.append(f"{k} {e:.2f}" if e is not None else f"{k} -")
            print(f"  {name}: " + ", ".join(cells))


if __name__ == "__main__":
    main()
