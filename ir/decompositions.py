"""Matrix decompositions that XLA runs as platform library calls (LAPACK on CPU, cuSOLVER on
GPU): the marker ops that stand for them until the program is final.

StableHLO has no op for LU, QR, SVD or eigendecompositions; a frontend lowers them to
platform-specific ``custom_call``s. The tracer emits one marker per decomposition instead,
``stablehlo.custom_call @reactant.linalg.<kind>`` with its options in ``backend_config``, so
that the optimizer sees one opaque op with known semantics: the AD pass differentiates it by
its rule (the matrix-calculus rules, in ``optimize.autodiff.rules_decompositions``), and the
runtime replaces it by the platform's implementation just before XLA compiles the module.

Kinds, operands and results (``...`` are batch dims, ``k = min(m, n)``):

- ``lu``: ``a[..., n, n]`` -> packed ``lu`` (unit lower L below the diagonal, U on and above),
  LAPACK ``pivots[..., n]`` (int32, 0-based), the row permutation ``perm[..., n]`` (int32):
  ``a[..., perm, :] = L @ U``, and U's diagonal ``[..., n]`` (a result of its own so that
  determinants, which read only it, get a derivative without dense products).
- ``solve``: ``a[..., n, n]``, ``b[..., n, r]`` -> ``x = a^-1 b``, plus ``a``'s ``lu`` and ``perm``
  (so that derivatives reuse the factorization).
- ``qr`` (``full_matrices``): ``a[..., m, n]`` -> ``q[..., m, m|k]``, ``r[..., m|k, n]``.
- ``svd`` (``full_matrices``, ``compute_uv``): ``a[..., m, n]`` -> ``u[..., m, m|k]``,
  ``s[..., k]`` (real, descending), ``vh[..., n|k, n]``; only ``s`` without ``compute_uv``.
- ``eigh`` (``lower``: the triangle read): ``a[..., n, n]`` -> ``v[..., n, n]`` (eigenvectors in
  columns), ``w[..., n]`` (real, ascending).
- ``eig`` (``vectors``): ``a[..., n, n]`` -> complex ``w[..., n]`` and, with ``vectors``, complex
  right eigenvectors ``v[..., n, n]``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from jaxlib.mlir import ir

PREFIX = "reactant.linalg."
KINDS = ("lu", "solve", "qr", "svd", "eigh", "eig")
OPTIONS: dict[str, tuple[str, ...]] = {
    "lu": (), "solve": (), "qr": ("full_matrices",), "svd": ("full_matrices", "compute_uv"),
    "eigh": ("lower",), "eig": ("vectors",)}

Spec = tuple[tuple[int, ...], np.dtype]


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real counterpart of a float or complex dtype."""
    return np.dtype(np.finfo(np.dtype(dtype)).dtype)


def complex_dtype(dtype: np.dtype) -> np.dtype:
    return np.result_type(np.dtype(dtype), np.complex64)


def result_specs(kind: str, operand_specs: Sequence[Spec], options: dict) -> list[Spec]:
    """The (shape, dtype) of each result of marker ``kind`` on operands of these specs."""
    (shape, dt), *rest = operand_specs
    batch, m, n = tuple(shape[:-2]), shape[-2], shape[-1]
    k = min(m, n)
    i32 = np.dtype(np.int32)
    if kind == "lu":
        return [(tuple(shape), dt), (batch + (n,), i32), (batch + (n,), i32), (batch + (n,), dt)]
    if kind == "solve":
        return [(tuple(rest[0][0]), dt), (tuple(shape), dt), (batch + (n,), i32)]
    if kind == "qr":
        c = m if options["full_matrices"] else k
        return [(batch + (m, c), dt), (batch + (c, n), dt)]
    if kind == "svd":
        s = (batch + (k,), real_dtype(dt))
        if not options["compute_uv"]:
            return [s]
        cu, cv = (m, n) if options["full_matrices"] else (k, k)
        return [(batch + (m, cu), dt), s, (batch + (cv, n), dt)]
    if kind == "eigh":
        return [(tuple(shape), dt), (batch + (n,), real_dtype(dt))]
    if kind == "eig":
        c = complex_dtype(dt)
        w = (batch + (n,), c)
        return [w, (tuple(shape), c)] if options["vectors"] else [w]
    raise KeyError(f"unknown decomposition {kind!r}")


def attributes(kind: str, options: dict) -> dict[str, ir.Attribute]:
    """The marker's attributes: target name and the options as ``name=0|1`` in backend_config
    (a plain string survives every round trip through XLA's own dialects)."""
    names = OPTIONS[kind]
    if set(options) != set(names):
        raise KeyError(f"{kind} takes options {names}, got {sorted(options)}")
    config = ",".join(f"{k}={int(bool(options[k]))}" for k in names)
    return {"call_target_name": ir.StringAttr.get(PREFIX + kind),
            "backend_config": ir.StringAttr.get(config)}


def read(op) -> tuple[str, dict] | None:
    """``(kind, options)`` of a marker op, ``None`` for any other op."""
    if op.name != "stablehlo.custom_call":
        return None
    a = op.attributes
    target = ir.StringAttr(a["call_target_name"]).value
    if not target.startswith(PREFIX):
        return None
    kind = target[len(PREFIX):]
    config = ir.StringAttr(a["backend_config"]).value if "backend_config" in a else ""
    options = {}
    for item in filter(None, config.split(",")):
        name, value = item.split("=")
        options[name] = bool(int(value))
    return kind, options
