"""The optimizer on the benchmark corpus: each JAX-lowered module of benchmarks/corpus (every
workload of workloads.py, written by make_corpus.py, or ``--dir``) compiled by XLA as it is
(what jax.jit runs), after reactant's O1 (greedy patterns) and O2 (patterns + equality
saturation), and, with ``--enzyme-dir DIR`` (``<name>.ez.mlir`` files), Enzyme-JaX's optimized
version of the same module, in one process, on the same random inputs, results checked equal,
timed paired and interleaved. Versions that XLA compiles to
identical code (same optimized HLO up to names) are timed once and share that timing.

Run:  python benchmarks/bench_corpus.py [--filter NAME] [--rounds N] [--fast-math] [--dir D] [--enzyme-dir D]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from corpus import DEFAULT_DIR, close, compile_text, random_inputs, run  # noqa: E402
from harness import geomean, hlo_fingerprint, measure, print_table  # noqa: E402


def enzyme_text(ez_dir: str | None, name: str) -> str | None:
    """Enzyme-JaX's module with its private ``main_N`` entry renamed to a public ``@main``."""
    path = os.path.join(ez_dir, f"{name}.ez.mlir") if ez_dir else ""
    if not os.path.exists(path):
        return None
    text = open(path).read()
    m = re.search(r"func\.func private @(main_\d+)\(", text)
    if m:
        text = text.replace(f"func.func private @{m.group(1)}(", "func.func public @main(")
        text = re.sub(rf"@{m.group(1)}\b", "@main", text)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--filter", default="")
    ap.add_argument("--dir", default=DEFAULT_DIR, help="the modules (default: benchmarks/corpus)")
    ap.add_argument("--enzyme-dir", default=None, help="Enzyme-JaX's optimized modules (<name>.ez.mlir)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--fast-math", action="store_true", help="let the optimizer use fast-math rewrites")
    a = ap.parse_args(argv)

    import jax

    from reactant.ir import context as irc
    from reactant.optimize import PassOptions, pipeline, run_pipeline

    dev = jax.extend.backend.get_backend().devices()[0]
    rows, opt_times, bad = [], [], []
    files = [(a.dir, f) for f in sorted(os.listdir(a.dir)) if f.endswith(".mlir") and a.filter in f]
    for d, f in files:
        name = f[:-5]
        path = os.path.join(d, f)
        texts = {"as-is": irc.to_text(irc.load(path))}
        times = {}
        for level in ("O1", "O2"):
            m = irc.load(path)
            t0 = time.perf_counter()
            run_pipeline(m, pipeline(level), PassOptions(fast_math=a.fast_math))
            times[level] = time.perf_counter() - t0
            texts[level] = irc.to_text(m)
        ez = enzyme_text(a.enzyme_dir, name)
        if ez is not None:
            texts["Enzyme-JaX"] = ez
        inputs = random_inputs(irc.load(path), np.random.default_rng(0))
        bufs = [jax.device_put(x, dev) for x in inputs]
        exes = {k: compile_text(t) for k, t in texts.items()}
        ref = [np.asarray(o) for o in run(exes["as-is"], bufs)]
        for k, e in exes.items():
            out = [np.asarray(o) for o in run(e, bufs)]
            if not (len(out) == len(ref) and all(close(x, y) for x, y in zip(ref, out))):
                bad.append(f"{name}:{k}")
        # a module XLA compiles to the same code as one already listed is timed once: its
        # ratio is then exactly that one's, not a fresh sample of machine noise
        same, seen = {}, {}
        for k, e in exes.items():
            fp = hlo_fingerprint("\n".join(m.to_string() for m in e.hlo_modules()))
            same[k] = seen.setdefault(fp, k)
        res = measure(name, {k: (lambda e=e: run(e, bufs)) for k, e in exes.items() if same[k] == k},
                      rounds=a.rounds, target_seconds=0.03)
        for k in exes:
            res.times[k] = res.times[same[k]]
        rows.append(res)
        opt_times.append((name, times["O1"], times["O2"]))
        line = " | ".join(f"{k} {1 / res.ratio(k, 'as-is'):.2f}x" + (f" (= {same[k]})" if same[k] != k else "")
                          for k in exes if k != "as-is")
        print(f"  {name}: {line}", flush=True)
    print_table(rows, base="as-is", title="run time: XLA as-is vs reactant O1 / O2 vs Enzyme-JaX (< 1 is faster)")
    sp2 = [1 / r.ratio("O2", "as-is") for r in rows]
    sp1 = [1 / r.ratio("O1", "as-is") for r in rows]
    print(f"\ngeomean speedup over as-is: O1 {geomean(sp1):.3f}x, O2 {geomean(sp2):.3f}x "
          f"(O2 over O1 {geomean(sp2) / geomean(sp1):.3f}x); slowest O2 case {min(sp2):.3f}x "
          f"({rows[int(np.argmin(sp2))].name})")
    ez_rows = [r for r in rows if "Enzyme-JaX" in r.times]
    if ez_rows:
        worse = [(r.name, r.ratio("O2", "as-is"), r.ratio("Enzyme-JaX", "as-is")) for r in ez_rows
                 if r.ratio("O2", "Enzyme-JaX") > 1.05]
        sp_ez = [1 / r.ratio("Enzyme-JaX", "as-is") for r in ez_rows]
        print(f"Enzyme-JaX geomean speedup over as-is: {geomean(sp_ez):.3f}x")
        print("cases where O2 is >5% slower than Enzyme-JaX:",
              ", ".join(f"{n} ({o:.2f} vs {e:.2f})" for n, o, e in worse) or "none")
    print("\noptimizer time per module (s): " + ", ".join(f"{n} O1 {t1:.2f} O2 {t2:.2f}" for n, t1, t2 in opt_times))
    if bad:
        print("MISMATCH:", bad)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
