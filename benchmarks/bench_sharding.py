"""Sharded workloads, reactant vs jax.jit with the same input and output shardings.

    python benchmarks/bench_sharding.py            # 8 devices: everything; 64 and 512: compile only
    python benchmarks/bench_sharding.py --quick    # 8 devices only

Each workload is written once in plain NumPy (for reactant) and once in jax.numpy (for
jax.jit). Four tables:

1. Communication per step, from the compiled per-device HLO of both: collectives by kind and
   the bytes one device sends, on meshes of 8, 64 and 512 simulated CPU devices.
   Byte model (what one device sends, g = devices in the group, S = the op's data size):
   all-reduce (ring) 2(g-1)/g*S; all-gather (g-1)/g*S of the result; reduce-scatter (g-1)/g*S
   of the operand; all-to-all (g-1)/g*S; collective-permute S (each device sends its operand).
2. Runtime on 8 devices: paired, interleaved rounds; the median of per-round ratios.
3. Compile time (trace, optimize, partition, compile; no run) at 8 and 512 devices.
4. Step time on paper for 8 to 4096 devices (weak scaling: the per-device problem of the
   8-device run), from XLA's per-device cost analysis and the collectives, on an accelerator
   model stated in the table's header.

Meshes above 8 devices run in subprocesses started with the matching XLA_FLAGS.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time


def _devices_from_argv() -> int:
    for i, a in enumerate(sys.argv):
        if a == "--devices":
            return int(sys.argv[i + 1])
    return 8


N_DEV = _devices_from_argv()
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={N_DEV}"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh as JMesh, NamedSharding as JNS, PartitionSpec as P  # noqa: E402

import reactant  # noqa: E402
from reactant.sharding import NamedSharding, make_mesh  # noqa: E402

F32 = np.float32


# -- workloads: (numpy fn, jax fn, inputs, input specs, output specs, mesh shape, axis names) ----------
def _mlp_loss(np_, w1, b1, w2, x, y):
    h = np_.tanh(x @ w1 + b1)
    return np_.mean((h @ w2 - y) ** 2)


def dp_mlp(n: int):
    rng = np.random.default_rng(0)
    d, h, o, b = 256, 512, 64, 32 * n
    args = [rng.standard_normal(s).astype(F32) * 0.1 for s in [(d, h), (h,), (h, o), (b, d), (b, o)]]

    def step(w1, b1, w2, x, y):
        g1, gb, g2 = reactant.gradient(lambda w1, b1, w2: _mlp_loss(np, w1, b1, w2, x, y), w1, b1, w2,
                                       argnums=(0, 1, 2))
        return w1 - 0.01 * g1, b1 - 0.01 * gb, w2 - 0.01 * g2

    def jstep(w1, b1, w2, x, y):
        g1, gb, g2 = jax.grad(lambda w1, b1, w2: _mlp_loss(jnp, w1, b1, w2, x, y), (0, 1, 2))(w1, b1, w2)
        return w1 - 0.01 * g1, b1 - 0.01 * gb, w2 - 0.01 * g2

    rep = ()
    return step, jstep, args, [rep, rep, rep, ("data",), ("data",)], [rep, rep, rep], (n,), ("data",)


def tp_mlp(n: int):
    rng = np.random.default_rng(1)
    m = n // 2
    d, h, b = 256, 128 * m, 64
    args = [rng.standard_normal(s).astype(F32) * 0.1 for s in [(b, d), (d, h), (h, d)]]

    def fwd(np_):
        def f(x, w1, w2):
            return np_.maximum(x @ w1, 0) @ w2
        return f

    return fwd(np), fwd(jnp), args, [("data",), (None, "model"), ("model",)], [("data",)], (2, m), ("data", "model")


def attention(n: int):
    rng = np.random.default_rng(2)
    b, hd, s, dk = n, 4, 128, 32
    args = [rng.standard_normal((b, hd, s, dk)).astype(F32) for _ in range(3)]

    def att(np_):
        def f(q, k, v):
            scores = np_.einsum("bhqd,bhkd->bhqk", q, k) / np_.sqrt(F32(dk))
            mask = np_.tril(np_.ones((s, s), dtype=bool))
            scores = np_.where(mask, scores, F32(-1e30))
            p = np_.exp(scores - scores.max(axis=-1, keepdims=True))
            p = p / p.sum(axis=-1, keepdims=True)
            return np_.einsum("bhqk,bhkd->bhqd", p, v)
        return f

    spec = ("data",)
    return att(np), att(jnp), args, [spec] * 3, [spec], (n,), ("data",)


def _stencil_args(n: int):
    rng = np.random.default_rng(3)
    return [rng.standard_normal((32 * n, 256)).astype(F32)]


def stencil_roll(n: int):
    def st(np_):
        def f(u):
            return u + F32(0.1) * (np_.roll(u, 1, 0) + np_.roll(u, -1, 0) + np_.roll(u, 1, 1) + np_.roll(u, -1, 1)
                                   - 4 * u)
        return f

    return st(np), st(jnp), _stencil_args(n), [("rows",)], [("rows",)], (n,), ("rows",)


def stencil_pad(n: int):
    def st(np_):
        def f(u):
            p = np_.pad(u, 1)
            return u + F32(0.1) * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * u)
        return f

    return st(np), st(jnp), _stencil_args(n), [("rows",)], [("rows",)], (n,), ("rows",)


def reduction(n: int):
    rng = np.random.default_rng(4)
    args = [rng.standard_normal((64 * n, 512)).astype(F32)]

    def red(np_):
        def f(x):
            return x.sum(), x.mean(axis=0), x.var(axis=1)
        return f

    return red(np), red(jnp), args, [("rows",)], [(), (), ("rows",)], (n,), ("rows",)


WORKLOADS = {"dp_mlp": dp_mlp, "tp_mlp": tp_mlp, "attention": attention, "stencil_roll": stencil_roll,
             "stencil_pad": stencil_pad, "reduction": reduction}


# -- communication from per-device HLO ---------------------------------------------------------------
def communication(hlo: str, n: int) -> dict:
    """Collectives by kind and the bytes one device sends per step (module docstring; the byte
    model is the one automatic sharding costs candidates with: ``sharding.auto.hlo_collectives``)."""
    from reactant.sharding.auto import hlo_collectives

    ops: dict[str, int] = {}
    sent = 0.0
    for kind, nbytes, _group in hlo_collectives(hlo, n):
        ops[kind] = ops.get(kind, 0) + 1
        sent += nbytes
    return {"ops": ops, "bytes": sent}


# -- building both sides -----------------------------------------------------------------------------
def build(name: str, n: int):
    fn, jfn, args, in_specs, out_specs, mshape, names = WORKLOADS[name](n)
    mesh = make_mesh(mshape, names)
    jmesh = JMesh(np.array(jax.devices()[:int(np.prod(mshape))]).reshape(mshape), names)
    rargs = [reactant.to_rarray(a, sharding=NamedSharding(mesh, s)) for a, s in zip(args, in_specs)]
    jin = [JNS(jmesh, P(*s)) for s in in_specs]
    jout = [JNS(jmesh, P(*s)) for s in out_specs]
    jargs = [jax.device_put(a, s) for a, s in zip(args, jin)]
    out_sh = [NamedSharding(mesh, s) for s in out_specs]
    out_sh = out_sh[0] if len(out_sh) == 1 else tuple(out_sh)
    jout = jout[0] if len(jout) == 1 else tuple(jout)
    return fn, jfn, rargs, jargs, out_sh, jin, jout


_WARM = []
COMPILE_ROUNDS = 3


def _warm_up(n: int) -> None:
    """One small sharded program through each side's compiler first, so no workload pays for
    the process's one-time start-up (imports, client, caches; for reactant also the
    optimizer's rule base for products and sums, built once per process)."""
    if _WARM:
        return
    _WARM.append(True)
    mesh = make_mesh((n,), ("w",))
    a = np.ones((n, 4), F32)
    w = np.ones((4, 4), F32)
    reactant.code_xla(lambda x, w: np.sin(x @ w).sum(), reactant.to_rarray(a, sharding=NamedSharding(mesh, ("w",))),
                      reactant.to_rarray(w, sharding=NamedSharding(mesh, ())))
    jm = JMesh(np.array(jax.devices()[:n]), ("w",))
    jax.jit(lambda x, w: jnp.sin(x @ w).sum()).lower(jax.device_put(a, JNS(jm, P("w"))),
                                                     jax.device_put(w, JNS(jm, P()))).compile()


