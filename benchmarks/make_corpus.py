"""Write the JAX-lowered StableHLO modules of every workload of ``workloads.py`` (the twelve
shared benchmark workloads, ``workloads.SHARED``, and our five model-style ones,
``workloads.OWN``) to ``benchmarks/corpus/<name>.{fwd,grad}.mlir``: the forward function, and
the gradient program (value and gradient of ``sum(f(*args) * ct)``, ``ct`` an argument, or
``mlp_train_step``'s value-and-grad plus SGD update) that ``bench_workloads.py`` times. The
tests read this corpus (tests/hlo_corpus.py); it is committed, so they need neither jax's
lowering nor any file outside the checkout.

    python benchmarks/make_corpus.py [--only NAME,...] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import numpy as np  # noqa: E402

import workloads as W  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def lowered(w: W.Workload) -> dict[str, str]:
    """{"fwd": text, "grad": text} of one workload, lowered by jax.jit on its own inputs."""
    args = w.make(np.random.default_rng(0))
    out = jax.eval_shape(w.jnp_fn, *args)
    _, jax_grad = W.grad_programs(w, out.shape, out.dtype)
    grad_args = args if w.jnp_grad is not None else (*args, np.ones(out.shape, out.dtype))
    return {kind: jax.jit(fn).lower(*a).as_text()
            for kind, fn, a in (("fwd", w.jnp_fn, args), ("grad", jax_grad, grad_args))}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated workload names (default: all)")
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args(argv)
    names = [n for n in a.only.split(",") if n] or [w.name for w in W.WORKLOADS]
    os.makedirs(a.out, exist_ok=True)
    for name in names:
        for kind, text in lowered(W.BY_NAME[name]).items():
            path = os.path.join(a.out, f"{name}.{kind}.mlir")
            with open(path, "w") as f:
                f.write(text)
            print(f"{path}: {text.count(chr(10))} lines")


if __name__ == "__main__":
    main()
