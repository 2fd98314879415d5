"""Equality saturation on the benchmark corpus: run time as-is vs O1-like vs with eqsat.

For every module in ``../shared/bench/hlo`` (or ``--dir``), in one process:

- ``as-is``: the module compiled by XLA as it is (what ``jax.jit`` runs);
- ``O1``: after ``inline, canonicalize, patterns, cse`` (greedy patterns only);
- ``eqsat``: after ``inline, canonicalize, patterns, eqsat, patterns, cse``.

All three are checked to give the same results on the same random inputs, then timed
paired and interleaved (round-robin, rotating the order each round); the table shows the
medians, the speedups over as-is, and the optimizer time of each pipeline.

    python benchmarks/eqsat_corpus.py [--filter NAME] [--rounds 30] [--no-time]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "bench", "hlo"))

O1 = ["inline", "canonicalize", "patterns", "cse"]
EQ = ["inline", "canonicalize", "patterns", "eqsat", "patterns", "cse"]


def main_func(module):
    for op in module.body.operations:
        if op.operation.name == "func.func" and op.attributes["sym_name"].value == "main":
            return op
    raise ValueError("no @main")


def random_inputs(module, rng):
    from jaxlib.mlir import ir

    fn = main_func(module)
    args = []
    for t in ir.FunctionType(fn.attributes["function_type"].value).inputs:
        rt = ir.RankedTensorType(t)
        shape = tuple(rt.shape)
        et = str(rt.element_type)
        if et.startswith("f") or et.startswith("bf"):
            a = rng.standard_normal(shape).astype({"f32": np.float32, "f64": np.float64, "f16": np.float16}.get(et, np.float32))
        elif et == "i1":
            a = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            a = rng.integers(0, 1000, shape).astype({"i32": np.int32, "i64": np.int64}.get(et, np.int32))
        args.append(a)
    return args


def compile_text(text: str):
    import jax.extend
    import jaxlib.xla_client as xc

    backend = jax.extend.backend.get_backend()
    dev = backend.devices()[0]
    return backend.compile_and_load(text, xc.DeviceList((dev,)), xc.CompileOptions())


def run(exe, bufs):
    outs = exe.execute(bufs)
    for o in outs:
        o.block_until_ready()
    return outs


def close(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "biu":
        return bool(np.array_equal(a, b))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = max(1.0, float(np.nanmax(np.abs(a64))) if a64.size else 1.0)
    return bool(np.allclose(a64, b64, rtol=2e-3, atol=2e-4 * scale, equal_nan=True))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=DEFAULT_DIR)
    ap.add_argument("--filter", default="")
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--fast-math", action="store_true")
    args = ap.parse_args(argv)

    import jax

    from reactant.optimize import PassOptions, module_io, run_pipeline
    from reactant.optimize import eqsat as eq

    dev = jax.extend.backend.get_backend().devices()[0]
    opts = PassOptions(fast_math=args.fast_math)
    files = sorted(f for f in os.listdir(args.dir) if f.endswith(".mlir") and args.filter in f)
    rows = []
    for f in files:
        name = f[:-5]
        path = os.path.join(args.dir, f)
        texts, opt_time, eq_info = {}, {}, ""
        texts["as-is"] = module_io.to_text(module_io.load(path))
        for label, pipe in (("O1", O1), ("eqsat", EQ)):
            m = module_io.load(path)
            t0 = time.perf_counter()
            run_pipeline(m, pipe, opts)
            opt_time[label] = time.perf_counter() - t0
            texts[label] = module_io.to_text(m)
            if label == "eqsat":
                rep = eq.last_report()
                if rep is not None:
                    eq_info = (f"{rep.seconds:.2f}s seg={len(rep.segments)} repl={rep.replaced}"
                               + (" ERR" if any(s.error for s in rep.segments) else ""))
        rng = np.random.default_rng(0)
        inputs = random_inputs(module_io.load(path), rng)
        bufs = [jax.device_put(a, dev) for a in inputs]
        exes = {k: compile_text(t) for k, t in texts.items()}
        ref = [np.asarray(o) for o in run(exes["as-is"], bufs)]
        ok = {}
        for k in ("O1", "eqsat"):
            out = [np.asarray(o) for o in run(exes[k], bufs)]
            ok[k] = len(out) == len(ref) and all(close(a, b) for a, b in zip(ref, out))
        med, mins = {}, {}
        if not args.no_time:
            for k in exes:
                run(exes[k], bufs)
            # choose repetitions so each round takes a few ms at least
            t0 = time.perf_counter()
            run(exes["as-is"], bufs)
            one = time.perf_counter() - t0
            rounds = max(5, min(args.rounds, int(3.0 / max(one, 1e-4) / 3)))
            ts = {k: [] for k in exes}
            keys = list(exes)
            for r in range(rounds):
                for k in keys[r % 3:] + keys[: r % 3]:
                    t0 = time.perf_counter()
                    run(exes[k], bufs)
                    ts[k].append(time.perf_counter() - t0)
            med = {k: float(np.median(v)) for k, v in ts.items()}
            mins = {k: float(np.min(v)) for k, v in ts.items()}
        rows.append((name, med, opt_time, ok, eq_info, mins))
        if med:
            print(f"{name:22s} as-is {med['as-is']*1e3:9.3f} ms | O1 x{med['as-is']/med['O1']:5.2f} "
                  f"(min x{mins['as-is']/mins['O1']:5.2f}) | eqsat x{med['as-is']/med['eqsat']:5.2f} "
                  f"(min x{mins['as-is']/mins['eqsat']:5.2f}) | opt O1 {opt_time['O1']:.2f}s eq {opt_time['eqsat']:.2f}s"
                  f" | ok {ok['O1']}/{ok['eqsat']} | {eq_info}", flush=True)
        else:
            print(f"{name:28s} opt O1 {opt_time['O1']:.2f}s eq {opt_time['eqsat']:.2f}s | ok {ok['O1']}/{ok['eqsat']}"
                  f" | {eq_info}", flush=True)
    if rows and rows[0][1]:
        for label, idx in (("medians", 1), ("minimums", 5)):
            g1 = math.exp(np.mean([math.log(r[idx]["as-is"] / r[idx]["O1"]) for r in rows]))
            g2 = math.exp(np.mean([math.log(r[idx]["as-is"] / r[idx]["eqsat"]) for r in rows]))
            g3 = math.exp(np.mean([math.log(r[idx]["O1"] / r[idx]["eqsat"]) for r in rows]))
            worst = min(rows, key=lambda r: r[idx]["as-is"] / r[idx]["eqsat"])
            print(f"geomean speedup ({label}): O1 x{g1:.3f}  eqsat x{g2:.3f}  eqsat over O1 x{g3:.3f} "
                  f"(worst eqsat: {worst[0]} x{worst[idx]['as-is'] / worst[idx]['eqsat']:.2f})")
    bad = [r[0] for r in rows if not all(r[3].values())]
    if bad:
        print("MISMATCH:", bad)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