def compile_and_comm(name: str, n: int) -> dict:
    """Compile both sides (no run: 512 simulated devices cannot rendezvous on a small CPU)."""
    _warm_up(n)
    fn, jfn, rargs, jargs, out_sh, jin, jout = build(name, n)
    rf = reactant.compile(fn, out_shardings=out_sh)
    # each side starts from a collected heap: a full garbage collection due in the process
    # (70 ms with 512 devices' objects alive) otherwise lands in whichever compile runs next
    gc.collect()
    t0 = time.perf_counter()
    r_hlo = reactant.code_xla(rf, *rargs)  # trace, optimize, partition, compile
    t1 = time.perf_counter()
    gc.collect()
    t1g = time.perf_counter()
    jc = jax.jit(lambda *a: jfn(*a), in_shardings=jin, out_shardings=jout).lower(*jargs).compile()
    t2 = time.perf_counter()
    gc.collect()
    t2g = time.perf_counter()
    reactant.code_xla(reactant.compile(fn, out_shardings=out_sh, optimize="O1"), *rargs)
    t3 = time.perf_counter()
    out = {"reactant": communication(r_hlo, n), "jax": communication(jc.as_text(), n),
           "compile": {"reactant": t1 - t0, "jax": t2 - t1g, "reactant_O1": t3 - t2g}}
    if n == 8:
        out["cost"] = {"reactant": reactant.cost_analysis(rf, *rargs), "jax": dict(jc.cost_analysis())}
    return out


