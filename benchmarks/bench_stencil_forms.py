"""Which form of a stencil XLA runs fastest on this machine (issue 15, item 3): a sum of
shifted slices times constants, the same as a ``stablehlo.convolution``, and (for a box
filter, whose weights are equal) as a ``reduce_window``. Paired, interleaved timing of
``jax.jit`` programs, so only XLA's code generation is compared.

    python benchmarks/bench_stencil_forms.py

Measured November 2026 on the 2-core CPU VM (jax 0.10.2): the convolution is 28-87x slower
and the reduce_window 1.8-4x slower than the slices at 256^2-2048^2, float32 and float64, so
the optimizer keeps stencils as slices (no rewrite to either form pays on CPU).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from harness import measure  # noqa: E402


def main() -> None:
    jax.config.update("jax_enable_x64", True)
    print(f"{'n':>6} {'dtype':<8} {'slices':>10} {'conv':>10} {'box sl.':>10} {'box r_w':>10}  conv/slices  r_w/slices")
    for n, dt in [(256, np.float32), (2048, np.float32), (512, np.float64)]:
        x = jnp.asarray(np.random.default_rng(0).standard_normal((n, n)).astype(dt))
        k = jnp.asarray(np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]], dt))[None, None]

        def slices(x):
            return x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] - 4 * x[1:-1, 1:-1]

        def conv(x):
            return lax.conv_general_dilated(x[None, None], k, (1, 1), "VALID")[0, 0]

        def box_slices(x):
            return sum(x[i:n - 2 + i, j:n - 2 + j] for i in range(3) for j in range(3))

        def box_reduce_window(x):
            return lax.reduce_window(x, np.zeros((), dt)[()], lax.add, (3, 3), (1, 1), "VALID")

        fs = {f.__name__: jax.jit(f) for f in (slices, conv, box_slices, box_reduce_window)}
        for f in fs.values():
            f(x).block_until_ready()
        assert np.allclose(fs["slices"](x), fs["conv"](x), atol=1e-3)
        assert np.allclose(fs["box_slices"](x), fs["box_reduce_window"](x), atol=1e-3)
        res = measure(f"{n}", {name: (lambda f=f: f(x).block_until_ready()) for name, f in fs.items()}, rounds=11)
        us = {name: res.median(name) * 1e6 for name in fs}
        print(f"{n:>6} {np.dtype(dt).name:<8} " + " ".join(f"{us[k2]:9.1f}u" for k2 in fs)
              + f"  {res.ratio('conv', 'slices'):11.2f}  {res.ratio('box_reduce_window', 'box_slices'):10.2f}")


if __name__ == "__main__":
    main()
