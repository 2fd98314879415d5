"""The control-flow transform: ``if``/``while``/``for ... in range`` statements become calls of
the runtime with their bodies as local functions (the variables they assign, read afterwards,
carried in and out), and in every expression calls, item and attribute reads, ``and``/``or``/
``not`` and conditional expressions become runtime calls (``_CallRewriter``)."""

from __future__ import annotations

import ast

from .. import loop_rolling as rolling
from .analysis import _attr_targets, _escape, _exposed, _names
from .nodes import _AUG_OPS, RUNTIME_NAME, _assign, _attr, _func, _index_expr, _loads, _strs, _thunk


class _Transformer:
    def __init__(self, filename: str, declared: dict | None = None):
        self.filename = filename
        self.counter = 0
        # names the function declares ``global`` / ``nonlocal``: the generated branch and loop
        # functions declare them too, and never take or return them as carried variables
        self.declared = declared or {}

    def _stored(self, nodes) -> list:
        return [n for n in _names(nodes).stored if n not in self.declared]

    def _func(self, name, params, body, returns, where, ret_expr=None):
        fn = _func(name, params, body, returns, where, ret_expr=ret_expr)
        stored = set(_names(body).stored)
        for kind, cls in (("global", ast.Global), ("nonlocal", ast.Nonlocal)):
            names = sorted(n for n, k in self.declared.items() if k == kind and n in stored)
            if names:
                fn.body.insert(0, ast.copy_location(cls(names=names), where))
        return fn

    def where(self, node) -> str:
        return f"{self.filename}:{node.lineno}"

    def fresh(self, kind: str) -> str:
        self.counter += 1
        return f"__rt_{kind}_{self.counter}"

    def block(self, stmts: list, live_after: set) -> list:
        out: list = []
        live = set(live_after)
        for stmt in reversed(stmts):
            new = self.stmt(stmt, live)
            out[:0] = new
            live |= _names(stmt).loaded
        return out

    def stmt(self, node, live: set) -> list:
        if isinstance(node, ast.Assert):
            msg = self.calls(node.msg) if node.msg is not None else ast.Constant(None)
            call = ast.Call(func=_attr("assert_"), args=[self.calls(node.test), _thunk(msg),
                                                         ast.Constant(self.where(node))], keywords=[])
            return [ast.copy_location(ast.Expr(call), node)]
        if isinstance(node, ast.If):
            return self.if_(node, live)
        if isinstance(node, ast.While):
            return self.while_(node, live)
        if isinstance(node, ast.For):
            return self.for_(node, live)
        if isinstance(node, (ast.With, ast.AsyncWith, ast.Try, ast.TryStar)):
            for field in ("body", "orelse", "finalbody"):
                if getattr(node, field, None):
                    setattr(node, field, self.block(getattr(node, field), live))
            if hasattr(node, "handlers"):
                for h in node.handlers:
                    h.body = self.block(h.body, live)
            return [self.calls(node)]
        return [self.calls(node)]

    # calls to user functions go through _rt.call so they get converted too
    def calls(self, node):
        return _CallRewriter().visit(node)

    def _guard(self, node, why):
        node.test = ast.Call(func=_attr("concrete_test"), args=[self.calls(node.test), ast.Constant(why),
                                                                   ast.Constant(self.where(node))], keywords=[])

    def if_(self, node: ast.If, live: set) -> list:
        escape = _escape(node.body + node.orelse)
        if escape:
            self._guard(node, f"if containing {escape}")
            node.body = self.block(node.body, live)
            node.orelse = self.block(node.orelse, live)
            return [node]
        # the branches take every variable they assign (one may read it first: ``out[i] = v``
        # is ``out = setitem(out, i, v)``) and return those read afterwards
        params = self._stored(node.body + node.orelse)
        assigned = [n for n in params if n in live]
        attrs = _attr_targets(node.body + node.orelse, params)
        body = self.block(node.body, live)
        orelse = self.block(node.orelse, live)
        tname, fname = self.fresh("if_true"), self.fresh("if_false")
        tdef = self._func(tname, params, body, assigned, node)
        fdef = self._func(fname, params, orelse, assigned, node.orelse[0] if node.orelse else node)
        keywords = [] if not attrs else [ast.keyword("attrs", ast.Tuple(
            [ast.Tuple([ast.Name(b, ast.Load()), ast.Constant(a)], ast.Load()) for b, a in attrs], ast.Load()))]
        call = ast.Call(func=_attr("if_stmt"),
                        args=[self.calls(node.test), ast.Name(tname, ast.Load()), ast.Name(fname, ast.Load()),
                              _loads(params), _strs(params), _strs(assigned), ast.Constant(self.where(node))],
                        keywords=keywords)
        return [tdef, fdef, _assign(assigned, call, node)]

    def while_(self, node: ast.While, live: set) -> list:
        escape = _escape(node.body) or ("else clause" if node.orelse else None)
        if escape:
            self._guard(node, f"while loop containing {escape}")
            node.body = self.block(node.body, live | _names(node).loaded)
            return [node]
        inner_live = live | _names(node.body).loaded | _names(node.test).loaded
        assigned = [n for n in self._stored(node.body) if n in inner_live]
        body = self.block(node.body, inner_live)
        cname, bname = self.fresh("while_cond"), self.fresh("while_body")
        cdef = self._func(cname, assigned, [], None, node, ret_expr=self.calls(node.test))
        bdef = self._func(bname, assigned, body, assigned, node)
        call = ast.Call(func=_attr("while_stmt"),
                        args=[ast.Name(cname, ast.Load()), ast.Name(bname, ast.Load()), _loads(assigned),
                              _strs(assigned), ast.Constant(self.where(node))], keywords=[])
        return [cdef, bdef, _assign(assigned, call, node)]

    def for_(self, node: ast.For, live: set) -> list:
        is_range = (isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name)
                    and node.iter.func.id == "range" and not node.iter.keywords
                    and isinstance(node.target, ast.Name))
        escape = _escape(node.body) or ("else clause" if node.orelse else None)
        if not is_range and not escape and isinstance(node.target, ast.Name):
            return self.for_iter(node, live)
        if not is_range or escape:
            node.iter = self.calls(node.iter)
            node.body = self.block(node.body, live | _names(node).loaded)
            if is_range and escape:  # traced bounds would fail in range(): say why
                node.iter.args = [ast.Call(func=_attr("concrete_test"),
                                           args=[a, ast.Constant(f"range() bound of a for loop containing {escape}"),
                                                 ast.Constant(self.where(node))], keywords=[])
                                  for a in node.iter.args]
            return [node]
        # for i in range(a, b, c) -> carried + (i,) = _rt.for_range((a, b, c), body_fn, carried, ...,
        # (i before,)): after a loop that did not run, i keeps the value it had
        iters = ast.Tuple([self.calls(a) for a in node.iter.args], ast.Load())
        return self._for_call(node, live, "for_range", iters, (_loads([node.target.id]),))

    def _for_call(self, node: ast.For, live: set, helper: str, iters, extra=()) -> list:
        """The body of ``for <name> in ...`` as a function of the index and the carried
        variables, and the assignment of what ``_rt.<helper>(iters, body_fn, ...)`` returns."""
        target = node.target.id
        # names the next iteration reads before assigning them (not every name the body reads:
        # a temporary assigned first in each iteration is not carried)
        inner_live = live | _exposed(node.body)
        assigned = [n for n in self._stored(node.body) if n in inner_live and n != target]
        effects = rolling.python_effects(node.body)  # before the body is transformed
        rebound = target in self._stored(node.body)
        body = self.block(node.body, inner_live)
        inits, shown = _loads(assigned), list(assigned)
        if rebound:  # the body assigns the target: after the loop it holds what the last
            # iteration left in it (the loop's value before it), carried as a variable of its own
            last = self.fresh("last")
            body = body + [ast.copy_location(ast.Assign(targets=[ast.Name(last, ast.Store())],
                                                        value=ast.Name(target, ast.Load())), node)]
            assigned, shown = assigned + [last], shown + [target]
            inits = ast.Tuple(inits.elts + _loads([target]).elts, ast.Load())
        bname = self.fresh("for_body")
        bdef = self._func(bname, [target] + assigned, body, assigned, node)
        call = ast.Call(func=_attr(helper),
                        args=[iters, ast.Name(bname, ast.Load()), inits, _strs(shown),
                              ast.Constant(self.where(node)), ast.Constant(target), ast.Constant(effects),
                              ast.Tuple([ast.Constant(n in live) for n in shown], ast.Load()), *extra],
                        keywords=[])
        out = [bdef, _assign(assigned + [target], call, node)]
        if rebound:
            out.append(ast.copy_location(ast.Assign(targets=[ast.Name(target, ast.Store())],
                                                    value=ast.Name(last, ast.Load())), node))
        return out

    def for_iter(self, node: ast.For, live: set) -> list:
        """``for x in items`` (a name target, no break/continue/return/else) ->
        ``carried + (x,) = _rt.for_iter(items, body_fn, carried, ..., (x before,))``: over a
        traced array in "auto" mode, the loop ``for i in range(len(items))`` with ``x = items[i]``;
        over anything else, Python's iteration."""
        return self._for_call(node, live, "for_iter", self.calls(node.iter), (_loads([node.target.id]),))


