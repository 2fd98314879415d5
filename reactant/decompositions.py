"""Replacing the decomposition markers (``reactant.ir.decompositions``), and the StableHLO
ops that have a faster library implementation (``cholesky``, ``triangular_solve``), by the
platform's implementation just before XLA compiles a module.

The implementation is jax's own lowering of the same ``jax.lax.linalg`` operation for the
same operand types (public API: ``jax.jit(...).lower(...)``): LAPACK calls on CPU with the
checks jax adds around them (NaN results where a factorization fails). It is imported into
the module as private functions and called where the op was, so XLA runs the same kernels as
``jax.numpy.linalg`` does. (XLA's own expansion of ``stablehlo.cholesky`` and
``triangular_solve`` into loops of small ops runs 2-3x slower than LAPACK on CPU.)
"""

from __future__ import annotations

import threading

import numpy as np
from jaxlib.mlir import ir

from . import _jax_adapter as jx
from .ir import decompositions as D
from .ir.context import functions, symbol_name
from .ir.custom_derivatives import lower_markers
from .ir.types import spec_of

# lowered module text per (kind, options, operand specs): lowering costs 10-50 ms, and the
# same decomposition comes back in every compile of a function and in its gradient
_TEXT: dict = {}
_TEXT_SIZE = 512
_LOCK = threading.Lock()


def _lu_solve(a, b):
    import jax.numpy as jnp
    from jax import lax

    lu, _, perm = lax.linalg.lu(a)
    pb = jnp.take_along_axis(b, perm[..., :, None].astype(np.int32), axis=-2)
    y = lax.linalg.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return lax.linalg.triangular_solve(lu, y, left_side=True, lower=False), lu, perm


def _implementation(kind: str, options: dict):
    # jax is imported where a module has a decomposition, not with reactant (its import cost)
    import jax.numpy as jnp
    from jax import lax

    if kind == "cholesky":
        return _cholesky(options["lower"])
    if kind == "triangular_solve":
        return lambda a, b: lax.linalg.triangular_solve(a, b, **options)
    if kind == "lu":
        def lu(a):
            packed, pivots, perm = lax.linalg.lu(a)
            return packed, pivots, perm, jnp.diagonal(packed, axis1=-2, axis2=-1)
        return lu
    if kind == "solve":
        return _lu_solve
    if kind == "qr":
        return lambda a: lax.linalg.qr(a, full_matrices=options["full_matrices"])
    if kind == "svd":
        def svd(a):
            out = lax.linalg.svd(a, full_matrices=options["full_matrices"], compute_uv=options["compute_uv"])
            return tuple(out) if options["compute_uv"] else (out,)
        return svd
    if kind == "eigh":
        return lambda a: lax.linalg.eigh(a, lower=options["lower"], symmetrize_input=False)
    if kind == "eig":
        def eig(a):
            out = lax.linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=options["vectors"])
            return tuple(out)
        return eig
    raise KeyError(f"unknown decomposition {kind!r}")


# element types with a LAPACK implementation: other types keep XLA's own expansion
_LAPACK_TYPES = ("f32", "f64", "complex<f32>", "complex<f64>")


def _library_op(op) -> tuple[str, dict] | None:
    """``(kind, options)`` for a StableHLO op replaced by its library implementation."""
    name = op.name
    if name not in ("stablehlo.cholesky", "stablehlo.triangular_solve"):
        return None
    if str(ir.RankedTensorType(op.operands[0].type).element_type) not in _LAPACK_TYPES:
        return None
    a = op.attributes

    def flag(key):
        return key in a and bool(ir.BoolAttr(a[key]).value)
    if name == "stablehlo.cholesky":
        return "cholesky", {"lower": flag("lower")}
    trans = str(a["transpose_a"]) if "transpose_a" in a else "NO_TRANSPOSE"
    return "triangular_solve", {"left_side": flag("left_side"), "lower": flag("lower"),
                                "unit_diagonal": flag("unit_diagonal"), "transpose_a": "NO_TRANSPOSE" not in trans,
                                "conjugate_a": "ADJOINT" in trans}


