"""Write the JAX-lowered StableHLO modules of our own model-style workloads (``workloads.OWN``)
to ``benchmarks/corpus/<name>.{fwd,grad}.mlir``, as ``../shared/bench/hlo`` holds the twelve
shared ones: the forward function, and the gradient program (value and gradient of
``sum(f(*args) * ct)``, ``ct`` an argument) that ``bench_workloads.py`` times.

    python benchmarks/make_corpus.py
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import numpy as np  # noqa: E402

import workloads as W  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    for name in W.OWN:
        w = W.BY_NAME[name]
        args = w.make(np.random.default_rng(0))
        out = jax.eval_shape(w.jnp_fn, *args)
        _, jax_grad = W.grad_programs(w, out.shape, out.dtype)
        ct = np.ones(out.shape, out.dtype)
        for kind, fn, a in (("fwd", w.jnp_fn, args), ("grad", jax_grad, (*args, ct))):
            text = jax.jit(fn).lower(*a).as_text()
            path = os.path.join(OUT, f"{name}.{kind}.mlir")
            with open(path, "w") as f:
                f.write(text)
            print(f"{path}: {text.count(chr(10))} lines")


if __name__ == "__main__":
    main()