def runtime(name: str, rounds: int = 30, inner: int = 5) -> dict:
    fn, jfn, rargs, jargs, out_sh, jin, jout = build(name, 8)
    rf = reactant.compile(fn, out_shardings=out_sh)
    jf = jax.jit(jfn, in_shardings=jin, out_shardings=jout)

    def run_r():
        out = rf(*rargs)
        for o in jax.tree_util.tree_leaves(out):
            o.block_until_ready()

    def run_j():
        jax.block_until_ready(jf(*jargs))

    want = jax.tree_util.tree_leaves(jf(*jargs))
    got = jax.tree_util.tree_leaves(rf(*rargs))
    agree = all(np.allclose(np.asarray(g), np.asarray(w), rtol=2e-3, atol=2e-4) for g, w in zip(got, want))
    for _ in range(3):
        run_r(), run_j()
    ratios, tr, tj = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(inner):
            run_r()
        t1 = time.perf_counter()
        for _ in range(inner):
            run_j()
        t2 = time.perf_counter()
        tr.append((t1 - t0) / inner)
        tj.append((t2 - t1) / inner)
        ratios.append(tr[-1] / tj[-1])
    return {"reactant_ms": 1e3 * statistics.median(tr), "jax_ms": 1e3 * statistics.median(tj),
            "ratio": statistics.median(ratios), "agree": agree}


# -- scaling on paper --------------------------------------------------------------------------------
ACCEL = {"name": "H100-SXM-like", "flops": 67e12, "hbm": 3.35e12, "nvlink": 450e9, "net": 50e9,
         "node": 8, "latency": 5e-6}


def step_on_paper(cost: dict, comm_at: dict, n: int) -> float:
    """max(compute, memory) + communication: bytes / link bandwidth (NVLink inside a node of 8,
    the network across nodes) plus a latency per step of each collective (log2 n steps for
    reductions, gathers and exchanges over the group, one for a permute)."""
    compute = max(cost.get("flops", 0.0) / ACCEL["flops"], cost.get("bytes accessed", 0.0) / ACCEL["hbm"])
    link = ACCEL["nvlink"] if n <= ACCEL["node"] else ACCEL["net"]
    steps = sum(k * (1 if kind == "collective-permute" else np.log2(max(n, 2))) for kind, k in comm_at["ops"].items())
    return compute + comm_at["bytes"] / link + steps * ACCEL["latency"]


def extrapolate(comm: dict[int, dict], n: int) -> dict:
    """Collectives at ``n`` devices from the largest measured mesh: the same ops; ring factors
    (g-1)/g approach 1, so bytes scale by that factor's ratio (an estimate, said in the table)."""
    if n in comm:
        return comm[n]
    m = max(comm)
    f = ((n - 1) / n) / ((m - 1) / m)
    return {"ops": comm[m]["ops"], "bytes": comm[m]["bytes"] * f}