def _cholesky(lower: bool):
    import jax.numpy as jnp
    from jax import lax

    def chol(a):
        if lower:
            return lax.linalg.cholesky(a, symmetrize_input=False)
        # the upper factor, reading the upper triangle: the adjoint of the lower factor of a^H
        ah = jnp.conj(jnp.swapaxes(a, -1, -2))
        return jnp.conj(jnp.swapaxes(lax.linalg.cholesky(ah, symmetrize_input=False), -1, -2))
    return chol


def _read(op) -> tuple[str, dict] | None:
    return D.read(op) or _library_op(op)


def _lowered_text(kind: str, options: dict, specs: tuple) -> str:
    key = (kind, tuple(sorted(options.items())), specs)
    text = _TEXT.get(key)
    if text is None:
        import jax

        avals = [jax.ShapeDtypeStruct(s, d) for s, d in specs]
        with jx.x64_scope():
            # keep_unused: the call passes every operand, even one an empty problem never reads
            text = jax.jit(_implementation(kind, options), keep_unused=True).lower(*avals).as_text()
        with _LOCK:
            if len(_TEXT) >= _TEXT_SIZE:
                _TEXT.clear()
            _TEXT[key] = text
    return text


def _markers(module: ir.Module) -> list:
    found = []

    def visit(op):
        if _read(op.operation) is not None:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _import(module: ir.Module, text: str, prefix: str) -> str:
    """Parse jax's module into ``module``'s context, move its functions in under fresh private
    names, and return the name of its entry."""
    lowered = ir.Module.parse(text, module.context)
    taken = set(functions(module))
    renames = {}
    for name in functions(lowered):
        new, i = f"{prefix}_{name}", 0
        while new in taken:
            i += 1
            new = f"{prefix}{i}_{name}"
        taken.add(new)
        renames[name] = new
    for name, fn in functions(lowered).items():
        ir.SymbolTable.replace_all_symbol_uses(name, renames[name], lowered.operation)
    entry = None
    for name, fn in list(functions(lowered).items()):
        ir.SymbolTable.set_symbol_name(fn, renames[name])
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        for attr in ("arg_attrs", "res_attrs"):  # jax's result names and layout modes
            if attr in fn.attributes:
                del fn.attributes[attr]
        if symbol_name(fn) == renames.get("main"):
            entry = renames["main"]
        module.body.append(fn.detach_from_parent())
    return entry


def lower_decompositions(module: ir.Module) -> int:
    """Replace every decomposition marker (and every LAPACK-typed ``cholesky`` and
    ``triangular_solve``) in ``module`` by a call of its implementation; returns how many were
    replaced. Ops of the same kind, options and operand types share one imported implementation.
    (User-defined-derivative markers left by a pipeline without the AD pass become plain
    StableHLO here too: XLA knows no such custom call.)"""
    lower_markers(module)
    markers = _markers(module)
    if not markers:
        return 0
    with module.context, ir.Location.unknown(module.context):
        entries: dict = {}
        for op in markers:
            kind, options = _read(op)
            specs = tuple(spec_of(v.type) for v in op.operands)
            key = (kind, tuple(sorted(options.items())), specs)
            if key not in entries:
                entries[key] = _import(module, _lowered_text(kind, options, specs), f"__linalg_{kind}")
            call = ir.Operation.create("func.call", results=[r.type for r in op.results],
                                       operands=list(op.operands),
                                       attributes={"callee": ir.FlatSymbolRefAttr.get(entries[key])},
                                       loc=op.location, ip=ir.InsertionPoint(op))
            for old, new in zip(op.results, call.results):
                old.replace_all_uses_with(new)
            op.erase()
    return len(markers)
