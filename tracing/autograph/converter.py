"""Converting a user function: its source parsed, rewritten (early returns, writes into arrays,
control flow), compiled inside a factory that receives the runtime and the function's closure
variables, and cached per function."""

from __future__ import annotations

import ast
import functools
import inspect
import os
import textwrap
import types
import weakref
from typing import Any

from ..context import active as _active
from .early_returns import _single_exit
from .host_writes import _HostArrayWrites
from .nodes import _TYPE_PARAMS, RUNTIME_NAME
from .runtime import _Runtime
from .transformer import _Transformer
from .undefined import _undefined
from .user_code import _convertible, function_source

_cache: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def convert(fn: Any, *, strict: bool = True) -> Any:
    """The converted version of a user function (itself when it cannot or need not be). In a
    trace, the Python state the function reads is recorded (state_reads: its globals...)."""
    tc = _active()
    if tc is not None:
        tc.reads.function(fn)
    if isinstance(fn, types.MethodType):
        conv = convert(fn.__func__, strict=strict)
        return fn if conv is fn.__func__ else types.MethodType(conv, fn.__self__)
    if isinstance(fn, functools.partial):
        conv = convert(fn.func, strict=strict)
        return fn if conv is fn.func else functools.partial(conv, *fn.args, **fn.keywords)
    if not _convertible(fn) or getattr(fn, "__reactant_converted__", False):
        return fn  # (a converted function: converting it again would read its source again)
    got = _cache.get(fn)
    if got is None:
        try:
            got = _convert(fn)
        except (OSError, TypeError, SyntaxError, IndentationError):
            got = _NO_SOURCE  # no source available: run it as it is
        _cache[fn] = got
    if got is _NO_SOURCE:
        if tc is not None and fn.__qualname__ not in tc.unconverted:
            tc.unconverted.append(fn.__qualname__)  # (named when the trace fails)
        return fn
    return got


_NO_SOURCE = object()


def unconverted(fn: Any) -> bool:
    """Whether ``fn`` runs as written because its source is not available."""
    try:
        return _cache.get(fn) is _NO_SOURCE
    except TypeError:  # (not weakly referenceable)
        return False


def _declared(fdef) -> dict:
    """The names ``fdef``'s own body declares ``global`` or ``nonlocal`` (not its nested
    functions')."""
    out: dict = {}
    todo = list(fdef.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                out[n] = "global" if isinstance(node, ast.Global) else "nonlocal"
        todo.extend(ast.iter_child_nodes(node))
    return out


def _convert(fn: types.FunctionType) -> types.FunctionType:
    filename = fn.__code__.co_filename
    if fn.__name__ == "<lambda>":
        fdef = _lambda_def(fn)
        if fdef is None:
            return fn
    else:
        tree = ast.parse(textwrap.dedent(function_source(fn)))
        fdef = tree.body[0]
        if not isinstance(fdef, ast.FunctionDef):
            return fn
        ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)
        fdef.decorator_list = []
    tr = _Transformer(os.path.abspath(filename), _declared(fdef))
    local_names = set(fn.__code__.co_varnames) | set(fn.__code__.co_cellvars)
    fdef.body = tr.block(_HostArrayWrites(local_names).visit_body(_single_exit(fdef.body)), set())
    if tr.counter == 0 and not _has_calls(fdef):
        return fn
    _strip_def_time_expressions(fdef)
    freevars = fn.__code__.co_freevars
    factory = ast.FunctionDef(
        name="__reactant_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(RUNTIME_NAME)] + [ast.arg(v) for v in freevars],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))], decorator_list=[], returns=None, **_TYPE_PARAMS)
    ast.copy_location(factory, fdef)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, filename, "exec")
    ns: dict = {}
    exec(code, fn.__globals__, ns)
    cells = []
    for c in fn.__closure__ or ():
        try:
            cells.append(c.cell_contents)
        except ValueError:
            cells.append(_undefined("<closure>", "a closure variable that is not yet assigned"))
    made = ns["__reactant_factory__"](_RUNTIME, *cells)
    # read the original closure cells, not copies of their values: a variable the enclosing
    # scope rebinds later (nonlocal) is seen by the cached converted function too
    live = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(live.get(name, cell) for name, cell in zip(made.__code__.co_freevars, made.__closure__ or ()))
    new = types.FunctionType(made.__code__, made.__globals__, made.__name__, fn.__defaults__, closure or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__wrapped__ = fn
    functools.update_wrapper(new, fn, updated=())
    new.__reactant_converted__ = True
    return new


def _strip_def_time_expressions(fdef: ast.FunctionDef) -> None:
    """Default values and annotations are evaluated where the function was defined (``def
    g(a, k=i)`` in a loop reads the loop's ``i``): the factory must not evaluate them again in
    its own scope; the converted function takes the original's ``__defaults__``."""
    a = fdef.args
    a.defaults = [ast.Constant(None) for _ in a.defaults]
    a.kw_defaults = [None if d is None else ast.Constant(None) for d in a.kw_defaults]
    for arg in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x is not None]:
        arg.annotation = None
    fdef.returns = None


def _lambda_def(fn) -> ast.FunctionDef | None:
    """The lambda as ``def (params): return <body>`` (only its calls get converted: a lambda
    has no statements). The body's source span comes from the code object's instruction
    positions, so several lambdas on one line are told apart."""
    code = fn.__code__
    pos = [p for p in code.co_positions()  # (line, end line, col, end col); skip empty spans
           if None not in p and (p[1] > p[0] or p[3] > p[2])]
    if not pos:
        return None
    (l0, c0), (l1, c1) = min((p[0], p[2]) for p in pos), max((p[1], p[3]) for p in pos)
    lines, _ = inspect.findsource(fn)
    if l0 == l1:
        text = lines[l0 - 1][c0:c1]
    else:
        text = lines[l0 - 1][c0:] + "".join(lines[l0:l1 - 1]) + lines[l1 - 1][:c1]
    try:
        body = ast.parse("(" + text + ")", mode="eval").body
    except SyntaxError:
        return None
    for node in ast.walk(body):  # columns of the first line as in the file (not after "(")
        if getattr(node, "lineno", None) == 1:
            node.col_offset += c0 - 1
        if getattr(node, "end_lineno", None) == 1:
            node.end_col_offset += c0 - 1
    ast.increment_lineno(body, l0 - 1)
    n = code.co_argcount
    params = list(code.co_varnames[:n])
    kwonly = list(code.co_varnames[n:n + code.co_kwonlyargcount])
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None,
                         kwonlyargs=[ast.arg(k) for k in kwonly], kw_defaults=[None] * len(kwonly), kwarg=None,
                         defaults=[])
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return None
    fdef = ast.FunctionDef(name="__reactant_lambda__", args=args, body=[ast.Return(body)],
                           decorator_list=[], returns=None, **_TYPE_PARAMS)
    fdef.lineno, fdef.col_offset, fdef.end_lineno, fdef.end_col_offset = l0, 0, l1, c1
    return fdef


def _has_calls(fdef) -> bool:
    return any(isinstance(n, (ast.Call, ast.Subscript, ast.AugAssign, ast.Attribute)) for n in ast.walk(fdef))


_RUNTIME = _Runtime(convert)
