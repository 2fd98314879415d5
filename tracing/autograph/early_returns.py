"""Early returns, rewritten before the control-flow transform: returns under ifs become one
result variable assigned on every path (``_single_exit``), returns inside ``for`` loops a flag
that stops the remaining iterations (``_lift_loop_returns``), so that ifs and loops on traced
values convert."""

from __future__ import annotations

import ast
import copy

from .nodes import _attr

_RET = "__rt_return"


class _IfReturns(ast.NodeVisitor):
    """A ``return`` reached through ifs only (not inside loops, try/with, or nested defs)."""

    found = False

    def visit_Return(self, node):
        self.found = True

    def _stop(self, node):
        pass

    visit_For = visit_While = visit_AsyncFor = visit_With = visit_AsyncWith = visit_Try = _stop
    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _stop


def _if_returns(node) -> bool:
    v = _IfReturns()
    v.visit(node)
    return v.found


def _always_returns(stmts: list) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and _always_returns(last.orelse)


def _lower_returns(stmts: list) -> list:
    """``if c: return a`` + rest  ->  ``if c: return a else: rest``: the statements after an if
    that may return move into its branches that do not, so every return ends a path."""
    for i, s in enumerate(stmts):
        if isinstance(s, ast.If) and _if_returns(s):
            rest = stmts[i + 1:]
            s.body = _lower_returns(s.body if _always_returns(s.body) else s.body + copy.deepcopy(rest))
            s.orelse = _lower_returns(s.orelse if _always_returns(s.orelse) else s.orelse + copy.deepcopy(rest))
            return stmts[:i] + [s]
    return stmts


def _assign_returns(stmts: list, node) -> None:
    """Returns ending the paths of if-chains become assignments of the result variable; a path
    that ends without one assigns None (the function's implicit result)."""
    last = stmts[-1] if stmts else None
    if isinstance(last, ast.Return):
        value = last.value if last.value is not None else ast.Constant(None)
        stmts[-1] = ast.copy_location(ast.Assign(targets=[ast.Name(_RET, ast.Store())], value=value), last)
    elif isinstance(last, ast.If):
        _assign_returns(last.body, last)
        _assign_returns(last.orelse, last)
    elif not isinstance(last, ast.Raise):
        stmts.append(ast.copy_location(ast.Assign(targets=[ast.Name(_RET, ast.Store())],
                                                  value=ast.Constant(None)), last or node))


_LIVE = "__rt_live"


class _LoopReturns(ast.NodeVisitor):
    """Whether a loop body returns, and whether only through ifs (and inner ``for`` loops
    whose returns are lifted first): no ``break``/``continue`` of this loop, no return inside
    ``while``, ``try`` or ``with`` (those stay as they are)."""

    def __init__(self):
        self.returns = False
        self.other = False
        self.depth = 0

    def visit_Return(self, node):
        self.returns = True
        if self.depth:
            self.other = True

    def visit_Break(self, node):
        self.other = self.other or not self.depth

    visit_Continue = visit_Break

    def _inside(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_While = visit_With = visit_AsyncWith = visit_Try = visit_AsyncFor = _inside
    visit_For = _inside

    def _stop(self, node):
        pass

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _stop


def _returns_to_flag(stmts: list) -> list:
    """In a loop body whose paths end in returns (``_lower_returns`` already applied): each
    ``return v`` -> ``__rt_return = v; __rt_live = False``."""
    out = []
    for st in stmts:
        if isinstance(st, ast.Return):
            value = st.value if st.value is not None else ast.Constant(None)
            out.append(ast.copy_location(ast.Assign(targets=[ast.Name(_RET, ast.Store())], value=value), st))
            out.append(ast.copy_location(ast.Assign(targets=[ast.Name(_LIVE, ast.Store())],
                                                    value=ast.Constant(False)), st))
        elif isinstance(st, ast.If):
            st.body = _returns_to_flag(st.body) or [ast.Pass()]
            st.orelse = _returns_to_flag(st.orelse)
            out.append(st)
        else:
            out.append(st)
    return out


def _lift_loop_returns(stmts: list) -> list:
    """``for i in range(...): ... if c: return v ...`` -> a flag: the body runs while no
    iteration has returned (``if __rt_live:``), a return sets the result and clears the flag,
    and after the loop ``if __rt_live: pass else: return __rt_return`` (which ``_single_exit``
    then lowers like any early return). With a traced ``c`` the flag and the result become
    traced values merged by the ifs (the result of a path that has not returned yet is a
    placeholder, ``control_flow.NO_RESULT``)."""
    out = []
    for st in stmts:
        if isinstance(st, ast.If):
            st.body = _lift_loop_returns(st.body)
            st.orelse = _lift_loop_returns(st.orelse)
        elif isinstance(st, ast.For) and not st.orelse:
            st.body = _lift_loop_returns(st.body)  # inner loops first
            v = _LoopReturns()
            for b in st.body:
                v.visit(b)
            if v.returns and not v.other:
                st.body = [ast.copy_location(ast.If(test=ast.Name(_LIVE, ast.Load()),
                                                    body=_returns_to_flag(_lower_returns(st.body)), orelse=[]), st)]
                out.append(ast.copy_location(ast.Assign(targets=[ast.Name(_LIVE, ast.Store())],
                                                        value=ast.Constant(True)), st))
                out.append(st)
                out.append(ast.copy_location(ast.If(test=ast.Name(_LIVE, ast.Load()), body=[ast.Pass()],
                                                    orelse=[ast.Return(ast.Name(_RET, ast.Load()))]), st))
                continue
        out.append(st)
    return out


def _single_exit(body: list) -> list:
    """A function body whose ifs (or ``for`` loops) return early, as one ending in a single
    ``return`` (so ifs on traced values convert: each branch computes the result); unchanged
    when nothing returns early."""
    body = _lift_loop_returns(body)
    if not any(isinstance(s, ast.If) and _if_returns(s) for s in body):
        return body
    body = _lower_returns(body)
    _assign_returns(body, body[0])
    init = ast.copy_location(ast.Assign(targets=[ast.Name(_RET, ast.Store())], value=_attr("NO_RESULT")),
                             body[0])
    ret = ast.copy_location(ast.Return(ast.Name(_RET, ast.Load())), body[-1])
    return [init] + body + [ret]
