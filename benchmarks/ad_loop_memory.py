"""Peak memory of reverse-mode AD through a long loop, with and without checkpointing.

The loop: 1,000 steps of ``h = tanh(w * h + b)`` over a 1 MiB float32 state (262,144
elements), loss ``sum(h**2)``, gradient with respect to ``h0``, ``w`` and ``b``. The module
is lowered by JAX, wrapped with an ``enzyme.autodiff`` marker, expanded by the AD pass of
``reactant.optimize`` (plain: one stacked cache entry per iteration; ``ad_checkpoint``: one
snapshot of the state every c iterations plus a cache of c entries for the segment being
reversed), cleaned up with the folding round trip, and compiled by XLA. XLA's compiled memory
statistics give the argument, output and temporary buffer sizes; peak = arguments + outputs +
temporaries - aliased. JAX's own ``value_and_grad`` of the same function is the reference.

    python benchmarks/ad_loop_memory.py            # memory table (compile only)
    python benchmarks/ad_loop_memory.py --run      # also run, time, and compare gradients
    python benchmarks/ad_loop_memory.py --steps 200 --mib 1
"""

from __future__ import annotations

import argparse
import math
import time

import jax
import jax.extend
import jax.numpy as jnp
import jaxlib.xla_client as xc
import numpy as np
from jax import lax
from jaxlib.mlir import ir
from reactant.ir.context import make_context
from jaxlib.mlir.dialects import func

from reactant.optimize.autodiff import expand_all
from reactant.optimize.builtin_passes import run_mlir
from reactant.optimize.passes import PassOptions

MiB = 1 << 20


def make_loss(steps: int):
    def loss(h0, w, b):
        h = lax.fori_loop(0, steps, lambda i, h: jnp.tanh(w * h + b), h0)
        return jnp.sum(h * h)

    return loss


def ad_module(loss, args, extra: dict) -> ir.Module:
    """JAX's lowering of ``loss`` as private @f, and @main = enzyme.autodiff of it."""
    text = jax.jit(loss).lower(*args).as_text()
    with make_context(), ir.Location.unknown():
        m = ir.Module.parse(text)
        f = [o for o in m.body.operations if ir.StringAttr(o.attributes["sym_name"]).value == "main"][0]
        f.attributes["sym_name"] = ir.StringAttr.get("f")
        f.attributes["sym_visibility"] = ir.StringAttr.get("private")
        for k in ("arg_attrs", "res_attrs"):
            if k in f.attributes:
                del f.attributes[k]
        ft = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        ins, outs = list(ft.inputs), list(ft.results)
        with ir.InsertionPoint(m.body):
            main = func.FuncOp("main", ir.FunctionType.get(ins + outs, outs + ins))
            main.attributes["sym_visibility"] = ir.StringAttr.get("public")
            entry = main.add_entry_block()
        with ir.InsertionPoint(entry):
            act = ir.ArrayAttr.get([ir.StringAttr.get("active")] * len(ins))
            op = ir.Operation.create("enzyme.autodiff", results=outs + ins, operands=list(entry.arguments),
                                     attributes={"fn": ir.FlatSymbolRefAttr.get("f"), "activity": act,
                                                 "ret_activity": ir.ArrayAttr.get([ir.StringAttr.get("active")])})
            func.ReturnOp(list(op.results))
    expand_all(m, PassOptions(**extra))
    run_mlir(m, "inline,symbol-dce,stablehlo-legalize-to-hlo,canonicalize,cse,hlo-legalize-to-stablehlo")
    return m


