"""What verifying every module before a pass costs: the time spent in ``verify_module`` (the
pipeline's input, and the output of every pass that may have changed it) against the whole
first call (trace, optimize, XLA compile, run) of each program.

Programs: the forward and gradient programs of ``benchmarks/workloads.py`` (the level given,
O2 by default), and the large generated programs of ``bench_compile_scale.py`` (``--scale``,
about 10^4 traced ops each by default). Each program is compiled once in this process (the
times include nothing cached: every program is new).

    python benchmarks/verify_cost.py [--level O2] [--only NAME,...] [--scale 1e4] [--no-workloads]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402

import reactant  # noqa: E402
from reactant.optimize import passes  # noqa: E402

_spent = [0.0, 0]  # seconds in verify_module, calls
_verify = passes.verify_module


def _timed_verify(*args, **kwargs):
    t0 = time.perf_counter()
    try:
        return _verify(*args, **kwargs)
    finally:
        _spent[0] += time.perf_counter() - t0
        _spent[1] += 1


passes.verify_module = _timed_verify  # run_pipeline looks the name up in its module


def _first_call(fn, args, level: str, loops: str) -> tuple[float, float, int]:
    """(first-call seconds, seconds verifying, verify calls) of a new compiled ``fn``."""
    cf = reactant.compile(fn, optimize=level, loops=loops)
    rargs = [[reactant.to_rarray(a) for a in x] if isinstance(x, list) else reactant.to_rarray(x) for x in args]
    _spent[0], _spent[1] = 0.0, 0
    t0 = time.perf_counter()
    out = cf(*rargs)
    for leaf in (out if isinstance(out, (tuple, list)) else [out]):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return time.perf_counter() - t0, _spent[0], _spent[1]


def _row(name: str, total: float, ver: float, calls: int, rows: list) -> None:
    rows.append((total, ver))
    print(f"{name:<34} {total:>9.3f} {ver * 1e3:>10.1f} {calls:>6} {100 * ver / total:>7.2f}%", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default="O2")
    ap.add_argument("--only", default="")
    ap.add_argument("--scale", default="1e4", help="ops of the generated programs ('' for none)")
    ap.add_argument("--no-workloads", action="store_true")
    args = ap.parse_args(argv)
    only = {s for s in args.only.split(",") if s}
    print(f"{'program':<34} {'first s':>9} {'verify ms':>10} {'calls':>6} {'share':>8}")
    rows: list = []
    if not args.no_workloads:
        from workloads import WORKLOADS, grad_programs

        for w in WORKLOADS:
            if only and w.name not in only:
                continue
            wargs = w.make(np.random.default_rng(0))
            total, ver, calls = _first_call(w.np_fn, wargs, args.level, w.loops)
            _row(f"{w.name} fwd", total, ver, calls, rows)
            gargs = tuple(wargs)
            if w.np_grad is None:  # as bench_workloads: a fixed cotangent of the result
                shape = np.shape(w.np_fn(*wargs)) if w.name != "normalize_loop" else wargs[0].shape
                gargs += (np.random.default_rng(1).standard_normal(shape).astype(np.float32),)
            g, _ = grad_programs(w, None, None)
            total, ver, calls = _first_call(g, gargs, args.level, w.loops)
            _row(f"{w.name} grad", total, ver, calls, rows)
    if args.scale:
        from bench_compile_scale import PROGRAMS, _np_program, _reps

        ops = int(float(args.scale))
        for name in PROGRAMS:
            if only and name not in only:
                continue
            f, fargs = _np_program(name, _reps(name, ops))
            total, ver, calls = _first_call(f, fargs, args.level, "unroll")
            _row(f"{name} ({args.scale} ops)", total, ver, calls, rows)
    if rows:
        tot = sum(r[0] for r in rows)
        ver = sum(r[1] for r in rows)
        shares = sorted(100 * r[1] / r[0] for r in rows)
        print(f"all: {ver:.2f} s of {tot:.1f} s verifying ({100 * ver / tot:.2f}%); per program median "
              f"{shares[len(shares) // 2]:.2f}%, max {shares[-1]:.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
