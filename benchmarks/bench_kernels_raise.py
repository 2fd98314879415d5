"""Loop-heavy NumPy kernels, unmodified, through ``@reactant.compile`` (default ``loops="auto"``,
O2: loops rolled into ``stablehlo.while`` and raised into tensor operations where their
iterations are independent) next to NumPy and to ``jax.jit`` of the same algorithm written the
natural JAX way (``lax.fori_loop``, ``einsum``). Kernels: ``loop_kernels.py`` (triangular solve,
LU by dot products and by outer products, Cholesky by hand, Gauss-Seidel, Jacobi 2-D time loop,
Levinson-Durbin, doitgen) and ``raise_kernels.py`` (FDTD 2-D, 3-D heat, channel flow,
Floyd-Warshall, a 1-D recurrence, a histogram by loop). float64.

Each kernel in two forms: functional (copies its input, returns a new array) and in place (as
NumPy users write it: updates its arguments, some through views (``*_views``), returns None).
jax.jit has the functional form only: an in-place row compares with jax's functional kernel.

Per kernel and form: the check (``ok``: the return value and the final state of every argument
equal NumPy's running the same function on copies, and the unraised program's (O0); ``WRONG``
or ``error`` rows get no timing), first-call time, steady time paired and interleaved (the
ratio is the median of per-round ratios; on in-place rows every call, jax's functional one
included, starts from fresh copies of its inputs, made outside the timing), the
``stablehlo.while`` ops left at O0 (rolled loops) and at O2 (after raising), the loop decisions
(``REACTANT_LOG``: per source line of a loop over plain ints, kept as a while or unrolled and
why), and which of the raising and in-place rewrites
changed the kernel's program (``RULES``).

    python benchmarks/bench_kernels_raise.py [--sizes 128] [--only a,b] [--forms functional,inplace]
        [--rounds 7] [--no-rules]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from contextlib import redirect_stderr
from dataclasses import dataclass
from typing import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

import loop_kernels as LK  # noqa: E402
import raise_kernels as RK  # noqa: E402
from harness import call_time, geomean, measure  # noqa: E402
from inplace import (differences, jax_timer, loop_decisions, numpy_state, numpy_timer, reactant_state,  # noqa: E402
                     reactant_timer, to_device)


def _jax_lu_dots():
    """LU by dot products written for jax the natural way: the same loops as ``fori_loop``s,
    the index-bounded slices as masks (``loop_kernels``' jax version of ``lu_dots`` is the
    outer-product form, a different algorithm)."""
    import jax.numpy as jnp
    from jax import lax

    def lu_dots(A):
        n = A.shape[0]
        idx = jnp.arange(n)

        def row(i, A):
            def lower(j, A):
                s = jnp.dot(jnp.where(idx < j, A[i], 0.0), jnp.where(idx < j, A[:, j], 0.0))
                return A.at[i, j].set((A[i, j] - s) / A[j, j])

            def upper(j, A):
                s = jnp.dot(jnp.where(idx < i, A[i], 0.0), jnp.where(idx < i, A[:, j], 0.0))
                return A.at[i, j].set(A[i, j] - s)
            return lax.fori_loop(i, n, upper, lax.fori_loop(0, i, lower, A))
        return lax.fori_loop(0, n, row, A)
    return lu_dots


def kernels() -> tuple[dict, object]:
    """{name: Spec} for every kernel (functional form and/or in-place form), and jax."""
    lk_jax, jax = LK.jax_versions()
    rk_jax, _ = RK.jax_versions()
    lk_jax = dict(lk_jax, lu_dots=_jax_lu_dots())
    out = {}
    for mod, jfns in ((LK, lk_jax), (RK, rk_jax)):
        names = list(mod.KERNELS) + [k for k in mod.INPLACE if k not in mod.KERNELS]
        for name in names:
            base = LK.base_name(name)
            out[name] = Spec(mod.KERNELS.get(name), mod.INPLACE.get(name), jfns[base],
                             lambda n, _m=mod, _b=base: _m.inputs(_b, n),
                             lambda n, _m=mod, _k=name: _m.inplace_inputs(_k, n))
    return out, jax


@dataclass
class Spec:
    functional: Callable | None  # copies its inputs, returns a new array
    inplace: Callable | None  # updates its arguments, returns None
    jax: Callable  # jax.numpy, functional
    inputs: Callable[[int], tuple]
    inplace_inputs: Callable[[int], tuple]


# rewrites that raise loops or keep their updates in place: a rule "fired" on a kernel when
# disabling it changes the kernel's O2 program
RULES = ("while_raise", "dynamic_slice_of_updated_element",
         "if_sink_update_slice", "slice_dynamic_update_slice")


def fired_rules(o0_text: str) -> list[str]:
    from reactant.ir import context as irc
    from reactant.optimize import PassOptions, pipeline, run_pipeline

    def o2(disabled=frozenset()):
        m = irc.parse_module(o0_text)
        run_pipeline(m, pipeline("O2"), PassOptions(disabled=frozenset(disabled)))
        return irc.to_text(m)
    full = o2()
    return [r for r in RULES if o2({r}) != full]


def _block(values) -> None:
    for v in values:
        if hasattr(v, "block_until_ready"):
            v.block_until_ready()


def run_kernel(name: str, form: str, n: int, spec: Spec, jax, rounds: int, rules: bool) -> dict:
    """One table row: ``form`` is "functional" or "inplace". A kernel whose result or argument
    states differ from NumPy's (or from the unraised O0 program's) gets no timing."""
    import reactant

    f = spec.functional if form == "functional" else spec.inplace
    args = spec.inputs(n) if form == "functional" else spec.inplace_inputs(n)
    row = {"name": name, "form": form, "n": n, "check": "ok", "detail": "", "loops": "-", "rules": [],
           "whiles": ("-", "-"), "jax_ok": True}
    want = numpy_state(f, args)
    log = io.StringIO()
    try:
        cf = reactant.compile(f, verbose=True)  # verbose: the loop decisions, read from the log
        rargs = to_device(args)
        with redirect_stderr(log):
            t0 = time.perf_counter()
            ret = cf(*rargs)
            _block([ret, *rargs])
            row["first"] = time.perf_counter() - t0
        row["loops"] = loop_decisions(log.getvalue())
        got = (None if ret is None else np.asarray(ret), [np.asarray(r) for r in rargs])
        o0 = reactant_state(reactant.compile(f, optimize="O0"), args)
        o0_text = reactant.code_hlo(f, *to_device(args), optimize="O0")
        row["whiles"] = (o0_text.count("stablehlo.while"),
                         reactant.code_hlo(f, *to_device(args)).count("stablehlo.while"))
        if rules:
            row["rules"] = fired_rules(o0_text)
        bad = differences(want, got)
        bad_o0 = differences(got, o0, rtol=1e-9, atol=1e-11)
        if bad or bad_o0:
            row["check"] = "WRONG"
            row["detail"] = "; ".join(bad) if bad else "differs from the O0 program: " + "; ".join(bad_o0)
    except Exception as e:  # noqa: BLE001 - the table reports every failure
        row["check"] = "error"
        row["detail"] = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:160]}"
    if row["check"] != "ok":
        return row
    jf = jax.jit(spec.jax)
    jargs = [jax.device_put(a) for a in spec.inputs(n)]
    if form == "functional":
        row["jax_ok"] = bool(np.allclose(np.asarray(jf(*jargs)), want[0], rtol=1e-7, atol=1e-9))
        mine = lambda: cf(*rargs).block_until_ready()  # noqa: E731
        numpy_impl = lambda: f(*args)  # noqa: E731  (the kernel copies its inputs itself)
        jax_impl = lambda: jf(*jargs).block_until_ready()  # noqa: E731
    else:  # every call of all three starts from fresh copies of its inputs, made outside the timing
        mine, numpy_impl = reactant_timer(cf, args), numpy_timer(f, args)
        jax_impl = jax_timer(jf, spec.inputs(n))
    # two pairs: NumPy's BLAS threads spin on after a call and would slow the next program
    pairs = {}
    for other, fn in (("jax", jax_impl), ("numpy", numpy_impl)):
        slowest = max(call_time(mine), call_time(fn))  # the slower sets the calls per timing
        pairs[other] = measure(f"{name} n={n} {other}", {"reactant": mine, other: fn}, rounds=rounds,
                               inner=max(1, int(0.05 / slowest)))
    row.update(reactant=statistics.median(pairs["jax"].times["reactant"] + pairs["numpy"].times["reactant"]),
               numpy=pairs["numpy"].median("numpy"), jax=pairs["jax"].median("jax"),
               vs_numpy=pairs["numpy"].ratio("reactant", "numpy"), vs_jax=pairs["jax"].ratio("reactant", "jax"))
    return row


def _ms(s) -> str:
    return f"{s * 1e3:.3f}" if s is not None else "-"


HEADER = ("| kernel | form | n | check | first s | reactant ms | NumPy ms | jax.jit ms (functional) | "
          "reactant/NumPy | reactant/jax | whiles O0->O2 | loops (line:decision) | rules that fired |")


def format_row(r: dict) -> str:
    timed = "reactant" in r
    cells = [r["name"], r["form"], str(r["n"]), r["check"] + ("" if r["jax_ok"] else " (jax differs)"),
             f"{r['first']:.2f}" if "first" in r else "-", _ms(r.get("reactant")), _ms(r.get("numpy")),
             _ms(r.get("jax")), f"{r['vs_numpy']:.3f}" if timed else "-", f"{r['vs_jax']:.3f}" if timed else "-",
             f"{r['whiles'][0]} -> {r['whiles'][1]}", r["loops"], ", ".join(r["rules"]) or "-"]
    return "| " + " | ".join(cells) + " |"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="128")
    ap.add_argument("--only", default="", help="kernel names, comma separated")
    ap.add_argument("--forms", default="functional,inplace",
                    help="functional (copies its input, returns an array), inplace (updates its arguments) or both")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-rules", action="store_true", help="skip finding which rewrites fired (6 O2 pipelines)")
    a = ap.parse_args()
    forms = [x for x in a.forms.split(",") if x]
    if not set(forms) <= {"functional", "inplace"}:
        ap.error(f"--forms: functional and/or inplace, got {a.forms!r}")
    specs, jax = kernels()
    jax.config.update("jax_enable_x64", True)
    only = set(filter(None, a.only.split(",")))
    rows = []
    print("Steady times: medians of paired, interleaved rounds. jax.jit runs the functional form of each kernel; "
          "on in-place rows every call of reactant, NumPy and jax.jit starts from fresh copies of its inputs, "
          "made outside the timing.")
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|")
    for name, spec in specs.items():
        if only and name not in only:
            continue
        for n in (int(x) for x in a.sizes.split(",")):
            for form in forms:
                if (spec.functional if form == "functional" else spec.inplace) is None:
                    continue
                r = run_kernel(name, form, n, spec, jax, a.rounds, not a.no_rules)
                rows.append(r)
                print(format_row(r), flush=True)
    print()
    for form in forms:
        timed = [r for r in rows if r["form"] == form and "reactant" in r]
        if timed:
            print(f"{form}: {len(timed)} timed; geomean reactant/NumPy {geomean([r['vs_numpy'] for r in timed]):.3f} "
                  f"(worst {max(r['vs_numpy'] for r in timed):.3f}), reactant/jax "
                  f"{geomean([r['vs_jax'] for r in timed]):.3f} (worst {max(r['vs_jax'] for r in timed):.3f})")
    slower = [f"{r['name']} {r['form']} n={r['n']} ({r['vs_numpy']:.2f}x)" for r in rows
              if "reactant" in r and r["vs_numpy"] > 1.0]
    print("slower than NumPy: " + (", ".join(slower) or "none"))
    bad = [r for r in rows if r["check"] != "ok"]
    for r in bad:
        print(f"{r['check']}: {r['name']} {r['form']} n={r['n']}: {r['detail']}")
    if not bad:
        print("every result and every argument's final state equals NumPy's and the unraised (O0) program's")


if __name__ == "__main__":
    main()
