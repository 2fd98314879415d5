"""np.linalg and np.fft through ``@reactant.compile`` next to ``jax.jit`` of ``jax.numpy.linalg``
/ ``jax.numpy.fft`` and to NumPy: each function at two sizes, forward and gradient (of
``sum(|f(x)|^2)``), steady-state time (paired, interleaved rounds; the ratio is the median of
per-round ratios) and first-call time (trace + compile + run of a fresh function), plus a
Gaussian-process negative log-likelihood gradient (Cholesky, triangular solve, log-det) written
the NumPy way (``np.linalg.solve`` on the Cholesky factor) against jax's idiomatic version
(``jax.scipy.linalg.solve_triangular``). float64 throughout.

    python benchmarks/bench_linalg.py [--quick] [--only solve,fft] [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import reactant  # noqa: E402
from harness import geomean, hlo_fingerprint, measure  # noqa: E402

jax.config.update("jax_enable_x64", True)


def _sq(xp):
    """``sum(|o|^2)`` over every output (sign- and phase-free, so vectors unique up to sign are fine)."""
    def loss(out):
        outs = out if isinstance(out, tuple) else (out,)
        total = 0.0
        for o in outs:
            total = total + xp.sum(xp.abs(o) ** 2)
        return total
    return loss


def _mat(n, rng, shift=True):
    a = rng.standard_normal((n, n))
    return a + n * np.eye(n) if shift else a


def _spd(n, rng):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


# name: (numpy-style function, jax function, inputs(n, rng), differentiable)
CASES = {
    "solve": (lambda a, b: np.linalg.solve(a, b), lambda a, b: jnp.linalg.solve(a, b),
              lambda n, r: (_mat(n, r), r.standard_normal(n)), True),
    "inv": (np.linalg.inv, jnp.linalg.inv, lambda n, r: (_mat(n, r),), True),
    "det": (np.linalg.det, jnp.linalg.det, lambda n, r: (_mat(n, r) / n,), True),
    "slogdet": (lambda a: np.linalg.slogdet(a)[1], lambda a: jnp.linalg.slogdet(a)[1],
                lambda n, r: (_mat(n, r),), True),
    "cholesky": (np.linalg.cholesky, jnp.linalg.cholesky, lambda n, r: (_spd(n, r),), True),
    "qr": (lambda a: tuple(np.linalg.qr(a)), lambda a: tuple(jnp.linalg.qr(a)),
           lambda n, r: (r.standard_normal((n + n // 2, n)),), True),
    "svd": (lambda a: tuple(np.linalg.svd(a, full_matrices=False)),
            lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)),
            lambda n, r: (r.standard_normal((n + n // 2, n)),), True),
    "svdvals": (np.linalg.svdvals, jnp.linalg.svdvals, lambda n, r: (r.standard_normal((n, n)),), True),
    "eigh": (lambda a: tuple(np.linalg.eigh(a)), lambda a: tuple(jnp.linalg.eigh(a)),
             lambda n, r: (_spd(n, r),), True),
    "eigvalsh": (np.linalg.eigvalsh, jnp.linalg.eigvalsh, lambda n, r: (_spd(n, r),), True),
    "eig": (lambda a: tuple(np.linalg.eig(a)), lambda a: tuple(jnp.linalg.eig(a)),
            lambda n, r: (r.standard_normal((n, n)),), False),
    "lstsq": (lambda a, b: np.linalg.lstsq(a, b)[0], lambda a, b: jnp.linalg.lstsq(a, b)[0],
              lambda n, r: (r.standard_normal((2 * n, n)), r.standard_normal(2 * n)), True),
    "pinv": (np.linalg.pinv, jnp.linalg.pinv, lambda n, r: (r.standard_normal((2 * n, n)),), True),
    "matrix_rank": (np.linalg.matrix_rank, jnp.linalg.matrix_rank, lambda n, r: (r.standard_normal((n, n)),),
                    False),
    "matrix_power": (lambda a: np.linalg.matrix_power(a, 7), lambda a: jnp.linalg.matrix_power(a, 7),
                     lambda n, r: (_mat(n, r) / (2 * n),), True),
    "multi_dot": (lambda a, b, c: np.linalg.multi_dot([a, b, c]), lambda a, b, c: jnp.linalg.multi_dot([a, b, c]),
                  lambda n, r: (r.standard_normal((n, 4)), r.standard_normal((4, n)), r.standard_normal(n)), True),
    "fft": (np.fft.fft, jnp.fft.fft, lambda n, r: (r.standard_normal(n * n),), True),
    "ifft": (np.fft.ifft, jnp.fft.ifft, lambda n, r: (r.standard_normal(n * n) + 1j * r.standard_normal(n * n),),
             True),
    "rfft": (np.fft.rfft, jnp.fft.rfft, lambda n, r: (r.standard_normal(n * n),), True),
    "irfft": (np.fft.irfft, jnp.fft.irfft, lambda n, r: (r.standard_normal(n * n // 2 + 1) + 0j,), True),
    "fft2": (np.fft.fft2, jnp.fft.fft2, lambda n, r: (r.standard_normal((n, n)),), True),
    "rfftn": (np.fft.rfftn, jnp.fft.rfftn, lambda n, r: (r.standard_normal((8, n, n)),), True),
    "irfftn": (lambda x: np.fft.irfftn(x, s=(x.shape[0], 2 * (x.shape[1] - 1))),
               lambda x: jnp.fft.irfftn(x, s=(x.shape[0], 2 * (x.shape[1] - 1))),
               lambda n, r: (r.standard_normal((n, n // 2 + 1)) + 0j,), True),
}


def _gp_numpy(params, x, y):
    d2 = (x[:, None] - x[None, :]) ** 2
    k = np.exp(-0.5 * d2 / np.exp(2 * params[0])) + np.exp(2 * params[1]) * np.eye(x.shape[0])
    chol = np.linalg.cholesky(k)
    alpha = np.linalg.solve(chol, y)
    return 0.5 * alpha @ alpha + np.sum(np.log(np.diagonal(chol))) + 0.5 * x.shape[0] * np.log(2 * np.pi)


def _gp_jax(params, x, y):
    d2 = (x[:, None] - x[None, :]) ** 2
    k = jnp.exp(-0.5 * d2 / jnp.exp(2 * params[0])) + jnp.exp(2 * params[1]) * jnp.eye(x.shape[0])
    chol = jnp.linalg.cholesky(k)
    alpha = jax.scipy.linalg.solve_triangular(chol, y, lower=True)
    return 0.5 * alpha @ alpha + jnp.sum(jnp.log(jnp.diagonal(chol))) + 0.5 * x.shape[0] * jnp.log(2 * jnp.pi)


def _first_call(make, args) -> float:
    f = make()
    t0 = time.perf_counter()
    out = f(*args)
    jax.block_until_ready(out) if not isinstance(out, reactant.ConcreteRArray) else out.block_until_ready()
    return time.perf_counter() - t0


def _block(out):
    for leaf in jax.tree_util.tree_leaves(out):
        leaf.block_until_ready()
    return out


# NumPy's eigh reads one triangle (so does our derivative); jax symmetrizes its input: the
# gradients agree in their symmetric parts
SYMMETRIC = ("eigh", "eigvalsh", "cholesky")


def _sym(x):
    return (x + np.swapaxes(x, -1, -2)) / 2


def _close(got, want, sym: bool = False) -> bool:
    g = [np.asarray(x) for x in jax.tree_util.tree_leaves(got)]
    w = [np.asarray(x) for x in jax.tree_util.tree_leaves(want)]
    if sym:
        g, w = [_sym(x) for x in g], [_sym(x) for x in w]
    return len(g) == len(w) and all(np.allclose(a, b, rtol=1e-6, atol=1e-8) for a, b in zip(g, w))


def run_case(name, n, mode, rounds):
    f_np, f_jax, make_inputs, _ = CASES[name]
    args = make_inputs(n, np.random.default_rng(n))
    rargs = reactant.to_rarray(args)
    jargs = [jnp.asarray(a) for a in args]
    if mode == "fwd":
        def make_r():
            return reactant.compile(lambda *a: f_np(*a))

        def make_j():
            return jax.jit(lambda *a: f_jax(*a))
    else:
        def make_r():
            return reactant.compile(lambda *a: reactant.gradient(lambda x, *rest: _sq(np)(f_np(x, *rest)), *a))

        def make_j():
            return jax.jit(lambda *a: jax.grad(lambda x, *rest: _sq(jnp)(f_jax(x, *rest)))(*a))
    first_r, first_j = _first_call(make_r, rargs), _first_call(make_j, jargs)
    fr, fj = make_r(), make_j()
    ok = True
    if mode == "grad" or name not in ("qr", "svd", "eigh", "eig"):  # vectors are unique up to sign/phase
        ok = _close(fr(*rargs), fj(*jargs), sym=mode == "grad" and name in SYMMETRIC)
    mine = lambda: _block(fr(*rargs))  # noqa: E731
    res = measure(f"{name} n={n} {mode}", {"reactant": mine, "jax": lambda: _block(fj(*jargs))}, rounds=rounds)
    same = _same_code(fr, rargs, fj, jargs)
    vs_numpy = None
    if mode == "fwd":  # a pair of its own: NumPy's BLAS threads spin on after a call and would
        # slow whichever program runs next
        vs_numpy = measure(f"{name} n={n} numpy", {"reactant": mine, "numpy": lambda: f_np(*args)},
                           rounds=rounds).ratio("reactant", "numpy")
    return {"name": name, "n": n, "mode": mode, "ok": ok, "reactant": res.median("reactant"),
            "vs_jax": res.ratio("reactant", "jax"), "vs_numpy": vs_numpy, "first_r": first_r, "first_j": first_j,
            "same": same}


def _same_code(fr, rargs, fj, jargs) -> bool:
    """Whether XLA compiled both programs to the same code: then their ratio samples only noise."""
    return hlo_fingerprint(reactant.code_xla(fr, *rargs)) == hlo_fingerprint(fj.lower(*jargs).compile().as_text())


def run_gp(n, rounds):
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 5, n))
    y = np.sin(x) + 0.1 * rng.standard_normal(n)
    p = np.array([0.1, -1.0])
    rargs, jargs = reactant.to_rarray((p, x, y)), [jnp.asarray(a) for a in (p, x, y)]

    def make_r():
        return reactant.compile(lambda p, x, y: reactant.gradient(_gp_numpy, p, x, y))

    def make_j():
        return jax.jit(jax.grad(_gp_jax))
    first_r, first_j = _first_call(make_r, rargs), _first_call(make_j, jargs)
    fr, fj = make_r(), make_j()
    ok = _close(fr(*rargs), fj(*jargs))
    res = measure(f"gp_nll n={n}", {"reactant": lambda: _block(fr(*rargs)), "jax": lambda: _block(fj(*jargs))},
                  rounds=rounds)
    return {"name": "gp_nll_grad", "n": n, "mode": "grad", "ok": ok, "reactant": res.median("reactant"),
            "vs_jax": res.ratio("reactant", "jax"), "vs_numpy": None, "first_r": first_r, "first_j": first_j,
            "same": _same_code(fr, rargs, fj, jargs)}


def _fmt(s: float) -> str:
    return f"{s * 1e6:9.1f} us" if s < 1e-3 else f"{s * 1e3:9.2f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one small size, few rounds")
    ap.add_argument("--only", default="", help="comma-separated case names (and/or gp_nll)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--sizes", default="32,256", help="matrix orders (FFT cases use n*n points)")
    a = ap.parse_args()
    sizes = [16] if a.quick else [int(s) for s in a.sizes.split(",")]
    rounds = 5 if a.quick else a.rounds
    only = set(filter(None, a.only.split(",")))
    rows = []
    for name, case in CASES.items():
        if only and name not in only:
            continue
        for n in sizes:
            for mode in ("fwd", "grad") if case[3] else ("fwd",):
                rows.append(run_case(name, n, mode, rounds))
                _print_row(rows[-1])
    if not only or "gp_nll" in only:
        for n in ([32] if a.quick else [128, 512]):
            rows.append(run_gp(n, rounds))
            _print_row(rows[-1])
    print()
    print(f"geomean steady reactant/jax: {geomean([r['vs_jax'] for r in rows]):.3f} over {len(rows)} rows; "
          f"worst {max(r['vs_jax'] for r in rows):.3f}")
    fwd = [r["vs_numpy"] for r in rows if r["vs_numpy"] is not None]
    if fwd:
        print(f"geomean steady reactant/numpy (forward): {geomean(fwd):.3f}")
    print(f"geomean first call reactant/jax: {geomean([r['first_r'] / r['first_j'] for r in rows]):.3f}")
    over = [r for r in rows if r["vs_jax"] > 1.05]
    print(f"rows above 1.05x: {len(over)}, of which {sum(r['same'] for r in over)} run the same XLA code as jax "
          f"(noise); {sum(r['same'] for r in rows)} of {len(rows)} rows run the same code")
    bad = [f"{r['name']} n={r['n']} {r['mode']}" for r in rows if not r["ok"]]
    print("results match jax" if not bad else f"MISMATCH: {bad}")


_HEADER = False


def _print_row(r):
    global _HEADER
    if not _HEADER:
        print(f"{'case':<14} {'n':>4} {'mode':<5} {'reactant':>12} {'/jax':>7} {'/numpy':>7} "
              f"{'first r':>10} {'first jax':>10}  ok  same XLA code")
        _HEADER = True
    vn = f"{r['vs_numpy']:7.3f}" if r["vs_numpy"] is not None else f"{'-':>7}"
    print(f"{r['name']:<14} {r['n']:>4} {r['mode']:<5} {_fmt(r['reactant'])} {r['vs_jax']:7.3f} {vn} "
          f"{_fmt(r['first_r'])} {_fmt(r['first_j'])}  {'ok' if r['ok'] else 'MISMATCH'}"
          f"{'  same' if r['same'] else ''}", flush=True)


if __name__ == "__main__":
    main()
