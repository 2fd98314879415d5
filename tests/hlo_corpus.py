"""The benchmark corpus the tests read: JAX-lowered StableHLO modules in the checkout's
``benchmarks/corpus/<workload>.{fwd,grad}.mlir``, written by ``benchmarks/make_corpus.py`` from
``benchmarks/workloads.py`` (and committed, so tests need no file outside the checkout).

It holds the twelve shared benchmark workloads (``SHARED``) and five model-style workloads of
our own; tests that go over "every corpus module" mean the twelve shared ones (``MODULES``).

(Named ``hlo_corpus``, not ``corpus``: tests put ``benchmarks/`` on sys.path, whose
``corpus.py`` would otherwise be imported in its place.)
"""

from __future__ import annotations

import pathlib

CORPUS_DIR = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "corpus"

# the twelve shared workloads (benchmarks/workloads.py SHARED; listed here so that tests need
# not import the benchmarks, which import jax workloads)
SHARED = ("diagmm", "diagmm_scatter", "normalize_vec", "normalize_vmap", "normalize_loop", "transpose_matmul",
          "transpose_chain", "slice_of_dot", "stencil1d_twice", "stencil2d_twice", "mlp_train_step", "scatter_sum")

# "<workload>.<fwd|grad>" of the shared workloads' modules the corpus holds, sorted (24 of them:
# test_corpus_levels.py::test_corpus_is_complete counts them)
MODULES = sorted(p.name[:-len(".mlir")] for p in CORPUS_DIR.glob("*.mlir") if p.name.split(".")[0] in SHARED)
FWD = [m for m in MODULES if m.endswith(".fwd")]


def corpus_module(name: str) -> pathlib.Path:
    """Path of the corpus module ``name`` ("slice_of_dot.fwd"); it must exist."""
    path = CORPUS_DIR / f"{name}.mlir"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not in the corpus (run benchmarks/make_corpus.py)")
    return path


def corpus_text(name: str) -> str:
    return corpus_module(name).read_text()