def stats(exe):
    s = exe.get_compiled_memory_stats()
    arg, out, tmp = s.argument_size_in_bytes, s.output_size_in_bytes, s.temp_size_in_bytes
    alias = getattr(s, "alias_size_in_bytes", 0)
    return arg, out, tmp, arg + out + tmp - alias


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--mib", type=float, default=1.0, help="state size in MiB (float32)")
    ap.add_argument("--run", action="store_true", help="also execute, time and compare with JAX")
    a = ap.parse_args()
    n = int(a.mib * MiB // 4)
    rng = np.random.default_rng(0)
    h0 = rng.standard_normal(n).astype(np.float32)
    w = (0.5 * rng.standard_normal(n)).astype(np.float32)
    b = (0.1 * rng.standard_normal(n)).astype(np.float32)
    args = (h0, w, b)
    loss = make_loss(a.steps)
    be = jax.extend.backend.get_backend()
    dev = be.devices()[0]
    sq = max(1, math.ceil(math.sqrt(a.steps)))
    configs = [("reactant AD, no checkpointing", {}),
               (f"reactant AD, ad_checkpoint='sqrt' (c={sq})", {"ad_checkpoint": "sqrt"}),
               ("reactant AD, ad_checkpoint=10", {"ad_checkpoint": 10}),
               ("reactant AD, ad_checkpoint=100", {"ad_checkpoint": 100})]
    rows = []
    ref = None
    jexe = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2))).lower(*args).compile()
    if a.run:
        ref = jexe(*args)
    for name, extra in configs:
        t0 = time.perf_counter()
        m = ad_module(loss, args, extra)
        t_pass = time.perf_counter() - t0
        exe = be.compile_and_load(str(m), xc.DeviceList((dev,)), xc.CompileOptions())
        arg, out, tmp, peak = stats(exe)
        row = [name, arg / MiB, out / MiB, tmp / MiB, peak / MiB, t_pass]
        if a.run:
            dargs = [jax.device_put(x, dev) for x in args + (np.float32(1.0),)]
            res = exe.execute(dargs)
            [r.block_until_ready() for r in res]
            t0 = time.perf_counter()
            res = exe.execute(dargs)
            [r.block_until_ready() for r in res]
            dt = time.perf_counter() - t0
            err = max(float(np.max(np.abs(np.asarray(g) - np.asarray(r))) / (np.max(np.abs(np.asarray(r))) + 1e-30))
                      for g, r in zip(res[1:], ref[1]))
            row += [dt * 1e3, err]
        rows.append(row)
    ma = jexe.memory_analysis()
    jrow = ["jax.value_and_grad (reference)", ma.argument_size_in_bytes / MiB, ma.output_size_in_bytes / MiB,
            ma.temp_size_in_bytes / MiB,
            (ma.argument_size_in_bytes + ma.output_size_in_bytes + ma.temp_size_in_bytes
             - ma.alias_size_in_bytes) / MiB, float("nan")]
    if a.run:
        jexe(*args)[0].block_until_ready()
        t0 = time.perf_counter()
        r = jexe(*args)
        jax.block_until_ready(r)
        jrow += [(time.perf_counter() - t0) * 1e3, 0.0]
    rows.append(jrow)

    print(f"reverse mode through a {a.steps}-step loop over a {n * 4 / MiB:g} MiB float32 state "
          f"(cache needed without checkpointing: {a.steps} x state = {a.steps * n * 4 / MiB:.0f} MiB)")
    hdr = ["configuration", "args MiB", "outputs MiB", "temp MiB", "peak MiB", "pass s"]
    if a.run:
        hdr += ["run ms", "grad rel.err"]
    w0 = max(len(r[0]) for r in rows)
    print(" | ".join([hdr[0].ljust(w0)] + [h.rjust(12) for h in hdr[1:]]))
    print("-" * (w0 + 15 * (len(hdr) - 1)))
    for r in rows:
        cells = [r[0].ljust(w0)]
        for i, v in enumerate(r[1:]):
            if isinstance(v, float) and math.isnan(v):
                cells.append("-".rjust(12))
            elif hdr[1 + i] == "grad rel.err":
                cells.append(f"{v:12.1e}")
            else:
                cells.append(f"{v:12.1f}" if hdr[1 + i] != "pass s" else f"{v:12.3f}")
        print(" | ".join(cells))


if __name__ == "__main__":
    main()