# -- driver -----------------------------------------------------------------------------------------
def _subprocess(n: int, names: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", "--devices", str(n), *names],
                         capture_output=True, text=True, timeout=1800)
    if out.returncode:
        raise RuntimeError(f"{n}-device run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt_ops(ops: dict) -> str:
    short = {"all-reduce": "AR", "all-gather": "AG", "reduce-scatter": "RS", "collective-permute": "CP",
             "all-to-all": "A2A"}
    return " ".join(f"{v}{short[k]}" for k, v in sorted(ops.items())) or "-"


def _kb(b: float) -> str:
    return f"{b / 1024:.1f}"


def main() -> None:
    names = [a for a in sys.argv[1:] if a in WORKLOADS] or list(WORKLOADS)
    if "--child" in sys.argv:
        print(json.dumps({name: compile_and_comm(name, N_DEV) for name in names}))
        return
    quick = "--quick" in sys.argv
    sizes = [8] if quick else [8, 64, 512]
    results = {8: {name: compile_and_comm(name, 8) for name in names}}
    for n in sizes[1:]:
        results[n] = _subprocess(n, names)
    # a first compile takes 30-150 ms here and varies by 15% from run to run: every compile
    # time is the median over COMPILE_ROUNDS processes (each ratio: the median of per-process ratios)
    compile_runs = {n: [results[n]] + [_subprocess(n, names) for _ in range(COMPILE_ROUNDS - 1)]
                    for n in sizes if n != 64}
    print(f"reactant {reactant.__version__}, jax {jax.__version__}, {os.cpu_count()} CPU cores, simulated devices\n")

    print("1. Communication per step and device (collectives: AR all-reduce, AG all-gather, RS reduce-scatter,")
    print("   CP collective-permute, A2A all-to-all; KiB one device sends)")
    print(f"{'workload':14s} {'devices':>7s} | {'reactant ops':18s} {'KiB':>9s} | {'jax.jit ops':18s} {'KiB':>9s} | ratio")
    for name in names:
        for n in sizes:
            r, j = results[n][name]["reactant"], results[n][name]["jax"]
            ratio = r["bytes"] / j["bytes"] if j["bytes"] else (1.0 if not r["bytes"] else float("inf"))
            print(f"{name:14s} {n:7d} | {_fmt_ops(r['ops']):18s} {_kb(r['bytes']):>9s} | "
                  f"{_fmt_ops(j['ops']):18s} {_kb(j['bytes']):>9s} | {ratio:5.2f}")

    print("\n2. Runtime on 8 devices (median of 30 paired rounds of 5 calls, each synced)")
    print(f"{'workload':14s} | {'reactant ms':>11s} {'jax.jit ms':>10s} | ratio | same values")
    for name in names:
        t = runtime(name)
        print(f"{name:14s} | {t['reactant_ms']:11.3f} {t['jax_ms']:10.3f} | {t['ratio']:5.2f} | {t['agree']}")

    print("\n3. Compile time (s): trace + optimize + partition + compile (jax.jit: lower + compile); reactant at its\n"
          f"   default O2, and at O1 (no equality saturation); medians over {COMPILE_ROUNDS} processes")
    print(f"{'workload':14s} {'devices':>7s} | {'reactant':>8s} {'jax.jit':>8s} | ratio | {'O1':>8s} ratio | ratios")
    for name in names:
        for n in sizes:
            if n == 64:
                continue
            cs = [run[name]["compile"] for run in compile_runs[n]]
            med = {k: float(np.median([c[k] for c in cs])) for k in ("reactant", "jax", "reactant_O1")}
            ratios = [c["reactant"] / c["jax"] for c in cs]
            r1 = float(np.median([c["reactant_O1"] / c["jax"] for c in cs]))
            print(f"{name:14s} {n:7d} | {med['reactant']:8.3f} {med['jax']:8.3f} | {float(np.median(ratios)):5.2f} | "
                  f"{med['reactant_O1']:8.3f} {r1:5.2f} | " + " ".join(f"{r:.2f}" for r in ratios))

    a = ACCEL
    print(f"\n4. Step time on paper, weak scaling (the 8-device per-device problem on every device), "
          f"{a['name']}: {a['flops'] / 1e12:.0f} TFLOP/s fp32, HBM {a['hbm'] / 1e12:.2f} TB/s, "
          f"NVLink {a['nvlink'] / 1e9:.0f} GB/s inside nodes of {a['node']}, network {a['net'] / 1e9:.0f} GB/s "
          f"across, {a['latency'] * 1e6:.0f} us per collective hop; measured HLO at 8/64/512, extrapolated "
          f"above (the same collectives, ring factors)")
    scale = [8, 64, 512, 4096]
    print(f"{'workload':14s} | " + " ".join(f"{'r ' + str(n):>9s} {'j ' + str(n):>9s}" for n in scale) + "  (us)")
    for name in names:
        row = []
        for n in scale:
            for side in ("reactant", "jax"):
                comm = {m: results[m][name][side] for m in sizes}
                row.append(1e6 * step_on_paper(results[8][name]["cost"][side], extrapolate(comm, n), n))
        print(f"{name:14s} | " + " ".join(f"{v:9.1f}" for v in row))


if __name__ == "__main__":
    main()
