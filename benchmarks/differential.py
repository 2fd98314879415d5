"""Differential testing, long form: N random NumPy programs (tests/differential/generator.py)
run in NumPy and in reactant in every mode, each program in a worker process (a segfault or a
hang is recorded as a crash and the run goes on).

    python benchmarks/differential.py --count 500 [--seed 0] [--jobs 2] [--modes auto-O0 eager ...]
                                      [--profile full|small] [--show 5] [--json results.json]

Prints one summary line

    differential: 500 programs, 3200 runs: ok ..., error ..., crash ..., mismatch ... (numpy-invalid discarded: ...)

then the distinct causes (outcomes grouped by exception type and message, or by what
differed), then the first ``--show`` mismatches and crashes with their seeds and sources.
Reproduce one with ``python -c "from tests.differential.runner import run_seed; print(run_seed(SEED))"``.
Exits with status 1 when any run mismatched.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from dataclasses import asdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tests.differential.runner import (ALL_MODES, Outcome, failure_report, run_pool, summarize,  # noqa: E402
                                       summary_line)


def causes(results) -> list[tuple[str, int, set, int]]:
    """(signature, count, modes, first seed) per distinct cause of a non-ok outcome, most frequent first."""
    groups: dict[str, list] = defaultdict(lambda: [0, set(), None])
    for r in results:
        for o in r.outcomes:
            if o.status == "ok":
                continue
            g = groups[o.signature()]
            g[0] += 1
            g[1].add(o.mode)
            g[2] = o.seed if g[2] is None else min(g[2], o.seed)
    return sorted(((sig, c, modes, seed) for sig, (c, modes, seed) in groups.items()), key=lambda t: -t[1])


def minimized(outcomes, k: int, profile: str) -> None:
    """Print, for each of the ``k`` most frequent causes of mismatches and crashes, its
    smallest program shrunk while it fails the same way (tests/differential/minimize.py)."""
    from tests.differential.generator import generate
    from tests.differential.minimize import minimize

    by_cause: dict[str, list] = defaultdict(list)
    for o in outcomes:
        if o.status in ("mismatch", "crash") and o.exc_type not in ("WorkerDied", "Timeout"):
            by_cause[o.signature()].append(o)
    for sig, outs in sorted(by_cause.items(), key=lambda kv: -len(kv[1]))[:k]:
        o = min(outs, key=lambda o: len(o.source))
        small = minimize(generate(o.seed, profile), o.mode, o)
        modes = sorted({x.mode for x in outs})
        print(f"=== {sig} ({len(outs)} runs; modes {', '.join(modes)}): seed {o.seed}, {o.mode}, minimized")
        print(small.source)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100, help="programs to run")
    ap.add_argument("--seed", type=int, default=0, help="first seed (seeds seed..seed+count-1)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--modes", nargs="+", default=list(ALL_MODES), choices=ALL_MODES)
    ap.add_argument("--profile", default="full", choices=("full", "small"))
    ap.add_argument("--show", type=int, default=5, help="mismatches and crashes to print in full")
    ap.add_argument("--json", help="write every non-ok outcome here")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    ap.add_argument("--minimize", type=int, default=0, metavar="K",
                    help="shrink one program per cause for the K most frequent causes of mismatches and crashes")
    ap.add_argument("--load", metavar="FILE", help="with --minimize: take the outcomes of an earlier --json run")
    args = ap.parse_args(argv)
    if args.load:
        with open(args.load) as f:
            outcomes = [Outcome(**o) for o in json.load(f)["outcomes"]]
        minimized(outcomes, args.minimize or 10, args.profile)
        return 0

    t0 = time.time()
    done = [0]

    def progress(res):
        done[0] += 1
        if not args.quiet and (done[0] % 10 == 0 or done[0] == args.count):
            print(f"  {done[0]}/{args.count} programs, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)

    results = run_pool(range(args.seed, args.seed + args.count), args.modes, jobs=args.jobs,
                       profile=args.profile, on_result=progress)
    print(summary_line(results))
    counts = summarize(results)
    per_mode = defaultdict(lambda: defaultdict(int))
    for r in results:
        for o in r.outcomes:
            per_mode[o.mode][o.status] += 1
    print("per mode: " + "; ".join(f"{m} " + ", ".join(f"{s} {n}" for s, n in sorted(c.items()))
                                   for m, c in per_mode.items()))
    named = [o for r in results for o in r.outcomes if o.status == "error"]
    if named:
        print(f"errors naming the program's source line: {sum(bool(o.names_line) for o in named)} of {len(named)}")
    print("causes (count, modes, first seed):")
    for sig, c, modes, seed in causes(results):
        print(f"  {c:5d}  {sig}\n         modes: {', '.join(sorted(modes))}; seed {seed}")
    shown = 0
    for r in results:
        for o in r.outcomes:
            if o.status in ("mismatch", "crash") and shown < args.show:
                print(failure_report(o))
                shown += 1
    if args.minimize:
        minimized([o for r in results for o in r.outcomes], args.minimize, args.profile)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": counts, "outcomes": [asdict(o) for r in results for o in r.outcomes
                                                       if o.status != "ok"],
                       "invalid": {r.seed: r.invalid for r in results if not r.valid}}, f, indent=1)
    print(f"({time.time() - t0:.0f} s)", file=sys.stderr)
    return 1 if counts["mismatch"] else 0


if __name__ == "__main__":
    sys.exit(main())
