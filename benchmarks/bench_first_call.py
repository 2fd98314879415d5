"""First calls: how long ``reactant.compile(f)(*args)`` takes the first time, split into its
stages (trace / optimization passes / equality saturation / XLA compile and the run), next to
``jax.jit``'s first call of the jax.numpy version of the same program. Each side of each program
runs in a fresh process of its own (the backend started before timing), so nothing is cached
and neither side pays for the other's imports.

Programs: the loop kernels of ``loop_kernels.py`` (textbook loops, n as given) and the
``benchmarks/kernels`` kernels (unmodified NumPy library-style code).

    python benchmarks/bench_first_call.py [--n 64] [--only NAME ...] [--optimize O2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# one side of one program, in its own process: prints one JSON line. Each side runs in a fresh
# process of its own, so neither pays for what the other imported or warmed (jax's first linalg
# lowering imports scipy.linalg, ~0.25 s, whoever comes first)
CHILD = r"""
import json, os, sys, time
sys.path.insert(0, {here!r}); sys.path.insert(0, os.path.join({here!r}, "kernels"))
import numpy as np
which, name, n, opt, side = {which!r}, {name!r}, {n!r}, {opt!r}, {side!r}
MARK = {mark!r}
if which == "loop":
    import loop_kernels as lk
    fn, args = (lk.KERNELS[name] if side == "reactant" else lk.jax_versions()[0][name]), lk.inputs(name, n)
else:
    from kernels import KERNELS
    k = KERNELS[name]
    fn, args = k["numpy" if side == "reactant" else "jax"], k["inputs"]()
import jax
if side == "reactant":
    import reactant
    np.asarray(reactant.to_rarray(np.ones(2)) + 1.0)  # the backend is up before the timing
    dev = [reactant.to_rarray(np.array(a, copy=True)) if isinstance(a, np.ndarray) else a for a in args]
    print(MARK, file=sys.stderr, flush=True)  # (the stages are read from the lines after it)
    t0 = time.perf_counter()
    out = reactant.compile(fn, optimize=opt)(*dev)
else:
    jax.block_until_ready(jax.jit(lambda a: a + 1)(np.ones(2)))
    dev = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    t0 = time.perf_counter()
    out = jax.jit(fn)(*dev)
jax.block_until_ready(jax.tree_util.tree_leaves(out))
print(json.dumps({{"t": time.perf_counter() - t0}}))
"""

_LINE = re.compile(r"reactant: [^:]+: (.+?) ([0-9.]+) ms")
# the child's line just before the timed call: the warm-up's compile is not a stage of it
MARK = "bench_first_call: timed call"


def stages(stderr: str) -> dict[str, float]:
    """Seconds per stage from ``REACTANT_LOG=1`` lines (those after ``MARK`` when present)."""
    out = {"trace": 0.0, "passes": 0.0, "saturation": 0.0, "xla": 0.0}
    stderr = stderr.split(MARK, 1)[-1]
    for m in _LINE.finditer(stderr):
        what, ms = m.group(1), float(m.group(2)) / 1e3
        if what == "trace":
            out["trace"] += ms
        elif what.startswith("pass eqsat"):
            out["saturation"] += ms
        elif what.startswith("pass "):
            out["passes"] += ms
        elif what.startswith("XLA compile"):
            out["xla"] += ms
    return out


def _side(which: str, name: str, n: int, opt: str, side: str) -> tuple[float, str]:
    code = CHILD.format(here=HERE, which=which, name=name, n=n, opt=opt, side=side, mark=MARK)
    env = dict(os.environ, REACTANT_LOG="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600,
                       check=False)
    if r.returncode != 0:
        raise RuntimeError((r.stderr.strip().splitlines() or ["?"])[-1][:80])
    return json.loads(r.stdout.strip().splitlines()[-1])["t"], r.stderr


def run_one(which: str, name: str, n: int, opt: str, repeat: int = 1) -> dict:
    """The fastest of ``repeat`` fresh-process first calls on each side, with the stages of
    reactant's fastest."""
    try:
        rs = [_side(which, name, n, opt, "reactant") for _ in range(repeat)]
        js = [_side(which, name, n, opt, "jax")[0] for _ in range(repeat)]
    except RuntimeError as e:
        return {"name": name, "error": str(e)}
    t, err = min(rs)
    row = {"reactant": t, "jax": min(js), "name": name}
    row.update(stages(err))
    return row


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64, help="size of the loop kernels")
    ap.add_argument("--optimize", default="O2")
    ap.add_argument("--only", nargs="*", help="program names")
    ap.add_argument("--repeat", type=int, default=1, help="fresh processes per side; the fastest counts")
    args = ap.parse_args(argv)
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(HERE, "kernels"))
    import loop_kernels
    from kernels import KERNELS

    todo = [("loop", k) for k in loop_kernels.KERNELS] + [("kernel", k) for k in KERNELS]
    if args.only:
        todo = [(w, k) for w, k in todo if k in args.only]
    print(f"first calls, optimize={args.optimize}, loop kernels at n={args.n}; seconds, each side the fastest "
          f"of {args.repeat} fresh process(es)")
    print(f"{'program':28s} {'reactant':>9s} {'trace':>7s} {'passes':>7s} {'eqsat':>7s} {'XLA':>7s} "
          f"{'jax.jit':>8s} {'ratio':>6s}")
    ratios = []
    for which, name in todo:
        row = run_one(which, name, args.n, args.optimize, args.repeat)
        if "error" in row:
            print(f"{name:28s} error: {row['error']}")
            continue
        ratio = row["reactant"] / row["jax"]
        ratios.append(ratio)
        print(f"{name:28s} {row['reactant']:9.3f} {row['trace']:7.3f} {row['passes']:7.3f} "
              f"{row['saturation']:7.3f} {row['xla']:7.3f} {row['jax']:8.3f} {ratio:6.2f}")
    if ratios:
        import math

        g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"{len(ratios)} programs: reactant / jax.jit first call geomean {g:.2f}x, max {max(ratios):.2f}x")


if __name__ == "__main__":
    main()
