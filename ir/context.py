"""MLIR contexts and modules: creating a context with the dialects a StableHLO module may use,
parsing, loading, printing, and finding functions in a module.

Every layer builds its contexts here, so a module made by the tracer, read from a file or
lowered by JAX can be handled by any pass.
"""

from __future__ import annotations

import os

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, sdy
from jaxlib.mlir.dialects import stablehlo as hlo

from ._jaxlib import add_dialect_modules, register_upstream_dialects
from .types import np_dtype

add_dialect_modules(__name__.rsplit(".", 1)[0] + ".dialects")  # the enzyme markers' module


def make_context() -> ir.Context:
    """A fresh MLIR context with func, stablehlo, chlo and sdy; unregistered dialects allowed
    (the ``enzyme.*`` AD markers)."""
    ctx = ir.Context()
    reg = ir.DialectRegistry()
    register_upstream_dialects(reg)
    ctx.append_dialect_registry(reg)
    # func is what our builders create besides StableHLO/CHLO/Shardy; the other upstream
    # dialects load when a parsed module or a pass needs them (loading them all: 1.5 ms of
    # the 2 ms a context costs, paid by every compile)
    ctx.dialects["func"]
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


def count_ops(module: ir.Module) -> int:
    """Number of operations in the module, nested ones included (the module itself not)."""
    n = 0

    def visit(op):
        nonlocal n
        n += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return n - 1


def symbol_name(op) -> str:
    """The ``sym_name`` of a symbol op (a ``func.func``)."""
    return ir.StringAttr(op.attributes["sym_name"]).value


def functions(module_or_op) -> dict:
    """The module's top-level ``func.func`` ops by symbol name (an ir.Module or its op)."""
    body = module_or_op.body if isinstance(module_or_op, ir.Module) else module_or_op.regions[0].blocks[0]
    return {symbol_name(op): op for op in body.operations if op.operation.name == "func.func"}


def function_type(fn) -> ir.FunctionType:
    """The ``FunctionType`` of a ``func.func``."""
    return ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)


def main_func(module: ir.Module):
    """The module's ``func.func @main``."""
    fn = functions(module).get("main")
    if fn is None:
        raise ValueError("the module has no func.func @main")
    return fn


def main_arg_specs(module: ir.Module) -> list:
    """(shape, NumPy dtype) of each argument of ``@main`` (dtype None where NumPy has none)."""
    return [(tuple(ir.RankedTensorType(t).shape), np_dtype(ir.RankedTensorType(t).element_type))
            for t in function_type(main_func(module)).inputs]