class _CallRewriter(ast.NodeTransformer):
    """``f(...)`` -> ``_rt.call(f)(...)``, ``a[i]`` -> ``_rt.getitem(a, i)`` and ``a.b`` ->
    ``_rt.attr(a, "b")`` (reads only; not into nested function bodies)."""

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or (isinstance(node.value, ast.Name)
                                                  and node.value.id == RUNTIME_NAME):
            return node
        return ast.copy_location(ast.Call(func=_attr("attr"), args=[node.value, ast.Constant(node.attr)],
                                          keywords=[]), node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        t = node.target
        if isinstance(t, ast.Attribute) and type(node.op) in _AUG_OPS:  # a.b op= v
            call = ast.Call(func=_attr("aug_attr"), args=[t.value, ast.Constant(t.attr),
                                                          ast.Constant(_AUG_OPS[type(node.op)]), node.value],
                            keywords=[])
            return ast.copy_location(ast.Expr(call), node)
        if isinstance(t, ast.Attribute):  # a.b op= v reads a.b first
            t.value = ast.copy_location(ast.Call(func=_attr("attr"), args=[t.value, ast.Constant(t.attr),
                                                                          ast.Constant(True)], keywords=[]), t)
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        return ast.copy_location(ast.Call(func=_attr("getitem"), args=[node.value, _index_expr(node.slice)],
                                          keywords=[]), node)

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.copy_location(ast.Call(func=_attr("ifexp"), args=[node.test, _thunk(node.body), _thunk(node.orelse)],
                                          keywords=[]), node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        name = "and_" if isinstance(node.op, ast.And) else "or_"
        return ast.copy_location(ast.Call(func=_attr(name), args=[_thunk(v) for v in node.values], keywords=[]), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        return ast.copy_location(ast.Call(func=_attr("not_"), args=[node.operand], keywords=[]), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("range", "super", "locals", "globals", "vars"):
            return node
        node.func = ast.Call(func=_attr("call"), args=[node.func], keywords=[])
        return node

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef
