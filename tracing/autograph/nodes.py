"""Builders of the AST nodes the rewrites emit: calls into the runtime (``_attr``), helper
functions and their calls, indices, thunks."""

from __future__ import annotations

import ast
import sys
from typing import Sequence

# the name converted code knows the runtime by (a parameter of the factory that makes each
# converted function: converter; functions.py and state_reads.py recognise converted code by it)
RUNTIME_NAME = "__reactant_rt__"


def _attr(name: str) -> ast.expr:
    return ast.Attribute(value=ast.Name(RUNTIME_NAME, ast.Load()), attr=name, ctx=ast.Load())


def _thunk(expr: ast.expr) -> ast.Lambda:
    """``lambda: expr`` (evaluated only when the runtime needs it: short circuits)."""
    return ast.copy_location(ast.Lambda(args=_noargs(), body=expr), expr)


_TYPE_PARAMS = {"type_params": []} if sys.version_info >= (3, 12) else {}

_AUG_OPS = {ast.Add: "iadd", ast.Sub: "isub", ast.Mult: "imul", ast.Div: "itruediv", ast.FloorDiv: "ifloordiv",
            ast.Mod: "imod", ast.Pow: "ipow", ast.MatMult: "imatmul", ast.BitAnd: "iand", ast.BitOr: "ior",
            ast.BitXor: "ixor", ast.LShift: "ilshift", ast.RShift: "irshift"}


def _index_expr(sl: ast.expr) -> ast.expr:
    """The index of a subscript as an expression (slices become ``slice(...)`` calls)."""
    if isinstance(sl, ast.Slice):
        parts = [sl.lower, sl.upper, sl.step]
        return ast.Call(func=_attr("slice"),  # the builtin, whatever the user's code calls "slice"
                        args=[p if p is not None else ast.Constant(None) for p in parts], keywords=[])
    if isinstance(sl, ast.Tuple):
        return ast.Tuple([_index_expr(e) for e in sl.elts], ast.Load())
    return sl


def _strs(names: Sequence[str]) -> ast.expr:
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def _loads(names: Sequence[str]) -> ast.expr:
    return ast.Tuple([ast.Call(func=_attr("ld"), args=[ast.Lambda(args=_noargs(), body=ast.Name(n, ast.Load())),
                                                       ast.Constant(n)], keywords=[]) for n in names], ast.Load())


def _noargs() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])


def _func(name: str, params: Sequence[str], body: list, returns: Sequence[str] | None, where,
          ret_expr: ast.expr | None = None) -> ast.FunctionDef:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    ret = ret_expr if ret_expr is not None else ast.Tuple([ast.Name(n, ast.Load()) for n in returns], ast.Load())
    fn = ast.FunctionDef(name=name, args=args, body=list(body) + [ast.Return(ret)], decorator_list=[],
                         returns=None, **_TYPE_PARAMS)
    return ast.copy_location(fn, where)


def _assign(names: Sequence[str], value: ast.expr, where) -> ast.stmt:
    if not names:
        return ast.copy_location(ast.Expr(value), where)
    target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
    return ast.copy_location(ast.Assign(targets=[target], value=value), where)
