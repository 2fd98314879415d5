"""Run every kernel of ``kernels.py`` unmodified through ``@reactant.compile`` and print, per
kernel, whether it works (equal to NumPy; random kernels: statistically), its first-call time
(trace, optimize, compile, run) and its steady time, next to NumPy and to ``jax.jit`` of the
jax.numpy version, and the loop decisions (``REACTANT_LOG``). In-place kernels are checked on
the final state of every argument and timed on fresh copies of their inputs; a WRONG kernel
gets no speed figure.

    python benchmarks/kernels/run.py [name ...]
"""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/

import io  # noqa: E402
from contextlib import redirect_stderr  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402

import reactant  # noqa: E402
from harness import Fresh, call_time  # noqa: E402
from inplace import (differences, jax_timer, loop_decisions, numpy_state, numpy_timer, reactant_timer,  # noqa: E402
                     to_device)
from kernels import KERNELS  # noqa: E402


def _ready(out):
    for leaf in jax.tree_util.tree_leaves(out):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return out


def _steady(call, reps: int = 15) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        _ready(call())
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _host(out):
    return np.asarray(out) if not isinstance(out, (tuple, list)) else [np.asarray(o) for o in out]


def run(name: str, k: dict) -> dict:
    args = k["inputs"]()
    fn, jfn = k["numpy"], k["jax"]
    stats, inplace = k["check"] == "stats", k["inplace"]
    row = {"name": name, "loops": "-"}
    if inplace:  # every timed call on fresh copies of the inputs, made outside the timing
        want = numpy_state(fn, args)
        row["numpy"] = _steady_fresh(numpy_timer(fn, args), 5)
    else:
        want = fn(*args)
        row["numpy"] = _steady(lambda: fn(*args), 5)
    rargs = tuple(to_device(args))
    if stats:
        rargs = rargs + (reactant.random.default_rng(7),)
    log = io.StringIO()
    try:
        t0 = time.perf_counter()
        cf = reactant.compile(fn, verbose=True)  # verbose: the loop decisions, read from the log
        with redirect_stderr(log):
            got = _ready(cf(*rargs))
            if inplace:
                _ready(list(rargs))
        row["first"] = time.perf_counter() - t0
        row["loops"] = loop_decisions(log.getvalue())
        if inplace:
            bad = differences(want, (_host(got) if got is not None else None, [np.asarray(r) for r in rargs]),
                              rtol=1e-9, atol=1e-12)
            ok = not bad
            row["detail"] = "; ".join(bad)
        elif stats:
            ok = abs(float(_host(got)) - float(want)) < k["tol"]
        else:
            g, w = _host(got), _host(want)
            ok = all(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True)
                     for a, b in zip(g if isinstance(g, list) else [g], w if isinstance(w, list) else [w]))
        row["status"] = "ok" if ok else "WRONG"
        if ok:  # a wrong kernel gets no speed figure
            row["steady"] = _steady_fresh(reactant_timer(cf, args)) if inplace else _steady(lambda: cf(*rargs))
    except Exception as e:  # noqa: BLE001  (the table reports every failure)
        row["status"] = f"FAIL {type(e).__name__}: {str(e).splitlines()[0][:60]}"
    if jfn is not None:
        with jax.enable_x64(True):
            t0 = time.perf_counter()
            jf = jax.jit(jfn)
            _ready(jf(*args))
            row["jax_first"] = time.perf_counter() - t0
            # in-place rows: jax's functional kernel on fresh device copies, as reactant's calls
            row["jax"] = _steady_fresh(jax_timer(jf, args)) if inplace else _steady(lambda: jf(*args))
    return row


def _steady_fresh(impl: Fresh, reps: int = 15) -> float:
    """Median seconds of ``reps`` calls of an in-place implementation, each on fresh inputs."""
    return statistics.median(call_time(impl) for _ in range(reps))


def _ms(v) -> str:
    return f"{1e3 * v:9.3f}" if v is not None else f"{'-':>9s}"


def main() -> None:
    names = [a for a in sys.argv[1:] if a in KERNELS] or list(KERNELS)
    print(f"reactant {reactant.__version__}, jax {jax.__version__}, numpy {np.__version__}, {os.cpu_count()} CPU cores")
    print("in-place kernels (*_inplace, *_views, *_into_out): checked on every argument's final state, timed "
          "on fresh copies of their inputs (made outside the timing); jax.jit runs their functional equivalent, "
          "also on fresh copies")
    print(f"{'kernel':24s} {'status':8s} | {'first s':>8s} {'jax first':>9s} | {'steady ms':>9s} {'numpy ms':>9s} "
          f"{'jax ms':>9s} | {'vs numpy':>8s} {'vs jax':>7s} | loops (line:decision)")
    rows = [run(n, KERNELS[n]) for n in names]
    for r in rows:
        st = r["status"]
        steady, nump, jx = r.get("steady"), r.get("numpy"), r.get("jax")
        vs_np = f"{steady / nump:8.2f}" if steady and nump else f"{'-':>8s}"
        vs_jx = f"{steady / jx:7.2f}" if steady and jx else f"{'-':>7s}"
        first = f"{r['first']:8.3f}" if "first" in r else f"{'-':>8s}"
        jfirst = f"{r['jax_first']:9.3f}" if "jax_first" in r else f"{'-':>9s}"
        print(f"{r['name']:24s} {st[:8]:8s} | {first} {jfirst} | {_ms(steady)} {_ms(nump)} {_ms(jx)} | {vs_np} {vs_jx}"
              f" | {r['loops']}")
        if st not in ("ok",):
            print(f"{'':24s} {st}" + (f": {r['detail']}" if r.get("detail") else ""))
    n_ok = sum(r["status"] == "ok" for r in rows)
    print(f"\n{n_ok} of {len(rows)} kernels run unmodified and match NumPy")


if __name__ == "__main__":
    main()
