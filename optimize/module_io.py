"""Reading and writing StableHLO modules for the optimizer, independent of the tracer.

``make_context()`` builds a fresh MLIR context with the dialects a StableHLO module may use
(func and the upstream dialects jaxlib registers, stablehlo, chlo, sdy; unregistered dialects
allowed for the ``enzyme.*`` markers). ``parse_module(text)`` parses module text (or
bytecode) in such a context, ``load(path)`` reads a file, ``to_text(module)`` prints one.
"""

from __future__ import annotations

import os

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, sdy
from jaxlib.mlir.dialects import stablehlo as hlo


def make_context() -> ir.Context:
    """A fresh MLIR context with func, stablehlo, chlo and sdy; unregistered dialects allowed."""
    ctx = ir.Context()
    reg = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(reg)
    ctx.append_dialect_registry(reg)
    ctx.load_all_available_dialects()
    hlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    sdy.register_dialect(ctx)
    ctx.allow_unregistered_dialects = True
    return ctx


def parse_module(text: str | bytes, ctx: ir.Context | None = None) -> ir.Module:
    """Parse module text (or MLIR bytecode) into a module; a fresh context unless ``ctx``."""
    ctx = ctx or make_context()
    with ctx, ir.Location.unknown(ctx):
        return ir.Module.parse(text)


def load(path: str | os.PathLike, ctx: ir.Context | None = None) -> ir.Module:
    """Read and parse a ``.mlir`` file (text or bytecode)."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"ML\xefR"):  # bytecode magic; otherwise text
        data = data.decode("utf-8")
    return parse_module(data, ctx)


def to_text(module: ir.Module, *, debug_info: bool = False) -> str:
    """The module's textual form (generic attributes elided only where MLIR does)."""
    return module.operation.get_asm(enable_debug_info=debug_info)


def save(module: ir.Module, path: str | os.PathLike) -> None:
    with open(path, "w") as f:
        f.write(to_text(module))


def main_func(module: ir.Module):
    """The module's ``func.func @main``."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
            return op
    raise ValueError("the module has no func.func @main")


def main_arg_specs(module: ir.Module) -> list:
    """(shape, NumPy dtype) of each argument of ``@main`` (dtype None where NumPy has none)."""
    from .patterns._util import np_dtype

    ft = ir.FunctionType(ir.TypeAttr(main_func(module).attributes["function_type"]).value)
    return [(tuple(ir.RankedTensorType(t).shape), np_dtype(ir.RankedTensorType(t).element_type))
            for t in ft.inputs]
