"""The one place in ``reactant.ir`` that touches private modules of jaxlib's MLIR bindings.

``reactant.ir`` is the bottom layer and may not import ``reactant/`` (where the runtime's
adapter, ``reactant/_jax_adapter.py``, lives), so the two binding entry points that jaxlib
does not re-export publicly are isolated here: a jaxlib upgrade touches this file only.
"""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext, _mlir
from jaxlib.mlir._mlir_libs._mlir import rewrite  # noqa: F401  (MLIR's greedy pattern driver)


def register_upstream_dialects(registry: ir.DialectRegistry) -> None:
    """Add func, arith, scf... (the upstream dialects jaxlib ships) to ``registry``."""
    _jax_mlir_ext.register_dialects(registry)


def add_dialect_modules(package: str) -> None:
    """Let the bindings find Python modules of dialects in ``package`` (``package.<dialect>``)."""
    if package not in _mlir.globals.dialect_search_modules:
        _mlir.globals.append_dialect_search_prefix(package)
