"""Passes built from MLIR's own pass pipelines: CSE, dead code, and the folding round trip
through MHLO (where StableHLO's folders live in this jaxlib build)."""

from __future__ import annotations

import threading

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import mhlo
from jaxlib.mlir.dialects import stablehlo as hlo
from jaxlib.mlir.passmanager import PassManager

from .passes import PassOptions, register_pass

_registered = threading.Lock()
_done = [False]


def _ensure_registered() -> None:
    with _registered:
        if not _done[0]:
            mhlo.register_mhlo_passes()
            hlo.register_stablehlo_passes()
            _done[0] = True


def run_mlir(module: ir.Module, pipeline: str) -> None:
    """Run an MLIR textual pass pipeline (anchored on builtin.module) on ``module``."""
    _ensure_registered()
    with module.context:
        PassManager.parse(f"builtin.module({pipeline})").run(module.operation)


@register_pass("cse", idempotent=True)
def cse(module: ir.Module, options: PassOptions) -> None:
    """Common subexpression elimination and dead code removal."""
    run_mlir(module, "cse,canonicalize")


@register_pass("canonicalize")
def canonicalize(module: ir.Module, options: PassOptions) -> None:
    """Constant folding and identity removal through MHLO's folders (round trip)."""
    run_mlir(module, "stablehlo-legalize-to-hlo,canonicalize,cse,hlo-legalize-to-stablehlo")
