"""Optimizer time per corpus module and level: ops before / after and seconds.

For every module in ``benchmarks/corpus`` (or ``--dir``) and every level (``O1 O2 O3``
by default), parse it in a fresh context, run the level's pipeline, and report the op
count before and after and the wall time of the pipeline (best of ``--repeat`` runs, each
on a fresh parse). ``--passes`` adds the per-pass split of the slowest pass.

    python benchmarks/optimizer_time.py [--levels O1,O2,O3] [--filter NAME] [--repeat 3]
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from reactant.optimize import pipeline, run_pipeline  # noqa: E402
from reactant.ir.context import load  # noqa: E402
from reactant.ir.context import count_ops  # noqa: E402

DEFAULT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def time_level(path: str, level: str, repeat: int):
    best, n0, n1, stats_best = None, 0, 0, None
    for _ in range(repeat):
        m = load(path)
        n0 = count_ops(m)
        stats = []
        t0 = time.perf_counter()
        run_pipeline(m, pipeline(level), stats=stats, verify=False)
        dt = time.perf_counter() - t0
        n1 = count_ops(m)
        if best is None or dt < best:
            best, stats_best = dt, stats
    return n0, n1, best, stats_best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=DEFAULT_DIR)
    ap.add_argument("--levels", default="O1,O2,O3")
    ap.add_argument("--filter", default="")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--passes", action="store_true", help="show the slowest pass of each run")
    args = ap.parse_args(argv)
    levels = [x for x in args.levels.split(",") if x]
    paths = sorted(p for p in glob.glob(os.path.join(args.dir, "*.mlir")) if args.filter in os.path.basename(p))
    if not paths:
        print(f"no modules in {args.dir}", file=sys.stderr)
        return 1
    head = f"{'module':<28} {'ops':>5}" + "".join(f" {lv + ' ops':>7} {lv + ' s':>8}" for lv in levels)
    if args.passes:
        head += "   slowest pass"
    print(head)
    print("-" * len(head))
    totals = {lv: 0.0 for lv in levels}
    worst = {lv: (0.0, "") for lv in levels}
    for p in paths:
        name = os.path.basename(p)[:-5]
        row = None
        slow = ""
        for lv in levels:
            n0, n1, dt, stats = time_level(p, lv, args.repeat)
            if row is None:
                row = f"{name:<28} {n0:>5}"
            row += f" {n1:>7} {dt:>8.3f}"
            totals[lv] += dt
            if dt > worst[lv][0]:
                worst[lv] = (dt, name)
            if args.passes and stats:
                s = max(stats, key=lambda s: s.seconds)
                slow += f" {lv}:{s.name} {s.seconds:.3f}s"
        print(row + ("  " + slow if slow else ""), flush=True)
    print("-" * len(head))
    for lv in levels:
        print(f"{lv}: total {totals[lv]:.2f} s over {len(paths)} modules, "
              f"slowest {worst[lv][1]} {worst[lv][0]:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
